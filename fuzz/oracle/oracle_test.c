/* The model oracle (run.h) against the reference backend (ref_backend.h): every check of the
 * oracle fires on a collector that makes the one slip it exists for, and none fires on a correct
 * one.
 *
 * `ref_sabotage` switches one slip on: each mode is a mistake a real collector makes, and each
 * has a program below that must make the oracle report exactly its kind first, and run clean
 * without the slip. Then random programs on the honest backend must run clean (no false
 * positives), and the backend's op set must be what its capabilities allow. Threaded runs have
 * their own test (oracle_threads_test.c).
 */
#define _GNU_SOURCE /* open_memstream */
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

/* ---- Running ------------------------------------------------------------------------------- */

static void run_bytes(const fuzz_backend *b, const uint8_t *data, size_t size, outcome *o) {
  outcome_run(b, NULL, 0, data, size, o);
}

/* Assemble `text` for backend b's op set; 0 (and a failure counted) when it does not. */
static int assemble(const fuzz_backend *b, const char *name, const char *text, fuzz_buf *bytes) {
  fuzz_text_error err;
  memset(bytes, 0, sizeof *bytes);
  int ok = fuzz_assemble(oracle_opset(b), text, strlen(text), bytes, &err);
  EXPECT(ok, "%s: the program does not assemble: line %zu:%zu: %s", name, err.line, err.column,
         err.message);
  return ok;
}

