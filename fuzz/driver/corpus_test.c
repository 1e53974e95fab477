/* The corpus: every seed and regression input assembles, round-trips and runs clean with every
 * pass; together the seeds of a target use every op of its op set.
 *
 * Usage: corpus_test [--target NAME] --seeds FILE... [--regressions FILE...] [--target ...]
 * (Bazel passes every .txt of corpus/<target>/ and corpus/regressions/.) Files after --target
 * NAME are assembled and run as that target's (default graph). Each input runs in-process
 * through the driver with every verification pass after every cycle, so under --config=asan and
 * --config=msan this replays the whole corpus under the sanitizers as well.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"

static int failures;
static int deterministic; /* schedule inputs that replayed identically */

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

/* The ops of a text, one a line, without comments, blank lines and extra blanks but with the
 * indentation of each op line as written: what the printer writes for the same program (it
 * indents a finalizer body's ops two blanks a level, so a seed must indent them so too). */
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
    size_t indent = i;
    while (indent < code_end && text[indent] == ' ') indent++;
    if (indent < code_end && !isspace((unsigned char)text[indent])) {
      for (size_t k = i; k < indent; k++) out[o++] = ' ';
    }
    for (size_t k = indent; k < code_end; k++) {
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

/* The target a regression names in a line of its own ("# target: schedule"), else `set`. */
static const fuzz_opset *declared_target(const fuzz_opset *set, const fuzz_buf *text,
                                         const char *path) {
  static const char key[] = "# target: ";
  const char *t = (const char *)text->data;
  for (size_t i = 0; i + sizeof key - 1 <= text->size; i++) {
    if ((i > 0 && t[i - 1] != '\n') || memcmp(t + i, key, sizeof key - 1) != 0) continue;
    char name[32];
    size_t n = 0, at = i + sizeof key - 1;
    while (at < text->size && t[at] != '\n' && t[at] != ' ' && n + 1 < sizeof name)
      name[n++] = t[at++];
    name[n] = '\0';
    const fuzz_opset *named = fuzz_opset_find(name);
    if (named == NULL) fail(path, "names an unknown target");
    return named != NULL ? named : set;
  }
  return set;
}

/* Assemble, round-trip, run as a program of the target with op set `set`. Marks the ops used in
 * `used`. */
static void check_input(const fuzz_opset *set, const char *path, int used[FUZZ_OP_COUNT]) {
  fuzz_buf text = {0}, bytes = {0};
  if (!read_file(path, &text)) {
    fail(path, "cannot read");
    return;
  }
  set = declared_target(set, &text, path);
  fuzz_text_error err;
  if (!fuzz_assemble(set, (const char *)text.data, text.size, &bytes, &err)) {
    fprintf(stderr, "%s:%zu:%zu: error: %s\n", path, err.line, err.column, err.message);
    fail(path, "does not assemble");
    fuzz_buf_free(&text);
    return;
  }

  /* text -> bytes -> text gives the same ops. */
  char *printed = NULL;
  size_t printed_len = 0;
  FILE *f = open_memstream(&printed, &printed_len);
  fuzz_print_program(f, set, bytes.data, bytes.size, 0);
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
  fuzz_decoder_init(&dec, set, bytes.data, bytes.size);
  while (fuzz_program_next(&dec, &op)) used[op.code] = 1;

  fuzz_threads threads = set == &fuzz_opset_schedule ? FUZZ_SCHEDULED : FUZZ_ONE_THREAD;
  fuzz_options opt = {.ops = set, .threads = threads, .out = stderr};
  fuzz_result res;
  int rc = fuzz_run(bytes.data, bytes.size, &opt, &res);
  if (rc != 0) {
    fprintf(stderr, "  (replay it: bazel run //fuzz/replay:replay -- --target %s $PWD/%s)\n",
            set->name, path);
    fail(path,
         rc < 0 ? "the heap could not be created" : "a verification pass reported a violation");
  } else {
    printf("ok   %-48s %4zu ops %3llu cycles\n", path, res.ops, (unsigned long long)res.cycles);
  }
  fuzz_options with_scratch = {.ops = set, .threads = threads, .out = stderr, .scratch = scratch};
  fuzz_result again;
  int rc_again = fuzz_run(bytes.data, bytes.size, &with_scratch, &again);
  if (rc_again != rc || again.ops != res.ops || again.cycles != res.cycles ||
      again.violations != res.violations || strcmp(again.first_kind, res.first_kind) != 0 ||
      memcmp(again.pass_runs, res.pass_runs, sizeof res.pass_runs) != 0) {
    fail(path, "runs differently with the scratch memory the fuzz target keeps between inputs");
  }
  /* Determinism (the schedule target): the second run took the same interleaving, step for step,
   * and left the heap with the same statistics. */
  if (threads == FUZZ_SCHEDULED) {
    if (again.sched_hash != res.sched_hash || again.sched_steps != res.sched_steps ||
        again.stats_hash != res.stats_hash) {
      fprintf(stderr,
              "  interleaving %016llx (%llu steps) then %016llx (%llu steps); statistics "
              "%016llx then %016llx\n",
              (unsigned long long)res.sched_hash, (unsigned long long)res.sched_steps,
              (unsigned long long)again.sched_hash, (unsigned long long)again.sched_steps,
              (unsigned long long)res.stats_hash, (unsigned long long)again.stats_hash);
      fail(path,
           "not deterministic: a second run of the same input took another interleaving or "
           "ended with other statistics");
    } else {
      printf("     same interleaving twice: %llu steps, %llu switches, hash %016llx\n",
             (unsigned long long)res.sched_steps, (unsigned long long)res.sched_switches,
             (unsigned long long)res.sched_hash);
      deterministic++;
    }
  }
  fuzz_buf_free(&text);
  fuzz_buf_free(&bytes);
}

/* What a target's seeds must add up to. */
typedef struct target_seeds {
  const fuzz_opset *set;
  size_t seeds;
  int used[FUZZ_OP_COUNT];
} target_seeds;

static void check_target(const target_seeds *t) {
  size_t want = t->set == &fuzz_opset_graph ? 25 : 8;
  if (t->seeds < want) {
    fprintf(stderr, "FAIL: %zu %s seeds, at least %zu wanted\n", t->seeds, t->set->name, want);
    failures++;
  }
  for (size_t i = 0; i < t->set->count; i++) {
    fuzz_opcode op = t->set->ops != NULL ? t->set->ops[i] : (fuzz_opcode)i;
    if (!t->used[op]) {
      fprintf(stderr, "FAIL: no seed uses op `%s`: add one to corpus/%s/\n",
              fuzz_op_table[op].mnemonic, t->set->name);
      failures++;
    }
  }
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* interleave with the reports on stderr */
  static target_seeds targets[8];
  size_t target_count = 0;
  target_seeds *t = NULL;
  int regression_used[FUZZ_OP_COUNT] = {0};
  int mode = 0; /* 1 seeds, 2 regressions */
  scratch = fuzz_scratch_create();
  if (scratch == NULL) return 2;
  const fuzz_opset *set = &fuzz_opset_graph;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      set = fuzz_opset_find(argv[++i]);
      if (set == NULL) {
        fprintf(stderr, "corpus_test: no target %s (%s)\n", argv[i], fuzz_opset_names);
        return 2;
      }
      mode = 0;
    } else if (strcmp(argv[i], "--seeds") == 0) {
      if (target_count == sizeof targets / sizeof targets[0]) return 2;
      t = &targets[target_count++];
      t->set = set;
      mode = 1;
    } else if (strcmp(argv[i], "--regressions") == 0) {
      mode = 2;
    } else if (mode == 0) {
      fprintf(stderr,
              "usage: corpus_test [--target NAME] --seeds FILE... [--regressions FILE...]\n");
      return 2;
    } else {
      check_input(set, argv[i], mode == 1 ? t->used : regression_used);
      if (mode == 1) t->seeds++;
    }
  }
  if (target_count == 0) {
    fprintf(stderr, "FAIL: no seeds given\n");
    failures++;
  }
  for (size_t k = 0; k < target_count; k++) check_target(&targets[k]);
  printf("%d schedule input(s) replayed identically\n", deterministic);
  fuzz_scratch_destroy(scratch);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
