/* An address map: open addressing with linear probing, from a block address to a 48-bit value.
 *
 * The verification passes keep one entry per block they reach (reach, checkmark: the referrer;
 * model: the object id), so the map must be cheap per entry, must not allocate per insert, and
 * must be cheap to empty: a pass after every cycle reuses one map.
 *
 * Keys are non-zero, word-aligned addresses. The hash keeps the offset of an address inside its
 * 32 KiB pool and scrambles only the pool part: the blocks of one pool land in one window of
 * consecutive buckets, in address order, so a walk that visits a pool's blocks roughly in order
 * touches the map in order too. Windows of different pools start at scrambled offsets, so they
 * overlap only as much as random placement would.
 *
 * Emptying is O(1): each entry carries the map's epoch in the top 16 bits of its value word, and
 * an entry of an older epoch counts as an empty bucket. gc_addrmap_reset only bumps the epoch
 * (and clears the buckets once every 65535 resets, when the epoch wraps).
 *
 * INV-AMAP-1: at most half the buckets hold a key of the current epoch (the map doubles before
 * that), so a probe sequence always ends at an empty bucket and expected probe lengths stay short.
 */
#ifndef INVARIANTS_ADDRMAP_H
#define INVARIANTS_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "gc/platform.h" /* GC_WRAPS */
#include "gc/pool_layout.h"

#define GC_ADDRMAP_VALUE_BITS 48
#define GC_ADDRMAP_VALUE_MAX  ((((uint64_t)1) << GC_ADDRMAP_VALUE_BITS) - 1)

typedef struct gc_addrmap_entry {
  uintptr_t key; /* 0: never used */
  uint64_t word; /* epoch << 48 | value */
} gc_addrmap_entry;

typedef struct gc_addrmap {
  gc_addrmap_entry *buckets;
  size_t mask;    /* bucket count - 1; the count is a power of two */
  size_t count;   /* keys held in the current epoch */
  unsigned shift; /* 64 - log2(bucket count): the pool scramble keeps the top bits */
  uint64_t epoch; /* 1..65535, already shifted left by GC_ADDRMAP_VALUE_BITS */
  /* 0: none. Otherwise the map never allocates more buckets than this, as if the allocation
   * failed: how tests reach the passes' out-of-memory paths. Kept by reset, cleared by free. */
  size_t max_buckets;
} gc_addrmap;

/* An empty map sized for about `expected` keys without growing. Returns 0 when out of memory
 * (the map is then empty and still valid: inserts will try to allocate). */
int gc_addrmap_init(gc_addrmap *m, size_t expected);
void gc_addrmap_free(gc_addrmap *m);
/* Forget every key; keep the buckets if they are enough for `expected` keys and not many times
 * more than the keys it held (or `expected`): then O(1) but once per 65535 calls. Otherwise the
 * buckets are allocated afresh, sized for the larger of the two. Returns 0 when a needed
 * reallocation failed. */
int gc_addrmap_reset(gc_addrmap *m, size_t expected);

/* Insert key -> value (value <= GC_ADDRMAP_VALUE_MAX) if key is absent. Returns 1 if inserted, 0
 * if the key was already there (its value unchanged), -1 when growing failed, key is 0 or the
 * value too large. */
static inline int gc_addrmap_add(gc_addrmap *m, uintptr_t key, uint64_t value);
/* Insert or overwrite. Returns 0 when growing failed, key is 0 or the value too large. */
int gc_addrmap_put(gc_addrmap *m, uintptr_t key, uint64_t value);
/* The value of key in *value; returns 0 when absent. */
static inline int gc_addrmap_get(const gc_addrmap *m, uintptr_t key, uint64_t *value);
static inline int gc_addrmap_has(const gc_addrmap *m, uintptr_t key) {
  uint64_t unused;
  return gc_addrmap_get(m, key, &unused);
}
/* Remove key; returns 0 when it was absent. Backward-shift deletion, no tombstones. */
int gc_addrmap_remove(gc_addrmap *m, uintptr_t key);
/* Start loading the bucket of key into the cache, for a lookup a little later. */
static inline void gc_addrmap_prefetch(const gc_addrmap *m, uintptr_t key);

/* ---- Inline parts: the probe, used once per block by the walks ------------------------------ */

#define GC_ADDRMAP_POOL_SHIFT 15 /* log2(GC_POOL_BSIZE) */
_Static_assert(((size_t)1 << GC_ADDRMAP_POOL_SHIFT) == GC_POOL_BSIZE, "pool shift");

/* Home bucket: a scrambled pool number (Fibonacci hashing, top bits) plus the word offset inside
 * the pool, so one pool's blocks occupy consecutive buckets. */
static inline GC_WRAPS size_t gc_addrmap_home(const gc_addrmap *m, uintptr_t key) {
  uint64_t pool_hash =
      ((uint64_t)(key >> GC_ADDRMAP_POOL_SHIFT) * 0x9e3779b97f4a7c15ull) >> m->shift;
  size_t word_in_pool = (key & (GC_POOL_BSIZE - 1)) >> 3;
  return ((size_t)pool_hash + word_in_pool) & m->mask;
}

/* A bucket is in use when it holds a key of the current epoch. */
static inline int gc_addrmap_live(const gc_addrmap *m, const gc_addrmap_entry *e) {
  return e->key != 0 && (e->word & ~GC_ADDRMAP_VALUE_MAX) == m->epoch;
}

/* The bucket holding key, or the first bucket not in use where it would go. */
static inline gc_addrmap_entry *gc_addrmap_probe(const gc_addrmap *m, uintptr_t key) {
  size_t i = gc_addrmap_home(m, key);
  for (;;) {
    gc_addrmap_entry *e = &m->buckets[i];
    if (!gc_addrmap_live(m, e)) return e;
    if (e->key == key) return e;
    i = (i + 1) & m->mask;
  }
}

/* Out of line: make room (doubling) and insert. */
int gc_addrmap_add_slow(gc_addrmap *m, uintptr_t key, uint64_t value);

static inline int gc_addrmap_add(gc_addrmap *m, uintptr_t key, uint64_t value) {
  if (m->buckets != NULL && key != 0 && value <= GC_ADDRMAP_VALUE_MAX &&
      (m->count + 1) * 2 <= m->mask + 1) {
    gc_addrmap_entry *e = gc_addrmap_probe(m, key);
    if (gc_addrmap_live(m, e)) return 0;
    e->key = key;
    e->word = m->epoch | value;
    m->count++;
    return 1;
  }
  return gc_addrmap_add_slow(m, key, value);
}

static inline int gc_addrmap_get(const gc_addrmap *m, uintptr_t key, uint64_t *value) {
  if (m->buckets == NULL || key == 0) return 0;
  const gc_addrmap_entry *e = gc_addrmap_probe(m, key);
  if (!gc_addrmap_live(m, e)) return 0;
  *value = e->word & GC_ADDRMAP_VALUE_MAX;
  return 1;
}

static inline void gc_addrmap_prefetch(const gc_addrmap *m, uintptr_t key) {
  if (m->buckets != NULL) __builtin_prefetch(&m->buckets[gc_addrmap_home(m, key)], 1);
}

#endif /* INVARIANTS_ADDRMAP_H */
