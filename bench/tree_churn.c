/* tree-churn: a long-lived tree that changes, the shape of a program's long-lived index or
 * document tree under edits.
 *
 * With n the argument (at least TREE_CHURN_MIN): a balanced binary tree of depth n (2^(n+1) - 1
 * nodes, depth 0 the root), built once and kept to the end: the live heap. A node is left,
 * right and an integer value; a node's position is its heap index (the root 1, the children of
 * i are 2i and 2i+1), and a node built at step t holds value(t, position).
 *   - Then 2^(n-1) steps. Each walks from one of the root's two children down a random path to
 *     a node at depth n - SUBTREE_DEPTH - 1, updating in place the value of every node it passes
 *     (depths 1 to n - SUBTREE_DEPTH - 1); there it replaces one child, a subtree of depth
 *     SUBTREE_DEPTH reaching the leaves, with a freshly built one (built bottom-up, then stored
 *     into the old node: a barrier store on gcfuzz). The old subtree becomes garbage (malloc
 *     frees it node by node).
 *   - The tree is checked: its node count, and a checksum of every node's value and position.
 * The live size is constant; every step makes 2^(SUBTREE_DEPTH+1) - 1 nodes of garbage that were
 * long-lived (old, in old pools, mixed with live ones), and stores young subtrees into old nodes.
 *
 * Deterministic: the steps under each of the root's children (the halves, PARTS) come from that
 * half's own splitmix64 stream (fixed seeds), and a step touches only its own half. The printed
 * node count and checksum are the same on every backend.
 *
 * With threads == 2: the tree is the main thread's (it builds it, and the check); then the steps
 * are split: thread k (the main one is 0, the other started with bk_thread_start) makes half k's
 * share, changing only the half under the root's child k. With threads == 1 the main thread
 * makes the steps of the two halves alternately: each half sees the same steps in the same
 * order, so the tree and the printed lines are the same.
 */
#include <stdint.h>
#include <stdio.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  PARTS = 2,
  SUBTREE_DEPTH = 6,
  NODE_LEFT = 0,
  NODE_RIGHT = 1,
  NODE_REFS = 2,
  NODE_VALUE = 2, /* the integer field follows the references */
  NODE_INTS = 1,
};

/* Values stay well inside what a gcfuzz immediate holds. */
#define VALUE_MASK ((UINT64_C(1) << 48) - 1)

static long nodes_of_depth(int depth) { return (2L << depth) - 1; }

static intptr_t value_of(uint64_t step_seed, uint64_t position) {
  return (intptr_t)(bench_mix64(step_seed ^ (position * UINT64_C(0x9e3779b97f4a7c15))) &
                    VALUE_MASK);
}

/* A complete tree of the given depth at `position`, children first; values from `seed`. */
static bk_ref tree_make(int depth, uint64_t position, uint64_t seed) {
  if (depth == 0) {
    bk_ref leaf = bk_alloc(NODE_REFS, NODE_INTS);
    bk_set_int(leaf, NODE_VALUE, value_of(seed, position));
    return leaf;
  }
  BK_FRAME(kids, 2);
  kids[NODE_LEFT] = tree_make(depth - 1, 2 * position, seed);
  kids[NODE_RIGHT] = tree_make(depth - 1, 2 * position + 1, seed);
  bk_ref node = bk_alloc(NODE_REFS, NODE_INTS);
  /* `node` is this thread's newest block, no allocation since: initialising stores. */
  bk_set_new(node, NODE_LEFT, kids[NODE_LEFT]);
  bk_set_new(node, NODE_RIGHT, kids[NODE_RIGHT]);
  bk_set_int(node, NODE_VALUE, value_of(seed, position));
  BK_FRAME_END(kids);
  return node;
}

static void tree_drop(bk_ref tree) {
  if (!BK_EXPLICIT_FREE || tree == BK_NULL) return;
  tree_drop(bk_get(tree, NODE_LEFT));
  tree_drop(bk_get(tree, NODE_RIGHT));
  bk_free(tree);
}

/* Node count and checksum (every node's value mixed with its position: a node lost, reused or
 * moved to another position changes it). */
