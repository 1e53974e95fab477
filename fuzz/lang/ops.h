/* The op language of the fuzz targets: the one table of ops.
 *
 * An input is a program. One byte picks the op (modulo FUZZ_OP_COUNT), the next bytes are its
 * operands, each bounded by modulo, so every byte string is a valid program; an input that ends
 * inside an op reads the missing operand bytes as 0. An op that cannot apply (a store into an
 * empty slot, a field past the end of the block, popping with no frame pushed) is a no-op.
 *
 * The text form (fuzz/lang/text.h) prints one op a line, e.g.
 *
 *   alloc s3 scan 4          # s3 = a new scanned block of 4 fields
 *   store s3.1 s5            # field 1 of s3 = the value in s5
 *   collect major
 *
 * The mutator state the ops act on (fuzz/driver/driver.h): FUZZ_SLOTS slots s0..s15, always rooted
 * (a local root frame the driver pushes first); a stack of up to FUZZ_FRAMES local root frames,
 * each a snapshot of the slots taken by `push`; FUZZ_GLOBALS global root cells g0..g7. So the
 * driver (and the model oracle) knows exactly which blocks are reachable.
 *
 * Adding an op: append one X(...) line to FUZZ_OPS (never insert, so existing codes keep their
 * meaning for as long as possible), give it a case in the driver (fuzz/driver/) and a seed in
 * corpus/graph/ (corpus_test fails until one uses it). Byte inputs are re-decoded when the op
 * count changes; the text corpus is the stable form.
 *
 * Domains in one thread. The graph target runs every domain on the fuzzer's one thread: the
 * program runs on one domain at a time (`on dN` switches), and every other domain waits in a
 * blocking section, as a thread parked in a system call would, so a collection started by the
 * running domain stops the others without waiting for them and scans their frames. `block` puts
 * the running domain itself in a blocking section: until `unblock` (or `on` another domain) the
 * program has no running domain, and every op but `on` and `unblock` is skipped, since a thread
 * in a blocking section must not touch the heap. The schedule target runs the same ops
 * with each domain on its own thread.
 */
#ifndef FUZZ_OPS_H
#define FUZZ_OPS_H

#include <stddef.h>
#include <stdint.h>

enum {
  FUZZ_SLOTS = 16,      /* s0..s15, always rooted */
  FUZZ_GLOBALS = 8,     /* g0..g7 global root cells */
  FUZZ_FRAMES = 8,      /* local root frames `push` may stack on top of the slots' frame */
  FUZZ_FIELDS = 64,     /* field operands 0..63; past the block's end the op is a no-op */
  FUZZ_SMALL_MAX = 127, /* the largest pool block: whsize 128 (GC_SIZECLASS_MAX_WHSIZE) */
  FUZZ_LARGE_MIN = 128,
  FUZZ_LARGE_SPAN = 1024, /* large blocks: 128..1151 fields */
  FUZZ_FAIL_MAX = 64,     /* fail N: the N-th allocation from now fails; 0: off */
  FUZZ_DOMAINS = 4,       /* d0 (the heap's main domain) .. d3 */
  FUZZ_RANGES = 4,        /* conservative ranges r0..r3, registered for the whole program */
  FUZZ_RANGE_WORDS = 8,   /* words 0..7 of each */
  /* OFFSET operand byte v: v < FUZZ_OFFSET_END_BYTE is the byte offset v - 8 from the block's
   * first field (so -8 is its header); from there on, end + (v - FUZZ_OFFSET_END_ZERO), from one
   * past its last field. */
  FUZZ_OFFSET_START_MIN = -8,
  FUZZ_OFFSET_END_BYTE = 200,
  FUZZ_OFFSET_END_ZERO = 228,
  /* Finalizer bodies (fin_do): a body is the next 0..FUZZ_BODY_MAX ops; a fin_do inside a body
   * may open a body of its own, FUZZ_BODY_DEPTH levels deep at most (a fin_do at that depth has
   * no body). So a finalizer runs at most FUZZ_BODY_MAX ops, bodies within it included. */
  FUZZ_BODY_MAX = 8,
  FUZZ_BODY_DEPTH = 2,
  FUZZ_TUNABLE_COUNT = 12, /* tune p0..p11: a backend's parameters (fuzz/backend/backend.h) */
  /* params N: rows of the parameter-string catalogue (fuzz/driver/params_op.c, which asserts
   * that its table has this many; the PARAMS operand says it too). Append only, like the ops. */
  FUZZ_PARAMS_ROWS = 49,
};

/* ---- Operand kinds ------------------------------------------------------------------------ */

