/* A map from a pool's address to a value, for the lookups a walk makes once per edge: an address
 * map (addrmap.h) with a small direct-mapped cache of the pools found in front of it.
 *
 * A walk's consecutive edges lead to blocks of different size classes, so to different pools: a
 * cache of the one last pool missed at almost every edge, and each miss paid a hashed probe (a
 * multiply, a bucket, an epoch test). The pools of a heap come from the OS in batches of
 * consecutive addresses, so the low bits of the pool number, which index the cache, differ among
 * neighbours: a heap of up to GC_POOLMAP_CACHE_LINES pools (8 MiB) is looked up in the cache alone
 * once each pool was met, and a larger one mostly. (64 lines, tried first, conflicted so often at
 * 10^5 blocks, some 120 pools, that the walks were slower than with the one-entry cache.) Clearing
 * it is a memset of 4 KiB per reset.
 *
 * The cache is sized by the pools of the use before a reset: twice as many lines, a power of two
 * from GC_POOLMAP_CACHE_MIN_LINES up to GC_POOLMAP_CACHE_LINES, allocated at the first reset that
 * wants it and again when a heap grew past it, and kept (a fuzzing process lends every heap's
 * verifier one scratch memory). Before a use of GC_POOLMAP_CACHE_MIN_POOLS pools there is none:
 * every lookup goes to the map, whose probe is then short and in the first-level cache, and a
 * fuzzed heap's model, which keeps a heap index per heap, allocates nothing (a cache of 256 lines
 * for every one cost more than its lookups saved). A reset clears only the lines filled since the
 * one before: a small heap's walks fill a few.
 *
 * INV-POOLMAP-1: a cache line holds a pool the map holds, with the map's value for it (a remove
 * or a put on the map goes through here and empties its line; a reset empties every line filled
 * since the last); `filled` lists, once each, the lines whose pool is not 0.
 */
#ifndef INVARIANTS_POOLMAP_H
#define INVARIANTS_POOLMAP_H

#include <stddef.h>
#include <stdint.h>

#include "gc/pool_layout.h"
#include "invariants/addrmap.h"

#define GC_POOLMAP_CACHE_LINES     256 /* at most */
#define GC_POOLMAP_CACHE_MIN_LINES 16
#define GC_POOLMAP_CACHE_MIN_POOLS 8

/* A line's pool when it was emptied by a remove or a put since it was filled: on the filled list,
 * but holding no pool (no pool is at address 1). */
#define GC_POOLMAP_FORGOTTEN ((uintptr_t)1)

typedef struct gc_poolmap_line {
  uintptr_t pool; /* 0: empty and not listed; GC_POOLMAP_FORGOTTEN: empty and listed */
  uint64_t value;
} gc_poolmap_line;

typedef struct gc_poolmap_cache {
  size_t mask;                            /* lines - 1; the count is a power of two */
  size_t filled_count;                    /* entries of `filled` */
  uint8_t filled[GC_POOLMAP_CACHE_LINES]; /* the lines filled since the last reset */
  gc_poolmap_line lines[];                /* mask + 1 of them, by pool number modulo the count */
} gc_poolmap_cache;

typedef struct gc_poolmap {
  gc_addrmap map;          /* pool address -> value: what is true */
  gc_poolmap_cache *cache; /* NULL before a use of GC_POOLMAP_CACHE_MIN_POOLS pools, or when it
                            * could not be allocated: every lookup goes to the map */
} gc_poolmap;

/* Forget every pool (the map keeps its buckets: gc_addrmap_reset). 0 when out of memory. */
int gc_poolmap_reset(gc_poolmap *m);
void gc_poolmap_free(gc_poolmap *m);
/* As gc_addrmap_add, gc_addrmap_put and gc_addrmap_remove, for pool addresses. */
int gc_poolmap_add(gc_poolmap *m, uintptr_t pool, uint64_t value);
int gc_poolmap_put(gc_poolmap *m, uintptr_t pool, uint64_t value);
int gc_poolmap_remove(gc_poolmap *m, uintptr_t pool);

static inline size_t gc_poolmap_line_of(const gc_poolmap_cache *c, uintptr_t pool) {
  return (pool / GC_POOL_BSIZE) & c->mask;
}

/* The value of the pool at `pool` (aligned to GC_POOL_BSIZE, non-zero) in *value; 0 when absent. */
static inline int gc_poolmap_get(gc_poolmap *m, uintptr_t pool, uint64_t *value) {
  gc_poolmap_cache *c = m->cache;
  if (c == NULL) return gc_addrmap_get(&m->map, pool, value);
  gc_poolmap_line *line = &c->lines[gc_poolmap_line_of(c, pool)];
  if (line->pool == pool) {
    *value = line->value;
    return 1;
  }
  if (!gc_addrmap_get(&m->map, pool, value)) return 0;
  if (line->pool == 0) c->filled[c->filled_count++] = (uint8_t)gc_poolmap_line_of(c, pool);
  *line = (gc_poolmap_line){pool, *value};
  return 1;
}

#endif /* INVARIANTS_POOLMAP_H */
