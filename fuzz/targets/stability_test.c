/* The same input takes the same path: the coverage a fuzz target's input reaches must not depend on
 * what ran before it in the process. AFL++ runs a target in persistent mode (thousands of inputs
 * in one process) and calls an edge "unstable" when a re-run of an input does not hit it the same
 * way; libFuzzer keeps an input for the edges it hit once. State carried from one program to the
 * next (a cache, a map's buckets, a worker thread, a time) makes both keep inputs for nothing and
 * makes a crash depend on its predecessors.
 *
 * For each target named, every seed runs: in a fresh process of its own (forked before anything
 * ran in this one), then in this process in order, then again in reverse order (each run after
 * all the others). The coverage of each run, read from the build's own SanitizerCoverage counters,
 * must be the same all three times: the set of edges hit (libFuzzer's features with
 * use_counters=0) and each edge's hit count in AFL's buckets (1, 2, 3, 4-7, 8-15, 16-31, 32-127,
 * 128+). An edge that differs is printed with its function and line.
 *
 * It reads the counters the build gives it: --config=fuzz (inline 8-bit counters, libFuzzer's) or
 * --config=afl (trace-pc-guard, AFL++'s); both are checked by `ci/campaign --stability`. A build
 * without coverage (the default, asan, msan) has no counters: the test says so and passes. */
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/ops.h"
#include "fuzz/lang/text.h"

/* The sanitizer runtimes have it; a build without one (the default) links without it. */
#pragma weak __sanitizer_symbolize_pc

/* ---- The counters ------------------------------------------------------------------------ */

/* One array of counters for the whole binary: the sanitizer calls the init hooks once per module
 * (one, statically linked), and the test's arrays are indexed by edge. */
static uint8_t *counters;    /* inline 8-bit counters (--config=fuzz), or our own (pc-guard) */
static size_t edge_count;    /* counters in the array */
static const uintptr_t *pcs; /* the pc table of the inline counters: (pc, flags) per edge */
static uintptr_t *guard_pcs; /* pc-guard: the return address of each guard's first call */
static uint8_t guard_storage_ok;

/* The hooks themselves are not instrumented (a pc-guard callback that calls itself never ends). */
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))

NO_COVERAGE void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  if (counters == NULL) {
    counters = start;
    edge_count = (size_t)(stop - start);
  }
}

NO_COVERAGE void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end) {
  if (pcs == NULL && (size_t)(end - beg) / 2 == edge_count) pcs = beg;
}

/* --config=afl's trace-pc-guard: each guard gets its index, and a call counts into our array as
 * AFL++'s runtime counts into its map (saturating here: a bucket is the same either way). */
NO_COVERAGE void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
  if (start == stop || *start != 0) return;
  size_t base = edge_count;
  for (uint32_t *g = start; g < stop; g++) *g = (uint32_t)(++edge_count);
  uint8_t *c = realloc(guard_storage_ok ? counters : NULL, edge_count + 1);
  uintptr_t *p = realloc(guard_pcs, (edge_count + 1) * sizeof *p);
  if (c == NULL || p == NULL) abort();
  memset(c + base, 0, edge_count + 1 - base);
  memset(p + base, 0, (edge_count + 1 - base) * sizeof *p);
  counters = c;
  guard_pcs = p;
  guard_storage_ok = 1;
}

NO_COVERAGE void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
  uint32_t i = *guard;
  if (i == 0 || !guard_storage_ok) return;
  if (counters[i] != 255) counters[i]++;
  if (guard_pcs[i] == 0) guard_pcs[i] = (uintptr_t)__builtin_return_address(0);
}

static uint8_t bucket(uint8_t n) {
  if (n <= 3) return n;
  if (n <= 7) return 4;
  if (n <= 15) return 5;
  if (n <= 31) return 6;
  if (n <= 127) return 7;
  return 8;
}

static size_t array_size(void) { return guard_storage_ok ? edge_count + 1 : edge_count; }

/* The coverage of one run of the target on data, as buckets, into out (array_size() bytes). */
static void run_once(const fuzz_opset *set, const fuzz_buf *in, uint8_t *out) {
  memset(counters, 0, array_size());
  fuzz_target_run_one(set, in->data, in->size);
  for (size_t i = 0; i < array_size(); i++) out[i] = bucket(counters[i]);
}