/* How an operand is encoded (bytes), decoded (modulo) and written in text. */
#define FUZZ_OPERAND_KINDS(X)                                                               \
  X(NONE, 0, "")                                                                            \
  X(SLOT, 1, "a slot s0..s15")                                                              \
  X(FIELD, 2, "a field sN.F (slot s0..s15, field 0..63)")                                   \
  X(GLOBAL, 1, "a global root cell g0..g7")                                                 \
  X(KIND, 1, "a block kind: scan, raw or custom")                                           \
  X(SMALL, 1, "a small size 1..127 (fields)")                                               \
  X(LARGE, 2, "a large size 128..1151 (fields)")                                            \
  X(INT, 1, "an integer 0..255")                                                            \
  X(COLLECT, 1, "a collection: slice, major, full or start")                                \
  X(PARAM, 2,                                                                               \
    "a parameter (percent, mintrigger, sweep, markstack, batch, keep, marking, markslice, " \
    "compact, rechecks, markbuf, slicecap, zeal) and a value")                              \
  X(FAIL, 1, "an allocation count 1..64, or off")                                           \
  X(LIMIT, 1, "a heap limit: off or 32k, 64k, 96k, 128k, 256k, 512k, 1m, 4m")               \
  X(MISUSE, 1,                                                                              \
    "a misuse: alloc0, too-large, bad-tag, custom-tag, pin-null, pin-int, "                 \
    "unpin-int, scanner-remove, register-null, bad-param, unknown-param, weak-get-int, "    \
    "ephe-key-int, weak-too-large, in-collection, ephe-get-scan, ephe-set-scan, "           \
    "weak-get-scan, weak-set-scan, fin-set-int, custom-too-large, range-remove, "           \
    "scanner-user, range-short")                                                            \
  X(DOMAIN, 1, "a domain d0..d3")                                                           \
  X(OPTSLOT, 1, "a slot s0..s15, or - for none")                                            \
  X(RWORD, 1, "a conservative range word rN.I (range r0..r3, word 0..7)")                   \
  X(OFFSET, 1,                                                                              \
    "a byte offset: +N or -N from the block's first field (-8..+191; -8 is the "            \
    "header), or end, end+N, end-N from one past its last field (-28..+27)")                \
  X(WORD, 8, "a 64-bit word in hex, 0x0..0xffffffffffffffff (no leading zeros)")            \
  X(BODY, 1, "a body length 0..8: the next N ops are the body")                             \
  X(TUNABLE, 1, "a backend's tunable p0..p11 (replay --list-tunables --backend NAME)")      \
  X(CORRUPTION, 1,                                                                          \
    "a corruption: the verification kind it plants, e.g. reach.zero-header, or "            \
    "kind/variant (FUZZ_CORRUPTIONS in fuzz/lang/ops.h lists them)")                        \
  X(PARAMS, 1, "a row 0..48 of the parameter-string catalogue (fuzz/driver/params_op.c)")

typedef enum fuzz_operand_kind {
#define FUZZ_OPND_ENUM(name, bytes, what) FUZZ_OPND_##name,
  FUZZ_OPERAND_KINDS(FUZZ_OPND_ENUM)
#undef FUZZ_OPND_ENUM
      FUZZ_OPND_KIND_COUNT
} fuzz_operand_kind;

