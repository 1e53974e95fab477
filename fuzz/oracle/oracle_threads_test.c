/* Threaded runs of the oracle (threads.c) against the reference backend's threaded table
 * (ref_backend.h: ref_threads): each domain's part on its own thread under the
 * controlled scheduler, one bank of cells a domain.
 *
 * Each threaded slip of the reference collector is reported as its kind, and its program runs
 * clean without the slip: marking that skips a parked domain's bank (a block only a domain whose
 * thread has left holds is freed: oracle.identity), a collection that keeps the heap's lock
 * (every thread then waits: oracle.deadlock). A domain that terminates itself takes its bank's
 * roots with it. Random threaded programs run clean on the honest collector, among them some
 * whose full collections another thread's ops overlapped (the whole-heap checks then wait or are
 * skipped, never wrong); a run replays the same interleaving; the threaded op set is what the
 * capability allows.
 */
#define _GNU_SOURCE /* open_memstream (outcome.h) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/expect.h"
#include "fuzz/oracle/outcome.h"
#include "fuzz/oracle/ref_backend.h"
#include "fuzz/oracle/run.h"

static void run_threaded(const uint8_t *data, size_t size, outcome *o) {
  outcome_run(ref_threads(), NULL, 1, data, size, o);
}

/* Assemble and run `text` threaded; 0 (a failure counted) when it does not assemble. */
static int run_text(const char *name, const char *text, outcome *o) {
  fuzz_text_error err;
  fuzz_buf bytes = {0};
  if (!fuzz_assemble(oracle_opset_threads(ref_threads()), text, strlen(text), &bytes, &err)) {
    EXPECT(0, "%s: the program does not assemble: line %zu:%zu: %s", name, err.line, err.column,
           err.message);
    return 0;
  }
  run_threaded(bytes.data, bytes.size, o);
  fuzz_buf_free(&bytes);
  return 1;
}

/* ---- The slips ----------------------------------------------------------------------------- */

static const ref_slip_case cases[] = {
    /* d1 allocates and leaves; whichever thread the scheduler runs first, a collection (d0's,
     * or the final one) comes while d1 is parked, and its block lives only in d1's bank. */
    {SAB_PARKED_BANK_SKIPPED, "marking skips a parked domain's bank", "oracle.identity",
     "pct 0x11 1\n"
     "spawn d1\n"
     "alloc s1 scan 1\n"
     "collect major\n"
     "on d1\n"
     "alloc s0 scan 2\n"
     "alloc s2 scan 1\n"
     "store s0.1 s2\n"
     "drop s2\n"
     "store_imm s0.0 7\n"},
    /* d1 collects twice: the second waits on the lock the first kept, held by itself, and so
     * does d0 if it is still there to collect. */
    {SAB_COLLECT_LOCK_KEPT, "a collection keeps the heap's lock", "oracle.deadlock",
     "spawn d1\n"
     "alloc s0 scan 1\n"
     "collect major\n"
     "on d1\n"
     "alloc s0 scan 1\n"
     "collect major\n"
     "collect major\n"},
};
enum { CASE_COUNT = sizeof cases / sizeof cases[0] };

/* The slip's kind first, and clean without it. The deadlock case last: its threads stay parked
 * for the rest of the process, holding the reference heap's lock (fuzz/sched.h). */
static void test_slips(void) {
  printf("each threaded slip, and the kind the oracle reports first:\n");
  int covered[SAB_COUNT] = {0};
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < CASE_COUNT; i++) {
      const ref_slip_case *c = &cases[i];
      outcome o;
      if (pass == 0) {
        if (!run_text(c->name, c->program, &o)) continue;
        EXPECT(o.rc == 0 && o.res.violations == 0,
               "%s: the honest collector reports '%s' (rc %d)\n%s", c->name, o.res.first_kind, o.rc,
               o.text);
      } else {
        ref_sabotage = c->mode;
        int ran = run_text(c->name, c->program, &o);
        ref_sabotage = SAB_NONE;
        if (!ran) continue;
        EXPECT(o.rc == 1 && strcmp(o.res.first_kind, c->kind) == 0,
               "%s: expected '%s' first, got '%s' (rc %d)\n%s", c->name, c->kind, o.res.first_kind,
               o.rc, o.text);
        printf("  %-42s %s\n", c->name, o.res.first_kind);
        covered[c->mode] = 1;
      }
      free(o.text);
    }
  }
  for (int m = SAB_ONE_THREAD_COUNT; m < SAB_COUNT; m++) {
    EXPECT(covered[m], "threaded sabotage mode %d has no program", m);
  }
}

/* ---- Domains ------------------------------------------------------------------------------- */

/* A domain that terminates itself takes its bank with it: the block only its slot held is
 * unreachable, and the final collection finalizes it (the model must agree, or it reports the
 * finalizer as run on a reachable block). d1's part ends with it; d0 keeps its own block. */
static void test_terminate(void) {
  outcome o;
  if (!run_text("terminate",
                "spawn d1\n"
                "alloc s0 scan 1\n"
                "fin s0 -\n"
                "on d1\n"
                "alloc s0 scan 1\n"
                "fin s0 -\n"
                "push\n"
                "terminate d1\n",
                &o)) {
    return;
  }
  EXPECT(o.rc == 0 && o.res.violations == 0, "terminate: '%s' (rc %d)\n%s", o.res.first_kind, o.rc,
         o.text);
  EXPECT(o.res.finalizers == 1, "terminate: %zu finalizers ran; d1's block's, only, is due",
         o.res.finalizers);
  free(o.text);
}

