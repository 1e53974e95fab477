/* The op-aware mutator as libFuzzer's custom mutator (see custom_mutator.h). */
#include "fuzz/targets/custom_mutator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/mutate.h"

/* libFuzzer's own mutations. Weak: a target linked with another engine's driver (AFL++'s, which
 * never calls LLVMFuzzerCustomMutator) links without it. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* One per process: libFuzzer mutates on one thread (its -fork and -jobs workers are processes). */
static fuzz_dict dict;
static fuzz_mutator mutator;
static int bytes_only; /* GCFUZZ_MUTATOR=bytes: libFuzzer's mutations alone, to compare */

void fuzz_custom_mutator_init(const fuzz_opset *set, int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    /* libFuzzer reads -flag=value and --flag=value alike. */
    const char *a = argv[i];
    if (strncmp(a, "--", 2) == 0) a++;
    if (strncmp(a, "-dict=", 6) == 0) path = a + 6;
  }
  fuzz_dict_free(&dict);
  char err[512];
  if (path != NULL && !fuzz_dict_load(&dict, path, err, sizeof err)) {
    fprintf(stderr, "gcfuzz: custom mutator: %s; inserting no dictionary idioms\n", err);
    fuzz_dict_free(&dict);
  }
  mutator = (fuzz_mutator){.set = set, .dict = &dict, .bytes = LLVMFuzzerMutate};
  const char *mode = getenv("GCFUZZ_MUTATOR");
  bytes_only = mode != NULL && strcmp(mode, "bytes") == 0;
  if (mode != NULL && !bytes_only && strcmp(mode, "ops") != 0) {
    fprintf(stderr, "gcfuzz: GCFUZZ_MUTATOR=%s: not a mutator (ops, the default, or bytes)\n",
            mode);
    exit(2);
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (bytes_only && LLVMFuzzerMutate != NULL) return LLVMFuzzerMutate(data, size, max_size);
  return fuzz_mutate(&mutator, data, size, max_size, seed);
}
