/* Stopping the world. A collection runs with every domain stopped: RUNNING domains park at their
 * next safepoint and collect alongside the leader; domains in blocking sections are claimed and
 * stay out until the leader lets the world go. See INV-DOM-1 (heap.h) and INV-STW-1.
 *
 * The leader (the domain that starts the collection):
 *   gc_stw_begin    take the collection lock, request the stop, wait for every domain: claim
 *                   those in blocking sections, enlist the parked ones, which start running
 *                   `program` (gc_cycle_participate) at once;
 *   ...             the program's phases, separated by heap->barrier;
 *   gc_stw_end      release the claimed domains, let the world run, drop the lock.
 */
#ifndef GC_STW_H
#define GC_STW_H

#include "gc/heap.h"

enum gc_stw_program {
  GC_STW_CYCLE, /* finish sweeping, barrier, mark, barrier (cycle.c) */
  GC_STW_SWEEP, /* finish sweeping, barrier */
};

/* Returns 1 with the world stopped; or 0, having stopped nothing and dropped the lock, when
 * `proceed` (if not NULL), called with the lock held before the stop is requested, says the
 * collection is no longer wanted: another domain's may have run while this one waited. */
int gc_stw_begin(gc_domain *leader, enum gc_stw_program program, int (*proceed)(gc_heap *heap));
void gc_stw_end(gc_domain *leader);

/* At a safepoint with a stop requested: park, run the programs of the collections that happen
 * meanwhile, and return when the world runs again. */
void gc_stw_park(gc_domain *d);

#endif /* GC_STW_H */
