/* The runner's state (run.h): private to fuzz/oracle. Its files, each calling only those below:
 *
 *   run.c     a program from its first op to the final checks (run.h's entry points)
 *   ops.c     what each op does to the backend and the model; finalizers and their bodies;
 *             domains
 *   check.c   the checks: findings as verdict lines, identities and fields, the graph walk,
 *             what follows a collection
 *   opset.c   which ops a backend's capabilities allow
 *   model.c   the shadow graph (model.h), which knows no backend
 */
#ifndef FUZZ_ORACLE_RUNNER_H
#define FUZZ_ORACLE_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "fuzz/oracle/model.h"
#include "fuzz/oracle/run.h"

/* The backend's cells, by what the program calls them. The scratch cells hold what the checks
 * load: a walk of the reachable graph keeps one per level of its depth-first path. */
enum {
  SCRATCH = 64,
  CELL_FRAMES = FUZZ_SLOTS,
  CELL_GLOBALS = CELL_FRAMES + FUZZ_FRAMES * FUZZ_SLOTS,
  CELL_SCRATCH = CELL_GLOBALS + FUZZ_GLOBALS,
  CELLS = CELL_SCRATCH + SCRATCH,
  CELL_SELF = CELLS,                            /* FUZZ_CELL_SELF */
  RANGE_WORDS = FUZZ_RANGES * FUZZ_RANGE_WORDS, /* ORACLE_RANGE_WORDS */
};

typedef struct runner {
  const oracle_options *opt;
  const fuzz_backend *b;
  fuzz_bheap *h;
  oracle_model *m;
  oracle_result *res;
  FILE *out;
  /* The program: a finalizer body is decoded from its bytes when the finalizer runs. */
  const fuzz_opset *set;
  const uint8_t *data;
  size_t size;
  const fuzz_op *op;    /* the op running; NULL in the final checks */
  int frames;           /* local frames pushed */
  unsigned fail_window; /* allocating calls left in which the injected failure must come;
                         * 0: none due (backend.h: fail_after) */
  int tuned;            /* a tune op ran: the backend's limits may refuse an allocation */
  /* Domains (FUZZ_CAP_DOMAINS): which exist, and the one the calls run on. */
  unsigned char spawned[FUZZ_DOMAINS];
  unsigned on;
  /* A finalizer body running: its depth (0: the program's own ops run) and its block. */
  int body_depth;
  oracle_obj fin_self;
  uintptr_t ranges[RANGE_WORDS];
  uint8_t *seen; /* the graph walk's visited objects */
  size_t seen_cap;
} runner;

static inline size_t slot_cell(int s) { return (size_t)s; }

/* How the runner came to read a block, for a report: formatted only when there is one (the
 * checks run on every load and every field of every walk). `what` takes up to two numbers. */
typedef struct where {
  const char *what;
  unsigned long x, y;
} where;
const char *runner_where_text(const where *w, char *buf, size_t len);

/* check.c */
void runner_report(runner *r, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int runner_check_identity(runner *r, size_t cell, oracle_obj o, const where *at);
void runner_give_identity(runner *r, size_t cell, oracle_obj o);
int runner_check_field(runner *r, oracle_field want, fuzz_field_kind got, int64_t value,
                       size_t cell, const where *at);
void runner_collect(runner *r, fuzz_collect_kind kind, unsigned budget);
/* The backend's finding outside its check (backend.h: events.finding). */
void runner_on_finding(void *user, const fuzz_finding *f);

/* ops.c */
void runner_on_finalize(void *user, uint64_t token);
void runner_trace_op(runner *r, const fuzz_op *op);
void runner_run_op(runner *r, const fuzz_op *op);

#endif /* FUZZ_ORACLE_RUNNER_H */
