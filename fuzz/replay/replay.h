/* The replay tool as a function, so tests can run it in-process (with a heap-breaking hook). */
#ifndef FUZZ_REPLAY_REPLAY_H
#define FUZZ_REPLAY_REPLAY_H

#include "fuzz/driver/driver.h"

enum { FUZZ_REPLAY_CLEAN = 0, FUZZ_REPLAY_VIOLATION = 1, FUZZ_REPLAY_BAD_INPUT = 2 };

/* The longest input the fuzz targets run: the max_len of their options files (replay_test
 * checks that they agree). A longer program is none a fuzzer made; replay warns. */
enum { FUZZ_REPLAY_TARGET_MAX_LEN = 4096 };

/* The longest program replay runs unless --max-bytes says otherwise. A run grows faster than
 * its input (every cycle's passes walk a heap that grows with it): 64 KiB of random graph bytes
 * take about a second, a megabyte over a minute, a hundred megabytes hours. */
enum { FUZZ_REPLAY_DEFAULT_MAX_BYTES = 64 * 1024 };

/* Parse argv like the replay command and run it; `base` supplies after_op hooks (tests) and may
 * be NULL. Returns the exit status. */
int fuzz_replay_main(int argc, char **argv, const fuzz_options *base);

#endif /* FUZZ_REPLAY_REPLAY_H */
