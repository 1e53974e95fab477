/* The table of report kinds: every violation a verification pass or the fuzz driver can report.
 *
 *   X(ID, PASS, "stable.name", "TAG", POINT, "one-line rule")
 *
 * ID       gives enum gc_verify_kind's GC_VK_<ID> (report.h).
 * PASS     a row of GC_VERIFY_PASS_TABLE (gc/passes.h: REACH, SWEPT, CHECKMARK, MODEL, STATS,
 *          SPACE), or DRIVER:
 *          the fuzz driver's own checks of the API around each op.
 * name     "<pass>.<what>", stable: tests, the verdict line (verdict.h), ci/ scripts and the
 *          READMEs match on it. Never rename one; add a kind instead.
 * TAG      the invariant the kind enforces: an INV-* tag stated once in gc/ where the state it
 *          governs is declared, or one of the API contracts below.
 * POINT    where the check runs: MARK_DONE, CYCLED, SWEPT, COMPACTED (the collector's hook
 *          points, gc.h), or
 *          OP (the driver, while an op runs). A model kind checked at several points names the
 *          first of them in a cycle.
 * rule     what must hold, in one line (`replay --list-kinds` prints the table).
 *
 * The API contracts. The model and the driver check what gc/gc.h promises an embedder rather
 * than the collector's internal state; these tags name those promises, each written out here
 * once (gc.h states them in prose at the functions they concern):
 *   API-LIVE      a block reachable from the roots stays allocated, with the header and every
 *                 field the mutator stored: the collector frees only unreachable blocks, and
 *                 never moves or writes a live one.
 *   API-ROOT      a root slot holds what the mutator stored in it: the collector reads roots and
 *                 never writes them.
 *   API-FREE      a block unreachable when a cycle starts is freed by the end of that cycle's
 *                 sweep, unless a finalizer queues it; after every sweep the heap holds exactly
 *                 the blocks a shadow graph of the mutator's stores says are alive.
 *   API-FINALIZE  a dead custom block's finalize runs exactly once, a live one's never; a queued
 *                 Go-style finalizer runs exactly once, after the cycle that queued it.
 *   API-ERROR     every call returns what its declaration in gc.h promises, and a failing call
 *                 records the matching gc_error (gc_last_error) and changes nothing else.
 *   API-ALLOC     an allocation returns a block start whose header has the size and tag asked
 *                 for, its scanned fields NULL and its raw words zero.
 *   API-NOMEM     an allocation fails (GC_ERR_NOMEM) only when the heap limit, the OS or an
 *                 injected failure (failafter) refuses it, and an injected failure always fails.
 *   API-PROGRESS  every domain reaches its next safepoint: a collection neither waits forever for
 *                 a domain (deadlock) nor makes threads spin without progress (livelock).
 *   API-CALLBACK  a Go-style finalizer runs with the world running, after the collection that
 *                 queued it, never inside a collection and never inside another finalizer
 *                 (gc_run_finalizers called from one runs nothing); its block and all it reaches
 *                 stay alive with their contents while it runs (API-LIVE, checked by the model
 *                 when it returns), whatever it allocates, stores, collects or re-arms.
 *   API-COLLECT   gc_collect(GC_COLLECT_MAJOR or GC_COLLECT_FULL) returns only after a whole
 *                 cycle (a mark and its colour rotation) ran since the call, the one marking
 *                 when it was called finished first.
 *   VERIFY-DETECT the verifier's own contract: each corruption the fuzz driver's corrupt op plants
 *                 is reported by the kind its catalogue names, and nothing is reported once the
 *                 corruption is undone.
 *
 * Adding a kind is adding a row here (then its check in the pass's file and a test that breaks a
 * heap to see it reported); every table reader (names, passes, the markdown table, the verdict
 * line) follows.
 */
#ifndef INVARIANTS_KINDS_H
#define INVARIANTS_KINDS_H

