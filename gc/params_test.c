/* Parameters: the key=value syntax, its errors, GCFUZZ_PARAMS and gc_set_params. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc/check.h"
#include "gc/gc.h"

static void parses_every_key(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200] = "";
  CHECK(gc_config_parse(&cfg,
                        "percent=50,mintrigger=1K,sweep=100,markstack=4,limit=64M,"
                        "batch=2,keep=0,failafter=7,trace=1,verify=reach+swept",
                        err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.gc_percent, 50);
  CHECK_EQ_U(cfg.min_trigger_words, 1024);
  CHECK_EQ_U(cfg.sweep_budget_words, 100);
  CHECK_EQ_U(cfg.mark_stack_entries, 4);
  CHECK_EQ_U(cfg.heap_limit_bytes, 64u << 20);
  CHECK_EQ_U(cfg.pools_per_batch, 2);
  CHECK_EQ_U(cfg.free_pools_kept, 0);
  CHECK_EQ_U(cfg.fail_alloc_after, 7);
  CHECK_EQ_U(cfg.trace, 1);
  CHECK_EQ_U(cfg.verify, GC_VERIFY_REACH | GC_VERIFY_SWEPT);
  CHECK(gc_config_parse(&cfg, "percent=off,verify=all", err, sizeof err) == GC_OK);
  CHECK(cfg.gc_percent == GC_PERCENT_OFF);
  CHECK_EQ_U(cfg.verify, GC_VERIFY_ALL);
}

static void rejects_bad_input_and_keeps_config(void) {
  static const char *bad[] = {"percent",
                              "percent=-1",
                              "markstack=3",
                              "bogus=1",
                              "sweep=0",
                              "limit=12Q",
                              "verify=reach+nope",
                              "verify=", /* not "no passes": a typo must not turn checks off */
                              "trace=2",
                              "batch=0",
                              "percent=99999999999999999999999",
                              "marking=concurrent",
                              "marking=",
                              "markslice=0",
                              "markslice=2000000000000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    gc_config cfg, orig;
    gc_config_default(&cfg);
    orig = cfg;
    char err[200] = "";
    CHECK(gc_config_parse(&cfg, bad[i], err, sizeof err) == GC_ERR_PARAM);
    CHECK(err[0] != '\0');
    CHECK(memcmp(&cfg, &orig, sizeof cfg) == 0);
  }
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200] = "";
  gc_config_parse(&cfg, "bogus=1", err, sizeof err);
  CHECK(strstr(err, "unknown parameter 'bogus'") != NULL);
}

