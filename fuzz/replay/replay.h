/* The replay tool as a function, so tests can run it in-process (with a heap-breaking hook). */
#ifndef FUZZ_REPLAY_REPLAY_H
#define FUZZ_REPLAY_REPLAY_H

#include "fuzz/driver.h"

enum { FUZZ_REPLAY_CLEAN = 0, FUZZ_REPLAY_VIOLATION = 1, FUZZ_REPLAY_BAD_INPUT = 2 };

/* Parse argv like the replay command and run it; `base` supplies after_op hooks (tests) and may
 * be NULL. Returns the exit status. */
int fuzz_replay_main(int argc, char **argv, const fuzz_options *base);

#endif /* FUZZ_REPLAY_REPLAY_H */
