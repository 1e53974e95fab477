/* The pool cache: mapped pools kept between heaps (see gc.h), and the spare bookkeeping memory of
 * destroyed heaps (poolcache.h). Pools are linked through their first word; nothing else in them
 * is read, since a heap sets a pool up from its header. */
#include "gc/poolcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc/platform.h"
#include "gc/pool_layout.h"

/* Spares are poisoned for AddressSanitizer while the cache holds them, and handed out as
 * uninitialised to MemorySanitizer, as malloc would. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GC_CACHE_ASAN 1
#endif
#if __has_feature(memory_sanitizer)
#define GC_CACHE_MSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(GC_CACHE_ASAN)
#define GC_CACHE_ASAN 1
#endif
#ifdef GC_CACHE_ASAN
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define SPARE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define SPARE_POISON(p, n)   ((void)(p), (void)(n))
#define SPARE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#ifdef GC_CACHE_MSAN
#include <sanitizer/msan_interface.h>
#define SPARE_UNINIT(p, n) __msan_allocated_memory(p, n)
#else
#define SPARE_UNINIT(p, n) ((void)(p), (void)(n))
#endif

/* How many spares of each kind the cache keeps: one of each per heap alive at once (a test may
 * keep a few heaps). */
static const size_t max_spares[GC_SPARE_KINDS] = {
    [GC_SPARE_HEAP] = 4, [GC_SPARE_DOMAIN] = 4, [GC_SPARE_ARENA] = 4};

typedef struct spare {
  void *mem;
  size_t bsize;
} spare;

typedef struct spare_list {
  spare *items;
  size_t count, capacity;
} spare_list;

struct gc_pool_cache {
  gc_mutex lock;    /* guards the pools */
  void *pools;      /* linked through each pool's first word */
  size_t count;     /* pools on the list */
  size_t max_pools; /* more are unmapped by the heap that gives them */
  /* Guards the spares. A plain mutex, not a gc_mutex, so not a scheduling point (platform.h):
   * recycling memory is nothing a heap's logic can observe, and as a point it would make a
   * program's interleaving depend on whether a cache is in use (the fuzz targets use one, the
   * replay tool does not). No platform operation runs while it is held, so under the controlled
   * scheduler its holder always releases it before another thread runs. */
  pthread_mutex_t spare_lock;
  spare_list spares[GC_SPARE_KINDS]; /* each poisoned while here */
};

gc_pool_cache *gc_pool_cache_create(size_t max_pools) {
  gc_pool_cache *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  gc_mutex_init(&c->lock);
  if (pthread_mutex_init(&c->spare_lock, NULL) != 0) {
    gc_mutex_destroy(&c->lock);
    free(c);
    return NULL;
  }
  c->max_pools = max_pools;
  return c;
}

void gc_pool_cache_destroy(gc_pool_cache *c) {
  if (c == NULL) return;
  while (c->pools != NULL) {
    void *p = c->pools;
    c->pools = *(void **)p;
    gc_plat_unmap(p, GC_POOL_BSIZE);
  }
  for (int k = 0; k < GC_SPARE_KINDS; k++) {
    for (size_t i = 0; i < c->spares[k].count; i++) free(c->spares[k].items[i].mem);
    free(c->spares[k].items);
  }
  pthread_mutex_destroy(&c->spare_lock);
  gc_mutex_destroy(&c->lock);
  free(c);
}

size_t gc_pool_cache_count(gc_pool_cache *c) {
  gc_mutex_lock(&c->lock);
  size_t n = c->count;
  gc_mutex_unlock(&c->lock);
  return n;
}

size_t gc_pool_cache_fill(gc_pool_cache *c) {
  gc_mutex_lock(&c->lock);
  size_t n = c->count;
  gc_mutex_unlock(&c->lock);
  for (; n < c->max_pools; n++) {
    void *p = gc_plat_map_aligned(GC_POOL_BSIZE, GC_POOL_BSIZE);
    if (p == NULL || !gc_pool_cache_give(c, p)) {
      if (p != NULL) gc_plat_unmap(p, GC_POOL_BSIZE);
      break;
    }
  }
  return gc_pool_cache_count(c);
}

void *gc_pool_cache_take(gc_pool_cache *c) {
  gc_mutex_lock(&c->lock);
  void *p = c->pools;
  if (p != NULL) {
    c->pools = *(void **)p;
    c->count--;
  }
  gc_mutex_unlock(&c->lock);
  return p;
}

