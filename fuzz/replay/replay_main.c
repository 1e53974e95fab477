/* The replay command's main: everything else is the library (fuzz/replay/replay.c). */
#include "fuzz/driver/driver.h"
#include "fuzz/replay/replay.h"

int main(int argc, char **argv) {
  /* A sanitizer finding during a replay prints its verdict line, as it does under the fuzzer. */
  fuzz_sanitizer_verdicts_install();
  return fuzz_replay_main(argc, argv, NULL);
}
