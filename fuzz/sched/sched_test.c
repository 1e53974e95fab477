/* The controlled scheduler on small standalone programs (not the collector), whose locks and
 * atomics go through gc/platform.h so the hook fires as it does in the collector:
 *
 * - determinism: PCT and BYTES give the same interleaving (hash) for the same configuration, and
 *   different ones across seeds (FREE is real parallelism: it only has to complete);
 * - blocking: a waiter never runs inside a critical section; a trylock spin completes;
 * - deadlock (lock-order inversion, a lock held by an ended thread) and livelock are reported,
 *   naming the locks;
 * - spin: a thread spinning for a lower-priority thread's flag terminates under PCT;
 * - the proof: planted bugs of depth 2 and 3 are found by PCT at least as often as its bound
 *   1/(n * k^(d-1)) says, the depth-3 one never with d = 2, and both replay from hand-written
 *   bytes;
 * - cost: a kept step and a switch, printed (not asserted: timing is the machine's).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/sched/sched.h"
#include "gc/check.h"

/* One scheduling point of real work: an atomic read-modify-write, as the collector does. */
static void work(uintptr_t *counter) { gc_atomic_fetch_add(counter, 1); }

static fuzz_sched *make(fuzz_sched_mode mode, uint64_t seed, unsigned depth, uint64_t k) {
  fuzz_sched_config cfg = {
      .mode = mode, .seed = seed, .depth = depth, .pct_steps = k, .log_steps = 1024};
  fuzz_sched *s = fuzz_sched_create(&cfg);
  CHECK(s != NULL);
  return s;
}

static fuzz_sched *make_bytes(const uint8_t *bytes, size_t len) {
  fuzz_sched_config cfg = {
      .mode = FUZZ_SCHED_BYTES, .bytes = bytes, .bytes_len = len, .log_steps = 1024};
  fuzz_sched *s = fuzz_sched_create(&cfg);
  CHECK(s != NULL);
  return s;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- A mixed program: locks, atomics, a domain spawning a domain ---- */

typedef struct mix {
  fuzz_sched *s;
  gc_mutex m;
  uintptr_t atomics;
  int counter; /* under m */
} mix;

enum { MIX_ROUNDS = 20 };

static void mix_body(void *arg) {
  mix *x = arg;
  for (int i = 0; i < MIX_ROUNDS; i++) {
    gc_mutex_lock(&x->m);
    int seen = x->counter;
    work(&x->atomics); /* a point inside the critical section */
    x->counter = seen + 1;
    gc_mutex_unlock(&x->m);
  }
}

static void mix_spawner(void *arg) {
  mix *x = arg;
  mix_body(x);
  CHECK(fuzz_sched_spawn(x->s, mix_body, x) >= 0);
  mix_body(x);
}

/* Runs the mixed program under s; returns the interleaving hash. */
static uint64_t run_mix(fuzz_sched *s) {
  mix x = {.s = s};
  gc_mutex_init(&x.m);
  fuzz_sched_name(s, &x.m, "m");
  CHECK(fuzz_sched_spawn(s, mix_spawner, &x) == 0);
  CHECK(fuzz_sched_spawn(s, mix_body, &x) == 1);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  CHECK_EQ_U(x.counter, 4 * MIX_ROUNDS); /* three threads, the spawner runs the body twice */
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_EINVAL); /* once per scheduler */
  int spawns = 0, ends = 0;
  for (uint64_t i = 1; i <= fuzz_sched_steps(s); i++) {
    fuzz_sched_step e;
    CHECK(fuzz_sched_step_at(s, i, &e));
    spawns += e.kind == FUZZ_SCHED_SPAWN;
    ends += e.kind == FUZZ_SCHED_END;
  }
  if (fuzz_sched_steps(s) > 0) { /* scheduled: the spawn inside a thread is a step */
    CHECK_EQ_U(spawns, 1);
    CHECK_EQ_U(ends, 3);
  }
  gc_mutex_destroy(&x.m);
  uint64_t hash = fuzz_sched_hash(s);
  fuzz_sched_destroy(s);
  return hash;
}

