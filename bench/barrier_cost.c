/* The cost of the write barrier outside marking: gc_store against a plain store (GC_FIELD).
 *
 * For each size, a heap of that many live scanned blocks of FIELDS fields each (collection off:
 * nothing allocates while measuring, and no cycle runs, so gc_store takes its fast path: a load
 * of the domain's marking flag, a branch, the store). One pass is STORES pointer stores, each into
 * field s % FIELDS of a block picked by a walk with a large stride through the block table (every
 * block in turn, neighbours far apart in memory), the value another block picked by a second
 * walk: stores into fields of many heap blocks, as a mutator links nodes, not a single hot word.
 * The two loops are the same code but for the store, each in its own non-inlined function.
 *
 *   plain      GC_FIELD(block, i) = value
 *   gc_store   gc_store(d, block, i, value)
 *
 * Passes alternate (plain, gc_store, plain, ...) after one warm-up pass of each; the median of
 * `runs` is reported, one line per (size, backend), for ci/bench to collect:
 *
 *   ROW {"bench": "barrier", "size": "10000", "backend": "gc_store", "wall_s": 0.0812,
 *        "peak_mib": null, "ns_per_store": 1.62}
 *
 * (`size` the number of blocks, `wall_s` one pass), and a table with the ratio gc_store / plain
 * on stderr. At 10^3 blocks (40 KB of fields) the stores stay in the first caches and the
 * barrier's own instructions show most; at 10^4 (400 KB) in the second; at 10^6 (40 MB) nearly
 * every store misses the caches and the TLB.
 *
 * Usage: barrier_cost [runs] [stores] [size...] (default 7 20000000 1000 10000 1000000). Build with
 * -c opt: `bazel run -c opt //bench:barrier_cost`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "gc/gc.h"

enum { FIELDS = 4 };

enum { PLAIN, GC_STORE, BACKENDS };
static const char *const backend_names[BACKENDS] = {"plain", "gc_store"};

static size_t gcd(size_t a, size_t b) {
  while (b != 0) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* A stride near n * 0.618 that visits every index of 0..n-1 once per n steps. */
static size_t stride_of(size_t n) {
  size_t s = (size_t)((double)n * 0.6180339887) | 1;
  while (s > 1 && gcd(s, n) != 1) s += 2;
  return s % n;
}

/* The two loops: the same walk and the same loads, only the store differs. The returned index
 * keeps the walk live. */
__attribute__((noinline)) static size_t pass_plain(const gc_value *blocks, size_t n, size_t stride,
                                                   size_t stores) {
  size_t at = 0, from = n / 2;
  for (size_t s = 0; s < stores; s++) {
    GC_FIELD(blocks[at], s % FIELDS) = blocks[from];
    at += stride;
    if (at >= n) at -= n;
    from += stride + 1;
    if (from >= n) from -= n;
  }
  return at + from;
}

__attribute__((noinline)) static size_t pass_gc_store(gc_domain *d, const gc_value *blocks,
                                                      size_t n, size_t stride, size_t stores) {
  size_t at = 0, from = n / 2;
  for (size_t s = 0; s < stores; s++) {
    gc_store(d, blocks[at], s % FIELDS, blocks[from]);
    at += stride;
    if (at >= n) at -= n;
    from += stride + 1;
    if (from >= n) from -= n;
  }
  return at + from;
}

static volatile size_t sink;

static void measure(size_t n, size_t stores, int runs, double out[BACKENDS]) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.gc_percent = GC_PERCENT_OFF; /* no cycle: gc_store's fast path throughout */
  gc_heap *h = gc_heap_create(&cfg);
  if (h == NULL) bench_die("barrier_cost", "gc_heap_create failed");
  gc_domain *d = gc_main_domain(h);
  /* Every block hangs from a rooted spine (a large scanned block), as a heap's live data. */
  static gc_value spine;
  gc_root_register(h, &spine);
  spine = gc_alloc(d, n, GC_TAG_SCAN);
  gc_value *blocks = malloc(n * sizeof *blocks);
  if (spine == 0 || blocks == NULL) bench_die("barrier_cost", "out of memory");
  for (size_t i = 0; i < n; i++) {
    blocks[i] = gc_alloc(d, FIELDS, GC_TAG_SCAN);
    if (blocks[i] == 0) bench_die("barrier_cost", "gc_alloc failed: %s", gc_last_error_message(h));
    gc_store(d, spine, i, blocks[i]);
  }
  size_t stride = stride_of(n);
  double *t[BACKENDS];
  for (int b = 0; b < BACKENDS; b++) t[b] = calloc((size_t)runs, sizeof(double));
  for (int r = -1; r < runs; r++) { /* run -1 warms up the caches and the pages */
    double t0 = bench_now();
    sink += pass_plain(blocks, n, stride, stores);
    double t1 = bench_now();
    sink += pass_gc_store(d, blocks, n, stride, stores);
    double t2 = bench_now();
    if (r < 0) continue;
    t[PLAIN][r] = t1 - t0;
    t[GC_STORE][r] = t2 - t1;
  }
  gc_stats s;
  gc_get_stats(h, &s);
  if (s.cycles != 0) bench_die("barrier_cost", "a cycle ran while measuring");
  for (int b = 0; b < BACKENDS; b++) {
    out[b] = bench_median(t[b], runs);
    free(t[b]);
  }
  free(blocks);
  spine = 0;
  gc_root_unregister(h, &spine);
  gc_heap_destroy(h);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 7;
  size_t stores = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000;
  if (runs < 1 || stores < 1)
    bench_die("barrier_cost", "usage: barrier_cost [runs] [stores] [size...]");
  size_t default_sizes[] = {1000, 10000, 1000000};
  size_t nsizes = argc > 3 ? (size_t)(argc - 3) : 3;
  size_t *sizes = argc > 3 ? calloc(nsizes, sizeof *sizes) : default_sizes;
  for (size_t i = 0; argc > 3 && i < nsizes; i++) sizes[i] = strtoull(argv[i + 3], NULL, 10);
  double(*res)[BACKENDS] = calloc(nsizes, sizeof *res);
  for (size_t i = 0; i < nsizes; i++) {
    if (sizes[i] < 2) bench_die("barrier_cost", "a size is at least 2 blocks");
    measure(sizes[i], stores, runs, res[i]);
    for (int b = 0; b < BACKENDS; b++) {
      printf(
          "ROW {\"bench\": \"barrier\", \"size\": \"%zu\", \"backend\": \"%s\", \"wall_s\": %.6f, "
          "\"peak_mib\": null, \"ns_per_store\": %.3f}\n",
          sizes[i], backend_names[b], res[i][b], res[i][b] * 1e9 / (double)stores);
    }
    fflush(stdout);
  }
  fprintf(stderr, "%10s %12s %12s %16s\n", "blocks", "plain ns", "gc_store ns", "gc_store/plain");
  for (size_t i = 0; i < nsizes; i++) {
    fprintf(stderr, "%10zu %12.3f %12.3f %15.2fx\n", sizes[i], res[i][PLAIN] * 1e9 / (double)stores,
            res[i][GC_STORE] * 1e9 / (double)stores, res[i][GC_STORE] / res[i][PLAIN]);
  }
  fprintf(stderr, "(%zu stores a pass, median of %d passes each, alternated)\n", stores, runs);
  if (sizes != default_sizes) free(sizes);
  free(res);
  return 0;
}
