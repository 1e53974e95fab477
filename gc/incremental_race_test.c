/* Incremental marking on real threads: four domains allocate, store through the barrier into
 * blocks they share, drop what they built, pin and unpin, while the cycles mark in slices beside
 * them (every domain's allocation slow path, explicit slices) and any domain may start or finish
 * a cycle. Run under ThreadSanitizer (tag "tsan"): the fields a marker scans while a mutator
 * stores, the headers markers and pins colour, the shade marker and the shared work lists must
 * all be synchronised. Without TSan it is a stress test whose lists must come out intact.
 *
 * What the test itself shares follows one rule: a block another thread may read was published
 * under `lock` (a global root slot written, or a gc_store into a shared block's CROSS field), and
 * every read of such a field holds `lock` too, so its initialising GC_FIELD stores happen before
 * any other thread reads them. */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"

enum { THREADS = 4, SHARED = 32, PINS = 4 };
enum { ID = 0, NEXT = 1, CROSS = 2, NODE_WSIZE = 3 };
#define MAGIC 0x1ce

typedef struct world {
  gc_heap *heap;
  gc_value shared[SHARED]; /* global roots, under lock */
  pthread_mutex_t lock;
} world;

typedef struct worker {
  world *w;
  gc_domain *d;
  unsigned seed;
  int rounds;
  int failures;
} worker;

static unsigned rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static int node_ok(gc_value v) { return v != 0 && (gc_int_val(GC_FIELD(v, ID)) & 0xfff) == MAGIC; }

static void one_round(worker *k, gc_value *slots, gc_value *pinned, int i) {
  world *w = k->w;
  gc_domain *d = k->d;
  gc_value *list = &slots[0];
  unsigned r = rnd(&k->seed) % 100;
  gc_value v = gc_alloc(d, r < 2 ? 200 : NODE_WSIZE, GC_TAG_SCAN);
  if (v == 0) {
    k->failures++;
    return;
  }
  GC_FIELD(v, ID) = gc_val_int((intptr_t)i * 4096 + MAGIC); /* initialising */
  GC_FIELD(v, NEXT) = *list;                                /* initialising */
  *list = v;
  if (r < 15) { /* publish */
    pthread_mutex_lock(&w->lock);
    w->shared[rnd(&k->seed) % SHARED] = v;
    pthread_mutex_unlock(&w->lock);
  } else if (r < 40) { /* rewire a shared block's CROSS: the barrier darkens what it held */
    pthread_mutex_lock(&w->lock);
    gc_value s = w->shared[rnd(&k->seed) % SHARED];
    gc_value t = w->shared[rnd(&k->seed) % SHARED];
    if (s != 0) {
      gc_value old = GC_FIELD(s, CROSS);
      if (!node_ok(s) || (old != 0 && !node_ok(old))) k->failures++;
      gc_store(d, s, CROSS, r % 3 == 0 ? 0 : r % 3 == 1 ? t : v);
    }
    pthread_mutex_unlock(&w->lock);
  } else if (r < 50) { /* load a shared block's CROSS into our own list's head */
    pthread_mutex_lock(&w->lock);
    gc_value s = w->shared[rnd(&k->seed) % SHARED];
    gc_value c = s != 0 ? GC_FIELD(s, CROSS) : 0;
    pthread_mutex_unlock(&w->lock);
    if (c != 0 && !node_ok(c)) k->failures++;
    gc_store(d, v, CROSS, c);
  } else if (r < 60 && GC_FIELD(*list, NEXT) != 0) { /* drop most of the list */
    gc_value p = *list;
    for (int n = 0; n < 6 && GC_FIELD(p, NEXT) != 0; n++) p = GC_FIELD(p, NEXT);
    gc_store(d, p, NEXT, 0);
  } else if (r < 66) { /* pin the head (kept though dropped later), or unpin one */
    int slot = (int)(rnd(&k->seed) % PINS);
    if (pinned[slot] != 0) {
      if (gc_unpin(w->heap, pinned[slot]) != GC_OK) k->failures++;
      pinned[slot] = 0;
    } else if (gc_pin(w->heap, v) == GC_OK) {
      pinned[slot] = v;
    }
  } else if (r < 80) {
    gc_collect(d, GC_COLLECT_SLICE);
  } else if (r == 80) {
    gc_collect(d, GC_COLLECT_START);
  } else if (r == 81 && i % 8 == 0) {
    gc_collect(d, GC_COLLECT_MAJOR);
  } else if (r == 82) {
    gc_enter_blocking(d);
    sched_yield();
    gc_leave_blocking(d);
  }
}