/* ---- Comparing --------------------------------------------------------------------------- */

static void print_edge(size_t i) {
  uintptr_t pc = pcs != NULL ? pcs[2 * i] : guard_pcs != NULL ? guard_pcs[i] : 0;
  char where[512] = "?";
  if (pc != 0 && __sanitizer_symbolize_pc != NULL) {
    __sanitizer_symbolize_pc((void *)pc, "%F %L", where, sizeof where);
  }
  fprintf(stderr, "      edge %zu %s\n", i, where);
}

/* 0 when a and b are the same; else prints how they differ (at most 12 edges) and returns 1. */
static int compare(const char *name, const char *what, const uint8_t *a, const uint8_t *b) {
  size_t set_diff = 0, bucket_diff = 0, shown = 0;
  for (size_t i = 0; i < array_size(); i++) {
    if (a[i] == b[i]) continue;
    if ((a[i] == 0) != (b[i] == 0)) {
      set_diff++;
    } else {
      bucket_diff++;
    }
  }
  if (set_diff == 0 && bucket_diff == 0) return 0;
  fprintf(stderr,
          "FAIL %s: %s: %zu edges hit in one run and not the other, %zu in another hit-count "
          "bucket (fresh process vs this run: bucket a -> b)\n",
          name, what, set_diff, bucket_diff);
  for (size_t i = 0; i < array_size() && shown < 12; i++) {
    if (a[i] == b[i]) continue;
    fprintf(stderr, "    %u -> %u\n", a[i], b[i]);
    print_edge(i);
    shown++;
  }
  return 1;
}

/* ---- The runs ---------------------------------------------------------------------------- */

typedef struct seed {
  const char *path;
  fuzz_buf bytes;
  uint8_t *fresh, *first, *again;
} seed;

static const char *self_path = "/proc/self/exe";

/* Runs `self ARGS...` with its stdout into out (at most `size` bytes); 1 when it exited 0 having
 * written exactly size bytes (size 0: whatever it wrote, passed through to our stdout). */
static int run_self(char *const *args, uint8_t *out, size_t size) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    /* Only exec after a fork: the schedule target's worker threads are not in the child. */
    close(fds[0]);
    if (out != NULL) dup2(fds[1], 1);
    execv(self_path, args);
    _exit(127);
  }
  close(fds[1]);
  size_t done = 0;
  for (ssize_t r; out != NULL && done < size; done += (size_t)r) {
    r = read(fds[0], out + done, size - done);
    if (r <= 0) break;
  }
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  return (out == NULL || done == size) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static const fuzz_opset *opset_named(const char *name) {
  if (strcmp(name, "graph") == 0) return &fuzz_opset_graph;
  if (strcmp(name, "roots") == 0) return &fuzz_opset_roots;
  if (strcmp(name, "schedule") == 0) return &fuzz_opset_schedule;
  return NULL;
}

/* A .txt file is a program's text; any other file its bytes (a fuzzer's corpus, to find what
 * makes the inputs of a campaign unstable: stability_test --target graph DIR/queue/...). */
static int assemble(const fuzz_opset *set, const char *path, fuzz_buf *out) {
  size_t len = strlen(path);
  if (len < 4 || strcmp(path + len - 4, ".txt") != 0) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
      perror(path);
      return 0;
    }
    uint8_t buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) {
      if (!fuzz_buf_append(out, buf, n)) break;
    }
    fclose(f);
    return 1;
  }
  fuzz_text_error err;
  if (fuzz_assemble_file(set, path, out, &err)) return 1;
  fprintf(stderr, "%s:%zu:%zu: %s\n", path, err.line, err.column, err.message);
  return 0;
}

/* `--fresh T FILE`: one run of FILE in this new process, its buckets written to stdout. */
static int fresh_one(const char *target, const char *path) {
  const fuzz_opset *set = opset_named(target);
  if (set == NULL) return 2;
  /* First, as in check_target: the pools are mapped at the same addresses in both. */
  fuzz_target_init(set);
  fuzz_buf in = {0};
  if (!assemble(set, path, &in)) return 2;
  uint8_t *out = malloc(array_size());
  run_once(set, &in, out);
  size_t n = fwrite(out, 1, array_size(), stdout);
  fflush(stdout);
  free(out);
  fuzz_buf_free(&in);
  return n == array_size() ? 0 : 3;
}

