/* Smoke test of the benchmarks on one backend (built once per backend, see bench/BUILD):
 * binary-trees at depth 10, cache at 2^10 slots and tree-churn at depth 10 must print exactly the
 * expected lines (the last two's checksums are the same on every backend and thread count),
 * GCBench at stretch depth 10 must pass its own checks and print its phases. On gcfuzz all run
 * again with collections forced
 * often, in each marking mode (STRESS_PARAMS, STRESS_PARAMS_INC), so a missing root in a benchmark shows up here and not as a
 * wrong number in a benchmark run. The two-thread builds (BENCH_THREADS 2) run everything on one
 * thread and then on two, with the same expected lines: on gcfuzz, two domains, collections
 * started from either, the other stopped at a safepoint or claimed in a blocking section. Takes
 * well under a second (a few seconds under TSan).
 * weak-memo at n = 8 must print exactly its lines too, with the same stress parameters, on one
 * thread on every build (it runs on no more): a live key's entry cleared, or a datum freed
 * under its live key, fails its checks.
 * fragment at n = 10 likewise, and on gcfuzz again with compact=0 (its full collections move
 * blocks), in each marking mode: a reference the compaction failed to update shows up as a
 * wrong checksum or a crash here. */
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

static const char cache_10[] =
    "cache of 2^10 slots, 8192 requests: 4113 hits, 4079 misses, 14629395 bytes read\n"
    "table checksum: 3c8a49f7d70f8f7a\n";

static const char tree_churn_10[] =
    "tree of depth 10, 512 steps replacing subtrees of depth 6\n"
    "tree check: 2047 nodes, checksum 918e507c3f6fd789\n";

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

/* weak-memo at n = 8 prints exactly these lines on every backend (one thread only). */
static const char weak_memo_8[] =
    "weak-memo 8: 256 buckets, a window of 256 keys, 4096 keys created\n"
    "32768 lookups: 28708 hits, 4060 misses\t checksum: 141114599d9b6448\n"
    "64 sweeps\t live entries: 222\n";

/* fragment at n = 10 likewise (one thread only); on gcfuzz also with compact=0 (blocks move at
 * every explicit full collection), where it must have compacted. */
static const char fragment_10[] =
    "fragment 10: 1024 slots, 1024 members, 21868 words\n"
    "round 1: 497 died, 167 born, 694 members, 15268 words\t checksum: 0e39c0a05f7b0a27\n"
    "round 2: 354 died, 120 born, 460 members, 9810 words\t checksum: 091695c401765da7\n"
    "round 3: 208 died, 79 born, 331 members, 7538 words\t checksum: 0706a1cd808ecf35\n"
    "round 4: 160 died, 49 born, 220 members, 5070 words\t checksum: 04ba7b5104699515\n";

#if defined(BENCH_BACKEND_GCFUZZ)
/* A cycle as soon as the heap grows at all, and a mark stack that overflows; in each marking
 * mode (incremental: slices of a few words, so the mutators run, store and allocate between
 * them, and a store the barrier misses shows up as a lost node). */
#define STRESS_PARAMS     "marking=stw,percent=1,mintrigger=0,markstack=4"
#define STRESS_PARAMS_INC "marking=incremental,markslice=64,percent=1,mintrigger=0,markstack=4"
/* fragment compacting at each of its full collections, in both modes, stressed and not. */
static const char *const COMPACT_PARAMS[] = {
    "compact=0",
    STRESS_PARAMS ",compact=0",
    STRESS_PARAMS_INC ",compact=0",
};
#endif

static int failures;

static void expect(int ok, const char *label, const char *what) {
  printf("%s %s on %s: %s\n", ok ? "ok  " : "FAIL", label, BK_NAME, what);
  failures += !ok;
}

/* Runs a benchmark with its output captured; returns the text (caller frees). */
static char *run_captured(int (*run)(int, int, FILE *), int size, int threads, int *status) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (out == NULL) bench_die("smoke_test", "open_memstream failed");
  *status = run(size, threads, out);
  fclose(out);
  return text;
}

/* A benchmark whose every line is known: its own checks, then the text. */
static void check_exact(int (*run)(int, int, FILE *), int size, const char *expected,
                        const char *label, int threads) {
  int status;
  char *text = run_captured(run, size, threads, &status);
  expect(status == 0, label, "its own checks");
  int same = strcmp(text, expected) == 0;
  expect(same, label, "output lines");
  if (!same) printf("-- got:\n%s-- expected:\n%s", text, expected);
  free(text);
}

static void check_gcbench(const char *label, int threads) {
  int status;
  char *text = run_captured(gcbench_run, 10, threads, &status);
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

/* weak-memo runs on one thread only (weak_memo.c), on every build. */
static void check_weak_memo(const char *label) {
  int status;
  char *text = run_captured(weak_memo_run, 8, 1, &status);
  expect(status == 0, label, "values looked up, live entries, data intact");
  int same = strcmp(text, weak_memo_8) == 0;
  expect(same, label, "output lines");
  if (!same) printf("-- got:\n%s-- expected:\n%s", text, weak_memo_8);
  free(text);
}

/* Every benchmark on 1 thread, then (two-thread builds) on BENCH_THREADS. */
static void check_all(const char *params_label) {
  const int thread_counts[] = {1, BENCH_THREADS};
  char label[160];
  for (int i = 0; i < (BENCH_THREADS > 1 ? 2 : 1); i++) {
    int threads = thread_counts[i];
    snprintf(label, sizeof label, "binary-trees 10, %d thread(s)%s", threads, params_label);
    check_exact(binary_trees_run, 10, binary_trees_10, label, threads);
    snprintf(label, sizeof label, "gcbench 10, %d thread(s)%s", threads, params_label);
    check_gcbench(label, threads);
    snprintf(label, sizeof label, "cache 10, %d thread(s)%s", threads, params_label);
    check_exact(cache_churn_run, 10, cache_10, label, threads);
    snprintf(label, sizeof label, "tree-churn 10, %d thread(s)%s", threads, params_label);
    check_exact(tree_churn_run, 10, tree_churn_10, label, threads);
  }
  snprintf(label, sizeof label, "weak-memo 8, 1 thread%s", params_label);
  check_weak_memo(label);
  snprintf(label, sizeof label, "fragment 10, 1 thread%s", params_label);
  check_exact(fragment_run, 10, fragment_10, label, 1);
}

int main(void) {
  check_all("");
#if defined(BENCH_BACKEND_GCFUZZ)
  setenv(GC_PARAMS_ENV, STRESS_PARAMS, 1);
  check_all(", " STRESS_PARAMS);
  setenv(GC_PARAMS_ENV, STRESS_PARAMS_INC, 1);
  check_all(", " STRESS_PARAMS_INC);
  for (size_t i = 0; i < sizeof COMPACT_PARAMS / sizeof COMPACT_PARAMS[0]; i++) {
    char label[160];
    setenv(GC_PARAMS_ENV, COMPACT_PARAMS[i], 1);
    snprintf(label, sizeof label, "fragment 10, 1 thread, %s", COMPACT_PARAMS[i]);
    check_exact(fragment_run, 10, fragment_10, label, 1);
    expect(bench_recorded_compactions() > 0, label, "compacted");
  }
  unsetenv(GC_PARAMS_ENV);
#endif
  printf("smoke_test (%s, BENCH_THREADS=%d): %d failed\n", BK_NAME, BENCH_THREADS, failures);
  return failures != 0;
}
