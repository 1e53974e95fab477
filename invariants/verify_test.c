/* The verifier: choosing passes by parameter, chaining an existing hook, the report
 * limit, the Graphviz writer, and ABORT mode (in a child process). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "invariants/breaking.h"
#include "invariants/pass.h"
#include "invariants/verdict.h"

/* ---- Choosing passes ----------------------------------------------------------------------- */

static void run_cycles(gc_heap *h, int n) {
  gc_domain *d = gc_main_domain(h);
  for (int i = 0; i < n; i++) gc_collect(d, GC_COLLECT_FULL);
}

static void passes_follow_the_verify_parameter(void) {
  gc_heap *h = breaking_heap("verify=reach");
  static gc_value root;
  gc_root_register(h, &root);
  root = gc_alloc(gc_main_domain(h), 3, GC_TAG_SCAN);
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_COLLECT);
  run_cycles(h, 2);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_REACH), 2);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_SWEPT), 0);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_CHECKMARK), 0);
  CHECK(gc_set_params(h, "verify=swept+checkmark") == GC_OK);
  run_cycles(h, 3);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_REACH), 2);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_SWEPT), 3);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_CHECKMARK), 3);
  CHECK(gc_set_params(h, "verify=all") == GC_OK);
  run_cycles(h, 1);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_REACH), 3);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_MODEL), 0); /* no model attached: skipped */
  CHECK(gc_set_params(h, "verify=none") == GC_OK);
  run_cycles(h, 1);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_REACH), 3);
  CHECK_NO_REPORT(gc_verify_reports_of(v));
  gc_verify_uninstall(v);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h);
}

static void passes_follow_the_environment(void) {
  setenv(GC_PARAMS_ENV, "verify=reach+swept+checkmark", 1);
  gc_heap *h = gc_heap_create(NULL);
  unsetenv(GC_PARAMS_ENV);
  CHECK(h != NULL);
  if (h == NULL) return;
  CHECK_EQ_U(gc_heap_config(h)->verify, GC_VERIFY_REACH | GC_VERIFY_SWEPT | GC_VERIFY_CHECKMARK);
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_ABORT); /* a clean heap: never aborts */
  run_cycles(h, 2);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_SWEPT), 2);
  gc_verify_uninstall(v);
  gc_heap_destroy(h);
}

/* Each pass runs at exactly the hook points its row of gc/passes.h names (the model's too, once a
 * model is attached). What the passes find at points they are not meant for is not the test. */
static void passes_run_where_the_table_says(void) {
  gc_heap *h = breaking_heap("verify=none");
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_COLLECT);
  gc_model *m = gc_model_create(h, 1);
  gc_verify_set_model(v, m);
  const gc_hook_point points[] = {GC_HOOK_MARK_DONE, GC_HOOK_CYCLED, GC_HOOK_SWEPT};
  for (int p = 0; p < GC_VERIFY_PASS_COUNT; p++) {
    unsigned bit = gc_verify_pass_mask((gc_verify_pass_id)p);
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
      uint64_t before = gc_verify_runs(v, bit);
      gc_verify_run_point(v, bit, points[i]);
      int ran = gc_verify_runs(v, bit) == before + 1;
      const char *at = gc_verify_point_name(points[i]);
      int listed = gc_verify_pass_runs_at((gc_verify_pass_id)p, (gc_verify_point_id)points[i]);
      CHECK(ran == listed);
      if (ran != listed) {
        fprintf(stderr, "  %s %s at %s\n", gc_verify_pass_name((gc_verify_pass_id)p),
                ran ? "runs, unlisted," : "does not run", at);
      }
      gc_verify_clear(v);
    }
  }
  gc_model_destroy(m);
  gc_verify_uninstall(v);
  gc_heap_destroy(h);
}

/* ---- Chaining ------------------------------------------------------------------------------ */