/* One target's seeds (files[0..n)): each fresh, then all in order, then all in reverse. */
static int check_target(const char *target, char **files, size_t n) {
  const fuzz_opset *set = opset_named(target);
  if (set == NULL) {
    fprintf(stderr, "stability_test: unknown target %s\n", target);
    return 2;
  }
  /* As the targets' LLVMFuzzerInitialize does, before anything is measured. */
  fuzz_target_init(set);
  size_t size = array_size();
  seed *seeds = calloc(n, sizeof *seeds);
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    seeds[i].path = files[i];
    if (!assemble(set, files[i], &seeds[i].bytes)) return 2;
    seeds[i].fresh = calloc(1, size);
    seeds[i].first = calloc(1, size);
    seeds[i].again = calloc(1, size);
    char *args[] = {(char *)self_path, "--fresh", (char *)target, files[i], NULL};
    if (!run_self(args, seeds[i].fresh, size)) {
      fprintf(stderr, "FAIL %s: its fresh process did not run to the end\n", files[i]);
      return 1;
    }
  }
  for (size_t i = 0; i < n; i++) run_once(set, &seeds[i].bytes, seeds[i].first);
  for (size_t i = n; i-- > 0;) run_once(set, &seeds[i].bytes, seeds[i].again);
  for (size_t i = 0; i < n; i++) {
    failed += compare(seeds[i].path, "after every seed before it", seeds[i].fresh, seeds[i].first);
    failed +=
        compare(seeds[i].path, "run again after all the others", seeds[i].fresh, seeds[i].again);
    fuzz_buf_free(&seeds[i].bytes);
    free(seeds[i].fresh);
    free(seeds[i].first);
    free(seeds[i].again);
  }
  free(seeds);
  printf("stability_test: %s: %zu seeds, %zu edges (%s), %d unstable runs\n", target, n, edge_count,
         pcs != NULL ? "inline 8-bit counters" : "trace-pc-guard", failed);
  return failed ? 1 : 0;
}

/* `--target T SEED... [--target T SEED...]`: each target checked in a process of its own (the
 * targets keep different memory between programs: a process runs one target, as a fuzzer does). */
int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--fresh") == 0) return fresh_one(argv[2], argv[3]);
  if (argc >= 3 && strcmp(argv[1], "--only") == 0) {
    return check_target(argv[2], argv + 3, (size_t)(argc - 3));
  }
  if (counters == NULL || edge_count == 0) {
    printf(
        "stability_test: this build has no coverage counters (build it with --config=fuzz or "
        "--config=afl): nothing to compare\n");
    return 0;
  }
  /* The collector hashes pool addresses (its pool set), so a fresh process must map its pools
   * where this one does: every process of the test runs without address randomization (a fuzzer
   * forks its runs from one process, which has the same effect). */
  if (personality(0xffffffff) != -1 && !(personality(0xffffffff) & ADDR_NO_RANDOMIZE) &&
      getenv("STABILITY_TEST_ASLR") == NULL) {
    if (personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) != -1) {
      execv(self_path, argv);
    }
    fprintf(stderr, "stability_test: warning: cannot turn address randomization off\n");
  }
  int status = 0;
  for (int i = 1; i < argc;) {
    if (strcmp(argv[i], "--target") != 0 || i + 1 >= argc) {
      fprintf(stderr, "usage: stability_test --target T SEED... [--target T SEED...]\n");
      return 2;
    }
    int end = i + 2;
    while (end < argc && strcmp(argv[end], "--target") != 0) end++;
    char **args = calloc((size_t)(end - i) + 3, sizeof *args);
    args[0] = (char *)self_path;
    args[1] = "--only";
    for (int k = i + 1; k < end; k++) args[2 + k - (i + 1)] = argv[k];
    if (!run_self(args, NULL, 0)) status = 1;
    free(args);
    i = end;
  }
  return status;
}
