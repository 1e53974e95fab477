/* The corpus: every seed and regression input assembles, round-trips and runs clean with every
 * pass; together the seeds use every op.
 *
 * Usage: corpus_test --seeds FILE... [--regressions FILE...]
 * (Bazel passes every .txt of corpus/graph and corpus/regressions.) Each input runs in-process
 * through the driver with every verification pass after every cycle, so under --config=asan and
 * --config=msan this replays the whole corpus under the sanitizers as well.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/driver.h"
#include "fuzz/program.h"
#include "fuzz/text.h"

static int failures;

/* The memory the fuzz target keeps from one input to the next (fuzz_options.scratch): every input
 * also runs with it, after all the inputs before, and must give the same result as alone. */
static fuzz_scratch *scratch;

static int read_file(const char *path, fuzz_buf *out) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) fuzz_buf_append(out, chunk, n);
  fclose(f);
  return 1;
}

/* The ops of a text, one a line, without comments, blank lines and extra blanks: what the
 * printer writes for the same program. */
static char *normalize(const char *text, size_t len) {
  char *out = malloc(len + 2);
  size_t o = 0;
  size_t i = 0;
  while (i < len) {
    size_t end = i;
    while (end < len && text[end] != '\n') end++;
    size_t code_end = i;
    while (code_end < end && text[code_end] != '#') code_end++;
    int wrote = 0, pending_blank = 0;
    for (size_t k = i; k < code_end; k++) {
      if (isspace((unsigned char)text[k])) {
        pending_blank = wrote;
        continue;
      }
      if (pending_blank) out[o++] = ' ';
      pending_blank = 0;
      out[o++] = text[k];
      wrote = 1;
    }
    if (wrote) out[o++] = '\n';
    i = end + 1;
  }
  out[o] = '\0';
  return out;
}

static void fail(const char *path, const char *what) {
  fprintf(stderr, "FAIL %s: %s\n", path, what);
  failures++;
}

/* Assemble, round-trip, run. Marks the ops used in `used`. */
static void check_input(const char *path, int used[FUZZ_OP_COUNT]) {
  fuzz_buf text = {0}, bytes = {0};
  if (!read_file(path, &text)) {
    fail(path, "cannot read");
    return;
  }
  fuzz_text_error err;
  if (!fuzz_assemble((const char *)text.data, text.size, &bytes, &err)) {
    fprintf(stderr, "%s:%zu:%zu: error: %s\n", path, err.line, err.column, err.message);
    fail(path, "does not assemble");
    fuzz_buf_free(&text);
    return;
  }

  /* text -> bytes -> text gives the same ops. */
  char *printed = NULL;
  size_t printed_len = 0;
  FILE *f = open_memstream(&printed, &printed_len);
  fuzz_print_program(f, bytes.data, bytes.size, 0);
  fclose(f);
  char *want = normalize((const char *)text.data, text.size);
  if (strcmp(want, printed) != 0) {
    fprintf(stderr, "--- %s, normalized:\n%s--- printed back:\n%s", path, want, printed);
    fail(path, "text -> bytes -> text is not the same program");
  }
  free(want);
  free(printed);

  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, bytes.data, bytes.size);
  while (fuzz_program_next(&dec, &op)) used[op.code] = 1;

  fuzz_options opt = {.out = stderr};
  fuzz_result res;
  int rc = fuzz_run(bytes.data, bytes.size, &opt, &res);
  if (rc != 0) {
    fprintf(stderr, "  (replay it: bazel run //fuzz:replay -- $PWD/%s)\n", path);
    fail(path, rc < 0 ? "the heap could not be created" : "a verification pass reported a violation");
  } else {
    printf("ok   %-48s %4zu ops %3llu cycles\n", path, res.ops, (unsigned long long)res.cycles);
  }
  fuzz_options with_scratch = {.out = stderr, .scratch = scratch};
  fuzz_result again;
  int rc_again = fuzz_run(bytes.data, bytes.size, &with_scratch, &again);
  if (rc_again != rc || again.ops != res.ops || again.cycles != res.cycles ||
      again.violations != res.violations || strcmp(again.first_kind, res.first_kind) != 0 ||
      memcmp(again.pass_runs, res.pass_runs, sizeof res.pass_runs) != 0) {
    fail(path, "runs differently with the scratch memory the fuzz target keeps between inputs");
  }
  fuzz_buf_free(&text);
  fuzz_buf_free(&bytes);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* interleave with the reports on stderr */
  int seed_used[FUZZ_OP_COUNT] = {0}, regression_used[FUZZ_OP_COUNT] = {0};
  int mode = 0; /* 1 seeds, 2 regressions */
  scratch = fuzz_scratch_create();
  if (scratch == NULL) return 2;
  size_t seeds = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seeds") == 0) {
      mode = 1;
    } else if (strcmp(argv[i], "--regressions") == 0) {
      mode = 2;
    } else if (mode == 0) {
      fprintf(stderr, "usage: corpus_test --seeds FILE... [--regressions FILE...]\n");
      return 2;
    } else {
      check_input(argv[i], mode == 1 ? seed_used : regression_used);
      seeds += mode == 1;
    }
  }
  if (seeds < 25) {
    fprintf(stderr, "FAIL: %zu seeds, at least 25 wanted\n", seeds);
    failures++;
  }
  for (int op = 0; op < FUZZ_OP_COUNT; op++) {
    if (!seed_used[op]) {
      fprintf(stderr, "FAIL: no seed uses op `%s`: add one to corpus/graph/\n",
              fuzz_op_table[op].mnemonic);
      failures++;
    }
  }
  fuzz_scratch_destroy(scratch);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
