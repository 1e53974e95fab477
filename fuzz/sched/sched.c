/* The controlled scheduler; see sched.h for the model and INV-SCHED-1.
 *
 * Every managed thread owns a baton (a semaphore). The running thread does the scheduler's work
 * itself at each of its steps: it records the step, chooses who runs next and, when that is
 * another thread, posts that thread's baton and waits on its own. So all scheduler state below
 * is touched by one thread at a time, handed over through the semaphores, and needs no lock
 * (FREE mode aside, where only spawning takes one).
 */
#define _GNU_SOURCE
#include "fuzz/sched/sched.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_HELD = 64, /* mutexes held at once by managed threads */
  MAX_NAMES = 64,
  NAME_BYTES = 32,
  MAX_CHANGES = 15, /* PCT change points: depth up to 16 */
  WORK_STEPS = 16,  /* a thread passing this many steps without a spin turn makes progress */
  BATON_TRIES = 10, /* yields before sleeping on a baton (see baton_wait) */
  AT_RUNNING = 200, /* thread positions besides the step kinds */
  AT_START = 201,
};

enum {
  DEFAULT_DEPTH = 3,
  DEFAULT_PCT_STEPS = 2000,
  DEFAULT_LIVELOCK_STEPS = 100000,
  DEFAULT_LOG_STEPS = 65536,
};

typedef struct worker worker;

typedef struct sched_thread {
  fuzz_sched *sched;
  void (*fn)(void *);
  void *arg;
  worker *worker;      /* the OS thread it runs on (see "Workers") */
  sem_t baton;         /* posted once each time the thread is resumed */
  jmp_buf abandon_env; /* where an abandoned thread leaves its program */
  int index;
  int ended; /* its program returned (or was abandoned) */
  int joined;
  int abandon; /* set by destroy before the post that wakes a parked thread */
  int at_kind; /* where it stands while not running: a step kind, AT_START, AT_RUNNING */
  const void *at_object;
  int64_t priority; /* PCT: higher runs first */
  uint32_t steps_since_spin;
  char label[8]; /* how reports and the interleaving name it: "t2", or fuzz_sched_label's */
} sched_thread;

typedef struct held_mutex {
  const void *mutex;
  int owner;
} held_mutex;

typedef struct object_name {
  const void *object;
  char name[NAME_BYTES];
} object_name;

struct fuzz_sched {
  fuzz_sched_config cfg; /* defaults filled in */
  sched_thread threads[FUZZ_SCHED_MAX_THREADS];
  int n_threads;
  pthread_mutex_t spawn_lock; /* FREE mode: n_threads and threads[] grow while threads run */
  sem_t done;                 /* posted once: every thread ended, or the run is stuck */
  int running;                /* run started */
  int status;                 /* fuzz_sched_status */

  held_mutex held[MAX_HELD]; /* the owner table (INV-SCHED-1) */
  int n_held;
  object_name names[MAX_NAMES];
  int n_names;

  uint64_t steps;
  uint64_t switches;
  uint64_t hash;
  fuzz_sched_step *log;     /* ring: step i at log[(i - 1) % log_steps], a power of two */
  uint64_t spin_only_steps; /* steps since some thread last made progress */

  /* PCT: change points sorted by step; change_label[i] is the priority it gives. */
  uint64_t change_step[MAX_CHANGES];
  int64_t change_label[MAX_CHANGES];
  int n_changes;
  int next_change;

  /* BYTES: the pair being played, if any. */
  size_t byte_pos;
  int pair_active;
  unsigned run_left;
  unsigned choice;
};

/* The thread the calling OS thread is, when the scheduler manages it. */
static __thread sched_thread *self;

/* One scheduled run at a time: the hook is process-wide. */
static int run_active;

/* ---- Small helpers ---- */

