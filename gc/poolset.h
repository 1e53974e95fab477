/* The pool set: the pools owned by domains or orphaned, as a hash set of their addresses, so
 * the block index (blockindex.h) can tell whether an address masked to GC_POOL_BSIZE is one of
 * ours. INV-INDEX-1: a pool is in the set from gc_pool_acquire until gc_pool_release or
 * gc_pool_destroy.
 */
#ifndef GC_POOLSET_H
#define GC_POOLSET_H

#include <stdint.h>

#include "gc/heap.h"

/* Returns 1 on success, 0 when the set could not grow (the pool must not be used). */
int gc_pool_set_insert(gc_heap *heap, const gc_pool *p);
void gc_pool_set_remove(gc_heap *heap, const gc_pool *p);
int gc_pool_set_contains(const gc_heap *heap, const gc_pool *p);
void gc_pool_set_free(gc_heap *heap);

#endif /* GC_POOLSET_H */
