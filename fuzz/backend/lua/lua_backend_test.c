/* Tests of the Lua backend (fuzz_backend_lua): the table driven directly, op by op; random
 * programs against a small model with the deep check after every op; the leak bound measured;
 * and heaps broken on purpose, each break reported by exactly its finding kind.
 * Prints "N passed, M failed". */
#include "fuzz/backend/lua/lua_test_kit.h"

/* ---- The table, op by op -------------------------------------------------------------------- */

static void fresh_heap_is_clean(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(h != NULL);
  CHECK(clean(h));
  CHECK(B->live_bytes(h) > 0);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 0);
  CHECK(strcmp(B->name, "lua") == 0 && fuzz_backend_find("lua") == B);
  CHECK(B->tunable_count == 7 && strcmp(B->tunables[0].name, "mode") == 0);
  B->destroy(h);
  fuzz_backend_config bad = {.cells = 4, .params = "fast", .out = stderr};
  CHECK(B->create(&bad) == NULL);
  CHECK(make_heap(&log, CELLS, "generational") != NULL);
  CHECK(G(luab_state(log.h))->gckind == KGC_GEN);
  CHECK(clean(log.h));
  B->destroy(log.h);
}

static void alloc_and_identity(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 3, 101));
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_RAW, 4, 102));
  CHECK(alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1151, 103));
  CHECK(id_of(h, 0) == 101 && id_of(h, 1) == 102 && id_of(h, 2) == 103);
  uint64_t id, check;
  CHECK(!B->get_ident(h, 3, &id, &check));
  for (size_t w = 0; w < 4; w++) CHECK(B->raw_read(h, 1, w) == 0);
  for (size_t w = 0; w < 4; w++) B->raw_write(h, 1, w, UINT64_C(0xfeedface00000000) | w);
  for (size_t w = 0; w < 4; w++) CHECK(B->raw_read(h, 1, w) == (UINT64_C(0xfeedface00000000) | w));
  B->set_ident(h, 0, UINT64_MAX, 7); /* identity words are 64-bit patterns */
  CHECK(B->get_ident(h, 0, &id, &check) && id == UINT64_MAX && check == 7);
  CHECK(clean(h));
  B->destroy(h);
}

static void store_and_load(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  int64_t v = -1;
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 4, 1));
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 2));
  B->store(h, 0, 0, 1);
  B->store_int(h, 0, 1, 200);
  B->store(h, 0, 2, 5); /* cell 5 is empty: the field stays nil */
  CHECK(B->load(h, 3, 0, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 3) == 2);
  CHECK(B->load(h, 4, 0, 1, &v) == FUZZ_FIELD_INT && v == 200 && id_of(h, 4) == 0);
  CHECK(B->load(h, 3, 0, 2, &v) == FUZZ_FIELD_EMPTY && id_of(h, 3) == 0);
  CHECK(B->load(h, 3, 0, 3, &v) == FUZZ_FIELD_EMPTY);
  B->store_int(h, 0, 0, 0);
  CHECK(B->load(h, 3, 0, 0, &v) == FUZZ_FIELD_INT && v == 0);
  B->copy(h, 6, 1);
  CHECK(id_of(h, 6) == 2);
  B->clear(h, 6);
  CHECK(id_of(h, 6) == 0);
  CHECK(clean(h));
  B->destroy(h);
}
static void every_collection_kind(void) {
  for (int gen = 0; gen < 2; gen++) {
    fin_log log;
    fuzz_bheap *h = make_heap(&log, CELLS, gen ? "generational" : NULL);
    build_chain(h, 50, 500);
    for (int k = FUZZ_COLLECT_SLICE; k <= FUZZ_COLLECT_START; k++) {
      for (unsigned budget = 0; budget < 3; budget++) {
        B->collect(h, (fuzz_collect_kind)k, budget);
        CHECK(clean(h));
        CHECK(chain_intact(h, 50, 500));
      }
    }
    if (!gen) {
      B->collect(h, FUZZ_COLLECT_FULL, 0);
      B->collect(h, FUZZ_COLLECT_START, 0);
      CHECK(G(luab_state(h))->gcstate == GCSpropagate); /* mid-cycle, roots gray */
      CHECK(clean(h));
      for (int i = 0; i < 200 && G(luab_state(h))->gcstate != GCSpause; i++) {
        B->collect(h, FUZZ_COLLECT_SLICE, 0);
        CHECK(clean(h));
      }
    }
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    id_set s;
    CHECK(walk(h, &s) == 0 && s.n == 50);
    CHECK(walk_has(&s, 500) && walk_has(&s, 549) && !walk_has(&s, 1001));
    CHECK(clean(h));
    B->destroy(h);
  }
}

static void full_collection_frees_the_unreachable(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  for (size_t c = 0; c < 10; c++)
    alloc_id(h, c, c % 2 ? FUZZ_SHAPE_RAW : FUZZ_SHAPE_SCAN, 3, 10 + c);
  for (size_t c = 5; c < 10; c++) B->clear(h, c);
  size_t live_before = B->live_bytes(h);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 5);
  for (uint64_t id = 10; id < 15; id++) CHECK(walk_has(&s, id));
  CHECK(B->live_bytes(h) < live_before);
  CHECK(clean(h));
  B->destroy(h);
}

