/* What the passes share inside invariants/: the run context, reusable scratch memory, and the
 * functions that fill a report. Not for embedders (they use verify.h, report.h, model.h). */
#ifndef INVARIANTS_PASS_H
#define INVARIANTS_PASS_H

#include <stddef.h>

#include "gc/heap.h"
#include "invariants/addrmap.h"
#include "invariants/heapindex.h"
#include "invariants/report.h"
#include "invariants/seenset.h"
#include "invariants/snapshot.h"

/* The moved pass's record of a compaction's start (GC_HOOK_COMPACT_START), checked at its end
 * (GC_HOOK_COMPACTED) in the same stop: the pools owned then (a reference into one of them that
 * no owner holds now names a pool the compaction gave back), and the blocks that had to stay
 * (INV-COMPACT-2), found by the verifier itself (the pinned table, conservative words resolved
 * by its own heap index, the running finalizer's block), with their headers. */
typedef struct gc_verify_fixed {
  gc_value v;
  gc_header hd;
  const char *why; /* "pinned", "named by a conservative word", "its finalizer running" */
} gc_verify_fixed;
typedef struct gc_verify_moved_record {
  int taken;            /* recorded, and the compaction it was taken for not yet checked */
  const gc_heap *heap;  /* whose */
  uint64_t compactions; /* heap->compact.count once the compaction it records has run */
  uintptr_t *pools;     /* owned pools then, ascending */
  size_t pool_count, pool_capacity;
  gc_verify_fixed *fixed; /* the blocks that had to stay */
  size_t fixed_count, fixed_capacity;
  int bound; /* check INV-COMPACT-3 against it (a record taken at the hook; the corruption
              * catalogue plants records of one kind only) */
} gc_verify_moved_record;

/* Memory a graph walk needs, kept between runs by the verifier so a pass after every cycle does
 * not map and fault in a fresh table each time. Zero-initialised is valid. */
/* The checkmark pass's over-retention search (checkmark.c), its memory only: kept from one run to
 * the next, as the rest of the scratch is, and reset by the pass before use. */
typedef struct gc_verify_over_memory {
  void *items; /* checkmark.c's records of blocks kept without a root */
  size_t items_capacity;
  size_t *stack; /* its searches' stack */
  size_t stack_capacity;
  gc_addrmap index; /* the records' blocks -> their index */
} gc_verify_over_memory;

typedef struct gc_verify_scratch {
  gc_seenset reached; /* walk: the blocks met (walk.c), for the heap index below */
  gc_addrmap seen;    /* walk with paths: block val -> referrer (walk.c); swept: pools and large
                       * blocks met */
  gc_value *stack;    /* explicit walk stack */
  size_t stack_capacity;
  gc_value *ephe; /* walk: the ephemerons reached (walk.c) */
  size_t ephe_capacity;
  gc_heapindex index; /* the heap index: built once per hook point (verify.c) and shared by the
                       * passes that run there, or by each pass called directly */
  /* The record of the last mark start (snapshot.h) of the heap whose verifier uses this scratch:
   * its memory is kept from one heap to the next, as the rest is (a fuzzing process verifies a
   * fresh heap per input), the record itself is forgotten when a verifier takes the scratch. */
  gc_verify_snapshot snapshot;
  gc_verify_moved_record moved; /* the moved pass's record of a compaction's start */
  gc_addrmap listed;            /* ephe: every entry of the owners' weak lists (ephe.c) */
  gc_verify_over_memory over;   /* checkmark's over-retention search */
} gc_verify_scratch;

void gc_verify_scratch_free(gc_verify_scratch *s);
typedef struct gc_verifier gc_verifier;
/* The scratch memory a verifier runs its passes in (the corruption catalogue plants a moved
 * record there). */
gc_verify_scratch *gc_verify_scratch_of(gc_verifier *v);

