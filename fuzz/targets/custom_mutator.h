/* The op-aware mutator (fuzz/lang/mutate.h) as libFuzzer's custom mutator of a fuzz target. */
#ifndef FUZZ_TARGETS_CUSTOM_MUTATOR_H
#define FUZZ_TARGETS_CUSTOM_MUTATOR_H

#include "fuzz/lang/ops.h"

/* Call from LLVMFuzzerInitialize with its arguments: the mutator decodes inputs with `set` and
 * inserts the entries of the dictionary libFuzzer was given (its last -dict=FILE argument; none:
 * no idioms, the other mutations still run). A dictionary that cannot be read is said on stderr,
 * and the mutator runs without it. Linking this file makes it the target's mutator: it defines
 * LLVMFuzzerCustomMutator, which libFuzzer then calls instead of its own mutations (it calls them
 * back through LLVMFuzzerMutate). GCFUZZ_MUTATOR=bytes in the environment leaves libFuzzer's own
 * mutations alone (to compare the two); any value but `ops` and `bytes` is refused.
 * GCFUZZ_ZEAL=MODES (the values of `param zeal`: store, slice+recheck, ...) makes every input
 * the mutator returns begin with `param zeal MODES` (after `param marking incremental` for store
 * and recheck, which act only while a cycle marks beside the mutators): a campaign under zeal,
 * whose every input and crash replays it by itself. Modes the target's programs cannot say are
 * refused. */
void fuzz_custom_mutator_init(const fuzz_opset *set, int argc, char **argv);

#endif /* FUZZ_TARGETS_CUSTOM_MUTATOR_H */
