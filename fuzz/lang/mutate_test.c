/* The op-aware mutations and the dictionary reader: each mutation's output is its input's ops
 * with exactly that change made at op boundaries (checked by decoding both), within max_size;
 * the same seed gives the same mutation; libFuzzer's own mutations keep their share; every line
 * of the targets' dictionaries reads, and a malformed line is refused with its number. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/dict.h"
#include "fuzz/lang/mutate.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"

enum { MAX_OPS = 256 };

typedef struct ops {
  fuzz_op op[MAX_OPS];
  size_t n;
} ops;

static void decode(const uint8_t *data, size_t size, ops *out) {
  fuzz_decoder dec;
  fuzz_decoder_init(&dec, NULL, data, size);
  out->n = 0;
  fuzz_op op;
  while (out->n < MAX_OPS && fuzz_program_next(&dec, &op)) out->op[out->n++] = op;
}

static int same_op(const fuzz_op *x, const fuzz_op *y) {
  if (x->code != y->code) return 0;
  for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) {
    if (x->args[i].a != y->args[i].a || x->args[i].b != y->args[i].b) return 0;
  }
  return 1;
}

/* x[xi..xi+n) == y[yi..yi+n) */
static int same_run(const ops *x, size_t xi, const ops *y, size_t yi, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!same_op(&x->op[xi + i], &y->op[yi + i])) return 0;
  }
  return 1;
}

/* Is `out` `in` with the ops `mid` inserted at one op boundary? */
static int is_insertion(const ops *in, const ops *mid, const ops *out) {
  if (out->n != in->n + mid->n) return 0;
  for (size_t k = 0; k <= in->n; k++) {
    if (same_run(in, 0, out, 0, k) && same_run(mid, 0, out, k, mid->n) &&
        same_run(in, k, out, k + mid->n, in->n - k)) {
      return 1;
    }
  }
  return 0;
}

static const char program_text[] =
    "alloc s0 scan 3\n"
    "alloc s1 scan 2\n"
    "store s0.0 s1\n"
    "collect start\n"
    "store_imm s0.1 7\n"
    "alloc_large s3 scan 200\n"
    "mark_slice 4\n"
    "drop s1\n"
    "on d1\n"
    "collect full\n";

static fuzz_buf assemble(const char *text) {
  fuzz_buf b = {0};
  fuzz_text_error err;
  CHECK(fuzz_assemble(NULL, text, strlen(text), &b, &err));
  return b;
}

static fuzz_dict two_idioms(void) {
  fuzz_dict d = {0};
  fuzz_buf a = assemble("collect start\nload s3 s0.0\npin s3\n");
  fuzz_buf b = assemble("push\n");
  fuzz_dict_entry e;
  memcpy(e.bytes, a.data, a.size);
  e.size = a.size;
  d.entries = malloc(2 * sizeof *d.entries);
  d.entries[0] = e;
  memcpy(e.bytes, b.data, b.size);
  e.size = b.size;
  d.entries[1] = e;
  d.count = d.capacity = 2;
  fuzz_buf_free(&a);
  fuzz_buf_free(&b);
  return d;
}

static int mutation_id(const char *name) {
  for (int i = 0; i < FUZZ_MUTATION_COUNT; i++) {
    if (strcmp(fuzz_mutation_name(i), name) == 0) return i;
  }
  CHECK(!"no such mutation");
  return 0;
}

/* The program, the two-idiom dictionary, and both decoded. */
typedef struct fixture {
  fuzz_buf prog;
  fuzz_dict d;
  ops in, mid[2];
} fixture;

static void fixture_init(fixture *f) {
  f->prog = assemble(program_text);
  f->d = two_idioms();
  decode(f->prog.data, f->prog.size, &f->in);
  for (int e = 0; e < 2; e++) decode(f->d.entries[e].bytes, f->d.entries[e].size, &f->mid[e]);
}

static void fixture_free(fixture *f) {
  fuzz_dict_free(&f->d);
  fuzz_buf_free(&f->prog);
}

/* The fixture's program mutated by `mutation` with `seed` (room for 512 bytes), decoded into
 * *out; returns the new size. */
static size_t mutate_program(const fixture *f, const fuzz_mutator *m, const char *mutation,
                             unsigned seed, ops *out) {
  uint8_t buf[512];
  memcpy(buf, f->prog.data, f->prog.size);
  size_t n = fuzz_mutate_with(m, mutation_id(mutation), buf, f->prog.size, sizeof buf, seed);
  decode(buf, n, out);
  return n;
}

