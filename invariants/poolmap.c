/* The map of pools with its cache; see poolmap.h. */
#include "invariants/poolmap.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(GC_POOLMAP_CACHE_LINES <= 256, "a line's number fits the filled list's bytes");

/* The lines a cache should have after a use of `pools` pools; 0: none. */
static size_t lines_for(size_t pools) {
  if (pools < GC_POOLMAP_CACHE_MIN_POOLS) return 0;
  size_t lines = GC_POOLMAP_CACHE_MIN_LINES;
  while (lines < 2 * pools && lines < GC_POOLMAP_CACHE_LINES) lines *= 2;
  return lines;
}

int gc_poolmap_reset(gc_poolmap *m) {
  gc_poolmap_cache *c = m->cache;
  size_t want = lines_for(m->map.count); /* the pools of the use just ended */
  if (c != NULL && want > c->mask + 1) { /* the heap outgrew it */
    free(c);
    c = m->cache = NULL;
  }
  if (c == NULL) {
    if (want > 0) { /* NULL: lookups go to the map, no worse */
      c = m->cache = calloc(1, sizeof *c + want * sizeof c->lines[0]);
      if (c != NULL) c->mask = want - 1;
    }
  } else {
    for (size_t i = 0; i < c->filled_count; i++) c->lines[c->filled[i]].pool = 0;
    c->filled_count = 0;
  }
  return gc_addrmap_reset(&m->map, 0);
}

void gc_poolmap_free(gc_poolmap *m) {
  gc_addrmap_free(&m->map);
  free(m->cache);
  m->cache = NULL;
}

int gc_poolmap_add(gc_poolmap *m, uintptr_t pool, uint64_t value) {
  return gc_addrmap_add(&m->map, pool, value); /* a pool already there keeps its value */
}

/* Empty the line of `pool` if it holds it. It stays on the filled list, so it is marked
 * forgotten rather than empty (a fill lists only an empty line): the list never names a line
 * twice, and holds at most GC_POOLMAP_CACHE_LINES. */
static void forget(gc_poolmap *m, uintptr_t pool) {
  if (m->cache == NULL) return;
  gc_poolmap_line *line = &m->cache->lines[gc_poolmap_line_of(m->cache, pool)];
  if (line->pool == pool) line->pool = GC_POOLMAP_FORGOTTEN;
}

int gc_poolmap_put(gc_poolmap *m, uintptr_t pool, uint64_t value) {
  forget(m, pool); /* INV-POOLMAP-1, whatever the put does */
  return gc_addrmap_put(&m->map, pool, value);
}

int gc_poolmap_remove(gc_poolmap *m, uintptr_t pool) {
  forget(m, pool); /* INV-POOLMAP-1 */
  return gc_addrmap_remove(&m->map, pool);
}
