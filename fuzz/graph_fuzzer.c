/* Fuzz target `graph`: one domain, random object graphs and collections (fuzz/ops.h), every
 * verification pass after every cycle. The first violation is printed, with the op that started
 * its cycle, and aborts: libFuzzer saves the input as a crash. Replay it with fuzz/replay. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/driver.h"

/* Pools stay mapped from one input's heap to the next: mapping, faulting and unmapping them per
 * input would cost more than running most programs. The cache lives as long as the process. */
static gc_pool_cache *pool_cache;
/* Likewise the verification passes' and the model's memory (reset by every program). */
static fuzz_scratch *scratch;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (pool_cache == NULL) pool_cache = gc_pool_cache_create(256);
  if (scratch == NULL) scratch = fuzz_scratch_create();
  fuzz_options opt = {.abort_on_violation = 1, .pool_cache = pool_cache, .scratch = scratch};
  fuzz_result res;
  fuzz_run(data, size, &opt, &res);
  return 0;
}