static void marking_and_markslice(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  CHECK_EQ_U(cfg.marking, GC_MARKING_INCREMENTAL); /* the default */
  CHECK_EQ_U(cfg.mark_slice_words, 4096);
  char err[200] = "";
  CHECK(gc_config_parse(&cfg, "marking=incremental,markslice=1K", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.marking, GC_MARKING_INCREMENTAL);
  CHECK_EQ_U(cfg.mark_slice_words, 1024);
  CHECK(gc_config_parse(&cfg, "marking=stw,markslice=1", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.marking, GC_MARKING_STW);
  CHECK_EQ_U(cfg.mark_slice_words, 1);
  CHECK(gc_config_parse(&cfg, "marking=sometimes", err, sizeof err) == GC_ERR_PARAM);
  CHECK(strstr(err, "marking=sometimes") != NULL);
}

static uint64_t cycles_of(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s.cycles;
}

/* A list of n cells in a global root: enough for marking to take several slices. */
static gc_value marked_list;
static void make_list(gc_heap *h, int n) {
  gc_domain *d = gc_main_domain(h);
  marked_list = 0;
  gc_root_register(h, &marked_list);
  for (int i = 0; i < n; i++) {
    gc_value cell = gc_alloc(d, 2, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = marked_list; /* initialising */
    marked_list = cell;
  }
}

/* gc_set_params changes the mode of the cycles started from then on; a cycle under way ends in
 * the mode it began. GC_COLLECT_START shows which mode a cycle starts in: a whole cycle with
 * marking=stw, marking under way with incremental. */
static void marking_set_at_run_time(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, "percent=off", err, sizeof err) == GC_OK);
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *d = gc_main_domain(h);
  make_list(h, 5000);
  CHECK(gc_set_params(h, "marking=incremental,markslice=8") == GC_OK);
  CHECK_EQ_U(gc_heap_config(h)->marking, GC_MARKING_INCREMENTAL);
  CHECK_EQ_U(gc_heap_config(h)->mark_slice_words, 8);
  uint64_t c0 = cycles_of(h);
  gc_collect(d, GC_COLLECT_START);
  CHECK_EQ_U(cycles_of(h), c0); /* marking under way */
  CHECK(gc_set_params(h, "marking=stw") == GC_OK);
  gc_collect(d, GC_COLLECT_START); /* a cycle marks already: nothing */
  CHECK_EQ_U(cycles_of(h), c0);
  gc_stats before, after;
  gc_get_stats(h, &before);
  gc_collect(d, GC_COLLECT_SLICE); /* still incremental: one mark slice */
  gc_get_stats(h, &after);
  CHECK_EQ_U(after.mark_slices, before.mark_slices + 1);
  for (int i = 0; i < 1000000 && cycles_of(h) == c0; i++) gc_collect(d, GC_COLLECT_SLICE);
  CHECK_EQ_U(cycles_of(h), c0 + 1);
  gc_collect(d, GC_COLLECT_START); /* stop-the-world now: a whole cycle */
  CHECK_EQ_U(cycles_of(h), c0 + 2);
  gc_get_stats(h, &before);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &after);
  CHECK_EQ_U(after.mark_slices, before.mark_slices); /* no slice in a stop-the-world cycle */
  CHECK_EQ_U(after.pool_live_blocks, 5000);
  gc_root_unregister(h, &marked_list);
  gc_heap_destroy(h);
}

static void environment_variable_applies(void) {
  setenv(GC_PARAMS_ENV, "markstack=8,percent=off", 1);
  gc_heap *h = gc_heap_create(NULL);
  CHECK(h != NULL);
  CHECK_EQ_U(gc_heap_config(h)->mark_stack_entries, 8);
  CHECK(gc_heap_config(h)->gc_percent == GC_PERCENT_OFF);
  gc_heap_destroy(h);
  setenv(GC_PARAMS_ENV, "markstack=zero", 1);
  CHECK(gc_heap_create(NULL) == NULL); /* and a message on stderr */
  unsetenv(GC_PARAMS_ENV);
}

static void set_params_at_run_time(void) {
  gc_heap *h = gc_heap_create(NULL);
  CHECK(gc_set_params(h, "markstack=4,sweep=10") == GC_OK);
  CHECK_EQ_U(gc_heap_config(h)->mark_stack_entries, 4);
  CHECK(gc_set_params(h, "markstack=2") == GC_ERR_PARAM);
  CHECK(strstr(gc_last_error_message(h), "markstack=2") != NULL);
  CHECK_EQ_U(gc_heap_config(h)->mark_stack_entries, 4);
  gc_heap_destroy(h);
}

/* A key given twice is refused, naming the key, wherever a parameter string is read: it would
 * otherwise be a typo or a forgotten earlier setting that silently loses. */
