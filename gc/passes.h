/* The heap's verification passes: one row per bit of gc_config.verify.
 *
 * The collector runs no pass itself: it calls the heap's hook at three points of every cycle
 * (gc.h: GC_HOOK_MARK_DONE, GC_HOOK_CYCLED, GC_HOOK_SWEPT), and invariants/ runs there the passes
 * the mask selects. This table is the one list of those passes: gc.h derives the mask bits from
 * it, the `verify=` parameter (params.c) accepts its names, and invariants/ (kinds.h, report.h)
 * names each report's pass with it. Adding a pass is adding a row here, its file in invariants/,
 * its kinds in invariants/kinds.h and its tests.
 *
 *   X(ID, "name", "hook points", "what it checks")
 *
 * ID gives GC_VERIFY_<ID> (the mask bit, gc.h); "name" is the stable name used by `verify=`,
 * by report kinds ("reach.zero-header") and by the machine-readable verdict line; the hook
 * points are those of gc.h, by the names reports give them, in the order a cycle reaches them.
 */
#ifndef GC_PASSES_H
#define GC_PASSES_H

#define GC_VERIFY_PASS_TABLE(X)                                                                \
  X(REACH, "reach", "cycled",                                                                  \
    "walks from the roots: every reachable pointer is a live block start with a valid header " \
    "and a post-rotation colour")                                                              \
  X(SWEPT, "swept", "swept",                                                                   \
    "recounts every pool, free list and large block against the statistics and lists")         \
  X(CHECKMARK, "checkmark", "mark-done",                                                       \
    "marks again from the roots with its own mark set: every reachable block is MARKED")       \
  X(MODEL, "model", "mark-done, cycled, swept",                                                \
    "compares the heap with the driver's shadow graph: live blocks intact, dead ones freed")

#endif /* GC_PASSES_H */
