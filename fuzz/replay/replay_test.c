/* The replay tool's contract: exit 0 clean, 1 on a violation (named with the op that started its
 * cycle), 2 on bad input (malformed text with FILE:LINE:COL, a file it cannot read with the
 * reason, a program past --max-bytes, bad usage); bytes and text forms of a program replay
 * alike; a .txt file is always text; --verify runs exactly the passes named; --list-ops and
 * --list-kinds print the tables the READMEs copy. Arguments: the fuzz targets' options files,
 * whose max_len replay knows.
 *
 * A violation is produced by a test-only after_op hook that breaks the heap through the
 * collector's internals (gc/header.h): no op of the language can corrupt the heap, by design.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/replay/replay.h"
#include "gc/check.h"
#include "gc/header.h"
#include "gc/passes.h"
#include "invariants/report.h"

static char dir[] = "/tmp/replay_test.XXXXXX";

static const char *write_file(const char *name, const void *data, size_t len) {
  static char path[4][256];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, 256, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  fwrite(data, 1, len, f);
  fclose(f);
  return p;
}

/* Run fuzz_replay_main with stdout and stderr captured into `out` (NUL-terminated). */
static int run_replay(int argc, const char **argv, const fuzz_options *base, char *out,
                      size_t out_len) {
  char cap[300];
  snprintf(cap, sizeof cap, "%s/captured", dir);
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  FILE *f = fopen(cap, "w");
  dup2(fileno(f), 1);
  dup2(fileno(f), 2);
  int rc = fuzz_replay_main(argc, (char **)argv, base);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  fclose(f);
  f = fopen(cap, "r");
  size_t n = fread(out, 1, out_len - 1, f);
  out[n] = '\0';
  fclose(f);
  return rc;
}

static char out[1 << 16];

static void expect(int rc, int want, const char *needle) {
  CHECK_EQ_U(rc, want);
  if (needle != NULL) CHECK(strstr(out, needle) != NULL);
  if (rc != want || (needle != NULL && strstr(out, needle) == NULL)) {
    fprintf(stderr, "  wanted exit %d and '%s'; got exit %d:\n%s\n", want, needle ? needle : "", rc,
            out);
  }
}

static const char program[] =
    "# s1 hangs off s0 only\n"
    "alloc s0 scan 2\n"
    "alloc s1 scan 1\n"
    "store s0.0 s1\n"
    "drop s1\n"
    "collect major\n"
    "collect full\n";

static void clean_text_exits_0(void) {
  const char *path = write_file("clean.txt", program, strlen(program));
  const char *argv[] = {"replay", path};
  expect(run_replay(2, argv, NULL, out, sizeof out), 0, "== clean");
  CHECK(strstr(out, "store s0.0 s1") != NULL); /* the program is printed */
  CHECK(strstr(out, "reach") != NULL && strstr(out, "model") != NULL);
}

static void malformed_text_exits_2_with_line_and_column(void) {
  const char *path = write_file("bad.txt", "alloc s0 scan 2\nstore s0.0 s99\n", 31);
  const char *argv[] = {"replay", path};
  char want[300];
  snprintf(want, sizeof want, "%s:2:12: error: store: 's99' is not a slot", path);
  expect(run_replay(2, argv, NULL, out, sizeof out), 2, want);
}

/* A .txt file is text whatever it holds: a misspelled first op is an error at its line and
 * column, never bytes run in silence. */
static void misspelled_first_op_in_txt_file_is_an_error(void) {
  static const char text[] = "aloc s0 scan 2\ncollect full\n";
  const char *path = write_file("typo.txt", text, strlen(text));
  char want[300];
  snprintf(want, sizeof want, "%s:1:1: error: unknown op 'aloc'", path);
  const char *run[] = {"replay", path};
  expect(run_replay(2, run, NULL, out, sizeof out), 2, want);
  CHECK(strstr(out, "== clean") == NULL);
  char bin[300];
  snprintf(bin, sizeof bin, "%s/typo.bin", dir);
  const char *assemble[] = {"replay", "--assemble", bin, path};
  expect(run_replay(4, assemble, NULL, out, sizeof out), 2, want);
  const char *print[] = {"replay", "--print", path};
  expect(run_replay(3, print, NULL, out, sizeof out), 2, want);
}