/* KIND values. */
typedef enum fuzz_block_kind {
  FUZZ_KIND_SCAN,
  FUZZ_KIND_RAW,
  FUZZ_KIND_CUSTOM,
  FUZZ_KIND_COUNT
} fuzz_block_kind;
/* COLLECT values: the same order as gc_collect_kind (start: GC_COLLECT_START). */
enum { FUZZ_COLLECT_COUNT = 4 };
/* PARAM names; each has a table of values (fuzz/lang/program.c) chosen to reach edge cases. */
typedef enum fuzz_param {
  FUZZ_PARAM_PERCENT,
  FUZZ_PARAM_MINTRIGGER,
  FUZZ_PARAM_SWEEP,
  FUZZ_PARAM_MARKSTACK,
  FUZZ_PARAM_BATCH,
  FUZZ_PARAM_KEEP,
  FUZZ_PARAM_MARKING,   /* stw or incremental: the heap's marking mode from here on */
  FUZZ_PARAM_MARKSLICE, /* the incremental mark slice's least budget, in words */
  FUZZ_PARAM_COMPACT,   /* off, or the free share above which `collect full` compacts */
  FUZZ_PARAM_RECHECKS,  /* the recheck limit of incremental termination (0: none) */
  FUZZ_PARAM_MARKBUF,   /* entries a mark work buffer holds (1: every push but one takes one) */
  FUZZ_PARAM_SLICECAP,  /* a slice's budget cap, in markslices */
  FUZZ_PARAM_ZEAL,      /* zeal modes (gc.h): a rare path of the collector made the common one */
  FUZZ_PARAM_COUNT
} fuzz_param;
/* MISUSE values: calls the API must refuse with a documented error, changing nothing. */
typedef enum fuzz_misuse {
  FUZZ_MISUSE_ALLOC0,         /* gc_alloc of 0 fields: zero-size */
  FUZZ_MISUSE_TOO_LARGE,      /* gc_alloc of GC_MAX_WSIZE + 1 fields: too-large */
  FUZZ_MISUSE_BAD_TAG,        /* gc_alloc with tag 251: bad-tag */
  FUZZ_MISUSE_CUSTOM_TAG,     /* gc_alloc with the custom tag: bad-tag */
  FUZZ_MISUSE_PIN_NULL,       /* gc_pin(NULL): not-block */
  FUZZ_MISUSE_PIN_INT,        /* gc_pin(an immediate): not-block */
  FUZZ_MISUSE_UNPIN_INT,      /* gc_unpin(an immediate): not-block */
  FUZZ_MISUSE_SCANNER_REMOVE, /* removing a scanner never added: unknown-root */
  FUZZ_MISUSE_REGISTER_NULL,  /* gc_root_register(NULL): unknown-root */
  FUZZ_MISUSE_BAD_PARAM,      /* gc_set_params("markstack=3"): param, nothing changed */
  FUZZ_MISUSE_UNKNOWN_PARAM,  /* gc_set_params("bogus=1"): param, nothing changed */
  FUZZ_MISUSE_WEAK_GET_INT,   /* gc_weak_get(an immediate): not-block */
  FUZZ_MISUSE_EPHE_KEY_INT,   /* gc_ephemeron_key(an immediate): not-block */
  FUZZ_MISUSE_WEAK_TOO_LARGE, /* gc_weak_alloc of GC_MAX_WSIZE data words: too-large */
  /* Armed now, run at the hook points of the next collection (one thread; a no-op on threads):
   * gc_compact from a hook is refused (in-collection), gc_collect of every kind collects
   * nothing, gc_run_finalizers runs none. */
  FUZZ_MISUSE_IN_COLLECTION,
  /* The ephemeron and weak API on a scanned block (the mutator's first slot holding one of 3 or
   * more fields; none: nothing happens): bad-tag, reads return 0, writes change no field. */
  FUZZ_MISUSE_EPHE_GET_SCAN,    /* gc_ephemeron_key and gc_ephemeron_datum */
  FUZZ_MISUSE_EPHE_SET_SCAN,    /* gc_ephemeron_set_key and gc_ephemeron_set_datum */
  FUZZ_MISUSE_WEAK_GET_SCAN,    /* gc_weak_get */
  FUZZ_MISUSE_WEAK_SET_SCAN,    /* gc_weak_set */
  FUZZ_MISUSE_FIN_SET_INT,      /* gc_finalizer_set(an immediate): not-block */
  FUZZ_MISUSE_CUSTOM_TOO_LARGE, /* gc_alloc_custom of GC_MAX_WSIZE data words: too-large */
  FUZZ_MISUSE_RANGE_REMOVE,     /* gc_conservative_remove of a range never added: unknown-range */
  /* A scanner added, removed with another user (unknown-root, still added), removed. */
  FUZZ_MISUSE_SCANNER_USER,
  /* Not refused: a conservative range holding no whole aligned word is added (gc.h reads only
   * whole words in it), removed, and a second removal is unknown-range. */
  FUZZ_MISUSE_RANGE_SHORT,
  FUZZ_MISUSE_COUNT
} fuzz_misuse;
/* CORRUPTION values (the corrupt op, fuzz/driver/corrupt_op.h): each plants one violation that one
 * verification pass must report, then repairs it. The name is the kind (report.h) it must produce,
 * or kind/variant when several corruptions produce one kind. Append only, like the ops: the operand
 * byte is the index modulo the count. What each one writes: invariants/corrupt.c. */