static void duplicate_key_is_an_error(void) {
  static const char *dup[] = {"markstack=8,markstack=16", "percent=50,sweep=4,percent=off",
                              "verify=reach,verify=swept", "limit=1M,,limit=1M"};
  for (size_t i = 0; i < sizeof dup / sizeof dup[0]; i++) {
    gc_config cfg, orig;
    gc_config_default(&cfg);
    orig = cfg;
    char err[200] = "";
    CHECK(gc_config_parse(&cfg, dup[i], err, sizeof err) == GC_ERR_PARAM);
    CHECK(strstr(err, "given twice") != NULL);
    CHECK(memcmp(&cfg, &orig, sizeof cfg) == 0);
  }
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200] = "";
  gc_config_parse(&cfg, "percent=50,sweep=4,percent=off", err, sizeof err);
  CHECK(strstr(err, "'percent'") != NULL);

  setenv(GC_PARAMS_ENV, "markstack=8,trace=0,markstack=16", 1);
  CHECK(gc_heap_create(NULL) == NULL); /* and "markstack ... given twice" on stderr */
  unsetenv(GC_PARAMS_ENV);

  gc_heap *h = gc_heap_create(NULL);
  CHECK(gc_set_params(h, "sweep=10,sweep=20") == GC_ERR_PARAM);
  CHECK(strstr(gc_last_error_message(h), "'sweep'") != NULL);
  CHECK(gc_heap_config(h)->sweep_budget_words != 10 && gc_heap_config(h)->sweep_budget_words != 20);
  CHECK(gc_set_params(h, "sweep=10") == GC_OK); /* once is fine, and so is again later */
  CHECK(gc_set_params(h, "sweep=20") == GC_OK);
  CHECK_EQ_U(gc_heap_config(h)->sweep_budget_words, 20);
  gc_heap_destroy(h);
}

/* Everything written to stderr while `run` runs on a new heap made from `params`. */
static size_t stderr_of(const char *params, void (*run)(gc_heap *), char *out, size_t out_len) {
  FILE *capture = tmpfile();
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(capture), STDERR_FILENO);
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, params, err, sizeof err) == GC_OK);
  gc_heap *h = gc_heap_create(&cfg);
  run(h);
  gc_heap_destroy(h);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(capture);
  size_t n = fread(out, 1, out_len - 1, capture);
  out[n] = '\0';
  fclose(capture);
  return n;
}

static size_t count(const char *haystack, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle)) n++;
  return n;
}

static void three_cycles(gc_heap *h) {
  for (int i = 0; i < 3; i++) gc_collect(gc_main_domain(h), GC_COLLECT_FULL);
}

static void verify_set_at_run_time(gc_heap *h) {
  gc_collect(gc_main_domain(h), GC_COLLECT_FULL);
  CHECK(gc_set_params(h, "verify=reach") == GC_OK);
  three_cycles(h);
}

static int hook_calls;
static void counting_hook(gc_heap *h, gc_hook_point point, void *user) { hook_calls++; }
static void three_cycles_with_hook(gc_heap *h) {
  gc_set_hook(h, counting_hook, NULL);
  three_cycles(h);
}

/* A verify mask with no verifier installed checks nothing: the first hook point says so once
 * per heap, naming the way to install one. The default mask, or an installed hook, says
 * nothing. */
static void verify_without_verifier_warns_once(void) {
  char out[4096];
  stderr_of("verify=all", three_cycles, out, sizeof out);
  CHECK_EQ_U(count(out, "no verifier installed"), 1);
  CHECK(strstr(out, "gc_verify_install") != NULL);
  stderr_of("verify=all", three_cycles, out, sizeof out); /* a new heap: said again, once */
  CHECK_EQ_U(count(out, "no verifier installed"), 1);
  stderr_of("", verify_set_at_run_time, out, sizeof out);
  CHECK_EQ_U(count(out, "no verifier installed"), 1);
  gc_config cfg;
  gc_config_default(&cfg);
  CHECK_EQ_U(cfg.verify, 0); /* the default: nothing to verify, nothing to say */
  CHECK_EQ_U(stderr_of("", three_cycles, out, sizeof out), 0);
  hook_calls = 0;
  CHECK_EQ_U(stderr_of("verify=all", three_cycles_with_hook, out, sizeof out), 0);
  CHECK(hook_calls >= 6);
}

