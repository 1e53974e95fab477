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
 * Cost: O(reachable blocks + fields) with one address-map insert per edge; see walk.h.
 */
#include "gc/heap.h"
#include "invariants/verify.h"
#include "invariants/walk.h"

size_t gc_verify_checkmark_run(const gc_verify_run *run) {
  gc_walk_rules rules = {
      .allowed_colours = (1u << (run->heap->colours.marked >> GC_HD_COLOUR_SHIFT)) |
                         (1u << (GC_NOT_MARKABLE >> GC_HD_COLOUR_SHIFT)),
      .expected = "MARKED (or NOT_MARKABLE) once marking is done: found unmarked block, "
                  "missed by the marker although its referrer reaches it",
      .foreign = GC_VK_CHECKMARK_BAD_POINTER,
      .interior = GC_VK_CHECKMARK_BAD_POINTER,
      .zero_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_colour = GC_VK_CHECKMARK_UNMARKED,
  };
  return gc_walk_run(run, &rules);
}

size_t gc_verify_checkmark(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_checkmark_run(&run);
}