#define FUZZ_CORRUPTIONS(X)                                                 \
  X(REACH_FOREIGN_POINTER, "reach.foreign-pointer")                         \
  X(REACH_FOREIGN_FREE_POOL, "reach.foreign-pointer/free-pool")             \
  X(REACH_INTERIOR_POINTER, "reach.interior-pointer")                       \
  X(REACH_INTERIOR_POOL_START, "reach.interior-pointer/pool-start")         \
  X(REACH_INTERIOR_UNUSED_SLOT, "reach.interior-pointer/unused-slot")       \
  X(REACH_INTERIOR_WASTAGE, "reach.interior-pointer/wastage")               \
  X(REACH_ZERO_HEADER, "reach.zero-header")                                 \
  X(REACH_BAD_HEADER, "reach.bad-header")                                   \
  X(REACH_BAD_HEADER_OVERSIZED, "reach.bad-header/oversized")               \
  X(REACH_BAD_COLOUR, "reach.bad-colour")                                   \
  X(REACH_BAD_COLOUR_MARKED, "reach.bad-colour/marked")                     \
  X(SWEPT_STAT_MISMATCH, "swept.stat-mismatch")                             \
  X(SWEPT_UNSWEPT_LEFT, "swept.unswept-left")                               \
  X(SWEPT_UNSWEPT_SWEEPING, "swept.unswept-left/sweeping")                  \
  X(SWEPT_BAD_POOL, "swept.bad-pool")                                       \
  X(SWEPT_BAD_POOL_TWO_LISTS, "swept.bad-pool/two-lists")                   \
  X(SWEPT_POOL_COUNT, "swept.pool-count")                                   \
  X(SWEPT_POOL_SET, "swept.pool-set")                                       \
  X(SWEPT_TILING, "swept.tiling")                                           \
  X(SWEPT_BAD_HEADER, "swept.bad-header")                                   \
  X(SWEPT_GARBAGE_LEFT, "swept.garbage-left")                               \
  X(SWEPT_BAD_COLOUR, "swept.bad-colour")                                   \
  X(SWEPT_FREELIST_FOREIGN, "swept.freelist-foreign")                       \
  X(SWEPT_FREELIST_MISALIGNED, "swept.freelist-misaligned")                 \
  X(SWEPT_FREELIST_LIVE, "swept.freelist-live")                             \
  X(SWEPT_FREELIST_CYCLE, "swept.freelist-cycle")                           \
  X(SWEPT_FREELIST_ORDER, "swept.freelist-order")                           \
  X(SWEPT_FREELIST_COUNT, "swept.freelist-count")                           \
  X(SWEPT_FULL_POOL_HAS_FREE_SLOT, "swept.full-pool-has-free-slot")         \
  X(SWEPT_AVAIL_POOL_FULL, "swept.avail-pool-full")                         \
  X(SWEPT_BAD_FRONTIER, "swept.bad-frontier")                               \
  X(SWEPT_WORKBUF_LOST, "swept.workbuf-lost")                               \
  X(CHECKMARK_UNMARKED, "checkmark.unmarked")                               \
  X(CHECKMARK_BAD_POINTER, "checkmark.bad-pointer")                         \
  X(MODEL_DEAD, "model.dead")                                               \
  X(MODEL_DEAD_FREE, "model.dead/free")                                     \
  X(MODEL_DEAD_REUSED, "model.dead/reused")                                 \
  X(MODEL_CONTENTS, "model.contents")                                       \
  X(MODEL_CONTENTS_HEADER, "model.contents/header")                         \
  X(MODEL_NOT_FREED, "model.not-freed")                                     \
  X(MODEL_FINALIZER_COUNT, "model.finalizer-count")                         \
  X(MODEL_FINALIZER_UNKNOWN, "model.finalizer-count/unknown-block")         \
  X(MODEL_FINALIZER_UNQUEUED, "model.finalizer-count/unqueued")             \
  X(MODEL_LIVE_COUNT, "model.live-count")                                   \
  X(MODEL_ROOT, "model.root")                                               \
  X(CHECKMARK_MARK_UNFINISHED, "checkmark.mark-unfinished")                 \
  X(CHECKMARK_MARK_UNFINISHED_BARRIER, "checkmark.mark-unfinished/barrier") \
  X(PERF_UNPACED_CYCLE, "perf.unpaced-cycle")                               \
  X(PERF_UNPACED_CYCLE_OFF, "perf.unpaced-cycle/off")                       \
  X(PERF_NEEDLESS_OVERFLOW, "perf.needless-overflow")                       \
  X(PERF_MARK_WORK, "perf.mark-work")                                       \
  X(PERF_MARK_WORK_REDARKEN, "perf.mark-work/redarken")                     \
  X(PERF_LONE_HANDOFF, "perf.lone-handoff")                                 \
  X(PERF_SWEEP_WORK, "perf.sweep-work")                                     \
  X(PERF_SWEEP_WORK_LARGE, "perf.sweep-work/large")                         \
  X(STATS_SUM, "stats.sum")                                                 \
  X(STATS_SUM_LARGE_WORDS, "stats.sum/large-words")                         \
  X(STATS_RECOUNT, "stats.recount")                                         \
  X(STATS_SUM_MAPPED, "stats.sum/mapped")                                   \
  X(STATS_BALANCE, "stats.balance")                                         \
  X(STATS_COUNTER, "stats.counter")                                         \
  X(STATS_MAXIMUM, "stats.maximum")                                         \
  X(STATS_PAUSES, "stats.pauses")                                           \
  X(SPACE_EMPTY_POOL, "space.empty-pool")                                   \
  X(SPACE_FRONTIER_SLACK, "space.frontier-slack")                           \
  X(SPACE_FREE_POOLS, "space.free-pools")                                   \
  X(SPACE_FREE_POOLS_MAPPED, "space.free-pools/mapped")                     \
  X(SPACE_ORPHAN_PASSED_OVER, "space.orphan-passed-over")                   \
  X(CHECKMARK_OVER_RETAINED, "checkmark.over-retained")                     \
  X(CHECKMARK_OVER_RETAINED_FREE_SLOT, "checkmark.over-retained/free-slot") \
  X(CHECKMARK_OVER_RETAINED_UNPINNED, "checkmark.over-retained/unpinned")   \
  X(SATB_UNMARKED, "satb.unmarked")                                         \
  X(SATB_BORN_WHITE, "satb.born-white")                                     \
  X(EPHE_DATUM_UNMARKED, "ephe.datum-unmarked")                             \
  X(EPHE_UNCLEANED, "ephe.uncleaned")                                       \
  X(EPHE_DANGLING, "ephe.dangling")                                         \
  X(EPHE_UNLISTED, "ephe.unlisted")                                         \
  X(MOVED_STALE_REFERENCE, "moved.stale-reference")                         \
  X(MOVED_FORWARDING_LEFT, "moved.forwarding-left")                         \
  X(MOVED_PINNED_MOVED, "moved.pinned-moved")                               \
  X(MOVED_NOT_COMPACTED, "moved.not-compacted")                             \
  X(PERF_RECHECK_LIMIT, "perf.recheck-limit")                               \
  X(CHECKMARK_MARK_COUNT, "checkmark.mark-count")                           \
  X(PERF_MARKERS, "perf.markers")                                           \
  X(PERF_OVERFLOW_COUNT, "perf.overflow-count")                             \
  X(PERF_HANDOFF_COUNT, "perf.handoff-count")                               \
  X(PERF_SLICE_COUNT, "perf.slice-count")

