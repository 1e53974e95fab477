/* fuzz_options.verify and verify_given: the heap's verify mask is exactly `verify` when it is
 * given (0: no pass at all), and every pass when it is not.
 *
 * Usage: options_test (no arguments).
 */
#include <stdio.h>
#include <string.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"

/* A program with major collections and a compaction, so that every pass in the mask runs. */
static const char program[] =
    "alloc s0 scan 2\n"
    "alloc s1 scan 1\n"
    "store s0.0 s1\n"
    "collect major\n"
    "drop s1\n"
    "collect full\n"
    "compact\n";

/* The runs of each heap pass (every row but the driver's) with these options. */
static void run(int given, unsigned verify, size_t runs[FUZZ_PASS_COUNT]) {
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  CHECK(fuzz_assemble(NULL, program, strlen(program), &bytes, &err));
  fuzz_options opt = {.verify = verify, .verify_given = given};
  fuzz_result res;
  CHECK_EQ_U(fuzz_run(bytes.data, bytes.size, &opt, &res), 0);
  memcpy(runs, res.pass_runs, sizeof res.pass_runs);
  fuzz_buf_free(&bytes);
}

static void not_given_runs_every_pass(void) {
  size_t runs[FUZZ_PASS_COUNT];
  run(0, 0, runs);
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    if (p != FUZZ_PASS_DRIVER) CHECK(runs[p] > 0);
  }
}

static void given_zero_runs_no_pass(void) {
  size_t runs[FUZZ_PASS_COUNT];
  run(1, 0, runs);
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    if (p != FUZZ_PASS_DRIVER) CHECK_EQ_U(runs[p], 0);
  }
}

static void given_mask_runs_exactly_it(void) {
  size_t runs[FUZZ_PASS_COUNT];
  run(1, GC_VERIFY_REACH, runs);
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    if (p == FUZZ_PASS_DRIVER) continue;
    if (p == GC_VPASS_REACH) {
      CHECK(runs[p] > 0);
    } else {
      CHECK_EQ_U(runs[p], 0);
    }
  }
}

int main(void) {
  RUN(not_given_runs_every_pass);
  RUN(given_zero_runs_no_pass);
  RUN(given_mask_runs_exactly_it);
  CHECK_MAIN_END();
}
