/* A long randomized run (not a fuzzer: a seeded PRNG, the same run every time): random graphs
 * of every block kind (scanned, raw and custom; small and large), built and rewired through the
 * model, with pins, Go-style finalizers, root copies and drops, under small triggers, tiny and
 * roomy mark stacks and small sweep budgets, collections of every kind, and the passes on for
 * thousands of cycles, in both marking modes (incremental: the mutations land mid-mark, with
 * tiny and roomy mark slices, and the mode itself changes at run time). A correct collector
 * gives no report at all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "invariants/breaking.h"
#include "invariants/model.h"

enum { ROOTS = 24, MAX_PINNED = 4 };

static uint64_t cycles_total;

static uint64_t rng_state;
static uint64_t rng(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

typedef struct world {
  gc_heap *h;
  gc_domain *d;
  gc_model *m;
  gc_verifier *v;
  int incremental; /* the world began with marking=incremental */
  gc_model_id pinned[MAX_PINNED];
  size_t pinned_count;
  size_t cycles_seen;
} world;

/* Some object reachable from the roots (a root's object, then a few random pointer hops), or
 * GC_MODEL_NONE when the roots are empty. */
static gc_model_id some_object(world *w) {
  gc_model_id at = GC_MODEL_NONE;
  for (int tries = 0; tries < 4 && at == GC_MODEL_NONE; tries++) {
    at = gc_model_root_get(w->m, below(ROOTS));
  }
  if (at == GC_MODEL_NONE) return GC_MODEL_NONE;
  for (size_t hops = below(5); hops > 0; hops--) {
    size_t wsize = gc_model_wsize(w->m, at);
    gc_model_id next = gc_model_load(w->m, at, below(wsize));
    if (next == GC_MODEL_NONE) break;
    at = next;
  }
  return at;
}

static gc_model_id alloc_some(world *w) {
  size_t pick = below(100);
  if (pick < 60) return gc_model_alloc(w->m, w->d, 1 + below(below(20) + 1), GC_TAG_SCAN);
  if (pick < 70) return gc_model_alloc(w->m, w->d, 1 + below(12), GC_TAG_RAW);
  if (pick < 80) return gc_model_alloc_custom(w->m, w->d, 1 + below(4));
  if (pick < 90) return gc_model_alloc(w->m, w->d, 128 + below(200), GC_TAG_SCAN);
  if (pick < 95) return gc_model_alloc(w->m, w->d, 128 + below(300), GC_TAG_RAW);
  return gc_model_alloc_custom(w->m, w->d, 128 + below(40));
}

/* The model stores through gc_store (the write barrier) on its domain, the main one here. */
static void store_ptr(world *w, gc_model_id obj, size_t field, gc_model_id target) {
  gc_model_store_ptr(w->m, obj, field, target);
}

/* Put a new object somewhere reachable: a root, or a field of a reachable scanned object. */
static void op_alloc(world *w) {
  gc_model_id obj = alloc_some(w);
  CHECK(obj != GC_MODEL_NONE);
  if (obj == GC_MODEL_NONE) return;
  /* Fill a few fields so contents are worth comparing. */
  size_t wsize = gc_model_wsize(w->m, obj);
  unsigned tag = gc_model_tag(w->m, obj);
  for (size_t k = below(4); k > 0; k--) {
    size_t f = below(wsize);
    if (tag == GC_TAG_SCAN)
      gc_model_store_imm(w->m, obj, f, (intptr_t)below(1000) - 500);
    else
      gc_model_store_raw(w->m, obj, f, (uintptr_t)rng());
  }
  gc_model_id holder = below(4) != 0 ? some_object(w) : GC_MODEL_NONE;
  if (holder != GC_MODEL_NONE && gc_tag_is_scanned(gc_model_tag(w->m, holder))) {
    store_ptr(w, holder, below(gc_model_wsize(w->m, holder)), obj);
  } else {
    gc_model_root_set(w->m, below(ROOTS), obj);
  }
}