static void finalizer_runs_once_with_its_block(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 2, 7));
  CHECK(B->fin_set(h, 0, 70));
  CHECK(B->fin_set(h, 0, 77)); /* replaces the token */
  CHECK(!B->fin_set(h, 1, 5)); /* an empty cell */
  CHECK(clean(h));
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 0); /* still reachable */
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 1 && log.tokens[0] == 77 && log.ids[0] == 7);
  CHECK(id_of(h, SELF) == 0); /* emptied after the call */
  CHECK(clean(h));
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(log.n == 1);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 0);
  /* Raw blocks, weak references and ephemerons take finalizers too. */
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_RAW, 2, 8));
  CHECK(B->fin_set(h, 0, 80));
  CHECK(B->weak_new(h, 1, 0));
  B->set_ident(h, 1, 9, 27);
  CHECK(B->fin_set(h, 1, 90));
  CHECK(B->ephe_new(h, 2, 0, 1));
  B->set_ident(h, 2, 10, 30);
  CHECK(B->fin_set(h, 2, 100));
  for (size_t c = 0; c < 3; c++) B->clear(h, c);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(log.n == 4);
  CHECK(walk(h, &s) == 0 && s.n == 0);
  CHECK(clean(h));
  B->destroy(h);
}

static void finalizer_resurrects(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  int64_t v;
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 8));
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 9));
  B->store(h, 0, 0, 1);
  B->clear(h, 1);
  CHECK(B->fin_set(h, 0, 88));
  log.resurrect_into = 5;
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 1 && log.ids[0] == 8 && id_of(h, 5) == 8);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(log.n == 1 && id_of(h, 5) == 8);
  CHECK(B->load(h, 6, 5, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 6) == 9); /* what hangs below */
  CHECK(clean(h));
  CHECK(B->fin_set(h, 5, 89)); /* re-armed after it ran */
  log.resurrect_into = SIZE_MAX;
  B->clear(h, 5);
  B->clear(h, 6);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(log.n == 2 && log.tokens[1] == 89);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 0);
  CHECK(clean(h));
  B->destroy(h);
}

static void finalizer_cleared(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 11));
  CHECK(!B->fin_clear(h, 0)); /* never armed */
  CHECK(B->fin_set(h, 0, 1));
  CHECK(B->fin_clear(h, 0));
  CHECK(!B->fin_clear(h, 0));
  CHECK(!B->fin_clear(h, 3)); /* an empty cell */
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(log.n == 0);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 0); /* separated once, then freed: FULL runs two cycles */
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 12));
  CHECK(B->fin_set(h, 0, 2));
  log.resurrect_into = 0;
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 1 && id_of(h, 0) == 12);
  CHECK(!B->fin_clear(h, 0)); /* it ran */
  CHECK(clean(h));
  B->destroy(h);
}

static void weak_references(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 20));
  CHECK(B->weak_new(h, 0, 1));
  B->set_ident(h, 0, 21, 63);
  CHECK(B->weak_get(h, 2, 0) && id_of(h, 2) == 20);
  B->clear(h, 2);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(B->weak_get(h, 2, 0) && id_of(h, 2) == 20); /* the target lives */
  B->clear(h, 1);
  B->clear(h, 2);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(!B->weak_get(h, 2, 0) && id_of(h, 2) == 0);
  CHECK(id_of(h, 0) == 21);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 1 && walk_has(&s, 21));
  CHECK(B->weak_new(h, 3, 9)); /* an empty target */
  CHECK(!B->weak_get(h, 2, 3));
  CHECK(clean(h));
  B->destroy(h);
}

static void ephemerons(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  int64_t v;
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 30));
  CHECK(alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 31));
  CHECK(B->ephe_new(h, 0, 1, 2));
  B->set_ident(h, 0, 32, 96);
  B->clear(h, 2);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(B->ephe_get(h, 3, 0) && id_of(h, 3) == 31); /* the key lives: so does the datum */
  B->clear(h, 3);
  B->clear(h, 1);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(!B->ephe_get(h, 3, 0) && id_of(h, 3) == 0);
  id_set s;
  CHECK(walk(h, &s) == 0 && s.n == 1 && walk_has(&s, 32));
  /* A datum that points to its own key keeps neither alive. */
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 33));
  CHECK(alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 34));
  B->store(h, 2, 0, 1);
  CHECK(B->ephe_new(h, 4, 1, 2));
  B->set_ident(h, 4, 35, 105);
  CHECK(B->ephe_get(h, 3, 4) && B->load(h, 5, 3, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 5) == 33);
  for (size_t c = 1; c < 6; c++)
    if (c != 4) B->clear(h, c);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(!B->ephe_get(h, 3, 4));
  CHECK(walk(h, &s) == 0 && s.n == 2 && walk_has(&s, 32) && walk_has(&s, 35));
  /* An empty datum: the entry still answers while the key lives. */
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_RAW, 1, 36));
  CHECK(B->ephe_new(h, 6, 1, 9));
  CHECK(B->ephe_get(h, 3, 6) && id_of(h, 3) == 0);
  CHECK(clean(h));
  B->destroy(h);
}

/* Chains of ephemerons (each datum the next one's key, only the first key rooted), in every
 * arrangement of the chain over the cells, in both modes: the order the collector meets the
 * tables in varies with it, and only its convergence loop keeps the far data alive in the
 * unlucky orders. */
