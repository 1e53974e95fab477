/* The seeds of every backend's target (corpus/<backend>/*.txt): each assembles with its
 * backend's op set, runs clean through the backend (the model's and the backend's checks), and
 * together they use every op of that set. Usage: corpus_test --backend NAME FILE... [--backend
 * NAME FILE...]; NAME-threads is the backend's threaded run (corpus/NAME-threads). */
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/run.h"

static int failures, checks;
static int threaded; /* the --backend named NAME-threads */

static const fuzz_opset *set_of(const fuzz_backend *b) {
  return threaded ? oracle_opset_threads(b) : oracle_opset(b);
}

/* NAME, or NAME-threads: the backend, and whether the run is threaded. */
static const fuzz_backend *find(const char *name) {
  size_t n = strlen(name), suffix = strlen("-threads");
  threaded = n > suffix && strcmp(name + n - suffix, "-threads") == 0;
  if (!threaded) return fuzz_backend_find(name);
  char base[64];
  snprintf(base, sizeof base, "%.*s", (int)(n - suffix), name);
  const fuzz_backend *b = fuzz_backend_find(base);
  return b != NULL && oracle_opset_threads(b) != NULL ? b : NULL;
}

static void fail(const char *fmt, const char *a, const char *b) {
  printf("FAIL: ");
  printf(fmt, a, b);
  printf("\n");
  failures++;
}

static void run_file(const fuzz_backend *b, const char *path, int used[FUZZ_OP_COUNT]) {
  const fuzz_opset *set = set_of(b);
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  checks++;
  if (!fuzz_assemble_file(set, path, &bytes, &err)) {
    printf("FAIL: %s:%zu:%zu: %s\n", path, err.line, err.column, err.message);
    failures++;
    fuzz_buf_free(&bytes);
    return;
  }
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, set, bytes.data, bytes.size);
  while (fuzz_program_next(&dec, &op)) used[op.code] = 1;
  oracle_options opt = {b, set, 0, stdout, NULL, NULL, threaded, NULL};
  oracle_result res;
  int rc = oracle_run(bytes.data, bytes.size, &opt, &res);
  if (rc != 0) fail("%s: not clean on the %s backend (see above)", path, b->name);
  fuzz_buf_free(&bytes);
}

static void check_ops(const fuzz_backend *b, const int used[FUZZ_OP_COUNT]) {
  const fuzz_opset *set = set_of(b);
  checks++;
  for (size_t i = 0; i < set->count; i++) {
    if (!used[set->ops[i]]) {
      fail("corpus/%s: no seed uses `%s` (every op of the backend's set needs one)", set->name,
           fuzz_op_table[set->ops[i]].mnemonic);
    }
  }
}

int main(int argc, char **argv) {
  const fuzz_backend *b = NULL;
  int used[FUZZ_OP_COUNT] = {0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (b != NULL) check_ops(b, used);
      memset(used, 0, sizeof used);
      b = find(argv[++i]);
      if (b == NULL) {
        fail("--backend %s: not linked in%s", argv[i], "");
        return 1;
      }
      continue;
    }
    if (b == NULL) {
      fail("%s: no --backend before it%s", argv[i], "");
      return 1;
    }
    run_file(b, argv[i], used);
  }
  if (b != NULL) check_ops(b, used);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
