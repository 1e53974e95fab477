/* The benchmarks' entry points and the small utilities they share.
 *
 * Each benchmark is written once, against the backend interface in bench/backend.h, and compiled
 * once per backend (gcfuzz, bdwgc, malloc, and their two-thread builds gcfuzz-2, bdwgc-2,
 * malloc-2). A run function builds its heap, runs, checks its own results, prints the
 * benchmark's usual lines on `out`, tears the heap down, and returns 0 when every check matched
 * (1 otherwise). bench/main.c wraps one of them into a program; bench/smoke_test.c calls each
 * in-process.
 *
 * `threads` is 1 (the classic, single-threaded benchmark: no thread is started) or 2 (the
 * repeated part of the benchmark is split between the main thread and one thread started with
 * bk_thread_start; see each file). More than 1 needs a backend built with BENCH_THREADS > 1.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdint.h>
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

/* cache: a steady cache under churn (cache_churn.c). A table of 2^n slots (n the argument,
 * default 19: about 70 MiB live on gcfuzz), every slot an entry (a scanned block, a chain of 1-3
 * small blocks, a raw payload); then 8 requests a slot, each a random key: a hit updates the
 * entry in place, a miss builds a new entry and evicts the one in the key's slot; every request
 * also builds and drops a short list. The table's checksum is checked and printed. With 2
 * threads, each thread serves its own half of the table (the main thread allocates the halves);
 * the checksum is the same as on one thread. */
int cache_churn_run(int n, int threads, FILE *out);
#define CACHE_CHURN_DEFAULT 19
#define CACHE_CHURN_MIN     4

/* tree-churn: a long-lived tree that changes (tree_churn.c). A balanced tree of depth n (default
 * 20: about 64 MiB live on gcfuzz); then 2^(n-1) steps, each replacing a random subtree of depth
 * 6 with a new one, stored into an old node, and updating the values on the path to it in place.
 * Node count and checksum checked and printed. With 2 threads, the tree is the main thread's
 * (it builds it) and the steps are split: thread k changes only the half under the root's child
 * k; the checksum is the same as on one thread. */
int tree_churn_run(int n, int threads, FILE *out);
#define TREE_CHURN_DEFAULT 20
#define TREE_CHURN_MIN     8

/* splitmix64 (Steele, Lea, Flood): the benchmarks' fixed-seed random numbers, the same on every
 * backend. `state` is the stream; each call advances it. */
static inline uint64_t bench_splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}
/* splitmix64's output function alone: a well-mixed hash of one word. */
static inline uint64_t bench_mix64(uint64_t x) {
  uint64_t state = x;
  return bench_splitmix64(&state);
}

/* The collections the last heap ran, as bk_fini found them (gcfuzz: its completed major cycles,
 * gc_stats.cycles; bdwgc: GC_get_gc_no(); malloc: 0): bench/main.c prints it as `gcs=`. A
 * program-wide record because main.c has no heap of its own (each backend's heap is static to
 * the file that includes it). */
void bench_record_collections(unsigned long collections);
unsigned long bench_recorded_collections(void);
/* The compactions the last heap ran (gcfuzz: gc_stats.compactions, with compact=N; the others:
 * 0), as bk_fini found them: the smoke test checks that fragment compacted. */
void bench_record_compactions(unsigned long compactions);
unsigned long bench_recorded_compactions(void);
/* weak-memo: a weak-keyed memo table of 2^n buckets under churn (a window of 2^n live keys,
 * 16 * 2^n keys created, 8 lookups after each, periodic sweeps of the dead entries); n at most
 * 22. One thread only: threads > 1 is a usage error (exit 2). */
int weak_memo_run(int n, int threads, FILE *out);
#define WEAK_MEMO_DEFAULT 15
/* fragment: a long-lived set of 2^n blocks of six size classes (2 to 64 words), then rounds in
 * which half its members die at random and fewer, differently sized ones replace them, each
 * round ended by an explicit full collection (bk_collect_full), so every class's pools are left
 * sparse (fragment.c). n from 8 to 24. One thread only: threads > 1 is a usage error (exit 2). */
int fragment_run(int n, int threads, FILE *out);
#define FRAGMENT_DEFAULT 20

/* The heap's size at the end of a run, as a benchmark that measures it records it (fragment):
 * `mapped` the bytes the backend holds from the OS for blocks, `live` the bytes its own books
 * call live, `data` the bytes of the blocks the program holds (the same on every backend); a
 * negative figure is unknown. bench/main.c prints the known ones on its BENCH line
 * (final_mapped_mib=, live_mib=, data_mib=). */
void bench_record_heap(double mapped_bytes, double live_bytes, double data_bytes);
/* 1 and the three figures when a run recorded them, else 0. */
int bench_recorded_heap(double *mapped_bytes, double *live_bytes, double *data_bytes);

/* The median of t[0..n) (n >= 1), which it sorts: t[0] is then the smallest. */
double bench_median(double *t, int n);
/* Monotonic seconds, from an arbitrary origin. */
double bench_now(void);
/* The process's peak resident memory in MiB: VmHWM (/proc/self/status), which exec resets;
 * ru_maxrss where /proc is missing. */
double bench_peak_mib(void);
/* Print "<what>: <message>" on stderr and exit(2). For failures that make a run meaningless. */
void bench_die(const char *what, const char *fmt, ...)
    __attribute__((noreturn, cold, format(printf, 2, 3)));

#endif /* BENCH_BENCH_H */
