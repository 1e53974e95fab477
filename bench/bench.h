/* The benchmarks' entry points and the small utilities they share.
 *
 * Each benchmark is written once, against the backend interface in bench/backend.h, and compiled
 * once per backend (gcfuzz, bdwgc, malloc). A run function builds its heap, runs, checks its own
 * results, prints the benchmark's usual lines on `out`, tears the heap down, and returns 0 when
 * every check matched (1 otherwise). bench/main.c wraps one of them into a program;
 * bench/smoke_test.c calls both in-process.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdio.h>

/* binary-trees (Benchmarks Game): a stretch tree of depth n+1, a long-lived tree of depth n, and
 * 2^(n-d+4) trees of depth d for d = 4, 6, ..., n. Node-count checks. */
int binary_trees_run(int n, FILE *out);
#define BINARY_TREES_DEFAULT 20

/* GCBench (Boehm): `stretch` is the stretch-tree depth (published: 18); the long-lived tree and
 * the deepest temporary trees are stretch-2 deep. Must be at least GCBENCH_MIN. */
int gcbench_run(int stretch, FILE *out);
#define GCBENCH_DEFAULT 18
#define GCBENCH_MIN 6

/* Monotonic seconds, from an arbitrary origin. */
double bench_now(void);
/* Print "<what>: <message>" on stderr and exit(2). For failures that make a run meaningless. */
void bench_die(const char *what, const char *fmt, ...)
    __attribute__((noreturn, cold, format(printf, 2, 3)));

#endif /* BENCH_BENCH_H */
