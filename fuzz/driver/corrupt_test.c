/* The corrupt op (fuzz/driver/corrupt_op.h) and its catalogue (invariants/corrupt.h): each
 * corruption's name says the kind it must produce, every kind of report.h has a corruption, the
 * corrupt seeds plant every corruption and run clean, and both of the op's checks fail when they
 * should: with the corruption undone before its pass looks (driver.corruption-missed, once per
 * corruption planted) and with the second run made before the repair
 * (driver.corruption-unrepaired); and a heap the collector broke before the op is reported as the
 * pass's own violation, never as one of those two.
 *
 * Usage: corrupt_test FILE... (the corpus/graph/corrupt-*.txt seeds; Bazel passes them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"
#include "invariants/corrupt.h"
#include "invariants/report.h"

/* The names: the op language's and the catalogue's are the same set, each "kind" or
 * "kind/variant", the kind being the one the corruption must produce, checked at a point where
 * its pass runs. Every kind of a heap pass is planted by some corruption. */
static void names_are_kinds(void) {
  int planted[GC_VK_COUNT] = {0};
  size_t rows = gc_corruption_count();
  int *named = calloc(rows, sizeof *named);
  for (int c = 0; c < FUZZ_CORRUPTION_COUNT; c++) {
    const char *name = fuzz_corruption_names[c];
    long row = gc_corruption_find(name, strlen(name));
    if (row < 0) fprintf(stderr, "  the catalogue has no %s\n", name);
    CHECK(row >= 0);
    if (row < 0) continue;
    CHECK(!named[row]);
    named[row] = 1;
    char again[64];
    CHECK(strcmp(gc_corruption_name((size_t)row, again, sizeof again), name) == 0);
    gc_verify_kind kind = gc_corruption_kind((size_t)row);
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)strcspn(name, "/"), name);
    CHECK(kind < GC_VK_COUNT && strcmp(head, gc_verify_kind_name(kind)) == 0);
    /* Its pass is run as one of the points that pass runs at. */
    CHECK(gc_verify_pass_runs_at(gc_verify_kind_pass_id(kind),
                                 (gc_verify_point_id)gc_corruption_point((size_t)row)));
    if (kind < GC_VK_COUNT) planted[kind] = 1;
  }
  for (size_t r = 0; r < rows; r++) {
    char name[64];
    if (!named[r]) {
      fprintf(stderr, "  the op language has no %s\n", gc_corruption_name(r, name, sizeof name));
    }
    CHECK(named[r]);
  }
  free(named);
  for (int k = 0; k < GC_VK_COUNT; k++) {
    /* The driver's own kinds are checks of the collector's API, not of a heap: nothing to plant. */
    if (gc_verify_kind_pass_id((gc_verify_kind)k) == GC_VPASS_DRIVER) continue;
    if (!planted[k]) fprintf(stderr, "  no corruption plants %s\n", gc_verify_kind_name(k));
    CHECK(planted[k]);
  }
}

static char **files;
static int file_count;

/* One run of the program in a text file; the corruptions it planted are counted (and marked in
 * `named`) from the trace, where each planted corruption says "[planted `corrupt NAME ...". */
typedef struct outcome {
  int rc;
  fuzz_result res;
  size_t planted;
  size_t missed, unrepaired; /* driver violations of those kinds, from the output */
  size_t verdicts;           /* verdict lines in the output: one per violation */
} outcome;

static size_t count_of(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *at = text; (at = strstr(at, needle)) != NULL; at += strlen(needle)) n++;
  return n;
}

static outcome run(const char *path, fuzz_corrupt_sabotage sabotage, int named[]) {
  outcome o;
  memset(&o, 0, sizeof o);
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  if (!fuzz_assemble_file(NULL, path, &bytes, &err)) {
    fprintf(stderr, "%s:%zu:%zu: error: %s\n", path, err.line, err.column, err.message);
    o.rc = -2;
    return o;
  }
  char *trace = NULL, *out = NULL;
  size_t trace_bsize = 0, out_bsize = 0;
  FILE *trace_f = open_memstream(&trace, &trace_bsize);
  FILE *out_f = open_memstream(&out, &out_bsize);
  fuzz_options opt = {.out = out_f, .trace = trace_f, .corrupt_sabotage = sabotage};
  o.rc = fuzz_run(bytes.data, bytes.size, &opt, &o.res);
  fuzz_buf_free(&bytes);
  fclose(trace_f);
  fclose(out_f);
  static const char planted[] = "[planted `corrupt ";
  for (const char *at = trace; (at = strstr(at, planted)) != NULL; at += sizeof planted - 1) {
    o.planted++;
    const char *name = at + sizeof planted - 1;
    size_t len = strcspn(name, " ");
    for (int c = 0; named != NULL && c < FUZZ_CORRUPTION_COUNT; c++) {
      const char *known = fuzz_corruption_names[c];
      if (strlen(known) == len && memcmp(known, name, len) == 0) named[c] = 1;
    }
  }
  o.missed = count_of(out, "VIOLATION driver.corruption-missed");
  o.unrepaired = count_of(out, "VIOLATION driver.corruption-unrepaired");
  o.verdicts = count_of(out, "GCFUZZ-VERDICT ");
  if (sabotage == FUZZ_CORRUPT_HONEST && o.rc != 0) fprintf(stderr, "%s", out);
  free(trace);
  free(out);
  return o;
}

