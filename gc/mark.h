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
 *   gc_mark_finish (the leader, alone): overflow recovery, the ephemeron fixpoint and the clean
 *     phase around finalizer queueing (INV-EPHE-1, INV-EPHE-2 in heap.h), totals. */
void gc_mark_begin(gc_heap *heap, size_t markers);
void gc_mark_domain(gc_domain *d, int with_global_roots);
void gc_mark_finish(gc_heap *heap, gc_domain *leader);
/* All three, with the main domain as the only marker (tests, one-domain heaps). */
void gc_mark_heap(gc_heap *heap);

/* Initialise a marker for the current mark (colours, buffer size); `parallel`: other markers
 * may run, so headers are marked by compare-and-swap. */
void gc_mark_init_marker(gc_heap *heap, gc_marker *m, int parallel);

/* ---- Incremental marking (INV-BARRIER-1 in heap.h) ----
 *
 *   gc_mark_start_incremental  world stopped: shape the buffers for every domain and the shade
 *                              marker, darken every root (global roots, pinned blocks' fields,
 *                              finalizer roots, scanners, conservative ranges, every domain's
 *                              frames, blocked ones included) into the leader's marker;
 *   gc_mark_slice              a running domain marks at least budget_words words of blocks
 *                              (or until it finds no work); returns 0 when it found no grey
 *                              work anywhere (its own, the shared list, the shade marker's) and
 *                              a round over its own ephemerons marked no datum: time to try
 *                              termination; 1 otherwise;
 *   gc_mark_quiescent          world stopped: every marker's buffer to the shared lists; 1 if
 *                              no grey work is left in any (the overflow flags aside) and a
 *                              round over every ephemeron list marks no datum (INV-EPHE-1);
 *   gc_mark_finish_incremental world stopped: drain what is left, scan the conservative ranges
 *                              again, then gc_mark_finish (overflow, finalizers, totals). */
void gc_mark_start_incremental(gc_heap *heap, gc_domain *leader);
int gc_mark_slice(gc_domain *d, size_t budget_words);
int gc_mark_quiescent(gc_heap *heap);
void gc_mark_finish_incremental(gc_heap *heap, gc_domain *leader);
/* Every marker of this mark, the shade marker's too, marks by compare-and-swap or not
 * (heap->mark_parallel); world stopped. */
void gc_mark_set_parallel(gc_heap *heap, int parallel);
/* Mark v now on m if it is UNMARKED (pushed when it has fields); 1 if this call coloured it.
 * The ephemeron rounds' way to mark a datum (ephemeron_mark.c, handed in as gc_ephe_mark_fn). */
int gc_mark_block_now(gc_marker *m, gc_value v);
/* The write barrier's darkening on d's own marker. */
void gc_mark_darken(gc_domain *d, gc_value v);
/* Darken what v's fields hold, from a thread with no marker at hand (pinning v): on the heap's
 * shade marker. */
void gc_mark_shade_fields(gc_heap *heap, gc_value v);
/* Count an unpinned block (NOT_MARKABLE -> MARKED by its caller) as marked this cycle. */
void gc_mark_count_unpinned(gc_heap *heap, gc_header hd);
/* Take a pinned block (MARKED -> NOT_MARKABLE by its caller) out of this cycle's marked count:
 * pinned blocks are counted apart (heap->pinned), INV-MARKCOUNT-1. */
void gc_mark_count_pinned(gc_heap *heap, gc_header hd);
/* d's buffer to the shared lists (entering a blocking section while marking). */
void gc_mark_flush(gc_domain *d);
/* gc_mark_flush, and d's counts kept by the shade marker (d terminates while marking). */
void gc_mark_retire(gc_domain *d);

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