/* An arrow in a comment (UTF-8) keeps a file text, with or without the .txt name. */
static void non_ascii_comment_is_still_text(void) {
  static const char text[] = "alloc s0 scan 2   # s0 \xe2\x86\x92 nothing\ncollect full\n";
  const char *txt = write_file("arrow.txt", text, strlen(text));
  const char *run_txt[] = {"replay", txt};
  expect(run_replay(2, run_txt, NULL, out, sizeof out), 0, "(text, 6 bytes, 2 ops, target graph)");
  const char *other = write_file("arrow.prog", text, strlen(text));
  const char *run_other[] = {"replay", other};
  expect(run_replay(2, run_other, NULL, out, sizeof out), 0,
         "(text, 6 bytes, 2 ops, target graph)");
}

/* Another file whose first word is no op is read as bytes, as the rule says, and replay says so
 * on stderr; --text reads it as text. */
static void other_file_with_unknown_first_word_is_bytes_with_a_note(void) {
  static const char text[] = "aloc s0 scan 2\ncollect full\n";
  const char *path = write_file("typo.prog", text, strlen(text));
  const char *run[] = {"replay", "--quiet", path};
  expect(run_replay(3, run, NULL, out, sizeof out), 0, "read as bytes");
  CHECK(strstr(out, "'aloc'") != NULL);
  const char *as_text[] = {"replay", "--text", path};
  char want[300];
  snprintf(want, sizeof want, "%s:1:1: error: unknown op 'aloc'", path);
  expect(run_replay(3, as_text, NULL, out, sizeof out), 2, want);
}

/* The count of runs `pass` shows in the summary of `out`, or -1. */
static long pass_runs(const char *pass) {
  char key[64];
  snprintf(key, sizeof key, "\n  %s ", pass);
  const char *at = strstr(out, key);
  return at != NULL ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* --verify is the exact set of passes: none runs none, one runs that one. An empty value is an
 * error (none is spelled none). */
static void verify_runs_exactly_the_passes_named(void) {
  const char *path = write_file("verify.txt", program, strlen(program));
  const char *none[] = {"replay", "--quiet", "--verify", "none", path};
  expect(run_replay(5, none, NULL, out, sizeof out), 0, "== clean");
  CHECK(pass_runs("reach") == 0 && pass_runs("swept") == 0 && pass_runs("checkmark") == 0 &&
        pass_runs("model") == 0);
  const char *reach[] = {"replay", "--quiet", "--verify", "reach", path};
  expect(run_replay(5, reach, NULL, out, sizeof out), 0, "== clean");
  CHECK(pass_runs("reach") > 0 && pass_runs("swept") == 0 && pass_runs("checkmark") == 0 &&
        pass_runs("model") == 0);
  const char *all[] = {"replay", "--quiet", path};
  expect(run_replay(3, all, NULL, out, sizeof out), 0, "== clean");
  CHECK(pass_runs("reach") > 0 && pass_runs("swept") > 0 && pass_runs("checkmark") > 0 &&
        pass_runs("model") > 0);
  const char *empty[] = {"replay", "--verify", "", path};
  expect(run_replay(4, empty, NULL, out, sizeof out), 2, "--verify '': empty");
  CHECK(strstr(out, "== run") == NULL);
}

/* `n` bytes of a fixed pseudo-random program. */
static const char *write_random(const char *name, size_t n) {
  static uint8_t data[80000];
  unsigned seed = 4242;
  for (size_t i = 0; i < n && i < sizeof data; i++) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (uint8_t)(seed >> 16);
  }
  return write_file(name, data, n < sizeof data ? n : sizeof data);
}

/* An input longer than the fuzz targets' max_len is one they never run: replay warns. Past
 * --max-bytes (64 KiB unless given) it refuses to run it at all (the run grows faster than the
 * input: a megabyte takes minutes), saying how to ask for it. */
