/* Fuzz target `schedule`: two to four domains, each running its part of the program on its own
 * thread under the controlled scheduler (fuzz/sched/sched.h), one thread at a time; the program
 * picks the interleaving (`pct SEED DEPTH`, `choose WORD`, or by default PCT seeded with the
 * program itself). Spawn and terminate (orphans and adoption), collections from any domain,
 * blocking sections, finalizers, conservative words; every pass after every cycle at the
 * stop-the-world point, and a deadlock or livelock of the collector is a violation. The same input
 * gives the same interleaving: replay a crash with fuzz/replay/replay --target schedule, which
 * prints it. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver/driver.h"
#include "fuzz/targets/custom_mutator.h"
#include "fuzz/targets/target_env.h"

/* Sanitizer findings also print their verdict line, with the op that ran into them; what the
 * target keeps between inputs is made before the first (fuzz_target_init). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_target_refuse_env_params("schedule_fuzzer");
  fuzz_sanitizer_verdicts_install();
  fuzz_custom_mutator_init(&fuzz_opset_schedule, *argc, *argv);
  fuzz_target_init(&fuzz_opset_schedule);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_target_run_one(&fuzz_opset_schedule, data, size);
}
