/* Sanitizer findings as verdict lines (see fuzz_sanitizer_verdicts_install in driver.h).
 *
 * A sanitizer report names no op: this file adds the GCFUZZ-VERDICT line that does, so a crash
 * is keyed like the driver's own findings. Three ways in, each the runtime's own, whichever comes
 * first printing the one line of the finding:
 *   - ASan: its error report callback, called with every error report, before the process dies;
 *     the kind is the report's description ("heap-use-after-free");
 *   - UBSan: its report hook (__ubsan_on_report), kind from __ubsan_get_current_report_data
 *     ("signed-integer-overflow");
 *   - TSan: its report hook (__tsan_on_report), called with every report it prints, before
 *     halt_on_error ends the process; the kind is the report's type from __tsan_get_report_data
 *     ("data-race", "heap-use-after-free", "lock-order-inversion");
 *   - every sanitizer: the death callback, for what has no callback of its own (MSan, TSan,
 *     LeakSanitizer at exit). A libFuzzer target gets none from it: libFuzzer sets its own death
 *     callback after LLVMFuzzerInitialize (to save the crashing input), and the runtime keeps one;
 *     its targets are built with ASan and UBSan (or TSan: schedule-tsan), whose findings the
 *     hooks above print.
 * None of these callbacks takes a parameter, so the op comes from process state: drv_running (the
 * driver running a program, for its cycle count) and drv_thread_mutator (the op running on the
 * thread that made the finding); see state.h. */
#include <stdio.h>

#include "fuzz/driver/driver.h"
#include "fuzz/driver/state.h"
#include "invariants/verdict.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#if __has_feature(undefined_behavior_sanitizer)
#define FUZZ_UBSAN 1
#endif
#if __has_feature(memory_sanitizer)
#define FUZZ_MSAN 1
#endif
#if __has_feature(thread_sanitizer)
#define FUZZ_TSAN 1
#endif
#endif

