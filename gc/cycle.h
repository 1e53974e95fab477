/* The major cycle: finish sweeping, mark, rotate colours, start sweeping; and pacing. */
#ifndef GC_CYCLE_H
#define GC_CYCLE_H

#include "gc/heap.h"

/* Why a cycle starts. */
enum gc_cycle_reason {
  GC_CYCLE_NONE,          /* no cycle has started yet */
  GC_CYCLE_FORCED,        /* gc_collect (major or full) */
  GC_CYCLE_PACED,         /* the pacer: the domains allocated trigger_words since the last mark */
  GC_CYCLE_ALLOC_FAILURE, /* an allocation failed (the OS, or an injected failure) */
  GC_CYCLE_HEAP_LIMIT,    /* an allocation did not fit under the heap limit */
};

/* Run one whole major cycle with d as the leader, from now: the cycle marking now (if any) is
 * finished first. In the stw mode every stopped domain marks; with incremental marking d marks
 * in slices until marking is over, beside the other domains' slices. A paced cycle is run only
 * if it is still due once d holds the collection lock: a cycle another domain ran while d
 * waited for it has reset the pacer. */
void gc_major_cycle(gc_domain *d, enum gc_cycle_reason reason);
/* Start a cycle with d as the leader: in the stw mode a whole cycle (gc_major_cycle); with
 * incremental marking, the first stop only, returning with marking under way. Nothing if a
 * cycle is marking already. */
void gc_cycle_start(gc_domain *d, enum gc_cycle_reason reason);
/* One mark slice on d (incremental marking under way): budget_words words of blocks scanned,
 * or 0 for the allocation-paced budget; the domain that finds no grey work left, and no other
 * domain in a slice, tries to end marking (a stop of the world). 0 when it found no work but
 * left termination to a domain still slicing. */
int gc_cycle_mark_step(gc_domain *d, size_t budget_words);
/* Zeal store (gc.h): one mark slice of `markslice` words on d, from gc_store's slow path while
 * a cycle marks. No termination, however little work is left, and no safepoint: the store's
 * caller may hold blocks that no root names. */
void gc_cycle_store_slice(gc_domain *d);
/* d leaves a blocking section while an incremental mark that began with one domain marks with
 * plain stores: stop the world and make every marker colour headers by compare-and-swap before
 * d can mark beside them. */
void gc_cycle_make_mark_parallel(gc_domain *d);
/* gc_collect for a reason (gc_collect's own is GC_CYCLE_FORCED). */
void gc_cycle_collect(gc_domain *d, gc_collect_kind kind, enum gc_cycle_reason reason);
/* Report d's allocation to the pacer; 1 if a cycle is due. */
int gc_cycle_due(gc_domain *d);
/* Report d's allocation to the pacer; returns the words reported since the last mark ended. */
size_t gc_cycle_report(gc_domain *d);
/* d's allocation slow path while a cycle marks: report, and pay the mark work the allocation owes
 * (a slice); at the pacer's ceiling, finish the mark in one stop instead. */
void gc_cycle_assist(gc_domain *d);

#endif /* GC_CYCLE_H */
