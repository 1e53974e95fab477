/* A threaded program's plan (fuzz/sched/plan.h) on small text programs in the schedule target's
 * op set:
 *
 * - parts: `on dN` switches the part and is in none; each part keeps program order; the parts
 *   stand one after another in one array; the configuration's k counts the kept ops and the
 *   collections;
 * - terminate: `terminate dN` (N != 0) goes to dN's own part wherever it stands, `terminate d0`
 *   stays where it stands;
 * - pct: the first `pct` op sets the seed and the depth (0: 3, at most 8), later ones nothing,
 *   and it wins over `choose`;
 * - choose: 8 bytes an op, low byte first, read in BYTES mode when there is no pct op;
 * - default: PCT of depth 3 seeded by the program's bytes, equal for one program, different for
 *   two; an empty program plans no op.
 */
#include "fuzz/sched/plan.h"

#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"

/* The plan of a text program, assembled in the schedule target's op set. */
static fuzz_sched_plan plan_of(const char *text) {
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  int assembled = fuzz_assemble(&fuzz_opset_schedule, text, strlen(text), &bytes, &err);
  if (!assembled) fprintf(stderr, "line %zu: %s\n", err.line, err.message);
  CHECK(assembled);
  fuzz_sched_plan plan;
  CHECK(fuzz_sched_plan_make(&plan, &fuzz_opset_schedule, bytes.data, bytes.size));
  fuzz_buf_free(&bytes);
  return plan;
}

/* Domain k's part is the ops numbered want[0], want[1], ... (n of them), in that order. */
static void check_part(const fuzz_sched_plan *plan, int k, const size_t *want, size_t n) {
  CHECK_EQ_U(plan->count[k], n);
  if (plan->count[k] != n) return;
  for (size_t i = 0; i < n; i++) CHECK_EQ_U(plan->ops[plan->start[k] + i].index, want[i]);
}

static void parts(void) {
  fuzz_sched_plan plan = plan_of(
      "spawn d1\n"        /* 0: d0 */
      "alloc s0 scan 1\n" /* 1: d0 */
      "on d1\n"           /* 2: no part */
      "alloc s1 scan 2\n" /* 3: d1 */
      "collect major\n"   /* 4: d1 */
      "on d0\n"           /* 5: no part */
      "drop s0\n"         /* 6: d0 */
      "on d3\n"           /* 7: no part */
      "collect full\n");  /* 8: d3 */
  check_part(&plan, 0, (const size_t[]){0, 1, 6}, 3);
  check_part(&plan, 1, (const size_t[]){3, 4}, 2);
  check_part(&plan, 2, NULL, 0);
  check_part(&plan, 3, (const size_t[]){8}, 1);
  /* One array, part after part. */
  CHECK_EQ_U(plan.start[0], 0);
  for (int k = 1; k < FUZZ_DOMAINS; k++)
    CHECK_EQ_U(plan.start[k], plan.start[k - 1] + plan.count[k - 1]);
  CHECK(plan.ops[0].code == FUZZ_OP_SPAWN);
  CHECK(plan.ops[plan.start[1] + 1].code == FUZZ_OP_COLLECT);
  /* k: 6 kept ops, 2 collections. */
  CHECK_EQ_U(plan.cfg.pct_steps, 4 * 6 + 64 * 2 + 32);
  CHECK_EQ_U(plan.cfg.livelock_steps, 20000);
  CHECK(plan.cfg.trace == NULL);
  fuzz_sched_plan_free(&plan);
  CHECK(plan.ops == NULL && plan.choices == NULL);
}

static void terminate_routing(void) {
  fuzz_sched_plan plan = plan_of(
      "spawn d2\n"          /* 0: d0 */
      "terminate d2\n"      /* 1: d2's own part, though d0's ops stand here */
      "on d2\n"             /* 2 */
      "alloc s0 scan 1\n"   /* 3: d2 */
      "terminate d0\n"      /* 4: stays in d2's part (d0 cannot end itself) */
      "on d1\n"             /* 5 */
      "terminate d3\n"      /* 6: d3's part */
      "alloc s1 scan 1\n"); /* 7: d1 */
  check_part(&plan, 0, (const size_t[]){0}, 1);
  check_part(&plan, 1, (const size_t[]){7}, 1);
  check_part(&plan, 2, (const size_t[]){1, 3, 4}, 3); /* program order within the part */
  check_part(&plan, 3, (const size_t[]){6}, 1);
  CHECK(plan.ops[plan.start[2] + 2].code == FUZZ_OP_TERMINATE);
  fuzz_sched_plan_free(&plan);
}

