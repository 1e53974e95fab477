/* The fuzz driver: runs one program (fuzz/lang/ops.h) against a fresh heap and the model oracle,
 * with every verification pass after every cycle and once more at the end.
 *
 * The mutator state: FUZZ_SLOTS slots in a local root frame the driver pushes first, so every
 * slot is always a root; up to FUZZ_FRAMES more frames, each a snapshot of the slots (`push`);
 * FUZZ_GLOBALS global root cells. Nothing else holds a block, so the model knows exactly what is
 * reachable.
 *
 * Besides the passes, the driver checks the API contract it exercises ("driver.*" violations): an
 * allocation fails exactly when an injected failure or a heap limit says it may, misuse of the root
 * and frame API is refused with the documented error, and a new block has the size, tag and zeroed
 * fields asked for. It also checks the passes themselves (the corrupt op,
 * fuzz/driver/corrupt_op.h): a corruption it plants must be reported, and gone once repaired.
 *
 * A violation names the op that started the cycle in which it was found (its index and text), and
 * the op that was running when the pass ran, when that is a different one (lazy sweeping finishes
 * a cycle during a later op).
 */
#ifndef FUZZ_DRIVER_H
#define FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/lang/ops.h"
#include "gc/gc.h"
#include "invariants/report.h"

/* Memory a fuzz target keeps from one program to the next: the verification passes' scratch (walk
 * map and stack, heap index) and the model oracle's arrays and maps. Every program still starts
 * from nothing: each part is reset before use, and nothing one program's heap left is read by the
 * next. Like the pool cache, it lives as long as the process (LeakSanitizer sees it reachable).
 * One program at a time may use a scratch. */
typedef struct fuzz_scratch fuzz_scratch;
/* The pools a target's cache holds: mapped up front (gc_pool_cache_fill) and given back by each
 * heap, so every program starts with it full, however many pools the programs before it took. */
enum { FUZZ_TARGET_CACHE_POOLS = 256 };
fuzz_scratch *fuzz_scratch_create(void); /* NULL when out of memory */
void fuzz_scratch_destroy(fuzz_scratch *s);

/* Tests only: the corrupt op (fuzz/driver/corrupt_op.h) misbehaving on purpose, to show that each
 * of its two checks fails when it should. */
typedef enum fuzz_corrupt_sabotage {
  FUZZ_CORRUPT_HONEST = 0,          /* the fuzz targets and the replay tool */
  FUZZ_CORRUPT_UNDO_BEFORE_CHECK,   /* the corruption is undone before the pass looks: "missed" */
  FUZZ_CORRUPT_CHECK_BEFORE_REPAIR, /* the second run comes before the repair: "unrepaired" */
} fuzz_corrupt_sabotage;

/* How the domains of a program run. */
typedef enum fuzz_threads {
  FUZZ_ONE_THREAD = 0, /* graph, roots: every domain on the caller's thread (`on` moves) */
  FUZZ_SCHEDULED,      /* schedule: each domain's part of the program on its own thread, one
                        * at a time, the interleaving chosen by the program (pct, choose) */
  FUZZ_FREE_THREADS,   /* the same threads in real parallel (TSan stress): ops take turns
                        * through a lock held outside the heap, the collector runs free */
} fuzz_threads;

typedef struct fuzz_options {
  const fuzz_opset *ops; /* the target's op set, how the bytes are read; NULL: graph */
  fuzz_threads threads;
  FILE *interleaving;        /* FUZZ_SCHEDULED: the interleaving is printed here after the run */
  int abort_on_violation;    /* fuzz targets: print the first violation with its op, then abort() */
  FILE *out;                 /* violations and the summary go here; NULL: stderr */
  FILE *trace;               /* if set: each op as it runs, and each cycle's hook points */
  unsigned verify;           /* GC_VERIFY_* mask (gc/passes.h), read when verify_given */
  int verify_given;          /* 1: `verify` is the exact mask (0 = none); 0: every pass */
  const char *params;        /* extra collector parameters (gc_config_parse syntax), or NULL */
  gc_pool_cache *pool_cache; /* pools kept mapped from one program's heap to the next, or NULL
                              * (FUZZ_SCHEDULED then uses one of its own: the cache's lock is part
                              * of every interleaving) */
  fuzz_scratch *scratch;     /* the passes' and the model's memory, kept likewise, or NULL */
  /* Tests only: called after each op with the heap and the slots, e.g. to break the heap on
   * purpose and show that a pass reports it. NULL in the fuzz targets and the replay tool. */
  void (*after_op)(void *user, gc_heap *heap, gc_value *slots, const fuzz_op *op);
  void *after_op_user;
  /* Tests only, with after_op_user: called at each hook point after the passes, and when a
   * finalizer body starts (before its ops), e.g. to run finalizers where the collector must not
   * and show that driver.finalizer-context reports it. NULL elsewhere. */
  void (*at_hook)(void *user, gc_heap *heap, gc_hook_point point);
  void (*at_body)(void *user, gc_heap *heap, gc_domain *dom);
  fuzz_corrupt_sabotage corrupt_sabotage; /* tests only; FUZZ_CORRUPT_HONEST elsewhere */
} fuzz_options;

