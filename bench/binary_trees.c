/* binary-trees, in the shape of the Computer Language Benchmarks Game.
 *
 * With n the argument (max_depth = max(n, MIN_DEPTH + 2)):
 *   - a stretch tree of depth max_depth + 1 is built, checked and dropped;
 *   - a long-lived tree of depth max_depth is built and kept to the end;
 *   - for d = MIN_DEPTH, MIN_DEPTH + 2, ..., max_depth: 2^(max_depth - d + MIN_DEPTH) trees of
 *     depth d are each built, checked and dropped;
 *   - the long-lived tree is checked.
 * A tree of depth d has 2^(d+1) - 1 nodes (depth 0 is a single node); the check is the node count,
 * and every count is compared with that formula. Trees are built bottom-up: both children exist
 * before their parent is allocated, so each inner node's construction holds two unattached
 * subtrees across an allocation (two root slots for gcfuzz).
 *
 * With threads > 1 (the two-thread programs): the stretch tree and the long-lived tree are built
 * by the main thread as above; then the trees of every depth are split between the threads, the
 * main thread and threads - 1 started with bk_thread_start: of a depth's `iterations` trees,
 * thread k builds those numbered iterations * k / threads up to iterations * (k + 1) / threads.
 * Each thread goes through all depths at its own pace; the lines are printed once all have
 * finished, with the same counts as one thread. The long-lived tree stays the main thread's
 * (only it reads it). With threads == 1 no thread is started and the lines are printed depth by
 * depth, as in the single-threaded original.
 */
#include <stdio.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  MAX_THREADS = 8,
  MAX_DEPTHS = 16, /* depths 4, 6, ..., 30 */
  MIN_DEPTH = 4,
  NODE_LEFT = 0,
  NODE_RIGHT = 1,
  NODE_REFS = 2, /* a node is two references and nothing else */
};

static long nodes_of_depth(int depth) { return (2L << depth) - 1; }

/* A complete tree of the given depth, children first. */
static bk_ref tree_make(int depth) {
  if (depth == 0) return bk_alloc(NODE_REFS, 0);
  BK_FRAME(kids, 2);
  kids[NODE_LEFT] = tree_make(depth - 1);
  kids[NODE_RIGHT] = tree_make(depth - 1);
  bk_ref node = bk_alloc(NODE_REFS, 0);
  /* `node` is this thread's newest block, no allocation since: initialising stores. */
  bk_set_new(node, NODE_LEFT, kids[NODE_LEFT]);
  bk_set_new(node, NODE_RIGHT, kids[NODE_RIGHT]);
  BK_FRAME_END(kids);
  return node;
}

/* The number of nodes; follows both children so a lost or reused node changes the count. */
static long tree_check(bk_ref tree) {
  long count = 1;
  bk_ref left = bk_get(tree, NODE_LEFT);
  bk_ref right = bk_get(tree, NODE_RIGHT);
  if (left != BK_NULL) count += tree_check(left);
  if (right != BK_NULL) count += tree_check(right);
  return count;
}

/* The tree is dead: malloc gets every node back, the collectors find out by themselves. */
static void tree_drop(bk_ref tree) {
  if (!BK_EXPLICIT_FREE || tree == BK_NULL) return;
  tree_drop(bk_get(tree, NODE_LEFT));
  tree_drop(bk_get(tree, NODE_RIGHT));
  bk_free(tree);
}

/* Trees number `first` to `end` - 1 of a depth: each built, checked and dropped. The sum of the
 * checks. */
static long depth_trees(int depth, long first, long end) {
  long check = 0;
  for (long i = first; i < end; i++) {
    bk_ref tree = tree_make(depth);
    check += tree_check(tree);
    tree_drop(tree);
  }
  return check;
}

static long iterations_of_depth(int max_depth, int depth) {
  return 1L << (max_depth - depth + MIN_DEPTH);
}

/* One thread's share of every depth (threads > 1). */
typedef struct share {
  int max_depth;
  int thread, threads;
  long check[MAX_DEPTHS]; /* by (depth - MIN_DEPTH) / 2 */
} share;

static void share_run(void *arg) {
  share *s = arg;
  for (int depth = MIN_DEPTH; depth <= s->max_depth; depth += 2) {
    long iterations = iterations_of_depth(s->max_depth, depth);
    long first = iterations * s->thread / s->threads;
    long end = iterations * (s->thread + 1) / s->threads;
    s->check[(depth - MIN_DEPTH) / 2] = depth_trees(depth, first, end);
  }
}

int binary_trees_run(int n, int threads, FILE *out) {
  int max_depth = n < MIN_DEPTH + 2 ? MIN_DEPTH + 2 : n;
  int failures = 0;
  if (threads < 1 || threads > MAX_THREADS || threads > BENCH_THREADS) {
    bench_die("binary-trees", "%d threads: this program runs 1 to %d", threads,
              BENCH_THREADS < MAX_THREADS ? BENCH_THREADS : MAX_THREADS);
  }

  bk_init();
  BK_FRAME(long_lived, 1);

  int stretch_depth = max_depth + 1;
  bk_ref stretch = tree_make(stretch_depth);
  long stretch_check = tree_check(stretch);
  tree_drop(stretch);
  fprintf(out, "stretch tree of depth %d\t check: %ld\n", stretch_depth, stretch_check);
  failures += stretch_check != nodes_of_depth(stretch_depth);

  long_lived[0] = tree_make(max_depth);

  share shares[MAX_THREADS];
  if (threads > 1) {
    bk_thread started[MAX_THREADS];
    for (int k = 0; k < threads; k++) shares[k] = (share){max_depth, k, threads, {0}};
    for (int k = 1; k < threads; k++) bk_thread_start(&started[k], share_run, &shares[k]);
    share_run(&shares[0]);
    for (int k = 1; k < threads; k++) bk_thread_join(&started[k]);
  }

  for (int depth = MIN_DEPTH; depth <= max_depth; depth += 2) {
    long iterations = iterations_of_depth(max_depth, depth);
    long check = 0;
    if (threads == 1) {
      check = depth_trees(depth, 0, iterations);
    } else {
      for (int k = 0; k < threads; k++) check += shares[k].check[(depth - MIN_DEPTH) / 2];
    }
    fprintf(out, "%ld\t trees of depth %d\t check: %ld\n", iterations, depth, check);
    failures += check != iterations * nodes_of_depth(depth);
  }

  long long_lived_check = tree_check(long_lived[0]);
  fprintf(out, "long lived tree of depth %d\t check: %ld\n", max_depth, long_lived_check);
  failures += long_lived_check != nodes_of_depth(max_depth);
  tree_drop(long_lived[0]);

  BK_FRAME_END(long_lived);
  bk_fini();
  if (failures != 0) fprintf(stderr, "binary-trees (%s): %d checks FAILED\n", BK_NAME, failures);
  return failures != 0;
}
