/* fuzz/replay: replay a fuzz input without libFuzzer (see fuzz_replay_main). */
#include "fuzz/replay.h"

int main(int argc, char **argv) { return fuzz_replay_main(argc, argv, NULL); }