typedef enum fuzz_corruption {
#define FUZZ_CORRUPTION_ENUM(name, text) FUZZ_CORRUPT_##name,
  FUZZ_CORRUPTIONS(FUZZ_CORRUPTION_ENUM)
#undef FUZZ_CORRUPTION_ENUM
      FUZZ_CORRUPTION_COUNT
} fuzz_corruption;

/* ---- The ops ------------------------------------------------------------------------------- */

/* X(NAME, "mnemonic", operand kind 1, 2, 3, "what it does"). The order is the opcode. */
#define FUZZ_OPS(X)                                                                               \
  X(ALLOC, "alloc", SLOT, KIND, SMALL,                                                            \
    "sD = a new pool block of the kind with N fields (custom: the finalizer word, then N data "   \
    "words, of which the model uses data word 1); on failure sD is empty")                        \
  X(ALLOC_LARGE, "alloc_large", SLOT, KIND, LARGE,                                                \
    "sD = a new large block, as alloc; on failure sD is empty")                                   \
  X(STORE, "store", FIELD, SLOT, NONE,                                                            \
    "field F of the block in sD = the value in sS (a pointer, or NULL if sS is empty). Into "     \
    "raw data or custom data (fields 2..) the pointer is a plain word that keeps nothing alive; " \
    "custom fields 0, 1 and fields past the end: no-op")                                          \
  X(STORE_IMM, "store_imm", FIELD, INT, NONE,                                                     \
    "field F of the block in sD = the immediate V (the word 2V+1), same fields as store")         \
  X(LOAD, "load", SLOT, FIELD, NONE,                                                              \
    "sD = the block field F of the scanned block in sS points to (empty for NULL or an "          \
    "immediate); no-op for raw and custom blocks")                                                \
  X(DROP, "drop", SLOT, NONE, NONE, "sD = empty")                                                 \
  X(COPY, "copy", SLOT, SLOT, NONE, "sD = the value in sS")                                       \
  X(PUSH, "push", NONE, NONE, NONE,                                                               \
    "push a local root frame holding a snapshot of every slot (at most 8 deep)")                  \
  X(POP, "pop", NONE, NONE, NONE, "pop the innermost frame pushed by push")                       \
  X(ROOT, "root", GLOBAL, SLOT, NONE,                                                             \
    "gN = the value in sS; register gN as a global root (registering twice must fail "            \
    "with duplicate-root)")                                                                       \
  X(UNROOT, "unroot", GLOBAL, NONE, NONE,                                                         \
    "unregister gN and clear it (unregistering an unregistered cell must fail with "              \
    "unknown-root)")                                                                              \
  X(COLLECT, "collect", COLLECT, NONE, NONE,                                                      \
    "gc_collect: slice, major, full, or start (a cycle, returning with marking under way when "   \
    "marking=incremental; a whole cycle when stw)")                                               \
  X(PARAM, "param", PARAM, NONE, NONE,                                                            \
    "gc_set_params: percent, mintrigger (words), sweep (budget words), markstack (entries), "     \
    "batch (pools mapped at once), keep (empty pools kept), marking (stw or incremental: a "      \
    "program runs stw until it says otherwise), markslice (words), compact (off or a "            \
    "percentage: a full collection compacts when more of the pools' slots than that are free), "  \
    "rechecks (the incremental termination's limit), markbuf (work buffer entries), slicecap "    \
    "(a slice's budget cap in markslices) or zeal (modes joined by +: slice, cycle, overflow, "   \
    "recheck, store, domains, finalizer; none)")                                                  \
  X(FAIL, "fail", FAIL, NONE, NONE, "inject a failure: the N-th allocation from now fails")       \
  X(LIMIT, "limit", LIMIT, NONE, NONE, "set the heap limit (pools and large blocks)")             \
  X(PIN, "pin", SLOT, NONE, NONE,                                                                 \
    "gc_pin the block in sD: a root (its fields too) until unpinned, even if no slot holds it")   \
  X(UNPIN, "unpin", SLOT, NONE, NONE,                                                             \
    "gc_unpin the block in sD (a block that is not pinned must be refused with not-block)")       \
  X(MISUSE, "misuse", MISUSE, NONE, NONE,                                                         \
    "a call the API must refuse with its documented error, changing nothing")                     \
  X(SPAWN, "spawn", DOMAIN, NONE, NONE,                                                           \
    "gc_domain_spawn dN from the running domain (born in a blocking section: `on dN` runs it); "  \
    "no-op for d0 and for a domain already spawned")                                              \
  X(TERMINATE, "terminate", DOMAIN, NONE, NONE,                                                   \
    "gc_domain_terminate dN (run by dN): its pools, large blocks and statistics become orphans, " \
    "the frames pushed on it are dropped; if dN was running, the program goes on on d0. "         \
    "terminate d0 must be refused with main-domain")                                              \
  X(ON, "on", DOMAIN, NONE, NONE,                                                                 \
    "run the next ops on dN: the running domain enters a blocking section, dN leaves its own "    \
    "(unless dN is in one by `block`); no-op for a domain not spawned")                           \
  X(FIN, "fin", SLOT, OPTSLOT, NONE,                                                              \
    "gc_finalizer_set on the block in sS; when it runs, the finalizer stores the block into "     \
    "sK (a resurrection), or nothing for -. No-op while its finalizer is queued")                 \
  X(UNFIN, "unfin", SLOT, NONE, NONE,                                                             \
    "gc_finalizer_clear on the block in sS (a block without a finalizer set must be refused "     \
    "with no-finalizer)")                                                                         \
  X(RANGE, "range", RWORD, SLOT, OFFSET,                                                          \
    "word I of conservative range N = the address of the block in sS plus the offset: an "        \
    "interior pointer, its header, one past its end, the next slot, wastage (empty sS: 0). "      \
    "The word stays when the block dies, and may later point into a newer one")                   \
  X(RANGE_INT, "range_int", RWORD, INT, NONE,                                                     \
    "word I of conservative range N = the integer V, which points nowhere (0 clears it)")         \
  X(BLOCK, "block", NONE, NONE, NONE,                                                             \
    "gc_enter_blocking on the running domain: until unblock or on, no domain runs and every "     \
    "op but on and unblock is skipped")                                                           \
  X(UNBLOCK, "unblock", NONE, NONE, NONE,                                                         \
    "gc_leave_blocking on the domain the program is on, if `block` put it in a blocking section") \
  X(RANGE_WORD, "range_word", RWORD, WORD, NONE,                                                  \
    "word I of conservative range N = the word X, anything at all (the roots target's random "    \
    "words)")                                                                                     \
  X(RANGE_POOL, "range_pool", RWORD, SLOT, INT,                                                   \
    "word I of range N = the start of the 32 KiB-aligned unit holding sS's block plus K words: "  \
    "a pool's header (K < 6), its first slots, free or not; for a large block (no pool), its "    \
    "header plus K words modulo its size, a word inside it (empty sS: 0)")                        \
  X(PCT, "pct", WORD, INT, NONE,                                                                  \
    "schedule target: choose the interleaving by PCT seeded with X, depth V (0: 3; at most 8); "  \
    "the first pct op counts, wherever it stands")                                                \
  X(CHOOSE, "choose", WORD, NONE, NONE,                                                           \
    "schedule target: 8 more choice bytes (X's bytes, low first). A program with choose ops "     \
    "and no pct op is scheduled by its choice bytes, in pairs: run that many steps, then switch " \
    "to runnable thread b mod their number")                                                      \
  X(CORRUPT, "corrupt", CORRUPTION, SLOT, INT,                                                    \
    "graph target: plant the corruption in the heap or the model (on sS's block; N a field, an "  \
    "entry or a statistic), run the one pass that must report it, repair every byte, run the "    \
    "pass again: a missed or unrepaired corruption is a driver violation; no-op when it cannot "  \
    "apply (fuzz/driver/corrupt_op.h)")                                                           \
  X(FIN_DO, "fin_do", SLOT, BODY, NONE,                                                           \
    "gc_finalizer_set on the block in sS with a body: the next N ops (printed indented) do not "  \
    "run here but each time the finalizer runs, on the domain running it, with that domain's "    \
    "slots; only alloc, alloc_large, store, store_imm, load, drop, copy, root, unroot, collect, " \
    "pin, unpin, fin, unfin, the range ops, fin_do and self apply in a body (others are no-ops)"  \
    ". No-op while its finalizer is queued")                                                      \
  X(SELF, "self", SLOT, NONE, NONE,                                                               \
    "in a finalizer body: sD = the block whose finalizer is running (a resurrection); elsewhere " \
    "a no-op")                                                                                    \
  X(MARK_SLICE, "mark_slice", INT, NONE, NONE,                                                    \
    "gc_collect slice with markslice=N words (0: 1) for this slice only: mark work while an "     \
    "incremental cycle marks, else a sweep slice")                                                \
  X(TUNE, "tune", TUNABLE, INT, NONE,                                                             \
    "backends: set the backend's parameter pN from V (0..255, mapped onto its legal range, "      \
    "corners included)")                                                                          \
  X(WEAK, "weak", SLOT, SLOT, NONE,                                                               \
    "backends: sD = a new weak reference (a block) whose one weak slot names the block in sS "    \
    "(empty sS: no-op)")                                                                          \
  X(WEAK_GET, "weak_get", SLOT, SLOT, NONE,                                                       \
    "backends: sD = the target of the weak reference in sS while it lives, else empty")           \
  X(EPHE, "ephe", SLOT, SLOT, SLOT,                                                               \
    "backends: sD = a new ephemeron (a block) with key sK and datum sV: the datum is kept "       \
    "through it only while the key lives by other means (empty sK or sV: no-op)")                 \
  X(EPHE_GET, "ephe_get", SLOT, SLOT, NONE,                                                       \
    "backends: sD = the datum of the ephemeron in sS while its key lives, else empty")            \
  X(WEAK_SET, "weak_set", SLOT, SLOT, NONE,                                                       \
    "backends: the weak reference in sD names the block in sS from now on (empty sS: nothing, "   \
    "and its gets answer empty): a store through the collector's write barrier")                  \
  X(EPHE_SET, "ephe_set", SLOT, SLOT, SLOT,                                                       \
    "backends: the ephemeron in sD has key sK and datum sV from now on (either empty: none, and " \
    "its gets answer empty): two stores through the collector's write barrier")                   \
  X(COMPACT, "compact", NONE, NONE, NONE,                                                         \
    "gc_compact on the running domain (backends: compact): finish the cycle marking now, sweep, " \
    "and move the blocks of each class's sparsest pools into the free slots of the others; "      \
    "pinned blocks, blocks a conservative word names and a running finalizer's block stay, and "  \
    "every slot, field, root and finalizer follows its block")                                    \
  X(PARAMS, "params", PARAMS, NONE, NONE,                                                         \
    "gc_set_params with row N of a catalogue of parameter strings (fuzz/driver/params_op.c): "    \
    "one it must refuse (a malformed size, an unknown name, a value out of range, a key given "   \
    "twice, an item without =) returns param and changes nothing; one it must accept (K/M/G "     \
    "sizes, several keys, empty items, trace on or off, verify naming every pass the driver "     \
    "runs) sets exactly what it names")