static void pct_first_wins(void) {
  fuzz_sched_plan plan = plan_of(
      "alloc s0 scan 1\n"
      "pct 0x1234 5\n"
      "choose 0x102\n"
      "pct 0x9999 2\n"
      "collect major\n");
  CHECK(plan.cfg.mode == FUZZ_SCHED_PCT); /* the pct op wins over choose */
  CHECK_EQ_U(plan.cfg.seed, 0x1234);
  CHECK_EQ_U(plan.cfg.depth, 5);
  CHECK(plan.cfg.bytes == NULL);
  CHECK_EQ_U(plan.count[0], 2); /* neither pct nor choose is an op of a part */
  CHECK_EQ_U(plan.cfg.pct_steps, 4 * 2 + 64 * 1 + 32);
  fuzz_sched_plan_free(&plan);

  plan = plan_of("pct 0x5 0\npct 0x6 4\n");
  CHECK_EQ_U(plan.cfg.seed, 5);
  CHECK_EQ_U(plan.cfg.depth, 3); /* 0 means 3, and the second op changes nothing */
  CHECK_EQ_U(plan.count[0], 0);
  fuzz_sched_plan_free(&plan);

  plan = plan_of("pct 0x7 200\n");
  CHECK_EQ_U(plan.cfg.depth, 8); /* at most 8 */
  fuzz_sched_plan_free(&plan);
}

static void choose_bytes(void) {
  fuzz_sched_plan plan = plan_of(
      "choose 0x807060504030201\n"
      "spawn d1\n"
      "choose 0x1\n");
  CHECK(plan.cfg.mode == FUZZ_SCHED_BYTES);
  CHECK_EQ_U(plan.choices_len, 16);
  CHECK(plan.cfg.bytes == plan.choices);
  CHECK_EQ_U(plan.cfg.bytes_len, 16);
  static const uint8_t want[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 0, 0, 0, 0, 0};
  CHECK(memcmp(plan.choices, want, sizeof want) == 0);
  CHECK_EQ_U(plan.count[0], 1);
  fuzz_sched_plan_free(&plan);
}

static void default_seed(void) {
  const char *a = "alloc s0 scan 1\ncollect major\n";
  const char *b = "alloc s0 scan 2\ncollect major\n";
  fuzz_sched_plan pa = plan_of(a), pa_again = plan_of(a), pb = plan_of(b);
  CHECK(pa.cfg.mode == FUZZ_SCHED_PCT);
  CHECK_EQ_U(pa.cfg.depth, 3);
  CHECK_EQ_U(pa.cfg.seed, pa_again.cfg.seed);
  CHECK(pa.cfg.seed != pb.cfg.seed);
  CHECK_EQ_U(pa.choices_len, 0);
  fuzz_sched_plan_free(&pa);
  fuzz_sched_plan_free(&pa_again);
  fuzz_sched_plan_free(&pb);

  fuzz_sched_plan empty;
  CHECK(fuzz_sched_plan_make(&empty, &fuzz_opset_schedule, NULL, 0));
  for (int k = 0; k < FUZZ_DOMAINS; k++) CHECK_EQ_U(empty.count[k], 0);
  CHECK(empty.cfg.mode == FUZZ_SCHED_PCT);
  CHECK_EQ_U(empty.cfg.seed, 1469598103934665603ull); /* the hash of no byte: its start */
  CHECK_EQ_U(empty.cfg.pct_steps, 32);
  fuzz_sched_plan_free(&empty);
}

int main(void) {
  RUN(parts);
  RUN(terminate_routing);
  RUN(pct_first_wins);
  RUN(choose_bytes);
  RUN(default_seed);
  CHECK_MAIN_END();
}
