/* The pacer: when a cycle starts, and how much mark work each allocated word owes while it marks.
 *
 * One goal in both marking modes: `percent` is the heap's size when a mark ends, as a percentage
 * above the live heap the last mark found. The live heap is what that mark reached from the roots
 * (blocks born MARKED not counted: they are marked because they are new, not because they are
 * reachable); the heap is every block allocated and not yet freed. With the words the last mark
 * kept (reached or born MARKED, what is left once it is swept) the goal is a number of words the
 * domains may allocate from the end of one mark to the end of the next:
 *
 *     goal_alloc = reached * (100 + percent) / 100 - kept        (at least min_trigger_words)
 *
 * In the stw mode the mark ends where it starts, so the cycle starts at goal_alloc. With
 * incremental marking the mutators allocate while it marks, so it starts a runway earlier:
 *
 *     trigger = goal_alloc - runway,   runway = scan_words * cons_mark
 *
 * scan_words is the last mark's work (the whsize of the blocks it scanned) and cons_mark the words
 * the mutators allocated per word of mark work during the last incremental marks (Go's cons/mark
 * ratio: the allocation rate during marking over the mark rate), so marking is planned to end as
 * the heap reaches the goal. Mark assists hold it there whatever the mutators do: during marking a
 * domain owes, for each word it allocates, remaining work / remaining allocation before the goal
 * words of mark work, paid in its slices (gc_cycle_mark_step); a domain that finds the goal
 * reached with marking unfinished finishes it in one stop instead of overshooting (the ceiling).
 * With the trigger at min_trigger_words the goal is at least the trigger plus the runway.
 */
#ifndef GC_PACER_H
#define GC_PACER_H

#include "gc/heap.h"

/* A mark just ended (world stopped, before the colours rotate): take its figures, which the next
 * plan starts from (reached, kept and scanned words; cons/mark if it was incremental). */
void gc_pacer_mark_done(gc_heap *heap);
/* Plan the next cycle from the last mark's figures and the parameters (percent, min_trigger_words,
 * the marking mode): store trigger_words and the goal. At the end of a mark (world stopped), at
 * heap creation and in gc_set_params (under params_lock). */
void gc_pacer_plan(gc_heap *heap);
/* Incremental marking starts (world stopped): no mark work done yet. */
void gc_pacer_mark_start(gc_heap *heap);
/* Mark work (whsize of scanned blocks) a slice did, towards this mark's expected work. */
void gc_pacer_note_mark_work(gc_heap *heap, size_t words);
/* The mark work owed for `allocated_words` allocated during marking: the assist ratio (remaining
 * work over the allocation left before the goal) times the words, at least GC_PACER_MIN_RATIO. */
uint64_t gc_pacer_assist_words(gc_heap *heap, uint64_t allocated_words);
/* 1 if the domains have allocated up to the goal while marking is not over: the ceiling. */
int gc_pacer_at_ceiling(gc_heap *heap);

#endif /* GC_PACER_H */