/* The seeds run clean and, together, plant every corruption. */
static void seeds_plant_every_corruption(void) {
  int named[FUZZ_CORRUPTION_COUNT] = {0};
  CHECK(file_count >= 4);
  for (int i = 0; i < file_count; i++) {
    outcome o = run(files[i], FUZZ_CORRUPT_HONEST, named);
    CHECK_EQ_U(o.rc, 0);
    CHECK_EQ_U(o.verdicts, 0);
    CHECK(o.planted > 0);
    printf("%-40s %3zu corruptions planted, found and repaired\n", files[i], o.planted);
  }
  for (int c = 0; c < FUZZ_CORRUPTION_COUNT; c++) {
    /* The graph target makes no ephemeron nor weak reference: the ephe pass's corruptions are
     * planted by the gcfuzz backend's seed (corpus/gcfuzz/graph-corrupt-ephe.txt, run clean by
     * //fuzz/oracle:corpus_test, where a missed one is oracle.corruption-missed). */
    if (strncmp(fuzz_corruption_names[c], "ephe.", 5) == 0) continue;
    if (!named[c]) fprintf(stderr, "  no seed plants %s\n", fuzz_corruption_names[c]);
    CHECK(named[c]);
  }
}

/* Undone before the pass looks, no corruption is found: each one planted is reported missed,
 * and the program goes on clean (the repair is then a no-op). */
static void undone_before_the_check_is_missed(void) {
  for (int i = 0; i < file_count; i++) {
    outcome o = run(files[i], FUZZ_CORRUPT_UNDO_BEFORE_CHECK, NULL);
    CHECK_EQ_U(o.rc, 1);
    CHECK(o.planted > 0);
    CHECK_EQ_U(o.missed, o.planted);
    CHECK_EQ_U(o.unrepaired, 0);
    CHECK_EQ_U(o.res.violations, o.planted);
    CHECK_EQ_U(o.verdicts, o.res.violations);
    CHECK(strcmp(o.res.first_kind, "driver.corruption-missed") == 0);
  }
}

/* Checked again before the repair, a corruption is still there: reported unrepaired. (Not every
 * one: a model check that reported an object dead, a finalize count or a pending note forgets it
 * by itself, as it must, so a second check finds nothing; the heap's own corruptions stay.) */
static void checked_before_the_repair_is_unrepaired(void) {
  for (int i = 0; i < file_count; i++) {
    outcome o = run(files[i], FUZZ_CORRUPT_CHECK_BEFORE_REPAIR, NULL);
    CHECK_EQ_U(o.rc, 1);
    CHECK_EQ_U(o.missed, 0);
    CHECK(o.unrepaired > 0 && o.unrepaired <= o.planted);
    CHECK_EQ_U(o.verdicts, o.res.violations);
    if (strstr(files[i], "corrupt-model") == NULL) CHECK_EQ_U(o.unrepaired, o.planted);
    CHECK(strcmp(o.res.first_kind, "driver.corruption-unrepaired") == 0);
  }
}

/* After op 3 (`drop s1`), zero the header of the block in s0's field 0, as a collector bug would
 * between two cycles; after op 4 (the corrupt op) put it back. */
static void break_before_corrupt(void *user, gc_heap *heap, gc_value *slots, const fuzz_op *op) {
  (void)heap;
  gc_header *saved = user;
  if (op->index != 3 && op->index != 4) return;
  gc_header *hp = gc_hp_val(GC_FIELD(slots[0], 0));
  if (op->index == 3) {
    *saved = *hp;
    *hp = 0;
  } else {
    *hp = *saved;
  }
}

/* A heap already broken when the op runs is the collector's violation, not the verifier's: the
 * pass finds it before anything is planted, it is reported as that pass's own kind (saying who
 * found it), and nothing is planted, missed or called unrepaired. */
static void broken_before_the_plant_is_the_collectors(void) {
  static const char program[] =
      "alloc s0 scan 2\n"
      "alloc s1 scan 1\n"
      "store s0.0 s1\n"
      "drop s1\n"
      "corrupt reach.bad-colour s0 0\n";
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  CHECK(fuzz_assemble(NULL, program, strlen(program), &bytes, &err));
  char *trace = NULL, *out = NULL;
  size_t trace_bsize = 0, out_bsize = 0;
  FILE *trace_f = open_memstream(&trace, &trace_bsize);
  FILE *out_f = open_memstream(&out, &out_bsize);
  gc_header saved = 0;
  fuzz_options opt = {
      .out = out_f, .trace = trace_f, .after_op = break_before_corrupt, .after_op_user = &saved};
  fuzz_result res;
  int rc = fuzz_run(bytes.data, bytes.size, &opt, &res);
  fclose(trace_f);
  fclose(out_f);
  CHECK_EQ_U(rc, 1);
  CHECK(strcmp(res.first_kind, "reach.zero-header") == 0);
  CHECK(strstr(out, "found by `corrupt reach.bad-colour s0 0` before it planted anything") != NULL);
  CHECK(strstr(out, "driver.corruption") == NULL);
  /* One verdict line per violation, the first naming the collector's kind and its pass. */
  CHECK_EQ_U(count_of(out, "GCFUZZ-VERDICT "), res.violations);
  CHECK(strstr(out, "GCFUZZ-VERDICT {\"kind\": \"reach.zero-header\", \"pass\": \"reach\"") !=
        NULL);
  CHECK(strstr(trace, "[planted") == NULL);
  if (strcmp(res.first_kind, "reach.zero-header") != 0) fprintf(stderr, "%s", out);
  fuzz_buf_free(&bytes);
  free(trace);
  free(out);
}

int main(int argc, char **argv) {
  files = argv + 1;
  file_count = argc - 1;
  RUN(names_are_kinds);
  RUN(seeds_plant_every_corruption);
  RUN(undone_before_the_check_is_missed);
  RUN(checked_before_the_repair_is_unrepaired);
  RUN(broken_before_the_plant_is_the_collectors);
  CHECK_MAIN_END();
}
