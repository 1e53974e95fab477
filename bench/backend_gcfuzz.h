/* The gcfuzz backend: the collector in gc/, through its public API (gc/gc.h) only.
 *
 * Blocks with references are scanned blocks (GC_TAG_SCAN) whose integer fields hold immediates
 * (gc_val_int); raw data is a GC_TAG_RAW block. The heap comes from gc_heap_create(NULL): the
 * defaults plus GCFUZZ_PARAMS, so `GCFUZZ_PARAMS=trace=1 bench/...` works as for any embedder.
 * Root frames are gc_frame_push/gc_frame_pop on the main domain.
 *
 * Implements the interface described in bench/backend.h; include that header, not this one.
 * The heap and domain are per translation unit (static): each benchmark's run function creates
 * and destroys its own heap with bk_init/bk_fini.
 *
 * Threads (BENCH_THREADS > 1): the heap is shared and `bk_dom`, the domain the calling thread
 * runs, is thread-local. bk_thread_start spawns a domain from the main one (gc_domain_spawn: it
 * is born in a blocking section) and starts a thread that leaves the blocking section, runs the
 * function on that domain, then terminates it (its pools become orphans the main domain adopts).
 * bk_thread_join waits in a blocking section, so a collection started by the other thread does
 * not wait for the main one. The protocol is gc/domain_test.c's.
 *
 * BENCH_PAUSES=1 in the environment (ci/bench sets it) makes bk_fini print the heap's pause
 * history on stderr, one `PAUSES cycles=N marking=M pauses=K max_ns=X max_slice_ns=Y ns=...` line.
 * The marking mode is the heap's (GCFUZZ_PARAMS=marking=stw|incremental, else the default):
 * ci/bench runs the same program in both modes. */
#ifndef BENCH_BACKEND_GCFUZZ_H
#define BENCH_BACKEND_GCFUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "gc/gc.h"

#if BENCH_THREADS > 1
#include <pthread.h>
#define BK_THREAD_LOCAL __thread
#else
#define BK_THREAD_LOCAL
#endif

typedef gc_value bk_ref;

#define BK_NULL          ((gc_value)0)
#define BK_NAME          "gcfuzz"
#define BK_EXPLICIT_FREE 0

static gc_heap *bk_heap;
static BK_THREAD_LOCAL gc_domain *bk_dom; /* the domain this thread runs */

static inline void bk_init(void) {
  bk_heap = gc_heap_create(NULL);
  if (bk_heap == NULL)
    bench_die(BK_NAME, "gc_heap_create failed (is %s well formed?)", GC_PARAMS_ENV);
  bk_dom = gc_main_domain(bk_heap);
}

static inline unsigned long bk_collections(void) {
  gc_stats s;
  gc_get_stats(bk_heap, &s);
  return (unsigned long)s.cycles;
}

static inline void bk_fini(void) {
  bench_record_collections(bk_collections());
  {
    gc_stats s;
    gc_get_stats(bk_heap, &s);
    bench_record_compactions((unsigned long)s.compactions);
  }
  if (getenv("BENCH_VERBOSE") != NULL) {
    gc_stats s;
    gc_get_stats(bk_heap, &s);
    fprintf(stderr,
            "gcfuzz: marking=%s cycles=%llu pauses=%llu mark_slices=%llu alloc_blocks=%llu "
            "freed_blocks=%llu pool_max_mib=%.1f large_max_mib=%.1f max_pause_ms=%.3f "
            "max_slice_ms=%.3f\n",
            gc_heap_config(bk_heap)->marking == GC_MARKING_INCREMENTAL ? "incremental" : "stw",
            (unsigned long long)s.cycles, (unsigned long long)s.pauses,
            (unsigned long long)s.mark_slices, (unsigned long long)s.alloc_blocks,
            (unsigned long long)s.freed_blocks,
            (double)s.pool_max_words * sizeof(gc_value) / (1024.0 * 1024.0),
            (double)s.large_max_words * sizeof(gc_value) / (1024.0 * 1024.0),
            (double)s.max_pause_ns * 1e-6, (double)s.max_slice_ns * 1e-6);
  }
  if (getenv("BENCH_VERBOSE") != NULL) {
    /* The ephemerons' figures (gc_stats), for a benchmark that makes any (weak-memo). */
    gc_stats s;
    gc_get_stats(bk_heap, &s);
    if (s.ephemerons != 0 || s.ephe_data != 0 || s.weak_cleared != 0)
      fprintf(stderr,
              "gcfuzz: ephemerons=%llu weak_refs=%llu ephe_rounds=%llu ephe_data=%llu "
              "weak_cleared=%llu\n",
              (unsigned long long)s.ephemerons, (unsigned long long)s.weak_refs,
              (unsigned long long)s.ephe_rounds, (unsigned long long)s.ephe_data,
              (unsigned long long)s.weak_cleared);
  }
  if (getenv("BENCH_VERBOSE") != NULL) {
    /* The compactions (gc_stats), for a run with compact=N (fragment on gcfuzz-compact). */
    gc_stats s;
    gc_get_stats(bk_heap, &s);
    if (s.compactions != 0)
      fprintf(stderr,
              "gcfuzz: compactions=%llu compact_moved_blocks=%llu compact_moved_words=%llu "
              "compact_pools_released=%llu\n",
              (unsigned long long)s.compactions, (unsigned long long)s.compact_moved_blocks,
              (unsigned long long)s.compact_moved_words,
              (unsigned long long)s.compact_pools_released);
  }
  if (getenv("BENCH_PAUSES") != NULL) {
    /* The pause history (the last GC_PAUSE_HISTORY stops of the world), for ci/bench's
     * pause-time distribution: `PAUSES cycles=N marking=stw|incremental pauses=<stops in all>
     * max_ns=<the longest stop of the run> max_slice_ns=<the longest mark slice> ns=P1,P2,...`,
     * oldest first. max_ns is gc_stats.max_pause_ns: the ring holds only the last stops, the
     * longest may be older. A slice is no stop, but its mutator waits for it (0 in stw). */
    static uint64_t pauses[GC_PAUSE_HISTORY];
    size_t n = gc_pause_history(bk_heap, pauses, GC_PAUSE_HISTORY);
    gc_stats s;
    gc_get_stats(bk_heap, &s);
    fprintf(stderr, "PAUSES cycles=%llu marking=%s pauses=%llu max_ns=%llu max_slice_ns=%llu ns=",
            (unsigned long long)s.cycles,
            gc_heap_config(bk_heap)->marking == GC_MARKING_INCREMENTAL ? "incremental" : "stw",
            (unsigned long long)s.pauses, (unsigned long long)s.max_pause_ns,
            (unsigned long long)s.max_slice_ns);
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)pauses[i]);
    fputc('\n', stderr);
  }
  gc_heap_destroy(bk_heap);
  bk_heap = NULL;
  bk_dom = NULL;
}