static GC_WRAPS uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* sem_wait, resumed when a signal interrupts it (libFuzzer's timers send some). */
static void sem_wait_through_signals(sem_t *sem) {
  while (sem_wait(sem) != 0) {
    if (errno != EINTR) abort();
  }
}

/* Waits for a post. First a few tries, each giving the core away: the thread just handed the
 * baton is often queued on this very core (the kernel wakes a thread near its waker), and a
 * spin-wait ping-pong hands the baton back within microseconds, found here without a futex
 * sleep. Measured on 2 vCPUs: a ping-pong switch 1.3 us (2 us sleeping at once, 0.6-7 us
 * spinning on pause, which also slowed the collector under the scheduler by a fifth). */
static void baton_wait(sem_t *sem) {
  for (int i = 0; i < BATON_TRIES; i++) {
    if (sem_trywait(sem) == 0) return;
    sched_yield();
  }
  sem_wait_through_signals(sem);
}

/* ---- Workers ----
 *
 * Managed threads run on workers: OS threads kept for the life of the process and reused, run
 * after run. A fuzz target runs thousands of short programs a second, and creating, starting
 * and ending a thread each time (its stack faulted in, the sanitizers' per-thread state and
 * shadow built and torn down) cost about a third of the schedule target's time. A worker is idle
 * (on the idle list) or bound to one sched_thread from its spawn until its join; it keeps no
 * state of its own between jobs (trampoline sets and clears the thread-local `self`).
 */
struct worker {
  sem_t go;       /* posted once per job */
  sem_t finished; /* posted when the job's trampoline has returned */
  sched_thread *job;
  worker *next_idle;
};

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static worker *idle_workers;

static void *trampoline(void *arg);

/* A process forked from one with workers has none of their threads (fork copies only the thread
 * that called it): the child's idle list is emptied, its records kept on a list of their own
 * (memory only, never run again, still reachable for LeakSanitizer), so that the child starts new
 * workers instead of waiting on threads that are not there. AFL++'s fork server forks each batch
 * of runs from one process whose LLVMFuzzerInitialize already ran a scheduled program. Forks
 * happen between programs, when every worker is idle. */
static worker *forked_away;

static void forget_workers_after_fork(void) {
  while (idle_workers != NULL) {
    worker *w = idle_workers;
    idle_workers = w->next_idle;
    w->next_idle = forked_away;
    forked_away = w;
  }
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void install_atfork(void) { pthread_atfork(NULL, NULL, forget_workers_after_fork); }

static void *worker_main(void *arg) {
  worker *w = arg;
  for (;;) {
    sem_wait_through_signals(&w->go);
    trampoline(w->job);
    sem_post(&w->finished);
  }
  return NULL;
}

/* Binds an idle worker (or a new one) to t and starts it; 0 when no thread can be created. */
static int worker_start(sched_thread *t) {
  pthread_mutex_lock(&idle_lock);
  worker *w = idle_workers;
  if (w != NULL) idle_workers = w->next_idle;
  pthread_mutex_unlock(&idle_lock);
  if (w == NULL) {
    pthread_once(&atfork_once, install_atfork);
    w = calloc(1, sizeof *w);
    if (w == NULL) return 0;
    sem_init(&w->go, 0, 0);
    sem_init(&w->finished, 0, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t unused;
    int err = pthread_create(&unused, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (err != 0) {
      sem_destroy(&w->go);
      sem_destroy(&w->finished);
      free(w);
      return 0;
    }
  }
  w->job = t;
  t->worker = w;
  sem_post(&w->go);
  return 1;
}

/* Waits until t's program has returned and gives its worker back. */
static void worker_join(sched_thread *t) {
  worker *w = t->worker;
  sem_wait_through_signals(&w->finished);
  t->worker = NULL;
  t->joined = 1;
  pthread_mutex_lock(&idle_lock);
  w->next_idle = idle_workers;
  idle_workers = w;
  pthread_mutex_unlock(&idle_lock);
}

static FILE *report_file(const fuzz_sched *s) { return s->cfg.trace ? s->cfg.trace : stderr; }

const char *fuzz_sched_kind_name(int kind) {
  switch (kind) {
    case GC_PLAT_LOCK: return "lock";
    case GC_PLAT_UNLOCK: return "unlock";
    case GC_PLAT_TRYLOCK: return "trylock";
    case GC_PLAT_ATOMIC: return "atomic";
    case GC_PLAT_BARRIER: return "barrier";
    case GC_PLAT_SPIN: return "spin";
    case GC_PLAT_SAFEPOINT: return "safepoint";
    case GC_PLAT_LOAD: return "load";
    case GC_PLAT_STORE: return "store";
    case GC_PLAT_MARK: return "mark";
    case FUZZ_SCHED_SPAWN: return "spawn";
    case FUZZ_SCHED_END: return "end";
    case AT_START: return "start";
    default: return "?";
  }
}

const char *fuzz_sched_object_name(const fuzz_sched *s, const void *object) {
  for (int i = 0; i < s->n_names; i++) {
    if (s->names[i].object == object) return s->names[i].name;
  }
  return "?";
}

void fuzz_sched_name(fuzz_sched *s, const void *object, const char *name) {
  int i = 0;
  while (i < s->n_names && s->names[i].object != object) i++;
  if (i == MAX_NAMES) return; /* reports say "?" for it */
  if (i == s->n_names) s->n_names++;
  s->names[i].object = object;
  snprintf(s->names[i].name, NAME_BYTES, "%s", name);
}

/* ---- The owner table ---- */

static int owner_of(const fuzz_sched *s, const void *mutex) {
  for (int i = 0; i < s->n_held; i++) {
    if (s->held[i].mutex == mutex) return s->held[i].owner;
  }
  return -1;
}

static void owner_set(fuzz_sched *s, const void *mutex, int owner) {
  if (s->n_held == MAX_HELD) {
    fprintf(report_file(s), "sched: more than %d mutexes held at once\n", MAX_HELD);
    abort();
  }
  s->held[s->n_held].mutex = mutex;
  s->held[s->n_held].owner = owner;
  s->n_held++;
}

static void owner_clear(fuzz_sched *s, const void *mutex) {
  for (int i = 0; i < s->n_held; i++) {
    if (s->held[i].mutex == mutex) {
      s->held[i] = s->held[--s->n_held];
      return;
    }
  }
}

static int is_runnable(const fuzz_sched *s, const sched_thread *t) {
  if (t->ended) return 0;
  if (t->at_kind == GC_PLAT_LOCK) return owner_of(s, t->at_object) < 0;
  return 1;
}

/* ---- Create, destroy ---- */

/* The step log of the last destroyed scheduler, kept for the next: at the default 65,536 steps
 * the log is 1 MiB, and mapping, faulting in and unmapping it for every run was a tenth of the
 * schedule target's time. Any number of schedulers may exist: one spare is kept (the
 * newest given back), and taken only by a scheduler that wants its size. */
static fuzz_sched_step *spare_log;
static size_t spare_log_steps;
static pthread_mutex_t spare_log_lock = PTHREAD_MUTEX_INITIALIZER;

static fuzz_sched_step *log_take(size_t steps) {
  fuzz_sched_step *log = NULL;
  pthread_mutex_lock(&spare_log_lock);
  if (spare_log != NULL && spare_log_steps == steps) {
    log = spare_log;
    spare_log = NULL;
  }
  pthread_mutex_unlock(&spare_log_lock);
  return log != NULL ? log : malloc(steps * sizeof *log);
}

static void log_give(fuzz_sched_step *log, size_t steps) {
  pthread_mutex_lock(&spare_log_lock);
  fuzz_sched_step *old = spare_log;
  spare_log = log;
  spare_log_steps = steps;
  pthread_mutex_unlock(&spare_log_lock);
  free(old);
}

fuzz_sched *fuzz_sched_create(const fuzz_sched_config *cfg) {
  fuzz_sched *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->cfg = *cfg;
  if (s->cfg.depth == 0) s->cfg.depth = DEFAULT_DEPTH;
  if (s->cfg.depth > MAX_CHANGES + 1) s->cfg.depth = MAX_CHANGES + 1;
  if (s->cfg.pct_steps == 0) s->cfg.pct_steps = DEFAULT_PCT_STEPS;
  if (s->cfg.livelock_steps == 0) s->cfg.livelock_steps = DEFAULT_LIVELOCK_STEPS;
  if (s->cfg.log_steps == 0) s->cfg.log_steps = DEFAULT_LOG_STEPS;
  size_t log_steps = 1; /* a power of two: the ring index is a mask */
  while (log_steps < s->cfg.log_steps) log_steps <<= 1;
  s->cfg.log_steps = log_steps;
  s->log = log_take(s->cfg.log_steps);
  if (s->log == NULL || pthread_mutex_init(&s->spawn_lock, NULL) != 0) {
    free(s->log);
    free(s);
    return NULL;
  }
  sem_init(&s->done, 0, 0);
  s->hash = GC_FNV1A_BASIS;

  /* PCT: initial priorities are a random permutation of depth .. depth+MAX-1, all above every
   * change-point label 1 .. depth-1; thread i gets entry i whenever it is spawned. */
  uint64_t rng = s->cfg.seed;
  int64_t prio[FUZZ_SCHED_MAX_THREADS];
  for (int i = 0; i < FUZZ_SCHED_MAX_THREADS; i++) prio[i] = (int64_t)s->cfg.depth + i;
  for (int i = FUZZ_SCHED_MAX_THREADS - 1; i > 0; i--) {
    int j = (int)(splitmix64(&rng) % (uint64_t)(i + 1));
    int64_t t = prio[i];
    prio[i] = prio[j];
    prio[j] = t;
  }
  for (int i = 0; i < FUZZ_SCHED_MAX_THREADS; i++) s->threads[i].priority = prio[i];
  /* d-1 distinct change points in [1, k]; the i-th drawn gives priority i. */
  uint64_t k = s->cfg.pct_steps;
  int want = (int)s->cfg.depth - 1;
  if ((uint64_t)want > k) want = (int)k;
  while (s->n_changes < want) {
    uint64_t step = 1 + splitmix64(&rng) % k;
    int dup = 0;
    for (int i = 0; i < s->n_changes; i++) dup |= s->change_step[i] == step;
    if (dup) continue;
    s->change_step[s->n_changes] = step;
    s->change_label[s->n_changes] = s->n_changes + 1;
    s->n_changes++;
  }
  for (int i = 1; i < s->n_changes; i++) { /* insertion sort by step */
    for (int j = i; j > 0 && s->change_step[j - 1] > s->change_step[j]; j--) {
      uint64_t ts = s->change_step[j];
      s->change_step[j] = s->change_step[j - 1];
      s->change_step[j - 1] = ts;
      int64_t tl = s->change_label[j];
      s->change_label[j] = s->change_label[j - 1];
      s->change_label[j - 1] = tl;
    }
  }
  return s;
}

void fuzz_sched_destroy(fuzz_sched *s) {
  if (s == NULL) return;
  /* Parked threads are woken one at a time, so still only one of them runs. */
  for (int i = 0; i < s->n_threads; i++) {
    sched_thread *t = &s->threads[i];
    if (t->joined) continue;
    if (!t->ended) {
      t->abandon = 1;
      sem_post(&t->baton);
    }
    worker_join(t);
  }
  for (int i = 0; i < s->n_threads; i++) sem_destroy(&s->threads[i].baton);
  sem_destroy(&s->done);
  pthread_mutex_destroy(&s->spawn_lock);
  log_give(s->log, s->cfg.log_steps);
  free(s);
}

/* ---- Steps and choices ---- */

static void record(fuzz_sched *s, int thread, int kind, const void *object) {
  s->steps++;
  fuzz_sched_step *e = &s->log[(s->steps - 1) & (s->cfg.log_steps - 1)];
  e->object = object;
  e->thread = (uint8_t)thread;
  e->kind = (uint8_t)kind;
  s->hash = gc_fnv1a(gc_fnv1a(s->hash, (uint64_t)thread), (uint64_t)kind);
}

static int preemptions_allowed(const fuzz_sched *s) {
  return s->cfg.step_limit == 0 || s->steps <= s->cfg.step_limit;
}

/* PCT: the highest-priority runnable thread, after this step's change point and yield. */
static int choose_pct(fuzz_sched *s, sched_thread *c, int yielding, int others) {
  if (s->next_change < s->n_changes && s->change_step[s->next_change] == s->steps) {
    if (preemptions_allowed(s)) c->priority = s->change_label[s->next_change];
    s->next_change++;
  }
  if (yielding && others > 0) {
    /* A yield, not a change point: below every other live thread, or PCT would livelock on a
     * thread waiting for a lower-priority one. */
    int64_t lowest = INT64_MAX;
    for (int i = 0; i < s->n_threads; i++) {
      const sched_thread *t = &s->threads[i];
      if (t != c && !t->ended && t->priority < lowest) lowest = t->priority;
    }
    c->priority = lowest - 1;
  }
  int best = -1;
  for (int i = 0; i < s->n_threads; i++) {
    const sched_thread *t = &s->threads[i];
    if (is_runnable(s, t) && (best < 0 || t->priority > s->threads[best].priority)) best = i;
  }
  return best;
}

/* BYTES: the pair being played decides when its run is over; otherwise keep the current thread
 * when it may go on, or take the next runnable one after it. */
static int choose_bytes(fuzz_sched *s, sched_thread *c, int keep_ok) {
  int cand[FUZZ_SCHED_MAX_THREADS];
  int n = 0;
  for (int i = 0; i < s->n_threads; i++) {
    if (is_runnable(s, &s->threads[i]) && (i != c->index || keep_ok)) cand[n++] = i;
  }
  if (n == 0) return -1;
  if (preemptions_allowed(s)) {
    if (!s->pair_active && s->byte_pos + 2 <= s->cfg.bytes_len) {
      s->run_left = s->cfg.bytes[s->byte_pos];
      s->choice = s->cfg.bytes[s->byte_pos + 1];
      s->byte_pos += 2;
      s->pair_active = 1;
    }
    if (s->pair_active) {
      if (s->run_left == 0) {
        s->pair_active = 0;
        return cand[s->choice % (unsigned)n];
      }
      s->run_left--;
    }
  }
  if (keep_ok) return c->index;
  for (int i = 0; i < n; i++) {
    if (cand[i] > c->index) return cand[i];
  }
  return cand[0];
}

/* Who runs after step `kind` of c: a thread index, or -1 when no live thread can run. */
static int choose(fuzz_sched *s, sched_thread *c, int kind) {
  int yielding = kind == GC_PLAT_SPIN || kind == GC_PLAT_BARRIER;
  int others = 0;
  for (int i = 0; i < s->n_threads; i++) {
    if (i != c->index && is_runnable(s, &s->threads[i])) others++;
  }
  if (s->cfg.mode == FUZZ_SCHED_PCT) return choose_pct(s, c, yielding, others);
  return choose_bytes(s, c, is_runnable(s, c) && !(yielding && others > 0));
}

/* The resumed thread's pending point takes effect (INV-SCHED-1): only one thread runs until its
 * next step, so a free mutex it is about to lock or try is its own. */
static void take(fuzz_sched *s, sched_thread *t) {
  if ((t->at_kind == GC_PLAT_LOCK || t->at_kind == GC_PLAT_TRYLOCK) &&
      owner_of(s, t->at_object) < 0) {
    owner_set(s, t->at_object, t->index);
  }
  t->at_kind = AT_RUNNING;
  t->at_object = NULL;
}

static void report_stuck(fuzz_sched *s) {
  FILE *out = report_file(s);
  if (s->status == FUZZ_SCHED_DEADLOCK) {
    fprintf(out, "sched: deadlock at step %llu: no live thread can run\n",
            (unsigned long long)s->steps);
  } else {
    fprintf(out, "sched: livelock at step %llu: every runnable thread only spun for %llu steps\n",
            (unsigned long long)s->steps, (unsigned long long)s->cfg.livelock_steps);
  }
  for (int i = 0; i < s->n_threads; i++) {
    const sched_thread *t = &s->threads[i];
    if (t->ended) {
      fprintf(out, "  %s ended\n", t->label);
    } else if (t->at_kind == GC_PLAT_LOCK && owner_of(s, t->at_object) >= 0) {
      int owner = owner_of(s, t->at_object);
      fprintf(out, "  %s waits at lock %s, held by %s%s\n", t->label,
              fuzz_sched_object_name(s, t->at_object), s->threads[owner].label,
              s->threads[owner].ended ? " (ended)" : "");
    } else if (t->at_kind == AT_START) {
      fprintf(out, "  %s not started\n", t->label);
    } else {
      fprintf(out, "  %s %s at %s %s\n", t->label,
              t->at_kind == GC_PLAT_SPIN || t->at_kind == GC_PLAT_BARRIER ? "spins" : "stands",
              fuzz_sched_kind_name(t->at_kind), fuzz_sched_object_name(s, t->at_object));
    }
  }
  fflush(out);
}

static void park(sched_thread *t) {
  baton_wait(&t->baton);
  if (t->abandon) longjmp(t->abandon_env, 1);
}

/* The run is over (status set): wake the caller of fuzz_sched_run. A stuck thread then parks
 * for good (until destroy abandons it); an ending one just returns. */
static void finish(fuzz_sched *s, sched_thread *c) {
  if (s->status != FUZZ_SCHED_OK) report_stuck(s);
  sem_post(&s->done);
  if (!c->ended) park(c);
}

/* One step of the running thread c. Returns when c runs again. */
static void step(fuzz_sched *s, sched_thread *c, int kind, const void *object) {
  record(s, c->index, kind, object);
  c->at_kind = kind;
  c->at_object = object;
  if (kind == GC_PLAT_UNLOCK) owner_clear(s, object);

  /* Livelock: every runnable thread only spinning for livelock_steps steps. A thread makes
   * progress when it spawns, ends, or passes WORK_STEPS steps without a spin turn: a spin loop
   * body (a trylock, a poll, a CAS) is shorter than that. */
  if (kind == GC_PLAT_SPIN || kind == GC_PLAT_BARRIER) {
    c->steps_since_spin = 0;
  } else if (++c->steps_since_spin > WORK_STEPS || kind == FUZZ_SCHED_SPAWN ||
             kind == FUZZ_SCHED_END) {
    s->spin_only_steps = 0;
  }
  if (++s->spin_only_steps >= s->cfg.livelock_steps) {
    s->status = FUZZ_SCHED_LIVELOCK;
    finish(s, c);
    return;
  }

  int next = choose(s, c, kind);
  if (next == c->index) { /* the fast path: no syscall */
    take(s, c);
    return;
  }
  if (next < 0) {
    int live = 0;
    for (int i = 0; i < s->n_threads; i++) live += !s->threads[i].ended;
    s->status = live ? FUZZ_SCHED_DEADLOCK : FUZZ_SCHED_OK;
    finish(s, c);
    return;
  }
  sched_thread *n = &s->threads[next];
  s->switches++;
  if (s->cfg.trace) {
    fprintf(s->cfg.trace, "sched: step %llu: %s -> %s (%s at %s %s)\n",
            (unsigned long long)s->steps, c->label, n->label, c->label, fuzz_sched_kind_name(kind),
            fuzz_sched_object_name(s, object));
  }
  take(s, n);
  sem_post(&n->baton);
  if (!c->ended) park(c);
}

void fuzz_sched_point(gc_plat_point point, const void *object) {
  sched_thread *t = self;
  if (t == NULL) return;
  step(t->sched, t, (int)point, object);
}

int fuzz_sched_self(void) { return self ? self->index : -1; }

/* ---- Threads ---- */

static void *trampoline(void *arg) {
  sched_thread *t = arg;
  fuzz_sched *s = t->sched;
  int scheduled = s->cfg.mode != FUZZ_SCHED_FREE;
  if (scheduled) self = t;
  baton_wait(&t->baton);
  if (t->abandon) { /* destroyed before it ever ran */
    t->ended = 1;
  } else if (setjmp(t->abandon_env) != 0) { /* abandoned while parked in step() */
    t->ended = 1;
  } else {
    t->fn(t->arg);
    t->ended = 1;
    /* Hands the baton on and returns at once: nothing of the scheduler is touched after it. */
    if (scheduled) step(s, t, FUZZ_SCHED_END, NULL);
  }
  self = NULL;
  return NULL;
}

int fuzz_sched_spawn(fuzz_sched *s, void (*fn)(void *), void *arg) {
  int free_mode = s->cfg.mode == FUZZ_SCHED_FREE;
  sched_thread *me = self;
  /* During a scheduled run only the running managed thread may change the thread table. */
  if (!free_mode && s->running && (me == NULL || me->sched != s)) return -1;
  pthread_mutex_lock(&s->spawn_lock);
  if (s->n_threads == FUZZ_SCHED_MAX_THREADS) {
    pthread_mutex_unlock(&s->spawn_lock);
    return -1;
  }
  int index = s->n_threads;
  sched_thread *t = &s->threads[index];
  t->sched = s;
  t->fn = fn;
  t->arg = arg;
  t->index = index;
  snprintf(t->label, sizeof t->label, "t%d", index);
  t->at_kind = AT_START;
  sem_init(&t->baton, 0, 0);
  if (!worker_start(t)) {
    sem_destroy(&t->baton);
    pthread_mutex_unlock(&s->spawn_lock);
    return -1;
  }
  s->n_threads++;
  int running = s->running;
  pthread_mutex_unlock(&s->spawn_lock);
  if (free_mode && running) sem_post(&t->baton);
  if (!free_mode && running) step(s, me, FUZZ_SCHED_SPAWN, NULL);
  return index;
}

static int run_free(fuzz_sched *s) {
  pthread_mutex_lock(&s->spawn_lock);
  s->running = 1;
  for (int i = 0; i < s->n_threads; i++) sem_post(&s->threads[i].baton);
  pthread_mutex_unlock(&s->spawn_lock);
  for (int i = 0;; i++) {
    pthread_mutex_lock(&s->spawn_lock);
    int more = i < s->n_threads;
    pthread_mutex_unlock(&s->spawn_lock);
    if (!more) break;
    worker_join(&s->threads[i]);
  }
  return FUZZ_SCHED_OK;
}

int fuzz_sched_run(fuzz_sched *s) {
  if (s->running) return FUZZ_SCHED_EINVAL;
  if (s->cfg.mode == FUZZ_SCHED_FREE) return run_free(s);
  int expected = 0;
  if (!__atomic_compare_exchange_n(&run_active, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    return FUZZ_SCHED_EINVAL;
  }
  s->running = 1;
  if (s->n_threads > 0) {
    gc_plat_set_hook(fuzz_sched_point);
    /* The first thread: PCT's highest priority; BYTES: thread 0 (the bytes decide from step 1). */
    int first = 0;
    if (s->cfg.mode == FUZZ_SCHED_PCT) {
      for (int i = 1; i < s->n_threads; i++) {
        if (s->threads[i].priority > s->threads[first].priority) first = i;
      }
    }
    take(s, &s->threads[first]);
    sem_post(&s->threads[first].baton);
    baton_wait(&s->done);
    gc_plat_set_hook(NULL);
    for (int i = 0; i < s->n_threads; i++) {
      sched_thread *t = &s->threads[i];
      if (t->ended) worker_join(t);
    }
  }
  __atomic_store_n(&run_active, 0, __ATOMIC_RELEASE);
  return s->status;
}

/* ---- The interleaving ---- */

uint64_t fuzz_sched_steps(const fuzz_sched *s) { return s->steps; }
uint64_t fuzz_sched_switches(const fuzz_sched *s) { return s->switches; }
uint64_t fuzz_sched_hash(const fuzz_sched *s) { return s->hash; }

int fuzz_sched_step_at(const fuzz_sched *s, uint64_t step, fuzz_sched_step *out) {
  if (step == 0 || step > s->steps || s->steps - step >= s->cfg.log_steps) return 0;
  *out = s->log[(step - 1) & (s->cfg.log_steps - 1)];
  return 1;
}

void fuzz_sched_print_interleaving(const fuzz_sched *s, FILE *out) {
  fprintf(out, "interleaving: %llu steps, %llu switches, hash %016llx\n",
          (unsigned long long)s->steps, (unsigned long long)s->switches,
          (unsigned long long)s->hash);
  uint64_t first = s->steps > s->cfg.log_steps ? s->steps - s->cfg.log_steps + 1 : 1;
  if (first > 1) fprintf(out, "  (steps 1-%llu not kept)\n", (unsigned long long)first - 1);
  uint64_t run_start = first;
  for (uint64_t i = first; i <= s->steps; i++) {
    fuzz_sched_step e, next;
    fuzz_sched_step_at(s, i, &e);
    if (i < s->steps && fuzz_sched_step_at(s, i + 1, &next) && next.thread == e.thread) continue;
    /* The run of steps run_start .. i belongs to one thread; i is where it stopped. */
    fprintf(out, "  %6llu  %-3s x%-5llu", (unsigned long long)run_start, s->threads[e.thread].label,
            (unsigned long long)(i - run_start + 1));
    if (e.kind == FUZZ_SCHED_END) {
      fprintf(out, " ended\n");
    } else {
      fprintf(out, " last: %s %s\n", fuzz_sched_kind_name(e.kind),
              e.object ? fuzz_sched_object_name(s, e.object) : "");
    }
    run_start = i + 1;
  }
}

void fuzz_sched_label(fuzz_sched *s, int thread, const char *label) {
  if (thread < 0 || thread >= s->n_threads) return;
  snprintf(s->threads[thread].label, sizeof s->threads[thread].label, "%s", label);
}
