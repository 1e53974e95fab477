/* Stopping the world. A collection runs with every domain stopped: RUNNING domains park at their
 * next safepoint; domains in blocking sections are claimed and stay out until the leader lets the
 * world go. See INV-DOM-1 (heap.h) and INV-STW-1.
 *
 * The leader (the domain that starts the collection):
 *   gc_stw_begin    take the collection lock, request the stop, wait for every domain: claim
 *                   those in blocking sections; enlist the parked ones, which start running
 *                   `program` (their part of it, stw.c) at once, when the program has parallel
 *                   work for them, or else hold them (GC_STW_HOLD);
 *   ...             the program's phases, separated by heap->barrier (the leader alone when
 *                   it enlisted nobody);
 *   gc_stw_end      release the claimed and held domains, let the world run, drop the lock.
 *
 * A held domain's thread only waits: whatever the stop needs of the domain (the rest of its
 * sweep, its frames, its work buffer) the leader does, as for a claimed one. So a stop that has
 * no parallel work waits for no other thread once every domain is stopped: not for one the
 * scheduler has put off a core, which an enlisted domain would have to be back on to reach the
 * barrier.
 */
#ifndef GC_STW_H
#define GC_STW_H

#include "gc/heap.h"

enum gc_stw_program {
  GC_STW_CYCLE, /* finish sweeping, barrier, mark, barrier (cycle.c) */
  GC_STW_SWEEP, /* finish sweeping, barrier */
  GC_STW_HOLD,  /* nothing: the parked domains are held, the leader does their part */
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
