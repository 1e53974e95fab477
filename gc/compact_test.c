/* Compaction (gc_compact, the `compact` parameter): the graph survives with its identities and
 * contents, blocks that must stay stay, finalizers and weak references follow moved blocks,
 * orphans' pools compact, a domain in a blocking section is compacted around, the statistics
 * stay exact, and every verification pass is clean at the compaction's hook. */
#include <stdlib.h>
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/heap.h"
#include "gc/pool.h"
#include "gc/sizeclass.h"
#include "invariants/report.h"
#include "invariants/verify.h"

/* A heap with every pass at every point, verifier in collect mode. */
typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_verifier *v;
} fixture;

static void fixture_open(fixture *f, const char *params) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  if (gc_config_parse(&cfg, "verify=all", err, sizeof err) != GC_OK) abort();
  if (params != NULL && gc_config_parse(&cfg, params, err, sizeof err) != GC_OK) {
    fprintf(stderr, "%s\n", err);
    abort();
  }
  f->h = gc_heap_create(&cfg);
  f->d = gc_main_domain(f->h);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
}

static void expect_clean(fixture *f) {
  const gc_verify_reports *r = gc_verify_reports_of(f->v);
  if (r->count + r->dropped != 0) {
    gc_verify_reports_print(r, stderr);
    CHECK(0);
  }
  gc_verify_clear(f->v);
}

static void fixture_close(fixture *f) {
  expect_clean(f);
  gc_verify_uninstall(f->v);
  gc_heap_destroy(f->h);
}

static int in_pool(gc_heap *h, gc_value v, gc_value other) {
  (void)h;
  return gc_pool_of_hp(gc_hp_val(v)) == gc_pool_of_hp(gc_hp_val(other));
}

/* ---- A random graph with a shadow model --------------------------------------------------- */

enum { NODES = 4000, ROOTS = 64 };

typedef struct shadow {
  gc_value block; /* the block now (updated from the roots after a compaction) */
  size_t wsize;   /* its fields */
  unsigned tag;   /* GC_TAG_SCAN or GC_TAG_RAW */
  intptr_t id;    /* field 0 (an immediate) or raw word 0 */
  int edge[4];    /* scanned: fields 1..: shadow indices, -1 for an immediate */
  int kept;
} shadow;

static unsigned long long rng = 88172645463325252ull;
static unsigned next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)rng;
}

/* Every node's block through a walk from the roots: same contents as the shadow says, the
 * identities (which node a field names) intact. */