static void ephemeron_chains_converge(void) {
  enum { LEN = 4, PERMS = 24, FIRST = 8 };
  for (int gen = 0; gen < 2; gen++) {
    fin_log log;
    fuzz_bheap *h = make_heap(&log, CELLS, gen ? "generational" : NULL);
    for (int perm = 0; perm < PERMS; perm++) {
      int place[LEN], avail[LEN], code = perm, fact = PERMS;
      for (int i = 0; i < LEN; i++) avail[i] = FIRST + i;
      for (int i = 0; i < LEN; i++) { /* the perm-th arrangement (its Lehmer code) */
        fact /= LEN - i;
        int idx = code / fact;
        code %= fact;
        place[i] = avail[idx];
        for (int j = idx; j + 1 < LEN - i; j++) avail[j] = avail[j + 1];
      }
      CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 60)); /* link 0, rooted */
      for (int i = 1; i <= LEN; i++)
        CHECK(alloc_id(h, (size_t)i, FUZZ_SHAPE_SCAN, 1, 60 + (uint64_t)i));
      for (int i = 0; i < LEN; i++) { /* ephemeron i: key = link i, datum = link i + 1 */
        CHECK(B->ephe_new(h, (size_t)place[i], (size_t)i, (size_t)i + 1));
        B->set_ident(h, (size_t)place[i], 70 + (uint64_t)i, 3 * (70 + (uint64_t)i));
      }
      for (int i = 1; i <= LEN; i++) B->clear(h, (size_t)i);
      B->collect(h, FUZZ_COLLECT_FULL, 0);
      CHECK(clean(h));
      for (int i = 0; i < LEN; i++) {
        CHECK(B->ephe_get(h, 7, (size_t)place[i]) && id_of(h, 7) == 61 + (uint64_t)i);
        B->clear(h, 7);
      }
      for (size_t c = 0; c < CELLS; c++) B->clear(h, c);
      B->collect(h, FUZZ_COLLECT_FULL, 0);
    }
    id_set s;
    CHECK(walk(h, &s) == 0 && s.n == 0);
    CHECK(clean(h));
    B->destroy(h);
  }
}

/* Lua clears weak values of a block about to be finalized before its finalizer runs (and keeps
 * weak keys until the next cycle), even if the finalizer resurrects it. */
static void weak_cleared_before_finalizer(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 80));
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 81));
  CHECK(B->weak_new(h, 2, 0));
  CHECK(B->ephe_new(h, 3, 0, 1));
  CHECK(B->fin_set(h, 0, 8));
  B->clear(h, 0);
  B->clear(h, 1);
  log.resurrect_into = 5;
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 1 && id_of(h, 5) == 80);
  CHECK(!B->weak_get(h, 6, 2));
  CHECK(B->ephe_get(h, 6, 3) && id_of(h, 6) == 81);
  CHECK(clean(h));
  B->destroy(h);
}

/* Generational mode: an old block touched by a store, a survivor that pointed to a new block
 * before it aged, a young finalized block resurrected as OLD1: each keeps its referent through
 * minor collections. */
static void generational_referents_survive(void) {
  fin_log log;
  int64_t v;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 2, 90)); /* old once generational */
  B->tune(h, 0, 1);
  CHECK(alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 91));
  B->store(h, 0, 0, 1); /* old -> new: the barrier touches the old block */
  B->clear(h, 1);
  CHECK(alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 92)); /* will be a survivor */
  B->collect(h, FUZZ_COLLECT_SLICE, 0);
  CHECK(alloc_id(h, 3, FUZZ_SHAPE_SCAN, 1, 93));
  B->store(h, 2, 0, 3); /* survivor (white) -> new: no barrier needed */
  B->clear(h, 3);
  CHECK(alloc_id(h, 4, FUZZ_SHAPE_SCAN, 1, 94)); /* armed, then a survivor */
  CHECK(B->fin_set(h, 4, 4));
  B->collect(h, FUZZ_COLLECT_SLICE, 0);
  CHECK(alloc_id(h, 5, FUZZ_SHAPE_SCAN, 1, 95));
  B->store(h, 4, 0, 5);
  B->clear(h, 5);
  B->clear(h, 4);
  log.resurrect_into = 6;
  for (int i = 0; i < 6; i++) {
    B->collect(h, FUZZ_COLLECT_SLICE, 0);
    CHECK(clean(h));
    CHECK(B->load(h, 7, 0, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 7) == 91);
    CHECK(B->load(h, 7, 2, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 7) == 93);
    B->clear(h, 7);
    if (log.n > 0) {
      CHECK(id_of(h, 6) == 94);
      CHECK(B->load(h, 7, 6, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 7) == 95);
      B->clear(h, 7);
    }
  }
  CHECK(log.n == 1);
  CHECK(G(luab_state(h))->gckind == KGC_GEN);
  B->destroy(h);
}

static void injected_failures(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 40));
  B->fail_after(h, 1);
  CHECK(!B->alloc(h, 0, FUZZ_SHAPE_SCAN, 1));
  CHECK(id_of(h, 0) == 0); /* dst is empty */
  CHECK(clean(h));
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 41));
  B->fail_after(h, 2); /* a scanned block is two allocations: the table fails half built */
  CHECK(!B->alloc(h, 1, FUZZ_SHAPE_SCAN, 1));
  CHECK(clean(h));
  for (unsigned n = 1; n <= 6; n++) {
    B->fail_after(h, n);
    int failures = 0;
    for (int i = 0; i < 8; i++)
      failures += !alloc_id(h, 2 + (size_t)i, FUZZ_SHAPE_SCAN, 2, 50 + (uint64_t)i);
    CHECK(failures == 1);
    CHECK(clean(h));
  }
  B->fail_after(h, 1);
  CHECK(!B->weak_new(h, 12, 0) && id_of(h, 12) == 0);
  B->fail_after(h, 1);
  CHECK(!B->ephe_new(h, 12, 0, 0));
  B->fail_after(h, 1);
  B->store(h, 0, 0, 2); /* ops that cannot fail do not take the failure */
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(!B->alloc(h, 13, FUZZ_SHAPE_RAW, 1));
  CHECK(id_of(h, 0) == 41);
  CHECK(clean(h));
  B->destroy(h);
}

