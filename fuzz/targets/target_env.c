/* What a fuzz target refuses to read from its environment (target_env.h). */
#include "fuzz/targets/target_env.h"

#include <stdio.h>
#include <stdlib.h>

void fuzz_target_refuse_env_params(const char *target) {
  const char *params = getenv("GCFUZZ_PARAMS");
  if (params == NULL || params[0] == '\0') return;
  fprintf(stderr,
          "%s: GCFUZZ_PARAMS is set (%s), but a fuzz target makes its heaps from the program "
          "alone, so that every finding replays from its input: unset it, and put parameters in "
          "the programs (`param KEY VALUE`, fuzz/README.md) or give them to the replay tool "
          "(`replay --params %s`)\n",
          target, params, params);
  exit(2);
}