static const ref_slip_case cases[] = {
    {SAB_MISUSE_ACCEPTED, "a misuse accepted", "oracle.api-error",
     "alloc s0 scan 1\n"
     "misuse pin-null     # the empty cell pinned\n"},
    {SAB_CORRUPT_UNSEEN, "a corruption the deep check cannot see", "oracle.corruption-missed",
     "alloc s0 scan 1\n"
     "corrupt swept.stat-mismatch s0 2\n"},
    {SAB_CORRUPT_KEPT, "a corruption's repair forgotten", "oracle.corruption-unrepaired",
     "alloc s0 scan 1\n"
     "corrupt swept.stat-mismatch s0 0\n"},
    {SAB_SET_IGNORED, "weak_set stores nothing", "oracle.identity",
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "weak s2 s0\n"
     "weak_set s2 s1      # the reference names s1's block from now on\n"
     "weak_get s3 s2      # s0's block: the set was dropped\n"},
    {SAB_SET_IGNORED, "ephe_set stores nothing", "oracle.weak-cleared",
     "alloc s0 scan 1     # the old key, which dies\n"
     "alloc s1 scan 1     # the new key, which lives\n"
     "alloc s2 scan 1     # the datum\n"
     "ephe s3 s0 s2\n"
     "ephe_set s3 s1 s2\n"
     "drop s0\n"
     "collect major       # the old key is dead: a dropped set leaves the ephemeron cleared\n"
     "ephe_get s4 s3\n"},
    {SAB_SET_IGNORED, "a cleared weak reference not aimed anew", "oracle.weak-cleared",
     "alloc s0 scan 1\n"
     "weak s1 s0\n"
     "drop s0\n"
     "collect major\n"
     "weak_get s2 s1      # empty: its target died\n"
     "alloc s0 scan 1\n"
     "weak_set s1 s0      # it answers again, a new target\n"
     "weak_get s2 s1\n"},
    {SAB_SCAN_SHORT, "mark skips a block's last field", "oracle.identity",
     "alloc s0 scan 2\n"
     "alloc s1 scan 1\n"
     "store s0.1 s1\n"
     "drop s1\n"
     "collect major       # s1's block is swept though s0.1 holds it\n"
     "alloc s2 scan 1     # and its memory is reused\n"
     "load s3 s0.1\n"},
    {SAB_STORE_INT_FIELD, "store_int into the next field", "oracle.contents",
     "alloc s0 scan 2\n"
     "store_imm s0.0 7\n"
     "load s1 s0.0\n"},
    {SAB_FIN_FLAG_KEPT, "a finalizer that ran stays set", "oracle.finalizer-twice",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "drop s0\n"
     "collect major\n"
     "collect major\n"},
    {SAB_FIN_REACHABLE, "finalizers queued for reachable blocks", "oracle.finalizer-live",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "collect major\n"},
    {SAB_UNFIN_NOOP, "fin_clear leaves the finalizer set", "oracle.finalizer-unset",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "unfin s0\n"
     "drop s0\n"
     "collect major\n"},
    {SAB_FIN_NEVER_RUN, "queued finalizers never run", "oracle.finalizer-lost",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_UNFIN_ANSWER, "fin_clear answers from the wrong state", "oracle.finalizer-clear",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "unfin s0\n"},
    {SAB_WEAK_EARLY, "weak slots cleared before tracing", "oracle.weak-cleared",
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "store s0.0 s1\n"
     "weak s2 s1\n"
     "drop s1\n"
     "collect major       # s1 lives through s0.0\n"
     "weak_get s3 s2\n"},
    {SAB_WEAK_FLAG, "a cleared weak reference answers again", "oracle.weak-revived",
     "alloc s0 scan 1\n"
     "fin s0 s4           # its finalizer resurrects it into s4\n"
     "weak s1 s0\n"
     "drop s0\n"
     "collect major\n"
     "weak_get s2 s1      # empty: allowed, its finalizer ran\n"
     "collect major\n"
     "weak_get s2 s1      # the block again\n"},
    {SAB_EPHE_AS_WEAK, "ephemeron datum not traced", "oracle.weak-cleared",
     "alloc s0 scan 1     # the key, which lives\n"
     "alloc s1 scan 1     # the datum\n"
     "ephe s2 s0 s1\n"
     "drop s1\n"
     "collect major\n"
     "ephe_get s3 s2\n"},
    {SAB_SWEEP_SKIPS_HEAD, "the sweep skips the newest block", "oracle.not-freed",
     "alloc s0 scan 1\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_WALK_SKIPS_HEAD, "the walk skips the newest block", "oracle.lost",
     "alloc s0 scan 1\n"
     "collect full\n"},
    {SAB_BYTES_NOT_FREED, "live bytes never shrink", "oracle.leak",
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_WEAK_LATE, "weak references cleared after finalization marking",
     "oracle.weak-after-finalizer",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "weak s1 s0\n"
     "drop s0\n"
     "collect major       # s0's finalizer runs; the weak reference should be empty\n"
     "weak_get s2 s1\n"},
    {SAB_FAIL_IGNORED, "fail_after ignored", "oracle.failure-missed",
     "fail 2\n"
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "alloc s2 scan 1\n"},
    {SAB_FAIL_TWICE, "the injected failure fails twice", "oracle.unexpected-failure",
     "fail 2\n"
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "alloc s2 scan 1\n"},
    {SAB_COUNT_NOT_FREED, "the block counter not decremented", "ref.broken",
     "alloc s0 scan 1\n"
     "drop s0\n"
     "collect major\n"},
    {SAB_ALLOC_NOTICES, "the allocator's own finding, reported at once", "ref.alloc",
     "alloc s0 scan 1\n"},
    {SAB_PIN_NOT_ROOT, "pinned blocks not marked", "oracle.lost",
     "alloc s0 scan 1\n"
     "pin s0\n"
     "copy s1 s0\n"
     "drop s0            # held by its pin and s1 only\n"
     "collect full\n"
     "drop s1            # held by its pin only\n"
     "collect full\n"},
    {SAB_FIN_UNORDERED, "finalization not ordered", "oracle.finalizer-order",
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "store s0.0 s1      # s0 reaches s1; both have finalizers\n"
     "fin s0 -\n"
     "fin s1 -\n"
     "drop s0\n"
     "drop s1\n"
     "collect full       # s0's finalizer first; s1's only in a later cycle\n"},
    {SAB_UNPIN_ANSWER, "unpin answers for a block never pinned", "oracle.pin",
     "alloc s0 scan 1\n"
     "unpin s0\n"},
};
enum { CASE_COUNT = sizeof cases / sizeof cases[0] };

