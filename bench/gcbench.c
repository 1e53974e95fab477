/* GCBench, in the shape of Hans Boehm's published benchmark (after John Ellis and Pete Kovac).
 *
 * With S the stretch depth (published: 18) and L = S - 2:
 *   - a stretch tree of depth S is built and dropped;
 *   - a long-lived tree of depth L is built top-down and kept to the end;
 *   - a long-lived raw array of ARRAY_SIZE doubles is allocated, its first half set to 1/i;
 *   - for d = 4, 6, ..., L: num_iters(d) = 2 * tree_size(S) / tree_size(d) trees of depth d are
 *     built top-down (an empty node is given two empty children, recursively) and dropped, then
 *     as many are built bottom-up (children, then their parent) and dropped;
 *   - the long-lived tree (node count, every integer field still 0) and array (every value
 *     written) are checked.
 * tree_size(d) = 2^(d+1) - 1. A node is left, right and two integer fields i and j, as in the
 * original. The per-phase times are printed like the original's; ci/bench reads only the
 * program's total.
 *
 * With threads > 1 (the two-thread programs): the stretch tree, the long-lived tree and array are
 * the main thread's, as above; then each of the threads (the main one and threads - 1 started
 * with bk_thread_start) goes through every depth, building its share of that depth's trees
 * top-down, then its share bottom-up: of num_iters(d), thread k builds those numbered
 * num_iters * k / threads up to num_iters * (k + 1) / threads. The lines are printed once every
 * thread has finished; a phase's time is then the longest any thread spent on its share.
 */
#include <stdio.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  MAX_THREADS = 8,
  MAX_DEPTHS = 16, /* depths 4, 6, ..., 30 */
  MIN_TREE_DEPTH = 4,
  ARRAY_SIZE = 500000,
  NODE_LEFT = 0,
  NODE_RIGHT = 1,
  NODE_REFS = 2,
  NODE_I = 2, /* integer fields follow the references */
  NODE_J = 3,
  NODE_INTS = 2,
};

/* The long-lived data are global roots (gcfuzz) rather than frame slots, as a runtime's globals. */
static bk_ref long_lived_tree;
static bk_ref long_lived_array;

static long tree_size(int depth) { return (2L << depth) - 1; }

static bk_ref node_new(void) { return bk_alloc(NODE_REFS, NODE_INTS); }

/* Top-down: give `node` two new children, then populate them. `node` must be reachable from a
 * root; then so is every node added under it, and since blocks never move, no frame is needed. */
static void populate(int depth, bk_ref node) {
  if (depth <= 0) return;
  depth--;
  /* node_new() allocates (a safepoint) before each store: `node` is no longer this thread's
   * newest block, so these are barrier stores (bk_set), not initialising ones. */
  bk_set(node, NODE_LEFT, node_new());
  bk_set(node, NODE_RIGHT, node_new());
  populate(depth, bk_get(node, NODE_LEFT));
  populate(depth, bk_get(node, NODE_RIGHT));
}

/* Bottom-up: both subtrees first (held in a frame while the rest allocates), then the parent. */
static bk_ref make_tree(int depth) {
  if (depth <= 0) return node_new();
  BK_FRAME(kids, 2);
  kids[0] = make_tree(depth - 1);
  kids[1] = make_tree(depth - 1);
  bk_ref node = node_new();
  /* `node` is this thread's newest block, no allocation since: initialising stores. */
  bk_set_new(node, NODE_LEFT, kids[0]);
  bk_set_new(node, NODE_RIGHT, kids[1]);
  BK_FRAME_END(kids);
  return node;
}

static void tree_drop(bk_ref tree) {
  if (!BK_EXPLICIT_FREE || tree == BK_NULL) return;
  tree_drop(bk_get(tree, NODE_LEFT));
  tree_drop(bk_get(tree, NODE_RIGHT));
  bk_free(tree);
}

/* Nodes of the tree whose integer fields are both still 0; a lost or reused node changes it. */
static long tree_count_intact(bk_ref tree) {
  if (tree == BK_NULL) return 0;
  long self = bk_get_int(tree, NODE_I) == 0 && bk_get_int(tree, NODE_J) == 0;
  return self + tree_count_intact(bk_get(tree, NODE_LEFT)) +
         tree_count_intact(bk_get(tree, NODE_RIGHT));
}

static long msec_since(double start) { return (long)((bench_now() - start) * 1000.0 + 0.5); }

static long num_iters(int stretch, int depth) { return 2 * tree_size(stretch) / tree_size(depth); }

/* Trees number `first` to `end` - 1 of a depth, top-down then bottom-up; the time of each. */
static void construct(int depth, long first, long end, long *top_down_ms, long *bottom_up_ms) {
  BK_FRAME(temp, 1);
  double start = bench_now();
  for (long i = first; i < end; i++) {
    temp[0] = node_new();
    populate(depth, temp[0]);
    tree_drop(temp[0]);
    temp[0] = BK_NULL;
  }
  *top_down_ms = msec_since(start);
  BK_FRAME_END(temp);

  start = bench_now();
  for (long i = first; i < end; i++) {
    bk_ref tree = make_tree(depth);
    tree_drop(tree);
  }
  *bottom_up_ms = msec_since(start);
}

static void print_construction(int stretch, int depth, long top_down_ms, long bottom_up_ms,
                               FILE *out) {
  fprintf(out, "Creating %ld trees of depth %d\n", num_iters(stretch, depth), depth);
  fprintf(out, "\tTop down construction took %ld msec\n", top_down_ms);
  fprintf(out, "\tBottom up construction took %ld msec\n", bottom_up_ms);
}

