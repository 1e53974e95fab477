/* What a fuzz target refuses to read from its environment. */
#ifndef FUZZ_TARGETS_TARGET_ENV_H
#define FUZZ_TARGETS_TARGET_ENV_H

/* GCFUZZ_PARAMS changes the collector's parameters for every heap gc_heap_create(NULL) makes. A
 * fuzz target makes its heaps from the program alone (the driver's defaults, then the program's
 * `param` ops), so that every finding replays from its input: a run under GCFUZZ_PARAMS would
 * find what its input alone does not reproduce. So a target started with GCFUZZ_PARAMS set (and
 * not empty) says so, names what to use instead, and exits with status 2 before its first input.
 * `target` names it in the message. */
void fuzz_target_refuse_env_params(const char *target);

#endif /* FUZZ_TARGETS_TARGET_ENV_H */
