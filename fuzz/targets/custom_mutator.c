/* The op-aware mutator as libFuzzer's custom mutator (see custom_mutator.h). */
#include "fuzz/targets/custom_mutator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/mutate.h"
#include "fuzz/lang/text.h"

/* libFuzzer's own mutations. Weak: a target linked with another engine's driver (AFL++'s, which
 * never calls LLVMFuzzerCustomMutator) links without it. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* One per process: libFuzzer mutates on one thread (its -fork and -jobs workers are processes). */
static fuzz_dict dict;
static fuzz_mutator mutator;
static int bytes_only; /* GCFUZZ_MUTATOR=bytes: libFuzzer's mutations alone, to compare */
/* GCFUZZ_ZEAL=MODES: the ops every mutated input begins with (zeal_prefix_text), assembled for
 * the target; empty without it. */
static fuzz_buf zeal_prefix;

/* The ops of GCFUZZ_ZEAL=MODES: `param zeal MODES`, after `param marking incremental` when a mode
 * acts only while a cycle marks beside the mutators (store, recheck), since programs start in
 * the stw mode. Returns 0 when the text does not fit. */
static int zeal_prefix_text(const char *modes, char *text, size_t len) {
  int incremental = strstr(modes, "store") != NULL || strstr(modes, "recheck") != NULL;
  int n = snprintf(text, len, "%sparam zeal %s\n", incremental ? "param marking incremental\n" : "",
                   modes);
  return n > 0 && (size_t)n < len;
}

/* A campaign under zeal: every input the mutator returns begins with the zeal ops, so every
 * input of the corpus, and every crash, replays the zeal by itself (no flag to remember). */
static void zeal_init(const fuzz_opset *set) {
  fuzz_buf_free(&zeal_prefix);
  const char *modes = getenv("GCFUZZ_ZEAL");
  if (modes == NULL || modes[0] == '\0') return;
  char text[256];
  fuzz_text_error err = {.message = "too long"};
  if (!zeal_prefix_text(modes, text, sizeof text) ||
      !fuzz_assemble(set, text, strlen(text), &zeal_prefix, &err)) {
    fprintf(stderr,
            "gcfuzz: GCFUZZ_ZEAL=%s: not zeal modes of this target's programs (%s; the values "
            "of `param zeal` in fuzz/README.md)\n",
            modes, err.message);
    exit(2);
  }
}

/* The input with the zeal ops in front unless it begins with them; its tail is cut when both do
 * not fit in max_size. */
static size_t keep_zeal_prefix(uint8_t *data, size_t size, size_t max_size) {
  size_t n = zeal_prefix.size;
  if (n == 0 || n > max_size || (size >= n && memcmp(data, zeal_prefix.data, n) == 0)) {
    return size;
  }
  size_t kept = size <= max_size - n ? size : max_size - n;
  memmove(data + n, data, kept);
  memcpy(data, zeal_prefix.data, n);
  return n + kept;
}

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
  zeal_init(set);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (bytes_only && LLVMFuzzerMutate != NULL) {
    return keep_zeal_prefix(data, LLVMFuzzerMutate(data, size, max_size), max_size);
  }
  return keep_zeal_prefix(data, fuzz_mutate(&mutator, data, size, max_size, seed), max_size);
}
