/* Conservative roots resolved while other markers mark. The leader of a cycle resolves the
 * conservative ranges (gc_block_containing reads each candidate block's header) while the
 * enlisted domains' markers mark their own roots, changing those same headers by
 * compare-and-swap: every header read on that path must be an atomic load. Run under
 * ThreadSanitizer by ci/test (tag "tsan"), where a plain read of such a header is a report.
 *
 * The setup makes the overlap certain rather than likely: a second domain, parked at its
 * safepoint on its own thread, holds in one frame BLOCKS small raw blocks and LARGE large ones
 * (raw: marking them pushes nothing, so its marker takes no lock that would order it with the
 * leader); the leader's only root is a conservative range holding the same blocks. A root
 * scanner, which the leader runs just before it resolves the range, waits (reading the headers
 * with relaxed loads, which order nothing) until the second marker has marked every one of them:
 * the leader then reads headers just changed by another thread's compare-and-swap, with nothing
 * in between to order the two. Every cycle must have had both markers, and every block must
 * survive with its contents. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "gc/check.h"
#include "gc/heap.h"

enum { BLOCKS = 2000, LARGE = 8, LARGE_WSIZE = 300, CYCLES = 4 };
enum { ALL = BLOCKS + LARGE };

typedef struct second {
  gc_heap *heap;
  gc_domain *d;
  gc_value blocks[ALL]; /* its frame's slots; written before `ready` */
  uintptr_t ready;      /* atomic: blocks allocated, frame pushed */
  uintptr_t stop;       /* atomic: the cycles are over */
} second;

static gc_value payload(size_t i) { return (gc_value)(i * 2654435761u); }

static void *run_second(void *arg) {
  second *s = arg;
  gc_domain *d = s->d;
  gc_leave_blocking(d);
  gc_frame f;
  gc_frame_push(d, &f, s->blocks, ALL);
  for (size_t i = 0; i < ALL; i++) {
    gc_value v = gc_alloc(d, i < BLOCKS ? 1 + i % 8 : LARGE_WSIZE, GC_TAG_RAW);
    if (v == 0) break;
    GC_FIELD(v, 0) = payload(i);
    s->blocks[i] = v;
  }
  __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
  /* Parked at its safepoint whenever a cycle runs: each cycle enlists it as a marker. */
  while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
    gc_poll(d);
    sched_yield();
  }
  gc_frame_pop(d, &f);
  gc_domain_terminate(d);
  return NULL;
}

/* The root scanner: in a cycle with a second marker, wait until it has marked all its blocks. */
static void wait_for_second_marker(gc_visit_fn visit, void *visit_ctx, void *user) {
  second *s = user;
  gc_heap *h = s->heap;
  if (h->participants < 2) return; /* the leader marks alone: nothing to wait for */
  for (size_t i = 0; i < ALL; i++) {
    const gc_header *hp = gc_hp_val(s->blocks[i]);
    while (gc_hd_colour(__atomic_load_n(hp, __ATOMIC_RELAXED)) != h->colours.marked) {
      sched_yield();
    }
  }
}

static void conservative_scan_while_another_marker_marks(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.gc_percent = GC_PERCENT_OFF; /* only the cycles below */
  /* Markers in parallel inside one stop: the stop-the-world mode's mark (an incremental start
   * darkens every root on the leader alone, and the scanner would wait for a second marker). */
  cfg.marking = GC_MARKING_STW;
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *main = gc_main_domain(h);
  second *s = calloc(1, sizeof *s);
  s->heap = h;
  s->d = gc_domain_spawn(main);
  pthread_t tid;
  gc_enter_blocking(main); /* while the second domain allocates */
  pthread_create(&tid, NULL, run_second, s);
  while (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) sched_yield();
  gc_leave_blocking(main);

  gc_value *range = malloc(ALL * sizeof *range);
  for (size_t i = 0; i < ALL; i++) range[i] = s->blocks[i];
  CHECK(gc_conservative_add(h, range, ALL * sizeof *range) == GC_OK);
  CHECK(gc_root_scanner_add(h, wait_for_second_marker, s) == GC_OK);
  for (int c = 0; c < CYCLES; c++) {
    gc_collect(main, GC_COLLECT_MAJOR);
    CHECK_EQ_U(h->participants, 2); /* the second domain marked in this cycle */
    CHECK_EQ_U(h->marked_blocks, ALL);
    /* It marked them all (the scanner waited for it); read after the mark's closing barrier. */
    CHECK_EQ_U(s->d->marker.marked_blocks, ALL);
  }
  __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
  gc_enter_blocking(main);
  pthread_join(tid, NULL);
  gc_leave_blocking(main);

  /* The second domain is gone: the range alone keeps every block, contents intact. */
  gc_collect(main, GC_COLLECT_FULL);
  gc_stats st;
  gc_get_stats(h, &st);
  CHECK_EQ_U(st.pool_live_blocks + st.large_blocks, ALL);
  for (size_t i = 0; i < ALL; i++) CHECK(GC_FIELD(range[i], 0) == payload(i));
  CHECK(gc_root_scanner_remove(h, wait_for_second_marker, s) == GC_OK);
  CHECK(gc_conservative_remove(h, range) == GC_OK);
  gc_heap_destroy(h);
  free(range);
  free(s);
}

int main(void) {
  RUN(conservative_scan_while_another_marker_marks);
  CHECK_MAIN_END();
}
