/* A threaded run (runner.h): the program's parts, one a domain, each on a thread of its own under
 * fuzz/sched's controlled scheduler, through a backend with FUZZ_CAP_THREADS.
 *
 * The program is split, and the scheduler configured, as the schedule target does it, by its plan
 * (fuzz/sched/plan.h: `on dN` switches the part and runs nothing, `terminate dN` goes to dN's own
 * part, `pct` and `choose` configure the scheduler, by default PCT seeded by the program's bytes
 * so that every mutation is a new schedule). Domain N's thread starts when an op of another part
 * spawns dN: it attaches to dN (backend.h: domain_attach), runs its part in order on its own bank
 * of cells, and at the end detaches, leaving the domain parked with its bank still rooted, unless
 * it terminated it. Between two ops a thread passes the backend's safepoint (a scheduling point
 * where the collector has them) or the scheduler's own point; inside an op, the collector's own
 * points (gc/platform.h) switch.
 *
 * Only one thread runs at a time (fuzz/sched.h: INV-SCHED-1), so the model and the runner need no
 * lock; but a thread may be switched away from in the middle of an op, after the backend changed
 * and before the model followed. A domain's ops touch only its own bank, so each op still sees
 * its cells as the model says; the checks that compare the whole heap wait for a moment when no
 * other thread is inside an op (runner.h: inflight, op_events; check.c: collected).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/ops.h"
#include "fuzz/oracle/runner.h"
#include "fuzz/sched/plan.h"
#include "fuzz/sched/sched.h"

typedef struct thread_plan {
  runner *r;
  unsigned domain;
  fuzz_op *ops;
  size_t count;
  int started;
} thread_plan;

static const char *const labels[FUZZ_DOMAINS] = {"d0", "d1", "d2", "d3"};

static void name_object(void *user, const void *object, const char *what) {
  fuzz_sched_name(user, object, what);
}

/* The collector's objects in the printed interleaving, the domains among them as they exist. */
static void name_objects(runner *r) {
  if (r->b->sched_names != NULL) r->b->sched_names(r->h, name_object, r->sched);
}

/* Between two ops: the collector's safepoint where it has one and the domain runs, else the
 * scheduler's own point (a blocked domain still lets the others run, once an op). */
static void between_ops(runner *r, unsigned d) {
  if (r->b->safepoint != NULL && !r->blocked[d]) {
    r->b->safepoint(r->h);
  } else {
    fuzz_sched_point(GC_PLAT_SAFEPOINT, NULL);
  }
}

/* Free threads: an op runs whole under the turn, taken with the domain parked (detached: in a
 * blocking section), so the thread that holds it may stop the world while the others wait. */
static void take_turn(runner *r, unsigned d) {
  if (!r->opt->free_threads) return;
  r->b->domain_detach(r->h);
  pthread_mutex_lock(&r->turn);
  r->b->domain_attach(r->h, d);
}

static void give_turn(runner *r) {
  if (r->opt->free_threads) pthread_mutex_unlock(&r->turn);
}

static void domain_thread(void *arg) {
  thread_plan *p = arg;
  runner *r = p->r;
  unsigned d = p->domain;
  runner_mut *u = &r->muts[d];
  runner_current = u;
  /* Free threads: the runner's own state (attached, the report) is the turn holder's too. */
  if (r->opt->free_threads) pthread_mutex_lock(&r->turn);
  int attached = r->b->domain_attach(r->h, d);
  if (!attached) {
    runner_report(r, "oracle.unexpected-failure", "domain d%u's thread could not attach to it", d);
  }
  r->attached[d] = (unsigned char)attached;
  give_turn(r);
  if (!attached) {
    runner_current = NULL;
    return;
  }
  for (size_t i = 0; i < p->count; i++) {
    const fuzz_op *op = &p->ops[i];
    take_turn(r, d);
    r->inflight++;
    r->op_events++;
    u->op = op;
    runner_trace_op(r, op);
    runner_run_op(r, op);
    r->res->ops++;
    runner_walk_if_due(r); /* still counted inside: the walk needs no other thread there */
    u->op = NULL;
    r->inflight--;
    r->op_events++;
    int ended = d != 0 && !r->spawned[d]; /* it terminated itself, and its thread ends */
    give_turn(r);
    if (ended) break;
    between_ops(r, d);
  }
  /* Parked first: a turn waited for while running would let the holder's stop wait for it. */
  if (d == 0 || r->spawned[d]) r->b->domain_detach(r->h);
  if (r->opt->free_threads) pthread_mutex_lock(&r->turn);
  r->attached[d] = 0;
  give_turn(r);
  runner_current = NULL;
}

