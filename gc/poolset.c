/* The set of pools in use: an open-addressing hash set of pool addresses (see poolset.h). */
#include "gc/poolset.h"

#include <stdlib.h>

#include "gc/pool_layout.h"

enum { KEY_EMPTY = 0, KEY_DELETED = 1 };

static GC_WRAPS size_t hash_pool(uintptr_t key, size_t capacity) {
  /* Pools are GC_POOL_BSIZE-aligned: drop the zero bits, then spread with a Fibonacci multiply. */
  uint64_t h = (uint64_t)(key / GC_POOL_BSIZE) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (capacity - 1);
}

static int rehash(gc_pool_set *set, size_t capacity) {
  uintptr_t *keys = calloc(capacity, sizeof *keys);
  if (keys == NULL) return 0;
  for (size_t i = 0; i < set->capacity; i++) {
    uintptr_t k = set->keys[i];
    if (k == KEY_EMPTY || k == KEY_DELETED) continue;
    size_t j = hash_pool(k, capacity);
    while (keys[j] != KEY_EMPTY) j = (j + 1) & (capacity - 1);
    keys[j] = k;
  }
  free(set->keys);
  set->keys = keys;
  set->capacity = capacity;
  set->used = set->count;
  return 1;
}

int gc_pool_set_insert(gc_heap *heap, const gc_pool *p) {
  gc_pool_set *set = &heap->pool_set;
  /* Keep the load (pools and deleted marks) under 1/2, so probes stay short. */
  if ((set->used + 1) * 2 > set->capacity) {
    size_t capacity = set->capacity ? set->capacity : 64;
    while ((set->count + 1) * 4 > capacity) capacity *= 2;
    if (!rehash(set, capacity)) return 0;
  }
  uintptr_t key = (uintptr_t)p;
  if (set->hi == 0 || key < set->lo) set->lo = key; /* INV-POOLSET-1 */
  if (key + GC_POOL_BSIZE > set->hi) set->hi = key + GC_POOL_BSIZE;
  size_t j = hash_pool(key, set->capacity);
  size_t reuse = (size_t)-1;
  while (set->keys[j] != KEY_EMPTY) {
    if (set->keys[j] == key) return 1;
    if (set->keys[j] == KEY_DELETED && reuse == (size_t)-1) reuse = j;
    j = (j + 1) & (set->capacity - 1);
  }
  if (reuse != (size_t)-1) {
    j = reuse;
  } else {
    set->used++;
  }
  set->keys[j] = key;
  set->count++;
  return 1;
}

static size_t find(const gc_pool_set *set, uintptr_t key) {
  if (set->capacity == 0 || key < set->lo || key >= set->hi) return (size_t)-1; /* INV-POOLSET-1 */
  size_t j = hash_pool(key, set->capacity);
  while (set->keys[j] != KEY_EMPTY) {
    if (set->keys[j] == key) return j;
    j = (j + 1) & (set->capacity - 1);
  }
  return (size_t)-1;
}

void gc_pool_set_remove(gc_heap *heap, const gc_pool *p) {
  size_t j = find(&heap->pool_set, (uintptr_t)p);
  if (j == (size_t)-1) return;
  heap->pool_set.keys[j] = KEY_DELETED;
  heap->pool_set.count--;
}

int gc_pool_set_contains(const gc_heap *heap, const gc_pool *p) {
  return find(&heap->pool_set, (uintptr_t)p) != (size_t)-1;
}

void gc_pool_set_free(gc_heap *heap) {
  free(heap->pool_set.keys);
  heap->pool_set = (gc_pool_set){0};
}
