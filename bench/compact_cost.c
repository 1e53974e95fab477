/* The cost of a compaction against one full mark of the same heap (the target: compacting a
 * heap of 10^6 live blocks at most 3x a full mark).
 *
 * For each size N, a heap of N live small blocks: verify_cost.c's random tree (scanned nodes of
 * 2 to 5 fields, the last an immediate, and leaves, raw or scanned with immediates only; half hung
 * under the most recent open field, half under a random one), each of its blocks allocated right
 * after a garbage block of the same size that nothing refers to. Collection is off while
 * building; one full collection then frees the garbage: every pool is left about half full (every
 * other slot free), the heap swept, every block UNMARKED, nothing to sweep. Then:
 *
 *   mark       gc_mark_heap, timed, then gc_mark_undo_full (every block UNMARKED again): the
 *              median of MARKS marks (verify_cost's "one full mark")
 *   compact    one gc_compact: its stop of the world (gc_stats.last_pause_ns, the stop
 *              gc_compact records: finishing the sweeps, nothing here, then the compaction)
 *   mark-after one full mark of the compacted heap, the median of MARKS (the same blocks, now
 *              dense)
 *
 * A compaction is done once per heap (after it there is nothing left to move), so each of the
 * `runs` repetitions builds a new heap; the medians over the runs are reported, one line per
 * (size, backend), for ci/bench:
 *
 *   ROW {"bench": "compact", "size": "1000000", "backend": "compact", "wall_s": 0.0123,
 *        "peak_mib": null, "moved_blocks": 499000, "pools_released": 240}
 *
 * and on stderr one line per size,
 *
 *   compact blocks=N mark_ms=.. compact_ms=.. ratio=.. mark_after_ms=.. moved=.. released=..
 *
 * Checks: the tree's checksum (every block's fields, its shape) is the same after the
 * compaction as before, and the compaction moved blocks and gave pools back.
 * Usage: compact_cost [runs] [size...] (default 3 10000 100000 1000000). Build with -c opt:
 * `bazel run -c opt //bench:compact_cost`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "gc/gc.h"
#include "gc/mark.h"

enum { MARKS = 3 };

static uint64_t rng_state = 0x13198a2e03707344ull;
static uint64_t rng(void) { return bench_splitmix64(&rng_state); }

static gc_value alloc_or_die(gc_heap *h, size_t wsize, int tag) {
  gc_value v = gc_alloc(gc_main_domain(h), wsize, tag);
  if (v == 0) bench_die("compact_cost", "gc_alloc failed: %s", gc_last_error_message(h));
  return v;
}

/* `blocks` live blocks under the global root *root, each after a garbage block of its size. No
 * collection runs while building (percent=off), so nothing needs other rooting. */
static void build(gc_heap *h, size_t blocks, gc_value *root) {
  gc_domain *d = gc_main_domain(h);
  struct field {
    gc_value block;
    size_t i;
  } *open = malloc(blocks * 5 * sizeof *open);
  if (open == NULL) bench_die("compact_cost", "out of memory");
  size_t open_count = 0;
  (void)alloc_or_die(h, 4, GC_TAG_SCAN);
  *root = alloc_or_die(h, 4, GC_TAG_SCAN);
  for (size_t k = 0; k < 4; k++) open[open_count++] = (struct field){*root, k};
  for (size_t i = 1; i < blocks; i++) {
    int leaf = (rng() % 4 == 0 && open_count > 1) || open_count > blocks - i;
    size_t wsize;
    int tag;
    if (!leaf) {
      wsize = 2 + rng() % 4, tag = GC_TAG_SCAN;
    } else if (rng() % 2) {
      wsize = 1 + rng() % 6, tag = GC_TAG_RAW;
    } else {
      wsize = 1 + rng() % 3, tag = GC_TAG_SCAN;
    }
    (void)alloc_or_die(h, wsize, tag); /* garbage: every other slot of the pools */
    gc_value v = alloc_or_die(h, wsize, tag);
    if (open_count == 0) bench_die("compact_cost", "no open field left");
    size_t at = rng() % 2 ? open_count - 1 : (size_t)(rng() % open_count);
    gc_store(d, open[at].block, open[at].i, v);
    open[at] = open[--open_count];
    if (tag == GC_TAG_SCAN) {
      GC_FIELD(v, wsize - 1) = gc_val_int((intptr_t)i);
      for (size_t k = 0; !leaf && k + 1 < wsize; k++) open[open_count++] = (struct field){v, k};
    } else {
      memset((void *)v, (int)(i & 0xff), wsize * sizeof(gc_value));
    }
  }
  free(open);
}

/* A hash of the tree under v: its shape, every immediate and raw word (not addresses, which
 * the compaction changes). Iterative: the tree may be deep. */
static uint64_t tree_hash(gc_value v, size_t blocks) {
  gc_value *stack = malloc((blocks + 1) * sizeof *stack);
  if (stack == NULL) bench_die("compact_cost", "out of memory");
  size_t n = 0, seen = 0;
  uint64_t hash = 0;
  stack[n++] = v;
  while (n > 0) {
    gc_value b = stack[--n];
    seen++;
    size_t wsize = gc_wsize(b);
    hash = bench_mix64(hash ^ (wsize << 8 | (uint64_t)gc_tag(b)));
    for (size_t k = 0; k < wsize; k++) {
      gc_value f = GC_FIELD(b, k);
      if (gc_tag(b) == GC_TAG_SCAN && gc_is_block(f)) {
        if (n == blocks) bench_die("compact_cost", "the tree has more than %zu blocks", blocks);
        stack[n++] = f;
      } else if (f != 0) {
        hash = bench_mix64(hash ^ (uint64_t)f ^ k);
      }
    }
  }
  free(stack);
  if (seen != blocks) bench_die("compact_cost", "the tree has %zu blocks, not %zu", seen, blocks);
  return hash;
}