static char trail[64];
static size_t trail_len;
static void note(gc_heap *h, gc_hook_point point, void *user) {
  if (trail_len + 1 < sizeof trail) trail[trail_len++] = "mcsSl"[point];
}

/* The trail of one stw cycle (an incremental one adds its slices): marking=stw. */
static void existing_hook_runs_first_and_comes_back(void) {
  gc_heap *h = breaking_heap("marking=stw,verify=reach+swept+checkmark");
  int user = 0;
  gc_set_hook(h, note, &user);
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_COLLECT);
  trail_len = 0;
  run_cycles(h, 1);
  trail[trail_len] = '\0';
  CHECK(strcmp(trail, "Smcs") == 0);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_CHECKMARK), 1);
  gc_verify_uninstall(v);
  CHECK(h->hook == note && h->hook_user == &user);
  gc_heap_destroy(h);
}

/* ---- The report limit and Graphviz --------------------------------------------------------- */

static void report_limit_counts_the_rest(void) {
  gc_heap *h = breaking_heap(NULL);
  gc_domain *d = gc_main_domain(h);
  static gc_value holder;
  gc_root_register(h, &holder);
  holder = gc_alloc(h->main_domain, 100, GC_TAG_SCAN);
  for (int i = 0; i < 100; i++) GC_FIELD(holder, i) = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_collect(d, GC_COLLECT_FULL);
  for (int i = 0; i < 100; i++) set_colour(GC_FIELD(holder, i), h->colours.garbage);
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_reach(h, &out), 100);
  CHECK_EQ_U(out.count, GC_VERIFY_REPORT_LIMIT);
  CHECK_EQ_U(out.dropped, 100 - GC_VERIFY_REPORT_LIMIT);
  gc_verify_reports_free(&out);
  for (int i = 0; i < 100; i++) set_colour(GC_FIELD(holder, i), h->colours.unmarked);
  gc_root_unregister(h, &holder);
  gc_heap_destroy(h);
}

static const char *tmp_path(const char *name, char *buf, size_t len) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(buf, len, "%s/%s", dir != NULL ? dir : "/tmp", name);
  return buf;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static size_t count_of(const char *text, const char *what) {
  size_t n = 0;
  for (const char *at = strstr(text, what); at != NULL; at = strstr(at + 1, what)) n++;
  return n;
}

/* gc_verify_reports_emit gives each report its verdict line with the caller's op, the count, and
 * the first report's Graphviz file; gc_verify_reports_print gives no verdict line. */
static void emit_reports(const gc_verify_reports *out) {
  char dot_path[512];
  tmp_path("emitted.dot", dot_path, sizeof dot_path);
  unlink(dot_path);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  gc_verify_reports_emit(out, 7, dot_path, f);
  fclose(f);
  CHECK_EQ_U(count_of(text, GC_VERDICT_PREFIX), out->count);
  /* The pass ran directly, during what the caller calls op 7: the verdict's point is "op". */
  const char *human = strstr(text, "gcfuzz verify: reach.bad-colour (pass reach");
  const char *verdict = strstr(text, GC_VERDICT_PREFIX
                               "{\"kind\": \"reach.bad-colour\", "
                               "\"pass\": \"reach\", \"point\": \"op\", \"op\": 7, "
                               "\"cycle\": ");
  CHECK(human != NULL && verdict != NULL && human < verdict);
  CHECK(strstr(text, "gcfuzz verify: 1 violation(s)\n") != NULL);
  CHECK(strstr(text, "neighbourhood of the first report written to") != NULL);
  const char *dot = read_file(dot_path);
  CHECK(dot != NULL && strstr(dot, "reach.bad-colour") != NULL);
  free(text);

  f = open_memstream(&text, &len);
  gc_verify_reports_emit(out, -1, NULL, f); /* no file named: none written, none mentioned */
  gc_verify_reports_print(out, f);
  fclose(f);
  CHECK_EQ_U(count_of(text, GC_VERDICT_PREFIX), out->count);
  CHECK(strstr(text, "\"op\": -1") != NULL);
  CHECK(strstr(text, "neighbourhood") == NULL);
  free(text);
}

