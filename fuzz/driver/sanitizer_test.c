/* Sanitizer findings print their verdict line (fuzz_sanitizer_verdicts_install): a child process
 * runs a program whose op 2 is followed by a memory error of the kind the build's sanitizer
 * catches (after_op, so the op is still the running one; under TSan a data race between a
 * thread it starts and the program's own thread, which makes the second access); the parent
 * reads the child's stderr and requires exactly one verdict line, naming the sanitizer, the
 * kind and op 2. In a build without a sanitizer the install does nothing: a clean child prints
 * no line.
 *
 * Usage: sanitizer_test (no arguments).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#if __has_feature(undefined_behavior_sanitizer)
#define TEST_UBSAN 1
#endif
#if __has_feature(memory_sanitizer)
#define TEST_MSAN 1
#endif
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#if defined(TEST_ASAN) || defined(TEST_UBSAN) || defined(TEST_MSAN) || defined(TEST_TSAN)
#define TEST_SANITIZED 1
#endif

typedef enum error { NO_ERROR, USE_AFTER_FREE, SIGNED_OVERFLOW, UNINITIALIZED, DATA_RACE } error;

static volatile int sink;

/* DATA_RACE: the word both threads write with plain stores, and a flag that orders nothing for
 * TSan (relaxed atomics), so the program's thread writes second and reports the race. */
static int raced;
static int racer_wrote;

static void *racer(void *arg) {
  (void)arg;
  raced = 1;
  __atomic_store_n(&racer_wrote, 1, __ATOMIC_RELAXED);
  return NULL;
}

/* After op 2, the error `*user` (op 2 is still the running op: the driver clears it after). */
static void break_after_op_2(void *user, gc_heap *heap, gc_value *slots, const fuzz_op *op) {
  (void)heap;
  (void)slots;
  if (op->index != 2) return;
  switch (*(const error *)user) {
    case NO_ERROR: break;
    case USE_AFTER_FREE: {
      volatile char *p = malloc(8);
      free((void *)p);
      sink = p[1];
      break;
    }
    case SIGNED_OVERFLOW: {
      volatile int big = 2147483647;
      sink = big + (int)op->index;
      break;
    }
    case UNINITIALIZED: {
      int *p = malloc(sizeof *p);
      if (*p == 42) sink = 1;
      free(p);
      break;
    }
    case DATA_RACE: {
      pthread_t t;
      if (pthread_create(&t, NULL, racer, NULL) != 0) break;
      while (!__atomic_load_n(&racer_wrote, __ATOMIC_RELAXED)) {}
      raced = 2;
      pthread_join(t, NULL);
      break;
    }
  }
}

/* Run the program in a child with `e` after op 2; its stderr into buf. Returns the child's
 * wait status. */
static int run_child(error e, char *buf, size_t bsize) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    fuzz_sanitizer_verdicts_install();
    static const char program[] = "alloc s0 scan 2\nalloc s1 scan 1\nstore s0.0 s1\ndrop s1\n";
    fuzz_buf bytes = {0};
    fuzz_text_error err;
    if (!fuzz_assemble(NULL, program, strlen(program), &bytes, &err)) _exit(3);
    fuzz_options opt = {.after_op = break_after_op_2, .after_op_user = &e};
    fuzz_result res;
    int rc = fuzz_run(bytes.data, bytes.size, &opt, &res);
    fuzz_buf_free(&bytes);
    _exit(rc == 0 ? 0 : 4);
  }
  close(fds[1]);
  size_t used = 0;
  ssize_t n;
  while ((n = read(fds[0], buf + used, bsize - 1 - used)) > 0) used += (size_t)n;
  buf[used] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

static size_t count_of(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *at = text; (at = strstr(at, needle)) != NULL; at += strlen(needle)) n++;
  return n;
}

#if defined(TEST_SANITIZED)
/* The child dies of the finding, and its one verdict line says `kind` and `pass` at op 2. */
static void expect_verdict(error e, const char *kind, const char *pass) {
  static char out[1 << 16];
  int status = run_child(e, out, sizeof out);
  char want[160];
  snprintf(want, sizeof want,
           "GCFUZZ-VERDICT {\"kind\": \"%s\", \"pass\": \"%s\", \"point\": \"op\", \"op\": 2,",
           kind, pass);
  CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK_EQ_U(count_of(out, "GCFUZZ-VERDICT "), 1);
  CHECK(strstr(out, want) != NULL);
  if (strstr(out, want) == NULL) fprintf(stderr, "wanted: %s\nthe child said:\n%s\n", want, out);
}
#endif

#if defined(TEST_ASAN)
static void asan_heap_use_after_free(void) {
  expect_verdict(USE_AFTER_FREE, "asan.heap-use-after-free", "asan");
}
#endif

#if defined(TEST_UBSAN)
static void ubsan_signed_overflow(void) {
  expect_verdict(SIGNED_OVERFLOW, "ubsan.signed-integer-overflow", "ubsan");
}
#endif

#if defined(TEST_MSAN)
static void msan_uninitialized(void) {
  expect_verdict(UNINITIALIZED, "msan.use-of-uninitialized-value", "msan");
}
#endif

#if defined(TEST_TSAN)
/* What the schedule-tsan fuzz target relies on: TSan's report hook prints the race's line (the
 * runtime's death callback would print only "tsan.report", and in a libFuzzer target it is
 * libFuzzer's). Under halt_on_error the child dies at the report, else it exits with TSan's
 * exit code at the end: either way not 0. */
static void tsan_data_race(void) { expect_verdict(DATA_RACE, "tsan.data-race", "tsan"); }
#endif

#if !defined(TEST_SANITIZED)
/* No sanitizer: the install changes nothing; a clean program prints no line. */
static void no_sanitizer_no_line(void) {
  static char out[1 << 16];
  int status = run_child(NO_ERROR, out, sizeof out);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_EQ_U(count_of(out, "GCFUZZ-VERDICT "), 0);
}
#endif

int main(void) {
#if defined(TEST_ASAN)
  RUN(asan_heap_use_after_free);
#endif
#if defined(TEST_UBSAN)
  RUN(ubsan_signed_overflow);
#endif
#if defined(TEST_MSAN)
  RUN(msan_uninitialized);
#endif
#if defined(TEST_TSAN)
  RUN(tsan_data_race);
#endif
#if !defined(TEST_SANITIZED)
  RUN(no_sanitizer_no_line);
#endif
  CHECK_MAIN_END();
}