static void idioms_go_where_ops_begin(void) {
  static fixture f;
  fixture_init(&f);
  fuzz_mutator m = {.dict = &f.d};
  ops out;
  for (unsigned seed = 0; seed < 300; seed++) {
    CHECK(mutate_program(&f, &m, "insert-idiom", seed, &out) > f.prog.size);
    CHECK(is_insertion(&f.in, &f.mid[0], &out) || is_insertion(&f.in, &f.mid[1], &out));
  }
  /* No room: refused, the input untouched. */
  uint8_t buf[512];
  memcpy(buf, f.prog.data, f.prog.size);
  CHECK_EQ_U(fuzz_mutate_with(&m, mutation_id("insert-idiom"), buf, f.prog.size, f.prog.size, 1),
             0);
  CHECK(memcmp(buf, f.prog.data, f.prog.size) == 0);
  /* No dictionary: nothing to insert. */
  fuzz_mutator bare = {0};
  CHECK_EQ_U(fuzz_mutate_with(&bare, mutation_id("insert-idiom"), buf, f.prog.size, sizeof buf, 1),
             0);
  fixture_free(&f);
}

static void replace_swaps_one_op_for_an_idiom(void) {
  static fixture f;
  fixture_init(&f);
  fuzz_mutator m = {.dict = &f.d};
  const ops *in = &f.in, *mid = f.mid;
  ops out;
  for (unsigned seed = 0; seed < 300; seed++) {
    CHECK(mutate_program(&f, &m, "replace-op", seed, &out) > 0);
    int found = 0;
    for (int e = 0; e < 2 && !found; e++) {
      if (out.n != in->n - 1 + mid[e].n) continue;
      for (size_t k = 0; k < in->n && !found; k++) {
        found = same_run(in, 0, &out, 0, k) && same_run(&mid[e], 0, &out, k, mid[e].n) &&
                same_run(in, k + 1, &out, k + mid[e].n, in->n - k - 1);
      }
    }
    CHECK(found);
  }
  fixture_free(&f);
}

static void deletions_remove_whole_ops(void) {
  static fixture f;
  fixture_init(&f);
  fuzz_mutator m = {0};
  const ops *in = &f.in;
  ops out;
  for (unsigned seed = 0; seed < 300; seed++) {
    size_t n = mutate_program(&f, &m, "delete-ops", seed, &out);
    CHECK(n > 0 && n < f.prog.size);
    size_t run = in->n - out.n;
    CHECK(run >= 1 && run <= 4);
    int found = 0;
    for (size_t k = 0; k + run <= in->n && !found; k++) {
      found = same_run(in, 0, &out, 0, k) && same_run(in, k + run, &out, k, in->n - k - run);
    }
    CHECK(found);
  }
  /* One op: nothing to delete. */
  fuzz_buf one = assemble("collect full\n");
  uint8_t buf[16];
  memcpy(buf, one.data, one.size);
  CHECK_EQ_U(fuzz_mutate_with(&m, mutation_id("delete-ops"), buf, one.size, sizeof buf, 3), 0);
  fuzz_buf_free(&one);
  fixture_free(&f);
}

static void duplicates_copy_a_run_of_the_input(void) {
  static fixture f;
  fixture_init(&f);
  fuzz_mutator m = {0};
  const ops *in = &f.in;
  static ops out, mid;
  for (unsigned seed = 0; seed < 300; seed++) {
    CHECK(mutate_program(&f, &m, "duplicate-ops", seed, &out) > f.prog.size);
    size_t run = out.n - in->n;
    CHECK(run >= 1 && run <= 4);
    int found = 0;
    for (size_t from = 0; from + run <= in->n && !found; from++) {
      mid.n = run;
      memcpy(mid.op, &in->op[from], run * sizeof mid.op[0]);
      found = is_insertion(in, &mid, &out);
    }
    CHECK(found);
  }
  fixture_free(&f);
}

static void swaps_trade_neighbours(void) {
  static fixture f;
  fixture_init(&f);
  fuzz_mutator m = {0};
  const ops *in = &f.in;
  ops out;
  for (unsigned seed = 0; seed < 300; seed++) {
    CHECK_EQ_U(mutate_program(&f, &m, "swap-ops", seed, &out), f.prog.size);
    CHECK_EQ_U(out.n, in->n);
    int found = 0;
    for (size_t k = 0; k + 1 < in->n && !found; k++) {
      found = same_run(in, 0, &out, 0, k) && same_op(&in->op[k], &out.op[k + 1]) &&
              same_op(&in->op[k + 1], &out.op[k]) &&
              same_run(in, k + 2, &out, k + 2, in->n - k - 2);
    }
    CHECK(found);
  }
  fixture_free(&f);
}

/* A stand-in for LLVMFuzzerMutate: flips the first byte, counts its calls. */
static size_t byte_calls;
static size_t fake_bytes(uint8_t *data, size_t size, size_t max_size) {
  byte_calls++;
  if (size == 0) {
    data[0] = 1;
    return 1;
  }
  data[0] ^= 0x80;
  return size < max_size ? size : max_size;
}

