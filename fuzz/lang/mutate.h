/* Mutations that know where ops begin: the fuzz targets' custom mutator.
 *
 * libFuzzer mutates bytes. An op is an opcode byte and its operand bytes (ops.h), so a byte
 * mutation inside an op changes that op, and an insertion shifts every op after it onto other
 * bytes: a dictionary idiom (fuzz/targets/NAME.dict: a few whole ops) inserted at a random byte
 * becomes those ops only when the byte is where an op begins. A bug that needs two idioms in a
 * row (start a cycle and hide a block, then overwrite its last pointer and switch domains) was
 * out of reach of an empty corpus. These mutations cut the input at op boundaries: insert a
 * dictionary entry where an op begins, delete or duplicate a run of whole ops, swap two ops; and
 * leave the rest to libFuzzer's own mutations, which stay most of them.
 */
#ifndef FUZZ_MUTATE_H
#define FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/lang/dict.h"
#include "fuzz/lang/ops.h"

/* libFuzzer's own mutation of the bytes (LLVMFuzzerMutate): the new size, <= max_size. */
typedef size_t (*fuzz_byte_mutator)(uint8_t *data, size_t size, size_t max_size);

typedef struct fuzz_mutator {
  const fuzz_opset *set;   /* the target's op set (NULL: the graph target's) */
  const fuzz_dict *dict;   /* the target's dictionary; NULL or empty: no idioms to insert */
  fuzz_byte_mutator bytes; /* NULL: no byte mutations (every call is an op mutation) */
} fuzz_mutator;

/* Mutates data[0..size) in place into at most max_size bytes and returns the new size (>= 1
 * when max_size >= 1). `seed` picks the mutation and its places: the same seed, input and
 * dictionary give the same output. */
size_t fuzz_mutate(const fuzz_mutator *m, uint8_t *data, size_t size, size_t max_size,
                   unsigned seed);

/* The mutations, by name, in the order of their table (for tests and --help texts). */
enum { FUZZ_MUTATION_COUNT = 6 };
const char *fuzz_mutation_name(int mutation);

/* One named mutation, for tests: 0 when it cannot apply (no op to delete, no room, no
 * dictionary), the input then unchanged. */
size_t fuzz_mutate_with(const fuzz_mutator *m, int mutation, uint8_t *data, size_t size,
                        size_t max_size, unsigned seed);

#endif /* FUZZ_MUTATE_H */
