/* The map of pools with its cache; see poolmap.h. */
#include "invariants/poolmap.h"

#include <string.h>

int gc_poolmap_reset(gc_poolmap *m) {
  memset(m->cache, 0, sizeof m->cache);
  return gc_addrmap_reset(&m->map, 0);
}

void gc_poolmap_free(gc_poolmap *m) {
  gc_addrmap_free(&m->map);
  memset(m->cache, 0, sizeof m->cache);
}

int gc_poolmap_add(gc_poolmap *m, uintptr_t pool, uint64_t value) {
  return gc_addrmap_add(&m->map, pool, value); /* a pool already there keeps its value */
}

int gc_poolmap_put(gc_poolmap *m, uintptr_t pool, uint64_t value) {
  gc_poolmap_line *line = gc_poolmap_line_of(m, pool);
  if (line->pool == pool) line->pool = 0; /* INV-POOLMAP-1, whatever the put does */
  return gc_addrmap_put(&m->map, pool, value);
}

int gc_poolmap_remove(gc_poolmap *m, uintptr_t pool) {
  gc_poolmap_line *line = gc_poolmap_line_of(m, pool);
  if (line->pool == pool) line->pool = 0; /* INV-POOLMAP-1 */
  return gc_addrmap_remove(&m->map, pool);
}