static void test_determinism(void) {
  int pct_distinct = 0;
  uint64_t first = 0;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    uint64_t h1 = run_mix(make(FUZZ_SCHED_PCT, seed, 3, 300));
    uint64_t h2 = run_mix(make(FUZZ_SCHED_PCT, seed, 3, 300));
    CHECK_EQ_U(h1, h2);
    if (seed == 1) first = h1;
    pct_distinct += h1 != first;
  }
  CHECK(pct_distinct > 0);

  uint8_t bytes[64];
  uint64_t rng = 7;
  int bytes_distinct = 0;
  for (int trial = 0; trial < 20; trial++) {
    for (size_t i = 0; i < sizeof bytes; i++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      bytes[i] = (uint8_t)(rng >> 56) % (i % 2 == 0 ? 8 : 256); /* short runs */
    }
    uint64_t h1 = run_mix(make_bytes(bytes, sizeof bytes));
    uint64_t h2 = run_mix(make_bytes(bytes, sizeof bytes));
    CHECK_EQ_U(h1, h2);
    if (trial == 0) first = h1;
    bytes_distinct += h1 != first;
  }
  CHECK(bytes_distinct > 0);

  /* FREE: real threads in parallel, no interleaving recorded; the program still completes. */
  fuzz_sched *s = make(FUZZ_SCHED_FREE, 0, 0, 0);
  run_mix(s);
}

/* ---- Blocking ---- */

typedef struct section {
  gc_mutex m;
  uintptr_t atomics;
  int inside;     /* 1 while the holder is in its critical section */
  int violations; /* a waiter saw inside == 1 */
  unsigned tries; /* waiters about to lock */
  int waited;     /* a waiter tried while the holder was inside */
} section;

static void section_holder(void *arg) {
  section *x = arg;
  gc_mutex_lock(&x->m);
  unsigned tries = x->tries;
  x->inside = 1;
  for (int i = 0; i < 50; i++) work(&x->atomics);
  x->inside = 0;
  if (x->tries != tries) x->waited = 1;
  gc_mutex_unlock(&x->m);
}

static void section_waiter(void *arg) {
  section *x = arg;
  for (int i = 0; i < 10; i++) {
    work(&x->atomics);
    x->tries++;
    gc_mutex_lock(&x->m);
    if (x->inside) x->violations++;
    gc_mutex_unlock(&x->m);
  }
}

/* As the collector waits for the collection lock: trylock, spin, try again. */
static void section_trier(void *arg) {
  section *x = arg;
  for (int i = 0; i < 10; i++) {
    x->tries++;
    while (!gc_mutex_trylock(&x->m)) gc_plat_spin(&x->m);
    if (x->inside) x->violations++;
    work(&x->atomics);
    gc_mutex_unlock(&x->m);
  }
}

