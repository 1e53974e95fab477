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
  static const char *bad[] = {"percent",           "percent=-1",
                              "markstack=3",       "bogus=1",
                              "sweep=0",           "limit=12Q",
                              "verify=reach+nope", "trace=2",
                              "batch=0",           "percent=99999999999999999999999"};
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

static void pause_history_is_a_ring(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  uint64_t pauses[GC_PAUSE_HISTORY + 10];
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY), 0);
  for (int i = 0; i < 3; i++) gc_collect(d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(gc_pause_history(h, pauses, GC_PAUSE_HISTORY), 3);
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
  CHECK_MAIN_END();
}