static void test_mode(const ref_slip_case *c) {
  fuzz_buf bytes;
  if (!assemble(&ref_backend, c->name, c->program, &bytes)) {
    fuzz_buf_free(&bytes);
    return;
  }
  outcome o;
  ref_sabotage = c->mode;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  ref_sabotage = SAB_NONE;
  char verdict[96];
  snprintf(verdict, sizeof verdict, "GCFUZZ-VERDICT {\"kind\": \"%s\"", c->kind);
  EXPECT(o.rc == 1 && strcmp(o.res.first_kind, c->kind) == 0,
         "sabotage `%s`: expected %s first, got rc %d, %zu violations, first '%s'\n%s", c->name,
         c->kind, o.rc, o.res.violations, o.res.first_kind, o.text);
  EXPECT(o.text != NULL && strstr(o.text, verdict) != NULL,
         "sabotage `%s`: no `%s` line in the output:\n%s", c->name, verdict, o.text);
  printf("  %-44s -> %s at op %ld (%zu violations)\n", c->name, o.res.first_kind, o.res.first_op,
         o.res.violations);
  free(o.text);

  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  EXPECT(o.rc == 0 && o.res.violations == 0,
         "`%s` program without the slip: rc %d, %zu violations, first '%s'\n%s", c->name, o.rc,
         o.res.violations, o.res.first_kind, o.text);
  free(o.text);
  fuzz_buf_free(&bytes);
}

static void test_modes(void) {
  printf("each slip, and the kind the oracle reports first:\n");
  int covered[SAB_COUNT] = {0};
  for (size_t i = 0; i < CASE_COUNT; i++) {
    test_mode(&cases[i]);
    covered[cases[i].mode] = 1;
  }
  for (int m = SAB_NONE + 1; m < SAB_ONE_THREAD_COUNT; m++) {
    EXPECT(covered[m], "sabotage mode %d has no program", m);
  }
  /* Every check the oracle makes is some slip's first finding. */
  static const char *const kinds[] = {
      "oracle.identity",
      "oracle.contents",
      "oracle.finalizer-live",
      "oracle.finalizer-twice",
      "oracle.finalizer-unset",
      "oracle.finalizer-lost",
      "oracle.finalizer-clear",
      "oracle.weak-cleared",
      "oracle.weak-revived",
      "oracle.weak-after-finalizer",
      "oracle.leak",
      "oracle.not-freed",
      "oracle.lost",
      "oracle.failure-missed",
      "oracle.unexpected-failure",
      "ref.broken",
      "ref.alloc",
      "oracle.pin",
      "oracle.finalizer-order",
      "oracle.api-error",
      "oracle.corruption-missed",
      "oracle.corruption-unrepaired",
  };
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    int found = 0;
    for (size_t i = 0; i < CASE_COUNT; i++) found |= strcmp(cases[i].kind, kinds[k]) == 0;
    EXPECT(found, "no case expects %s", kinds[k]);
  }
}

/* ---- Resurrection ------------------------------------------------------------------------- */

/* What a finalizer's resurrection makes reachable again, and what it displaces, judged right:
 * each program's first finding must be `want` ("" for none). The first three were false
 * positives of an earlier oracle (a resurrection over a cell displaced a block the collection
 * had begun with; an ephemeron's key resurrected before its datum's finalizer), the fourth a slip
 * it missed (a finalizer run below a block resurrected in an earlier collection). */
typedef struct resurrection_case {
  sabotage mode;
  const char *name;
  const char *want;
  const char *program;
} resurrection_case;

