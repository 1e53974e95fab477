/* The benchmarks' entry points and the small utilities they share.
 *
 * Each benchmark is written once, against the backend interface in bench/backend.h, and compiled
 * once per backend (gcfuzz, bdwgc, malloc, and their two-thread builds gcfuzz-2, bdwgc-2,
 * malloc-2). A run function builds its heap, runs, checks its own results, prints the
 * benchmark's usual lines on `out`, tears the heap down, and returns 0 when every check matched
 * (1 otherwise). bench/main.c wraps one of them into a program; bench/smoke_test.c calls both
 * in-process.
 *
 * `threads` is 1 (the classic, single-threaded benchmark: no thread is started) or 2 (the
 * repeated part of the benchmark is split between the main thread and one thread started with
 * bk_thread_start; see each file). More than 1 needs a backend built with BENCH_THREADS > 1.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdio.h>

/* The most threads a program runs: set by the build (bench/BUILD) for the two-thread programs.
 * Above 1, the backend is built thread-safe (backend.h). */
#ifndef BENCH_THREADS
#define BENCH_THREADS 1
#endif

/* binary-trees (Benchmarks Game): a stretch tree of depth n+1, a long-lived tree of depth n, and
 * 2^(n-d+4) trees of depth d for d = 4, 6, ..., n. Node-count checks. With 2 threads, the trees
 * of each depth are split between the threads (the long-lived tree is the main thread's). */
int binary_trees_run(int n, int threads, FILE *out);
#define BINARY_TREES_DEFAULT 20

/* GCBench (Boehm): `stretch` is the stretch-tree depth (published: 18); the long-lived tree and
 * the deepest temporary trees are stretch-2 deep. Must be at least GCBENCH_MIN. With 2 threads,
 * each thread builds half of each depth's trees, top-down then bottom-up. */
int gcbench_run(int stretch, int threads, FILE *out);
#define GCBENCH_DEFAULT 18
#define GCBENCH_MIN     6

/* weak-memo: a weak-keyed memo table of 2^n buckets under churn (a window of 2^n live keys,
 * 16 * 2^n keys created, 8 lookups after each, periodic sweeps of the dead entries); n at most
 * 22. One thread only: threads > 1 is a usage error (exit 2). */
int weak_memo_run(int n, int threads, FILE *out);
#define WEAK_MEMO_DEFAULT 15

/* Monotonic seconds, from an arbitrary origin. */
double bench_now(void);
/* The process's peak resident memory in MiB: VmHWM (/proc/self/status), which exec resets;
 * ru_maxrss where /proc is missing. */
double bench_peak_mib(void);
/* Print "<what>: <message>" on stderr and exit(2). For failures that make a run meaningless. */
void bench_die(const char *what, const char *fmt, ...)
    __attribute__((noreturn, cold, format(printf, 2, 3)));

#endif /* BENCH_BENCH_H */
