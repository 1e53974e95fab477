/* Tests of the Lua backend's table (fuzz_backend_lua) on healthy heaps, op by op: identities,
 * fields, every collection kind in both modes, generational referents, injected failures, the
 * tunables' corners, the leak bound measured, and the rare events a known program counts. Finalizers and weak tables:
 * lua_finalizer_weak_test.c; random programs: lua_model_test.c; heaps broken on purpose:
 * lua_broken_heap_test.c. Prints "N passed, M failed". */
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

/* ---- Rare events ----------------------------------------------------------------------------- */

/* A known program gives known counts: two full collections, one switch each way, a weak
 * reference and an ephemeron cleared, a finalizer that resurrects its block, an injected
 * failure and the emergency collection Lua answers it with, a step at stepmul 0. */
static void rare_events_are_counted(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(B->rare_event_count <= FUZZ_RARE_EVENTS_MAX);
  CHECK(strcmp(B->rare_events[0].name, "cycle") == 0);
  CHECK(fuzz_rare_count(B, h, "full") == 0 && fuzz_rare_count(B, h, "emergency") == 0);
  B->tune(h, 0, 1);
  B->tune(h, 0, 0);
  CHECK(fuzz_rare_count(B, h, "mode.to-gen") == 1 && fuzz_rare_count(B, h, "mode.to-inc") == 1);
  CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1) && B->weak_new(h, 1, 0));
  CHECK(alloc_id(h, 2, FUZZ_SHAPE_SCAN, 1, 2) && alloc_id(h, 3, FUZZ_SHAPE_SCAN, 1, 3));
  CHECK(B->ephe_new(h, 4, 2, 3));
  CHECK(alloc_id(h, 5, FUZZ_SHAPE_SCAN, 1, 5) && B->fin_set(h, 5, 55));
  B->clear(h, 0);
  B->clear(h, 2);
  B->clear(h, 3);
  B->clear(h, 5);
  log.resurrect_into = 6;
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(log.n == 1 && id_of(h, 6) == 5);
  CHECK(fuzz_rare_count(B, h, "full") == 2);
  CHECK(fuzz_rare_count(B, h, "weak.cleared") == 1 && fuzz_rare_count(B, h, "ephe.cleared") == 1);
  CHECK(fuzz_rare_count(B, h, "fin.run") == 1 && fuzz_rare_count(B, h, "fin.resurrected") == 1);
  CHECK(fuzz_rare_count(B, h, "fin.in-step") == 0);
  CHECK(fuzz_rare_count(B, h, "cycle") >=
        3); /* the switch to generational and the two full collections */
  B->fail_after(h, 1);
  CHECK(!B->alloc(h, 7, FUZZ_SHAPE_SCAN, 4));
  CHECK(fuzz_rare_count(B, h, "alloc.failed") == 1 && fuzz_rare_count(B, h, "emergency") == 1);
  B->tune(h, 2, 0); /* stepmul 0 */
  uint64_t at_zero = fuzz_rare_count(B, h, "step.stepmul0");
  B->collect(h, FUZZ_COLLECT_SLICE, 0);
  CHECK(fuzz_rare_count(B, h, "step.stepmul0") == at_zero + 1 &&
        fuzz_rare_count(B, h, "step.inc") >= 1);
  CHECK(fuzz_rare_count(B, h, "full") == 2 && fuzz_rare_count(B, h, "gen.major") == 0);
  CHECK(clean(h));
  B->destroy(h);
}

int main(void) {
  RUN(fresh_heap_is_clean);
  RUN(alloc_and_identity);
  RUN(store_and_load);
  RUN(every_collection_kind);
  RUN(full_collection_frees_the_unreachable);
  RUN(generational_referents_survive);
  RUN(injected_failures);
  RUN(tunables_reach_their_corners);
  RUN(leak_bound_holds);
  RUN(rare_events_are_counted);
  return summary();
}