static void every_call_mutates_within_bounds_and_repeats_by_seed(void) {
  fuzz_buf prog = assemble(program_text);
  fuzz_dict d = two_idioms();
  fuzz_mutator m = {.dict = &d, .bytes = fake_bytes};
  byte_calls = 0;
  enum { CALLS = 4000 };
  for (unsigned seed = 0; seed < CALLS; seed++) {
    uint8_t a[512], b[512];
    size_t max = 1 + seed % (2 * prog.size); /* often less than the input */
    memcpy(a, prog.data, prog.size);
    memcpy(b, prog.data, prog.size);
    size_t calls = byte_calls;
    size_t na = fuzz_mutate(&m, a, prog.size, max, seed);
    size_t after_a = byte_calls;
    size_t nb = fuzz_mutate(&m, b, prog.size, max, seed);
    CHECK(na >= 1 && na <= max);
    CHECK_EQ_U(na, nb);
    CHECK(memcmp(a, b, na) == 0);
    CHECK_EQ_U(byte_calls - after_a, after_a - calls);
  }
  /* Each seed pair called the byte mutator equally; per seed it ran for about 8 of 16. */
  size_t per_seed = byte_calls / 2;
  CHECK(per_seed > CALLS * 4 / 10 && per_seed < CALLS * 7 / 10);
  /* An empty input with room gets a byte, without a byte mutator too. */
  fuzz_mutator bare = {0};
  uint8_t one[4] = {0};
  CHECK_EQ_U(fuzz_mutate(&bare, one, 0, sizeof one, 9), 1);
  CHECK_EQ_U(fuzz_mutate(&bare, one, 0, 0, 9), 0);
  fuzz_dict_free(&d);
  fuzz_buf_free(&prog);
}

static void dictionaries_read_as_libfuzzer_reads_them(void) {
  fuzz_dict d = {0};
  char err[160];
  const char *good =
      "# a comment\n"
      "\n"
      "alloc=\"\\x00\\x01\"\n"
      "  \"ab\\\\\\\"c\"  \r\n"
      "kw=\"\\xfF\"";
  CHECK(fuzz_dict_parse(&d, good, strlen(good), err, sizeof err));
  CHECK_EQ_U(d.count, 3);
  CHECK(d.entries[0].size == 2 && d.entries[0].bytes[0] == 0 && d.entries[0].bytes[1] == 1);
  CHECK(d.entries[1].size == 5 && memcmp(d.entries[1].bytes, "ab\\\"c", 5) == 0);
  CHECK(d.entries[2].size == 1 && d.entries[2].bytes[0] == 0xff);
  static const struct {
    const char *text, *message;
  } bad[] = {
      {"x=\"\\x0\"\n", "line 1: \\x without two hex digits"},
      {"# c\nx=\"ab\n", "line 2: no closing quote at the end of the line"},
      {"nothing here\n", "line 1: no opening quote"},
      {"x=\"\"\n", "line 1: an empty value"},
      {"x=\"a\\n\"\n", "line 1: an unknown escape (\\\\, \\\" and \\xHH are known)"},
      {"x=\"a\"b\"\n", "line 1: an unescaped quote inside the value"},
      {"x=\"0123456789012345678901234567890123456789012345678901234567890123456789\"\n",
       "line 1: a value longer than 64 bytes"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t before = d.count;
    CHECK(!fuzz_dict_parse(&d, bad[i].text, strlen(bad[i].text), err, sizeof err));
    if (strcmp(err, bad[i].message) != 0) fprintf(stderr, "got '%s'\n", err);
    CHECK(strcmp(err, bad[i].message) == 0);
    CHECK_EQ_U(d.count, before);
  }
  fuzz_dict_free(&d);
  CHECK(!fuzz_dict_load(&d, "/nonexistent/x.dict", err, sizeof err));
  CHECK(strcmp(err, "/nonexistent/x.dict: cannot open") == 0);
}

/* The targets' dictionaries (the test's arguments) read: one entry per line that is not a
 * comment. (dict_test checks that each entry is the ops its comment says.) */
static int dict_files_read(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    fuzz_dict d = {0};
    char err[512];
    CHECK(fuzz_dict_load(&d, argv[i], err, sizeof err));
    FILE *f = fopen(argv[i], "r");
    CHECK(f != NULL);
    size_t entries = 0;
    char line[1024];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
      if (line[0] != '#' && line[0] != '\n') entries++;
    }
    if (f != NULL) fclose(f);
    CHECK_EQ_U(d.count, entries);
    CHECK(d.count > 10);
    fprintf(stderr, "%s: %zu entries\n", argv[i], d.count);
    fuzz_dict_free(&d);
    files++;
  }
  return files;
}

int main(int argc, char **argv) {
  RUN(idioms_go_where_ops_begin);
  RUN(replace_swaps_one_op_for_an_idiom);
  RUN(deletions_remove_whole_ops);
  RUN(duplicates_copy_a_run_of_the_input);
  RUN(swaps_trade_neighbours);
  RUN(every_call_mutates_within_bounds_and_repeats_by_seed);
  RUN(dictionaries_read_as_libfuzzer_reads_them);
  CHECK(dict_files_read(argc, argv) == 3);
  CHECK_MAIN_END();
}
