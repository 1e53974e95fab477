/* The verification passes and the hook that runs them.
 *
 * The collector calls one hook at three points of every cycle (gc.h: GC_HOOK_MARK_DONE,
 * GC_HOOK_CYCLED, GC_HOOK_SWEPT). gc_verify_install puts the verifier there; at each point it runs
 * the passes the heap's cfg.verify mask selects (GCFUZZ_PARAMS=verify=reach+swept+checkmark+model,
 * the gc_config field, or gc_set_params at run time; read at every hook, so changes apply to the
 * next point):
 *
 *   GC_HOOK_MARK_DONE  checkmark   (and the model's snapshot of what must die this cycle)
 *   GC_HOOK_CYCLED     reach       (and the model's contents check)
 *   GC_HOOK_SWEPT      swept, stats, space (and the model's freed / finalizer / live-count
 *                      checks); a full collection's sweep end comes after its empty pools went back
 *                      to the OS (gc/cycle.c), so space sees what it leaves
 *
 * Every pass runs in every build: nothing here depends on NDEBUG.
 *
 * Modes. GC_VERIFY_ABORT (fuzz targets, command-line tools): on a violation, print every report
 * of that point to stderr with its verdict line (op -1: the verifier knows no op), and, if a dot
 * path is set, the first report's neighbourhood as Graphviz, then abort()
 * (gc_verify_fail_and_abort). GC_VERIFY_COLLECT (tests): keep the reports for the caller.
 *
 * Verdict lines (verdict.h). Each finding gets exactly one, from whoever attributes it: the
 * verifier's ABORT mode for the reports of its hook points, with op -1; a driver that owns the
 * hook and knows which op started the cycle (the fuzz driver) emits its findings itself with that
 * op, through gc_verify_reports_emit or gc_verify_fail_and_abort, and so uses COLLECT mode or
 * calls the passes directly. gc_verify_reports_print prints no verdict line: it shows reports
 * that are evidence for another finding, or that a test keeps.
 *
 * The Graphviz file is named by the environment variable GCFUZZ_VERIFY_DOT, read in one place:
 * gc_verify_install. A driver asks the verifier for it (gc_verify_dot_path).
 *
 * //gc does not know //invariants: the embedder installs the verifier. A hook already installed
 * on the heap keeps running, before the passes at each point (tests use this to break a heap
 * just before a pass looks at it); gc_verify_uninstall puts it back.
 */
#ifndef INVARIANTS_VERIFY_H
#define INVARIANTS_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gc/gc.h"
#include "invariants/model.h"
#include "invariants/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The passes, called directly ----------------------------------------------------------- */

/* Each appends its reports to `out` (NULL: only count) and returns the number of violations.
 * reach: any time no marking is in progress (normally right after the colours cycled).
 * checkmark: right after marking, before the colours cycle (from a GC_HOOK_MARK_DONE hook).
 * swept: when sweeping is complete (e.g. after gc_collect(d, GC_COLLECT_FULL)).
 * perf: any time; it checks the counters of the last cycle's start and mark and of each
 * domain's sweep so far (invariants/perf.c).
 * The model's checks are gc_model_check (model.h). */
size_t gc_verify_reach(gc_heap *heap, gc_verify_reports *out);
size_t gc_verify_checkmark(gc_heap *heap, gc_verify_reports *out);
size_t gc_verify_swept(gc_heap *heap, gc_verify_reports *out);
size_t gc_verify_perf(gc_heap *heap, gc_verify_reports *out);
/* The public statistics (stats.*): without a verifier's history, only what needs none. */
size_t gc_verify_stats(gc_heap *heap, gc_verify_reports *out);
/* Pools against blocks (space.*). */
size_t gc_verify_space(gc_heap *heap, gc_verify_reports *out);
/* The moved pass called on its own: the checks that need no record of a compaction's start
 * (forwarding headers left, references to them). */
size_t gc_verify_moved(gc_heap *heap, gc_verify_reports *out);

/* ---- The hook ------------------------------------------------------------------------------ */

typedef enum gc_verify_mode {
  GC_VERIFY_ABORT,   /* print and abort() on the first point with a violation */
  GC_VERIFY_COLLECT, /* keep reports; gc_verify_reports_of */
} gc_verify_mode;

