/* The heap's verification passes: one row per bit of gc_config.verify.
 *
 * The collector runs no pass itself: it calls the heap's hook at the points of every cycle
 * (gc.h: GC_HOOK_MARK_START, GC_HOOK_MARK_SLICE with incremental marking, GC_HOOK_MARK_DONE,
 * GC_HOOK_CYCLED, GC_HOOK_SWEPT; and a compaction's GC_HOOK_COMPACT_START and
 * GC_HOOK_COMPACTED), and invariants/ runs there the passes
 * the mask selects. This table is the one list of those passes: gc.h derives the mask bits from
 * it, the `verify=` parameter (params.c) accepts its names, and invariants/ (kinds.h, report.h)
 * names each report's pass with it, and the verifier (invariants/verify.c) runs each pass where
 * its row says. Adding a pass is adding a row here, its file in invariants/, its kinds in
 * invariants/kinds.h and its tests.
 *
 *   X(ID, "name", POINTS, RUN, NEEDS, "what it checks")
 *
 * ID      gives GC_VERIFY_<ID> (the mask bit, gc.h).
 * "name"  the stable name used by `verify=`, by report kinds ("reach.zero-header") and by the
 *         machine-readable verdict line.
 * POINTS  the hook points where it runs: GC_HOOK_BIT()s of gc.h's gc_hook_point.
 * RUN     the function of invariants/ that runs it, size_t RUN(const gc_verify_run *run)
 *         (invariants/pass.h declares one per row). The collector never expands this column,
 *         nor NEEDS: they name what only invariants/ defines.
 * NEEDS   what the verifier provides before running it (invariants/pass.h): GC_VERIFY_NEEDS_INDEX
 *         (the heap index, built once per hook point), GC_VERIFY_NEEDS_MODEL (a model attached:
 *         without one the pass does not run; its checks belong to hook points, so it is never
 *         called directly), GC_VERIFY_NEEDS_SNAPSHOT (the heap as it was when marking began,
 *         recorded at GC_HOOK_MARK_START: invariants/snapshot.h).
 * A pass whose POINTS include GC_HOOK_MARK_SLICE runs with the world running, on the thread of
 * the domain whose slice ended: it may read that domain's state only, and nothing heavy (no
 * heap index is built there).
 */
#ifndef GC_PASSES_H
#define GC_PASSES_H

#define GC_VERIFY_PASS_TABLE(X)                                                                    \
  X(REACH, "reach", GC_HOOK_BIT(GC_HOOK_CYCLED) | GC_HOOK_BIT(GC_HOOK_COMPACTED),                  \
    gc_verify_reach_run, GC_VERIFY_NEEDS_INDEX,                                                    \
    "walks from the roots: every reachable pointer is a live block start with a valid header "     \
    "and a post-rotation colour")                                                                  \
  X(SWEPT, "swept", GC_HOOK_BIT(GC_HOOK_SWEPT) | GC_HOOK_BIT(GC_HOOK_COMPACTED),                   \
    gc_verify_swept_run, 0,                                                                        \
    "recounts every pool, free list and large block against the statistics and lists")             \
  X(CHECKMARK, "checkmark", GC_HOOK_BIT(GC_HOOK_MARK_DONE), gc_verify_checkmark_run,               \
    GC_VERIFY_NEEDS_INDEX | GC_VERIFY_NEEDS_SNAPSHOT,                                              \
    "marks again from the roots with its own mark set: every reachable block is MARKED")           \
  X(MODEL, "model",                                                                                \
    GC_HOOK_BIT(GC_HOOK_MARK_START) | GC_HOOK_BIT(GC_HOOK_MARK_DONE) |                             \
        GC_HOOK_BIT(GC_HOOK_CYCLED) | GC_HOOK_BIT(GC_HOOK_SWEPT) |                                 \
        GC_HOOK_BIT(GC_HOOK_COMPACT_START) | GC_HOOK_BIT(GC_HOOK_COMPACTED),                       \
    gc_verify_model_run, GC_VERIFY_NEEDS_INDEX | GC_VERIFY_NEEDS_MODEL,                            \
    "compares the heap with the driver's shadow graph: live blocks intact, dead ones freed")       \
  X(PERF, "perf", GC_HOOK_BIT(GC_HOOK_MARK_DONE) | GC_HOOK_BIT(GC_HOOK_SWEPT), gc_verify_perf_run, \
    0,                                                                                             \
    "holds the collector's own work counters to bounds: cycles started, mark-stack overflows, "    \
    "fields scanned, pools re-darkened and swept, handoffs")                                       \
  X(STATS, "stats", GC_HOOK_BIT(GC_HOOK_SWEPT) | GC_HOOK_BIT(GC_HOOK_COMPACTED),                   \
    gc_verify_stats_run, 0,                                                                        \
    "holds every public statistic against a recount or its definition, and against the last "      \
    "sweep end's")                                                                                 \
  X(SPACE, "space", GC_HOOK_BIT(GC_HOOK_SWEPT) | GC_HOOK_BIT(GC_HOOK_COMPACTED),                   \
    gc_verify_space_run, 0,                                                                        \
    "bounds the pools mapped by the blocks live: no empty pool kept, none left free after a "      \
    "full collection")                                                                             \
  X(SATB, "satb",                                                                                  \
    GC_HOOK_BIT(GC_HOOK_MARK_START) | GC_HOOK_BIT(GC_HOOK_MARK_SLICE) |                            \
        GC_HOOK_BIT(GC_HOOK_MARK_DONE),                                                            \
    gc_verify_satb_run, GC_VERIFY_NEEDS_INDEX | GC_VERIFY_NEEDS_SNAPSHOT,                          \
    "holds marking to its snapshot: every block reachable when it began, and every block "         \
    "allocated since, is MARKED when it ends")                                                     \
  X(EPHE, "ephe",                                                                                  \
    GC_HOOK_BIT(GC_HOOK_MARK_DONE) | GC_HOOK_BIT(GC_HOOK_SWEPT) | GC_HOOK_BIT(GC_HOOK_COMPACTED),  \
    gc_verify_ephe_run, GC_VERIFY_NEEDS_INDEX,                                                     \
    "holds ephemerons and weak references to their rules: data kept through live keys, slots "     \
    "of dead blocks cleared before the sweep, every one on exactly one list")                      \
  X(MOVED, "moved", GC_HOOK_BIT(GC_HOOK_COMPACT_START) | GC_HOOK_BIT(GC_HOOK_COMPACTED),           \
    gc_verify_moved_run, GC_VERIFY_NEEDS_INDEX,                                                    \
    "holds a compaction to what it had to keep: no reference left to a moved block's old slot "    \
    "or a pool given back, pinned and conservatively named blocks in place, each class compacted")

#endif /* GC_PASSES_H */
