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
 */
#include <stdio.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
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
  bk_set(node, NODE_LEFT, kids[0]);
  bk_set(node, NODE_RIGHT, kids[1]);
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

static void time_construction(int stretch, int depth, FILE *out) {
  long iterations = 2 * tree_size(stretch) / tree_size(depth);
  fprintf(out, "Creating %ld trees of depth %d\n", iterations, depth);

  BK_FRAME(temp, 1);
  double start = bench_now();
  for (long i = 0; i < iterations; i++) {
    temp[0] = node_new();
    populate(depth, temp[0]);
    tree_drop(temp[0]);
    temp[0] = BK_NULL;
  }
  fprintf(out, "\tTop down construction took %ld msec\n", msec_since(start));
  BK_FRAME_END(temp);

  start = bench_now();
  for (long i = 0; i < iterations; i++) {
    bk_ref tree = make_tree(depth);
    tree_drop(tree);
  }
  fprintf(out, "\tBottom up construction took %ld msec\n", msec_since(start));
}

int gcbench_run(int stretch, FILE *out) {
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

  for (int depth = MIN_TREE_DEPTH; depth <= max_tree_depth; depth += 2)
    time_construction(stretch, depth, out);

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