static void *run(void *arg) {
  worker *k = arg;
  gc_domain *d = k->d;
  gc_leave_blocking(d);
  gc_value slots[1] = {0};
  gc_frame f;
  gc_frame_push(d, &f, slots, 1);
  gc_value pinned[PINS] = {0};
  for (int i = 0; i < k->rounds; i++) one_round(k, slots, pinned, i);
  /* Every node of the list and everything it points to is intact; pinned ones too. */
  for (gc_value v = slots[0]; v != 0; v = GC_FIELD(v, NEXT)) {
    if (!node_ok(v)) {
      k->failures++;
      break;
    }
  }
  for (int i = 0; i < PINS; i++) {
    if (pinned[i] == 0) continue;
    if (!node_ok(pinned[i]) || gc_unpin(k->w->heap, pinned[i]) != GC_OK) k->failures++;
  }
  gc_frame_pop(d, &f);
  gc_enter_blocking(d); /* the main thread terminates it, or takes the main domain back */
  return NULL;
}

static void world_run(const char *params, int rounds) {
  static world w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.lock, NULL);
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, params, err, sizeof err) == GC_OK);
  w.heap = gc_heap_create(&cfg);
  for (int i = 0; i < SHARED; i++) gc_root_register(w.heap, &w.shared[i]);
  gc_domain *main = gc_main_domain(w.heap);
  static worker workers[THREADS];
  pthread_t tids[THREADS];
  for (int t = 0; t < THREADS; t++) {
    gc_domain *d = t == 0 ? main : gc_domain_create(w.heap);
    workers[t] = (worker){&w, d, 31u + 7919u * (unsigned)t, rounds, 0};
  }
  gc_enter_blocking(main); /* thread 0 runs the main domain */
  for (int t = 0; t < THREADS; t++) pthread_create(&tids[t], NULL, run, &workers[t]);
  int failures = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(tids[t], NULL);
    failures += workers[t].failures;
  }
  for (int t = 1; t < THREADS; t++) {
    gc_leave_blocking(workers[t].d); /* this thread runs it, the main domain waiting */
    CHECK(gc_domain_terminate(workers[t].d) == GC_OK);
  }
  gc_leave_blocking(main);
  CHECK_EQ_U(failures, 0);
  for (int i = 0; i < SHARED; i++) {
    if (w.shared[i] != 0 && !node_ok(w.shared[i])) failures++;
  }
  CHECK_EQ_U(failures, 0);
  gc_stats s;
  gc_get_stats(w.heap, &s);
  CHECK(s.cycles >= 5);
  CHECK(s.mark_slices > s.cycles);
  fprintf(stderr, "%s: %llu cycles, %llu slices, %llu blocks allocated\n", params,
          (unsigned long long)s.cycles, (unsigned long long)s.mark_slices,
          (unsigned long long)s.alloc_blocks);
  /* Nothing is rooted any more: a full collection from a quiet heap frees everything. */
  for (int i = 0; i < SHARED; i++) w.shared[i] = 0;
  gc_collect(main, GC_COLLECT_FULL);
  gc_get_stats(w.heap, &s);
  CHECK_EQ_U(s.pool_live_blocks + s.large_blocks, 0);
  gc_heap_destroy(w.heap);
  pthread_mutex_destroy(&w.lock);
}

static void four_domains_mark_in_slices(void) {
  world_run("marking=incremental,markslice=64,mintrigger=2K,percent=50", 4000);
}

static void four_domains_tiny_slices_tiny_stack(void) {
  world_run("marking=incremental,markslice=1,markstack=4,mintrigger=4K", 2500);
}

/* ---- Two domains slicing one graph ---------------------------------------------------------
 *
 * Both domains mark the same wide graph in explicit slices, with two-entry buffers: every other
 * block a slice scans fills its buffer, which goes to the full list (push_slow) while the slice
 * goes on with a fresh one. The slice's periodic sharing must look at the buffer it holds now:
 * the one it popped from may already be the other domain's. Under ThreadSanitizer a slice that
 * touches a buffer it gave away is a report. */

enum { GRAPH_NODES = 2048, FANOUT = 96, SLICER_CYCLES = 40 };

/* GRAPH_NODES nodes of 1 + FANOUT fields (ID, then the edges): field 1 names the next node, so
 * the first reaches them all; the others name nodes at random. Scanning one pushes what its
 * edges find first, past the prefetch FIFO, so a slice publishes buffers in the middle of a
 * scan. Built through `all`, a scanned block rooted by the caller's frame slot. */
