/* The TSan stress of a backend's threaded target (gcfuzz-threads): its corpus programs run again
 * and again through the backend interface with every domain on its own thread in real parallel
 * (oracle_options.free_threads: the controlled scheduler off, each op whole under a turn), the
 * backend-neutral model and the backend's deep check after every collection, for a bounded time.
 * The ops the schedule target's stress never runs are here: weak references and ephemerons made,
 * read and set while other domains' threads park, flush their mark work and slice. Under
 * --config=tsan any data race aborts the run; in every build a violation fails it.
 *
 * Usage: threads_stress_test BACKEND FILE... (the text programs; Bazel passes every .txt of
 * corpus/gcfuzz-threads/). Time: GCFUZZ_THREADS_STRESS_SECONDS, default 20 under
 * ThreadSanitizer (what ci/test runs) and 2 in the other builds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/run.h"

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

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 3) {
    fprintf(stderr, "usage: threads_stress_test BACKEND FILE...\n");
    return 2;
  }
  const fuzz_backend *b = fuzz_backend_find(argv[1]);
  const fuzz_opset *set = b != NULL ? oracle_opset_threads(b) : NULL;
  if (set == NULL) {
    fprintf(stderr,
            "threads_stress_test: %s is not a linked backend that runs domains on threads\n",
            argv[1]);
    return 2;
  }
  const char *env = getenv("GCFUZZ_THREADS_STRESS_SECONDS");
  double seconds = env != NULL && atof(env) > 0 ? atof(env) : STRESS_DEFAULT_SECONDS;
  int programs = argc - 2;
  fuzz_buf *bytes = calloc((size_t)programs, sizeof *bytes);
  for (int i = 0; i < programs; i++) {
    fuzz_text_error err;
    if (!fuzz_assemble_file(set, argv[i + 2], &bytes[i], &err)) {
      fprintf(stderr, "%s:%zu:%zu: error: %s\n", argv[i + 2], err.line, err.column, err.message);
      return 2;
    }
  }
  oracle_options opt = {.backend = b, .ops = set, .threaded = 1, .free_threads = 1, .out = stderr};
  double start = now_s(), last_progress = start;
  unsigned long runs = 0, collects = 0, violations = 0;
  while (now_s() - start < seconds) {
    for (int i = 0; i < programs; i++) {
      oracle_result res;
      int rc = oracle_run(bytes[i].data, bytes[i].size, &opt, &res);
      runs++;
      collects += res.collects;
      if (rc != 0) {
        violations++;
        fprintf(stderr, "FAIL %s: %s\n", argv[i + 2], rc < 0 ? "no heap" : res.first_kind);
      }
    }
    if (now_s() - last_progress >= 5) {
      printf("stress: %.0f s, %lu runs, %lu collections, %lu violations\n", now_s() - start, runs,
             collects, violations);
      last_progress = now_s();
    }
  }
  printf(
      "stress: %lu runs of %d %s programs on 2-4 free threads in %.1f s, %lu collections, %lu "
      "violations\n",
      runs, programs, argv[1], now_s() - start, collects, violations);
  for (int i = 0; i < programs; i++) fuzz_buf_free(&bytes[i]);
  free(bytes);
  return violations == 0 && runs > 0 ? 0 : 1;
}