static void long_input_warns_and_past_the_limit_is_refused(void) {
  const char *huge = write_random("huge.bin", 70000);
  const char *run[] = {"replay", "--quiet", huge};
  expect(run_replay(3, run, NULL, out, sizeof out), 2, "longer than --max-bytes (65536)");
  CHECK(strstr(out, "== run") == NULL);
  const char *run_free[] = {"replay", "--quiet", "--target", "schedule", huge};
  expect(run_replay(5, run_free, NULL, out, sizeof out), 2, "longer than --max-bytes (65536)");

  const char *longer = write_random("longer.bin", 6000);
  const char *small_limit[] = {"replay", "--quiet", "--max-bytes", "5999", longer};
  expect(run_replay(5, small_limit, NULL, out, sizeof out), 2, "longer than --max-bytes (5999)");
  const char *enough[] = {"replay", "--quiet", "--max-bytes", "6000", longer};
  int rc = run_replay(5, enough, NULL, out, sizeof out);
  CHECK(rc == 0 || rc == 1); /* it ran: clean or not, what the bytes say */
  CHECK(strstr(out, "== run") != NULL);
  CHECK(strstr(out, "6000 bytes: longer than the fuzz targets' max_len (4096)") != NULL);
  const char *unlimited[] = {"replay", "--quiet", "--max-bytes", "0", longer};
  rc = run_replay(5, unlimited, NULL, out, sizeof out);
  CHECK(rc == 0 || rc == 1);
  CHECK(strstr(out, "== run") != NULL);

  const char *bad[] = {"replay", "--max-bytes", "64k", longer};
  expect(run_replay(4, bad, NULL, out, sizeof out), 2, "--max-bytes '64k'");
  const char *ok = write_file("short.txt", program, strlen(program));
  const char *quiet[] = {"replay", "--quiet", ok};
  expect(run_replay(3, quiet, NULL, out, sizeof out), 0, "== clean");
  CHECK(strstr(out, "max_len") == NULL);
}

/* FUZZ_REPLAY_TARGET_MAX_LEN is the max_len of every fuzz target's options file (argv). */
static int options_files_count;
static char **options_files;
static void max_len_is_the_fuzz_targets(void) {
  CHECK(options_files_count == 3);
  for (int i = 0; i < options_files_count; i++) {
    FILE *f = fopen(options_files[i], "r");
    CHECK(f != NULL);
    if (f == NULL) continue;
    char line[256];
    long max_len = -1;
    while (fgets(line, sizeof line, f) != NULL) {
      if (sscanf(line, "max_len = %ld", &max_len) == 1) break;
    }
    fclose(f);
    if (max_len != FUZZ_REPLAY_TARGET_MAX_LEN) {
      fprintf(stderr, "  %s: max_len %ld, replay says %d\n", options_files[i], max_len,
              FUZZ_REPLAY_TARGET_MAX_LEN);
    }
    CHECK(max_len == FUZZ_REPLAY_TARGET_MAX_LEN);
  }
}

/* The cells of a markdown row: the '|' not escaped by a backslash, so 4 for 3 cells. */
static int row_bars(const char *row, size_t len) {
  int bars = 0;
  for (size_t i = 0; i < len; i++) bars += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  return bars;
}

/* --list-ops: a markdown table of every op in opcode order, from fuzz/lang/ops.h's table, each row
 * three cells (a '|' in a description is escaped). */
static void list_ops_prints_the_op_table(void) {
  const char *argv[] = {"replay", "--list-ops"};
  expect(run_replay(2, argv, NULL, out, sizeof out), 0,
         "| op | operands | what it does |\n| --- | --- | --- |\n"
         "| `alloc` | a slot s0..s15; a block kind: scan, raw or custom; a small size 1..127 "
         "(fields) | sD = a new pool block");
  int rows = 0;
  const char *line = out;
  while (*line != '\0') {
    const char *end = strchr(line, '\n');
    size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
    CHECK(row_bars(line, len) == 4);
    if (rows >= 2 && rows - 2 < FUZZ_OP_COUNT) {
      char want[64];
      snprintf(want, sizeof want, "| `%s` | ", fuzz_op_table[rows - 2].mnemonic);
      CHECK(strncmp(line, want, strlen(want)) == 0);
    }
    rows++;
    line = end != NULL ? end + 1 : line + len;
  }
  CHECK_EQ_U(rows, 2 + FUZZ_OP_COUNT);
  CHECK(strstr(out, "| `push` | none | ") != NULL);
}

/* --list-kinds: the table of report kinds (invariants/kinds.h), exactly as the invariants print
 * it, one row per kind. */
static void list_kinds_prints_the_kind_table(void) {
  char *want = NULL;
  size_t want_len = 0;
  FILE *f = open_memstream(&want, &want_len);
  gc_verify_kinds_print_markdown(f);
  fclose(f);
  const char *argv[] = {"replay", "--list-kinds"};
  expect(run_replay(2, argv, NULL, out, sizeof out), 0, "| reach.zero-header | reach |");
  CHECK(want_len > 0 && strcmp(out, want) == 0);
  size_t rows = 0;
  for (const char *c = out; *c != '\0'; c++) rows += *c == '\n';
  CHECK_EQ_U(rows, 2 + GC_VK_COUNT);
  free(want);
}