/* What the stats pass needs of a heap's previous sweep end, for the figures that must only grow
 * (INV-STATS-2): kept by the verifier, one per heap, and recorded at every SWEPT hook point it
 * sees, by the stats pass when it runs there, else by gc_verify_stats_record. */
typedef struct gc_verify_history {
  int have;              /* a sweep end was recorded */
  gc_stats last;         /* gc_get_stats at that sweep end */
  uint64_t newest_pause; /* the pause history's newest entry then */
  size_t pauses;         /* entries in the pause history then */
} gc_verify_history;

void gc_verify_stats_record(gc_verify_history *h, gc_heap *heap);

/* The verifier's own record of the current (or last) mark, for the perf pass's second counts
 * (INV-OVERFLOWCOUNT-1, INV-HANDOFFCOUNT-1, INV-SLICECOUNT-1 in gc/heap.h): taken at every
 * GC_HOOK_MARK_START the verifier sees, whatever its mask, from gc_get_stats as an embedder reads
 * it; `slices` counts the GC_HOOK_MARK_SLICE calls the collector made since, on any thread. */
typedef struct gc_verify_mark_record {
  int taken;            /* a mark start was recorded */
  uint64_t cycles;      /* heap->cycles then: the mark recorded ends cycle cycles + 1 */
  uint64_t mark_slices; /* gc_stats' counters then */
  uint64_t handoffs;
  uint64_t mark_overflows;
  uint64_t slices; /* slice hook calls since: relaxed atomic adds (slices end on
                               * several threads at once), read in a later stop */
} gc_verify_mark_record;

/* The record fits the mark whose counters the heap holds now: at GC_HOOK_MARK_DONE the mark under
 * way, otherwise (called directly) the last one, no other marking since. */
int gc_verify_mark_record_fits(const gc_verify_mark_record *rec, gc_heap *heap, int at_mark_done);
/* The verifier's record (the corruption catalogue checks it fits before planting on it). */
gc_verify_mark_record *gc_verify_mark_record_of(gc_verifier *v);

/* One run of one pass. */
typedef struct gc_verify_run {
  gc_heap *heap;
  const char *point;          /* a hook point's name (gc_verify_point_name), or "direct" */
  gc_verify_reports *out;     /* NULL: only count */
  gc_verify_scratch *scratch; /* NULL: the pass uses its own and frees it */
  /* 1: scratch->index was built for this heap at this point, after the last change to the heap
   * (the verifier builds it once for every pass of a point: no pass changes the heap); its build
   * returned index_complete. 0: the pass builds the index itself. */
  int index_built;
  int index_complete;
  /* 1: the verifier runs the pass at hook point `hook`; 0: the pass was called directly (`point`
   * is "direct", and `hook` means nothing). The passes that behave by point test these, not the
   * name. */
  int at_hook;
  gc_hook_point hook;
  /* Set by the verifier at a hook point, for passes that need it (NEEDS of gc/passes.h); a pass
   * called directly has none. */
  struct gc_model *model;
  /* The verifier's record of the heap's last sweep end (hook points and gc_verify_pass_now);
   * NULL for a pass called on its own (the stats pass then checks what needs no history). */
  gc_verify_history *history;
  /* The verifier's record of the heap when the current cycle's marking began (snapshot.h), for
   * the passes that need it (GC_VERIFY_NEEDS_SNAPSHOT); NULL when the pass runs on its own. */
  struct gc_verify_snapshot *snapshot;
  /* The verifier's record of the mark start (above); NULL when the pass runs on its own (the
   * perf pass then checks only the second counts the collector keeps). */
  const gc_verify_mark_record *mark_record;
  /* At GC_HOOK_MARK_SLICE: the domain whose slice ended, the only one whose state a pass may
   * read then (the world runs); NULL at every other point. */
  gc_domain *domain;
} gc_verify_run;

