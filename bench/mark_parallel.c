/* The parallel mark: one full mark of the same heap with 1 marker and with 2 (the target: 2
 * markers at least 1.6x faster than 1 on a heap of 10^6 blocks, on 2 cores).
 *
 * The heap: `blocks` live small blocks in one domain, a mix of
 *   - complete binary trees of depth 10 (2047 nodes each, built children first): a node is left,
 *     right, a cross pointer (to a random list node, one node in four; else NULL) and an
 *     immediate;
 *   - lists of 256 nodes: a node is next, a cross pointer (to a random tree node), an immediate,
 *     and one node in four carries a raw payload block (1 to 6 words, never scanned) in a fourth
 *     field;
 * about half the blocks in trees; the trees and lists are allocated interleaved, and one scanned
 * block (the spine, a large block) points at every tree and list head, under one global root.
 * Collection is off while building; a full collection then leaves everything swept and
 * UNMARKED, and the live count is checked against `blocks`.
 *
 * One measurement is one mark, through the collector's own phases (gc/mark.h), with the world
 * quiescent (no mutator runs; this program is the only user of the heap):
 *   markers-1  gc_mark_begin(heap, 1); gc_mark_domain(main, 1); gc_mark_finish
 *   markers-2  gc_mark_begin(heap, 2); gc_mark_domain(main, 1) on this thread while a second
 *              thread runs gc_mark_domain(second, 0) on a domain from gc_domain_create (it has no
 *              roots of its own: all its work comes from the full buffers and handoffs of the
 *              first marker, as in a real cycle); wait for it; gc_mark_finish.
 * The time is from gc_mark_begin to the end of gc_mark_finish, on the main thread. In a real
 * cycle (gc/cycle.c) the leader runs the same calls, with the other domains enlisted at their
 * safepoint instead of a waiting thread. After each mark every block must be MARKED (the count
 * is checked); gc_mark_undo_full then makes them all UNMARKED again (exact, and checked: after a
 * full mark of a swept heap where everything is live, nothing is UNMARKED or GARBAGE). The second
 * thread waits for its turn on a condition variable; it is woken before the clock starts, and
 * the clock starts once it is running (spinning on a flag until gc_mark_begin is done), as an
 * enlisted domain is already spinning at its safepoint when a real cycle starts marking.
 *
 * Runs alternate markers-1 and markers-2 (after one warm-up of each), so a slow moment of the
 * machine hits both. The medians are printed for ci/bench:
 *
 *   ROW {"bench": "mark-parallel", "size": "1000000", "backend": "markers-2", "wall_s": 0.0123, ...}
 *
 * and on stderr a table: medians, the speedup (markers-1 / markers-2, and of the fastest marks),
 * the share of the blocks the second marker marked, the handoffs and the mark-stack overflows per
 * mark. When the mark stack overflowed, the table has a second line measured again with a mark
 * stack that holds the whole heap (gc_set_params "markstack="): re-darkening after an overflow
 * runs on one marker (gc_mark_finish), and the second line shows the parallel part alone. Only
 * the first line (the collector as configured) makes rows.
 *
 * Usage: mark_parallel [runs] [blocks] [1|2] (default 9 1000000; the third argument, for
 * profiling, marks with that many markers only and prints no rows). GCFUZZ_PARAMS applies
 * (e.g. markstack=1M), except that collection and verification stay off. Build with -c opt:
 * `bazel run -c opt //bench:mark_parallel`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "gc/gc.h"
#include "gc/mark.h"

enum {
  TREE_DEPTH = 10,
  TREE_NODES = (2 << TREE_DEPTH) - 1,
  LIST_LENGTH = 256,
  /* tree node fields */
  T_LEFT = 0,
  T_RIGHT = 1,
  T_CROSS = 2,
  T_ID = 3,
  T_WSIZE = 4,
  /* list node fields */
  L_NEXT = 0,
  L_CROSS = 1,
  L_ID = 2,
  L_PAYLOAD = 3,
  L_WSIZE = 4,
};

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct builder {
  gc_heap *heap;
  gc_domain *d;
  size_t allocated;
  gc_value *tree_nodes, *list_nodes; /* every node, for the cross pointers */
  size_t tree_count, list_count;
} builder;

static gc_value alloc_or_die(builder *b, size_t wsize, unsigned tag) {
  gc_value v = gc_alloc(b->d, wsize, tag);
  if (v == 0) bench_die("mark_parallel", "gc_alloc failed: %s", gc_last_error_message(b->heap));
  b->allocated++;
  return v;
}