static void bad_usage_exits_2(void) {
  const char *missing[] = {"replay", "/nonexistent/input"};
  expect(run_replay(2, missing, NULL, out, sizeof out), 2,
         "replay: /nonexistent/input: cannot read: No such file or directory");
  const char *directory[] = {"replay", dir};
  expect(run_replay(2, directory, NULL, out, sizeof out), 2, "cannot read: Is a directory");
  const char *none[] = {"replay"};
  expect(run_replay(1, none, NULL, out, sizeof out), 2, "no input file");
  const char *unknown[] = {"replay", "--frobnicate", "x"};
  expect(run_replay(3, unknown, NULL, out, sizeof out), 2, "unknown option '--frobnicate'");
  const char *incomplete[] = {"replay", "--verify"};
  expect(run_replay(2, incomplete, NULL, out, sizeof out), 2, "incomplete option '--verify'");
  const char *both[] = {"replay", "--text", "--bytes", "x"};
  expect(run_replay(4, both, NULL, out, sizeof out), 2, "--text and --bytes exclude each other");
  const char *help[] = {"replay", "--help"};
  expect(run_replay(2, help, NULL, out, sizeof out), 0, "Exit status");
  CHECK(strstr(out, "Text or bytes") != NULL && strstr(out, "--max-bytes N") != NULL);
  char limits[2][64]; /* the figures --help states are the code's */
  snprintf(limits[0], sizeof limits[0], "Default %d:", FUZZ_REPLAY_DEFAULT_MAX_BYTES);
  snprintf(limits[1], sizeof limits[1], "Past %d bytes", FUZZ_REPLAY_TARGET_MAX_LEN);
  CHECK(strstr(out, limits[0]) != NULL && strstr(out, limits[1]) != NULL);
  /* --verify names every pass of the table (it once listed five of seven). */
  const char *verify = strstr(out, "--verify PASSES"), *verify_end = strstr(out, "--params");
  CHECK(verify != NULL && verify_end != NULL && verify < verify_end);
#define NAMED_IN_HELP(id, name, points, run, needs, what)                           \
  {                                                                                 \
    const char *at = strstr(verify, name);                                          \
    if (at == NULL || at > verify_end) {                                            \
      fprintf(stderr, "replay --help: --verify does not name the pass %s\n", name); \
      exit(1);                                                                      \
    }                                                                               \
  }
  GC_VERIFY_PASS_TABLE(NAMED_IN_HELP)
#undef NAMED_IN_HELP
  const char *text = write_file("to-nowhere.txt", program, strlen(program));
  const char *nowhere[] = {"replay", "--assemble", "/nonexistent/out.bin", text};
  expect(run_replay(4, nowhere, NULL, out, sizeof out), 2,
         "replay: /nonexistent/out.bin: cannot write: No such file or directory");
}

/* --events: the program targets count gc.h's events, a backend its own table (backend.h:
 * rare_events), summed over the files and printed once, after the last. */
static void events_are_each_collectors_own(void) {
  const char *path = write_file("events.txt", program, strlen(program));
  const char *graph[] = {"replay", "--quiet", "--events", path, path};
  expect(run_replay(5, graph, NULL, out, sizeof out), 0, "GCFUZZ-EVENTS {\"programs\": 2, ");
  CHECK(strstr(out, "\"mark.recheck\": 0") != NULL);
  const char *gcfuzz[] = {"replay", "--target", "gcfuzz", "--quiet", "--events", path};
  expect(run_replay(6, gcfuzz, NULL, out, sizeof out), 0,
         "GCFUZZ-EVENTS {\"programs\": 1, \"events\": {\"cycle\": ");
  CHECK(strstr(out, "\"compaction\": 0}}") != NULL);
  const char *lua[] = {"replay", "--target", "lua", "--quiet", "--events", path};
  expect(run_replay(6, lua, NULL, out, sizeof out), 0,
         "GCFUZZ-EVENTS {\"programs\": 1, \"events\": {\"cycle\": ");
  /* collect major (one LUA_GCCOLLECT), collect full and the final full collection (two each:
   * lua_backend.c collects again while the last cycle may have left something to free) */
  CHECK(strstr(out, "\"full\": 5, ") != NULL && strstr(out, "mark.recheck") == NULL);
  const char *list[] = {"replay", "--list-backends"};
  expect(run_replay(2, list, NULL, out, sizeof out), 0, "  event emergency ");
  CHECK(strstr(out, "  event heap.grown ") != NULL && strstr(out, "  event mark.recheck ") != NULL);
}