static void compare_graph(shadow *s, gc_value *roots) {
  /* Blocks now, from the roots: root i holds node i (kept nodes only). */
  for (int i = 0; i < NODES; i++) s[i].block = 0;
  for (int i = 0; i < ROOTS; i++) s[i].block = roots[i];
  /* Fields name nodes; follow until fixed point (the graph is small). */
  for (int round = 0; round < NODES; round++) {
    int changed = 0;
    for (int i = 0; i < NODES; i++) {
      if (s[i].block == 0 || s[i].tag != GC_TAG_SCAN) continue;
      for (int k = 0; k < 4 && (size_t)k + 1 < s[i].wsize; k++) {
        int j = s[i].edge[k];
        if (j < 0) continue;
        gc_value v = GC_FIELD(s[i].block, k + 1);
        if (s[j].block == 0) {
          s[j].block = v;
          changed = 1;
        } else {
          CHECK(s[j].block == v); /* one node, one block, whoever names it */
        }
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < NODES; i++) {
    if (!s[i].kept) continue;
    CHECK(s[i].block != 0);
    if (s[i].block == 0) continue;
    CHECK_EQ_U(gc_wsize(s[i].block), s[i].wsize);
    CHECK_EQ_U(gc_tag(s[i].block), s[i].tag);
    if (s[i].tag == GC_TAG_SCAN) {
      CHECK(GC_FIELD(s[i].block, 0) == gc_val_int(s[i].id));
    } else {
      CHECK(GC_FIELD(s[i].block, 0) == (gc_value)s[i].id);
    }
  }
}

static void graph_survives(const char *params) {
  fixture f;
  fixture_open(&f, params);
  shadow *s = calloc(NODES, sizeof *s);
  gc_value roots[ROOTS] = {0};
  gc_frame frame;
  gc_frame_push(f.d, &frame, roots, ROOTS);
  gc_value *all = calloc(NODES, sizeof *all);
  gc_root_register(f.h, &all[0]); /* not used: the nodes live through a holder below */
  gc_value holder = gc_alloc(f.d, NODES, GC_TAG_SCAN);
  gc_root_register(f.h, &holder);
  for (int i = 0; i < NODES; i++) {
    s[i].wsize = 1 + next_rand() % 5;
    s[i].tag = next_rand() % 4 == 0 ? GC_TAG_RAW : GC_TAG_SCAN;
    s[i].id = 1000 + i;
    gc_value b = gc_alloc(f.d, s[i].wsize, s[i].tag);
    GC_FIELD(b, 0) = s[i].tag == GC_TAG_SCAN ? gc_val_int(s[i].id) : (gc_value)s[i].id;
    GC_FIELD(holder, i) = b;
  }
  for (int i = 0; i < NODES; i++) {
    for (int k = 0; k < 4; k++) s[i].edge[k] = -1;
    if (s[i].tag != GC_TAG_SCAN) continue;
    for (int k = 0; k < 4 && (size_t)k + 1 < s[i].wsize; k++) {
      int j = next_rand() % 3 == 0 ? -1 : (int)(next_rand() % NODES);
      s[i].edge[k] = j;
      GC_FIELD(GC_FIELD(holder, i), k + 1) = j < 0 ? gc_val_int(k) : GC_FIELD(holder, j);
    }
  }
  for (int i = 0; i < ROOTS; i++) roots[i] = GC_FIELD(holder, i);
  /* Drop the holder: what the roots reach lives, the rest (most of it) dies: sparse pools. */
  holder = 0;
  /* Which nodes the roots reach, in the shadow. */
  int *stack = malloc(NODES * sizeof *stack);
  size_t top = 0;
  for (int i = 0; i < ROOTS; i++) {
    s[i].kept = 1;
    stack[top++] = i;
  }
  while (top > 0) {
    int i = stack[--top];
    for (int k = 0; k < 4; k++) {
      int j = s[i].edge[k];
      if (j >= 0 && !s[j].kept) {
        s[j].kept = 1;
        stack[top++] = j;
      }
    }
  }
  free(stack);
  gc_collect(f.d, GC_COLLECT_FULL);
  compare_graph(s, roots);
  gc_stats before, after;
  gc_get_stats(f.h, &before);
  CHECK(gc_compact(f.d) == GC_OK);
  gc_get_stats(f.h, &after);
  CHECK_EQ_U(after.compactions, before.compactions + 1);
  CHECK(after.compact_moved_blocks > before.compact_moved_blocks);
  CHECK(after.compact_pools_released > 0);
  CHECK(after.pool_words < before.pool_words);
  CHECK_EQ_U(after.pool_live_blocks, before.pool_live_blocks);
  CHECK_EQ_U(after.pool_live_words, before.pool_live_words);
  CHECK_EQ_U(after.pool_words, before.pool_words - after.compact_pools_released * GC_POOL_WSIZE);
  CHECK_EQ_U(after.alloc_blocks - after.freed_blocks, before.alloc_blocks - before.freed_blocks);
  CHECK(gc_verify_runs(f.v, GC_VERIFY_MOVED) >= 2);
  compare_graph(s, roots);
  /* The heap goes on: another cycle, another compaction (nothing left to move), allocation. */
  gc_collect(f.d, GC_COLLECT_FULL);
  compare_graph(s, roots);
  CHECK(gc_compact(f.d) == GC_OK);
  compare_graph(s, roots);
  for (int i = 0; i < 1000; i++) gc_alloc(f.d, 3, GC_TAG_SCAN);
  gc_collect(f.d, GC_COLLECT_FULL);
  compare_graph(s, roots);
  gc_frame_pop(f.d, &frame);
  gc_root_unregister(f.h, &holder);
  gc_root_unregister(f.h, &all[0]);
  free(all);
  free(s);
  fixture_close(&f);
}

static void graph_survives_stw(void) { graph_survives("marking=stw"); }
static void graph_survives_incremental(void) { graph_survives("marking=incremental"); }

/* ---- Blocks that stay ------------------------------------------------------------------------ */

/* Many sparse pools of one class; `keep[i]` the survivors, one per pool-ful of garbage. */
static size_t sparse_class(fixture *f, gc_value *keep, size_t n) {
  gc_value holder = gc_alloc(f->d, n, GC_TAG_SCAN);
  gc_root_register(f->h, &holder);
  size_t per_pool = gc_slots_of_class(gc_class_of_whsize[3]);
  for (size_t i = 0; i < n * per_pool; i++) {
    gc_value b = gc_alloc(f->d, 2, GC_TAG_SCAN);
    GC_FIELD(b, 0) = gc_val_int((intptr_t)i);
    if (i % per_pool == per_pool / 2) GC_FIELD(holder, i / per_pool) = b;
  }
  for (size_t i = 0; i < n; i++) keep[i] = GC_FIELD(holder, i);
  gc_root_unregister(f->h, &holder);
  return per_pool;
}

static void pinned_and_conservative_stay(void) {
  fixture f;
  fixture_open(&f, "marking=stw");
  enum { N = 12 };
  gc_value keep[N];
  gc_frame frame;
  gc_frame_push(f.d, &frame, keep, N);
  sparse_class(&f, keep, N);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_value pinned = keep[0], named = keep[1], interior = keep[2];
  gc_pin(f.h, pinned);
  uintptr_t range[2] = {(uintptr_t)named, (uintptr_t)interior + 8};
  gc_conservative_add(f.h, range, sizeof range);
  CHECK(gc_compact(f.d) == GC_OK);
  CHECK(keep[0] == pinned);
  CHECK(keep[1] == named);
  CHECK(keep[2] == interior);
  CHECK(GC_FIELD(pinned, 0) != 0 && gc_wsize(pinned) == 2);
  /* Three pools kept for three blocks that must stay; the other nine blocks fit in them. */
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.compact_moved_blocks, N - 3);
  for (int i = 3; i < N; i++) {
    CHECK(in_pool(f.h, keep[i], pinned) || in_pool(f.h, keep[i], named) ||
          in_pool(f.h, keep[i], interior));
  }
  gc_conservative_remove(f.h, range);
  gc_unpin(f.h, pinned);
  gc_frame_pop(f.d, &frame);
  fixture_close(&f);
}

/* ---- Finalizers and weak references follow ------------------------------------------------- */

static gc_value finalized;
static int fin_runs;
static void note_fin(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)user;
  finalized = block;
  fin_runs++;
}

