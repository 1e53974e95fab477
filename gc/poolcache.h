/* The pool cache, internal side (the public side is in gc.h). */
#ifndef GC_POOLCACHE_H
#define GC_POOLCACHE_H

#include <stddef.h>

#include "gc/gc.h"

/* A mapped, GC_POOL_BSIZE-aligned pool from the cache, or NULL when it is empty. */
void *gc_pool_cache_take(gc_pool_cache *cache);
/* Keep the pool; 0 when the cache is full (the caller unmaps it). */
int gc_pool_cache_give(gc_pool_cache *cache, void *pool);

/* ---- Spare bookkeeping memory ----------------------------------------------------------------
 * A heap's own structures, kept by the cache from a destroyed heap for the next one: a fuzz
 * target makes a heap per input, and under a sanitizer each fresh allocation of these costs more
 * than running a short program (the allocator hands out cold, quarantined memory and fills it).
 * A spare is memory only: whoever takes one initialises it as if it came from malloc (zeroed for
 * gc_spare_calloc), and while it waits in the cache it is poisoned under AddressSanitizer, so a
 * stale pointer into it still faults. With a NULL cache these are calloc, malloc and free.
 *
 * Only what every heap has exactly one of is a spare: the heap structure, its main domain, its
 * mark arena. Each heap then takes as many spares as it gives back, so a heap's life is as many
 * mallocs as frees once the cache is warm. libFuzzer counts both for every input and runs an
 * input with more mallocs than frees a second time, to look for a leak: spares that some heaps
 * free early (a large block freed by sweeping, a spawned domain that terminates: freed at once,
 * so that a stale pointer to them faults under ASan with the stack that freed them) and others
 * keep would drain the cache, and the heaps that refill it would each run twice. */
typedef enum gc_spare_kind {
  GC_SPARE_HEAP,   /* struct gc_heap */
  GC_SPARE_DOMAIN, /* the main domain's struct gc_domain */
  GC_SPARE_ARENA,  /* the mark work buffers' arena (workbuf.c): any size */
  GC_SPARE_KINDS
} gc_spare_kind;

/* `bsize` zeroed bytes, or NULL. */
void *gc_spare_calloc(gc_pool_cache *cache, gc_spare_kind kind, size_t bsize);
/* At least `bsize` bytes, their number in *got, or NULL. Under ASan none of them is addressable
 * until gc_spare_open opens it: the mark arena opens its buffers one by one as marking carves
 * them, so a heap pays for poisoning the few it used, not the whole 8 MiB (whose shadow memsets
 * cost a fuzz target some 2 % of its time when every heap opened and poisoned all of it). */
void *gc_spare_malloc(gc_pool_cache *cache, gc_spare_kind kind, size_t bsize, size_t *got);
/* Make `bsize` bytes at `mem` (inside memory from gc_spare_malloc) addressable and, for MSan,
 * uninitialised, as malloc would hand them out; gc_spare_close poisons them again. Both take
 * multiples of 8 at 8-aligned addresses. */
void gc_spare_open(void *mem, size_t bsize);
void gc_spare_close(void *mem, size_t bsize);
/* Give back `mem` (`bsize` bytes, from the two above or malloc): kept for a later heap, or freed
 * when the cache has no room for it. NULL is ignored. Only its first `open_bsize` bytes may be
 * addressable (from gc_spare_calloc or malloc: all of them); they are poisoned, and what lies
 * after them stays as it is, poisoned since gc_spare_malloc. */
void gc_spare_free(gc_pool_cache *cache, gc_spare_kind kind, void *mem, size_t bsize,
                   size_t open_bsize);
/* Spares of `kind` in the cache now (tests). */
size_t gc_spare_count(gc_pool_cache *cache, gc_spare_kind kind);

#endif /* GC_POOLCACHE_H */