/* After op 3 (`drop s1`), zero the header of the block in s0's field 0: a reachable block now
 * looks like a free slot. The next cycle (op 4, `collect major`) must report it. */
static void zero_reachable_header(void *user, gc_heap *heap, gc_value *slots, const fuzz_op *op) {
  (void)heap;
  int *fired = user;
  if (op->index != 3 || *fired) return;
  *fired = 1;
  gc_value child = GC_FIELD(slots[0], 0);
  *gc_hp_val(child) = 0;
}

static void violation_exits_1_naming_the_op(void) {
  const char *path = write_file("break.txt", program, strlen(program));
  int fired = 0;
  fuzz_options base = {.after_op = zero_reachable_header, .after_op_user = &fired};
  const char *argv[] = {"replay", "--quiet", path};
  expect(run_replay(3, argv, &base, out, sizeof out), 1, "cycle started by op 4 `collect major`");
  CHECK(fired == 1);
  CHECK(strstr(out, "VIOLATION") != NULL);
  CHECK(strstr(out, "== VIOLATION") != NULL);
}

/* The line naming the first violation, from `out`. */
static void first_violation_line(char *buf, size_t len) {
  const char *at = strstr(out, "== VIOLATION");
  const char *end = at != NULL ? strchr(at, '\n') : NULL;
  size_t n = at != NULL ? (end != NULL ? (size_t)(end - at) : strlen(at)) : 0;
  if (n >= len) n = len - 1;
  memcpy(buf, at != NULL ? at : "", n);
  buf[n] = '\0';
}

/* The fuzz target keeps memory from one input to the next (fuzz_options.scratch): after clean
 * programs ran with it, a broken heap is reported exactly as without it. */
static void scratch_kept_between_programs_changes_nothing(void) {
  fuzz_scratch *scratch = fuzz_scratch_create();
  CHECK(scratch != NULL);
  if (scratch == NULL) return;
  const char *clean = write_file("clean2.txt", program, strlen(program));
  const char *broken = write_file("break2.txt", program, strlen(program));
  const char *argv_clean[] = {"replay", "--quiet", clean};
  fuzz_options with = {.scratch = scratch};
  expect(run_replay(3, argv_clean, &with, out, sizeof out), 0, "== clean");
  expect(run_replay(3, argv_clean, &with, out, sizeof out), 0, "== clean");

  int fired = 0;
  fuzz_options alone = {.after_op = zero_reachable_header, .after_op_user = &fired};
  const char *argv_broken[] = {"replay", "--quiet", broken};
  expect(run_replay(3, argv_broken, &alone, out, sizeof out), 1, "cycle started by op 4");
  char want[200];
  first_violation_line(want, sizeof want);
  fired = 0;
  fuzz_options broken_with = alone;
  broken_with.scratch = scratch;
  expect(run_replay(3, argv_broken, &broken_with, out, sizeof out), 1, "cycle started by op 4");
  char got[200];
  first_violation_line(got, sizeof got);
  CHECK(want[0] != '\0' && strcmp(want, got) == 0);
  if (strcmp(want, got) != 0) fprintf(stderr, "  alone: '%s'\n  with scratch: '%s'\n", want, got);
  expect(run_replay(3, argv_clean, &with, out, sizeof out), 0, "== clean");
  fuzz_scratch_destroy(scratch);
}

static void bytes_and_text_replay_alike(void) {
  const char *text = write_file("prog.txt", program, strlen(program));
  char bytes_path[300];
  snprintf(bytes_path, sizeof bytes_path, "%s/prog.bin", dir);
  const char *assemble[] = {"replay", "--assemble", bytes_path, text};
  expect(run_replay(4, assemble, NULL, out, sizeof out), 0, NULL);
  const char *print[] = {"replay", "--print", bytes_path};
  expect(run_replay(3, print, NULL, out, sizeof out), 0, NULL);
  CHECK(strcmp(out,
               "alloc s0 scan 2\nalloc s1 scan 1\nstore s0.0 s1\ndrop s1\ncollect major\n"
               "collect full\n") == 0);
  const char *run[] = {"replay", bytes_path};
  expect(run_replay(2, run, NULL, out, sizeof out), 0, "(bytes, 18 bytes, 6 ops, target graph)");
}

