/* The address map: open addressing, linear probing, backward-shift deletion, epochs. */
#include "invariants/addrmap.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BUCKETS 16
#define EPOCH_ONE   ((uint64_t)1 << GC_ADDRMAP_VALUE_BITS)

/* The smallest power of two >= 2 * expected (INV-AMAP-1), at least MIN_BUCKETS. */
static size_t buckets_for(size_t expected) {
  size_t n = MIN_BUCKETS;
  while (n / 2 < expected && n < ((size_t)1 << 60)) n *= 2;
  return n;
}

static int alloc_buckets(gc_addrmap *m, size_t n) {
  if (m->max_buckets != 0 && n > m->max_buckets) return 0;
  gc_addrmap_entry *b = calloc(n, sizeof *b);
  if (b == NULL) return 0;
  m->buckets = b;
  m->mask = n - 1;
  m->count = 0;
  m->shift = 64 - (unsigned)__builtin_ctzll((unsigned long long)n);
  m->epoch = EPOCH_ONE;
  return 1;
}

int gc_addrmap_init(gc_addrmap *m, size_t expected) {
  memset(m, 0, sizeof *m);
  m->epoch = EPOCH_ONE;
  return alloc_buckets(m, buckets_for(expected));
}

void gc_addrmap_free(gc_addrmap *m) {
  free(m->buckets);
  memset(m, 0, sizeof *m);
  m->epoch = EPOCH_ONE;
}

/* How much larger than the use just ended (or the one announced) a map may stay across a reset:
 * the bound on the cost of keeping its buckets. */
enum { SHRINK_FACTOR = 8 };

int gc_addrmap_reset(gc_addrmap *m, size_t expected) {
  size_t n = buckets_for(expected);
  /* Keep the buckets, unless they are many times what the last use needed: a map reused for
   * every program of a fuzzing process would otherwise stay as large as the largest heap it ever
   * saw, and every walk of its buckets (the over-retention count, the large blocks' index) and
   * every probe's cache footprint would pay for that heap ever after. */
  size_t needed = buckets_for(m->count > expected ? m->count : expected);
  if (m->buckets != NULL && m->mask + 1 >= n && m->mask + 1 <= SHRINK_FACTOR * needed) {
    m->count = 0;
    if (m->epoch > UINT64_MAX - EPOCH_ONE) { /* the last epoch: the next would be 0, and
                                               * after it entries of epoch 1 would come back */
      memset(m->buckets, 0, (m->mask + 1) * sizeof *m->buckets);
      m->epoch = EPOCH_ONE;
    } else {
      m->epoch += EPOCH_ONE;
    }
    return 1;
  }
  size_t max_buckets = m->max_buckets;
  gc_addrmap_free(m);
  m->max_buckets = max_buckets;
  return alloc_buckets(m, needed > n ? needed : n);
}

/* Double the buckets, keeping the keys of the current epoch. */
static int grow(gc_addrmap *m) {
  gc_addrmap old = *m;
  size_t n = old.buckets == NULL ? MIN_BUCKETS : (old.mask + 1) * 2;
  if (!alloc_buckets(m, n)) {
    *m = old;
    return 0;
  }
  if (old.buckets != NULL) {
    for (size_t i = 0; i <= old.mask; i++) {
      if (!gc_addrmap_live(&old, &old.buckets[i])) continue;
      gc_addrmap_entry *e = gc_addrmap_probe(m, old.buckets[i].key);
      e->key = old.buckets[i].key;
      e->word = m->epoch | (old.buckets[i].word & GC_ADDRMAP_VALUE_MAX);
      m->count++;
    }
    free(old.buckets);
  }
  return 1;
}

int gc_addrmap_add_slow(gc_addrmap *m, uintptr_t key, uint64_t value) {
  if (key == 0 || value > GC_ADDRMAP_VALUE_MAX) return -1;
  if (m->buckets != NULL) {
    gc_addrmap_entry *e = gc_addrmap_probe(m, key);
    if (gc_addrmap_live(m, e)) return 0;
  }
  if (m->buckets == NULL || (m->count + 1) * 2 > m->mask + 1) {
    if (!grow(m)) return -1;
  }
  gc_addrmap_entry *e = gc_addrmap_probe(m, key);
  e->key = key;
  e->word = m->epoch | value;
  m->count++;
  return 1;
}

int gc_addrmap_put(gc_addrmap *m, uintptr_t key, uint64_t value) {
  if (key == 0 || value > GC_ADDRMAP_VALUE_MAX) return 0;
  if (m->buckets != NULL) {
    gc_addrmap_entry *e = gc_addrmap_probe(m, key);
    if (gc_addrmap_live(m, e)) {
      e->word = m->epoch | value;
      return 1;
    }
  }
  return gc_addrmap_add(m, key, value) >= 0;
}

/* How far bucket `to` is past bucket `from` around the ring of mask + 1 buckets (modulo 2^64,
 * then masked: `to` may be below `from`). */
static inline GC_WRAPS size_t ring_distance(size_t from, size_t to, size_t mask) {
  return (to - from) & mask;
}

int gc_addrmap_remove(gc_addrmap *m, uintptr_t key) {
  if (m->buckets == NULL || key == 0) return 0;
  gc_addrmap_entry *hole = gc_addrmap_probe(m, key);
  if (!gc_addrmap_live(m, hole)) return 0;
  size_t i = (size_t)(hole - m->buckets);
  /* Shift back every later entry of the run whose home is at or before the hole, so no probe
   * sequence crosses an empty bucket it should not. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & m->mask;
    gc_addrmap_entry *e = &m->buckets[j];
    if (!gc_addrmap_live(m, e)) break;
    size_t home = gc_addrmap_home(m, e->key);
    if (ring_distance(home, j, m->mask) >= ring_distance(i, j, m->mask)) {
      m->buckets[i] = *e;
      i = j;
    }
  }
  m->buckets[i].key = 0;
  m->buckets[i].word = 0;
  m->count--;
  return 1;
}
