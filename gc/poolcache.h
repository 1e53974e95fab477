/* The pool cache, internal side (the public side is in gc.h). */
#ifndef GC_POOLCACHE_H
#define GC_POOLCACHE_H

#include "gc/gc.h"

/* A mapped, GC_POOL_BSIZE-aligned pool from the cache, or NULL when it is empty. */
void *gc_pool_cache_take(gc_pool_cache *cache);
/* Keep the pool; 0 when the cache is full (the caller unmaps it). */
int gc_pool_cache_give(gc_pool_cache *cache, void *pool);

#endif /* GC_POOLCACHE_H */
