/* The cost of the verification passes against one full mark (the target: each pass at most 3x
 * a mark of the same heap, and its ratio to mark at 10^6 live blocks within 1.5x of its ratio at
 * 10^4).
 *
 * For each size, a heap of that many live small blocks: a random tree of scanned nodes (2 to 5
 * fields, the last an immediate) and leaves (raw, 1 to 6 words, or scanned with immediates only),
 * half of the blocks hung under the most recent open field
 * (depth-first, neighbours in memory) and half under a random one (scattered), so neither the
 * marker nor the passes get only sequential access. Collection is off while building; one full
 * collection then leaves the heap swept, every block UNMARKED. Then, `runs` times:
 *
 *   mark       gc_mark_heap (every block becomes MARKED)
 *   checkmark  the pass, at that point (what GC_HOOK_MARK_DONE sees)
 *              (gc_mark_undo_full then makes every block UNMARKED again, nothing is lost)
 *   reach      the pass, on the UNMARKED heap (what GC_HOOK_CYCLED sees)
 *   swept      the pass, on the swept heap (what GC_HOOK_SWEPT sees)
 *   satb       the pass at its two points around the mark: GC_HOOK_MARK_START (the snapshot of
 *              what the roots reach, on the unmarked heap) and GC_HOOK_MARK_DONE (every recorded
 *              block MARKED); the two times added (its slice-end check has nothing to do here)
 *
 * Passes run through a verifier (gc_verify_run_point), as they do after every cycle: with its
 * scratch memory kept from one run to the next. The median of the runs is reported, one line per
 * (size, backend), for ci/bench to collect:
 *
 *   ROW {"bench": "verify", "size": "1000000", "backend": "reach", "wall_s": 0.0123, "peak_mib": null}
 *
 * and a table of ratios on stderr. Usage: verify_cost [runs] [size...] (default 5 10000 100000
 * 1000000). Build with -c opt: `bazel run -c opt //bench:verify_cost`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "gc/gc.h"
#include "gc/mark.h"
#include "invariants/verify.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* `blocks` live blocks under the global root *root. No collection runs while building
 * (percent=off), so the nodes need no other rooting. */
static void build(gc_heap *h, size_t blocks, gc_value *root) {
  gc_domain *d = gc_main_domain(h);
  /* Fields waiting for a child: (block, field). A child is stored into a block allocated
   * before it, so through the write barrier (gc_store), as every embedder must. */
  struct field {
    gc_value block;
    size_t i;
  } *open = malloc(blocks * 5 * sizeof *open);
  if (open == NULL) bench_die("verify_cost", "out of memory");
  size_t open_count = 0;
  *root = gc_alloc(d, 4, GC_TAG_SCAN);
  for (size_t k = 0; k < 4; k++) open[open_count++] = (struct field){*root, k};
  for (size_t i = 1; i < blocks; i++) {
    /* A leaf (no child fields) now and then, and always once the open fields outnumber the
     * blocks still to come; never the last open field's taker while blocks remain. */
    int leaf = (rng() % 4 == 0 && open_count > 1) || open_count > blocks - i;
    gc_value v = !leaf       ? gc_alloc(d, 2 + rng() % 4, GC_TAG_SCAN)
                 : rng() % 2 ? gc_alloc(d, 1 + rng() % 6, GC_TAG_RAW)
                             : gc_alloc(d, 1 + rng() % 3, GC_TAG_SCAN);
    if (v == 0) bench_die("verify_cost", "gc_alloc failed: %s", gc_last_error_message(h));
    if (open_count == 0) bench_die("verify_cost", "no open field left");
    size_t at = rng() % 2 ? open_count - 1 : (size_t)(rng() % open_count);
    gc_store(d, open[at].block, open[at].i, v);
    open[at] = open[--open_count];
    if (gc_tag(v) == GC_TAG_SCAN) {
      size_t wsize = gc_wsize(v);
      /* An immediate, not a child; an initialising store (v is the newest block). */
      GC_FIELD(v, wsize - 1) = gc_val_int((intptr_t)i);
      for (size_t k = 0; !leaf && k + 1 < wsize; k++) open[open_count++] = (struct field){v, k};
    }
  }
  free(open);
}

enum { MARK, CHECKMARK, REACH, SWEPT, SATB, BACKENDS };
static const char *const backend_names[BACKENDS] = {"mark", "checkmark", "reach", "swept", "satb"};