static void op_store(world *w) {
  gc_model_id obj = some_object(w);
  if (obj == GC_MODEL_NONE) return;
  size_t f = below(gc_model_wsize(w->m, obj));
  if (!gc_tag_is_scanned(gc_model_tag(w->m, obj))) {
    gc_model_store_raw(w->m, obj, f, (uintptr_t)rng()); /* refused for a custom's fields 0-1 */
    return;
  }
  switch (below(4)) {
    case 0: gc_model_store_null(w->m, obj, f); break;
    case 1: {
      intptr_t n = (intptr_t)rng() >> 2;
      gc_model_store_imm(w->m, obj, f, n);
      break;
    }
    default: {
      gc_model_id target = some_object(w); /* cycles and sharing welcome */
      if (target != GC_MODEL_NONE) store_ptr(w, obj, f, target);
    }
  }
}

static void op_roots(world *w) {
  size_t r = below(ROOTS);
  switch (below(3)) {
    case 0:
      if (below(4) == 0) gc_model_root_clear(w->m, r);
      break;
    case 1: gc_model_root_set(w->m, r, gc_model_root_get(w->m, below(ROOTS))); break;
    default: gc_model_root_set(w->m, r, some_object(w)); break; /* a load: root = a field */
  }
}

static void op_pin(world *w) {
  if (w->pinned_count < MAX_PINNED && below(2) == 0) {
    gc_model_id obj = some_object(w);
    if (obj == GC_MODEL_NONE) return;
    for (size_t i = 0; i < w->pinned_count; i++) {
      if (w->pinned[i] == obj) return;
    }
    if (gc_model_pin(w->m, obj)) w->pinned[w->pinned_count++] = obj;
  } else if (w->pinned_count > 0) {
    size_t i = below(w->pinned_count);
    CHECK(gc_model_unpin(w->m, w->pinned[i]));
    w->pinned[i] = w->pinned[--w->pinned_count];
  }
}

/* Go-style finalizers: set on some reachable object, or cleared again. */
static void op_finalizer(world *w) {
  gc_model_id obj = some_object(w);
  if (obj == GC_MODEL_NONE) return;
  if (!gc_model_finalizer_clear(w->m, obj)) gc_model_finalizer_set(w->m, obj);
}

/* GC_COLLECT_START: with incremental marking the ops that follow land mid-mark; with marking=stw
 * it is a whole cycle. */
static void op_collect(world *w) {
  static const gc_collect_kind kinds[] = {
      GC_COLLECT_SLICE, GC_COLLECT_SLICE, GC_COLLECT_SLICE, GC_COLLECT_SLICE, GC_COLLECT_START,
      GC_COLLECT_MAJOR, GC_COLLECT_MAJOR, GC_COLLECT_MAJOR, GC_COLLECT_FULL,  GC_COLLECT_FULL,
  };
  gc_collect(w->d, kinds[below(sizeof kinds / sizeof kinds[0])]);
}

static void op_params(world *w) {
  static const char *const choices[] = {
      "markstack=4", "markstack=65536", "markstack=16", "sweep=16",
      "sweep=4096",  "sweep=1000000",   "percent=20",   "percent=100",
      "markslice=1", "markslice=4096",  "marking=stw",  "marking=incremental",
  };
  /* The stop-the-world worlds keep their mode (every pass holds there); the incremental ones
   * also change the slice and the mode itself (a cycle under way ends in the mode it began). */
  size_t n = sizeof choices / sizeof choices[0];
  if (!w->incremental) n -= 4;
  CHECK(gc_set_params(w->h, choices[below(n)]) == GC_OK);
}

