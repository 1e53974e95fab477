/* Go-style finalizers: exactly once, referents kept alive, resurrection, order, and clearing. */
#include "gc/check.h"
#include "gc/gc.h"

enum { N = 500 };
static int runs[N];
static int referent_ok;
static gc_value resurrected;

/* Field 0: an immediate id; field 1: a referent holding id + 1000 (or NULL). */
static void note_run(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)user;
  intptr_t id = gc_int_val(GC_FIELD(block, 0));
  runs[id]++;
  gc_value ref = GC_FIELD(block, 1);
  if (ref != 0 && GC_FIELD(ref, 0) != gc_val_int(id + 1000)) referent_ok = 0;
}

static gc_value make(gc_domain *d, intptr_t id, int with_referent) {
  gc_value b = 0;
  gc_frame f;
  gc_frame_push(d, &f, &b, 1);
  b = gc_alloc(d, 2, GC_TAG_SCAN);
  GC_FIELD(b, 0) = gc_val_int(id);
  if (with_referent) {
    gc_value r = gc_alloc(d, 1, GC_TAG_SCAN);
    GC_FIELD(r, 0) = gc_val_int(id + 1000);
    gc_store(d, b, 1, r); /* b was allocated before r's gc_alloc, a safepoint */
  }
  gc_frame_pop(d, &f);
  return b;
}

static size_t live_blocks(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s.pool_live_blocks;
}

static void run_exactly_once_and_free_later(void) {
  for (int i = 0; i < N; i++) runs[i] = 0;
  referent_ok = 1;
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  for (int i = 0; i < N; i++) CHECK(gc_finalizer_set(h, make(d, i, 1), note_run, NULL) == GC_OK);
  for (int i = 0; i < 10000; i++) gc_alloc(d, 3, GC_TAG_SCAN); /* garbage */
  gc_collect(d, GC_COLLECT_FULL);
  /* Queued and run after the cycle; block and referent survived it. */
  int all_once = 1;
  for (int i = 0; i < N; i++) all_once &= runs[i] == 1;
  CHECK(all_once);
  CHECK(referent_ok);
  CHECK_EQ_U(live_blocks(h), 2 * N);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.finalizers, 0);
  CHECK_EQ_U(s.finalizers_queued, 0);
  CHECK_EQ_U(s.finalizers_run, N);
  /* The next cycle frees them; no finalizer runs again. */
  gc_collect(d, GC_COLLECT_FULL);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 0);
  for (int i = 0; i < N; i++) all_once &= runs[i] == 1;
  CHECK(all_once);
  gc_heap_destroy(h);
}

static void resurrect(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)user;
  runs[gc_int_val(GC_FIELD(block, 0))]++;
  resurrected = block;
}

static void resurrection_keeps_the_block_and_never_reruns(void) {
  runs[0] = 0;
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  resurrected = 0;
  gc_root_register(h, &resurrected);
  gc_finalizer_set(h, make(d, 0, 1), resurrect, NULL);
  for (int c = 0; c < 5; c++) gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(runs[0], 1);
  CHECK(resurrected != 0);
  CHECK(GC_FIELD(GC_FIELD(resurrected, 1), 0) == gc_val_int(1000));
  CHECK_EQ_U(live_blocks(h), 2);
  resurrected = 0;
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 0);
  CHECK_EQ_U(runs[0], 1);
  gc_root_unregister(h, &resurrected);
  gc_heap_destroy(h);
}

static void outer_before_inner(void) {
  runs[1] = runs[2] = 0;
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  gc_value pair[2] = {0, 0};
  gc_frame f;
  gc_frame_push(d, &f, pair, 2);
  pair[0] = make(d, 1, 0);
  pair[1] = make(d, 2, 0);
  gc_store(d, pair[0], 1, pair[1]); /* 1 -> 2 */
  /* Inner first: the order of the records must not decide the order of finalization. */
  gc_finalizer_set(h, pair[1], note_run, NULL);
  gc_finalizer_set(h, pair[0], note_run, NULL);
  pair[0] = pair[1] = 0;
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(runs[1], 1);
  CHECK_EQ_U(runs[2], 0); /* still reachable from 1's fields this cycle */
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(runs[2], 1);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 0);
  gc_frame_pop(d, &f);
  gc_heap_destroy(h);
}

static void allocate_in_finalizer(gc_heap *heap, gc_value block, void *user) {
  gc_domain *d = user;
  runs[gc_int_val(GC_FIELD(block, 0))]++;
  for (int i = 0; i < 20000; i++) gc_alloc(d, 4, GC_TAG_SCAN); /* may start cycles */
  gc_collect(d, GC_COLLECT_MAJOR);
  (void)heap;
}

static void clear_and_errors_and_allocating_finalizers(void) {
  for (int i = 0; i < 10; i++) runs[i] = 0;
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  gc_value keep = make(d, 3, 0);
  gc_root_register(h, &keep);
  CHECK(gc_finalizer_set(h, keep, note_run, NULL) == GC_OK);
  CHECK(gc_finalizer_clear(h, keep) == GC_OK);
  CHECK(gc_finalizer_clear(h, keep) == GC_ERR_NO_FINALIZER);
  CHECK(gc_finalizer_set(h, gc_val_int(1), note_run, NULL) == GC_ERR_NOT_BLOCK);
  gc_root_unregister(h, &keep);
  for (int i = 4; i < 10; i++) gc_finalizer_set(h, make(d, i, 1), allocate_in_finalizer, d);
  gc_collect(d, GC_COLLECT_FULL);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(runs[3], 0);
  for (int i = 4; i < 10; i++) CHECK_EQ_U(runs[i], 1);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 0);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(run_exactly_once_and_free_later);
  RUN(resurrection_keeps_the_block_and_never_reruns);
  RUN(outer_before_inner);
  RUN(clear_and_errors_and_allocating_finalizers);
  CHECK_MAIN_END();
}
