/* The block index: which block, if any, contains an arbitrary word. Conservative roots need it
 * (a word in a stack snapshot may be an interior pointer, a stale pointer, or just a number).
 *
 * Pools: the pool of an address is its address masked to GC_POOL_BSIZE; a hash set of the pools
 * owned by domains (or orphaned) says whether that pool is one of ours. INV-INDEX-1: a pool is
 * in the set from gc_pool_acquire until gc_pool_release or gc_pool_destroy.
 * Large blocks: a sorted array of their start addresses, rebuilt before a lookup when a large
 * block was allocated or freed since the last rebuild; lookups are binary searches.
 */
#ifndef GC_BLOCKINDEX_H
#define GC_BLOCKINDEX_H

#include <stdint.h>

#include "gc/heap.h"

/* Returns 1 on success, 0 when the set could not grow (the pool must not be used). */
int gc_pool_set_insert(gc_heap *heap, const gc_pool *p);
void gc_pool_set_remove(gc_heap *heap, const gc_pool *p);
int gc_pool_set_contains(const gc_heap *heap, const gc_pool *p);
void gc_pool_set_free(gc_heap *heap);

/* The large-block array is stale: a large block was allocated or freed. */
/* Domains allocate large blocks concurrently: the flag is a protocol word (platform.h). */
static inline void gc_large_index_invalidate(gc_heap *heap) {
  gc_atomic_store(&heap->large_index.stale, 1);
}
void gc_large_index_free(gc_heap *heap);

/* The block whose header or fields contain the address `word`, or 0: outside the heap, in a
 * pool header, in a class's wastage, in slot padding past a block's end, or in a free slot.
 * Rebuilds the large-block array first if it is stale; without memory for it, walks the lists. */
gc_value gc_block_containing(gc_heap *heap, uintptr_t word);

#endif /* GC_BLOCKINDEX_H */
