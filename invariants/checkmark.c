/* The checkmark pass (debug mark rescan), run right after marking (GC_HOOK_MARK_DONE), before
 * the colours cycle.
 *
 * A second, simple, single-threaded mark from the roots as the verifier enumerates them itself
 * (rootset.h: the API's root sets read with the verifier's own loops), with its own mark
 * set (the address map of walk.c) instead of header colours, so it cannot be fooled by the state
 * the collector's marker left behind. Every block it reaches must be MARKED or NOT_MARKABLE
 * (INV-MARK-1 at its end: the stack is empty and no pool is flagged for re-darkening, so every
 * reachable block has been marked). A block that is not is reported as checkmark.unmarked
 * ("found unmarked block") with the block that points at it, its referrer, and the whole path
 * from the root. A reachable pointer that is no block at all is checkmark.bad-pointer (reach
 * names those precisely after the cycle).
 *
 * Before the walk it checks that marking is really over, so that a marker still at work when the
 * leader declared the end (an off-by-one in termination) is named as such, not found later as the
 * damage it does (checkmark.mark-unfinished): every domain's marker has handed its work buffer back
 * and holds no prefetched pointer (INV-WB-1 at the end of a mark), and, while the world is stopped,
 * every follower waits at the barrier the leader passed (arrived == participants - 1). Whether the
 * buffers themselves are all back on the empty list is the swept pass's check (swept.workbuf-lost).
 *
 * Cost: O(reachable blocks + fields) with one address-map insert per edge; see walk.h.
 */
#include <stdio.h>

#include "gc/heap.h"
#include "gc/platform.h"
#include "invariants/pass.h"
#include "invariants/verify.h"
#include "invariants/walk.h"

/* The followers wrote their markers' state before arriving at the barrier, and the leader read
 * `arrived` with acquire to pass it: this thread sees their final state. */
static size_t check_marking_over(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  size_t found = 0;
  for (size_t i = 0; i < heap->domain_count; i++) {
    const gc_marker *m = &heap->domains[i]->marker;
    if (m->buf == NULL && m->prefetch_count == 0) continue;
    char where[48];
    snprintf(where, sizeof where, "domain %u's marker", heap->domains[i]->id);
    found += gc_verify_state_violation(
        run, GC_VK_CHECKMARK_MARK_UNFINISHED, where,
        "marking is declared over, but domain %u's marker still holds %s "
        "and %u prefetched pointer(s): it has not finished marking",
        heap->domains[i]->id, m->buf != NULL ? "a work buffer" : "no work buffer",
        m->prefetch_count);
  }
  if (gc_atomic_peek(&heap->stw_requested)) {
    size_t arrived = gc_atomic_peek(&heap->barrier.arrived);
    if (arrived + 1 != heap->participants) {
      found += gc_verify_state_violation(
          run, GC_VK_CHECKMARK_MARK_UNFINISHED, "the mark barrier",
          "marking is declared over with %zu of the %zu following markers "
          "at the barrier: the others may still be marking",
          arrived, heap->participants - 1);
    }
  }
  return found;
}

size_t gc_verify_checkmark_run(const gc_verify_run *run) {
  gc_walk_rules rules = {
      .allowed_colours = (1u << (run->heap->colours.marked >> GC_HD_COLOUR_SHIFT)) |
                         (1u << (GC_NOT_MARKABLE >> GC_HD_COLOUR_SHIFT)),
      .expected =
          "MARKED (or NOT_MARKABLE) once marking is done: found unmarked block, "
          "missed by the marker although its referrer reaches it",
      .foreign = GC_VK_CHECKMARK_BAD_POINTER,
      .interior = GC_VK_CHECKMARK_BAD_POINTER,
      .zero_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_colour = GC_VK_CHECKMARK_UNMARKED,
  };
  return check_marking_over(run) + gc_walk_run(run, &rules);
}

size_t gc_verify_checkmark(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_checkmark_run(&run);
}