static const resurrection_case resurrections[] = {
    {SAB_NONE, "resurrection displaces a live block", "",
     "alloc s0 scan 1\n"
     "fin s0 s1           # resurrects into s1\n"
     "alloc s1 scan 1     # reachable while the collection marks\n"
     "drop s0\n"
     "collect full        # s0's block goes back into s1; s1's block stays this cycle\n"
     "collect full        # and goes in the next\n"},
    {SAB_NONE, "resurrection displaces a block with a finalizer", "",
     "alloc s0 scan 1\n"
     "fin s0 s1\n"
     "alloc s1 scan 1\n"
     "fin s1 -\n"
     "drop s0\n"
     "collect full\n"
     "collect full\n"},
    {SAB_NONE, "ephemeron key resurrected before its datum's finalizer", "",
     "alloc s1 scan 1     # the datum, with a finalizer\n"
     "fin s1 -\n"
     "alloc s0 scan 1     # the key: finalized first, resurrected into s5\n"
     "fin s0 s5\n"
     "ephe s2 s0 s1\n"
     "drop s0\n"
     "drop s1\n"
     "collect major\n"},
    {SAB_FIN_REACHABLE, "finalizer-live below a block resurrected earlier", "oracle.finalizer-live",
     "alloc s0 scan 1\n"
     "fin s0 s3           # resurrects into s3\n"
     "drop s0\n"
     "collect full        # its finalizer ran: s3 holds it\n"
     "alloc s1 scan 1\n"
     "store s3.0 s1\n"
     "fin s1 -\n"
     "drop s1             # reachable through s3.0\n"
     "collect major       # the slip runs its finalizer\n"},
};

static void test_resurrections(void) {
  printf("resurrection:\n");
  for (size_t i = 0; i < sizeof resurrections / sizeof resurrections[0]; i++) {
    const resurrection_case *k = &resurrections[i];
    fuzz_buf bytes;
    if (assemble(&ref_backend, k->name, k->program, &bytes)) {
      outcome o;
      ref_sabotage = k->mode;
      run_bytes(&ref_backend, bytes.data, bytes.size, &o);
      ref_sabotage = SAB_NONE;
      const char *got = o.res.first_kind;
      EXPECT(strcmp(got, k->want) == 0, "`%s`: the oracle reports '%s', not '%s'\n%s", k->name, got,
             k->want, o.text);
      printf("  %-54s -> %s\n", k->name, got[0] ? got : "nothing");
      free(o.text);
    }
    fuzz_buf_free(&bytes);
  }
}

/* Finalizer bodies: their ops run when the finalizer runs, on the program's slots, with the
 * finalized block in `self`; a nested fin_do's body when its own finalizer runs; and a body's
 * finalizer run twice is caught like any other. */
static void test_bodies(void) {
  static const char program[] =
      "alloc s0 scan 2\n"
      "fin_do s0 5         # the body: the next five ops, the nested body's included\n"
      "  self s5           # s0's block, resurrected into s5\n"
      "  alloc s6 scan 2\n"
      "  store s6.0 s5\n"
      "  fin_do s6 1\n"
      "    self s7\n"
      "drop s0\n"
      "collect full        # s0's finalizer: its body runs (4 ops)\n"
      "load s8 s6.0        # the resurrected block, through the body's new one\n"
      "drop s6\n"
      "collect full        # s6's finalizer: the nested body (1 op)\n"
      "load s9 s7.0        # the resurrected block again\n"
      "drop s5\n"
      "drop s7\n"
      "drop s8\n"
      "drop s9\n"
      "collect full        # both blocks unreachable again, their finalizers spent\n";
  fuzz_buf bytes;
  if (!assemble(&ref_backend, "bodies", program, &bytes)) return;
  outcome o;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  EXPECT(o.rc == 0 && o.res.finalizers == 2 && o.res.body_ops == 5,
         "bodies: rc %d, %zu finalizers, %zu body ops (want 0, 2, 5), first '%s'\n%s", o.rc,
         o.res.finalizers, o.res.body_ops, o.res.first_kind, o.text);
  free(o.text);
  ref_sabotage = SAB_FIN_FLAG_KEPT;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  ref_sabotage = SAB_NONE;
  EXPECT(strcmp(o.res.first_kind, "oracle.finalizer-twice") == 0,
         "bodies with a finalizer that stays set: first '%s', not oracle.finalizer-twice\n%s",
         o.res.first_kind, o.text);
  printf("bodies: %zu body ops run; a kept finalizer flag -> %s\n", (size_t)5, o.res.first_kind);
  free(o.text);
  fuzz_buf_free(&bytes);
}

