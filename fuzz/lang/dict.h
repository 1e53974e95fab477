/* Reading a libFuzzer dictionary (the `-dict=` file of a target, fuzz/targets/NAME.dict), so the
 * op-aware mutator (mutate.h) can put its entries where ops begin.
 *
 * The format is libFuzzer's: one entry a line, `name="bytes"` or `"bytes"`, with `\\`, `\"` and
 * `\xHH` escapes inside the quotes; blank lines and lines starting with `#` are skipped.
 */
#ifndef FUZZ_DICT_H
#define FUZZ_DICT_H

#include <stddef.h>
#include <stdint.h>

enum { FUZZ_DICT_ENTRY_MAX_BYTES = 64 }; /* libFuzzer's own limit (kMaxDictElementSize) */

typedef struct fuzz_dict_entry {
  uint8_t bytes[FUZZ_DICT_ENTRY_MAX_BYTES];
  size_t size; /* >= 1 */
} fuzz_dict_entry;

typedef struct fuzz_dict {
  fuzz_dict_entry *entries;
  size_t count, capacity;
} fuzz_dict;

/* Appends the entries of `text` (the whole file, `size` bytes) to d. Returns 1, or 0 with a
 * message in err (line number and what is wrong) when a line is not an entry: a missing quote,
 * a bad escape, an empty or too long value, or out of memory. d keeps what came before the bad
 * line. */
int fuzz_dict_parse(fuzz_dict *d, const char *text, size_t size, char *err, size_t err_bsize);

/* Reads the dictionary file at `path` into d; 0 with a message in err (the path and why). */
int fuzz_dict_load(fuzz_dict *d, const char *path, char *err, size_t err_bsize);

void fuzz_dict_free(fuzz_dict *d);

#endif /* FUZZ_DICT_H */