/* The median of MARKS full marks of h's heap, each undone. */
static double time_mark(gc_heap *h) {
  double t[MARKS];
  for (int r = 0; r < MARKS; r++) {
    double t0 = bench_now();
    gc_mark_heap(h);
    t[r] = bench_now() - t0;
    if (!gc_mark_undo_full(h)) bench_die("compact_cost", "the mark left blocks unmarked");
  }
  return bench_median(t, MARKS);
}

typedef struct result {
  double mark, compact, compact_wall, mark_after;
  double moved, released;
} result;

static void measure_once(size_t blocks, result *out) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.gc_percent = GC_PERCENT_OFF;
  cfg.verify = 0;
  gc_heap *h = gc_heap_create(&cfg);
  if (h == NULL) bench_die("compact_cost", "gc_heap_create failed");
  static gc_value root;
  gc_root_register(h, &root);
  build(h, blocks, &root);
  gc_domain *d = gc_main_domain(h);
  gc_collect(d, GC_COLLECT_FULL); /* compact is off: the garbage freed, nothing moved */
  gc_stats s;
  gc_get_stats(h, &s);
  if (s.pool_live_blocks + s.large_blocks != blocks) {
    bench_die("compact_cost", "%zu blocks built, %zu live", blocks,
              (size_t)(s.pool_live_blocks + s.large_blocks));
  }
  uint64_t before = tree_hash(root, blocks);
  out->mark = time_mark(h);

  double t0 = bench_now();
  gc_error err = gc_compact(d);
  out->compact_wall = bench_now() - t0;
  if (err != GC_OK) bench_die("compact_cost", "gc_compact: %s", gc_error_name(err));
  gc_get_stats(h, &s);
  out->compact = (double)s.last_pause_ns * 1e-9;
  out->moved = (double)s.compact_moved_blocks;
  out->released = (double)s.compact_pools_released;
  if (s.compactions != 1 || s.compact_moved_blocks == 0 || s.compact_pools_released == 0)
    bench_die("compact_cost", "the compaction moved %llu blocks and released %llu pools",
              (unsigned long long)s.compact_moved_blocks,
              (unsigned long long)s.compact_pools_released);
  if (tree_hash(root, blocks) != before)
    bench_die("compact_cost", "the tree changed in the compaction");
  out->mark_after = time_mark(h);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h);
}

enum { MARK, COMPACT, MARK_AFTER, BACKENDS };
static const char *const backend_names[BACKENDS] = {"mark", "compact", "mark-after"};

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 3;
  if (runs < 1) bench_die("compact_cost", "usage: compact_cost [runs] [size...]");
  size_t default_sizes[] = {10000, 100000, 1000000};
  size_t nsizes = argc > 2 ? (size_t)(argc - 2) : 3;
  size_t *sizes = argc > 2 ? calloc(nsizes, sizeof *sizes) : default_sizes;
  for (size_t i = 0; argc > 2 && i < nsizes; i++) sizes[i] = strtoull(argv[i + 2], NULL, 10);
  double *t[BACKENDS], *wall = calloc((size_t)runs, sizeof *wall);
  double *moved = calloc((size_t)runs, sizeof *moved), *rel = calloc((size_t)runs, sizeof *rel);
  for (int b = 0; b < BACKENDS; b++) t[b] = calloc((size_t)runs, sizeof(double));
  for (size_t i = 0; i < nsizes; i++) {
    if (sizes[i] < 2) bench_die("compact_cost", "a size is at least 2 blocks");
    for (int r = 0; r < runs; r++) {
      result res;
      measure_once(sizes[i], &res);
      t[MARK][r] = res.mark;
      t[COMPACT][r] = res.compact;
      t[MARK_AFTER][r] = res.mark_after;
      wall[r] = res.compact_wall;
      moved[r] = res.moved;
      rel[r] = res.released;
    }
    double m[BACKENDS];
    for (int b = 0; b < BACKENDS; b++) m[b] = bench_median(t[b], runs);
    double mv = bench_median(moved, runs), rl = bench_median(rel, runs),
           w = bench_median(wall, runs);
    for (int b = 0; b < BACKENDS; b++) {
      printf(
          "ROW {\"bench\": \"compact\", \"size\": \"%zu\", \"backend\": \"%s\", \"wall_s\": "
          "%.6f, \"peak_mib\": null",
          sizes[i], backend_names[b], m[b]);
      if (b == COMPACT)
        printf(", \"moved_blocks\": %.0f, \"pools_released\": %.0f, \"call_wall_s\": %.6f", mv, rl,
               w);
      printf("}\n");
    }
    fflush(stdout);
    fprintf(stderr,
            "compact blocks=%zu mark_ms=%.3f compact_ms=%.3f ratio=%.2f mark_after_ms=%.3f "
            "call_ms=%.3f moved=%.0f released=%.0f\n",
            sizes[i], m[MARK] * 1e3, m[COMPACT] * 1e3, m[COMPACT] / m[MARK], m[MARK_AFTER] * 1e3,
            w * 1e3, mv, rl);
  }
  for (int b = 0; b < BACKENDS; b++) free(t[b]);
  free(wall);
  free(moved);
  free(rel);
  if (sizes != default_sizes) free(sizes);
  return 0;
}
