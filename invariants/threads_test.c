/* Every pass on, several domains on real threads: random graphs with pointers across domains,
 * collections from any domain, spawn/terminate churn with adoption, blocking sections, Go-style
 * finalizers (exactly once, some resurrecting), conservative ranges holding interior pointers,
 * and sometimes a 4-entry mark stack; in both marking modes (incremental: the domains mark in
 * slices beside each other's mutations). Nothing may be reported. Also run under
 * ThreadSanitizer (tag "tsan"). GCFUZZ_STRESS_SECONDS=60 turns it into a free-running stress of
 * that length. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "invariants/breaking.h"

enum { SHARED = 64, MAX_FIN = 1 << 14, THREADS = 4, CONS_WORDS = 32 };
enum { F_ID = 0, F_NEXT = 1, F_CROSS = 2, NODE_WSIZE = 3 };

typedef struct world {
  gc_heap *heap;
  gc_value shared[SHARED]; /* global roots, under lock */
  pthread_mutex_t lock;
  int fin_runs[MAX_FIN]; /* under lock */
  int fin_count;         /* finalizers set so far, under lock */
  gc_value resurrected;  /* a global root a finalizer stores into, under lock */
} world;

typedef struct worker {
  world *w;
  gc_domain *d;
  unsigned seed;
  int rounds;
  int children; /* short-lived domains to spawn and run on their own threads */
  uintptr_t conservative[CONS_WORDS]; /* a conservative range: only this thread writes it */
} worker;

static unsigned rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static void on_finalize(gc_heap *heap, gc_value block, void *user) {
  world *w = user;
  (void)heap;
  pthread_mutex_lock(&w->lock);
  intptr_t id = gc_int_val(GC_FIELD(block, F_ID));
  if (id >= 0 && id < MAX_FIN) w->fin_runs[id]++;
  if (id % 5 == 0) w->resurrected = block; /* the previous one becomes garbage again */
  pthread_mutex_unlock(&w->lock);
}

static void *run(void *arg);

static void round_of(worker *k, gc_value *list, int i) {
  world *w = k->w;
  gc_domain *d = k->d;
  unsigned r = rnd(&k->seed) % 200;
  gc_value v = r < 3 ? gc_alloc(d, 150 + r, GC_TAG_SCAN) : gc_alloc(d, NODE_WSIZE, GC_TAG_SCAN);
  CHECK(v != 0);
  /* Initialising stores (v is this domain's, no safepoint since it was allocated), here and
   * below until v is published or a safepoint comes; any other store goes through gc_store. */
  GC_FIELD(v, F_ID) = gc_val_int(-1);
  GC_FIELD(v, F_NEXT) = *list;
  *list = v;
  if (r < 20) {
    pthread_mutex_lock(&w->lock);
    w->shared[rnd(&k->seed) % SHARED] = v;
    pthread_mutex_unlock(&w->lock);
  } else if (r < 40) {
    pthread_mutex_lock(&w->lock);
    GC_FIELD(v, F_CROSS) = w->shared[rnd(&k->seed) % SHARED];
    pthread_mutex_unlock(&w->lock);
  } else if (r < 46) {
    pthread_mutex_lock(&w->lock);
    int id = w->fin_count < MAX_FIN ? w->fin_count++ : -1;
    pthread_mutex_unlock(&w->lock);
    if (id >= 0) {
      GC_FIELD(v, F_ID) = gc_val_int(id);
      CHECK(gc_finalizer_set(w->heap, v, on_finalize, w) == GC_OK);
    }
  } else if (r <
             56) { /* an interior pointer (into the last field) only a conservative word holds */
    gc_value c = gc_alloc(d, 4, GC_TAG_SCAN);
    CHECK(c != 0);
    k->conservative[rnd(&k->seed) % CONS_WORDS] = (uintptr_t)c + 3 * sizeof(gc_value) + 5;
  } else if (r < 66) {
    gc_value p = *list; /* cut the list short: garbage */
    for (int n = 0; n < 8 && p != 0; n++) p = GC_FIELD(p, F_NEXT);
    if (p != 0) gc_store(d, p, F_NEXT, 0);
  } else if (r < 68) {
    gc_collect(d, r % 2 ? GC_COLLECT_MAJOR : GC_COLLECT_FULL);
  } else if (r < 72) {
    gc_collect(d, GC_COLLECT_SLICE);
  } else if (r == 72) {
    gc_enter_blocking(d);
    sched_yield();
    gc_leave_blocking(d);
  } else if (r == 73 && k->children > 0) {
    k->children--;
    worker child;
    memset(&child, 0, sizeof child);
    child.w = w;
    child.d = gc_domain_spawn(d);
    child.seed = k->seed ^ (unsigned)i;
    child.rounds = 300;
    pthread_t t;
    pthread_create(&t, NULL, run, &child);
    gc_enter_blocking(d);
    pthread_join(t, NULL);
    gc_leave_blocking(d);
  }
}

static void *run(void *arg) {
  worker *k = arg;
  gc_domain *d = k->d;
  gc_leave_blocking(d);
  CHECK(gc_conservative_add(k->w->heap, k->conservative, sizeof k->conservative) == GC_OK);
  gc_value list = 0;
  gc_frame f;
  gc_frame_push(d, &f, &list, 1);
  for (int i = 0; i < k->rounds; i++) round_of(k, &list, i);
  gc_frame_pop(d, &f);
  CHECK(gc_conservative_remove(k->w->heap, k->conservative) == GC_OK);
  if (d == gc_main_domain(k->w->heap)) {
    gc_enter_blocking(d); /* no thread runs it now */
  } else {
    CHECK(gc_domain_terminate(d) == GC_OK);
  }
  return NULL;
}