static void trace_line_per_cycle(void) {
  FILE *out = tmpfile();
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.trace = 1;
  cfg.trace_file = out;
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *d = gc_main_domain(h);
  gc_collect(d, GC_COLLECT_MAJOR);
  gc_collect(d, GC_COLLECT_FULL);
  gc_heap_destroy(h);
  rewind(out);
  char line[512];
  int lines = 0;
  while (fgets(line, sizeof line, out)) {
    lines++;
    CHECK(strncmp(line, "gc ", 3) == 0);
    CHECK(strstr(line, " mark ") != NULL && strstr(line, " pause ") != NULL);
  }
  CHECK_EQ_U(lines, 2);
  fclose(out);
}

/* With incremental marking the line says so, with the cycle's slices, rechecks and the two
 * stops' pauses; with marking=stw it does not. */
static void trace_line_incremental(void) {
  FILE *out = tmpfile();
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, "marking=incremental,markslice=16,percent=off,trace=1", err,
                        sizeof err) == GC_OK);
  cfg.trace_file = out;
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *d = gc_main_domain(h);
  make_list(h, 2000);
  gc_collect(d, GC_COLLECT_START);
  for (int i = 0; i < 1000000 && cycles_of(h) == 0; i++) gc_collect(d, GC_COLLECT_SLICE);
  CHECK(gc_set_params(h, "marking=stw") == GC_OK);
  gc_collect(d, GC_COLLECT_MAJOR);
  gc_root_unregister(h, &marked_list);
  gc_heap_destroy(h);
  rewind(out);
  char line[1024];
  int lines = 0;
  while (fgets(line, sizeof line, out)) {
    lines++;
    CHECK(strncmp(line, "gc ", 3) == 0);
    CHECK(strstr(line, " mark ") != NULL && strstr(line, " pause ") != NULL);
    const char *inc = strstr(line, "incremental, ");
    if (lines == 2) {
      CHECK(inc == NULL);
      continue;
    }
    CHECK(inc != NULL);
    if (inc == NULL) continue;
    unsigned long long slices = 0;
    size_t rechecks = 99;
    double start_ms = -1, end_ms = -1;
    CHECK_EQ_U(sscanf(inc, "incremental, %llu slices, %zu rechecks, start %lf ms, end %lf ms;",
                      &slices, &rechecks, &start_ms, &end_ms),
               4);
    CHECK(slices > 1); /* 2000 blocks of 3 words at 16 words a slice */
    CHECK(rechecks <= 8);
    CHECK(start_ms >= 0 && end_ms >= 0);
  }
  CHECK_EQ_U(lines, 2);
  fclose(out);
}

/* One stop a cycle in the stw mode; two with incremental marking (its start and its end, no
 * recheck on one domain that does not store). */
static void pause_history_is_a_ring(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  uint64_t pauses[GC_PAUSE_HISTORY + 10];
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY), 0);
  for (int i = 0; i < 3; i++) gc_collect(d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY), 6);
  CHECK(gc_set_params(h, "marking=stw") == GC_OK);
  for (int i = 0; i < 3; i++) gc_collect(d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY), 9);
  CHECK_EQ_U(gc_pause_history(h, pauses, 2), 2);
  for (int i = 0; i < 300; i++) gc_collect(d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY + 10), GC_PAUSE_HISTORY);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK(pauses[GC_PAUSE_HISTORY - 1] == s.last_pause_ns); /* newest last */
  int all_set = 1;
  for (int i = 0; i < GC_PAUSE_HISTORY; i++)
    all_set &= pauses[i] > 0 && pauses[i] <= s.max_pause_ns;
  CHECK(all_set);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(pause_history_is_a_ring);
  RUN(parses_every_key);
  RUN(rejects_bad_input_and_keeps_config);
  RUN(environment_variable_applies);
  RUN(set_params_at_run_time);
  RUN(duplicate_key_is_an_error);
  RUN(verify_without_verifier_warns_once);
  RUN(trace_line_per_cycle);
  RUN(marking_and_markslice);
  RUN(marking_set_at_run_time);
  RUN(trace_line_incremental);
  CHECK_MAIN_END();
}
