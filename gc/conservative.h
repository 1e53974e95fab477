/* Conservative root ranges: registration and resolution of their words to blocks. */
#ifndef GC_CONSERVATIVE_H
#define GC_CONSERVATIVE_H

#include "gc/heap.h"

/* Called for each word of a conservative range that resolves to a block: the block, and where
 * the word is (for reports). */
typedef void (*gc_conservative_fn)(void *ctx, gc_value block, const uintptr_t *where);

/* Resolve every word of every range and call fn for those that hit a block. */
void gc_conservative_visit(gc_heap *heap, gc_conservative_fn fn, void *ctx);

#endif /* GC_CONSERVATIVE_H */