static void measure(size_t blocks, int runs, double out[BACKENDS]) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.gc_percent = GC_PERCENT_OFF;
  cfg.verify = 0; /* the hook stays idle: the passes are called below */
  gc_heap *h = gc_heap_create(&cfg);
  if (h == NULL) bench_die("verify_cost", "gc_heap_create failed");
  static gc_value root;
  gc_root_register(h, &root);
  build(h, blocks, &root);
  gc_collect(gc_main_domain(h), GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  if (s.pool_live_blocks + s.large_blocks != blocks) {
    bench_die("verify_cost", "%zu blocks built, %zu live", blocks,
              (size_t)(s.pool_live_blocks + s.large_blocks));
  }
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_COLLECT);
  double *t[BACKENDS];
  for (int b = 0; b < BACKENDS; b++) t[b] = calloc((size_t)runs, sizeof(double));
  for (int r = -1; r < runs; r++) { /* run -1 warms up caches and the verifier's scratch */
    double s0 = bench_now();
    gc_verify_run_point(v, GC_VERIFY_SATB, GC_HOOK_MARK_START); /* the snapshot */
    double t0 = bench_now();
    gc_mark_heap(h);
    double t1 = bench_now();
    gc_verify_run_point(v, GC_VERIFY_SATB, GC_HOOK_MARK_DONE); /* every recorded block MARKED */
    double s1 = bench_now();
    gc_verify_run_point(v, GC_VERIFY_CHECKMARK, GC_HOOK_MARK_DONE);
    double t2 = bench_now();
    /* Everything is MARKED: all UNMARKED again, as after the cycle's colour rotation. */
    if (!gc_mark_undo_full(h)) bench_die("verify_cost", "the mark left blocks unmarked");
    double t3 = bench_now();
    gc_verify_run_point(v, GC_VERIFY_REACH, GC_HOOK_CYCLED);
    double t4 = bench_now();
    gc_verify_run_point(v, GC_VERIFY_SWEPT, GC_HOOK_SWEPT);
    double t5 = bench_now();
    if (gc_verify_violations(v) != 0) {
      gc_verify_reports_print(gc_verify_reports_of(v), stderr);
      bench_die("verify_cost", "the passes reported violations on a correct heap");
    }
    if (r < 0) continue;
    t[MARK][r] = t1 - t0;
    t[CHECKMARK][r] = t2 - s1;
    t[SATB][r] = (t0 - s0) + (s1 - t1);
    t[REACH][r] = t4 - t3;
    t[SWEPT][r] = t5 - t4;
  }
  for (int b = 0; b < BACKENDS; b++) {
    out[b] = bench_median(t[b], runs);
    free(t[b]);
  }
  gc_verify_uninstall(v);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  if (runs < 1) bench_die("verify_cost", "usage: verify_cost [runs] [size...]");
  size_t default_sizes[] = {10000, 100000, 1000000};
  size_t nsizes = argc > 2 ? (size_t)(argc - 2) : 3;
  size_t *sizes = argc > 2 ? calloc(nsizes, sizeof *sizes) : default_sizes;
  for (size_t i = 0; argc > 2 && i < nsizes; i++) sizes[i] = strtoull(argv[i + 2], NULL, 10);
  double(*res)[BACKENDS] = calloc(nsizes, sizeof *res);
  for (size_t i = 0; i < nsizes; i++) {
    if (sizes[i] < 2) bench_die("verify_cost", "a size is at least 2 blocks");
    measure(sizes[i], runs, res[i]);
    for (int b = 0; b < BACKENDS; b++) {
      printf(
          "ROW {\"bench\": \"verify\", \"size\": \"%zu\", \"backend\": \"%s\", \"wall_s\": %.6f, "
          "\"peak_mib\": null}\n",
          sizes[i], backend_names[b], res[i][b]);
    }
    fflush(stdout);
  }
  fprintf(stderr, "%10s %10s %12s %12s %12s %12s\n", "blocks", "mark ms", "checkmark/x", "reach/x",
          "swept/x", "satb/x");
  for (size_t i = 0; i < nsizes; i++) {
    fprintf(stderr, "%10zu %10.3f %12.2f %12.2f %12.2f %12.2f\n", sizes[i], res[i][MARK] * 1e3,
            res[i][CHECKMARK] / res[i][MARK], res[i][REACH] / res[i][MARK],
            res[i][SWEPT] / res[i][MARK], res[i][SATB] / res[i][MARK]);
  }
  if (nsizes > 1) {
    fprintf(stderr, "growth (ratio at %zu / ratio at %zu):", sizes[nsizes - 1], sizes[0]);
    for (int b = CHECKMARK; b < BACKENDS; b++) {
      fprintf(stderr, " %s %.2f", backend_names[b],
              (res[nsizes - 1][b] / res[nsizes - 1][MARK]) / (res[0][b] / res[0][MARK]));
    }
    fputc('\n', stderr);
  }
  if (sizes != default_sizes) free(sizes);
  free(res);
  return 0;
}
