/* Running a program's parts on threads, one per domain (the schedule target, and its free-thread
 * stress): splitting the program, the threads, the scheduler's configuration and names, and what
 * `spawn` and `terminate dN` mean there. Calls down only: semantics.h, verdict.h. */
#include "fuzz/driver/threads.h"

#include <pthread.h>
#include <stdlib.h>

#include "fuzz/driver/semantics.h"
#include "fuzz/driver/verdict.h"
#include "fuzz/lang/text.h"
#include "fuzz/sched/plan.h"
#include "fuzz/sched/sched.h"
#include "gc/heap.h" /* the collector's locks, named in the printed interleaving */

static void name_domain(driver *d, int k);
static void label_thread(driver *d, int thread, int domain);

/* ---- Running on threads -------------------------------------------------------------------- */

/* FUZZ_SCHEDULED and FUZZ_FREE_THREADS: the program is split into one part per domain, and the
 * scheduler configured, by its plan (fuzz/sched/plan.h: `on dN` switches the part and runs
 * nothing, `terminate dN` goes to dN's own part, `pct` and `choose` configure the scheduler).
 * Domain N's thread starts when an op of another part spawns dN, runs its part in order, and at
 * its end leaves the domain in a blocking section (its frames stay roots) unless it terminated
 * it. Between two ops a running domain polls (gc_poll: a safepoint, and a scheduling point); a
 * blocked one, whose ops are skipped, still passes a scheduling point per op, so the others run
 * while it is blocked. */
typedef struct thread_plan {
  driver *d;
  int domain;
  fuzz_op *ops;
  size_t count;
  int started;
} thread_plan;

/* FUZZ_FREE_THREADS: one op at a time holds the turn, taken inside a blocking section so that a
 * collection never waits for a thread that waits for the turn. The model and the driver's own
 * state are then touched by one thread at a time; the collector's threads still race. */
static void take_turn(driver *d, const mutator *m) {
  if (d->opt->threads != FUZZ_FREE_THREADS) return;
  if (m->dom != NULL) gc_enter_blocking(m->dom);
  pthread_mutex_lock(&d->turn);
  if (m->dom != NULL) gc_leave_blocking(m->dom);
}

static void give_turn(driver *d) {
  if (d->opt->threads == FUZZ_FREE_THREADS) pthread_mutex_unlock(&d->turn);
}

static void print_op(driver *d, const mutator *m, const fuzz_op *op) {
  if (d->opt->trace == NULL) return;
  char text[FUZZ_OP_TEXT_MAX];
  fprintf(d->opt->trace, "%4zu  d%d  %s\n", op->index, m->on,
          fuzz_op_format(op, text, sizeof text));
}

static void spawn_thread(driver *d, mutator *m, int n);
static void terminate_self(driver *d, mutator *m);

/* An op on its domain's thread: `spawn dN` also starts dN's thread, `terminate dN` (in dN's own
 * part) ends the domain and its thread; every other op means what it means on one thread. A
 * blocked domain runs neither (drv_run_op skips them). */
static void run_op(driver *d, mutator *m, const fuzz_op *op) {
  if (m->dom != NULL && op->code == FUZZ_OP_SPAWN) {
    spawn_thread(d, m, op->args[0].a);
  } else if (m->dom != NULL && op->code == FUZZ_OP_TERMINATE && op->args[0].a != 0) {
    terminate_self(d, m);
  } else {
    drv_run_op(d, m, op);
  }
}

static void domain_thread(void *arg) {
  thread_plan *p = arg;
  driver *d = p->d;
  mutator *m = &d->muts[p->domain];
  drv_thread_mutator = m;
  gc_domain *dom = d->domains[p->domain];
  gc_leave_blocking(dom); /* born in a blocking section (d0: put there before the run) */
  m->dom = dom;
  if (p->domain != 0) gc_frame_push(dom, &m->slot_frame, m->slots, FUZZ_SLOTS);
  for (size_t i = 0; i < p->count && !m->terminated; i++) {
    const fuzz_op *op = &p->ops[i];
    take_turn(d, m);
    m->op = op;
    print_op(d, m, op);
    run_op(d, m, op);
    m->op = NULL;
    m->last_op = op;
    d->res->ops++;
    give_turn(d);
    if (m->dom != NULL)
      gc_poll(m->dom);
    else
      fuzz_sched_point(GC_PLAT_SAFEPOINT, NULL);
  }
  if (m->dom != NULL) gc_enter_blocking(m->dom);
  m->dom = NULL;
  m->last_op = NULL;
}