static void finalizers_and_weak_follow(void) {
  fixture f;
  fixture_open(&f, "marking=stw");
  enum { N = 10 };
  gc_value keep[N + 2];
  memset(keep, 0, sizeof keep);
  gc_frame frame;
  gc_frame_push(f.d, &frame, keep, N + 2);
  sparse_class(&f, keep, N);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_value old[N];
  memcpy(old, keep, sizeof old);
  gc_finalizer_set(f.h, keep[N - 1], note_fin, NULL);
  keep[N] = gc_weak_alloc(f.d, keep[N - 2], 1);
  keep[N + 1] = gc_ephemeron_alloc(f.d, keep[N - 3], keep[N - 4], 0);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK(gc_compact(f.d) == GC_OK);
  int moved = 0;
  for (int i = 0; i < N; i++) moved += keep[i] != old[i];
  CHECK(moved > 0);
  CHECK(gc_weak_get(f.d, keep[N]) == keep[N - 2]);
  CHECK(gc_ephemeron_key(f.d, keep[N + 1]) == keep[N - 3]);
  CHECK(gc_ephemeron_datum(f.d, keep[N + 1]) == keep[N - 4]);
  /* The finalizer's record followed its block: dropping it queues the finalizer with the block
   * where it is now. */
  gc_value fin_block = keep[N - 1];
  CHECK((GC_FIELD(fin_block, 0) & 1) == 1); /* its contents came along */
  keep[N - 1] = 0;
  fin_runs = 0;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(fin_runs, 1);
  CHECK(finalized == fin_block);
  /* The weak target dies: its slot is cleared, not left naming an old slot. */
  keep[N - 2] = 0;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK(gc_weak_get(f.d, keep[N]) == 0);
  gc_frame_pop(f.d, &frame);
  fixture_close(&f);
}

/* ---- Orphans, two domains -------------------------------------------------------------------- */