typedef struct gc_verifier gc_verifier;

/* Install the verifier as the heap's hook. NULL when out of memory. Reads GCFUZZ_VERIFY_DOT
 * (a file path) as the initial dot path. */
gc_verifier *gc_verify_install(gc_heap *heap, gc_verify_mode mode);
/* Put back the hook found at install time and free the verifier (and its reports). Call before
 * gc_heap_destroy. */
void gc_verify_uninstall(gc_verifier *v);

/* The passes' working memory (the walk's address map and stack, the heap index): a verifier keeps
 * its own from one cycle to the next and frees it at uninstall. A program that makes a heap per
 * input (a fuzz target) can lend every verifier the same scratch instead, so no input pays for
 * allocating and faulting it in again: gc_verify_use_scratch right after install (NULL: back to
 * the verifier's own). The scratch holds memory only, nothing of one heap is read by the next:
 * every pass resets it before use. One verifier at a time may use a scratch. */
typedef struct gc_verify_scratch gc_verify_scratch;
gc_verify_scratch *gc_verify_scratch_create(void); /* NULL when out of memory */
void gc_verify_scratch_destroy(gc_verify_scratch *s);
void gc_verify_use_scratch(gc_verifier *v, gc_verify_scratch *s);

/* The model the GC_VERIFY_MODEL pass checks (NULL: none; the pass is then skipped). */
void gc_verify_set_model(gc_verifier *v, gc_model *m);
/* ABORT mode: also write the first report's neighbourhood to this Graphviz file (NULL: don't). */
void gc_verify_set_dot_path(gc_verifier *v, const char *path);
/* That path: GCFUZZ_VERIFY_DOT at install, or the last gc_verify_set_dot_path; NULL none. */
const char *gc_verify_dot_path(const gc_verifier *v);

/* The end of a run that found violations: gc_verify_reports_emit(r, op, dot_path, out) (every
 * report with its verdict line, the count, the Graphviz file), after flushing stdout so what the
 * program printed before comes first; then abort(). ABORT mode calls it with op -1 and stderr. */
__attribute__((noreturn)) void gc_verify_fail_and_abort(const gc_verify_reports *r, long op,
                                                        const char *dot_path, FILE *out);

/* COLLECT mode: the reports kept so far, their number (violations counted past the list's limit
 * included), and forgetting them. */
const gc_verify_reports *gc_verify_reports_of(const gc_verifier *v);
size_t gc_verify_violations(const gc_verifier *v);
void gc_verify_clear(gc_verifier *v);

/* How many times the pass (one GC_VERIFY_* bit) has run: tests check that passes really ran. */
uint64_t gc_verify_runs(const gc_verifier *v, unsigned pass);

/* Run the passes of `mask` that belong to `point` now, as the hook would (same mode, same
 * reports, the verifier's reusable scratch memory). For tools and benchmarks. */
size_t gc_verify_run_point(gc_verifier *v, unsigned mask, gc_hook_point point);

/* One pass (GC_VERIFY_REACH, GC_VERIFY_CHECKMARK or GC_VERIFY_SWEPT) called directly on the
 * verifier's heap, as gc_verify_reach and the others are (same rules for when), but in the
 * verifier's scratch memory: a caller that runs passes between ops (the fuzz driver's corrupt op)
 * allocates nothing. Its reports go to `out` (NULL: only count), never to the verifier's own list,
 * whatever the mode. Any other `pass` runs nothing and returns 0. */
size_t gc_verify_pass_now(gc_verifier *v, unsigned pass, gc_verify_reports *out);
/* 1 when the verifier holds a complete record of the current cycle's mark start (snapshot.h) and
 * its walk from the roots reached `block` then: a block that must be MARKED when marking ends. */
int gc_verify_reached_at_mark_start(gc_verifier *v, gc_value block);
/* 1 when checkmark allows `block` MARKED at mark-done with no root reaching it: floating garbage
 * of an incremental cycle by the verifier's record of its start (snapshot.h). */
int gc_verify_allows_unrooted(gc_verifier *v, gc_value block);

#ifdef __cplusplus
}
#endif
#endif /* INVARIANTS_VERIFY_H */