static void spawn_thread(runner *r, unsigned d) {
  thread_plan *p = &r->plans[d];
  /* Claimed before the call: spawning passes the collector's scheduling points, and another
   * domain's `spawn dN` may run meanwhile; it must find dN taken. */
  if (p->started) return;
  p->started = 1;
  int ok = r->b->domain_spawn(r->h, d);
  r->res->checks++;
  if (!ok) {
    if (!r->tuned) runner_report(r, "oracle.unexpected-failure", "spawning domain d%u failed", d);
    return;
  }
  r->spawned[d] = 1;
  name_objects(r);
  int thread = fuzz_sched_spawn(r->sched, domain_thread, p);
  if (thread < 0) {
    p->count = 0; /* no thread: the domain stays parked, as if its part were empty */
    return;
  }
  fuzz_sched_label(r->sched, thread, labels[d]);
}

int runner_run_threads(runner *r) {
  fuzz_sched_plan plan;
  if (!fuzz_sched_plan_make(&plan, r->set, r->data, r->size)) return -1;
  plan.cfg.trace = r->opt->trace;
  if (r->opt->free_threads) plan.cfg.mode = FUZZ_SCHED_FREE;
  pthread_mutex_init(&r->turn, NULL);
  r->plans = calloc(FUZZ_DOMAINS, sizeof *r->plans);
  if (r->plans == NULL || (r->sched = fuzz_sched_create(&plan.cfg)) == NULL) {
    free(r->plans);
    r->plans = NULL;
    fuzz_sched_plan_free(&plan);
    return -1;
  }
  for (unsigned k = 0; k < FUZZ_DOMAINS; k++) {
    r->plans[k] =
        (thread_plan){.r = r, .domain = k, .ops = plan.ops + plan.start[k], .count = plan.count[k]};
  }
  name_objects(r);
  r->spawn_thread = spawn_thread;
  r->plans[0].started = 1;
  r->b->domain_detach(r->h); /* d0 parked: its thread attaches */
  int thread = fuzz_sched_spawn(r->sched, domain_thread, &r->plans[0]);
  if (thread >= 0) fuzz_sched_label(r->sched, thread, labels[0]);
  int status = fuzz_sched_run(r->sched);
  runner_current = &r->muts[0]; /* this thread's again: the final checks run on d0 */
  r->res->sched_steps = fuzz_sched_steps(r->sched);
  r->res->sched_switches = fuzz_sched_switches(r->sched);
  r->res->sched_hash = fuzz_sched_hash(r->sched);
  if (r->opt->interleaving != NULL) fuzz_sched_print_interleaving(r->sched, r->opt->interleaving);
  int ok = status == FUZZ_SCHED_OK;
  if (!ok) {
    /* The threads stay parked where they wait, holding what they hold: the heap is left. */
    runner_report(r, status == FUZZ_SCHED_DEADLOCK ? "oracle.deadlock" : "oracle.livelock",
                  "every thread waits (see the scheduler's report above): the collector is stuck");
  } else {
    fuzz_sched_destroy(r->sched);
    r->b->domain_attach(r->h, 0);
  }
  r->sched = NULL;
  if (ok) pthread_mutex_destroy(&r->turn); /* stuck threads may hold it */
  free(r->plans);
  r->plans = NULL;
  fuzz_sched_plan_free(&plan); /* the one array of every part, and the choice bytes */
  return ok;
}
