/* Fuzz target `graph`: random object graphs and collections with every op (fuzz/lang/ops.h), every
 * verification pass after every cycle. The first violation is printed, with the op that started
 * its cycle, and aborts: libFuzzer saves the input as a crash. Replay it with the replay tool. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver/driver.h"
#include "fuzz/targets/custom_mutator.h"
#include "fuzz/targets/target_env.h"

/* Sanitizer findings also print their verdict line, with the op that ran into them; what the
 * target keeps between inputs is made before the first (fuzz_target_init). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_target_refuse_env_params("graph_fuzzer");
  fuzz_sanitizer_verdicts_install();
  fuzz_custom_mutator_init(&fuzz_opset_graph, *argc, *argv);
  fuzz_target_init(&fuzz_opset_graph);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_target_run_one(&fuzz_opset_graph, data, size);
}