/* A small tree whose middle node is bad: the dot file holds the bad block, its referrer and the
 * referrer's referrer, its children and grandchildren. */
static void dot_file_shows_the_neighbourhood(void) {
  gc_heap *h = breaking_heap(NULL);
  gc_domain *d = gc_main_domain(h);
  static gc_value root;
  gc_root_register(h, &root);
  root = gc_alloc(d, 2, GC_TAG_SCAN);
  gc_value mid = gc_alloc(d, 2, GC_TAG_SCAN);
  gc_value bad = gc_alloc(d, 3, GC_TAG_SCAN);
  GC_FIELD(root, 1) = mid;
  GC_FIELD(mid, 0) = bad;
  for (int i = 0; i < 3; i++) {
    gc_value child = gc_alloc(d, 2, GC_TAG_SCAN);
    GC_FIELD(bad, i) = child;
    GC_FIELD(child, 0) = gc_alloc(d, 1, GC_TAG_RAW);
  }
  gc_collect(d, GC_COLLECT_FULL);
  set_colour(bad, h->colours.garbage);
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  gc_verify_reach(h, &out);
  CHECK_ONLY_KIND(&out, GC_VK_REACH_BAD_COLOUR);
  if (out.count > 0) {
    const gc_verify_report *r = &out.items[0];
    CHECK_EQ_U(r->node_count, 1 + 2 + 3 + 3); /* bad, 2 path nodes, 3 children, 3 grandchildren */
    CHECK_EQ_U(r->edge_count, 2 + 3 + 3);
    char path[512];
    CHECK(gc_verify_report_write_dot(r, tmp_path("report.dot", path, sizeof path)));
    const char *dot = read_file(path);
    CHECK(dot != NULL && strncmp(dot, "digraph", 7) == 0);
    CHECK(dot != NULL && strstr(dot, "reach.bad-colour") != NULL);
    CHECK(dot != NULL && strstr(dot, "global root #0") != NULL);
    CHECK(dot != NULL && strstr(dot, "GARBAGE") != NULL);
    gc_verify_report_print(r, stderr);
    gc_verify_report_print_dot(r, stderr);
    CHECK(!gc_verify_report_write_dot(r, "/nonexistent-dir/x.dot"));
    emit_reports(&out);
  }
  gc_verify_reports_free(&out);
  set_colour(bad, h->colours.unmarked);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h);
}

/* ---- ABORT mode ---------------------------------------------------------------------------- */

static void garbage_arg(gc_heap *h, void *arg) { set_colour(*(gc_value *)arg, h->colours.garbage); }

/* The child: a heap whose reachable block turns GARBAGE right after the cycle; never returns.
 * The Graphviz file is named the way a user names it, in the environment. */
static void aborting_child(const char *dot_path) {
  setenv("GCFUZZ_VERIFY_DOT", dot_path, 1);
  gc_heap *h = breaking_heap("verify=reach+swept+checkmark");
  gc_domain *d = gc_main_domain(h);
  static gc_value root;
  gc_root_register(h, &root);
  root = gc_alloc(d, 2, GC_TAG_SCAN);
  static gc_value child;
  child = gc_alloc(d, 1, GC_TAG_SCAN);
  GC_FIELD(root, 0) = child;
  breaking_hook b;
  breaking_hook_set(h, &b, GC_HOOK_CYCLED, garbage_arg, &child);
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_ABORT);
  CHECK(v != NULL && strcmp(gc_verify_dot_path(v), dot_path) == 0);
  gc_collect(d, GC_COLLECT_FULL); /* clean */
  b.armed = 1;
  gc_collect(d, GC_COLLECT_FULL); /* aborts in the reach pass */
  _exit(3);
}

