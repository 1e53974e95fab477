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

int main(void) {
  RUN(four_domains_mark_in_slices);
  RUN(four_domains_tiny_slices_tiny_stack);
  CHECK_MAIN_END();
}