/* spawn dN from another domain's part: the domain, then its thread, once per program. */
static void spawn_thread(driver *d, mutator *m, int n) {
  thread_plan *p = &d->plans[n];
  if (n == 0 || p->started) return;
  /* Claimed before the call: gc_domain_spawn has scheduling points, and another domain's
   * `spawn dN` may run while this one waits at one; it must find dN taken, not spawn it too. */
  p->started = 1;
  drv_op_spawn(d, m, n);
  if (d->domains[n] == NULL) return; /* refused: out of memory; dN's part never runs */
  name_domain(d, n);
  int thread = fuzz_sched_spawn(d->sched, domain_thread, p);
  if (thread < 0) {
    /* No thread for it: the domain stays in its blocking section, as if its part were empty. */
    p->count = 0;
    return;
  }
  label_thread(d, thread, n);
}

/* terminate dN in dN's own part: its frames and slots stop being roots (terminating drops
 * them) for good, the domain ends, and so does the thread. */
static void terminate_self(driver *d, mutator *m) {
  for (int k; (k = drv_innermost_frame(m, m->on)) >= 0;) drv_release_frame(d, m, k);
  /* Retired, not just cleared: a resurrecting finalizer aimed at one of its slots must store
   * nothing there now (the frame is gone). */
  /* Its global cells would outlive the domain; a thread that ends lets go of them. */
  for (int g = 0; g < FUZZ_GLOBALS; g++) {
    if (m->registered[g]) drv_op_unroot(d, m, g);
  }
  for (size_t r = 0; r < BANK_ROOTS; r++) gc_model_root_retire(d->model, m->root_base + r);
  drv_expect_error(d, m, gc_domain_terminate(m->dom), GC_OK, "gc_domain_terminate");
  d->domains[m->on] = NULL;
  m->dom = NULL;
  m->terminated = 1;
}

/* The program's plan (fuzz/sched/plan.h: its parts and the scheduler's configuration), the
 * driver's own settings added: free threads, the trace. Each domain's thread_plan runs its part,
 * a slice of plan->ops. Returns 0 when out of memory (then nothing is held). */
static int plan_threads(driver *d, const uint8_t *data, size_t size, fuzz_sched_plan *plan) {
  if (!fuzz_sched_plan_make(plan, d->opt->ops, data, size)) return 0;
  d->plans = calloc(FUZZ_DOMAINS, sizeof *d->plans);
  if (d->plans == NULL) {
    fuzz_sched_plan_free(plan);
    return 0;
  }
  if (d->opt->threads == FUZZ_FREE_THREADS) plan->cfg.mode = FUZZ_SCHED_FREE;
  plan->cfg.trace = d->opt->trace;
  for (int k = 0; k < FUZZ_DOMAINS; k++) {
    d->plans[k] = (thread_plan){
        .d = d, .domain = k, .ops = plan->ops + plan->start[k], .count = plan->count[k]};
  }
  return 1;
}

static void label_thread(driver *d, int thread, int domain) {
  static const char *const labels[FUZZ_DOMAINS] = {"d0", "d1", "d2", "d3"};
  fuzz_sched_label(d->sched, thread, labels[domain]);
}

static void name_domain(driver *d, int k) {
  static const char *const names[FUZZ_DOMAINS] = {"domain d0", "domain d1", "domain d2",
                                                  "domain d3"};
  static const char *const states[FUZZ_DOMAINS] = {"d0.state", "d1.state", "d2.state", "d3.state"};
  fuzz_sched_name(d->sched, d->domains[k], names[k]);
  fuzz_sched_name(d->sched, &d->domains[k]->state, states[k]);
}

