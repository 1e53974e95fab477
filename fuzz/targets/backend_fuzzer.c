/* The fuzz target of another collector: the programs of its backend's op set (fuzz/oracle), run
 * through the backend interface with the backend-neutral model and the backend's deep check.
 * One binary a backend: FUZZ_BACKEND names it at compile time (fuzz/targets/BUILD: lua_fuzzer,
 * bdwgc_fuzzer), and the binary links that backend. The first finding prints its verdict line
 * and aborts: libFuzzer saves the input; `replay --backend NAME` replays it. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/backend/backend.h"
#if FUZZ_THREADED == 2
#include "fuzz/driver/driver.h" /* fuzz_sanitizer_verdicts_install */
#endif
#include "fuzz/oracle/run.h"
#include "fuzz/targets/custom_mutator.h"
#include "fuzz/targets/target_env.h"

#ifndef FUZZ_BACKEND
#error "FUZZ_BACKEND names the backend, e.g. -DFUZZ_BACKEND=\"lua\""
#endif
/* FUZZ_THREADED=1: the backend's threaded run (NAME-threads: one thread a domain under the
 * controlled scheduler; its op set oracle_opset_threads). FUZZ_THREADED=2: the same programs with
 * the threads running free, for ThreadSanitizer (NAME-threads-tsan, built with
 * --config=tsan-fuzz; tsan_options.c holds its TSan settings). */
#ifndef FUZZ_THREADED
#define FUZZ_THREADED 0
#endif

static const fuzz_backend *backend;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_target_refuse_env_params(FUZZ_BACKEND "_fuzzer");
#if FUZZ_THREADED == 2
  fuzz_sanitizer_verdicts_install(); /* a race's report ends with its verdict line */
#endif
  backend = fuzz_backend_find(FUZZ_BACKEND);
  if (backend == NULL) {
    fprintf(stderr, "%s_fuzzer: the backend %s is not linked in\n", FUZZ_BACKEND, FUZZ_BACKEND);
    exit(2);
  }
  const fuzz_opset *set = FUZZ_THREADED ? oracle_opset_threads(backend) : oracle_opset(backend);
  if (set == NULL) {
    fprintf(stderr, "%s_threads_fuzzer: the backend %s cannot run domains on threads\n",
            FUZZ_BACKEND, FUZZ_BACKEND);
    exit(2);
  }
  fuzz_custom_mutator_init(set, *argc, *argv);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return oracle_target_run_one(backend, FUZZ_THREADED, data, size);
}