static void tunables_reach_their_corners(void) {
  static const unsigned values[] = {0, 1, 2, 127, 254, 255};
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  build_chain(h, 20, 700);
  for (unsigned p = 0; p < B->tunable_count; p++) {
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
      B->tune(h, p, values[i]);
      for (int k = 0; k < 30; k++) alloc_id(h, 3, FUZZ_SHAPE_SCAN, 4, 900 + (uint64_t)k);
      B->collect(h, FUZZ_COLLECT_SLICE, values[i]);
      CHECK(clean(h));
      CHECK(chain_intact(h, 20, 700));
    }
  }
  global_State *g = G(luab_state(h));
  B->tune(h, 1, 0);
  B->tune(h, 3, 255);
  B->tune(h, 5, 255);
  CHECK(getgcparam(g->gcpause) == 0 && g->gcstepsize == 40 && getgcparam(g->genmajormul) == 1020);
  B->tune(h, 0, 1);
  CHECK(g->gckind == KGC_GEN);
  B->tune(h, 0, 0);
  CHECK(g->gckind == KGC_INC);
  B->tune(h, 6, 1);
  CHECK(g->gcstp == GCSTPUSR);
  B->tune(h, 6, 0);
  CHECK(g->gcstp == 0);
  CHECK(clean(h));
  B->destroy(h);
}

/* Leak bound: what a fresh heap costs, and the worst block (an ephemeron) against the model's
 * 8 (fields + 2) bytes a block. */
static void leak_bound_holds(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, 0, NULL);
  size_t base0 = B->live_bytes(h);
  B->destroy(h);
  h = make_heap(&log, 1024, NULL);
  size_t base1024 = B->live_bytes(h);
  fprintf(stderr, "  fresh heap: %zu bytes with no cells, %zu with 1024 (%.1f a cell)\n", base0,
          base1024, (double)(base1024 - base0) / 1024);
  for (unsigned d = 1; d < 4; d++) B->domain_spawn(h, d);
  size_t domains = B->live_bytes(h) - base1024;
  fprintf(stderr, "  three coroutines: %zu bytes\n", domains);
  CHECK(B->leak_slack_bytes >= base1024 + domains);
  size_t kept = 0;
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  kept += 3 * 8;
  for (size_t c = 1; c < 1000; c++) {
    switch (c % 4) {
      case 0:
        B->ephe_new(h, c, 0, 0);
        kept += 16;
        break;
      case 1:
        B->weak_new(h, c, 0);
        kept += 16;
        break;
      case 2:
        alloc_id(h, c, FUZZ_SHAPE_SCAN, 1, c);
        kept += 3 * 8;
        break;
      default:
        alloc_id(h, c, FUZZ_SHAPE_RAW, 1, c);
        kept += 3 * 8;
        break;
    }
  }
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  size_t live = B->live_bytes(h);
  double bound = (double)kept * (1 + B->leak_slack_factor) + (double)B->leak_slack_bytes;
  fprintf(stderr, "  1000 small blocks: %zu live bytes for %zu kept (bound %.0f)\n", live, kept,
          bound);
  CHECK((double)live <= bound);
  for (size_t c = 1; c < 1000; c++) B->clear(h, c);
  for (size_t c = 1; c < 400; c++) B->ephe_new(h, c, 0, 0);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  kept = 3 * 8 + 399 * 16;
  live = B->live_bytes(h);
  bound = (double)kept * (1 + B->leak_slack_factor) + (double)B->leak_slack_bytes;
  fprintf(stderr, "  399 ephemerons: %zu live bytes beyond the fresh heap for %zu kept\n",
          live - base1024, kept);
  CHECK((double)live <= bound);
  CHECK(clean(h));
  B->destroy(h);
}

/* ---- Random programs against a model -------------------------------------------------------- */

enum { MODEL_OBJS = 2048, MODEL_FIELDS = 6, RCELLS = 12 };
enum { M_SCAN, M_RAW, M_WEAK, M_EPHE };

typedef struct mobj {
  int kind;
  size_t n;
  int field[MODEL_FIELDS]; /* -1 empty, -2 an integer (ival), else an object */
  int64_t ival[MODEL_FIELDS];
  uint64_t word[MODEL_FIELDS];
  int a, b;         /* weak: target; ephemeron: key, datum (-1: none) */
  int fin;          /* 0 none, 1 armed, 2 ran */
  int at_risk;      /* its target or key was unreachable once: a get may answer empty */
  int seen_cleared; /* a get answered empty: it must stay so */
  int keep_now;     /* its finalizer ran, or a finalizer's copy dropped it from a cell, during
                      * the current op: the collection may keep it until its next cycle */
} mobj;

typedef struct model {
  fuzz_bheap *h;
  mobj obj[MODEL_OBJS];
  int nobj;
  int cell[RCELLS + 1];
  uint64_t rng;
  int bad;
} model;

static uint64_t next_rand(model *m) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return m->rng;
}

static unsigned pick(model *m, unsigned n) { return (unsigned)(next_rand(m) % n); }

static uint64_t mid(int k) { return UINT64_C(0x6766757a00000000) | (uint64_t)k; }

static void fail(model *m, const char *what, int k) {
  if (!m->bad && k >= 0 && k < m->nobj)
    fprintf(stderr, "  random program: %s (object %d: kind %d, finalizer %d, a %d, b %d)\n", what,
            k, m->obj[k].kind, m->obj[k].fin, m->obj[k].a, m->obj[k].b);
  else if (!m->bad)
    fprintf(stderr, "  random program: %s\n", what);
  m->bad = 1;
}

/* Strong reachability from the cells (and from armed objects when `armed`): scanned fields and
 * ephemeron data whose key is reached, to a fixed point. */
static void reach(const model *m, char *mark, int armed) {
  memset(mark, 0, (size_t)m->nobj);
  int stack[MODEL_OBJS * 2], sp = 0;
  for (int c = 0; c <= RCELLS; c++)
    if (m->cell[c] >= 0) stack[sp++] = m->cell[c];
  for (int k = 0; armed && k < m->nobj; k++)
    if (m->obj[k].fin == 1 || m->obj[k].keep_now) stack[sp++] = k;
  for (int changed = 1; changed;) {
    while (sp > 0) {
      int k = stack[--sp];
      if (mark[k]) continue;
      mark[k] = 1;
      const mobj *o = &m->obj[k];
      if (o->kind == M_SCAN)
        for (size_t f = 0; f < o->n; f++)
          if (o->field[f] >= 0 && !mark[o->field[f]]) stack[sp++] = o->field[f];
    }
    changed = 0;
    for (int k = 0; k < m->nobj; k++) {
      const mobj *o = &m->obj[k];
      if (mark[k] && o->kind == M_EPHE && o->a >= 0 && mark[o->a] && o->b >= 0 && !mark[o->b]) {
        stack[sp++] = o->b;
        changed = 1;
      }
    }
  }
}

