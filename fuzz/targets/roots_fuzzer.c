/* Fuzz target `roots`: conservative root ranges. Its bytes name only the ops that make blocks
 * and aim words at them (fuzz_opset_roots in fuzz/lang/program.c): interior pointers, headers, one
 * past the end, wastage, free slots, pool headers, large blocks and random words, with
 * collections in between. The model resolves every word itself, so a collector that keeps or
 * frees a block a word does not or does point into is caught at the next cycle. Replay a crash
 * with fuzz/replay/replay --target roots. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver/driver.h"
#include "fuzz/targets/custom_mutator.h"
#include "fuzz/targets/target_env.h"

/* Sanitizer findings also print their verdict line, with the op that ran into them; what the
 * target keeps between inputs is made before the first (fuzz_target_init). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fuzz_target_refuse_env_params("roots_fuzzer");
  fuzz_sanitizer_verdicts_install();
  fuzz_custom_mutator_init(&fuzz_opset_roots, *argc, *argv);
  fuzz_target_init(&fuzz_opset_roots);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_target_run_one(&fuzz_opset_roots, data, size);
}