/* Scanned blocks start with every field NULL; the integer fields become immediate zeros
 * (initialising stores: no barrier). */
static inline bk_ref bk_alloc(size_t nref, size_t nint) {
  gc_value b = gc_alloc(bk_dom, nref + nint, GC_TAG_SCAN);
  if (b == 0)
    bench_die(BK_NAME, "gc_alloc of %zu words failed: %s", nref + nint,
              gc_last_error_message(bk_heap));
  for (size_t i = nref; i < nref + nint; i++) GC_FIELD(b, i) = gc_val_int(0);
  return b;
}

static inline bk_ref bk_get(bk_ref b, size_t i) { return GC_FIELD(b, i); }
/* Stores: every store into a block goes through the write barrier (gc_store: outside marking a
 * load, a branch and the store; while an incremental cycle marks, the value overwritten is
 * darkened first), except an initialising store into a block this domain allocated since its
 * last safepoint (gc.h, gc_store): bk_set_new, a plain GC_FIELD. */
static inline void bk_set(bk_ref b, size_t i, bk_ref v) { gc_store(bk_dom, b, i, v); }
static inline void bk_set_new(bk_ref b, size_t i, bk_ref v) { GC_FIELD(b, i) = v; }
static inline intptr_t bk_get_int(bk_ref b, size_t i) { return gc_int_val(GC_FIELD(b, i)); }
/* An immediate may overwrite a reference: through the barrier too. */
static inline void bk_set_int(bk_ref b, size_t i, intptr_t n) {
  gc_store(bk_dom, b, i, gc_val_int(n));
}

static inline bk_ref bk_alloc_raw(size_t nbytes) {
  size_t wsize = (nbytes + sizeof(gc_value) - 1) / sizeof(gc_value);
  gc_value b = gc_alloc(bk_dom, wsize, GC_TAG_RAW);
  if (b == 0)
    bench_die(BK_NAME, "gc_alloc of %zu raw words failed: %s", wsize,
              gc_last_error_message(bk_heap));
  return b;
}
static inline void *bk_raw(bk_ref b) { return (void *)b; }

static inline void bk_free(bk_ref b) { (void)b; }

/* With compact=N in GCFUZZ_PARAMS it may compact: blocks move (backend.h, "Rooting"). */
static inline void bk_collect_full(void) { gc_collect(bk_dom, GC_COLLECT_FULL); }

/* Mapped: the pools mapped from the OS (free ones kept included) and the large blocks; live:
 * the pools' slots holding a block (whsize) and the large blocks. */
