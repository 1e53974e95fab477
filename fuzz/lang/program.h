/* Decoding a byte string into ops, and encoding ops back into canonical bytes.
 *
 * Decoding never fails: every byte string is a program (fuzz/lang/ops.h). Encoding writes the
 * canonical bytes of an op: the opcode byte is the op's index and each operand byte its reduced
 * value, so decode(encode(op)) == op. The text form (fuzz/lang/text.h) is built on these two.
 */
#ifndef FUZZ_PROGRAM_H
#define FUZZ_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/lang/ops.h"

/* A cursor over an input; decode with fuzz_program_next until it returns 0. Finalizer bodies
 * (fin_do, ops.h): the ops of an open body get its depth; rem[k] is how many ops the body open
 * at depth k + 1 still has (each op counts in every body around it). */
typedef struct fuzz_decoder {
  const fuzz_opset *set;
  const uint8_t *data;
  size_t size;
  size_t pos;
  size_t index; /* ops decoded so far */
  int depth;    /* bodies open */
  int rem[FUZZ_BODY_DEPTH];
  int floor; /* 0; a body's cursor (fuzz_decoder_init_body): its depth, the end below it */
} fuzz_decoder;

/* set NULL: the graph target's (every op). */
static inline void fuzz_decoder_init(fuzz_decoder *dec, const fuzz_opset *set, const uint8_t *data,
                                     size_t size) {
  dec->set = set != NULL ? set : &fuzz_opset_graph;
  dec->data = data;
  dec->size = size;
  dec->pos = 0;
  dec->index = 0;
  dec->depth = 0;
  dec->floor = 0;
}

/* A cursor over one finalizer body only: the `count` ops at depth `depth` (>= 1) that start at
 * byte `pos` with op number `index` (a fin_do op's offset past its own bytes, index + 1, and its
 * body), then the end; ops of bodies nested in it come with their greater depth. A count of 0
 * or a depth past FUZZ_BODY_DEPTH (a fin_do that opens no body) gives no op at all. */
void fuzz_decoder_init_body(fuzz_decoder *dec, const fuzz_opset *set, const uint8_t *data,
                            size_t size, size_t pos, size_t index, int depth, int count);

/* The next op into *op; 0 at the end of the input. Missing operand bytes at the end read as 0. */
int fuzz_program_next(fuzz_decoder *dec, fuzz_op *op);

/* The number of ops in the input. */
size_t fuzz_program_count(const fuzz_opset *set, const uint8_t *data, size_t size);

/* Largest encoded op: the opcode byte and every operand's bytes (a WORD is 8). */
enum {
  FUZZ_OPERAND_MAX_BYTES = 8,
  FUZZ_OP_MAX_BYTES = 1 + FUZZ_OPERAND_MAX_BYTES * FUZZ_MAX_OPERANDS
};

/* The canonical bytes of op in `set` (its args must already be in range) into out; returns the
 * length, or 0 if the set does not have the op. */
size_t fuzz_op_encode(const fuzz_opset *set, const fuzz_op *op, uint8_t out[FUZZ_OP_MAX_BYTES]);

/* A growable byte buffer, for the assembler and the tools. */
typedef struct fuzz_buf {
  uint8_t *data;
  size_t size, capacity;
} fuzz_buf;

int fuzz_buf_append(fuzz_buf *b, const void *bytes, size_t n); /* 0 when out of memory */
void fuzz_buf_free(fuzz_buf *b);

#endif /* FUZZ_PROGRAM_H */