/* The same program, the same interleaving; the steps and switches are the scheduler's. */
static void test_replays(void) {
  const char *text =
      "spawn d1\n"
      "spawn d2\n"
      "alloc s0 scan 2\n"
      "collect full\n"
      "alloc s1 scan 1\n"
      "on d1\n"
      "alloc s0 scan 1\n"
      "collect major\n"
      "alloc s1 raw 2\n"
      "on d2\n"
      "alloc s3 scan 3\n"
      "collect full\n"
      "drop s3\n";
  outcome a, b;
  if (!run_text("replay", text, &a) || !run_text("replay", text, &b)) return;
  EXPECT(a.rc == 0 && b.rc == 0, "replay: not clean: %s", a.text);
  EXPECT(a.res.sched_steps > 0 && a.res.sched_hash == b.res.sched_hash &&
             a.res.sched_steps == b.res.sched_steps,
         "replay: two runs of one program: %llu steps (hash %016llx), then %llu (%016llx)",
         (unsigned long long)a.res.sched_steps, (unsigned long long)a.res.sched_hash,
         (unsigned long long)b.res.sched_steps, (unsigned long long)b.res.sched_hash);
  free(a.text);
  free(b.text);
}

/* ---- No false positives -------------------------------------------------------------------- */

static uint64_t rng_state = UINT64_C(0x2545f4914f6cdd1d);
static uint64_t rng(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

enum { RANDOM_PROGRAMS = 300, RANDOM_MAX_BYTES = 768 };

/* ORACLE_TEST_PROGRAMS and ORACLE_TEST_SEED (environment) run more, or other, programs. */
static void test_random_clean(void) {
  uint8_t data[RANDOM_MAX_BYTES];
  size_t dirty = 0, ops = 0, collects = 0, skipped = 0, switches = 0;
  int programs = RANDOM_PROGRAMS;
  const char *env = getenv("ORACLE_TEST_PROGRAMS");
  if (env != NULL && atoi(env) > 0) programs = atoi(env);
  env = getenv("ORACLE_TEST_SEED");
  if (env != NULL && strtoull(env, NULL, 0) != 0) rng_state = strtoull(env, NULL, 0);
  const fuzz_opset *set = oracle_opset_threads(ref_threads());
  for (int i = 0; i < programs; i++) {
    size_t size = 1 + (size_t)(rng() % RANDOM_MAX_BYTES);
    for (size_t j = 0; j < size; j++) data[j] = (uint8_t)rng();
    outcome o;
    run_threaded(data, size, &o);
    ops += o.res.ops;
    collects += o.res.collects;
    skipped += o.res.skipped_full;
    switches += o.res.sched_switches;
    if (o.rc != 0 || o.res.violations != 0) {
      if (dirty++ < 3) {
        printf(
            "random threaded program %d (%zu bytes) on the honest backend: rc %d, first '%s' "
            "at op %ld\n%s",
            i, size, o.rc, o.res.first_kind, o.res.first_op, o.text);
        fuzz_print_program(stdout, set, data, size, 1);
      }
    }
    free(o.text);
  }
  EXPECT(dirty == 0,
         "%zu of %d random threaded programs reported a violation on the honest "
         "backend",
         dirty, programs);
  /* The overlapped collections are the point of the accounting: some must have happened. */
  EXPECT(skipped > 0,
         "no full collection of %d random threaded programs was overlapped by "
         "another thread's op: the overlap path never ran",
         programs);
  EXPECT(switches > 0, "the scheduler never switched threads in %d random programs", programs);
  printf(
      "%d random threaded programs on the honest backend: %zu ops, %zu collections, %zu full "
      "ones overlapped, %zu switches, %zu dirty\n",
      programs, ops, collects, skipped, switches, dirty);
}

/* ---- The op set ---------------------------------------------------------------------------- */

static int has_op(const fuzz_opset *set, fuzz_opcode code) {
  for (size_t i = 0; i < set->count; i++) {
    if (set->ops[i] == code) return 1;
  }
  return 0;
}

static void test_opset(void) {
  const fuzz_opset *set = oracle_opset_threads(ref_threads());
  EXPECT(set != NULL && strcmp(set->name, "ref-threads") == 0, "the threaded op set is '%s'",
         set != NULL ? set->name : "(none)");
  if (set == NULL) return;
  EXPECT(has_op(set, FUZZ_OP_PCT) && has_op(set, FUZZ_OP_CHOOSE) && has_op(set, FUZZ_OP_ON) &&
             has_op(set, FUZZ_OP_SPAWN) && has_op(set, FUZZ_OP_TERMINATE),
         "the threaded op set lacks the scheduler's or the domains' ops");
  EXPECT(!has_op(set, FUZZ_OP_FAIL) && !has_op(set, FUZZ_OP_LIMIT) &&
             !has_op(set, FUZZ_OP_FIN_DO) && !has_op(set, FUZZ_OP_SELF),
         "the threaded op set has an op whose check several threads make unsound");
  EXPECT(oracle_opset_threads(&ref_backend) == NULL,
         "a backend without the threads capability has a threaded op set");
  /* Asked for anyway, a threaded run of such a backend is refused, not run on one thread. */
  outcome o;
  static const uint8_t program[] = {0, 0, 0, 1};
  outcome_run(&ref_backend, oracle_opset(&ref_backend), 1, program, sizeof program, &o);
  EXPECT(o.rc == -1 && strstr(o.text, "cannot run domains on threads") != NULL,
         "a threaded run of a backend without threads: rc %d, '%s'", o.rc, o.text);
  free(o.text);
}

int main(void) {
  test_opset();
  test_terminate();
  test_replays();
  test_random_clean();
  test_slips(); /* last: the deadlock case leaves its threads parked */
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
