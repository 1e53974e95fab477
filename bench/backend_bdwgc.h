/* The bdwgc backend: the Boehm-Demers-Weiser conservative collector (Debian's libgc), default
 * settings: GC_INIT, GC_MALLOC for blocks with references, GC_MALLOC_ATOMIC for raw data, no free.
 * With BENCH_BDWGC_INCREMENTAL (the bdwgc-incr programs), GC_enable_incremental after GC_INIT.
 * Implements the interface described in bench/backend.h; include that header, not this one.
 *
 * Threads (BENCH_THREADS > 1): GC_THREADS before <gc.h> (Debian's libgc is built with thread
 * support, thread-local allocation and parallel marking), and every thread is started with
 * GC_pthread_create, which registers it with the collector (its stack becomes a root). */
#ifndef BENCH_BACKEND_BDWGC_H
#define BENCH_BACKEND_BDWGC_H

#include "bench/bench.h"

#if BENCH_THREADS > 1
#define GC_THREADS
#include <pthread.h>
#endif
#include <gc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A block is an array of words, each a reference or an integer (scanned conservatively). */
typedef union bk_word {
  union bk_word *ref;
  intptr_t num;
} bk_word;
typedef bk_word *bk_ref;

#define BK_NULL          ((bk_ref)NULL)
#define BK_EXPLICIT_FREE 0

#if defined(BENCH_BDWGC_INCREMENTAL)
/* bdwgc-incr: the same collector in its incremental mode (GC_enable_incremental: marking in small
 * steps at allocations, dirty pages found by the virtual-memory write barrier, no change to the
 * mutator's stores). */
#define BK_NAME "bdwgc-incr"
static inline void bk_init(void) {
  GC_INIT();
  GC_enable_incremental();
}
#else
#define BK_NAME "bdwgc"
static inline void bk_init(void) { GC_INIT(); }
#endif

/* Every collection since GC_INIT, incremental ones included. */
static inline unsigned long bk_collections(void) { return (unsigned long)GC_get_gc_no(); }

static inline void bk_fini(void) {
  bench_record_collections(bk_collections());
  bench_record_compactions(0);
  if (getenv("BENCH_VERBOSE") != NULL)
    fprintf(stderr, "%s: collections=%lu heap_mib=%.1f incremental=%d\n", BK_NAME,
            (unsigned long)GC_get_gc_no(), (double)GC_get_heap_size() / (1024.0 * 1024.0),
            GC_is_incremental_mode());
}

/* GC_MALLOC returns cleared memory: every reference is already NULL and every integer 0. */
static inline bk_ref bk_alloc(size_t nref, size_t nint) {
  bk_ref b = GC_MALLOC((nref + nint) * sizeof(bk_word));
  if (b == NULL) bench_die(BK_NAME, "out of memory allocating %zu words", nref + nint);
  return b;
}

static inline bk_ref bk_get(bk_ref b, size_t i) { return b[i].ref; }
static inline void bk_set(bk_ref b, size_t i, bk_ref v) { b[i].ref = v; }
static inline void bk_set_new(bk_ref b, size_t i, bk_ref v) { b[i].ref = v; }
static inline intptr_t bk_get_int(bk_ref b, size_t i) { return b[i].num; }
static inline void bk_set_int(bk_ref b, size_t i, intptr_t n) { b[i].num = n; }

static inline bk_ref bk_alloc_raw(size_t nbytes) {
  bk_ref b = GC_MALLOC_ATOMIC(nbytes);
  if (b == NULL) bench_die(BK_NAME, "out of memory allocating %zu bytes", nbytes);
  return b;
}
static inline void *bk_raw(bk_ref b) { return b; }

static inline void bk_free(bk_ref b) { (void)b; }

static inline void bk_collect_full(void) { GC_gcollect(); }

/* Mapped: the heap without what bdwgc unmapped; live: an upper bound, the heap blocks (4 KiB
 * and up) holding at least one object, whole (bdwgc counts no live bytes of its own). */
static inline void bk_heap_figures(double *mapped, double *live) {
  *mapped = (double)GC_get_heap_size();
  *live = (double)GC_get_memory_use();
}

/* ---- Weak-keyed entries (backend.h): disappearing links ---- */

/* bdwgc has no ephemerons. An entry is a GC_MALLOC'd [hidden key, datum, tag]: the key word
 * holds GC_HIDE_POINTER(key), which the conservative scan does not take for a pointer, and is
 * registered with GC_general_register_disappearing_link, so the collection that finds the key
 * unreachable sets the word to 0 (the registration goes with the entry when it is collected).
 * The datum is an ordinary, strong pointer: it lives as long as the entry, whether the key does
 * or not, and if it reached the key the key would never die. bk_ephe_datum returns it only
 * while the key is there, as the other backends do. Reading the key reveals a hidden pointer,
 * which bdwgc's gc.h says must happen under the allocation lock (GC_call_with_alloc_lock), or
 * a collection could clear the link and free the key between the read and its use. */
enum { BK_EPHE_KEY = 0, BK_EPHE_DATUM = 1, BK_EPHE_TAG = 2 };
static inline bk_ref bk_ephe_alloc(bk_ref key, bk_ref datum, intptr_t tag) {
  bk_ref e = bk_alloc(3, 0);
  e[BK_EPHE_DATUM].ref = datum;
  e[BK_EPHE_TAG].num = tag;
  if (key != NULL) {
    e[BK_EPHE_KEY].num = (intptr_t)GC_HIDE_POINTER(key);
    if (GC_general_register_disappearing_link((void **)&e[BK_EPHE_KEY], key) != GC_SUCCESS)
      bench_die(BK_NAME, "GC_general_register_disappearing_link failed");
  }
  return e;
}
static inline intptr_t bk_ephe_tag(bk_ref e) { return e[BK_EPHE_TAG].num; }
static void *GC_CALLBACK bk_ephe_reveal(void *e) {
  intptr_t hidden = ((bk_ref)e)[BK_EPHE_KEY].num;
  return hidden != 0 ? GC_REVEAL_POINTER((GC_hidden_pointer)hidden) : NULL;
}
static inline bk_ref bk_ephe_key(bk_ref e) { return GC_call_with_alloc_lock(bk_ephe_reveal, e); }
static inline bk_ref bk_ephe_datum(bk_ref e) {
  return bk_ephe_key(e) != NULL ? e[BK_EPHE_DATUM].ref : NULL;
}
static inline void bk_ephe_clear(bk_ref e) {
  GC_unregister_disappearing_link((void **)&e[BK_EPHE_KEY]);
  e[BK_EPHE_KEY].num = 0;
  e[BK_EPHE_DATUM].ref = NULL;
}

/* ---- Threads (backend.h) ---- */

#define BK_PTHREAD_CREATE GC_pthread_create
#define BK_PTHREAD_JOIN   GC_pthread_join
#include "bench/backend_threads.h"

/* bdwgc finds roots by scanning the stack, registers and static data itself. */
#define BK_FRAME(name, n)      bk_ref name[n] = {BK_NULL}
#define BK_FRAME_END(name)     ((void)(name))
#define BK_GLOBAL_ROOT(slot)   ((void)(slot))
#define BK_GLOBAL_UNROOT(slot) ((void)(slot))

#endif /* BENCH_BACKEND_BDWGC_H */