static inline void bk_heap_figures(double *mapped, double *live) {
  gc_stats s;
  gc_get_stats(bk_heap, &s);
  *mapped = (double)s.os_pool_bytes + (double)s.large_words * sizeof(gc_value);
  *live = (double)(s.pool_live_words + s.large_words) * sizeof(gc_value);
  if (getenv("BENCH_VERBOSE") != NULL)
    fprintf(stderr,
            "gcfuzz: os_pool_mib=%.2f pool_mib=%.2f pool_live_mib=%.2f large_mib=%.2f "
            "free_pools=%llu\n",
            (double)s.os_pool_bytes / (1024.0 * 1024.0),
            (double)s.pool_words * sizeof(gc_value) / (1024.0 * 1024.0),
            (double)s.pool_live_words * sizeof(gc_value) / (1024.0 * 1024.0),
            (double)s.large_words * sizeof(gc_value) / (1024.0 * 1024.0),
            (unsigned long long)s.free_pools);
}

static inline void bk_frame_end(gc_frame *frame) {
  gc_error err = gc_frame_pop(bk_dom, frame);
  if (err != GC_OK)
    bench_die(BK_NAME, "gc_frame_pop: %s: %s", gc_error_name(err), gc_last_error_message(bk_heap));
}

static inline void bk_global_root(bk_ref *slot) {
  gc_error err = gc_root_register(bk_heap, slot);
  if (err != GC_OK)
    bench_die(BK_NAME, "gc_root_register: %s: %s", gc_error_name(err),
              gc_last_error_message(bk_heap));
}

static inline void bk_global_unroot(bk_ref *slot) {
  gc_error err = gc_root_unregister(bk_heap, slot);
  if (err != GC_OK)
    bench_die(BK_NAME, "gc_root_unregister: %s: %s", gc_error_name(err),
              gc_last_error_message(bk_heap));
}

/* ---- Weak-keyed entries (backend.h): ephemerons ---- */

/* An ephemeron with one raw data word, the tag (the embedder's: the collector never reads it).
 * The caller roots key and datum across the allocation (gc.h: it may collect). */
static inline bk_ref bk_ephe_alloc(bk_ref key, bk_ref datum, intptr_t tag) {
  gc_value e = gc_ephemeron_alloc(bk_dom, key, datum, 1);
  if (e == 0) bench_die(BK_NAME, "gc_ephemeron_alloc failed: %s", gc_last_error_message(bk_heap));
  GC_FIELD(e, GC_EPHE_DATA) = (gc_value)tag; /* a raw word: no barrier */
  return e;
}
static inline intptr_t bk_ephe_tag(bk_ref e) { return (intptr_t)GC_FIELD(e, GC_EPHE_DATA); }
static inline bk_ref bk_ephe_key(bk_ref e) { return gc_ephemeron_key(bk_dom, e); }
static inline bk_ref bk_ephe_datum(bk_ref e) { return gc_ephemeron_datum(bk_dom, e); }
static inline void bk_ephe_clear(bk_ref e) {
  gc_ephemeron_set_key(bk_dom, e, 0);
  gc_ephemeron_set_datum(bk_dom, e, 0);
}

/* ---- Threads (backend.h) ---- */

typedef struct bk_thread {
  void (*fn)(void *);
  void *arg;
  gc_domain *dom;
#if BENCH_THREADS > 1
  pthread_t tid;
#endif
} bk_thread;

#if BENCH_THREADS > 1
static void *bk_thread_main(void *arg) {
  bk_thread *t = arg;
  bk_dom = t->dom;
  gc_leave_blocking(bk_dom); /* born blocking (gc_domain_spawn): run it from here on */
  t->fn(t->arg);
  gc_error err = gc_domain_terminate(bk_dom);
  if (err != GC_OK) bench_die(BK_NAME, "gc_domain_terminate: %s", gc_error_name(err));
  bk_dom = NULL;
  return NULL;
}
#endif

static inline void bk_thread_start(bk_thread *t, void (*fn)(void *), void *arg) {
  t->fn = fn;
  t->arg = arg;
#if BENCH_THREADS > 1
  t->dom = gc_domain_spawn(bk_dom);
  if (t->dom == NULL)
    bench_die(BK_NAME, "gc_domain_spawn failed: %s", gc_last_error_message(bk_heap));
  if (pthread_create(&t->tid, NULL, bk_thread_main, t) != 0)
    bench_die(BK_NAME, "pthread_create failed");
#else
  t->dom = NULL;
  bench_die(BK_NAME, "this program is built for one thread (BENCH_THREADS=1)");
#endif
}

static inline void bk_thread_join(bk_thread *t) {
#if BENCH_THREADS > 1
  gc_enter_blocking(bk_dom); /* waiting is outside the heap */
  pthread_join(t->tid, NULL);
  gc_leave_blocking(bk_dom);
#else
  (void)t;
#endif
}

#define BK_FRAME(name, n)     \
  bk_ref name[n] = {BK_NULL}; \
  gc_frame name##_frame;      \
  gc_frame_push(bk_dom, &name##_frame, name, (n))
#define BK_FRAME_END(name)     bk_frame_end(&name##_frame)
#define BK_GLOBAL_ROOT(slot)   bk_global_root(slot)
#define BK_GLOBAL_UNROOT(slot) bk_global_unroot(slot)

#endif /* BENCH_BACKEND_GCFUZZ_H */
