/* Fuzz target `schedule-tsan`: the schedule target's programs (the same op set, seeds and
 * dictionary) with each domain's part on its own thread in real parallel, the controlled
 * scheduler off (FUZZ_FREE_THREADS, as the driver's TSan stress runs them), built with
 * ThreadSanitizer (--config=tsan-fuzz). libFuzzer steers the programs by the collector's coverage
 * and TSan watches the collector's threads: a data race ends the run with the race report and a
 * verdict line of pass `tsan` (kind `tsan.data-race`), and libFuzzer saves the input. Every pass
 * runs after every cycle, and a violation aborts as in the schedule target.
 *
 * Which threads race is up to the OS, not the input: a saved input may need several runs to
 * race again (`-runs=N` runs it N times in one process; ci/campaign's triage does). The ops of
 * the domains take turns through a lock (the model is one thread's at a time), so the races TSan
 * can see are those of the collector's own concurrency: parallel sweeping and marking of a
 * stopped world, stopping and enlisting domains, safepoints, adoption, the shared lists and
 * counters every domain touches. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver/driver.h"
#include "fuzz/targets/custom_mutator.h"
#include "fuzz/targets/target_env.h"

/* Its TSan settings: tsan_options.c. */

/* Sanitizer findings also print their verdict line, with the op that ran into them; what the
 * target keeps between inputs is made before the first (fuzz_target_init). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_target_refuse_env_params("schedule_tsan_fuzzer");
  fuzz_sanitizer_verdicts_install();
  fuzz_custom_mutator_init(&fuzz_opset_schedule, *argc, *argv);
  fuzz_target_init_threads(&fuzz_opset_schedule, FUZZ_FREE_THREADS);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_target_run_free_threads(data, size);
}
