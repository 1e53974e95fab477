/* Stops against the live heap: the longest first and last stop of a cycle at 16, 64 and 256 MiB
 * live, in each marking mode.
 *
 * For each size, a heap (gc_config_default plus GCFUZZ_PARAMS, then the mode) is given that many
 * MiB of live blocks, as binary trees of depth TREE_DEPTH (two-field nodes, 24 bytes each, built
 * bottom-up) held by one root block, and then churns: it allocates trees of depth CHURN_DEPTH
 * and drops each at once, until CHURN_CYCLES more cycles have ended. What a stop does in
 * proportion to the heap (its pools, its blocks) shows as a stop that grows with the size; what
 * it does per domain or per root does not. The figures are gc_stats' maxima over the whole run
 * (the build's cycles, at smaller heaps, included), so each is an upper bound at that size:
 *
 *   start   max_start_pause_ns: incremental, the stop that darkens the roots; stw, the cycle
 *   end     max_end_pause_ns: incremental only, the stop that ends the mark
 *
 * One line per (size, mode, stop) for ci/bench to collect:
 *
 *   ROW {"bench": "stops", "size": "256", "backend": "incremental-end", "wall_s": 0.000012,
 *        "peak_mib": null, "pause_max_ms": 0.012, "cycles": 9}
 *
 * (`size` the live MiB, `wall_s` the stop in seconds), and a table on stderr.
 *
 * Usage: stop_scaling [MiB...] (default 16 64 256). Build with -c opt:
 * `bazel run -c opt //bench:stop_scaling`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "gc/gc.h"

enum {
  TREE_DEPTH = 14,  /* 32767 nodes, 768 KiB */
  CHURN_DEPTH = 10, /* 2047 nodes, 48 KiB */
  CHURN_CYCLES = 8,
  NODE_WSIZE = 2,
};

static size_t tree_nodes(int depth) { return ((size_t)1 << (depth + 1)) - 1; }

/* A tree of `depth` below the node, built bottom-up: both children exist before their parent,
 * so every store is an initialising one (the parent is the newest block). Its children are held
 * in a frame while the parent is allocated. */
static gc_value build(gc_domain *d, int depth) {
  if (depth == 0) return gc_alloc(d, NODE_WSIZE, 0);
  gc_value kids[2] = {0, 0};
  gc_frame frame;
  gc_frame_push(d, &frame, kids, 2);
  kids[0] = build(d, depth - 1);
  kids[1] = build(d, depth - 1);
  gc_value node = gc_alloc(d, NODE_WSIZE, 0);
  if (node == 0) bench_die("stop_scaling", "out of memory");
  GC_FIELD(node, 0) = kids[0];
  GC_FIELD(node, 1) = kids[1];
  gc_frame_pop(d, &frame);
  return node;
}

typedef struct stops {
  uint64_t start_ns, end_ns, cycles;
} stops;

static stops measure(size_t live_mib, const char *mode) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  const char *env = getenv("GCFUZZ_PARAMS");
  if (env != NULL && *env != '\0' && gc_config_parse(&cfg, env, err, sizeof err) != GC_OK) {
    bench_die("stop_scaling", "GCFUZZ_PARAMS: %s", err);
  }
  char marking[32];
  snprintf(marking, sizeof marking, "marking=%s", mode);
  if (gc_config_parse(&cfg, marking, err, sizeof err) != GC_OK)
    bench_die("stop_scaling", "%s", err);
  gc_heap *heap = gc_heap_create(&cfg);
  if (heap == NULL) bench_die("stop_scaling", "no heap");
  gc_domain *d = gc_main_domain(heap);

  size_t trees = live_mib * 1024 * 1024 / (tree_nodes(TREE_DEPTH) * (NODE_WSIZE + 1) * 8);
  if (trees == 0) trees = 1;
  gc_value holder = 0;
  gc_root_register(heap, &holder);
  holder = gc_alloc(d, trees, 0);
  if (holder == 0) bench_die("stop_scaling", "out of memory");
  for (size_t i = 0; i < trees; i++) gc_store(d, holder, i, build(d, TREE_DEPTH));

  gc_stats s;
  gc_get_stats(heap, &s);
  uint64_t until = s.cycles + CHURN_CYCLES;
  while (s.cycles < until) {
    for (int k = 0; k < 64; k++) (void)build(d, CHURN_DEPTH);
    gc_get_stats(heap, &s);
  }
  stops out = {s.max_start_pause_ns, s.max_end_pause_ns, s.cycles};
  gc_root_unregister(heap, &holder);
  gc_heap_destroy(heap);
  return out;
}

static void row(size_t mib, const char *backend, uint64_t ns, uint64_t cycles) {
  printf(
      "ROW {\"bench\": \"stops\", \"size\": \"%zu\", \"backend\": \"%s\", \"wall_s\": %.9f, "
      "\"peak_mib\": null, \"pause_max_ms\": %.6f, \"cycles\": %llu}\n",
      mib, backend, (double)ns / 1e9, (double)ns / 1e6, (unsigned long long)cycles);
  fflush(stdout);
}

int main(int argc, char **argv) {
  size_t sizes[16] = {16, 64, 256};
  size_t n = 3;
  if (argc > 1) {
    n = 0;
    for (int i = 1; i < argc && n < 16; i++) sizes[n++] = (size_t)strtoul(argv[i], NULL, 10);
  }
  fprintf(stderr, "%10s %16s %16s %16s\n", "live MiB", "incr. start ms", "incr. end ms",
          "stw stop ms");
  for (size_t i = 0; i < n; i++) {
    stops inc = measure(sizes[i], "incremental");
    stops stw = measure(sizes[i], "stw");
    row(sizes[i], "incremental-start", inc.start_ns, inc.cycles);
    row(sizes[i], "incremental-end", inc.end_ns, inc.cycles);
    row(sizes[i], "stw", stw.start_ns, stw.cycles);
    fprintf(stderr, "%10zu %16.3f %16.3f %16.3f\n", sizes[i], (double)inc.start_ns / 1e6,
            (double)inc.end_ns / 1e6, (double)stw.start_ns / 1e6);
  }
  return 0;
}
