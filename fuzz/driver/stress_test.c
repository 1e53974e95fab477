/* The TSan stress of the schedule target: its corpus programs run again and again with every
 * domain on its own thread in real parallel (FUZZ_FREE_THREADS: the controlled scheduler off),
 * every pass after every cycle, for a bounded time. Under --config=tsan any data race aborts the
 * run; in every build a violation fails it.
 *
 * Usage: stress_test FILE... (the text programs; Bazel passes every .txt of corpus/schedule/).
 * Time: GCFUZZ_SCHEDULE_STRESS_SECONDS, default 20 under ThreadSanitizer (what ci/test runs) and
 * 2 in the other builds (which only check that the mode works); ci/campaign --tsan sets it
 * longer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRESS_DEFAULT_SECONDS 20
#endif
#endif
#ifndef STRESS_DEFAULT_SECONDS
#define STRESS_DEFAULT_SECONDS 2
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load(const char *path, fuzz_buf *bytes) {
  fuzz_text_error err;
  int ok = fuzz_assemble_file(&fuzz_opset_schedule, path, bytes, &err);
  if (!ok) fprintf(stderr, "%s:%zu:%zu: error: %s\n", path, err.line, err.column, err.message);
  return ok;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: stress_test FILE...\n");
    return 2;
  }
  const char *env = getenv("GCFUZZ_SCHEDULE_STRESS_SECONDS");
  double seconds = env != NULL && atof(env) > 0 ? atof(env) : STRESS_DEFAULT_SECONDS;
  int programs = argc - 1;
  fuzz_buf *bytes = calloc((size_t)programs, sizeof *bytes);
  for (int i = 0; i < programs; i++) {
    if (!load(argv[i + 1], &bytes[i])) return 2;
  }
  fuzz_options opt = {.ops = &fuzz_opset_schedule, .threads = FUZZ_FREE_THREADS, .out = stderr};
  double start = now_s(), last_progress = start;
  unsigned long runs = 0, cycles = 0, violations = 0;
  while (now_s() - start < seconds) {
    for (int i = 0; i < programs; i++) {
      fuzz_result res;
      int rc = fuzz_run(bytes[i].data, bytes[i].size, &opt, &res);
      runs++;
      cycles += res.cycles;
      if (rc != 0) {
        violations++;
        fprintf(stderr,
                "FAIL %s: %s (replay: bazel run //fuzz/replay:replay -- --target schedule "
                "--free $PWD/%s)\n",
                argv[i + 1], rc < 0 ? "no heap" : res.first_kind, argv[i + 1]);
      }
    }
    if (now_s() - last_progress >= 5) {
      printf("stress: %.0f s, %lu runs, %lu cycles, %lu violations\n", now_s() - start, runs,
             cycles, violations);
      last_progress = now_s();
    }
  }
  printf(
      "stress: %lu runs of %d programs on 2-4 free threads in %.1f s, %lu cycles, %lu "
      "violations\n",
      runs, programs, now_s() - start, cycles, violations);
  for (int i = 0; i < programs; i++) fuzz_buf_free(&bytes[i]);
  free(bytes);
  return violations == 0 && runs > 0 ? 0 : 1;
}
