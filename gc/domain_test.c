/* Several domains on real threads: random graphs with pointers across domains, collections from
 * any domain, spawn/terminate churn with adoption of orphans, blocking sections, a tiny mark
 * stack, finalizers. Run under ThreadSanitizer by ci/test (tag "tsan"). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gc/check.h"
#include "gc/heap.h"

enum { SHARED = 64, NODE_ID = 0, NODE_NEXT = 1, NODE_CROSS = 2, NODE_WSIZE = 3 };
#define MAGIC 0x5eed

typedef struct world {
  gc_heap *heap;
  gc_value shared[SHARED]; /* global roots, guarded by lock */
  pthread_mutex_t lock;
  int finalized[4096];
  pthread_mutex_t fin_lock;
} world;

typedef struct worker {
  world *w;
  gc_domain *d;
  unsigned seed;
  int iterations;
  int spawn_children; /* spawn and run this many short-lived domains from inside this one */
  int failures;
} worker;

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static intptr_t node_id(gc_value v) { return gc_int_val(GC_FIELD(v, NODE_ID)); }

/* A node's id carries MAGIC so a freed or reused block shows up as a wrong id. */
static gc_value new_node(gc_domain *d, intptr_t serial) {
  gc_value v = gc_alloc(d, NODE_WSIZE, GC_TAG_SCAN);
  if (v != 0) GC_FIELD(v, NODE_ID) = gc_val_int(serial * 65536 + MAGIC);
  return v;
}

static int node_ok(gc_value v) { return v != 0 && (node_id(v) & 0xffff) == MAGIC; }

static void *run_worker(void *arg);

static void one_round(worker *k, gc_value *list, intptr_t *len, int i) {
  world *w = k->w;
  gc_domain *d = k->d;
  unsigned r = next_rand(&k->seed) % 100;
  gc_value node = new_node(d, i);
  if (node == 0) {
    k->failures++;
    return;
  }
  GC_FIELD(node, NODE_NEXT) = *list;
  *list = node;
  (*len)++;
  if (r < 10) { /* publish */
    pthread_mutex_lock(&w->lock);
    w->shared[next_rand(&k->seed) % SHARED] = node;
    pthread_mutex_unlock(&w->lock);
  } else if (r < 25) { /* point across domains */
    pthread_mutex_lock(&w->lock);
    gc_value other = w->shared[next_rand(&k->seed) % SHARED];
    if (other != 0 && !node_ok(other)) k->failures++;
    gc_store(d, node, NODE_CROSS, other);
    pthread_mutex_unlock(&w->lock);
  } else if (r < 30 && *len > 50) { /* drop most of the list: garbage */
    gc_value v = *list;
    for (int n = 0; n < 10; n++) v = GC_FIELD(v, NODE_NEXT);
    gc_store(d, v, NODE_NEXT, 0);
    *len = 11;
  } else if (r == 30) {
    gc_collect(d, GC_COLLECT_MAJOR);
  } else if (r == 31) {
    gc_collect(d, GC_COLLECT_FULL);
  } else if (r < 35) {
    gc_collect(d, GC_COLLECT_SLICE);
  } else if (r == 35) { /* a while outside the heap */
    gc_enter_blocking(d);
    for (volatile int spin = 0; spin < 1000; spin++) {}
    gc_leave_blocking(d);
  }
}

