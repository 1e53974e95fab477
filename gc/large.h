/* Large blocks: blocks whose whsize exceeds GC_SIZECLASS_MAX_WHSIZE, each in its own
 * allocation behind a small gc_large header, on per-domain lists.
 *
 * INV-LARGE-1: every large block of a domain is on exactly one of its swept_large or
 * unswept_large lists; large_words counts its whsize plus GC_LARGE_HEADER_WSIZE.
 */
#ifndef GC_LARGE_H
#define GC_LARGE_H

#include "gc/heap.h"

/* The mark's, as a pool's flag (pool.h): set by an overflow, cleared only by re-darkening. */
enum gc_large_flag {
  GC_LARGE_REDARKEN = 1u << 0, /* MARKED but its fields were not scanned (mark overflow) */
};

struct gc_large {
  gc_large *next;
  uintptr_t flags; /* enum gc_large_flag */
};
#define GC_LARGE_HEADER_WSIZE (sizeof(struct gc_large) / sizeof(gc_value))

static inline gc_header *gc_large_hp(gc_large *a) { return (gc_header *)(a + 1); }
static inline gc_large *gc_large_of_hp(gc_header *hp) { return (gc_large *)hp - 1; }

/* The block index's large-block array is stale (blockindex.h): a large block was allocated or
 * freed. Domains allocate large blocks concurrently: the flag is a protocol word (platform.h). */
static inline void gc_large_index_invalidate(gc_heap *heap) {
  gc_atomic_store(&heap->large_index.stale, 1);
}

/* A zeroed large block of `whsize` words (header included) on d's swept list; the caller writes
 * the header. Returns the header pointer or NULL. Updates d's stats. */
gc_header *gc_large_alloc(gc_domain *d, size_t whsize);
/* Sweep one large block from d's unswept list; returns its words of work, 0 if none left. */
size_t gc_large_sweep_one(gc_domain *d);
/* Run the custom finalizer of every large block on `list` and free them (heap destroy). */
void gc_large_destroy_list(gc_large *list);

#endif /* GC_LARGE_H */
