/* How a program is run through a backend, and what came of it (fuzz/oracle/run.h). */
#ifndef FUZZ_ORACLE_OPTIONS_H
#define FUZZ_ORACLE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"

typedef struct oracle_options {
  const fuzz_backend *backend;
  const fuzz_opset *ops;  /* NULL: oracle_opset(backend) */
  int abort_on_violation; /* fuzz targets: the first violation printed, then abort() */
  FILE *out;              /* violations and reports; NULL: stderr */
  FILE *trace;            /* if set: each op as it runs, each collection and finalizer */
  const char *params;     /* the backend's own parameter text, or NULL */
  /* One thread a domain under the controlled scheduler (FUZZ_CAP_THREADS; the op set is then
   * oracle_opset_threads(backend)); the interleaving printed to `interleaving` if set. */
  int threaded;
  FILE *interleaving;
  /* With threaded: the threads run free, in real parallel (the controlled scheduler off), each
   * op whole under a turn taken inside a blocking section, so that ThreadSanitizer sees the
   * collector's own concurrency (stops, parallel marking and sweeping, shared lists) while the
   * model stays one thread's at a time. */
  int free_threads;
} oracle_options;

typedef struct oracle_result {
  size_t ops;         /* ops run */
  size_t body_ops;    /* ops run in finalizer bodies (fin_do), each time its finalizer ran */
  uint64_t collects;  /* collections the program asked for, the final one included */
  size_t checks;      /* the model's checks made (loads, finalizers, gets, walks) */
  size_t deep_checks; /* runs of the backend's deep check */
  size_t finalizers;  /* finalizers that ran */
  size_t planted;     /* corrupt ops that planted, were caught by the deep check and repaired */
  size_t refused;     /* misuse ops the collector refused as documented */
  size_t violations;  /* every finding, the model's and the backend's */
  long first_op;      /* the op of the first, or -1 (the final checks) */
  uint64_t sched_steps, sched_switches, sched_hash; /* a threaded run's (fuzz/sched) */
  size_t skipped_full; /* threaded: full collections another thread's op overlapped, whose
                        * whole-heap comparisons were skipped (check.c) */
  char first_kind[48]; /* "" if none */
  /* The backend's rare events over the run, the final collection included (backend.h:
   * rare_counts; all 0 for a backend without them, or a run that stopped stuck). */
  uint64_t rare[FUZZ_RARE_EVENTS_MAX];
} oracle_result;

#endif /* FUZZ_ORACLE_OPTIONS_H */
