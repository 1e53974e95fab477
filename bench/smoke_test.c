/* Smoke test of the benchmarks on one backend (built once per backend, see bench/BUILD):
 * binary-trees at depth 10 must print exactly the expected lines, GCBench at stretch depth 10 must
 * pass its own checks and print its phases. On gcfuzz both run a second time with collections
 * forced often (STRESS_PARAMS), so a missing root in a benchmark shows up here and not as a
 * wrong number in a benchmark run. Takes well under a second. */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/backend.h"
#include "bench/bench.h"

static const char binary_trees_10[] =
    "stretch tree of depth 11\t check: 4095\n"
    "1024\t trees of depth 4\t check: 31744\n"
    "256\t trees of depth 6\t check: 32512\n"
    "64\t trees of depth 8\t check: 32704\n"
    "16\t trees of depth 10\t check: 32752\n"
    "long lived tree of depth 10\t check: 2047\n";

/* Lines GCBench at stretch depth 10 must print (its timings vary, so not the whole text). */
static const char *const gcbench_10_lines[] = {
    "Garbage Collector Test\n",
    " Stretching memory with a binary tree of depth 10\n",
    " Creating a long-lived binary tree of depth 8\n",
    " Creating a long-lived array of 500000 doubles\n",
    "Creating 132 trees of depth 4\n", /* 2 * (2^11 - 1) / (2^5 - 1) */
    "Creating 32 trees of depth 6\n",
    "Creating 8 trees of depth 8\n",
    "Completed in ",
};

#if defined(BENCH_BACKEND_GCFUZZ)
/* A cycle as soon as the heap grows at all, and a mark stack that overflows. */
#define STRESS_PARAMS "percent=1,mintrigger=0,markstack=4"
#endif

static int failures;

static void expect(int ok, const char *label, const char *what) {
  printf("%s %s on %s: %s\n", ok ? "ok  " : "FAIL", label, BK_NAME, what);
  failures += !ok;
}

/* Runs a benchmark with its output captured; returns the text (caller frees). */
static char *run_captured(int (*run)(int, FILE *), int size, int *status) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (out == NULL) bench_die("smoke_test", "open_memstream failed");
  *status = run(size, out);
  fclose(out);
  return text;
}

static void check_binary_trees(const char *label) {
  int status;
  char *text = run_captured(binary_trees_run, 10, &status);
  expect(status == 0, label, "node counts");
  int same = strcmp(text, binary_trees_10) == 0;
  expect(same, label, "output lines");
  if (!same) printf("-- got:\n%s-- expected:\n%s", text, binary_trees_10);
  free(text);
}

static void check_gcbench(const char *label) {
  int status;
  char *text = run_captured(gcbench_run, 10, &status);
  expect(status == 0, label, "long-lived tree and array intact");
  int missing = 0;
  for (size_t i = 0; i < sizeof gcbench_10_lines / sizeof gcbench_10_lines[0]; i++) {
    if (strstr(text, gcbench_10_lines[i]) != NULL) continue;
    printf("-- missing line: %s", gcbench_10_lines[i]);
    missing++;
  }
  expect(missing == 0, label, "output lines");
  if (missing != 0) printf("-- got:\n%s", text);
  free(text);
}

int main(void) {
  check_binary_trees("binary-trees 10");
  check_gcbench("gcbench 10");
#if defined(BENCH_BACKEND_GCFUZZ)
  setenv(GC_PARAMS_ENV, STRESS_PARAMS, 1);
  check_binary_trees("binary-trees 10, " STRESS_PARAMS);
  check_gcbench("gcbench 10, " STRESS_PARAMS);
#endif
  printf("smoke_test (%s): %d failed\n", BK_NAME, failures);
  return failures != 0;
}