static void orphans_compact(void) {
  fixture f;
  fixture_open(&f, "marking=stw");
  gc_domain *other = gc_domain_spawn(f.d);
  gc_enter_blocking(f.d);
  gc_leave_blocking(other);
  enum { N = 8 };
  gc_value keep[N];
  gc_frame frame;
  gc_frame_push(other, &frame, keep, N);
  /* sparse_class allocates on f->d: use a fixture view on the other domain. */
  fixture fo = f;
  fo.d = other;
  sparse_class(&fo, keep, N);
  gc_collect(other, GC_COLLECT_FULL);
  /* The blocks go to a global holder, and the domain terminates: its pools are orphans. */
  gc_value holder = gc_alloc(other, N, GC_TAG_SCAN);
  for (int i = 0; i < N; i++) GC_FIELD(holder, i) = keep[i];
  gc_root_register(f.h, &holder);
  gc_frame_pop(other, &frame);
  gc_domain_terminate(other);
  gc_leave_blocking(f.d);
  gc_stats before, after;
  gc_get_stats(f.h, &before);
  CHECK(before.orphan_pool_words > 0);
  CHECK(gc_compact(f.d) == GC_OK);
  gc_get_stats(f.h, &after);
  CHECK_EQ_U(after.orphan_pool_words, 0);
  CHECK(after.compact_pools_released >= N - 1);
  for (int i = 0; i < N; i++) CHECK(GC_FIELD(GC_FIELD(holder, i), 0) != 0);
  for (int i = 1; i < N; i++) {
    CHECK(in_pool(f.h, GC_FIELD(holder, i), GC_FIELD(holder, 0)));
  }
  gc_root_unregister(f.h, &holder);
  fixture_close(&f);
}

static void domain_in_blocking_section(void) {
  fixture f;
  fixture_open(&f, NULL);
  gc_domain *other = gc_domain_spawn(f.d);
  enum { N = 8 };
  gc_value theirs[N], ours[N];
  gc_frame their_frame, our_frame;
  gc_frame_push(other, &their_frame, theirs, N);
  gc_frame_push(f.d, &our_frame, ours, N);
  /* The other domain's blocks, in its own pools, held by its own frame. */
  gc_enter_blocking(f.d);
  gc_leave_blocking(other);
  fixture fo = f;
  fo.d = other;
  sparse_class(&fo, theirs, N);
  gc_enter_blocking(other);
  gc_leave_blocking(f.d);
  sparse_class(&f, ours, N);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_value old_theirs[N];
  memcpy(old_theirs, theirs, sizeof old_theirs);
  CHECK(gc_compact(f.d) == GC_OK); /* `other` stays in its blocking section: claimed */
  int moved = 0;
  for (int i = 0; i < N; i++) {
    moved += theirs[i] != old_theirs[i];
    CHECK((GC_FIELD(theirs[i], 0) & 1) == 1); /* the immediate sparse_class stored */
    CHECK(in_pool(f.h, theirs[i], theirs[0]));
    CHECK(in_pool(f.h, ours[i], ours[0]));
  }
  CHECK(moved > 0);
  gc_frame_pop(f.d, &our_frame);
  gc_enter_blocking(f.d);
  gc_leave_blocking(other);
  gc_frame_pop(other, &their_frame);
  gc_domain_terminate(other);
  gc_leave_blocking(f.d);
  fixture_close(&f);
}

/* ---- The parameter --------------------------------------------------------------------------- */

static void full_collection_compacts_by_parameter(void) {
  fixture f;
  fixture_open(&f, "marking=stw,compact=10");
  enum { N = 10 };
  gc_value keep[N];
  gc_frame frame;
  gc_frame_push(f.d, &frame, keep, N);
  sparse_class(&f, keep, N);
  gc_collect(f.d, GC_COLLECT_FULL); /* sparse after the sweep: compacts in the same stop */
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.compactions, 1);
  CHECK_EQ_U(s.compact_pools_released, N - 1);
  for (int i = 1; i < N; i++) CHECK(in_pool(f.h, keep[i], keep[0]));
  gc_collect(f.d, GC_COLLECT_FULL); /* dense now: no compaction */
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.compactions, 1);
  gc_set_params(f.h, "compact=off");
  gc_frame_pop(f.d, &frame);
  fixture_close(&f);
}

static void refused_in_a_hook(void) {
  fixture f;
  fixture_open(&f, NULL);
  f.d->in_collection = 1; /* as a hook runs */
  CHECK(gc_compact(f.d) == GC_ERR_IN_COLLECTION);
  f.d->in_collection = 0;
  CHECK(gc_compact(f.d) == GC_OK);
  fixture_close(&f);
}

int main(void) {
  RUN(graph_survives_stw);
  RUN(graph_survives_incremental);
  RUN(pinned_and_conservative_stay);
  RUN(finalizers_and_weak_follow);
  RUN(orphans_compact);
  RUN(domain_in_blocking_section);
  RUN(full_collection_compacts_by_parameter);
  RUN(refused_in_a_hook);
  CHECK_MAIN_END();
}
