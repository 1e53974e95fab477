/* The map of pools against a plain array of what it should hold, through its cache: pools that
 * share a line, lines emptied by removes and puts, resets that clear only the filled lines, and
 * more rounds of fills and forgets than the filled list has entries (INV-POOLMAP-1); and the map
 * alone before a use of many pools. */
#include <stdint.h>
#include <string.h>

#include "gc/check.h"
#include "invariants/poolmap.h"

enum { POOLS = 3 * GC_POOLMAP_CACHE_LINES }; /* three pools a line */

static uintptr_t pool_at(size_t i) { return (uintptr_t)0x10000000 + i * GC_POOL_BSIZE; }

/* Every pool is found with the value `want` says (0: absent), twice, so the second lookup meets
 * the line the first filled. */
static void check_all(gc_poolmap *m, const uint64_t *want) {
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < POOLS; i++) {
      uint64_t v = 0;
      int found = gc_poolmap_get(m, pool_at(i), &v);
      CHECK_EQ_U(found, want[i] != 0);
      if (found) CHECK_EQ_U(v, want[i]);
    }
  }
  CHECK(m->cache == NULL || m->cache->filled_count <= GC_POOLMAP_CACHE_LINES);
}

static void against_an_array(void) {
  gc_poolmap m;
  memset(&m, 0, sizeof m);
  static uint64_t want[POOLS];
  memset(want, 0, sizeof want);
  for (int round = 0; round < 4; round++) {
    CHECK(gc_poolmap_reset(&m));
    /* From the reset after a use of many pools, with the most lines. */
    CHECK((m.cache != NULL) == (round > 0));
    CHECK(m.cache == NULL || m.cache->mask + 1 == GC_POOLMAP_CACHE_LINES);
    memset(want, 0, sizeof want);
    check_all(&m, want);
    for (size_t i = 0; i < POOLS; i += 2) { /* every other pool */
      CHECK_EQ_U(gc_poolmap_add(&m, pool_at(i), i + 1), 1);
      want[i] = i + 1;
    }
    check_all(&m, want);
    for (size_t i = 0; i < POOLS; i += 6) { /* forget some, cached ones among them */
      CHECK(gc_poolmap_remove(&m, pool_at(i)));
      want[i] = 0;
    }
    check_all(&m, want);
    for (size_t i = 2; i < POOLS; i += 6) { /* new values for cached pools */
      CHECK(gc_poolmap_put(&m, pool_at(i), 1000 + i));
      want[i] = 1000 + i;
    }
    check_all(&m, want);
  }
  gc_poolmap_free(&m);
}

/* Fill a line, forget its pool, fill it again, many more times than there are lines: the filled
 * list names each line once, so it never overflows, and a reset empties them all. */
static void forgotten_lines_stay_listed_once(void) {
  gc_poolmap m;
  memset(&m, 0, sizeof m);
  CHECK(gc_poolmap_reset(&m));
  for (size_t i = 0; i < GC_POOLMAP_CACHE_MIN_POOLS; i++) gc_poolmap_add(&m, pool_at(i), 1);
  CHECK(gc_poolmap_reset(&m)); /* after a use of that many pools: the smallest cache */
  CHECK(m.cache != NULL && m.cache->mask + 1 == GC_POOLMAP_CACHE_MIN_LINES);
  uint64_t v;
  for (size_t round = 0; round < 4 * GC_POOLMAP_CACHE_LINES; round++) {
    uintptr_t p = pool_at(round % 7);
    CHECK(gc_poolmap_put(&m, p, round + 1));
    CHECK(gc_poolmap_get(&m, p, &v) && v == round + 1);
    CHECK(gc_poolmap_remove(&m, p));
    CHECK(!gc_poolmap_get(&m, p, &v));
    CHECK(m.cache == NULL || m.cache->filled_count <= 7);
  }
  CHECK(gc_poolmap_reset(&m));
  CHECK(m.cache == NULL || m.cache->filled_count == 0);
  for (size_t i = 0; m.cache != NULL && i <= m.cache->mask; i++) {
    CHECK(m.cache->lines[i].pool == 0);
  }
  /* A heap that outgrew the cache gets a larger one at the next reset. */
  for (size_t i = 0; i < 200; i++) gc_poolmap_add(&m, pool_at(i), i + 1);
  CHECK(gc_poolmap_get(&m, pool_at(5), &v) && v == 6);
  CHECK(gc_poolmap_reset(&m));
  CHECK(m.cache != NULL && m.cache->mask + 1 == GC_POOLMAP_CACHE_LINES);
  CHECK(!gc_poolmap_get(&m, pool_at(5), &v));
  gc_poolmap_free(&m);
}

int main(void) {
  RUN(against_an_array);
  RUN(forgotten_lines_stay_listed_once);
  CHECK_MAIN_END();
}