/* No collection runs while building (percent=off), so nothing needs rooting here. */
static gc_value tree_build(builder *b, int depth) {
  gc_value left = depth > 0 ? tree_build(b, depth - 1) : 0;
  gc_value right = depth > 0 ? tree_build(b, depth - 1) : 0;
  gc_value node = alloc_or_die(b, T_WSIZE, GC_TAG_SCAN);
  GC_FIELD(node, T_LEFT) = left;
  GC_FIELD(node, T_RIGHT) = right;
  GC_FIELD(node, T_ID) = gc_val_int((intptr_t)b->tree_count);
  b->tree_nodes[b->tree_count++] = node;
  return node;
}

/* A list of `blocks` blocks, nodes and their payloads; its head. */
static gc_value list_build(builder *b, size_t blocks) {
  gc_value head = 0;
  while (blocks > 0) {
    gc_value node = alloc_or_die(b, L_WSIZE, GC_TAG_SCAN);
    blocks--;
    GC_FIELD(node, L_NEXT) = head;
    GC_FIELD(node, L_ID) = gc_val_int((intptr_t)b->list_count);
    if (blocks > 0 && rng() % 4 == 0) {
      /* Allocated after the node: a store into an older block, through the barrier. */
      gc_store(b->d, node, L_PAYLOAD, alloc_or_die(b, 1 + rng() % 6, GC_TAG_RAW));
      blocks--;
    }
    b->list_nodes[b->list_count++] = node;
    head = node;
  }
  return head;
}

/* `blocks` live blocks under the global root *root. Stores into a block allocated before the
 * value (the spine, the cross pointers) go through the write barrier (gc_store); a new node's
 * own fields are initialising stores (GC_FIELD). */
static void build(gc_heap *h, size_t blocks, gc_value *root) {
  builder b = {h, gc_main_domain(h), 0, NULL, NULL, 0, 0};
  b.tree_nodes = malloc(blocks * sizeof(gc_value));
  b.list_nodes = malloc(blocks * sizeof(gc_value));
  if (b.tree_nodes == NULL || b.list_nodes == NULL) bench_die("mark_parallel", "out of memory");
  size_t trees = blocks / 2 / TREE_NODES;
  size_t list_blocks = blocks - 1 - trees * TREE_NODES; /* the spine is one block */
  size_t lists = (list_blocks + LIST_LENGTH - 1) / LIST_LENGTH;
  if (trees + lists == 0) bench_die("mark_parallel", "%zu blocks: too few", blocks);
  *root = alloc_or_die(&b, trees + lists, GC_TAG_SCAN);
  size_t t = 0, l = 0;
  while (t < trees || l < lists) { /* interleaved: a tree, then lists in proportion */
    if (t < trees && (l >= lists || t * lists <= l * trees)) {
      gc_store(b.d, *root, t + l, tree_build(&b, TREE_DEPTH));
      t++;
    } else {
      size_t n = list_blocks < LIST_LENGTH ? list_blocks : LIST_LENGTH;
      list_blocks -= n;
      gc_store(b.d, *root, t + l, list_build(&b, n));
      l++;
    }
  }
  for (size_t i = 0; i < b.list_count && b.tree_count > 0; i++) {
    gc_store(b.d, b.list_nodes[i], L_CROSS, b.tree_nodes[rng() % b.tree_count]);
  }
  for (size_t i = 0; i < b.tree_count && b.list_count > 0; i++) {
    if (rng() % 4 == 0) gc_store(b.d, b.tree_nodes[i], T_CROSS, b.list_nodes[rng() % b.list_count]);
  }
  if (b.allocated != blocks) {
    bench_die("mark_parallel", "built %zu blocks instead of %zu", b.allocated, blocks);
  }
  free(b.tree_nodes);
  free(b.list_nodes);
}

/* ---- The second marker's thread ------------------------------------------------------------ */

typedef struct second_marker {
  gc_domain *d;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int round;       /* bumped (under lock) to wake the thread for one mark; -1: exit */
  uintptr_t ready; /* atomic: awake and spinning on `go` */
  uintptr_t go;    /* atomic: gc_mark_begin is done, mark now */
  uintptr_t done;  /* atomic: gc_mark_domain returned */
} second_marker;

static void *second_main(void *arg) {
  second_marker *s = arg;
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&s->lock);
    while (s->round == seen) pthread_cond_wait(&s->wake, &s->lock);
    seen = s->round;
    pthread_mutex_unlock(&s->lock);
    if (seen < 0) return NULL;
    __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    __atomic_store_n(&s->go, 0, __ATOMIC_RELAXED);
    gc_mark_domain(s->d, 0);
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
  }
}

