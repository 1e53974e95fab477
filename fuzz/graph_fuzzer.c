/* Fuzz target `graph`: one domain, random object graphs and collections (fuzz/ops.h), every
 * verification pass after every cycle. The first violation is printed, with the op that started
 * its cycle, and aborts: libFuzzer saves the input as a crash. Replay it with fuzz/replay. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const fuzz_options opt = {.abort_on_violation = 1};
  fuzz_result res;
  fuzz_run(data, size, &opt, &res);
  return 0;
}