/* What a pass needs the verifier to provide (the NEEDS column of gc/passes.h). */
enum gc_verify_needs {
  GC_VERIFY_NEEDS_INDEX = 1u << 0, /* scratch->index built at this point (index_built) */
  GC_VERIFY_NEEDS_MODEL = 1u << 1, /* run->model and run->hook: runs only at hook points */
  /* run->snapshot: the verifier records the heap at GC_HOOK_MARK_START (snapshot.h) when a pass
   * of the mask needs it and either runs there itself or the cycle marks incrementally (a pass
   * that needs it only for incremental cycles, such as checkmark, costs nothing in the stw
   * mode). */
  GC_VERIFY_NEEDS_SNAPSHOT = 1u << 2,
};

/* Each pass's run function (the RUN column of gc/passes.h): the number of violations found. */
#define GC_VERIFY_PASS_RUN_DECL_(id, name, points, run_fn, needs, what) \
  size_t run_fn(const gc_verify_run *);
GC_VERIFY_PASS_TABLE(GC_VERIFY_PASS_RUN_DECL_)
#undef GC_VERIFY_PASS_RUN_DECL_

/* ---- Building reports ---------------------------------------------------------------------- */

/* A new, zeroed report of this kind in run->out, or NULL when there is no list or it is at its
 * limit (then the violation is only counted in `dropped`). */
gc_verify_report *gc_verify_report_new(const gc_verify_run *run, gc_verify_kind kind);
void gc_verify_report_what(gc_verify_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Count a violation in *found and return its new report with `what` filled, or NULL when it is
 * only counted (gc_verify_report_new). */
gc_verify_report *gc_verify_violation(const gc_verify_run *run, size_t *found, gc_verify_kind kind,
                                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void gc_verify_report_where(gc_verify_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A report of `kind` with no block, its rule broken (`what`) and the state it is about
 * (`where`); returns 1, the violation counted (kept or dropped). For the passes that check
 * counters and shapes rather than blocks (perf, and checkmark's end of marking). */
size_t gc_verify_state_violation(const gc_verify_run *run, gc_verify_kind kind, const char *where,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5), cold));
/* The block `v`: its address, and its header and location when the index says reading is safe
 * (NULL or an immediate: said so, nothing read). */
void gc_verify_report_block(gc_verify_report *r, gc_heapindex *ix, gc_value v);
/* A header already read by the caller (e.g. a free-list slot), with its colour name. */
void gc_verify_report_header(gc_verify_report *r, gc_heap *heap, gc_header hd);
/* Copy the path (origin text and steps). Returns 0 when out of memory (the path is dropped). */
int gc_verify_report_path(gc_verify_report *r, const char *origin, const gc_verify_step *steps,
                          size_t count);
/* Snapshot the two-hop neighbourhood of r->block (children, grandchildren, and the last two
 * path steps) for the Graphviz writer. */
void gc_verify_report_neighbourhood(gc_verify_report *r, gc_heapindex *ix);

/* "mark-done", "cycled", "swept", "mark-start", "mark-slice": the name reports give a hook
 * point. */
const char *gc_verify_point_name(gc_hook_point point);

/* "UNMARKED", ... for a header's colour; "none" for a zero header. */
const char *gc_verify_colour_of(const gc_heap *heap, gc_header hd);

/* Describe the root visited `ordinal`-th (from 1) by gc_verify_visit_roots (rootset.h), as the
 * walk counts them: which root set holds it, e.g. "global
 * root #2 (slot 0x...)", "domain 0 local root frame 0 (0 = innermost), slot 3", "pinned block
 * 0x... field 1", "finalizer queue entry 0", "conservative range word at 0x...". Reruns the
 * enumeration: for reports only. */
void gc_verify_describe_root(gc_heap *heap, gc_heapindex *ix, size_t ordinal, char *buf,
                             size_t buf_len);

/* Which root set holds the root slot `slot` now, in the same words; a slot no set holds now is
 * described as an embedder scanner's. */
void gc_verify_describe_slot(gc_heap *heap, gc_value *slot, char *buf, size_t buf_len);

#endif /* INVARIANTS_PASS_H */
