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
 * INV-POOLMAP-1: a cache line holds a pool the map holds, with the map's value for it (a remove
 * or a put on the map goes through here and updates its line; a reset clears every line).
 */
#ifndef INVARIANTS_POOLMAP_H
#define INVARIANTS_POOLMAP_H

#include <stddef.h>
#include <stdint.h>

#include "gc/pool_layout.h"
#include "invariants/addrmap.h"

#define GC_POOLMAP_CACHE_LINES 256

typedef struct gc_poolmap_line {
  uintptr_t pool; /* 0: empty */
  uint64_t value;
} gc_poolmap_line;

typedef struct gc_poolmap {
  gc_addrmap map;                                /* pool address -> value: what is true */
  gc_poolmap_line cache[GC_POOLMAP_CACHE_LINES]; /* by pool number modulo the lines */
} gc_poolmap;

/* Forget every pool (the map keeps its buckets: gc_addrmap_reset). 0 when out of memory. */
int gc_poolmap_reset(gc_poolmap *m);
void gc_poolmap_free(gc_poolmap *m);
/* As gc_addrmap_add, gc_addrmap_put and gc_addrmap_remove, for pool addresses. */
int gc_poolmap_add(gc_poolmap *m, uintptr_t pool, uint64_t value);
int gc_poolmap_put(gc_poolmap *m, uintptr_t pool, uint64_t value);
int gc_poolmap_remove(gc_poolmap *m, uintptr_t pool);

static inline gc_poolmap_line *gc_poolmap_line_of(gc_poolmap *m, uintptr_t pool) {
  return &m->cache[(pool / GC_POOL_BSIZE) % GC_POOLMAP_CACHE_LINES];
}

/* The value of the pool at `pool` (aligned to GC_POOL_BSIZE, non-zero) in *value; 0 when absent. */
static inline int gc_poolmap_get(gc_poolmap *m, uintptr_t pool, uint64_t *value) {
  gc_poolmap_line *line = gc_poolmap_line_of(m, pool);
  if (line->pool == pool) {
    *value = line->value;
    return 1;
  }
  if (!gc_addrmap_get(&m->map, pool, value)) return 0;
  *line = (gc_poolmap_line){pool, *value};
  return 1;
}

#endif /* INVARIANTS_POOLMAP_H */
