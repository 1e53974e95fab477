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

/* The finalizer loop in its parts; gc_run_finalizers (gc.h, in cycle.c: the layer that may
 * collect, so zeal finalizer can run a cycle between two finalizers) runs it.
 *   gc_finalizers_enter    1: d runs the loop from now; 0: refused (d is inside a collection, or
 *                          another domain runs the loop, and runs d's queued finalizers too)
 *   gc_finalizer_run_next  runs the next queued finalizer, its block a root meanwhile; 0 when
 *                          the queue is empty
 *   gc_finalizers_leave    the queue emptied, the loop given up */
int gc_finalizers_enter(gc_domain *d);
int gc_finalizer_run_next(gc_domain *d);
void gc_finalizers_leave(gc_domain *d);

#endif /* GC_FINALIZER_H */