static long tree_check(bk_ref tree, uint64_t position, uint64_t *sum) {
  *sum += bench_mix64((uint64_t)bk_get_int(tree, NODE_VALUE) ^ (position << 1));
  long count = 1;
  bk_ref left = bk_get(tree, NODE_LEFT);
  bk_ref right = bk_get(tree, NODE_RIGHT);
  if (left != BK_NULL) count += tree_check(left, 2 * position, sum);
  if (right != BK_NULL) count += tree_check(right, 2 * position + 1, sum);
  return count;
}

/* One half of the tree (the subtree under the root's child `index`) and its steps. */
typedef struct part {
  bk_ref half;     /* the root's child: reachable from the rooted tree, valid without a root */
  int index;       /* 0 or 1 */
  int depth;       /* the whole tree's */
  long steps;      /* this half's share */
  long done;       /* steps made so far */
  uint64_t stream; /* splitmix64 state */
} part;

static void part_step(part *p) {
  uint64_t r = bench_splitmix64(&p->stream);
  uint64_t step_seed = ((uint64_t)p->index << 40) + (uint64_t)p->done;
  int parent_depth = p->depth - SUBTREE_DEPTH - 1;
  bk_ref node = p->half;
  uint64_t position = 2 + (uint64_t)p->index;
  /* Down from depth 1 to the parent, updating each value on the way (integer stores into old
   * nodes: through the barrier on gcfuzz). */
  for (int d = 1;; d++) {
    intptr_t v = bk_get_int(node, NODE_VALUE);
    bk_set_int(node, NODE_VALUE, (intptr_t)(((uint64_t)v * 5 + 1 + r) & VALUE_MASK));
    int side = (int)((r >> d) & 1);
    if (d == parent_depth) {
      uint64_t child = 2 * position + (uint64_t)side;
      bk_ref old = bk_get(node, (size_t)side);
      /* `node` stays reachable (blocks never move), so valid across the allocations. */
      bk_ref fresh = tree_make(SUBTREE_DEPTH, child, step_seed);
      bk_set(node, (size_t)side, fresh); /* a young subtree into an old node: barrier store */
      tree_drop(old);
      break;
    }
    node = bk_get(node, (size_t)side);
    position = 2 * position + (uint64_t)side;
  }
  p->done++;
}

static void part_run(void *arg) {
  part *p = arg;
  while (p->done < p->steps) part_step(p);
}

int tree_churn_run(int n, int threads, FILE *out) {
  if (threads < 1 || threads > PARTS || threads > BENCH_THREADS) {
    bench_die("tree-churn", "%d threads: this program runs 1 to %d", threads,
              BENCH_THREADS < PARTS ? BENCH_THREADS : PARTS);
  }
  if (n < TREE_CHURN_MIN) n = TREE_CHURN_MIN;
  long steps = 1L << (n - 1);

  bk_init();
  BK_FRAME(tree, 1);
  tree[0] = tree_make(n, 1, UINT64_MAX); /* the initial values: seed no step has */

  part parts[PARTS];
  for (int k = 0; k < PARTS; k++) {
    parts[k] = (part){.half = bk_get(tree[0], (size_t)k),
                      .index = k,
                      .depth = n,
                      .steps = steps / PARTS,
                      .stream = UINT64_C(0x7ee0000) + (uint64_t)k};
  }
  if (threads == 1) {
    for (long i = 0; i < steps / PARTS; i++)
      for (int k = 0; k < PARTS; k++) part_step(&parts[k]);
  } else {
    bk_thread other;
    bk_thread_start(&other, part_run, &parts[1]);
    part_run(&parts[0]);
    bk_thread_join(&other);
  }

  uint64_t checksum = 0;
  long count = tree_check(tree[0], 1, &checksum);
  fprintf(out, "tree of depth %d, %ld steps replacing subtrees of depth %d\n", n, steps,
          SUBTREE_DEPTH);
  fprintf(out, "tree check: %ld nodes, checksum %016llx\n", count, (unsigned long long)checksum);
  int failures = count != nodes_of_depth(n);
  if (failures != 0) {
    fprintf(stderr, "tree-churn (%s): %ld nodes, expected %ld: FAILED\n", BK_NAME, count,
            nodes_of_depth(n));
  }

  tree_drop(tree[0]);
  BK_FRAME_END(tree);
  bk_fini();
  return failures != 0;
}