#if defined(FUZZ_ASAN) || defined(FUZZ_UBSAN) || defined(FUZZ_MSAN) || defined(FUZZ_TSAN)
#define FUZZ_SANITIZED 1
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(FUZZ_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#if defined(FUZZ_SANITIZED)
static int installed; /* this process prints sanitizer verdicts */
static int printed;   /* the finding being reported has its line: the process dies with it */

/* Reads of the driver's state from inside a sanitizer's report are not the program's: under
 * TSan they must not be checked (the runtime is printing a report; a second one deadlocks it). */
#if defined(FUZZ_TSAN)
#define FUZZ_NOT_CHECKED __attribute__((no_sanitize("thread")))
#else
#define FUZZ_NOT_CHECKED
#endif

/* The line for finding "<pass>.<type>", attributed to the op running on this thread. */
FUZZ_NOT_CHECKED static void print_verdict(const char *pass, const char *type) {
  if (!installed || printed) return;
  printed = 1;
  char kind[96];
  snprintf(kind, sizeof kind, "%s.%s", pass, type);
  const driver *d = drv_running;
  const mutator *m = d != NULL ? drv_thread_mutator : NULL;
  /* Between two ops of a thread (polling, taking part in a collection, waiting for its turn),
   * the finding is the last op's, at no named point. */
  const fuzz_op *op = m == NULL ? NULL : m->op != NULL ? m->op : m->last_op;
  gc_verdict v = {
      .kind = kind,
      .pass = pass,
      .point = m == NULL            ? ""
               : m->op != NULL      ? "op"
               : m->last_op != NULL ? ""
                                    : "final",
      .op = op != NULL ? (long)op->index : -1,
      .cycle = d != NULL ? d->cycles_seen : -1,
  };
  gc_verdict_print(stderr, &v);
}

#if defined(FUZZ_ASAN)
static void asan_reported(const char *report) {
  (void)report;
  const char *what = __asan_get_report_description();
  print_verdict("asan", what != NULL && what[0] != '\0' ? what : "error");
}
#endif

#if defined(FUZZ_UBSAN)
/* Declared by the UBSan runtime (ubsan_monitor), not by a public header of clang 14. */
void __ubsan_get_current_report_data(const char **issue_kind, const char **message,
                                     const char **filename, unsigned *line, unsigned *col,
                                     char **memory_addr) __attribute__((weak));
void __ubsan_on_report(void);

/* The type of the report UBSan is printing ("signed-integer-overflow"), or NULL; only while it
 * prints one. */
static const char *ubsan_issue(void) {
  const char *issue = NULL, *message = NULL, *file = NULL;
  unsigned line = 0, col = 0;
  char *addr = NULL;
  if (__ubsan_get_current_report_data == NULL) return NULL;
  __ubsan_get_current_report_data(&issue, &message, &file, &line, &col, &addr);
  return issue != NULL && issue[0] != '\0' ? issue : NULL;
}

/* The runtime calls this on every report it prints: a weak hook it defines, which this definition
 * replaces when the driver is linked statically into the binary (Bazel's default for cc_binary;
 * a test sets linkstatic). Outside a report, __ubsan_get_current_report_data crashes: only here
 * may it be asked. */
void __ubsan_on_report(void) {
  const char *issue = ubsan_issue();
  print_verdict("ubsan", issue != NULL ? issue : "undefined");
}
#endif

#if defined(FUZZ_TSAN)
/* Declared by the TSan runtime's report API (tsan_interface.h of later clangs), not by a public
 * header of clang 14. */
int __tsan_get_report_data(void *report, const char **description, int *count, int *stack_count,
                           int *mop_count, int *loc_count, int *mutex_count, int *thread_count,
                           int *unique_tid_count, void **sleep_trace, unsigned long trace_size)
    __attribute__((weak));
void __tsan_on_report(void *report);

/* The runtime calls this after printing each report (a weak hook it defines, replaced by this
 * definition), on the thread that found it, then ends the process if halt_on_error is set. */
FUZZ_NOT_CHECKED void __tsan_on_report(void *report) {
  const char *description = NULL;
  int count = 0, stacks = 0, mops = 0, locs = 0, mutexes = 0, threads = 0, tids = 0;
  void *sleep = NULL;
  if (__tsan_get_report_data != NULL) {
    __tsan_get_report_data(report, &description, &count, &stacks, &mops, &locs, &mutexes, &threads,
                           &tids, &sleep, 1);
  }
  print_verdict("tsan", description != NULL && description[0] != '\0' ? description : "report");
}

/* libFuzzer's coverage counters (-fsanitize=fuzzer-no-link: inline 8-bit counters in the section
 * __sancov_cntrs, whose only symbol is __start___sancov_cntrs) are plain increments, and clang
 * 14's TSan instruments them like any store: in the tsan-fuzz build (the schedule-tsan target and
 * its replay tool) every edge two threads run is a race on its counter. They are the fuzzer's, not
 * the program's. A build without coverage has no such section, and nothing to suppress. The
 * runtime calls this before it has a thread state: no instrumentation at all in it. */
const char *__tsan_default_suppressions(void);
__attribute__((disable_sanitizer_instrumentation)) const char *__tsan_default_suppressions(void) {
  return "race:__start___sancov_cntrs\n";
}
#endif

/* The process dies of a finding no hook above printed. */
static void died(void) {
#if defined(FUZZ_MSAN)
  print_verdict("msan", "use-of-uninitialized-value");
#elif defined(FUZZ_TSAN)
  print_verdict("tsan", "report");
#elif defined(FUZZ_ASAN)
  /* ASan's own errors went through asan_reported: what is left is LeakSanitizer's exit check. */
  print_verdict("lsan", "detected-memory-leaks");
#else
  print_verdict("ubsan", "undefined");
#endif
}
#endif /* FUZZ_SANITIZED */

void fuzz_sanitizer_verdicts_install(void) {
#if defined(FUZZ_SANITIZED)
  installed = 1;
  __sanitizer_set_death_callback(died);
#endif
#if defined(FUZZ_ASAN)
  __asan_set_error_report_callback(asan_reported);
#endif
}
