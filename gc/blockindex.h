/* The block index: which block, if any, contains an arbitrary word. Conservative roots need it
 * (a word in a stack snapshot may be an interior pointer, a stale pointer, or just a number).
 *
 * Pools: the pool of an address is its address masked to GC_POOL_BSIZE; the pool set
 * (poolset.h) says whether that pool is one of ours.
 * Large blocks: a sorted array of their start addresses, rebuilt before a lookup when a large
 * block was allocated or freed since the last rebuild (large.h, gc_large_index_invalidate);
 * lookups are binary searches.
 */
#ifndef GC_BLOCKINDEX_H
#define GC_BLOCKINDEX_H

#include <stdint.h>

#include "gc/heap.h"

void gc_large_index_free(gc_heap *heap);

/* The block whose header or fields contain the address `word`, or 0: outside the heap, in a
 * pool header, in a class's wastage, in slot padding past a block's end, or in a free slot.
 * Rebuilds the large-block array first if it is stale; without memory for it, walks the lists. */
gc_value gc_block_containing(gc_heap *heap, uintptr_t word);

#endif /* GC_BLOCKINDEX_H */
