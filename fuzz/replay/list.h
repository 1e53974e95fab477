/* The tables `replay --list-ops` prints, generated from the code, so the READMEs' copies can be
 * checked against them (readme_tables_test). */
#ifndef FUZZ_REPLAY_LIST_H
#define FUZZ_REPLAY_LIST_H

#include <stdio.h>

/* The op table of fuzz/lang/ops.h as a markdown table, one row an op in opcode order: the mnemonic,
 * its operands (each operand kind's description, in order) and what it does. */
void replay_list_ops(FILE *out);

/* Every backend linked into the binary (fuzz/backend/registry.c): its name, what it is, its
 * capabilities, its tunables (tune p0..p11) and its op set's size. */
void replay_list_backends(FILE *out);

#endif /* FUZZ_REPLAY_LIST_H */