static void time_construction(int stretch, int depth, FILE *out) {
  long top_down_ms, bottom_up_ms;
  construct(depth, 0, num_iters(stretch, depth), &top_down_ms, &bottom_up_ms);
  print_construction(stretch, depth, top_down_ms, bottom_up_ms, out);
}

/* One thread's share of every depth (threads > 1). */
typedef struct share {
  int stretch, max_tree_depth;
  int thread, threads;
  long top_down_ms[MAX_DEPTHS], bottom_up_ms[MAX_DEPTHS]; /* by (depth - MIN_TREE_DEPTH) / 2 */
} share;

static void share_run(void *arg) {
  share *s = arg;
  for (int depth = MIN_TREE_DEPTH; depth <= s->max_tree_depth; depth += 2) {
    long iterations = num_iters(s->stretch, depth);
    int k = (depth - MIN_TREE_DEPTH) / 2;
    construct(depth, iterations * s->thread / s->threads, iterations * (s->thread + 1) / s->threads,
              &s->top_down_ms[k], &s->bottom_up_ms[k]);
  }
}

/* The depths' trees on `threads` threads; the lines once all are done. */
static void construct_on_threads(int stretch, int max_tree_depth, int threads, FILE *out) {
  share shares[MAX_THREADS];
  bk_thread started[MAX_THREADS];
  for (int k = 0; k < threads; k++) {
    shares[k] = (share){stretch, max_tree_depth, k, threads, {0}, {0}};
  }
  for (int k = 1; k < threads; k++) bk_thread_start(&started[k], share_run, &shares[k]);
  share_run(&shares[0]);
  for (int k = 1; k < threads; k++) bk_thread_join(&started[k]);
  for (int depth = MIN_TREE_DEPTH; depth <= max_tree_depth; depth += 2) {
    int i = (depth - MIN_TREE_DEPTH) / 2;
    long top_down_ms = 0, bottom_up_ms = 0;
    for (int k = 0; k < threads; k++) {
      if (shares[k].top_down_ms[i] > top_down_ms) top_down_ms = shares[k].top_down_ms[i];
      if (shares[k].bottom_up_ms[i] > bottom_up_ms) bottom_up_ms = shares[k].bottom_up_ms[i];
    }
    print_construction(stretch, depth, top_down_ms, bottom_up_ms, out);
  }
}

int gcbench_run(int stretch, int threads, FILE *out) {
  if (threads < 1 || threads > MAX_THREADS || threads > BENCH_THREADS) {
    bench_die("gcbench", "%d threads: this program runs 1 to %d", threads,
              BENCH_THREADS < MAX_THREADS ? BENCH_THREADS : MAX_THREADS);
  }
  if (stretch < GCBENCH_MIN) stretch = GCBENCH_MIN;
  int long_lived_depth = stretch - 2;
  int max_tree_depth = stretch - 2;
  int failures = 0;
  double start = bench_now();

  bk_init();
  BK_GLOBAL_ROOT(&long_lived_tree);
  BK_GLOBAL_ROOT(&long_lived_array);

  fprintf(out, "Garbage Collector Test\n");
  fprintf(out, " Stretching memory with a binary tree of depth %d\n", stretch);
  tree_drop(make_tree(stretch));

  fprintf(out, " Creating a long-lived binary tree of depth %d\n", long_lived_depth);
  long_lived_tree = node_new();
  populate(long_lived_depth, long_lived_tree);

  fprintf(out, " Creating a long-lived array of %d doubles\n", ARRAY_SIZE);
  long_lived_array = bk_alloc_raw(ARRAY_SIZE * sizeof(double));
  double *array = bk_raw(long_lived_array); /* stays valid: the block is rooted and never moves */
  for (int i = 0; i < ARRAY_SIZE / 2; i++) array[i] = 1.0 / i;

  if (threads == 1) {
    for (int depth = MIN_TREE_DEPTH; depth <= max_tree_depth; depth += 2)
      time_construction(stretch, depth, out);
  } else {
    construct_on_threads(stretch, max_tree_depth, threads, out);
  }

  long intact = tree_count_intact(long_lived_tree);
  if (intact != tree_size(long_lived_depth)) {
    fprintf(stderr, "gcbench (%s): long-lived tree has %ld intact nodes, expected %ld\n", BK_NAME,
            intact, tree_size(long_lived_depth));
    failures++;
  }
  long bad_values = 0;
  for (int i = 0; i < ARRAY_SIZE / 2; i++) bad_values += array[i] != 1.0 / i;
  if (bad_values != 0 || array[1000] != 1.0 / 1000) {
    fprintf(stderr, "gcbench (%s): long-lived array has %ld wrong values\n", BK_NAME, bad_values);
    failures++;
  }

  tree_drop(long_lived_tree);
  long_lived_tree = BK_NULL;
  if (BK_EXPLICIT_FREE) bk_free(long_lived_array);
  long_lived_array = BK_NULL;
  BK_GLOBAL_UNROOT(&long_lived_array);
  BK_GLOBAL_UNROOT(&long_lived_tree);
  bk_fini();

  fprintf(out, "Completed in %ld msec\n", msec_since(start));
  if (failures != 0) fprintf(stderr, "gcbench (%s): FAILED\n", BK_NAME);
  return failures != 0;
}