static gc_value graph_make(gc_domain *d, gc_value *all) {
  unsigned seed = 7;
  *all = gc_alloc(d, GRAPH_NODES, GC_TAG_SCAN);
  CHECK(*all != 0);
  for (int i = 0; i < GRAPH_NODES; i++) GC_FIELD(*all, i) = 0; /* initialising */
  for (int i = 0; i < GRAPH_NODES; i++) {
    gc_value v = gc_alloc(d, 1 + FANOUT, GC_TAG_SCAN);
    CHECK(v != 0);
    GC_FIELD(v, ID) = gc_val_int(MAGIC);                  /* initialising */
    for (int k = 1; k <= FANOUT; k++) GC_FIELD(v, k) = 0; /* initialising */
    gc_store(d, *all, (size_t)i, v);
  }
  for (int i = 0; i < GRAPH_NODES; i++) {
    gc_value v = GC_FIELD(*all, i);
    gc_store(d, v, 1, GC_FIELD(*all, (i + 1) % GRAPH_NODES));
    for (int k = 2; k <= FANOUT; k++)
      gc_store(d, v, (size_t)k, GC_FIELD(*all, rnd(&seed) % GRAPH_NODES));
  }
  return GC_FIELD(*all, 0);
}

/* Every node along the chain, and every node its edges name, still a node. */
static int graph_ok(gc_value first) {
  gc_value v = first;
  for (int i = 0; i < GRAPH_NODES; i++, v = GC_FIELD(v, 1)) {
    if (!node_ok(v)) return 0;
    for (int k = 1; k <= FANOUT; k++) {
      if (!node_ok(GC_FIELD(v, k))) return 0;
    }
  }
  return v == first;
}

typedef struct slicer {
  gc_domain *d;
  int leads;        /* starts the cycles */
  int *cycles_done; /* written by the leader (atomic), read after the join */
} slicer;

static void *slice_run(void *arg) {
  slicer *s = arg;
  gc_leave_blocking(s->d);
  for (int c = 0; c < SLICER_CYCLES; c++) {
    if (s->leads) gc_collect(s->d, GC_COLLECT_START);
    for (int i = 0; i < 400; i++) gc_collect(s->d, GC_COLLECT_SLICE);
    if (s->leads) {
      gc_collect(s->d, GC_COLLECT_MAJOR);
      __atomic_store_n(s->cycles_done, c + 1, __ATOMIC_RELEASE);
    }
  }
  gc_enter_blocking(s->d);
  return NULL;
}

static void two_domains_slice_one_graph(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg,
                        "marking=incremental,markslice=512,markbuf=2,markstack=4K,mintrigger=1G",
                        err, sizeof err) == GC_OK);
  gc_heap *heap = gc_heap_create(&cfg);
  gc_domain *main = gc_main_domain(heap);
  static gc_value graph;
  gc_root_register(heap, &graph);
  gc_value all = 0;
  gc_frame f;
  gc_frame_push(main, &f, &all, 1);
  graph = graph_make(main, &all);
  gc_frame_pop(main, &f);
  int cycles_done = 0;
  slicer slicers[2] = {{main, 1, &cycles_done}, {gc_domain_create(heap), 0, &cycles_done}};
  gc_enter_blocking(main);
  pthread_t tids[2];
  for (int t = 0; t < 2; t++) pthread_create(&tids[t], NULL, slice_run, &slicers[t]);
  for (int t = 0; t < 2; t++) pthread_join(tids[t], NULL);
  gc_leave_blocking(slicers[1].d);
  CHECK(gc_domain_terminate(slicers[1].d) == GC_OK);
  gc_leave_blocking(main);
  CHECK_EQ_U(cycles_done, SLICER_CYCLES);
  CHECK(graph_ok(graph));
  gc_stats s;
  gc_get_stats(heap, &s);
  CHECK(s.mark_slices > 2 * SLICER_CYCLES);
  fprintf(stderr, "two domains, one graph: %llu cycles, %llu slices\n",
          (unsigned long long)s.cycles, (unsigned long long)s.mark_slices);
  gc_heap_destroy(heap);
}

int main(void) {
  RUN(four_domains_mark_in_slices);
  RUN(four_domains_tiny_slices_tiny_stack);
  RUN(two_domains_slice_one_graph);
  CHECK_MAIN_END();
}