/* A byte input belongs to a target: the roots target's bytes name other ops. Text is the same
 * for both; an op the target does not have is refused. */
static void targets_read_bytes_their_own_way(void) {
  const char *text = write_file("roots.txt", "alloc s0 scan 2\nrange_pool r0.0 s0 6\n", 37);
  char bytes_path[300];
  snprintf(bytes_path, sizeof bytes_path, "%s/roots.bin", dir);
  const char *assemble[] = {"replay", "--target", "roots", "--assemble", bytes_path, text};
  expect(run_replay(6, assemble, NULL, out, sizeof out), 0, NULL);
  const char *as_roots[] = {"replay", "--target", "roots", "--print", bytes_path};
  expect(run_replay(5, as_roots, NULL, out, sizeof out), 0, NULL);
  CHECK(strcmp(out, "alloc s0 scan 2\nrange_pool r0.0 s0 6\n") == 0);
  const char *as_graph[] = {"replay", "--print", bytes_path};
  expect(run_replay(3, as_graph, NULL, out, sizeof out), 0, NULL);
  CHECK(strstr(out, "range_pool") == NULL); /* the same bytes, other ops */
  const char *run[] = {"replay", "--target", "roots", bytes_path};
  expect(run_replay(4, run, NULL, out, sizeof out), 0, "target roots");
  const char *spawn = write_file("spawn.txt", "spawn d1\n", 9);
  const char *refused[] = {"replay", "--target", "roots", spawn};
  expect(run_replay(4, refused, NULL, out, sizeof out), 2, "not one of the roots target's ops");
  const char *bogus[] = {"replay", "--target", "bogus", text};
  expect(run_replay(4, bogus, NULL, out, sizeof out), 2, "no such target (graph, roots, schedule;");
}

/* --backend runs a program through the backend interface (fuzz/oracle); --target NAME of a
 * backend is the same; an unknown backend, or an op the backend's set lacks, is bad input. */
static void backends_run_through_the_interface(void) {
  const char *text = write_file("backend.txt",
                                "alloc s0 scan 2\nalloc s1 raw 1\nstore s0.0 s1\ncollect full\n"
                                "load s2 s0.0\n",
                                71);
  const char *lua[] = {"replay", "--backend", "lua", text};
  expect(run_replay(4, lua, NULL, out, sizeof out), 0, "== backend lua (5 ops");
  const char *gcfuzz[] = {"replay", "--backend", "gcfuzz", text};
  expect(run_replay(4, gcfuzz, NULL, out, sizeof out), 0, "== backend gcfuzz (5 ops");
  const char *as_target[] = {"replay", "--target", "lua", "--quiet", text};
  expect(run_replay(5, as_target, NULL, out, sizeof out), 0, "== clean");
  const char *bogus[] = {"replay", "--backend", "bogus", text};
  expect(run_replay(4, bogus, NULL, out, sizeof out), 2, "--backend bogus: no such backend");
  const char *range = write_file("range.txt", "range_int r0.0 5\n", 17);
  const char *refused[] = {"replay", "--backend", "lua", range};
  expect(run_replay(4, refused, NULL, out, sizeof out), 2, "range_int");
  const char *list[] = {"replay", "--list-backends"};
  expect(run_replay(2, list, NULL, out, sizeof out), 0, "tune p0  mode");
}

int main(int argc, char **argv) {
  options_files_count = argc - 1;
  options_files = argv + 1;
  if (mkdtemp(dir) == NULL) return 2;
  RUN(clean_text_exits_0);
  RUN(malformed_text_exits_2_with_line_and_column);
  RUN(misspelled_first_op_in_txt_file_is_an_error);
  RUN(non_ascii_comment_is_still_text);
  RUN(other_file_with_unknown_first_word_is_bytes_with_a_note);
  RUN(verify_runs_exactly_the_passes_named);
  RUN(long_input_warns_and_past_the_limit_is_refused);
  RUN(max_len_is_the_fuzz_targets);
  RUN(list_ops_prints_the_op_table);
  RUN(list_kinds_prints_the_kind_table);
  RUN(bad_usage_exits_2);
  RUN(violation_exits_1_naming_the_op);
  RUN(bytes_and_text_replay_alike);
  RUN(targets_read_bytes_their_own_way);
  RUN(backends_run_through_the_interface);
  RUN(events_are_each_collectors_own);
  RUN(scratch_kept_between_programs_changes_nothing);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  CHECK_MAIN_END();
}