/* ---- Measuring ------------------------------------------------------------------------------ */

typedef struct mark_result {
  double seconds;
  size_t second_blocks; /* marked by the second marker */
  uint64_t handoffs;
  uint64_t overflows; /* re-darkening passes (the mark stack overflowed) */
} mark_result;

static mark_result mark_once(gc_heap *h, second_marker *s, int markers, size_t blocks) {
  gc_domain *main_d = gc_main_domain(h);
  mark_result r = {0, 0, 0, 0};
  gc_stats before;
  gc_get_stats(h, &before);
  if (markers == 2) { /* wake the thread and wait until it runs, spinning on `go` */
    pthread_mutex_lock(&s->lock);
    s->round++;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    while (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    __atomic_store_n(&s->ready, 0, __ATOMIC_RELAXED);
  }
  double t0 = bench_now();
  gc_mark_begin(h, (size_t)markers);
  if (markers == 2) __atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
  gc_mark_domain(main_d, 1);
  if (markers == 2) {
    while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    __atomic_store_n(&s->done, 0, __ATOMIC_RELAXED);
  }
  gc_mark_finish(h, main_d);
  r.seconds = bench_now() - t0;
  if (gc_mark_marked_blocks(h) != blocks) {
    bench_die("mark_parallel", "%d marker(s) marked %zu blocks of %zu", markers,
              gc_mark_marked_blocks(h), blocks);
  }
  r.second_blocks = markers == 2 ? gc_mark_domain_marked_blocks(s->d) : 0;
  gc_stats after;
  gc_get_stats(h, &after);
  r.handoffs = after.handoffs - before.handoffs;
  r.overflows = after.mark_overflows - before.mark_overflows;
  /* Everything is MARKED now: all UNMARKED again for the next mark. */
  if (!gc_mark_undo_full(h)) bench_die("mark_parallel", "the mark left blocks unmarked");
  return r;
}

/* `runs` marks with each marker count (only one count when `only` is 1 or 2), alternating. */
typedef struct series {
  double median1, median2, fastest1, fastest2; /* seconds */
  double second_share;                         /* of the blocks, by the second marker; mean */
  double handoffs, overflows1, overflows2;     /* per mark; means */
} series;

static series measure(gc_heap *h, second_marker *s, int runs, size_t blocks, int only) {
  double *t1 = calloc((size_t)runs, sizeof(double)), *t2 = calloc((size_t)runs, sizeof(double));
  if (t1 == NULL || t2 == NULL) bench_die("mark_parallel", "out of memory");
  series out = {0};
  for (int r = -1; r < runs; r++) { /* run -1 warms up caches and the work buffers */
    mark_result none = {0, 0, 0, 0};
    mark_result one = only != 2 ? mark_once(h, s, 1, blocks) : none;
    mark_result two = only != 1 ? mark_once(h, s, 2, blocks) : none;
    if (r < 0) continue;
    t1[r] = one.seconds;
    t2[r] = two.seconds;
    out.second_share += (double)two.second_blocks / (double)blocks / runs;
    out.handoffs += (double)two.handoffs / runs;
    out.overflows1 += (double)one.overflows / runs;
    out.overflows2 += (double)two.overflows / runs;
  }
  out.median1 = bench_median(t1, runs); /* sorts: [0] is then the fastest */
  out.median2 = bench_median(t2, runs);
  out.fastest1 = t1[0];
  out.fastest2 = t2[0];
  free(t1);
  free(t2);
  return out;
}

static void print_series(const char *label, size_t blocks, const series *m) {
  fprintf(stderr, "%-22s %10zu %9.3f %9.3f %8.2fx %9.2fx %8.1f %8.1f %5.1f %5.1f\n", label, blocks,
          m->median1 * 1e3, m->median2 * 1e3, m->median1 / m->median2, m->fastest1 / m->fastest2,
          100.0 * m->second_share, m->handoffs, m->overflows1, m->overflows2);
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 9;
  size_t blocks = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  int only = argc > 3 ? atoi(argv[3]) : 0; /* for profiling: marks with this many markers only */
  if (argc > 4 || runs < 1 || blocks < 2 * LIST_LENGTH || only < 0 || only > 2) {
    bench_die("mark_parallel", "usage: mark_parallel [runs >= 1] [blocks >= %d] [1|2]",
              2 * LIST_LENGTH);
  }

  /* The defaults, GCFUZZ_PARAMS on top (e.g. markstack=1M), and no collection while building. */
  gc_config cfg;
  gc_config_default(&cfg);
  const char *params = getenv(GC_PARAMS_ENV);
  char err[200];
  if (params != NULL && gc_config_parse(&cfg, params, err, sizeof err) != GC_OK) {
    bench_die("mark_parallel", "%s: %s", GC_PARAMS_ENV, err);
  }
  cfg.gc_percent = GC_PERCENT_OFF;
  cfg.trace = 0;
  cfg.verify = 0;
  gc_heap *h = gc_heap_create(&cfg);
  if (h == NULL) bench_die("mark_parallel", "gc_heap_create failed");
  static gc_value root;
  gc_root_register(h, &root);
  double t0 = bench_now();
  build(h, blocks, &root);
  gc_collect(gc_main_domain(h), GC_COLLECT_FULL);
  gc_stats st;
  gc_get_stats(h, &st);
  if (st.pool_live_blocks + st.large_blocks != blocks) {
    bench_die("mark_parallel", "%zu blocks built, %zu live", blocks,
              (size_t)(st.pool_live_blocks + st.large_blocks));
  }
  fprintf(stderr, "mark_parallel: %zu blocks (%.1f MiB of pools) built in %.2f s\n", blocks,
          (double)st.pool_words * sizeof(gc_value) / (1024.0 * 1024.0), bench_now() - t0);

  /* The second domain: created in a blocking section, and it stays there. Only its marker is
   * used, by the second thread, while this thread marks from the roots. */
  second_marker s = {.d = gc_domain_create(h), .round = 0, .ready = 0, .go = 0, .done = 0};
  if (s.d == NULL) bench_die("mark_parallel", "gc_domain_create failed");
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.wake, NULL);
  pthread_t tid;
  if (pthread_create(&tid, NULL, second_main, &s) != 0) {
    bench_die("mark_parallel", "pthread_create failed");
  }

  series m = measure(h, &s, runs, blocks, only);
  if (only != 0) { /* a profiling run: no rows */
    fprintf(stderr, "mark_parallel: %d marker(s): median %.3f ms\n", only,
            (only == 1 ? m.median1 : m.median2) * 1e3);
  } else {
    printf(
        "ROW {\"bench\": \"mark-parallel\", \"size\": \"%zu\", \"backend\": \"markers-1\", "
        "\"wall_s\": %.6f, \"peak_mib\": null}\n",
        blocks, m.median1);
    printf(
        "ROW {\"bench\": \"mark-parallel\", \"size\": \"%zu\", \"backend\": \"markers-2\", "
        "\"wall_s\": %.6f, \"peak_mib\": null}\n",
        blocks, m.median2);
    fflush(stdout);
    fprintf(stderr, "%-22s %10s %9s %9s %9s %10s %8s %8s %11s\n", "mark stack", "blocks", "1 ms",
            "2 ms", "speedup", "(fastest)", "second%", "handoffs", "overflows");
    char label[64];
    snprintf(label, sizeof label, "%zu entries", cfg.mark_stack_entries);
    print_series(label, blocks, &m);
    /* When the mark stack overflowed, re-darkening (serial, in gc_mark_finish) is part of every
     * mark: measure again with a stack that holds the whole heap, to show the parallel part on
     * its own. Not a row: the rows are the collector as configured. */
    if (m.overflows1 > 0 || m.overflows2 > 0) {
      char set[64];
      snprintf(set, sizeof set, "markstack=%zu", 2 * blocks);
      if (gc_set_params(h, set) != GC_OK) bench_die("mark_parallel", "gc_set_params %s", set);
      series big = measure(h, &s, runs, blocks, 0);
      snprintf(label, sizeof label, "%zu (no overflow)", 2 * blocks);
      print_series(label, blocks, &big);
    }
    fprintf(stderr,
            "(1 ms, 2 ms: median mark times with 1 and 2 markers over %d marks each; speedup:\n"
            " of the medians (fastest: of the fastest marks); second%%: blocks marked by the\n"
            " second marker; handoffs: per 2-marker mark; overflows: re-darkening passes per\n"
            " mark with 1 and with 2 markers; all means)\n",
            runs);
  }

  pthread_mutex_lock(&s.lock);
  s.round = -1;
  pthread_cond_signal(&s.wake);
  pthread_mutex_unlock(&s.lock);
  pthread_join(tid, NULL);
  pthread_mutex_destroy(&s.lock);
  pthread_cond_destroy(&s.wake);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h); /* the second domain goes with the heap */
  return 0;
}