/* ---- No false positives -------------------------------------------------------------------- */

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t rng(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

enum { RANDOM_PROGRAMS = 400, RANDOM_MAX_BYTES = 768 };

/* The program in data, re-encoded for the honest backend's random runs: every `fin sS sK` made
 * `fin sS -` unless `resurrect` (ORACLE_TEST_RESURRECT=0 leaves resurrection out). */
static size_t prepare_program(const uint8_t *data, size_t size, int resurrect, uint8_t *out,
                              size_t cap) {
  const fuzz_opset *set = oracle_opset(&ref_backend);
  fuzz_decoder dec;
  fuzz_op op;
  size_t n = 0;
  fuzz_decoder_init(&dec, set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    if (op.code == FUZZ_OP_FIN && !resurrect) op.args[1].a = FUZZ_NO_SLOT;
    uint8_t bytes[FUZZ_OP_MAX_BYTES];
    size_t len = fuzz_op_encode(set, &op, bytes);
    if (n + len > cap) break;
    memcpy(out + n, bytes, len);
    n += len;
  }
  return n;
}

/* ORACLE_TEST_PROGRAMS and ORACLE_TEST_SEED (environment) run more, or other, programs. */
static void test_random_clean(void) {
  uint8_t raw[RANDOM_MAX_BYTES], data[RANDOM_MAX_BYTES * 2];
  size_t dirty = 0, total_ops = 0, total_fin = 0, total_checks = 0;
  int programs = RANDOM_PROGRAMS;
  const char *env = getenv("ORACLE_TEST_PROGRAMS");
  if (env != NULL && atoi(env) > 0) programs = atoi(env);
  env = getenv("ORACLE_TEST_SEED");
  if (env != NULL && strtoull(env, NULL, 0) != 0) rng_state = strtoull(env, NULL, 0);
  env = getenv("ORACLE_TEST_RESURRECT");
  int resurrect = env == NULL || atoi(env) != 0;
  for (int i = 0; i < programs; i++) {
    size_t size = 1 + (size_t)(rng() % RANDOM_MAX_BYTES);
    for (size_t j = 0; j < size; j++) raw[j] = (uint8_t)rng();
    size = prepare_program(raw, size, resurrect, data, sizeof data);
    outcome o;
    run_bytes(&ref_backend, data, size, &o);
    total_ops += o.res.ops;
    total_fin += o.res.finalizers;
    total_checks += o.res.checks;
    if (o.rc != 0 || o.res.violations != 0) {
      printf("random program %d: %s at op %ld\n", i, o.res.first_kind, o.res.first_op);
      if (dirty++ < 3) {
        printf("random program %d (%zu bytes) on the honest backend: rc %d, first '%s'\n%s", i,
               size, o.rc, o.res.first_kind, o.text);
        fuzz_print_program(stdout, oracle_opset(&ref_backend), data, size, 1);
      }
    }
    free(o.text);
  }
  EXPECT(dirty == 0, "%zu of %d random programs reported a violation on the honest backend", dirty,
         programs);
  printf(
      "%d random programs on the honest backend: %zu ops, %zu finalizers, %zu checks, %zu "
      "dirty\n",
      programs, total_ops, total_fin, total_checks, dirty);
}

/* ---- The op set ---------------------------------------------------------------------------- */

static int has_op(const fuzz_opset *set, const char *mnemonic) {
  for (size_t i = 0; i < set->count; i++) {
    if (strcmp(fuzz_op_table[set->ops[i]].mnemonic, mnemonic) == 0) return 1;
  }
  return 0;
}

static void test_opset(void) {
  const fuzz_opset *set = oracle_opset(&ref_backend);
  EXPECT(set == oracle_opset(&ref_backend), "oracle_opset is not made once");
  EXPECT(strcmp(set->name, "ref") == 0, "the op set is named '%s'", set->name);
  /* Exactly the ops the capabilities allow, in op-table order. */
  size_t n = 0;
  for (int code = 0; code < FUZZ_OP_COUNT; code++) {
    if (!oracle_op_allowed((fuzz_opcode)code, ref_backend.caps)) continue;
    EXPECT(n < set->count && set->ops[n] == (fuzz_opcode)code, "op set entry %zu is not %s", n,
           fuzz_op_table[code].mnemonic);
    n++;
  }
  EXPECT(n == set->count, "the op set has %zu ops, the capabilities allow %zu", set->count, n);
  static const char *const want[] = {
      "alloc", "alloc_large", "store",    "store_imm", "load",     "drop",    "copy",
      "push",  "pop",         "root",     "unroot",    "collect",  "fail",    "fin",
      "unfin", "weak",        "weak_get", "ephe",      "ephe_get", "fin_do",  "self",
      "pin",   "unpin",       "misuse",   "corrupt",   "weak_set", "ephe_set"};
  static const char *const never[] = {
      "range", "range_int", "range_word", "range_pool", "mark_slice", "tune",  "param",  "limit",
      "spawn", "on",        "terminate",  "pct",        "choose",     "block", "unblock"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    EXPECT(has_op(set, want[i]), "the ref op set lacks %s", want[i]);
  }
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
    EXPECT(!has_op(set, never[i]), "the ref op set has %s", never[i]);
  }
  EXPECT(set->count == sizeof want / sizeof want[0], "the ref op set has %zu ops, not %zu",
         set->count, sizeof want / sizeof want[0]);

  /* The assembler refuses what the set does not have. */
  static const char *const refused[] = {"range r0.0 s0 +0\n", "range_int r0.0 5\n", "tune p0 1\n",
                                        "mark_slice 3\n"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    fuzz_buf bytes = {0};
    fuzz_text_error err;
    int ok = fuzz_assemble(set, refused[i], strlen(refused[i]), &bytes, &err);
    EXPECT(!ok, "the ref op set assembles `%.*s`", (int)strlen(refused[i]) - 1, refused[i]);
    fuzz_buf_free(&bytes);
  }

  /* Fewer capabilities, fewer ops. */
  const fuzz_opset *min = oracle_opset(ref_min());
  EXPECT(min != set && strcmp(min->name, "ref-min") == 0, "ref-min shares ref's op set");
  static const char *const min_never[] = {"alloc_large", "fail", "fin",      "unfin",   "weak",
                                          "weak_get",    "ephe", "ephe_get", "range",   "fin_do",
                                          "self",        "pin",  "weak_set", "ephe_set"};
  for (size_t i = 0; i < sizeof min_never / sizeof min_never[0]; i++) {
    EXPECT(!has_op(min, min_never[i]), "the ref-min op set has %s", min_never[i]);
  }
  EXPECT(has_op(min, "alloc") && has_op(min, "collect") && min->count == 11,
         "the ref-min op set has %zu ops, not the 11 core ones", min->count);
  /* A program for the small set runs clean there. */
  fuzz_buf bytes;
  if (assemble(ref_min(), "ref-min",
               "alloc s0 scan 2\nalloc s1 raw 3\nstore s0.0 s1\n"
               "store_imm s1.2 9\ndrop s1\ncollect full\n",
               &bytes)) {
    outcome o;
    run_bytes(ref_min(), bytes.data, bytes.size, &o);
    EXPECT(o.rc == 0 && o.res.violations == 0 && o.res.ops == 6,
           "ref-min program: rc %d, %zu ops, first '%s'\n%s", o.rc, o.res.ops, o.res.first_kind,
           o.text);
    free(o.text);
  }
  fuzz_buf_free(&bytes);
}

int main(void) {
  test_opset();
  test_modes();
  test_resurrections();
  test_bodies();
  test_random_clean();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
