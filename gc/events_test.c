/* The rare events' census (gc.h, GC_EVENTS): the catalogue is whole, and each event is counted
 * when its path runs and not otherwise. */
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/list_fixture.h"

static uint64_t ev(gc_heap *h, gc_event e) { return gc_event_count(h, e); }

static void catalogue_is_whole(void) {
  for (int e = 0; e < GC_EVENT_COUNT; e++) {
    CHECK(gc_event_name((gc_event)e) != NULL && gc_event_name((gc_event)e)[0] != '\0');
    CHECK(gc_event_what((gc_event)e) != NULL && gc_event_what((gc_event)e)[0] != '\0');
    for (int f = 0; f < e; f++) {
      CHECK(strcmp(gc_event_name((gc_event)e), gc_event_name((gc_event)f)) != 0);
    }
  }
  CHECK(gc_event_name(GC_EVENT_COUNT) == NULL);
  CHECK(gc_event_what((gc_event)-1) == NULL);
  gc_heap *h = gc_heap_create(NULL);
  CHECK_EQ_U(gc_event_count(h, GC_EVENT_COUNT), 0);
  for (int e = 0; e < GC_EVENT_COUNT; e++) CHECK_EQ_U(ev(h, (gc_event)e), 0);
  gc_heap_destroy(h);
}

static void cycles_slices_and_mid_mark_paths(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=incremental,markslice=16,percent=off");
  gc_heap *h = f.h;
  gc_domain *d = f.d;
  list_fixture_grow(&f, 4000);
  for (int i = 0; i < 3; i++) gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(ev(h, GC_EVENT_CYCLE), s.cycles);
  CHECK_EQ_U(ev(h, GC_EVENT_PIN_MARKING), 0); /* nothing pinned yet */

  /* Mid-mark: a slice, a pin and an unpin, a spawned domain that blocks and terminates. */
  gc_collect(d, GC_COLLECT_START);
  uint64_t slices = ev(h, GC_EVENT_MARK_SLICE);
  gc_collect(d, GC_COLLECT_SLICE);
  CHECK(ev(h, GC_EVENT_MARK_SLICE) > slices);
  CHECK(gc_pin(h, f.root) == GC_OK);
  CHECK(gc_unpin(h, f.root) == GC_OK);
  CHECK_EQ_U(ev(h, GC_EVENT_PIN_MARKING), 1);
  CHECK_EQ_U(ev(h, GC_EVENT_UNPIN_MARKING), 1);
  gc_domain *child = gc_domain_spawn(d);
  CHECK(child != NULL);
  CHECK_EQ_U(ev(h, GC_EVENT_SPAWN_MARKING), 1);
  CHECK(ev(h, GC_EVENT_BLOCK_MARKING) >= 1); /* the parent waits for the heap's lock blocking */
  gc_leave_blocking(child);
  CHECK(gc_domain_terminate(child) == GC_OK);
  CHECK_EQ_U(ev(h, GC_EVENT_TERMINATE_MARKING), 1);
  CHECK_EQ_U(ev(h, GC_EVENT_TERMINATE_IDLE) + ev(h, GC_EVENT_TERMINATE_SWEEPING), 0);
  gc_collect(d, GC_COLLECT_MAJOR);

  /* Garbage, then allocation: the lazy sweep runs in slices. */
  f.root = 0;
  gc_collect(d, GC_COLLECT_MAJOR);
  uint64_t sweeps = ev(h, GC_EVENT_SWEEP_SLICE);
  list_fixture_grow(&f, 2000);
  CHECK(ev(h, GC_EVENT_SWEEP_SLICE) > sweeps);
  list_fixture_close(&f);
}

static void overflow_and_recovery(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=stw,markstack=4,percent=off");
  /* A wide block: its fields overflow a four-entry mark stack at once. */
  f.root = gc_alloc(f.d, 64, GC_TAG_SCAN);
  for (int i = 0; i < 64; i++) gc_store(f.d, f.root, (size_t)i, gc_alloc(f.d, 1, GC_TAG_SCAN));
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK(ev(f.h, GC_EVENT_MARK_OVERFLOW) > 0);
  CHECK(ev(f.h, GC_EVENT_MARK_REDARKEN) > 0);
  list_fixture_close(&f);
}

/* A finalizer that allocates, and one that collects. */
static void allocate_and_collect(gc_heap *heap, gc_value block, void *user) {
  (void)block;
  gc_domain *d = gc_main_domain(heap);
  gc_alloc(d, 1, GC_TAG_SCAN);
  if (user != NULL) gc_collect(d, GC_COLLECT_MAJOR);
}

static void finalizers_that_allocate_and_collect(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  CHECK(gc_finalizer_set(h, gc_alloc(d, 1, GC_TAG_SCAN), allocate_and_collect, NULL) == GC_OK);
  CHECK(gc_finalizer_set(h, gc_alloc(d, 1, GC_TAG_SCAN), allocate_and_collect, h) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_run_finalizers(d);
  CHECK_EQ_U(ev(h, GC_EVENT_FIN_RUN), 2);
  CHECK_EQ_U(ev(h, GC_EVENT_FIN_ALLOCATED), 2);
  CHECK_EQ_U(ev(h, GC_EVENT_FIN_COLLECTED), 1);
  gc_heap_destroy(h);
}

static void orphans_adopted_and_compaction(void) {
  list_fixture f;
  list_fixture_open(&f, "percent=off");
  gc_heap *h = f.h;
  gc_domain *d = f.d;
  gc_domain *child = gc_domain_spawn(d);
  CHECK_EQ_U(ev(h, GC_EVENT_SPAWN_IDLE), 1);
  /* The child's blocks outlive it through a global root; its pools become orphans. */
  gc_enter_blocking(d);
  gc_leave_blocking(child);
  gc_value kept = 0;
  CHECK(gc_root_register(h, &kept) == GC_OK);
  list_grow_on(child, &kept, 3000);
  CHECK(gc_domain_terminate(child) == GC_OK);
  gc_leave_blocking(d);
  CHECK_EQ_U(ev(h, GC_EVENT_ADOPT_STOP), 0);
  gc_collect(d, GC_COLLECT_MAJOR);
  CHECK(ev(h, GC_EVENT_ADOPT_STOP) >= 1);
  kept = 0;
  gc_collect(d, GC_COLLECT_FULL);
  CHECK(gc_compact(d) == GC_OK);
  CHECK_EQ_U(ev(h, GC_EVENT_COMPACTION), 1);
  gc_root_unregister(h, &kept);
  list_fixture_close(&f);
}

int main(void) {
  RUN(catalogue_is_whole);
  RUN(cycles_slices_and_mid_mark_paths);
  RUN(overflow_and_recovery);
  RUN(finalizers_that_allocate_and_collect);
  RUN(orphans_adopted_and_compaction);
  CHECK_MAIN_END();
}
