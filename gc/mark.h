/* Marking: from the roots, with an explicit bounded mark stack; on overflow, the blocks that could
 * not be pushed are found again by re-darkening the pools and large blocks flagged for it. */
#ifndef GC_MARK_H
#define GC_MARK_H

#include "gc/heap.h"

/* A mark, with the world stopped and sweeping complete (INV-COL-1), in three steps:
 *   gc_mark_begin (the leader, alone): shape the work buffers for `markers` markers;
 *   gc_mark_domain (every marker at once): mark from the domain's frames, and for the leader
 *     (`with_global_roots`) also from the global roots, conservative ranges and the frames of
 *     domains in blocking sections; then mark until all markers run out of work;
 *   gc_mark_finish (the leader, alone): overflow recovery, finalizer queueing, totals. */
void gc_mark_begin(gc_heap *heap, size_t markers);
void gc_mark_domain(gc_domain *d, int with_global_roots);
void gc_mark_finish(gc_heap *heap, gc_domain *leader);
/* All three, with the main domain as the only marker (tests, one-domain heaps). */
void gc_mark_heap(gc_heap *heap);

/* ---- For benchmarks that time a mark alone (bench/mark_parallel.c, bench/verify_cost.c) ---- */

/* Blocks marked by the last mark: by all markers (set by gc_mark_finish), and by one domain's. */
size_t gc_mark_marked_blocks(const gc_heap *heap);
size_t gc_mark_domain_marked_blocks(const gc_domain *d);
/* Undo a mark that reached every block, so that the next mark of the same heap does the same
 * work: exchanges the MARKED and UNMARKED colour values, which turns every MARKED block UNMARKED
 * at once. Exact only when the mark left no block UNMARKED, so it refuses (returns 0, changes
 * nothing) unless the blocks the mark reached, plus the pinned (NOT_MARKABLE) ones, are every
 * block of the heap, a swept heap's count; returns 1 when done. Call it with the world stopped
 * (no other domain runs), between a gc_mark_finish and the next cycle, never from a hook. */
int gc_mark_undo_full(gc_heap *heap);

/* Visit every root slot of the heap: global roots, pinned blocks' fields, finalizer roots, the
 * embedders' scanners and every domain's frames. Shared by the marker and the verification
 * passes. Conservative ranges are separate (conservative.h): their words are not slots. */
void gc_roots_visit(gc_heap *heap, gc_visit_fn visit, void *ctx);
void gc_roots_visit_global(gc_heap *heap, gc_visit_fn visit, void *ctx);
void gc_roots_visit_domain(gc_domain *d, gc_visit_fn visit, void *ctx);

#endif /* GC_MARK_H */
