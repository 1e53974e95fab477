/* The reach pass (addrmap reachability), run right after the colours cycle (GC_HOOK_CYCLED).
 *
 * From every root slot, with an explicit stack and an address map of the blocks seen (walk.c),
 * every reachable block must:
 *   - start at a slot boundary of a pool a domain owns, or be a large block a domain owns
 *     (INV-POOL-1, INV-POOL-2, INV-LARGE-1): reach.foreign-pointer, reach.interior-pointer;
 *   - have a non-zero header (INV-HD-1: a zero header is a free slot): reach.zero-header;
 *   - have a valid tag and a size that fits its slot, or exceeds the pool maximum for a large
 *     block (INV-POOL-1): reach.bad-header;
 *   - be UNMARKED or NOT_MARKABLE: after the rotation, what marking reached is UNMARKED, nothing
 *     is MARKED, and a reachable GARBAGE block is one the next sweep would free (INV-COL-1):
 *     reach.bad-colour.
 * Each report gives the path root -> field -> ... -> bad block.
 *
 * Outside a collection (between cycles, while sweeping lazily) the same colours are required, so
 * the pass may also be called directly at any time no marking is in progress.
 *
 * Cost: O(reachable blocks + fields) with one address-map insert per edge; see walk.h.
 */
#include "gc/heap.h"
#include "invariants/verify.h"
#include "invariants/walk.h"

size_t gc_verify_reach_run(const gc_verify_run *run) {
  gc_walk_rules rules = {
      .allowed_colours = (1u << (run->heap->colours.unmarked >> GC_HD_COLOUR_SHIFT)) |
                         (1u << (GC_NOT_MARKABLE >> GC_HD_COLOUR_SHIFT)),
      .expected = "UNMARKED or NOT_MARKABLE once the colours have cycled (INV-COL-1)",
      .foreign = GC_VK_REACH_FOREIGN_POINTER,
      .interior = GC_VK_REACH_INTERIOR_POINTER,
      .zero_header = GC_VK_REACH_ZERO_HEADER,
      .bad_header = GC_VK_REACH_BAD_HEADER,
      .bad_colour = GC_VK_REACH_BAD_COLOUR,
  };
  return gc_walk_run(run, &rules, NULL);
}

size_t gc_verify_reach(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_reach_run(&run);
}
