/* What a program's slots are known to hold, op by op, before anything runs: the size of the block
 * each slot of each domain's bank last received from an `alloc` (or a `copy` of such a slot).
 * It serves the one check the text form can make statically: a field operand past the end of
 * the block its slot holds. Such an op does nothing when it runs (fuzz/lang/ops.h, FUZZ_FIELDS),
 * so in a hand-written program it is a mistake worth an error at its FILE:LINE:COL; a fuzzer's
 * bytes keep it (a mutation makes them all the time), and printing them marks it.
 *
 * Only what is certain counts: a slot filled by a load, a weak read, a pop or a finalizer's
 * `self` is unknown, ops in a finalizer body (they run elsewhere, later) and ops a blocking section
 * skips change nothing, and a domain's bank starts unknown. */
#ifndef FUZZ_LANG_SHAPES_H
#define FUZZ_LANG_SHAPES_H

#include <stddef.h>

#include "fuzz/lang/program.h"

typedef struct fuzz_shape {
  size_t fields;  /* 0: unknown */
  size_t made_by; /* the op (its index) whose alloc made the block */
} fuzz_shape;

typedef struct fuzz_shapes {
  fuzz_shape slot[FUZZ_DOMAINS][FUZZ_SLOTS];
  int spawned[FUZZ_DOMAINS];
  int blocked[FUZZ_DOMAINS]; /* `block` ran on it and no `unblock` yet */
  int on;                    /* the domain the ops run on */
} fuzz_shapes;

void fuzz_shapes_init(fuzz_shapes *s);
/* Whether `op`, about to run, names a field past the end of the block its slot is known to
 * hold: 1 with the operand's index in *operand and that block's shape in *shape; else 0. */
int fuzz_shapes_field_past_end(const fuzz_shapes *s, const fuzz_op *op, int *operand,
                               fuzz_shape *shape);
/* What `op` does to the slots' shapes. */
void fuzz_shapes_step(fuzz_shapes *s, const fuzz_op *op);

#endif /* FUZZ_LANG_SHAPES_H */
