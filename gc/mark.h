/* Marking: from the roots, with an explicit bounded mark stack; on overflow, the blocks that could
 * not be pushed are found again by re-darkening the pools and large blocks flagged for it. */
#ifndef GC_MARK_H
#define GC_MARK_H

#include "gc/heap.h"

/* Mark everything reachable from every root. Sweeping must be complete (INV-COL-1). */
void gc_mark_heap(gc_heap *heap);
/* Resize the mark stack (outside marking). Returns GC_OK or GC_ERR_NOMEM. */
gc_error gc_mark_stack_resize(gc_heap *heap, size_t entries);

/* Visit every root slot of the heap: global roots, every domain's frames, pinned blocks' fields
 * and the embedders' scanners. Shared by the marker and the verification passes. */
void gc_roots_visit(gc_heap *heap, gc_visit_fn visit, void *ctx);

#endif /* GC_MARK_H */
