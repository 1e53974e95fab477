/* The malloc backend: glibc malloc, and explicit frees of every dead block.
 * Implements the interface described in bench/backend.h; include that header, not this one.
 * Threads (BENCH_THREADS > 1) are plain pthreads; glibc gives each its own arena. */
#ifndef BENCH_BACKEND_MALLOC_H
#define BENCH_BACKEND_MALLOC_H

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"

#if BENCH_THREADS > 1
#include <pthread.h>
#endif

/* A block is an array of words, each a reference or an integer. */
typedef union bk_word {
  union bk_word *ref;
  intptr_t num;
} bk_word;
typedef bk_word *bk_ref;

#define BK_NULL          ((bk_ref)NULL)
#define BK_NAME          "malloc"
#define BK_EXPLICIT_FREE 1

static inline void bk_init(void) {}

static inline unsigned long bk_collections(void) { return 0; }

static inline void bk_fini(void) {
  bench_record_collections(bk_collections());
  bench_record_compactions(0);
  if (getenv("BENCH_VERBOSE") != NULL) fprintf(stderr, "malloc: no statistics\n");
}

static inline bk_ref bk_alloc(size_t nref, size_t nint) {
  bk_ref b = malloc((nref + nint) * sizeof(bk_word));
  if (b == NULL) bench_die(BK_NAME, "out of memory allocating %zu words", nref + nint);
  for (size_t i = 0; i < nref; i++) b[i].ref = NULL;
  for (size_t i = nref; i < nref + nint; i++) b[i].num = 0;
  return b;
}

static inline bk_ref bk_get(bk_ref b, size_t i) { return b[i].ref; }
static inline void bk_set(bk_ref b, size_t i, bk_ref v) { b[i].ref = v; }
static inline void bk_set_new(bk_ref b, size_t i, bk_ref v) { b[i].ref = v; }
static inline intptr_t bk_get_int(bk_ref b, size_t i) { return b[i].num; }
static inline void bk_set_int(bk_ref b, size_t i, intptr_t n) { b[i].num = n; }

static inline bk_ref bk_alloc_raw(size_t nbytes) {
  bk_ref b = malloc(nbytes);
  if (b == NULL) bench_die(BK_NAME, "out of memory allocating %zu bytes", nbytes);
  return b;
}
static inline void *bk_raw(bk_ref b) { return b; }

static inline void bk_free(bk_ref b) { free(b); }

static inline void bk_collect_full(void) {}

/* mallinfo2 (every arena): mapped, the arenas' bytes and the mmapped chunks; live, the chunks
 * in use (headers included) and the mmapped ones. */
static inline void bk_heap_figures(double *mapped, double *live) {
  struct mallinfo2 mi = mallinfo2();
  *mapped = (double)mi.arena + (double)mi.hblkhd;
  *live = (double)mi.uordblks + (double)mi.hblkhd;
}

/* ---- Weak-keyed entries (backend.h): explicit ---- */

/* [key, datum, tag]: nothing clears it but the program (bk_ephe_clear, when it frees the key). */
enum { BK_EPHE_KEY = 0, BK_EPHE_DATUM = 1, BK_EPHE_TAG = 2 };
static inline bk_ref bk_ephe_alloc(bk_ref key, bk_ref datum, intptr_t tag) {
  bk_ref e = bk_alloc(2, 1);
  e[BK_EPHE_KEY].ref = key;
  e[BK_EPHE_DATUM].ref = datum;
  e[BK_EPHE_TAG].num = tag;
  return e;
}
static inline intptr_t bk_ephe_tag(bk_ref e) { return e[BK_EPHE_TAG].num; }
static inline bk_ref bk_ephe_key(bk_ref e) { return e[BK_EPHE_KEY].ref; }
static inline bk_ref bk_ephe_datum(bk_ref e) {
  return e[BK_EPHE_KEY].ref != NULL ? e[BK_EPHE_DATUM].ref : NULL;
}
static inline void bk_ephe_clear(bk_ref e) {
  e[BK_EPHE_KEY].ref = NULL;
  e[BK_EPHE_DATUM].ref = NULL;
}

/* ---- Threads (backend.h) ---- */

#define BK_PTHREAD_CREATE pthread_create
#define BK_PTHREAD_JOIN   pthread_join
#include "bench/backend_threads.h"

#define BK_FRAME(name, n)      bk_ref name[n] = {BK_NULL}
#define BK_FRAME_END(name)     ((void)(name))
#define BK_GLOBAL_ROOT(slot)   ((void)(slot))
#define BK_GLOBAL_UNROOT(slot) ((void)(slot))

#endif /* BENCH_BACKEND_MALLOC_H */