static void mark_risks(model *m, const char *mark) {
  for (int k = 0; k < m->nobj; k++) {
    mobj *o = &m->obj[k];
    if ((o->kind == M_WEAK || o->kind == M_EPHE) && o->a >= 0 && !mark[o->a]) o->at_risk = 1;
  }
}

static void model_finalize(void *user, uint64_t token) {
  model *m = user;
  int k = (int)token;
  uint64_t id, check;
  if (k < 0 || k >= m->nobj || m->obj[k].fin != 1) fail(m, "a finalizer not armed ran", k);
  if (!B->get_ident(m->h, RCELLS, &id, &check) || id != mid(k)) fail(m, "finalizer block", k);
  m->obj[k].fin = 2;
  m->obj[k].keep_now = 1;
  /* Weak references into what the finalizer resurrects were cleared: at risk. */
  char mark[MODEL_OBJS];
  int saved[RCELLS + 1];
  memcpy(saved, m->cell, sizeof saved);
  for (int c = 0; c <= RCELLS; c++) m->cell[c] = -1;
  m->cell[0] = k;
  reach(m, mark, 0);
  memcpy(m->cell, saved, sizeof saved);
  for (int j = 0; j < m->nobj; j++) {
    mobj *o = &m->obj[j];
    if ((o->kind == M_WEAK || o->kind == M_EPHE) && o->a >= 0 && mark[o->a]) o->at_risk = 1;
  }
  if (pick(m, 3) == 0) {
    int c = (int)pick(m, RCELLS);
    B->copy(m->h, (size_t)c, RCELLS);
    if (m->cell[c] >= 0) m->obj[m->cell[c]].keep_now = 1; /* dropped after it was marked */
    m->cell[c] = k;
  }
}

static int new_obj(model *m, int kind, size_t n) {
  int k = m->nobj++;
  mobj *o = &m->obj[k];
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->n = n;
  o->a = o->b = -1;
  for (size_t f = 0; f < MODEL_FIELDS; f++) o->field[f] = -1;
  return k;
}

static void verify_cells(model *m) {
  for (int c = 0; c < RCELLS; c++) {
    uint64_t id = 0, check = 0;
    int full = B->get_ident(m->h, (size_t)c, &id, &check);
    if (full != (m->cell[c] >= 0) || (full && (id != mid(m->cell[c]) || check != ~id)))
      fail(m, "a cell's identity", m->cell[c]);
  }
}

/* After any collection every strongly reachable block is there; after a full one, nothing else
 * but what finalizers keep. */
static void verify_walk(model *m, int full) {
  char strong[MODEL_OBJS], kept[MODEL_OBJS];
  reach(m, strong, 0);
  reach(m, kept, 1);
  id_set s;
  if (walk(m->h, &s) != 0) fail(m, "walk met unreadable blocks", -1);
  char seen[MODEL_OBJS] = {0};
  for (size_t i = 0; i < s.n && i < 4096; i++) {
    int k = (int)(s.ids[i] & 0xffffffff);
    if ((s.ids[i] >> 32) != 0x6766757a || k >= m->nobj) {
      fail(m, "walk met an identity no object has", k);
      continue;
    }
    seen[k] = 1;
    if (full && !kept[k]) fail(m, "a full collection left an unreachable block", k);
  }
  for (int k = 0; k < m->nobj; k++)
    if (strong[k] && !seen[k]) fail(m, "a reachable block is gone", k);
}