static void name_objects(driver *d) {
  gc_heap *h = d->heap;
  fuzz_sched_name(d->sched, &h->stw_lock, "stw_lock");
  fuzz_sched_name(d->sched, &h->pool_lock, "pool_lock");
  fuzz_sched_name(d->sched, &h->roots_lock, "roots_lock");
  fuzz_sched_name(d->sched, &h->work.lock, "work.lock");
  fuzz_sched_name(d->sched, &h->stw_requested, "stw_requested");
  fuzz_sched_name(d->sched, &h->barrier, "stw barrier");
  /* The protocol words whose loads and stores are scheduling points (gc/platform.h). */
  fuzz_sched_name(d->sched, &h->domain_count, "domain_count");
  fuzz_sched_name(d->sched, &h->work.done, "work.done");
  fuzz_sched_name(d->sched, &h->work.idle, "work.idle");
  fuzz_sched_name(d->sched, &h->work.full_count, "work.full_count");
  fuzz_sched_name(d->sched, &h->work.overflowed, "work.overflowed");
  fuzz_sched_name(d->sched, &h->running_finalizers, "running_finalizers");
  fuzz_sched_name(d->sched, &h->large_index.stale, "large_index.stale");
  fuzz_sched_name(d->sched, &h->free_pools, "free_pools");
  /* Incremental marking: the phase, the slicing count, the shade marker's lock. */
  fuzz_sched_name(d->sched, &h->marking, "marking");
  fuzz_sched_name(d->sched, &h->work.slicing, "work.slicing");
  fuzz_sched_name(d->sched, &h->shade_lock, "shade_lock");
  name_domain(d, 0);
}

/* Run the program's parts on their threads. Returns 1 when every thread ended, 0 when the run
 * is stuck (a deadlock or livelock of the collector, reported as a violation; the threads stay
 * parked and the heap cannot be used again) or out of memory (-1). */
int drv_run_threads(driver *d, const uint8_t *data, size_t size) {
  fuzz_sched_plan plan;
  if (!plan_threads(d, data, size, &plan)) return -1;
  d->sched = fuzz_sched_create(&plan.cfg);
  if (d->sched == NULL) {
    free(d->plans);
    d->plans = NULL;
    fuzz_sched_plan_free(&plan);
    return -1;
  }
  pthread_mutex_init(&d->turn, NULL);
  name_objects(d);
  d->plans[0].started = 1;
  gc_enter_blocking(d->domains[0]); /* thread 0 leaves it */
  label_thread(d, fuzz_sched_spawn(d->sched, domain_thread, &d->plans[0]), 0);
  int status = fuzz_sched_run(d->sched);
  mutator *m = &d->muts[0]; /* this thread's: the final checks run on it */
  drv_thread_mutator = m;
  d->res->sched_steps = fuzz_sched_steps(d->sched);
  d->res->sched_switches = fuzz_sched_switches(d->sched);
  d->res->sched_hash = fuzz_sched_hash(d->sched);
  if (d->opt->interleaving != NULL) fuzz_sched_print_interleaving(d->sched, d->opt->interleaving);
  int ok = status == FUZZ_SCHED_OK;
  if (!ok) {
    drv_violation(d, m,
                  status == FUZZ_SCHED_DEADLOCK ? GC_VK_DRIVER_DEADLOCK : GC_VK_DRIVER_LIVELOCK,
                  "every thread waits (see the scheduler's report above): the collector is "
                  "stuck");
  } else {
    fuzz_sched_destroy(d->sched);
    d->sched = NULL;
    pthread_mutex_destroy(&d->turn);
    /* The program ends on d0, running, on this thread. */
    gc_leave_blocking(d->domains[0]);
    m->dom = d->domains[0];
    d->blocked[0] = 0;
  }
  free(d->plans);
  d->plans = NULL;
  fuzz_sched_plan_free(&plan); /* the one array of every part, and the choice bytes */
  return ok;
}