static void one_world(const char *params, int rounds, unsigned seed) {
  static world w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.lock, NULL);
  w.heap = breaking_heap(params);
  for (int i = 0; i < SHARED; i++) gc_root_register(w.heap, &w.shared[i]);
  gc_root_register(w.heap, &w.resurrected);
  /* Abort mode: the first point with a report prints it and ends the process, before the next
   * mark can touch a block that point saw freed (and ASan or TSan stop the run first). */
  gc_verifier *v = gc_verify_install(w.heap, GC_VERIFY_ABORT);
  gc_domain *main = gc_main_domain(w.heap);
  static worker workers[THREADS];
  pthread_t tids[THREADS];
  for (int t = 0; t < THREADS; t++) {
    memset(&workers[t], 0, sizeof workers[t]);
    workers[t] = (worker){
        &w, t == 0 ? main : gc_domain_create(w.heap), seed + 7919u * (unsigned)t, rounds, 2, {0}};
  }
  gc_enter_blocking(main); /* worker 0's thread runs the main domain */
  for (int t = 0; t < THREADS; t++) pthread_create(&tids[t], NULL, run, &workers[t]);
  for (int t = 0; t < THREADS; t++) pthread_join(tids[t], NULL);
  gc_leave_blocking(main);

  /* Drop every root: all finalizers must run exactly once, then everything is freed. A chain of
   * k finalizable blocks takes k cycles (a finalizable block keeps what it points to alive until
   * its finalizer has run), so collect until the heap is empty, at most one cycle per finalizer
   * and a few more. */
  for (int i = 0; i < SHARED; i++) w.shared[i] = 0;
  gc_stats s;
  for (int c = 0; c < w.fin_count + 4; c++) {
    w.resurrected = 0;
    gc_collect(main, GC_COLLECT_FULL);
    gc_get_stats(w.heap, &s);
    if (s.pool_live_blocks + s.large_blocks == 0) break;
  }
  CHECK_EQ_U(s.pool_live_blocks + s.large_blocks, 0);
  int once = 1;
  for (int id = 0; id < w.fin_count; id++) once &= w.fin_runs[id] == 1;
  CHECK(once);
  CHECK(gc_verify_runs(v, GC_VERIFY_REACH) > 0 && gc_verify_runs(v, GC_VERIFY_SWEPT) > 0);
  if (gc_heap_config(w.heap)->verify & GC_VERIFY_CHECKMARK) {
    CHECK(gc_verify_runs(v, GC_VERIFY_CHECKMARK) > 0);
  }
  CHECK_EQ_U(gc_verify_violations(v), 0); /* abort mode: a violation never gets here */
  gc_verify_uninstall(v);
  for (int i = 0; i < SHARED; i++) gc_root_unregister(w.heap, &w.shared[i]);
  gc_root_unregister(w.heap, &w.resurrected);
  gc_heap_destroy(w.heap);
  pthread_mutex_destroy(&w.lock);
}

static void four_threads_every_pass(void) {
  one_world("verify=reach+swept+checkmark+perf,mintrigger=4K", 6000, 1);
}

static void four_threads_tiny_mark_stack(void) {
  one_world("verify=reach+swept+checkmark+perf,mintrigger=2K,markstack=4", 3000, 2);
}

/* Incremental marking: checkmark follows the snapshot rule (floating garbage, reachable when
 * marking began, is MARKED though unreachable at its end), and satb checks the snapshot. */
#define INCREMENTAL "verify=reach+swept+checkmark+satb+perf,marking=incremental,"

static void four_threads_incremental(void) {
  one_world(INCREMENTAL "markslice=64,mintrigger=4K", 6000, 3);
}

static void four_threads_incremental_tiny_slices(void) {
  one_world(INCREMENTAL "markslice=1,mintrigger=2K,markstack=4", 1500, 4);
}

int main(void) {
  const char *stress = getenv("GCFUZZ_STRESS_SECONDS");
  if (stress != NULL) {
    time_t end = time(NULL) + atoi(stress);
    unsigned worlds = 0;
    while (time(NULL) < end) {
      static const char *const stress_configs[] = {
          "verify=reach+swept+checkmark+perf,mintrigger=4K",
          "verify=reach+swept+checkmark+perf,mintrigger=4K",
          "verify=reach+swept+checkmark+perf,mintrigger=2K,markstack=4",
          INCREMENTAL "markslice=64,mintrigger=4K",
          INCREMENTAL "markslice=1,mintrigger=2K,markstack=4",
      };
      one_world(stress_configs[worlds % 5], 3000, 100 + worlds);
      worlds++;
    }
    fprintf(stderr, "stress: %u worlds in %s s\n", worlds, stress);
    CHECK_MAIN_END();
  }
  RUN(four_threads_every_pass);
  RUN(four_threads_tiny_mark_stack);
  RUN(four_threads_incremental);
  RUN(four_threads_incremental_tiny_slices);
  CHECK_MAIN_END();
}