static void one_world(uint64_t seed, const char *params, size_t ops) {
  rng_state = seed;
  world w;
  memset(&w, 0, sizeof w);
  w.h = breaking_heap(params);
  w.d = gc_main_domain(w.h);
  w.incremental = gc_heap_config(w.h)->marking == GC_MARKING_INCREMENTAL;
  w.v = gc_verify_install(w.h, GC_VERIFY_COLLECT);
  w.m = gc_model_create(w.h, ROOTS);
  gc_verify_set_model(w.v, w.m);
  for (size_t i = 0; i < ops; i++) {
    size_t pick = below(200);
    if (pick < 90)
      op_alloc(&w);
    else if (pick < 160)
      op_store(&w);
    else if (pick < 172)
      op_roots(&w);
    else if (pick < 175)
      op_pin(&w);
    else if (pick < 180)
      op_finalizer(&w);
    else if (pick < 198)
      op_collect(&w);
    else
      op_params(&w);
    if (gc_verify_violations(w.v) > 0) {
      fprintf(stderr, "seed %llu, op %zu: reports after a correct run\n", (unsigned long long)seed,
              i);
      break;
    }
  }
  gc_collect(w.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(w.v));
  gc_stats s;
  gc_get_stats(w.h, &s);
  CHECK(gc_verify_runs(w.v, GC_VERIFY_REACH) > 0 && gc_verify_runs(w.v, GC_VERIFY_SWEPT) > 0);
  if (!w.incremental) {
    /* The model learns what was freed from its own pass (INCREMENTAL_PASSES leaves it out). */
    CHECK_EQ_U(s.pool_live_blocks + s.large_blocks, gc_model_block_count(w.m));
    CHECK(gc_verify_runs(w.v, GC_VERIFY_CHECKMARK) > 0 && gc_verify_runs(w.v, GC_VERIFY_MODEL) > 0);
  }
  fprintf(stderr,
          "seed %llu (%s): %llu cycles, %llu blocks allocated, %llu freed, %llu mark "
          "overflows, %llu finalizers run, %zu live at the end\n",
          (unsigned long long)seed, params, (unsigned long long)s.cycles,
          (unsigned long long)s.alloc_blocks, (unsigned long long)s.freed_blocks,
          (unsigned long long)s.mark_overflows, (unsigned long long)s.finalizers_run,
          gc_model_block_count(w.m));
  cycles_total += s.cycles;
  gc_model_destroy(w.m);
  gc_verify_uninstall(w.v);
  gc_heap_destroy(w.h);
}

static void random_graphs(void) {
  static const char *const configs[] = {
      "verify=all,mintrigger=512,percent=50,markstack=4,sweep=32",
      "verify=all,mintrigger=2048,sweep=256",
      "verify=all,mintrigger=1024,markstack=8,sweep=16,batch=1,keep=0",
      "verify=all,mintrigger=4096,percent=200,sweep=100000",
  };
  /* Incremental marking, every pass on: checkmark and the model follow the snapshot rule
   * (INV-MARK-2's exception for blocks reachable when marking began or born since), and satb
   * holds the mark to the snapshot itself. */
#define INCREMENTAL_PASSES "verify=all,marking=incremental,"
  static const char *const incremental_configs[] = {
      INCREMENTAL_PASSES "markslice=64,mintrigger=512,percent=50,markstack=4,sweep=32",
      INCREMENTAL_PASSES "markslice=1,mintrigger=2048,sweep=256",
      INCREMENTAL_PASSES "markslice=16,mintrigger=1024,markstack=8,sweep=16,batch=1,keep=0",
      INCREMENTAL_PASSES "markslice=4096,mintrigger=4096,percent=200,sweep=100000",
  };
#undef INCREMENTAL_PASSES
  /* More worlds by hand: GCFUZZ_RANDOM_WORLDS=500 bazel-bin/invariants/random_test */
  const char *env = getenv("GCFUZZ_RANDOM_WORLDS");
  uint64_t worlds = env != NULL ? strtoull(env, NULL, 10) : 6;
  for (uint64_t seed = 1; seed <= worlds && check_failures == 0; seed++) {
    one_world(seed, configs[seed % 4], 8000);
  }
  for (uint64_t seed = 1; seed <= worlds && check_failures == 0; seed++) {
    one_world(seed, incremental_configs[seed % 4], 8000);
  }
  fprintf(stderr, "%llu cycles in all\n", (unsigned long long)cycles_total);
  CHECK(cycles_total >= 4000 || worlds < 6);
}

int main(void) {
  RUN(random_graphs);
  CHECK_MAIN_END();
}
