/* Conservative roots. A range is raw memory the collector does not understand: every aligned
 * word in it might be a pointer. Words are resolved through the block index (blockindex.h), so a
 * word costs a mask and a hash probe when it falls in a pool, a binary search otherwise. */
#include "gc/conservative.h"

#include <stdlib.h>

#include "gc/blockindex.h"

static gc_error add_with_lock(gc_heap *heap, const void *start, size_t bsize) {
  if (start == NULL) return gc_fail(heap, GC_ERR_UNKNOWN_RANGE, "gc_conservative_add: NULL start");
  for (size_t i = 0; i < heap->range_count; i++) {
    if (heap->ranges[i].key == start) {
      return gc_fail(heap, GC_ERR_DUP_ROOT, "gc_conservative_add: a range at %p is already added",
                     start);
    }
  }
  if (heap->range_count == heap->range_capacity) {
    size_t capacity = heap->range_capacity ? heap->range_capacity * 2 : 8;
    gc_range *r = realloc(heap->ranges, capacity * sizeof *r);
    if (r == NULL) return gc_fail(heap, GC_ERR_NOMEM, "gc_conservative_add: out of memory");
    heap->ranges = r;
    heap->range_capacity = capacity;
  }
  /* Whole aligned words only: round the start up and the end down. */
  uintptr_t first = ((uintptr_t)start + GC_WORD_BSIZE - 1) & ~(uintptr_t)(GC_WORD_BSIZE - 1);
  uintptr_t end = ((uintptr_t)start + bsize) & ~(uintptr_t)(GC_WORD_BSIZE - 1);
  size_t wsize = end > first ? gc_wsize_bsize(end - first) : 0;
  heap->ranges[heap->range_count++] = (gc_range){(const uintptr_t *)first, wsize, start};
  return GC_OK;
}

static gc_error remove_with_lock(gc_heap *heap, const void *start) {
  for (size_t i = 0; i < heap->range_count; i++) {
    if (heap->ranges[i].key == start) {
      heap->ranges[i] = heap->ranges[--heap->range_count];
      return GC_OK;
    }
  }
  return gc_fail(heap, GC_ERR_UNKNOWN_RANGE, "gc_conservative_remove: no range starts at %p",
                 start);
}

gc_error gc_conservative_add(gc_heap *heap, const void *start, size_t bsize) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = add_with_lock(heap, start, bsize);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_conservative_remove(gc_heap *heap, const void *start) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = remove_with_lock(heap, start);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

void gc_conservative_visit(gc_heap *heap, gc_conservative_fn fn, void *ctx) {
  for (size_t i = 0; i < heap->range_count; i++) {
    const gc_range *r = &heap->ranges[i];
    for (size_t k = 0; k < r->wsize; k++) {
      uintptr_t word;
      /* The range is the embedder's raw memory: read it as bytes, whatever its declared type. */
      __builtin_memcpy(&word, &r->start[k], sizeof word);
      gc_value block = gc_block_containing(heap, word);
      if (block != 0) fn(ctx, block, &r->start[k]);
    }
  }
}