typedef enum fuzz_opcode {
#define FUZZ_OP_ENUM(name, mnemonic, k1, k2, k3, what) FUZZ_OP_##name,
  FUZZ_OPS(FUZZ_OP_ENUM)
#undef FUZZ_OP_ENUM
      FUZZ_OP_COUNT
} fuzz_opcode;

enum { FUZZ_MAX_OPERANDS = 3 };

/* ---- Op sets: the ops a target's bytes name ------------------------------------------------- */

/* Each fuzz target reads the opcode byte modulo the size of its own op set, so a target that
 * tests one thing (the roots target: conservative ranges) spends its bytes on the ops that
 * matter there. The text form is the same for every target; only the opcode bytes differ, so
 * a byte input belongs to a target (the replay tool's --target) and a text input to none. */
typedef struct fuzz_opset {
  const char *name;       /* the target: "graph", "roots" */
  const fuzz_opcode *ops; /* the opcode of each byte value modulo count; NULL: every op */
  size_t count;
} fuzz_opset;

extern const fuzz_opset fuzz_opset_graph; /* every op but pct and choose (schedule only) */
extern const fuzz_opset fuzz_opset_roots;
/* graph's ops but fail, limit and corrupt, with pct and choose (compact included: it moves
 * blocks while other domains are parked on their threads) */