static void random_op(model *m, fuzz_finding *out) {
  fuzz_bheap *h = m->h;
  int c = (int)pick(m, RCELLS), d = (int)pick(m, RCELLS), e = (int)pick(m, RCELLS);
  int k = m->cell[c];
  int64_t v;
  int kind = -1; /* the collection this op made, if it is a collect */
  unsigned op = pick(m, 100);
  for (int j = 0; j < m->nobj; j++) m->obj[j].keep_now = 0;
  if (pick(m, 16) == 0) { /* a domain op besides: they change no reachability */
    unsigned dom = pick(m, 4), which = pick(m, 4);
    if (which == 0)
      B->domain_spawn(h, dom);
    else if (which == 3)
      B->domain_end(h, dom);
    else
      B->domain_on(h, dom);
  }
  if (op < 22) { /* alloc */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int raw = pick(m, 3) == 0;
    size_t n = 1 + pick(m, MODEL_FIELDS);
    if (pick(m, 12) == 0) B->fail_after(h, 1 + pick(m, 4));
    m->cell[d] = -1;
    if (B->alloc(h, (size_t)d, raw ? FUZZ_SHAPE_RAW : FUZZ_SHAPE_SCAN, n)) {
      int j = new_obj(m, raw ? M_RAW : M_SCAN, n);
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else if (op < 36) { /* store */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    B->store(h, (size_t)c, f, (size_t)d);
    m->obj[k].field[f] = m->cell[d];
  } else if (op < 42) { /* store_int */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    int64_t x = (int64_t)pick(m, 256);
    B->store_int(h, (size_t)c, f, x);
    m->obj[k].field[f] = -2;
    m->obj[k].ival[f] = x;
  } else if (op < 54) { /* load */
    if (k < 0 || m->obj[k].kind != M_SCAN) return;
    size_t f = pick(m, (unsigned)m->obj[k].n);
    int want = m->obj[k].field[f];
    fuzz_field_kind got = B->load(h, (size_t)d, (size_t)c, f, &v);
    if (want == -1 && got != FUZZ_FIELD_EMPTY) fail(m, "load of an empty field", k);
    if (want == -2 && (got != FUZZ_FIELD_INT || v != m->obj[k].ival[f]))
      fail(m, "load of an integer", k);
    if (want >= 0 && got != FUZZ_FIELD_BLOCK) fail(m, "load of a block", want);
    m->cell[d] = want >= 0 ? want : -1;
  } else if (op < 60) {
    B->copy(h, (size_t)d, (size_t)c);
    m->cell[d] = k;
  } else if (op < 66) {
    B->clear(h, (size_t)c);
    m->cell[c] = -1;
  } else if (op < 74) {
    kind = (int)pick(m, 4);
    B->collect(h, (fuzz_collect_kind)kind, pick(m, 4) == 0 ? pick(m, 256) : pick(m, 3));
  } else if (op < 77) {
    B->tune(h, pick(m, (unsigned)B->tunable_count), pick(m, 256));
  } else if (op < 80) { /* raw words */
    if (k < 0 || m->obj[k].kind != M_RAW) return;
    size_t w = pick(m, (unsigned)m->obj[k].n);
    if (B->raw_read(h, (size_t)c, w) != m->obj[k].word[w]) fail(m, "a raw word", k);
    m->obj[k].word[w] = next_rand(m);
    B->raw_write(h, (size_t)c, w, m->obj[k].word[w]);
  } else if (op < 84) {
    if (k < 0) return;
    if (B->fin_set(h, (size_t)c, (uint64_t)k) != 1) fail(m, "fin_set", k);
    m->obj[k].fin = 1;
  } else if (op < 86) {
    if (k < 0) return;
    if (B->fin_clear(h, (size_t)c) != (m->obj[k].fin == 1)) fail(m, "fin_clear's answer", k);
    m->obj[k].fin = 0;
  } else if (op < 90) { /* weak_new */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int target = m->cell[c];
    m->cell[d] = -1;
    if (B->weak_new(h, (size_t)d, (size_t)c)) {
      int j = new_obj(m, M_WEAK, 0);
      m->obj[j].a = target;
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else if (op < 93) { /* weak_get */
    if (k < 0 || m->obj[k].kind != M_WEAK) return;
    mobj *w = &m->obj[k];
    int got = B->weak_get(h, (size_t)d, (size_t)c);
    uint64_t id, check;
    if (got && (w->a < 0 || w->seen_cleared || !B->get_ident(h, (size_t)d, &id, &check) ||
                id != mid(w->a)))
      fail(m, "weak_get answered a block it should not", k);
    if (!got && w->a >= 0 && !w->at_risk) fail(m, "a weak reference was cleared too early", k);
    if (!got) w->seen_cleared = 1;
    m->cell[d] = got ? w->a : -1;
  } else if (op < 96) { /* ephe_new */
    if (m->nobj >= MODEL_OBJS - 4) return;
    int key = m->cell[c], datum = m->cell[e];
    m->cell[d] = -1;
    if (B->ephe_new(h, (size_t)d, (size_t)c, (size_t)e)) {
      int j = new_obj(m, M_EPHE, 0);
      m->obj[j].a = key;
      m->obj[j].b = key >= 0 ? datum : -1;
      B->set_ident(h, (size_t)d, mid(j), ~mid(j));
      m->cell[d] = j;
    }
  } else { /* ephe_get */
    if (k < 0 || m->obj[k].kind != M_EPHE) return;
    mobj *x = &m->obj[k];
    int got = B->ephe_get(h, (size_t)d, (size_t)c);
    uint64_t id, check;
    int full = B->get_ident(h, (size_t)d, &id, &check);
    if (got && (x->a < 0 || x->seen_cleared || full != (x->b >= 0) || (full && id != mid(x->b))))
      fail(m, "ephe_get answered a datum it should not", k);
    if (!got && x->a >= 0 && !x->at_risk) fail(m, "an ephemeron lost its datum too early", k);
    if (!got) x->seen_cleared = 1;
    m->cell[d] = got ? x->b : -1;
  }
  char mark[MODEL_OBJS];
  reach(m, mark, 0);
  mark_risks(m, mark);
  verify_cells(m);
  size_t n = B->check(h, out, FINDINGS_MAX);
  if (n > 0) {
    print_findings(out, n);
    if (!m->bad) print_verdict(&out[0]);
    fail(m, "the deep check found something", -1);
  }
  if (kind >= 0) verify_walk(m, kind == FUZZ_COLLECT_FULL);
}

/* LUAB_TEST_SEEDS and LUAB_TEST_OPS make a longer run (by hand; the test's own is small). */
static void random_programs(void) {
  static model m;
  fuzz_finding out[FINDINGS_MAX];
  const char *env_seeds = getenv("LUAB_TEST_SEEDS"), *env_ops = getenv("LUAB_TEST_OPS");
  uint64_t seeds = env_seeds ? strtoull(env_seeds, NULL, 10) : 40;
  int ops = env_ops ? atoi(env_ops) : 400;
  for (uint64_t seed = 1; seed <= seeds; seed++) {
    memset(&m, 0, sizeof m);
    m.rng = seed * UINT64_C(0x9E3779B97F4A7C15);
    for (int c = 0; c <= RCELLS; c++) m.cell[c] = -1;
    fuzz_backend_config cfg = {
        .cells = RCELLS, .out = stderr, .events = {.user = &m, .finalize = model_finalize}};
    cfg.params = seed % 3 == 0 ? "generational" : NULL;
    m.h = B->create(&cfg);
    for (int i = 0; i < ops && !m.bad; i++) random_op(&m, out);
    if (!m.bad) {
      B->collect(m.h, FUZZ_COLLECT_FULL, 0);
      verify_walk(&m, 1);
      if (B->check(m.h, out, FINDINGS_MAX) != 0) fail(&m, "the final deep check", -1);
    }
    if (m.bad) fprintf(stderr, "  (seed %llu)\n", (unsigned long long)seed);
    CHECK(!m.bad);
    B->destroy(m.h);
  }
}

/* ---- Heaps broken on purpose ---------------------------------------------------------------- */

static void break_black_to_white(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 2);
  B->collect(h, FUZZ_COLLECT_START, 0);
  lua_State *L = luab_state(h);
  CHECK(G(L)->gcstate == GCSpropagate);
  CHECK(clean(h));
  GCObject *parent = cell_obj(h, 0), *child = cell_obj(h, 1);
  lu_byte saved = parent->marked;
  paint_black(parent);                                  /* as if traversed... */
  sethvalue(L, &gco2t(parent)->array[0], gco2t(child)); /* ...then written without a barrier */
  CHECK(only_kind(h, "lua.black-to-white"));
  setnilvalue(&gco2t(parent)->array[0]);
  parent->marked = saved;
  CHECK(clean(h));
  B->destroy(h);
}

static void break_gray_list(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  B->collect(h, FUZZ_COLLECT_START, 0);
  global_State *g = G(luab_state(h));
  GCObject *head = g->gray;
  CHECK(head != NULL && head->tt == LUA_VTABLE);
  g->gray = gco2t(head)->gclist; /* the head stays gray, on no list */
  CHECK(only_kind(h, "lua.gray-list"));
  g->gray = head;
  paint_black(head); /* a black object on a gray list */
  CHECK(has_kind(h, "lua.gray-list"));
  head->marked = (lu_byte)(head->marked & ~PAINT_MASK);
  CHECK(clean(h));
  B->destroy(h);
}

static void break_totalbytes(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  global_State *g = G(luab_state(h));
  g->GCdebt += 16;
  CHECK(only_kind(h, "lua.totalbytes"));
  g->GCdebt -= 16;
  CHECK(clean(h));
  B->destroy(h);
}

static void break_dead_reachable(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  lua_State *L = luab_state(h);
  global_State *g = G(L);
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1); /* older: left unswept */
  alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 2); /* newest: the first object swept */
  luaC_runtilstate(L, bitmask(GCSswpallgc));
  CHECK(g->gcstate == GCSswpallgc && g->sweepgc != NULL);
  CHECK(clean(h));
  GCObject *target = cell_obj(h, 0);
  int unswept = 0;
  for (GCObject *o = *g->sweepgc; o != NULL; o = o->next) unswept |= o == target;
  CHECK(unswept);
  lu_byte saved = target->marked;
  target->marked = (lu_byte)((target->marked & ~PAINT_MASK) | otherwhite(g));
  CHECK(only_kind(h, "lua.dead-reachable"));
  target->marked = saved;
  CHECK(clean(h));
  B->destroy(h);
}

static void break_dead_object_and_colour(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  global_State *g = G(luab_state(h));
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(g->gcstate == GCSpause);
  GCObject *o = cell_obj(h, 0);
  lu_byte saved = o->marked;
  o->marked = (lu_byte)((o->marked & ~PAINT_MASK) | otherwhite(g)); /* a sweep missed it */
  CHECK(only_kind(h, "lua.dead-object"));
  paint_black(o); /* black after the sweep */
  CHECK(only_kind(h, "lua.bad-colour"));
  o->marked = saved;
  CHECK(clean(h));
  B->destroy(h);
}

static void break_generational(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  lua_State *L = luab_state(h);
  global_State *g = G(L);
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 3);
  CHECK(B->fin_set(h, 2, 1));
  B->tune(h, 0, 1); /* generational: everything is old now */
  alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 2);
  CHECK(g->gckind == KGC_GEN && clean(h));
  GCObject *parent = cell_obj(h, 0), *child = cell_obj(h, 1), *armed = cell_obj(h, 2);
  CHECK(getage(parent) == G_OLD && isblack(parent) && getage(child) == G_NEW);
  sethvalue(L, &gco2t(parent)->array[0], gco2t(child)); /* no barrier: not touched */
  CHECK(only_kind(h, "lua.old-to-young"));
  setnilvalue(&gco2t(parent)->array[0]);
  lu_byte saved = parent->marked;
  setage(parent, 7);
  CHECK(only_kind(h, "lua.bad-age"));
  parent->marked = saved;
  GCObject *first = g->firstold1;
  g->firstold1 = armed; /* in finobj, not allgc */
  CHECK(only_kind(h, "lua.gen-lists"));
  g->firstold1 = first;
  CHECK(clean(h));
  B->destroy(h);
}