static void abort_mode_prints_and_aborts(void) {
  char dot_path[512];
  tmp_path("abort.dot", dot_path, sizeof dot_path);
  unlink(dot_path);
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    aborting_child(dot_path);
  }
  close(fds[1]);
  static char out[65536];
  size_t len = 0;
  ssize_t n;
  while ((n = read(fds[0], out + len, sizeof out - 1 - len)) > 0) len += (size_t)n;
  out[len] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  CHECK(strstr(out, "gcfuzz verify: reach.bad-colour (pass reach, cycle 2, cycled)") != NULL);
  CHECK(strstr(out, "gcfuzz verify: 1 violation(s)") != NULL);
  /* One verdict line for the one finding, attributed to no op. */
  CHECK_EQ_U(count_of(out, GC_VERDICT_PREFIX), 1);
  CHECK(strstr(out,
               GC_VERDICT_PREFIX "{\"kind\": \"reach.bad-colour\", \"pass\": \"reach\", "
                                 "\"point\": \"cycled\", \"op\": -1, \"cycle\": 2}\n") != NULL);
  CHECK(strstr(out, "neighbourhood of the first report written to") != NULL);
  const char *dot = read_file(dot_path);
  CHECK(dot != NULL && strncmp(dot, "digraph", 7) == 0);
  if (check_failures) fprintf(stderr, "child's stderr:\n%s\n", out);
}

/* gc_verify_pass_now: the pass runs directly, in the verifier's scratch, and reports to the
 * caller's list only, in either mode; a bit that is not one of the three passes runs nothing. */
static void pass_now_reports_to_the_caller(void) {
  gc_verify_mode modes[] = {GC_VERIFY_COLLECT, GC_VERIFY_ABORT};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    gc_heap *h = breaking_heap("verify=none");
    static gc_value root;
    gc_root_register(h, &root);
    root = gc_alloc(gc_main_domain(h), 3, GC_TAG_SCAN);
    gc_value child = gc_alloc(gc_main_domain(h), 2, GC_TAG_SCAN);
    GC_FIELD(root, 1) = child;
    gc_verifier *v = gc_verify_install(h, modes[m]);
    run_cycles(h, 1);
    gc_verify_reports out;
    gc_verify_reports_init(&out);
    CHECK_EQ_U(gc_verify_pass_now(v, GC_VERIFY_REACH, &out), 0);
    CHECK_EQ_U(gc_verify_pass_now(v, GC_VERIFY_SWEPT, &out), 0);
    gc_header saved = *gc_hp_val(child);
    *gc_hp_val(child) = 0; /* a reachable block freed */
    CHECK_EQ_U(gc_verify_pass_now(v, GC_VERIFY_REACH, &out), 1);
    CHECK_ONLY_KIND(&out, GC_VK_REACH_ZERO_HEADER);
    CHECK(out.count == 1 && out.items[0].block == child &&
          strcmp(out.items[0].point, "direct") == 0);
    CHECK_EQ_U(gc_verify_pass_now(v, GC_VERIFY_MODEL, &out), 0); /* not one of the three */
    CHECK_EQ_U(gc_verify_violations(v), 0);                      /* never the verifier's list */
    *gc_hp_val(child) = saved;
    gc_verify_reports_free(&out);
    gc_verify_uninstall(v);
    gc_root_unregister(h, &root);
    gc_heap_destroy(h);
  }
}

int main(void) {
  RUN(passes_follow_the_verify_parameter);
  RUN(passes_follow_the_environment);
  RUN(passes_run_where_the_table_says);
  RUN(existing_hook_runs_first_and_comes_back);
  RUN(report_limit_counts_the_rest);
  RUN(dot_file_shows_the_neighbourhood);
  RUN(abort_mode_prints_and_aborts);
  RUN(pass_now_reports_to_the_caller);
  CHECK_MAIN_END();
}