extern const fuzz_opset fuzz_opset_schedule;
/* The op set of a target by name, or NULL; the names, comma-separated, for error messages. */
const fuzz_opset *fuzz_opset_find(const char *name);
extern const char fuzz_opset_names[];
/* The byte that names `code` in `set`, or -1 if the set does not have it. */
int fuzz_opset_byte(const fuzz_opset *set, fuzz_opcode code);
/* Whether a finalizer body (fin_do) runs `code`: the mutator's work on blocks, roots, pins,
 * finalizers and weak references, and collecting; not frames, domains, parameters, injected
 * failures or limits (counted heap-wide), misuse or corrupt, nor weak_set and ephe_set (a body
 * runs inside a collection, after it cleared the weak slots: a reference aimed there at a block
 * the same collection finalizes next would answer it after its finalizer, which the oracle's
 * model cannot tell from a slot left uncleared). Any other op in a body is a no-op.
 * (A driver whose collector forbids collecting in a finalizer skips collect too.) */
int fuzz_op_runs_in_body(fuzz_opcode code);

typedef struct fuzz_op_info {
  const char *mnemonic;
  fuzz_operand_kind operands[FUZZ_MAX_OPERANDS]; /* FUZZ_OPND_NONE after the last */
  const char *what;
} fuzz_op_info;