/* INV-POOLCACHE-1: the cache's pools are in address order, lowest first, and a heap takes the
 * lowest. A heap's pools then do not depend on the order the heaps before it gave theirs back: a
 * cache that holds the same pools (a filled one, gc_pool_cache_fill) gives every heap the same
 * pools in the same order, and the pool set's probes (which hash addresses) repeat exactly. The
 * insertion walks past the pools below this one: a heap takes the lowest, so what it gives back
 * goes in near the front. */
int gc_pool_cache_give(gc_pool_cache *c, void *p) {
  gc_mutex_lock(&c->lock);
  int kept = c->count < c->max_pools;
  if (kept) {
    void **at = &c->pools;
    while (*at != NULL && (uintptr_t)*at < (uintptr_t)p) at = (void **)*at;
    *(void **)p = *at;
    *at = p;
    c->count++;
  }
  gc_mutex_unlock(&c->lock);
  return kept;
}

/* ---- Spare bookkeeping memory ---------------------------------------------------------------- */

/* The smallest spare of `kind` with at least `bsize` bytes, taken out of the cache (still
 * poisoned), or NULL. */
static void *take_spare(gc_pool_cache *c, gc_spare_kind kind, size_t bsize, size_t *got) {
  if (c == NULL) return NULL;
  spare found = {NULL, 0};
  pthread_mutex_lock(&c->spare_lock);
  spare_list *l = &c->spares[kind];
  size_t best = l->count;
  for (size_t i = 0; i < l->count; i++) {
    if (l->items[i].bsize >= bsize &&
        (best == l->count || l->items[i].bsize < l->items[best].bsize)) {
      best = i;
    }
  }
  if (best < l->count) {
    found = l->items[best];
    l->items[best] = l->items[--l->count];
  }
  pthread_mutex_unlock(&c->spare_lock);
  if (found.mem == NULL) return NULL;
  *got = found.bsize;
  return found.mem;
}

void *gc_spare_calloc(gc_pool_cache *c, gc_spare_kind kind, size_t bsize) {
  size_t got;
  void *mem = take_spare(c, kind, bsize, &got);
  if (mem == NULL) return calloc(1, bsize);
  gc_spare_open(mem, bsize); /* the rest stays poisoned: a red zone after it, as from malloc */
  memset(mem, 0, bsize);
  return mem;
}

void *gc_spare_malloc(gc_pool_cache *c, gc_spare_kind kind, size_t bsize, size_t *got) {
  void *mem = take_spare(c, kind, bsize, got);
  if (mem != NULL) return mem; /* poisoned whole since it was given back */
  mem = malloc(bsize);
  if (mem != NULL) SPARE_POISON(mem, bsize);
  *got = bsize;
  return mem;
}

void gc_spare_open(void *mem, size_t bsize) {
  SPARE_UNPOISON(mem, bsize);
  SPARE_UNINIT(mem, bsize);
}

void gc_spare_close(void *mem, size_t bsize) { SPARE_POISON(mem, bsize); }

void gc_spare_free(gc_pool_cache *c, gc_spare_kind kind, void *mem, size_t bsize,
                   size_t open_bsize) {
  if (c == NULL || mem == NULL) {
    free(mem);
    return;
  }
  SPARE_POISON(mem, open_bsize);
  /* Kept while there is room; else it replaces the smallest spare if that is smaller. */
  spare out = {mem, bsize};
  pthread_mutex_lock(&c->spare_lock);
  spare_list *l = &c->spares[kind];
  if (l->count == l->capacity && l->count < max_spares[kind]) {
    size_t capacity = l->capacity ? 2 * l->capacity : 4;
    spare *items = realloc(l->items, capacity * sizeof *items);
    if (items != NULL) {
      l->items = items;
      l->capacity = capacity;
    }
  }
  if (l->count < l->capacity) {
    l->items[l->count++] = out;
    out.mem = NULL;
  } else {
    spare *smallest = NULL;
    for (size_t i = 0; i < l->count; i++) {
      if (smallest == NULL || l->items[i].bsize < smallest->bsize) smallest = &l->items[i];
    }
    if (smallest != NULL && smallest->bsize < out.bsize) {
      spare t = *smallest;
      *smallest = out;
      out = t;
    }
  }
  pthread_mutex_unlock(&c->spare_lock);
  free(out.mem); /* poisoned or not, free takes it back */
}

size_t gc_spare_count(gc_pool_cache *c, gc_spare_kind kind) {
  pthread_mutex_lock(&c->spare_lock);
  size_t n = c->spares[kind].count;
  pthread_mutex_unlock(&c->spare_lock);
  return n;
}