static void break_headers(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  global_State *g = G(luab_state(h));
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  alloc_id(h, 1, FUZZ_SHAPE_RAW, 1, 2);
  alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 3);
  CHECK(B->fin_set(h, 2, 1));
  GCObject *o = cell_obj(h, 0);
  l_setbit(o->marked, FINALIZEDBIT); /* in allgc */
  CHECK(only_kind(h, "lua.finobj-bit"));
  resetbit(o->marked, FINALIZEDBIT);
  Table *saved_mt = gco2t(o)->metatable;
  gco2t(o)->metatable = gco2t(cell_obj(h, 2))->metatable; /* __gc without luaC_checkfinalizer */
  CHECK(only_kind(h, "lua.finalizer-lost"));
  gco2t(o)->metatable = saved_mt;
  Udata *u = gco2u(cell_obj(h, 1));
  u->len += 8;
  CHECK(only_kind(h, "lua.object-size"));
  u->len -= 8;
  g->strt.nuse++;
  CHECK(only_kind(h, "lua.string-table"));
  g->strt.nuse--;
  GCObject *fixed = g->fixedgc;
  lu_byte saved = fixed->marked;
  paint_black(fixed);
  CHECK(only_kind(h, "lua.fixed"));
  fixed->marked = saved;
  TValue saved_id = gco2t(o)->array[1];
  setnilvalue(&gco2t(o)->array[1]);
  CHECK(only_kind(h, "lua.identity"));
  gco2t(o)->array[1] = saved_id;
  /* No allocation: freed memory, as far as the index knows. A whole GCUnion, so that the
   * casts sethvalue makes stay within the object (UBSan checks their size). */
  static union GCUnion fake;
  sethvalue(luab_state(h), &gco2t(o)->array[0], &fake.h);
  CHECK(only_kind(h, "lua.dangling"));
  setnilvalue(&gco2t(o)->array[0]);
  CHECK(clean(h));
  B->destroy(h);
}