static int run_section(fuzz_sched *s, void (*waiter)(void *)) {
  section x = {0};
  gc_mutex_init(&x.m);
  fuzz_sched_spawn(s, section_holder, &x);
  fuzz_sched_spawn(s, waiter, &x);
  fuzz_sched_spawn(s, waiter, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  CHECK_EQ_U(x.violations, 0);
  gc_mutex_destroy(&x.m);
  fuzz_sched_destroy(s);
  return x.waited;
}

static void test_blocking(void) {
  int lock_waited = 0, try_waited = 0;
  for (uint64_t seed = 0; seed < 100; seed++) {
    lock_waited += run_section(make(FUZZ_SCHED_PCT, seed, 3, 100), section_waiter);
    try_waited += run_section(make(FUZZ_SCHED_PCT, seed, 3, 100), section_trier);
  }
  uint8_t bytes[32];
  for (int trial = 0; trial < 50; trial++) {
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(trial * 37 + i * 11);
    lock_waited += run_section(make_bytes(bytes, sizeof bytes), section_waiter);
    try_waited += run_section(make_bytes(bytes, sizeof bytes), section_trier);
  }
  /* The interesting case happened: a waiter reached the lock while the holder was inside. */
  CHECK(lock_waited > 0);
  CHECK(try_waited > 0);
  fprintf(stderr,
          "  blocking: a waiter met the held lock in %d (lock) and %d (trylock) of 150 runs\n",
          lock_waited, try_waited);
}

/* ---- Deadlock and livelock ---- */

typedef struct inversion {
  gc_mutex a, b;
  uintptr_t atomics;
} inversion;

static void take_ab(void *arg) {
  inversion *x = arg;
  gc_mutex_lock(&x->a);
  work(&x->atomics);
  gc_mutex_lock(&x->b);
  gc_mutex_unlock(&x->b);
  gc_mutex_unlock(&x->a);
}

static void take_ba(void *arg) {
  inversion *x = arg;
  gc_mutex_lock(&x->b);
  work(&x->atomics);
  gc_mutex_lock(&x->a);
  gc_mutex_unlock(&x->a);
  gc_mutex_unlock(&x->b);
}

static void lock_and_end(void *arg) { gc_mutex_lock(&((inversion *)arg)->a); }

static void wait_for_a(void *arg) {
  inversion *x = arg;
  work(&x->atomics);
  gc_mutex_lock(&x->a);
}

/* The inversion is the planted bug the scheduler must report; ThreadSanitizer's own lock-order
 * check rightly flags it as well, from the runs where it did not deadlock. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) { return "deadlock:take_ab\ndeadlock:take_ba\n"; }

/* Runs two threads on x with report captured; returns the status, report in *report (freed by
 * the caller). The threads of a stuck run are abandoned by destroy; their locks stay held. */
static int run_pair(fuzz_sched_config cfg, void (*t0)(void *), void (*t1)(void *), inversion *x,
                    char **report) {
  size_t report_len;
  FILE *trace = open_memstream(report, &report_len);
  cfg.trace = trace;
  fuzz_sched *s = fuzz_sched_create(&cfg);
  fuzz_sched_name(s, &x->a, "lock_a");
  fuzz_sched_name(s, &x->b, "lock_b");
  fuzz_sched_spawn(s, t0, x);
  fuzz_sched_spawn(s, t1, x);
  int status = fuzz_sched_run(s);
  if (status != FUZZ_SCHED_OK) fuzz_sched_print_interleaving(s, trace);
  fuzz_sched_destroy(s);
  fclose(trace);
  return status;
}

/* Each stuck run leaves its mutexes locked forever: a fresh pair for each. */
static inversion stuck_pairs[4];

static void test_deadlock(void) {
  inversion *x = &stuck_pairs[0];
  gc_mutex_init(&x->a);
  gc_mutex_init(&x->b);
  int ok_runs = 0;
  uint64_t seed;
  char *report = NULL;
  for (seed = 1; seed < 200; seed++) {
    fuzz_sched_config cfg = {.mode = FUZZ_SCHED_PCT, .seed = seed, .depth = 2, .pct_steps = 12};
    free(report);
    int status = run_pair(cfg, take_ab, take_ba, x, &report);
    if (status == FUZZ_SCHED_DEADLOCK) break;
    CHECK_EQ_U(status, FUZZ_SCHED_OK);
    ok_runs++;
  }
  CHECK(seed < 200);
  CHECK(ok_runs > 0);
  CHECK(strstr(report, "deadlock") != NULL);
  CHECK(strstr(report, "t0 waits at lock lock_b, held by t1") != NULL);
  CHECK(strstr(report, "t1 waits at lock lock_a, held by t0") != NULL);
  fprintf(stderr, "  deadlock: PCT seed %llu (after %d clean runs) reports:\n%s",
          (unsigned long long)seed, ok_runs, report);
  free(report);

  /* The same inversion from bytes: t0 takes a, then t1 runs (takes b, blocks on a). */
  x = &stuck_pairs[1];
  gc_mutex_init(&x->a);
  gc_mutex_init(&x->b);
  static const uint8_t inversion_bytes[] = {1, 1};
  fuzz_sched_config cfg = {
      .mode = FUZZ_SCHED_BYTES, .bytes = inversion_bytes, .bytes_len = sizeof inversion_bytes};
  CHECK_EQ_U(run_pair(cfg, take_ab, take_ba, x, &report), FUZZ_SCHED_DEADLOCK);
  free(report);

  /* A lock whose owner ended: nobody will ever release it. */
  x = &stuck_pairs[2];
  gc_mutex_init(&x->a);
  gc_mutex_init(&x->b);
  cfg = (fuzz_sched_config){.mode = FUZZ_SCHED_BYTES};
  CHECK_EQ_U(run_pair(cfg, lock_and_end, wait_for_a, x, &report), FUZZ_SCHED_DEADLOCK);
  CHECK(strstr(report, "t1 waits at lock lock_a, held by t0 (ended)") != NULL);
  free(report);
}

typedef struct spinners {
  uintptr_t flag_a, flag_b, flag_c;
} spinners;

static void spin_on_a(void *arg) {
  spinners *x = arg;
  while (!gc_atomic_load(&x->flag_a)) gc_plat_spin(&x->flag_a);
}

static void spin_on_b(void *arg) {
  spinners *x = arg;
  while (!gc_atomic_load(&x->flag_b)) gc_plat_spin(&x->flag_b);
}

static void test_livelock(void) {
  spinners x = {0};
  char *report = NULL;
  size_t report_len;
  FILE *trace = open_memstream(&report, &report_len);
  fuzz_sched_config cfg = {
      .mode = FUZZ_SCHED_PCT, .seed = 1, .livelock_steps = 2000, .trace = trace};
  fuzz_sched *s = fuzz_sched_create(&cfg);
  fuzz_sched_name(s, &x.flag_a, "flag_a");
  fuzz_sched_name(s, &x.flag_b, "flag_b");
  fuzz_sched_spawn(s, spin_on_a, &x);
  fuzz_sched_spawn(s, spin_on_b, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_LIVELOCK);
  CHECK_EQ_U(fuzz_sched_steps(s), 2000);
  fuzz_sched_destroy(s); /* abandons both spinners */
  fclose(trace);
  CHECK(strstr(report, "livelock") != NULL);
  CHECK(strstr(report, "t0 spins at spin flag_a") != NULL);
  CHECK(strstr(report, "t1 spins at spin flag_b") != NULL);
  free(report);
}

static void must_not_run(void *arg) { *(int *)arg = 1; }

/* Threads spawned but never run are abandoned by destroy before their program starts. */
static void test_never_run(void) {
  int ran = 0;
  fuzz_sched *s = make(FUZZ_SCHED_PCT, 1, 3, 10);
  CHECK_EQ_U(fuzz_sched_spawn(s, must_not_run, &ran), 0);
  CHECK_EQ_U(fuzz_sched_spawn(s, must_not_run, &ran), 1);
  fuzz_sched_destroy(s);
  CHECK(!ran);
  CHECK_EQ_U(fuzz_sched_self(), (unsigned long long)-1);
}

/* ---- Spin-waits ---- */

typedef struct handshake {
  uintptr_t flag;
  uintptr_t atomics;
} handshake;

static void wait_flag(void *arg) {
  handshake *x = arg;
  work(&x->atomics);
  while (!gc_atomic_load(&x->flag)) gc_plat_spin(&x->flag);
  work(&x->atomics);
}

static void set_flag(void *arg) {
  handshake *x = arg;
  for (int i = 0; i < 20; i++) work(&x->atomics);
  gc_atomic_store(&x->flag, 1);
  work(&x->atomics);
}

static void test_spin(void) {
  /* Whatever the priorities, the spinner yields to the setter: every run ends. */
  int spins_seen = 0;
  for (uint64_t seed = 0; seed < 200; seed++) {
    handshake x = {0};
    fuzz_sched *s = make(FUZZ_SCHED_PCT, seed, 3, 50);
    fuzz_sched_spawn(s, wait_flag, &x);
    fuzz_sched_spawn(s, set_flag, &x);
    CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
    CHECK_EQ_U(x.atomics, 23);
    for (uint64_t i = 1; i <= fuzz_sched_steps(s); i++) {
      fuzz_sched_step e;
      if (fuzz_sched_step_at(s, i, &e) && e.kind == GC_PLAT_SPIN) spins_seen++;
    }
    fuzz_sched_destroy(s);
  }
  CHECK(spins_seen > 0);
}

/* ---- The proof: PCT finds bugs of depth 2 and 3 as often as its bound says ----
 *
 * Each program has two threads with a fixed number of scheduling points (work) before, inside
 * and after the racy part; the window is several points wide, as real code does some work
 * between a check and its use. k is counted from a run, passed to PCT as pct_steps, and the
 * bound 1/(n * k^(d-1)) is checked against the measured rate over RUNS seeds. */

enum { PRE = 2, WINDOW = 3, POST = 2, RUNS = 1000 };

typedef struct planted {
  uintptr_t atomics;
  int object; /* what the shared pointer points to */
  int alive;  /* depth 3: the object is retired when 0 */
  int *shared;
  int hit; /* the bug happened */
} planted;

/* Depth 2, check-then-act: the user checks the pointer, works, then uses it; the clearer sets
 * it NULL. The bug needs check < clear < use: two ordering constraints. */
static void cta_user(void *arg) {
  planted *x = arg;
  for (int i = 0; i < PRE; i++) work(&x->atomics);
  if (x->shared != NULL) {
    for (int i = 0; i < WINDOW; i++) work(&x->atomics);
    if (x->shared == NULL)
      x->hit = 1; /* *x->shared would dereference NULL */
    else
      (*x->shared)++;
  }
  for (int i = 0; i < POST; i++) work(&x->atomics);
}

static void cta_clearer(void *arg) {
  planted *x = arg;
  for (int i = 0; i < PRE; i++) work(&x->atomics);
  x->shared = NULL;
  for (int i = 0; i < POST; i++) work(&x->atomics);
}

/* Depth 3, use after retire: the owner publishes the object (A1), uses it, then retires it (A2);
 * the reader loads the pointer (B1), works, then uses what it loaded (B2). Loaded before A1 or
 * after A2 it is NULL; used before A2 the object is alive. The bug needs A1 < B1 < A2 < B2:
 * three ordering constraints, so two preemptions (T1 must stop right after A1, T2 right after
 * B1 and below T1) — PCT with d = 2 never finds it. */
static void uar_owner(void *arg) {
  planted *x = arg;
  for (int i = 0; i < PRE; i++) work(&x->atomics);
  x->alive = 1;
  x->shared = &x->object; /* A1: publish */
  for (int i = 0; i < WINDOW; i++) work(&x->atomics);
  x->shared = NULL; /* A2: retire */
  x->alive = 0;
  for (int i = 0; i < POST; i++) work(&x->atomics);
}

static void uar_reader(void *arg) {
  planted *x = arg;
  for (int i = 0; i < PRE; i++) work(&x->atomics);
  int *p = x->shared; /* B1 */
  for (int i = 0; i < WINDOW; i++) work(&x->atomics);
  if (p != NULL) { /* B2 */
    if (!x->alive)
      x->hit = 1; /* a use after free */
    else
      (*p)++;
  }
  for (int i = 0; i < POST; i++) work(&x->atomics);
}

typedef struct program {
  const char *name;
  void (*t0)(void *);
  void (*t1)(void *);
  int shared_at_start; /* depth 2: the pointer starts set */
  unsigned depth;      /* ordering constraints the bug needs */
} program;

static const program check_then_act = {"depth-2 bug (check-then-act)", cta_user, cta_clearer, 1, 2};
static const program use_after_retire = {"depth-3 bug (use after retire)", uar_owner, uar_reader, 0,
                                         3};

/* One run of p under s: 1 if the bug happened. *steps gets the run's step count. */
static int run_program(const program *p, fuzz_sched *s, uint64_t *steps) {
  planted x = {0};
  if (p->shared_at_start) x.shared = &x.object;
  fuzz_sched_spawn(s, p->t0, &x);
  fuzz_sched_spawn(s, p->t1, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  if (steps) *steps = fuzz_sched_steps(s);
  fuzz_sched_destroy(s);
  return x.hit;
}

/* The program's k: the most steps any of a few schedules takes (PCT's k bounds every run). */
static uint64_t count_steps(const program *p) {
  uint64_t k = 0, steps;
  for (uint64_t seed = 0; seed < 50; seed++) {
    run_program(p, make(FUZZ_SCHED_PCT, seed, 3, 20), &steps);
    if (steps > k) k = steps;
  }
  return k;
}

/* Hits over RUNS PCT seeds with depth d; prints the rate and, when d reaches the bug's depth,
 * checks it against PCT's bound. Returns the hits. */
static int pct_rate(const program *p, unsigned n, uint64_t k, unsigned d) {
  int hits = 0;
  uint64_t steps;
  for (uint64_t seed = 0; seed < RUNS; seed++) {
    hits += run_program(p, make(FUZZ_SCHED_PCT, seed, d, k), &steps);
    CHECK(steps <= k);
  }
  double rate = (double)hits / RUNS;
  fprintf(stderr, "  pct %s: n=%u k=%llu d=%u: %d/%d runs hit (%.2f%%)", p->name, n,
          (unsigned long long)k, d, hits, RUNS, 100 * rate);
  if (d < p->depth) {
    fprintf(stderr, ", d below the bug's depth: no bound\n");
    return hits;
  }
  double bound = 1.0 / n;
  for (unsigned i = 1; i < d; i++) bound /= (double)k;
  fprintf(stderr, ", bound 1/(n*k^(d-1)) = %.2f%%\n", 100 * bound);
  CHECK(rate >= bound);
  return hits;
}

static void test_pct_finds_depth_2(void) {
  uint64_t k = count_steps(&check_then_act);
  /* user: PRE + WINDOW + POST points and its end; clearer: PRE + POST and its end. */
  CHECK_EQ_U(k, (PRE + WINDOW + POST + 1) + (PRE + POST + 1));
  pct_rate(&check_then_act, 2, k, 2);
  pct_rate(&check_then_act, 2, k, 3); /* a deeper search still meets its (weaker) bound */
  CHECK_EQ_U(pct_rate(&check_then_act, 2, k, 1), 0); /* no preemption: never */

  /* Replay from bytes: d0 passes 2 steps, then at its first window point d1 runs to its end. */
  static const uint8_t bytes[] = {2, 1};
  CHECK(run_program(&check_then_act, make_bytes(bytes, sizeof bytes), NULL));
  CHECK(!run_program(&check_then_act, make_bytes(NULL, 0), NULL));
}

static void test_pct_finds_depth_3(void) {
  uint64_t k = count_steps(&use_after_retire);
  CHECK_EQ_U(k, 2 * (PRE + WINDOW + POST + 1));
  pct_rate(&use_after_retire, 2, k, 3);
  CHECK_EQ_U(pct_rate(&use_after_retire, 2, k, 2), 0); /* it really needs depth 3 */

  /* Replay from bytes: d0 publishes, at its first window point d1 runs; d1 loads, and at its
   * first window point d0 runs again to its end (retires); then d1 uses. */
  static const uint8_t bytes[] = {2, 1, 2, 0};
  CHECK(run_program(&use_after_retire, make_bytes(bytes, sizeof bytes), NULL));
  static const uint8_t one_switch[] = {2, 1};
  CHECK(!run_program(&use_after_retire, make_bytes(one_switch, sizeof one_switch), NULL));
}

/* ---- A protocol load and store are points: a window with nothing else in it ----
 *
 * Two threads each claim a flag by a check-then-act: load it, and if it is 0 store 1 and count a
 * win. No lock, no read-modify-write, no spin between the load and the store: the window is
 * open only because gc_atomic_load and gc_atomic_store are scheduling points (gc/platform.h).
 * The same program with the relaxed forms, which are not points, never shows it. */

typedef struct claim {
  uintptr_t flag;
  int relaxed; /* use the forms that are not points */
  int wins;
} claim;

static void claim_flag(void *arg) {
  claim *x = arg;
  uintptr_t seen = x->relaxed ? gc_atomic_load_relaxed(&x->flag) : gc_atomic_load(&x->flag);
  if (seen != 0) return;
  if (x->relaxed)
    gc_atomic_store_relaxed(&x->flag, 1);
  else
    gc_atomic_store(&x->flag, 1);
  x->wins++;
}

/* 1 if both threads won under s. */
static int run_claim(fuzz_sched *s, int relaxed, uint64_t *steps) {
  claim x = {.relaxed = relaxed};
  fuzz_sched_spawn(s, claim_flag, &x);
  fuzz_sched_spawn(s, claim_flag, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  if (steps) *steps = fuzz_sched_steps(s);
  fuzz_sched_destroy(s);
  CHECK(x.wins >= 1);
  return x.wins == 2;
}

static void test_load_store_window(void) {
  /* t0: load (step 1), store (2), end (3); t1: load (it sees 1), end: 5 steps; 6 when both win. */
  uint64_t steps;
  CHECK(!run_claim(make_bytes(NULL, 0), 0, &steps));
  CHECK_EQ_U(steps, 5);
  int hits = 0, relaxed_hits = 0;
  for (uint64_t seed = 0; seed < RUNS; seed++) {
    hits += run_claim(make(FUZZ_SCHED_PCT, seed, 2, 6), 0, NULL);
    relaxed_hits += run_claim(make(FUZZ_SCHED_PCT, seed, 2, 6), 1, NULL);
  }
  fprintf(stderr,
          "  check-then-act at a load and a store: %d/%d PCT runs hit (d=2, k=6); "
          "with the relaxed forms %d\n",
          hits, RUNS, relaxed_hits);
  CHECK(hits >= RUNS / (2 * 6)); /* PCT's bound 1/(n*k) */
  CHECK_EQ_U(relaxed_hits, 0);

  /* Replay from bytes: t0 passes its load, and at its store t1 runs: both win. */
  static const uint8_t bytes[] = {1, 1};
  fuzz_sched *s = make_bytes(bytes, sizeof bytes);
  claim x = {0};
  fuzz_sched_spawn(s, claim_flag, &x);
  fuzz_sched_spawn(s, claim_flag, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  CHECK_EQ_U(x.wins, 2);
  fuzz_sched_step e;
  CHECK(fuzz_sched_step_at(s, 1, &e) && e.thread == 0 && e.kind == GC_PLAT_LOAD);
  CHECK(fuzz_sched_step_at(s, 2, &e) && e.thread == 0 && e.kind == GC_PLAT_STORE);
  CHECK(fuzz_sched_step_at(s, 3, &e) && e.thread == 1 && e.kind == GC_PLAT_LOAD);
  CHECK(strcmp(fuzz_sched_kind_name(GC_PLAT_LOAD), "load") == 0);
  CHECK(strcmp(fuzz_sched_kind_name(GC_PLAT_STORE), "store") == 0);
  fuzz_sched_destroy(s);
}

/* ---- Cost ---- */

enum { KEPT_POINTS = 1000000, SWITCH_POINTS = 20000 };

typedef struct timing {
  uint64_t ns;
} timing;

static void kept_points(void *arg) {
  timing *t = arg;
  uint64_t start = now_ns();
  for (int i = 0; i < KEPT_POINTS; i++) fuzz_sched_point(GC_PLAT_SAFEPOINT, t);
  t->ns = now_ns() - start;
}

static void switch_points(void *arg) {
  for (int i = 0; i < SWITCH_POINTS; i++) fuzz_sched_point(GC_PLAT_SPIN, arg);
}

static void test_cost(void) {
  timing off = {0}, kept = {0};
  kept_points(&off); /* an unmanaged thread: the call returns at once */

  fuzz_sched_config cfg = {
      .mode = FUZZ_SCHED_PCT, .depth = 1, .log_steps = 1024, .livelock_steps = UINT64_MAX};
  fuzz_sched *s = fuzz_sched_create(&cfg);
  fuzz_sched_spawn(s, kept_points, &kept);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  CHECK_EQ_U(fuzz_sched_switches(s), 0);
  fuzz_sched_destroy(s);

  /* Two threads spinning in turn: every step is a yield, so a switch. */
  s = fuzz_sched_create(&cfg);
  int token;
  fuzz_sched_spawn(s, switch_points, &token);
  fuzz_sched_spawn(s, switch_points, &token);
  uint64_t start = now_ns();
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  uint64_t switch_ns = now_ns() - start;
  uint64_t switches = fuzz_sched_switches(s);
  CHECK(switches >= 2 * SWITCH_POINTS - 2);
  fuzz_sched_destroy(s);

  /* Whole programs: create, two threads, run, destroy. */
  enum { PROGRAMS = 300 };
  start = now_ns();
  for (int i = 0; i < PROGRAMS; i++)
    run_program(&use_after_retire, make(FUZZ_SCHED_PCT, i, 3, 16), NULL);
  uint64_t program_ns = now_ns() - start;

  fprintf(stderr,
          "  cost: step with no scheduler %.1f ns, kept step %.1f ns, switch %.0f ns, "
          "2-thread program of 16 steps %.0f us (%.0f programs/s)\n",
          (double)off.ns / KEPT_POINTS, (double)kept.ns / KEPT_POINTS,
          (double)switch_ns / (double)switches, (double)program_ns / PROGRAMS / 1000,
          PROGRAMS * 1e9 / (double)program_ns);
}

/* ---- The printed interleaving ---- */

static void test_print(void) {
  static const uint8_t bytes[] = {2, 1, 2, 0};
  fuzz_sched *s = make_bytes(bytes, sizeof bytes);
  planted x = {0};
  fuzz_sched_name(s, &x.atomics, "work");
  fuzz_sched_spawn(s, uar_owner, &x);
  fuzz_sched_spawn(s, uar_reader, &x);
  CHECK_EQ_U(fuzz_sched_run(s), FUZZ_SCHED_OK);
  CHECK(x.hit);
  char *text = NULL;
  size_t len;
  FILE *out = open_memstream(&text, &len);
  fuzz_sched_print_interleaving(s, out);
  fclose(out);
  fprintf(stderr, "%s", text);
  CHECK(strstr(text, "16 steps, 3 switches") != NULL);
  CHECK(strstr(text, "       1  t0  x3     last: atomic work\n") != NULL);
  CHECK(strstr(text, "       4  t1  x3     last: atomic work\n") != NULL);
  CHECK(strstr(text, "       7  t0  x5     ended\n") != NULL);
  CHECK(strstr(text, "      12  t1  x5     ended\n") != NULL);
  fuzz_sched_step e;
  CHECK(fuzz_sched_step_at(s, 16, &e) && e.thread == 1 && e.kind == FUZZ_SCHED_END);
  CHECK(!fuzz_sched_step_at(s, 17, &e));
  free(text);
  fuzz_sched_destroy(s);
}

int main(void) {
  RUN(test_determinism);
  RUN(test_blocking);
  RUN(test_deadlock);
  RUN(test_livelock);
  RUN(test_never_run);
  RUN(test_spin);
  RUN(test_pct_finds_depth_2);
  RUN(test_pct_finds_depth_3);
  RUN(test_load_store_window);
  RUN(test_print);
  RUN(test_cost);
  CHECK_MAIN_END();
}
