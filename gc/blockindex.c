/* The block index: the set of pools in use and the sorted large blocks (see blockindex.h). */
#include "gc/blockindex.h"

#include <stdlib.h>

#include "gc/large.h"
#include "gc/pool.h"

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

/* ---- Large blocks ---- */

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (gc_large *const *)a, y = (uintptr_t) * (gc_large *const *)b;
  return (x > y) - (x < y); /* no branch: the order of malloc's addresses decides no edge */
}

static int add_list(gc_large_index *ix, gc_large *list) {
  for (gc_large *a = list; a != NULL; a = a->next) {
    if (ix->count == ix->capacity) {
      size_t capacity = ix->capacity ? ix->capacity * 2 : 64;
      gc_large **sorted = realloc(ix->sorted, capacity * sizeof *sorted);
      if (sorted == NULL) return 0;
      ix->sorted = sorted;
      ix->capacity = capacity;
    }
    ix->sorted[ix->count++] = a;
  }
  return 1;
}

static int rebuild_large(gc_heap *heap) {
  gc_large_index *ix = &heap->large_index;
  ix->count = 0;
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *d = heap->domains[i];
    if (!add_list(ix, d->swept_large) || !add_list(ix, d->unswept_large)) return 0;
  }
  if (!add_list(ix, heap->orphans.large)) return 0;
  if (ix->count > 1) qsort(ix->sorted, ix->count, sizeof *ix->sorted, by_address);
  gc_atomic_store(&ix->stale, 0);
  return 1;
}

void gc_large_index_free(gc_heap *heap) {
  free(heap->large_index.sorted);
  heap->large_index = (gc_large_index){0};
}

static gc_value large_if_inside(gc_large *a, uintptr_t word) {
  gc_header *hp = gc_large_hp(a);
  if (word < (uintptr_t)hp) return 0;
  gc_header hd = gc_atomic_load_word(hp); /* other markers may be marking it: see below */
  if (word >= (uintptr_t)(hp + gc_hd_whsize(hd))) return 0;
  return gc_val_hp(hp);
}

static gc_value large_containing(gc_heap *heap, uintptr_t word) {
  gc_large_index *ix = &heap->large_index;
  if (gc_atomic_load(&ix->stale) && !rebuild_large(heap)) {
    /* No memory for the index: the lists answer too, only more slowly. */
    for (size_t i = 0; i <= heap->domain_count; i++) {
      gc_domain *d = i < heap->domain_count ? heap->domains[i] : NULL;
      gc_large *lists[] = {d ? d->swept_large : heap->orphans.large, d ? d->unswept_large : NULL};
      for (size_t l = 0; l < 2; l++) {
        for (gc_large *a = lists[l]; a != NULL; a = a->next) {
          gc_value v = large_if_inside(a, word);
          if (v != 0) return v;
        }
      }
    }
    return 0;
  }
  size_t lo = 0, hi = ix->count; /* find the last block starting at or before word */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)gc_large_hp(ix->sorted[mid]) <= word)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? 0 : large_if_inside(ix->sorted[lo - 1], word);
}

gc_value gc_block_containing(gc_heap *heap, uintptr_t word) {
  /* Most words of a range are small numbers, 0 above all. No pool or large block lies in the
   * first GC_POOL_BSIZE bytes of the address space (the OS never maps page 0, and a pool there
   * would be at NULL), so such a word needs no lookup. */
  if (word < GC_POOL_BSIZE) return 0;
  gc_pool *p = gc_pool_of_hp((const gc_header *)word);
  if (gc_pool_set_contains(heap, p)) {
    gc_header *first = gc_pool_first_slot(p);
    if (word < (uintptr_t)first || word >= (uintptr_t)p->frontier) return 0; /* INV-POOL-1 */
    size_t slot_whsize = gc_wsize_of_class[p->size_class];
    size_t index = (word - (uintptr_t)first) / gc_bsize_wsize(slot_whsize);
    gc_header *slot = first + index * slot_whsize;
    /* The leader resolves conservative ranges while other markers mark (mark.h): the header
     * may be changing colour under a compare-and-swap right now. */
    gc_header hd = gc_atomic_load_word(slot);
    if (hd == 0 || word >= (uintptr_t)(slot + gc_hd_whsize(hd))) return 0;
    return gc_val_hp(slot);
  }
  return large_containing(heap, word);
}
