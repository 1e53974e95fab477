/* The replay command's main: everything else is the library (fuzz/replay/replay.c). */
#include "fuzz/replay/replay.h"

int main(int argc, char **argv) { return fuzz_replay_main(argc, argv, NULL); }