static void *run_worker(void *arg) {
  worker *k = arg;
  gc_domain *d = k->d;
  gc_leave_blocking(d);
  gc_value list = 0;
  gc_frame f;
  gc_frame_push(d, &f, &list, 1);
  intptr_t len = 0;
  for (int i = 0; i < k->iterations; i++) {
    one_round(k, &list, &len, i);
    if (k->spawn_children > 0 && i % (k->iterations / k->spawn_children + 1) == 0) {
      /* A short-lived domain on its own thread, spawned from this running one. */
      worker child = {k->w, gc_domain_spawn(d), k->seed + 7u * (unsigned)i, 300, 0, 0};
      pthread_t t;
      gc_enter_blocking(d); /* joining is waiting outside the heap */
      pthread_create(&t, NULL, run_worker, &child);
      pthread_join(t, NULL);
      gc_leave_blocking(d);
      k->failures += child.failures;
    }
  }
  /* The list is intact: every node has its magic, lengths agree. */
  intptr_t n = 0;
  for (gc_value v = list; v != 0; v = GC_FIELD(v, NODE_NEXT), n++) {
    if (!node_ok(v)) {
      k->failures++;
      break;
    }
    gc_value cross = GC_FIELD(v, NODE_CROSS);
    if (cross != 0 && !node_ok(cross)) k->failures++;
  }
  if (n != len) k->failures++;
  gc_frame_pop(d, &f);
  if (d != gc_main_domain(gc_domain_heap(d))) {
    gc_domain_terminate(d);
  } else {
    gc_enter_blocking(d); /* no thread runs it now: collections must not wait for it */
  }
  return NULL;
}

/* Count the blocks reachable from the shared roots (an O(n^2) walk: the graphs are small). */
static size_t count_reachable(world *w, size_t at_most) {
  size_t cap = 16, n = 0, top = 0;
  while (cap < 2 * at_most + 2) cap *= 2; /* the set never fills: probes always end */
  /* Each block is pushed once per edge into it: at most twice per block, plus the roots. */
  gc_value *seen = calloc(cap, sizeof *seen), *stack = calloc(2 * cap + SHARED, sizeof *stack);
  for (int i = 0; i < SHARED; i++) {
    if (w->shared[i] != 0) stack[top++] = w->shared[i];
  }
  while (top > 0) {
    gc_value v = stack[--top];
    size_t h = (v >> 4) & (cap - 1);
    int dup = 0;
    while (seen[h] != 0) {
      if (seen[h] == v) {
        dup = 1;
        break;
      }
      h = (h + 1) & (cap - 1);
    }
    if (dup) continue;
    seen[h] = v;
    n++;
    if (GC_FIELD(v, NODE_NEXT)) stack[top++] = GC_FIELD(v, NODE_NEXT);
    if (GC_FIELD(v, NODE_CROSS)) stack[top++] = GC_FIELD(v, NODE_CROSS);
  }
  free(seen);
  free(stack);
  return n;
}

static void run_world(const char *params, int threads, int iterations, int spawn_children) {
  world w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.lock, NULL);
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, params, err, sizeof err) == GC_OK);
  w.heap = gc_heap_create(&cfg);
  for (int i = 0; i < SHARED; i++) gc_root_register(w.heap, &w.shared[i]);
  worker workers[8];
  pthread_t tids[8];
  gc_domain *main = gc_main_domain(w.heap);
  for (int i = 0; i < threads; i++) {
    gc_domain *d = i == 0 ? main : gc_domain_create(w.heap);
    workers[i] = (worker){&w, d, 17u + (unsigned)i * 7919u, iterations, spawn_children, 0};
  }
  gc_enter_blocking(main); /* worker 0's thread runs the main domain now */
  for (int i = 0; i < threads; i++) pthread_create(&tids[i], NULL, run_worker, &workers[i]);
  int failures = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(tids[i], NULL);
    failures += workers[i].failures;
  }
  /* Worker 0 ran the main domain and left it in a blocking section; this thread takes it back. */
  gc_leave_blocking(main);
  CHECK_EQ_U(failures, 0);
  gc_collect(main, GC_COLLECT_FULL);
  gc_collect(main, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(w.heap, &s);
  CHECK_EQ_U(s.domains, 1);
  CHECK_EQ_U(s.pool_live_blocks + s.large_blocks,
             count_reachable(&w, s.pool_live_blocks + s.large_blocks));
  CHECK(s.cycles > 0);
  gc_heap_destroy(w.heap);
  pthread_mutex_destroy(&w.lock);
}