#define GC_VERIFY_KIND_TABLE(X)                                                                  \
  /* reach: a walk from the roots right after the colours cycled. */                             \
  X(REACH_FOREIGN_POINTER, REACH, "reach.foreign-pointer", "INV-POOL-2", CYCLED,                 \
    "a reachable pointer points into a pool a domain owns or at a large block on a list")        \
  X(REACH_INTERIOR_POINTER, REACH, "reach.interior-pointer", "INV-POOL-1", CYCLED,               \
    "a reachable pointer points at a block start (a slot boundary, or a large block's start)")   \
  X(REACH_ZERO_HEADER, REACH, "reach.zero-header", "INV-HD-1", CYCLED,                           \
    "a reachable block's header is not 0 (a zero header is a free slot)")                        \
  X(REACH_BAD_HEADER, REACH, "reach.bad-header", "INV-POOL-1", CYCLED,                           \
    "a reachable block has a valid tag and a size that fits its slot (or is a large size)")      \
  X(REACH_BAD_COLOUR, REACH, "reach.bad-colour", "INV-COL-1", CYCLED,                            \
    "a reachable block is UNMARKED or NOT_MARKABLE once the colours cycled")                     \
  /* swept: a recount when every domain finished sweeping. */                                    \
  X(SWEPT_STAT_MISMATCH, SWEPT, "swept.stat-mismatch", "INV-STATS-1", SWEPT,                     \
    "each running statistic (and the heap limit's used bytes) equals a recount")                 \
  X(SWEPT_UNSWEPT_LEFT, SWEPT, "swept.unswept-left", "INV-POOL-2", SWEPT,                        \
    "every unswept list is empty once sweeping is done")                                         \
  X(SWEPT_BAD_POOL, SWEPT, "swept.bad-pool", "INV-POOL-2", SWEPT,                                \
    "a pool is on exactly one list, owned by its owner, of the list's size class")               \
  X(SWEPT_POOL_COUNT, SWEPT, "swept.pool-count", "INV-POOL-2", SWEPT,                            \
    "mapped pools equal owned pools plus the heap's free pools")                                 \
  X(SWEPT_POOL_SET, SWEPT, "swept.pool-set", "INV-INDEX-1", SWEPT,                               \
    "the collector's pool set holds exactly the owned pools")                                    \
  X(SWEPT_TILING, SWEPT, "swept.tiling", "INV-POOL-3", SWEPT,                                    \
    "header, slots and wastage tile the pool, and every block fits its slot")                    \
  X(SWEPT_BAD_HEADER, SWEPT, "swept.bad-header", "INV-POOL-1", SWEPT,                            \
    "every block in a pool or on a large list has a valid tag and size")                         \
  X(SWEPT_GARBAGE_LEFT, SWEPT, "swept.garbage-left", "INV-COL-1", SWEPT,                         \
    "no block is GARBAGE once sweeping is done")                                                 \
  X(SWEPT_BAD_COLOUR, SWEPT, "swept.bad-colour", "INV-COL-1", SWEPT,                             \
    "no block is MARKED outside marking")                                                        \
  X(SWEPT_FREELIST_FOREIGN, SWEPT, "swept.freelist-foreign", "INV-POOL-1", SWEPT,                \
    "every free-list entry lies inside its own pool")                                            \
  X(SWEPT_FREELIST_MISALIGNED, SWEPT, "swept.freelist-misaligned", "INV-POOL-1", SWEPT,          \
    "every free-list entry is a slot start below the pool's frontier")                           \
  X(SWEPT_FREELIST_LIVE, SWEPT, "swept.freelist-live", "INV-POOL-1", SWEPT,                      \
    "every free-list entry has a zero header")                                                   \
  X(SWEPT_FREELIST_CYCLE, SWEPT, "swept.freelist-cycle", "INV-POOL-1", SWEPT,                    \
    "a free list never comes back to an entry")                                                  \
  X(SWEPT_FREELIST_ORDER, SWEPT, "swept.freelist-order", "INV-POOL-1", SWEPT,                    \
    "a free list ascends in address order")                                                      \
  X(SWEPT_FREELIST_COUNT, SWEPT, "swept.freelist-count", "INV-POOL-1", SWEPT,                    \
    "a free list holds every zero-header slot below the frontier")                               \
  X(SWEPT_FULL_POOL_HAS_FREE_SLOT, SWEPT, "swept.full-pool-has-free-slot", "INV-POOL-2", SWEPT,  \
    "a pool on a full list has neither a free nor an unused slot")                               \
  X(SWEPT_AVAIL_POOL_FULL, SWEPT, "swept.avail-pool-full", "INV-POOL-2", SWEPT,                  \
    "a pool on an avail list has a free-list entry or an unused slot")                           \
  X(SWEPT_BAD_FRONTIER, SWEPT, "swept.bad-frontier", "INV-POOL-1", SWEPT,                        \
    "a pool's frontier is a slot boundary between its first slot and its end")                   \
  X(SWEPT_WORKBUF_LOST, SWEPT, "swept.workbuf-lost", "INV-WB-1", SWEPT,                          \
    "between marks every mark work buffer is on the empty list")                                 \
  /* checkmark: a second, independent mark right after marking. */                               \
  X(CHECKMARK_UNMARKED, CHECKMARK, "checkmark.unmarked", "INV-MARK-1", MARK_DONE,                \
    "every block reachable from the roots is MARKED (or NOT_MARKABLE) when marking ends")        \
  X(CHECKMARK_BAD_POINTER, CHECKMARK, "checkmark.bad-pointer", "INV-POOL-1", MARK_DONE,          \
    "every reachable pointer is the start of a block with a valid header")                       \
  X(CHECKMARK_MARK_UNFINISHED, CHECKMARK, "checkmark.mark-unfinished", "INV-WB-1", MARK_DONE,    \
    "when marking is declared over no marker holds a buffer or prefetched pointer, and every "   \
    "follower waits at the barrier")                                                             \
  X(CHECKMARK_OVER_RETAINED, CHECKMARK, "checkmark.over-retained", "INV-MARK-2", MARK_DONE,      \
    "every MARKED block is reachable from the roots (conservative words by gc.h's rule), and "   \
    "every NOT_MARKABLE block is pinned")                                                        \
  X(CHECKMARK_MARK_COUNT, CHECKMARK, "checkmark.mark-count", "INV-MARKCOUNT-1", MARK_DONE,       \
    "the mark's count of blocks and words marked is the MARKED blocks' count and words")         \
  /* model: the driver's shadow graph against the heap. */                                       \
  X(MODEL_DEAD, MODEL, "model.dead", "API-LIVE", CYCLED,                                         \
    "an object reachable in the model is a live block in the heap (non-zero, not GARBAGE)")      \
  X(MODEL_CONTENTS, MODEL, "model.contents", "API-LIVE", CYCLED,                                 \
    "a reachable object's header and fields are what the model stored")                          \
  X(MODEL_NOT_FREED, MODEL, "model.not-freed", "API-FREE", SWEPT,                                \
    "an object unreachable when a cycle started is freed when its sweep ends")                   \
  X(MODEL_FINALIZER_COUNT, MODEL, "model.finalizer-count", "API-FINALIZE", SWEPT,                \
    "finalizers run exactly once per freed (or queued) block, never for a live one")             \
  X(MODEL_LIVE_COUNT, MODEL, "model.live-count", "API-FREE", SWEPT,                              \
    "the heap's live blocks equal the model's objects when a sweep ends")                        \
  X(MODEL_ROOT, MODEL, "model.root", "API-ROOT", CYCLED,                                         \
    "every root slot holds what the model stored there")                                         \
  /* perf: the collector's work counters against bounds from the heap's shape. */                \
  X(PERF_UNPACED_CYCLE, PERF, "perf.unpaced-cycle", "INV-PACE-1", MARK_DONE,                     \
    "a paced cycle starts only with pacing on and the trigger's words reported since the last")  \
  X(PERF_NEEDLESS_OVERFLOW, PERF, "perf.needless-overflow", "INV-OVERFLOW-1", MARK_DONE,         \
    "the mark stack overflows only in a mark of more scanned blocks than its buffers hold")      \
  X(PERF_MARK_WORK, PERF, "perf.mark-work", "INV-MARKWORK-1", MARK_DONE,                         \
    "marking scans each marked block once plus once per re-darkening pass, and re-darkens "      \
    "only flagged pools")                                                                        \
  X(PERF_LONE_HANDOFF, PERF, "perf.lone-handoff", "INV-HANDOFF-1", MARK_DONE,                    \
    "a mark with one marker splits no work buffer")                                              \
  X(PERF_RECHECK_LIMIT, PERF, "perf.recheck-limit", "INV-RECHECK-1", MARK_DONE,                  \
    "an incremental mark resumes after at most `rechecks` termination stops")                    \
  X(PERF_MARKERS, PERF, "perf.markers", "INV-MARKERS-1", MARK_DONE,                              \
    "an incremental mark's markers are its starting domains, the shade marker and every domain " \
    "made while it marked")                                                                      \
  X(PERF_OVERFLOW_COUNT, PERF, "perf.overflow-count", "INV-OVERFLOWCOUNT-1", MARK_DONE,          \
    "a mark counts an overflow pass iff a push of it was refused, at most one per refused push") \
  X(PERF_HANDOFF_COUNT, PERF, "perf.handoff-count", "INV-HANDOFFCOUNT-1", MARK_DONE,             \
    "the handoffs a mark counts are the splits its giving markers saw")                          \
  X(PERF_SLICE_COUNT, PERF, "perf.slice-count", "INV-SLICECOUNT-1", MARK_DONE,                   \
    "the slices a mark counts are the mark-slice hook calls between its two stops")              \
  X(PERF_SWEEP_WORK, PERF, "perf.sweep-work", "INV-SWEEPWORK-1", SWEPT,                          \
    "a sweep examines only the slots below the frontiers and the large blocks it began with")    \
  /* stats: the public statistics when every domain finished sweeping. */                        \
  X(STATS_SUM, STATS, "stats.sum", "INV-STATS-2", SWEPT,                                         \
    "each summed figure equals the sum over the domains and the orphans, and their lists")       \
  X(STATS_RECOUNT, STATS, "stats.recount", "INV-STATS-2", SWEPT,                                 \
    "each heap-wide figure equals a recount of the free list, mapped pools and records")         \
  X(STATS_BALANCE, STATS, "stats.balance", "INV-STATS-2", SWEPT,                                 \
    "blocks and words allocated minus those freed equal the blocks and words alive")             \
  X(STATS_COUNTER, STATS, "stats.counter", "INV-STATS-2", SWEPT,                                 \
    "a counter never decreases; cycles grows by exactly one from one sweep end to the next")     \
  X(STATS_MAXIMUM, STATS, "stats.maximum", "INV-STATS-2", SWEPT,                                 \
    "a maximum never decreases and is not below its figure, any domain's or any pause's")        \
  X(STATS_PAUSES, STATS, "stats.pauses", "INV-STATS-2", SWEPT,                                   \
    "the pause history holds one pause per cycle, its newest one is last_pause_ns")              \
  /* space: what is mapped against what is live, once sweeping is done. */                       \
  X(SPACE_EMPTY_POOL, SPACE, "space.empty-pool", "INV-SPACE-1", SWEPT,                           \
    "every pool a domain or the orphans own holds a block once its sweep is done")               \
  X(SPACE_FRONTIER_SLACK, SPACE, "space.frontier-slack", "INV-SPACE-1", SWEPT,                   \
    "a swept pool's frontier sits right above its last block: no free slot is left below it")    \
  X(SPACE_FREE_POOLS, SPACE, "space.free-pools", "INV-SPACE-2", SWEPT,                           \
    "a full collection ends with no free pool mapped: mapped pools are the owned ones")          \
  X(SPACE_ORPHAN_PASSED_OVER, SPACE, "space.orphan-passed-over", "INV-SPACE-3", SWEPT,           \
    "no fresh pool of a class is taken while an orphan pool of it waits for adoption")           \
  /* satb: marking against the heap as it was when marking began (snapshot.h). */                \
  X(SATB_UNMARKED, SATB, "satb.unmarked", "INV-BARRIER-1", MARK_DONE,                            \
    "every block reachable when marking began is MARKED (or NOT_MARKABLE) when it ends")         \
  X(SATB_BORN_WHITE, SATB, "satb.born-white", "INV-BARRIER-1", MARK_DONE,                        \
    "every block allocated while marking is MARKED (or NOT_MARKABLE): born black")               \
  /* ephe: ephemerons and weak references against their rules (gc.h). */                         \
  X(EPHE_DATUM_UNMARKED, EPHE, "ephe.datum-unmarked", "INV-EPHE-1", MARK_DONE,                   \
    "when marking ends every live ephemeron whose key is alive has its datum MARKED")            \
  X(EPHE_UNCLEANED, EPHE, "ephe.uncleaned", "INV-EPHE-2", MARK_DONE,                             \
    "after the clean phase no weak slot and no ephemeron names an UNMARKED block")               \
  X(EPHE_DANGLING, EPHE, "ephe.dangling", "INV-EPHE-2", SWEPT,                                   \
    "a live ephemeron's or weak reference's slots name live blocks only, never a freed slot")    \
  X(EPHE_UNLISTED, EPHE, "ephe.unlisted", "INV-EPHE-3", SWEPT,                                   \
    "every live ephemeron and weak reference is on exactly one list of live entries")            \
  /* moved: a compaction against what it had to keep (its stop, GC_HOOK_COMPACTED). */           \
  X(MOVED_STALE_REFERENCE, MOVED, "moved.stale-reference", "INV-COMPACT-1", COMPACTED,           \
    "no root, finalizer record, list head, weak slot or field names a forwarding header or a "   \
    "block of a pool the compaction gave back")                                                  \
  X(MOVED_FORWARDING_LEFT, MOVED, "moved.forwarding-left", "INV-COMPACT-1", COMPACTED,           \
    "no pool an owner holds after a compaction has a forwarding header in a slot")               \
  X(MOVED_PINNED_MOVED, MOVED, "moved.pinned-moved", "INV-COMPACT-2", COMPACTED,                 \
    "a pinned block, a block a conservative word names and a running finalizer's block stay "    \
    "where they were, with their header")                                                        \
  X(MOVED_NOT_COMPACTED, MOVED, "moved.not-compacted", "INV-COMPACT-3", COMPACTED,               \
    "after a compaction each owner's class has at most max(K, ceil(L / S)) pools: K holding a "  \
    "block that must stay, L live blocks, S slots a pool")                                       \
  /* driver: the fuzz driver's checks of the API around each op. */                              \
  X(DRIVER_API_ERROR, DRIVER, "driver.api-error", "API-ERROR", OP,                               \
    "a call returns the result and records the error its contract gives for the op")             \
  X(DRIVER_BAD_BLOCK, DRIVER, "driver.bad-block", "API-ALLOC", OP,                               \
    "a new block is a block start with the asked size and tag and zeroed fields")                \
  X(DRIVER_UNEXPECTED_FAILURE, DRIVER, "driver.unexpected-failure", "API-NOMEM", OP,             \
    "an allocation fails only under a heap limit or an injected failure")                        \
  X(DRIVER_INJECTED_FAILURE_MISSED, DRIVER, "driver.injected-failure-missed", "API-NOMEM", OP,   \
    "the allocation an injected failure is due at fails")                                        \
  X(DRIVER_CORRUPTION_MISSED, DRIVER, "driver.corruption-missed", "VERIFY-DETECT", OP,           \
    "a planted corruption is reported by the kind its catalogue names")                          \
  X(DRIVER_CORRUPTION_UNREPAIRED, DRIVER, "driver.corruption-unrepaired", "VERIFY-DETECT", OP,   \
    "once a planted corruption is undone its pass reports nothing")                              \
  X(DRIVER_DEADLOCK, DRIVER, "driver.deadlock", "API-PROGRESS", OP,                              \
    "some thread can always run: the collector never leaves every thread waiting")               \
  X(DRIVER_LIVELOCK, DRIVER, "driver.livelock", "API-PROGRESS", OP,                              \
    "threads make progress: the collector never spins without end")                              \
  X(DRIVER_FINALIZER_CONTEXT, DRIVER, "driver.finalizer-context", "API-CALLBACK", OP,            \
    "a finalizer runs outside any collection and any other finalizer; gc_run_finalizers from "   \
    "one runs nothing")                                                                          \
  X(DRIVER_NO_CYCLE, DRIVER, "driver.no-cycle", "API-COLLECT", OP,                               \
    "gc_collect major or full returns only after a whole cycle ran since the call")

#endif /* INVARIANTS_KINDS_H */
