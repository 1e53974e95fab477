/* Go-style finalizers: records, the marker's part, and running the queue. */
#ifndef GC_FINALIZER_H
#define GC_FINALIZER_H

#include "gc/heap.h"

/* After marking is complete: detach the finalizer of every block left UNMARKED, queue it, and
 * call mark_fn on the block so it survives this cycle (its referents were marked as roots). */
void gc_finalizer_queue_unreachable(gc_heap *heap, void (*mark_fn)(void *ctx, gc_value), void *ctx);
/* Visit the root slots finalizers contribute: the fields of blocks with a finalizer set, the
 * queued blocks and the one running. */
void gc_finalizer_visit_roots(gc_heap *heap, gc_visit_fn visit, void *ctx);
void gc_finalizer_free_all(gc_heap *heap);

#endif /* GC_FINALIZER_H */