static void four_domains_random_graphs(void) { run_world("", 4, 3000, 0); }
static void four_domains_tiny_mark_stack(void) {
  run_world("markstack=4,mintrigger=2K", 4, 2000, 0);
}
static void spawn_and_terminate_churn(void) { run_world("mintrigger=4K", 3, 1500, 5); }
static void frequent_cycles_two_domains(void) { run_world("percent=1,mintrigger=512", 2, 3000, 0); }

/* A domain parked in a blocking section keeps its frames as roots across other domains' cycles. */
static void blocking_domain_roots_survive(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *main = gc_main_domain(h);
  gc_domain *other = gc_domain_create(h);
  gc_leave_blocking(other); /* this thread runs both, one at a time */
  gc_value kept = 0;
  gc_frame f;
  gc_frame_push(other, &f, &kept, 1);
  kept = new_node(other, 1);
  gc_store(other, kept, NODE_NEXT, new_node(other, 2));
  gc_enter_blocking(other);
  for (int i = 0; i < 20; i++) {
    for (int k = 0; k < 1000; k++) gc_alloc(main, 5, GC_TAG_SCAN);
    gc_collect(main, i % 2 ? GC_COLLECT_FULL : GC_COLLECT_MAJOR);
  }
  gc_leave_blocking(other);
  CHECK(node_ok(kept) && node_ok(GC_FIELD(kept, NODE_NEXT)));
  gc_frame_pop(other, &f);
  CHECK(gc_domain_terminate(other) == GC_OK);
  CHECK(gc_domain_terminate(main) == GC_ERR_MAIN_DOMAIN);
  gc_collect(main, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 0);
  CHECK_EQ_U(s.domains, 1);
  gc_heap_destroy(h);
}

/* Terminating a domain orphans its pools with their statistics; the next allocation or cycle
 * adopts them, and the totals never change on the way. */
static void orphans_keep_their_statistics(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *main = gc_main_domain(h);
  static gc_value keep[100];
  for (int i = 0; i < 100; i++) gc_root_register(h, &keep[i]);
  gc_domain *other = gc_domain_spawn(main);
  gc_enter_blocking(main);
  gc_leave_blocking(other);
  for (int i = 0; i < 100; i++) keep[i] = gc_alloc(other, 1 + (size_t)i * 3, GC_TAG_SCAN);
  for (int i = 0; i < 5000; i++) gc_alloc(other, 2, GC_TAG_SCAN);
  gc_stats before, after;
  gc_get_stats(h, &before);
  CHECK(gc_domain_terminate(other) == GC_OK);
  gc_leave_blocking(main);
  gc_get_stats(h, &after);
  CHECK_EQ_U(after.pool_live_blocks, before.pool_live_blocks);
  CHECK_EQ_U(after.pool_words, before.pool_words);
  CHECK_EQ_U(after.pool_frag_words, before.pool_frag_words);
  CHECK_EQ_U(after.large_words, before.large_words);
  CHECK_EQ_U(after.alloc_blocks, before.alloc_blocks);
  CHECK(after.orphan_pool_words > 0);
  gc_value v = gc_alloc(main, 2, GC_TAG_SCAN); /* adopts an avail orphan of that class */
  CHECK(v != 0);
  gc_collect(main, GC_COLLECT_FULL); /* adopts the rest */
  gc_get_stats(h, &after);
  CHECK_EQ_U(after.orphan_pool_words, 0);
  CHECK_EQ_U(after.pool_live_blocks + after.large_blocks, 100);
  for (int i = 0; i < 100; i++) CHECK_EQ_U(gc_wsize(keep[i]), 1 + (size_t)i * 3);
  for (int i = 0; i < 100; i++) gc_root_unregister(h, &keep[i]);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(blocking_domain_roots_survive);
  RUN(orphans_keep_their_statistics);
  RUN(four_domains_random_graphs);
  RUN(four_domains_tiny_mark_stack);
  RUN(spawn_and_terminate_churn);
  RUN(frequent_cycles_two_domains);
  CHECK_MAIN_END();
}