/* The check at the end of the atomic phase (luab_check_atomic): an ephemeron on Lua's gray
 * list whose key is marked but whose datum is not (what a convergence that stops too early
 * leaves) is lua.mark-incomplete; the same entry with its datum marked is clean. The lists and
 * colours are set by hand: the check reads nothing else. */
static void break_mark_incomplete(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  global_State *g = G(luab_state(h));
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1); /* the key */
  alloc_id(h, 1, FUZZ_SHAPE_SCAN, 1, 2); /* the datum */
  CHECK(B->ephe_new(h, 2, 0, 1));
  GCObject *key = cell_obj(h, 0), *datum = cell_obj(h, 1), *ephe = cell_obj(h, 2);
  lu_byte saved[3] = {key->marked, datum->marked, ephe->marked};
  GCObject *saved_list = g->ephemeron;
  fuzz_finding f[4];
  luab_view v = luab_heap_view(h);
  paint_black(key);
  ephe->marked = (lu_byte)(ephe->marked & ~PAINT_MASK); /* gray */
  gco2t(ephe)->gclist = NULL;
  g->ephemeron = ephe;
  CHECK(luab_check_atomic(&v, f, 4) == 1 && strcmp(f[0].kind, "lua.mark-incomplete") == 0);
  paint_black(datum);
  CHECK(luab_check_atomic(&v, f, 4) == 0);
  g->ephemeron = saved_list;
  key->marked = saved[0];
  datum->marked = saved[1];
  ephe->marked = saved[2];
  CHECK(clean(h));
  B->destroy(h);
}

/* After fin_set, none of allgc's generational positions may name the object moved to finobj
 * (lgc.c's correctpointers). */
static void break_separated(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, "generational");
  global_State *g = G(luab_state(h));
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1);
  CHECK(B->fin_set(h, 0, 1) && clean(h));
  GCObject *o = cell_obj(h, 0);
  fuzz_finding f[4];
  luab_view v = luab_heap_view(h);
  CHECK(luab_check_separated(&v, o, f, 4) == 0);
  GCObject *first = g->firstold1;
  g->firstold1 = o; /* as if correctpointers had missed it */
  CHECK(luab_check_separated(&v, o, f, 4) == 1 && strcmp(f[0].kind, "lua.gen-lists") == 0);
  g->firstold1 = first;
  CHECK(clean(h));
  B->destroy(h);
}

/* With events.finding set, a finding made inside an op reaches the driver at once, against the
 * op, and is not kept for the next check. */
typedef struct heard {
  size_t n, alloc;
} heard;

static void hear_finding(void *user, const fuzz_finding *f) {
  heard *e = user;
  e->n++;
  e->alloc += strcmp(f->kind, "lua.alloc") == 0;
}

static void findings_reported_at_once(void) {
  heard e = {0};
  fuzz_backend_config cfg = {
      .cells = CELLS, .out = stderr, .events = {.user = &e, .finding = hear_finding}};
  fuzz_bheap *h = B->create(&cfg);
  alloc_id(h, 0, FUZZ_SHAPE_RAW, 2, 1);
  gco2u(cell_obj(h, 0))->len += 8; /* freed with the wrong size, as break_free_size */
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  /* The atomic phase's check sees the size first (lua.object-size), the allocator the free. */
  CHECK(e.alloc == 1 && e.n <= 16);
  G(luab_state(h))->GCdebt += 8; /* Lua's count back in line */
  CHECK(clean(h));               /* told already: nothing kept */
  B->destroy(h);
}

/* A userdata whose length grew is freed with the wrong size: the allocator says so at once. */
static void break_free_size(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  alloc_id(h, 0, FUZZ_SHAPE_RAW, 2, 1);
  gco2u(cell_obj(h, 0))->len += 8;
  B->clear(h, 0);
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(has_kind(h, "lua.alloc"));
  G(luab_state(h))->GCdebt += 8; /* Lua's count, 8 short since, back in line for lua_close */
  B->destroy(h);
}

int main(void) {
  RUN(fresh_heap_is_clean);
  RUN(alloc_and_identity);
  RUN(store_and_load);
  RUN(every_collection_kind);
  RUN(full_collection_frees_the_unreachable);
  RUN(finalizer_runs_once_with_its_block);
  RUN(finalizer_resurrects);
  RUN(finalizer_cleared);
  RUN(weak_references);
  RUN(ephemerons);
  RUN(ephemeron_chains_converge);
  RUN(weak_cleared_before_finalizer);
  RUN(generational_referents_survive);
  RUN(injected_failures);
  RUN(tunables_reach_their_corners);
  RUN(leak_bound_holds);
  RUN(random_programs);
  RUN(break_black_to_white);
  RUN(break_gray_list);
  RUN(break_totalbytes);
  RUN(break_dead_reachable);
  RUN(break_dead_object_and_colour);
  RUN(break_generational);
  RUN(break_headers);
  RUN(break_free_size);
  RUN(break_mark_incomplete);
  RUN(break_separated);
  RUN(findings_reported_at_once);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