extern const fuzz_op_info fuzz_op_table[FUZZ_OP_COUNT];

typedef struct fuzz_operand_info {
  unsigned bytes;   /* encoded length */
  const char *what; /* for error messages and the README */
} fuzz_operand_info;

extern const fuzz_operand_info fuzz_operand_table[FUZZ_OPND_KIND_COUNT];

/* ---- Decoded ops --------------------------------------------------------------------------- */

/* One operand, canonical (already reduced): SLOT/GLOBAL/KIND/COLLECT/INT/SMALL/LARGE/FAIL/DOMAIN
 * use a (sizes in fields, FAIL 0 = off); FIELD is a = slot, b = field; PARAM is a = fuzz_param,
 * b = index into that parameter's value table; LIMIT is a = index into the limit table; MISUSE
 * is a = fuzz_misuse; OPTSLOT is a = slot or FUZZ_NO_SLOT; RWORD is a = range, b = word; OFFSET
 * is a = FUZZ_FROM_START or FUZZ_FROM_END, b = the signed byte offset; CORRUPTION is
 * a = fuzz_corruption; BODY is a = the length 0..FUZZ_BODY_MAX. */
typedef struct fuzz_arg {
  int a, b;
  uint64_t word; /* WORD */
} fuzz_arg;

enum { FUZZ_NO_SLOT = FUZZ_SLOTS };              /* OPTSLOT: none */
enum { FUZZ_FROM_START = 0, FUZZ_FROM_END = 1 }; /* OFFSET: a */

typedef struct fuzz_op {
  fuzz_opcode code;
  fuzz_arg args[FUZZ_MAX_OPERANDS];
  size_t offset; /* byte offset of the op in the input */
  size_t index;  /* 0-based op number in the program */
  int depth;     /* 0: the program's own op; k: an op of a finalizer body k levels deep */
  int body;      /* fin_do: the ops of its body, its BODY operand cut to what the enclosing body
                  * has left (0 at FUZZ_BODY_DEPTH); the input may end first */
} fuzz_op;

/* Parameter and limit value tables (the values `param` and `limit` can set). */
const char *fuzz_param_name(fuzz_param p);
size_t fuzz_param_value_count(fuzz_param p);
/* The value of entry i; for percent, -1 means off. */
long fuzz_param_value(fuzz_param p, size_t i);
/* The name entry i is written with in text and in gc_set_params ("off", "stw", "incremental"),
 * or NULL for a number. */
const char *fuzz_param_value_name(fuzz_param p, size_t i);
size_t fuzz_limit_count(void);
size_t fuzz_limit_bytes(size_t i); /* 0: off */

extern const char *const fuzz_kind_names[FUZZ_KIND_COUNT];
extern const char *const fuzz_collect_names[FUZZ_COLLECT_COUNT];
extern const char *const fuzz_misuse_names[FUZZ_MISUSE_COUNT];
extern const char *const fuzz_corruption_names[FUZZ_CORRUPTION_COUNT];

#endif /* FUZZ_OPS_H */
