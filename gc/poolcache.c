/* The pool cache: mapped pools kept between heaps (see gc.h). Pools are linked through their
 * first word; nothing else in them is read, since a heap sets a pool up from its header. */
#include "gc/poolcache.h"

#include <stdlib.h>

#include "gc/platform.h"
#include "gc/pool_layout.h"

struct gc_pool_cache {
  gc_mutex lock;
  void *pools;      /* linked through each pool's first word */
  size_t count;     /* pools on the list */
  size_t max_pools; /* more are unmapped by the heap that gives them */
};

gc_pool_cache *gc_pool_cache_create(size_t max_pools) {
  gc_pool_cache *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  gc_mutex_init(&c->lock);
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
  gc_mutex_destroy(&c->lock);
  free(c);
}

size_t gc_pool_cache_count(gc_pool_cache *c) {
  gc_mutex_lock(&c->lock);
  size_t n = c->count;
  gc_mutex_unlock(&c->lock);
  return n;
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

int gc_pool_cache_give(gc_pool_cache *c, void *p) {
  gc_mutex_lock(&c->lock);
  int kept = c->count < c->max_pools;
  if (kept) {
    *(void **)p = c->pools;
    c->pools = p;
    c->count++;
  }
  gc_mutex_unlock(&c->lock);
  return kept;
}
