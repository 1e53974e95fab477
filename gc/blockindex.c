/* The block index: the sorted large blocks and the lookup of a word (see blockindex.h). */
#include "gc/blockindex.h"

#include <stdlib.h>

#include "gc/large.h"
#include "gc/pool.h"
#include "gc/poolset.h"

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