/* fuzz_result's per-pass rows, indexed by gc_verify_pass_id (invariants/report.h): the heap's
 * passes of gc/passes.h in their order, then GC_VPASS_DRIVER, the driver's own checks. */
enum { FUZZ_PASS_COUNT = GC_VPASS_COUNT, FUZZ_PASS_DRIVER = GC_VPASS_DRIVER };

typedef struct fuzz_result {
  size_t ops;        /* ops run */
  uint64_t cycles;   /* major cycles the heap completed, the final full collection included */
  size_t violations; /* every violation found (kept or not) */
  size_t pass_runs[FUZZ_PASS_COUNT];       /* runs of each pass (driver: checks made) */
  size_t pass_violations[FUZZ_PASS_COUNT]; /* violations of each pass */
  long first_op;       /* the first violation's op: the op that started its cycle (a pass), or
                         the op that broke the contract (the driver); -1: none, or the final
                         collection */
  char first_kind[48]; /* the first violation's kind, e.g. "reach.zero-header"; "" if none */
  /* FUZZ_SCHEDULED: the scheduler's steps, switches and interleaving hash (fuzz_sched_hash),
   * and a hash of the final statistics; equal across runs of one input (determinism). */
  uint64_t sched_steps, sched_switches, sched_hash, stats_hash;
  uint64_t events[GC_EVENT_COUNT]; /* the heap's rare events (gc.h), final collection included */
} fuzz_result;

/* Run the program in `data` (bytes). Returns 0 when clean, 1 when any violation was found (each
 * printed to opt->out), -1 when the heap could not be created. With abort_on_violation the first
 * violation aborts the process instead. */
int fuzz_run(const uint8_t *data, size_t size, const fuzz_options *opt, fuzz_result *res);

/* What a libFuzzer target does with one input (LLVMFuzzerTestOneInput): run it as a program of
 * the target whose op set is `set`, every pass on, the first violation printed with its op and
 * then abort() (libFuzzer saves the input as a crash). Pools stay mapped from one input's heap to
 * the next, and the passes' and the model's memory is kept likewise (fuzz_options.pool_cache,
 * .scratch): mapping, faulting and unmapping per input would cost more than most programs. Both
 * live as long as the process. Always returns 0. */
int fuzz_target_run_one(const fuzz_opset *set, const uint8_t *data, size_t size);

/* Make what fuzz_target_run_one keeps between programs before the first one runs (the targets'
 * LLVMFuzzerInitialize): the pool cache, filled (gc_pool_cache_fill), the scratch, the model and
 * the driver state, by running the empty program. Otherwise the first input of a process would
 * take paths no later one takes (making them, mapping pools), and under AFL++, which runs inputs
 * in persistent processes, its coverage would depend on its place in the process: unstable edges.
 * The first run makes them itself when no target called this. */
void fuzz_target_init(const fuzz_opset *set);
/* The same for a given way of running the threads (schedule-tsan: FUZZ_FREE_THREADS). */
void fuzz_target_init_threads(const fuzz_opset *set, fuzz_threads threads);

/* The same for the schedule-tsan target: a schedule program with its domains' threads running
 * free (FUZZ_FREE_THREADS, the controlled scheduler off), as the TSan stress runs them, so that
 * ThreadSanitizer sees the collector's own threads race while libFuzzer steers the programs.
 * Violations abort as in fuzz_target_run_one; a race aborts in the TSan runtime. */
int fuzz_target_run_free_threads(const uint8_t *data, size_t size);

/* Once per process, in a binary that runs programs (the fuzz targets' LLVMFuzzerInitialize, the
 * replay tool's main): a sanitizer finding then also prints its GCFUZZ-VERDICT line to stderr
 * (invariants/verdict.h), kind "<sanitizer>.<type>" as precisely as the runtime says (e.g.
 * "asan.heap-use-after-free", "ubsan.signed-integer-overflow", "msan.use-of-uninitialized-value",
 * "tsan.data-race", "lsan.detected-memory-leaks"), pass the sanitizer, op the op running on the
 * thread that made the finding. Does nothing in a build without a sanitizer. (fuzz/driver/
 * sanitizer.c) */
void fuzz_sanitizer_verdicts_install(void);

#endif /* FUZZ_DRIVER_H */
