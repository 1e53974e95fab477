/* The runner's state (run.h): private to fuzz/oracle. Its files, each calling only those below:
 *
 *   run.c     a program from its first op to the final checks (run.h's entry points)
 *   threads.c a threaded run: the program's parts, one a domain, each on its own thread under
 *             fuzz/sched's controlled scheduler
 *   ops.c     what each op does to the backend and the model; finalizers and their bodies;
 *             domains
 *   check.c   the checks: findings as verdict lines, identities and fields, the graph walk,
 *             what follows a collection
 *   opset.c   which ops a backend's capabilities allow (opset.h)
 *   model.c   the shadow graph (model.h), which knows no backend
 */
#ifndef FUZZ_ORACLE_RUNNER_H
#define FUZZ_ORACLE_RUNNER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "fuzz/oracle/model.h"
#include "fuzz/oracle/options.h"

/* The backend's cells come in banks (backend.h: cell_banks): one for a one-thread run, one a
 * domain for a threaded run. In a bank, by what the program calls them: the slots, the local
 * frames' snapshots, the globals, and the scratch cells the checks load into (a walk of the
 * reachable graph keeps one per level of its depth-first path). */
enum {
  SCRATCH = 64,
  BANK_SLOTS = 0,
  BANK_FRAMES = BANK_SLOTS + FUZZ_SLOTS,
  BANK_GLOBALS = BANK_FRAMES + FUZZ_FRAMES * FUZZ_SLOTS,
  BANK_SCRATCH = BANK_GLOBALS + FUZZ_GLOBALS,
  BANK_CELLS = BANK_SCRATCH + SCRATCH,
  THREAD_CELLS = BANK_CELLS * FUZZ_DOMAINS,     /* a threaded run's cells */
  RANGE_WORDS = FUZZ_RANGES * FUZZ_RANGE_WORDS, /* ORACLE_RANGE_WORDS */
};

/* A mutator: what the ops of one thread stand on. A one-thread run has one, which moves from
 * domain to domain with `on`; a threaded run one a domain, on that domain's thread, with a bank
 * of its own. ops.c and check.c act on the calling thread's (runner_current). */
typedef struct runner_mut {
  size_t bank;         /* its first cell */
  unsigned on;         /* the domain its calls run on */
  const fuzz_op *op;   /* the op running; NULL in the final checks */
  int frames;          /* local frames pushed */
  int body_depth;      /* a finalizer body running: its depth (0: the program's own ops) */
  oracle_obj fin_self; /* ... and its block */
  /* --trace: the moves reported to the compact op this thread runs, and where the other
   * threads stood when the first came (ops.c: moved_to) */
  size_t moves;
  char others[256];
} runner_mut;

struct thread_plan;

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
  size_t cells;     /* every bank's; FUZZ_CELL_SELF is the next */
  size_t cell_self; /* FUZZ_CELL_SELF */
  runner_mut muts[FUZZ_DOMAINS];
  unsigned fail_window; /* allocating calls left in which the injected failure must come;
                         * 0: none due (backend.h: fail_after) */
  int fail_maybe_spent; /* a failure in the window that a limit may explain (ops.c) */
  int tuned;            /* a tune op ran: the backend's limits may refuse an allocation */
  /* Domains (FUZZ_CAP_DOMAINS): which exist, and which are in a blocking section by `block`
   * (FUZZ_CAP_BLOCKING). */
  unsigned char spawned[FUZZ_DOMAINS];
  unsigned char blocked[FUZZ_DOMAINS];
  unsigned char attached[FUZZ_DOMAINS]; /* threaded: a thread runs the domain's part now */
  size_t limit_bytes; /* FUZZ_CAP_LIMIT: the heap limit set (0: none): allocations may fail */
  /* A threaded run (threads.c). The checks that compare the model and the heap whole (the graph
   * walk, a full collection's) need every other thread between two ops, since an op changes
   * the heap before the model: `inflight` counts the threads inside an op, `op_events` the ops
   * begun and ended, so a collection during which no other thread moved can tell. */
  int threaded;
  /* spawn dN on a domain's thread: the domain, then its thread, once per program (threads.c
   * sets it; ops.c calls it, so the ops need not know how threads are made). */
  void (*spawn_thread)(struct runner *r, unsigned d);
  struct thread_plan *plans;
  void *sched; /* fuzz_sched */
  /* Free threads (oracle_options.free_threads): the turn an op holds, taken with the domain
   * parked in a blocking section, so a collection never waits for a thread that waits for it. */
  pthread_mutex_t turn;
  unsigned inflight;
  uint64_t op_events;
  int walk_due; /* a graph walk owed since a collection, run at the next op boundary with no
                 * other thread inside an op */
  struct {
    size_t count; /* findings of a full collection's whole-heap checks, held (check.c) */
    char kind[48];
    char message[512];
  } held;
  uintptr_t ranges[RANGE_WORDS];
  uint8_t *seen; /* the graph walk's visited objects */
  size_t seen_cap;
} runner;

/* The calling thread's mutator. One thread: the one mutator, whichever thread calls (a backend
 * may call the events from threads of its own, as bdwgc's domains do). Threaded: the calling
 * thread's (runner_current: set by threads.c on each domain's thread, by run.c on the thread
 * that runs the program), so a threaded backend calls the events from the thread whose call
 * led to them. */
extern _Thread_local runner_mut *runner_current;
static inline runner_mut *runner_me(const runner *r) {
  return r->threaded ? runner_current : (runner_mut *)&r->muts[0];
}

/* Cells of the calling thread's bank: slot s, frame k's snapshot of slot s, global g, the
 * scratch cell of depth i. */
static inline size_t slot_cell(const runner *r, int s) {
  return runner_me(r)->bank + BANK_SLOTS + (size_t)s;
}
static inline size_t frame_cell(const runner *r, int k, int s) {
  return runner_me(r)->bank + BANK_FRAMES + (size_t)k * FUZZ_SLOTS + (size_t)s;
}
static inline size_t global_cell(const runner *r, int g) {
  return runner_me(r)->bank + BANK_GLOBALS + (size_t)g;
}
static inline size_t scratch_cell(const runner *r, int i) {
  return runner_me(r)->bank + BANK_SCRATCH + (size_t)i;
}

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
/* What follows a collection the runner made some other way (compact): finalizers, the deep
 * check, the walk of a major one (one thread: ops do not overlap it). */
void runner_collected(runner *r, fuzz_collect_kind kind);
/* The backend's deep check now (FUZZ_CAP_DEEP_CHECK), its findings reported. */
void runner_deep_check(runner *r);
/* The backend's finding outside its check (backend.h: events.finding). */
void runner_on_finding(void *user, const fuzz_finding *f);

/* The graph walk owed since a collection, if one is and no other thread is inside an op. */
void runner_walk_if_due(runner *r);

/* ops.c */
void runner_on_finalize(void *user, uint64_t token);
void runner_trace_op(runner *r, const fuzz_op *op);
void runner_run_op(runner *r, const fuzz_op *op);
/* The domain the program is on leaves its blocking section, if `block` left it in one. */
void runner_unblock(runner *r);

/* threads.c. Run the program on one thread a domain (FUZZ_CAP_THREADS). Returns 1 when every
 * thread ended, 0 when the scheduler found the collector stuck (reported), -1 out of memory. */
int runner_run_threads(runner *r);

#endif /* FUZZ_ORACLE_RUNNER_H */
