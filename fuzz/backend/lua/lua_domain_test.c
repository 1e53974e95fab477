/* Tests of the Lua backend's domains (coroutines): the ops, every collection and finalizer
 * bodies on coroutines in both of Lua's modes, and the thread rules of the deep check broken on
 * purpose, each reported by exactly its finding kind. Prints "N passed, M failed". */
#include "fuzz/backend/lua/lua_test_kit.h"

/* ---- Domains: coroutines -------------------------------------------------------------------- */

/* Spawn, on and end in both modes, the ops and every collection kind run on coroutines; an
 * ended coroutine is freed by the next whole cycle (the deep check holds it to that). */
static void domains_run_the_ops(void) {
  for (int gen = 0; gen < 2; gen++) {
    fin_log log;
    fuzz_bheap *h = make_heap(&log, CELLS, gen ? "generational" : NULL);
    lua_State *main = luab_state(h);
    CHECK((B->caps & FUZZ_CAP_DOMAINS) && B->domain_spawn && B->domain_on && B->domain_end);
    CHECK(!B->domain_spawn(h, 0) && luab_domain_state(h, 0) == main);
    CHECK(B->domain_spawn(h, 1) && B->domain_spawn(h, 2) && !B->domain_spawn(h, 1));
    lua_State *co1 = luab_domain_state(h, 1), *co2 = luab_domain_state(h, 2);
    CHECK(co1 != NULL && co2 != NULL && co1 != main && co1 != co2);
    CHECK(clean(h));
    B->domain_on(h, 1);
    CHECK(luab_state(h) == co1);
    build_chain(h, 50, 500);
    CHECK(clean(h) && chain_intact(h, 50, 500));
    B->domain_on(h, 2);
    CHECK(luab_state(h) == co2);
    for (int k = FUZZ_COLLECT_SLICE; k <= FUZZ_COLLECT_START; k++) {
      for (unsigned budget = 0; budget < 3; budget++) {
        B->domain_on(h, 1 + (budget & 1));
        alloc_id(h, 4, FUZZ_SHAPE_SCAN, 2, 900 + budget);
        B->store(h, 4, 0, 0); /* the chain's head, from a new block */
        B->collect(h, (fuzz_collect_kind)k, budget);
        CHECK(clean(h));
        CHECK(chain_intact(h, 50, 500));
      }
    }
    if (!gen) { /* a whole incremental cycle in slices, from alternating coroutines */
      B->collect(h, FUZZ_COLLECT_FULL, 0);
      B->collect(h, FUZZ_COLLECT_START, 0);
      CHECK(G(main)->gcstate == GCSpropagate && clean(h));
      for (int i = 0; i < 200 && G(main)->gcstate != GCSpause; i++) {
        B->domain_on(h, (unsigned)i % 3);
        alloc_id(h, 5, FUZZ_SHAPE_SCAN, 1, 950);
        B->store(h, 5, 0, 4);
        B->collect(h, FUZZ_COLLECT_SLICE, 0);
        CHECK(clean(h));
      }
    }
    /* End the running domain: the calls go back to domain 0, and d1 can be spawned again. */
    B->domain_on(h, 1);
    B->domain_end(h, 1);
    CHECK(luab_state(h) == main && luab_domain_state(h, 1) == NULL);
    CHECK(clean(h));
    B->domain_on(h, 1); /* no such domain: nothing changes */
    CHECK(luab_state(h) == main);
    B->collect(h, FUZZ_COLLECT_MAJOR, 0);
    CHECK(clean(h)); /* freed by that cycle, or lua.thread-kept */
    CHECK(B->domain_spawn(h, 1) && luab_domain_state(h, 1) != NULL);
    B->domain_on(h, 2);
    B->domain_end(h, 1);
    B->domain_end(h, 2);
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    CHECK(clean(h) && chain_intact(h, 50, 500));
    id_set s;
    CHECK(walk(h, &s) == 0 && walk_has(&s, 500) && walk_has(&s, 549));
    B->domain_spawn(h, 3); /* destroy frees a live coroutine too */
    B->destroy(h);
  }
}

/* A finalizer body that allocates, stores, loads and makes weak references while it runs on
 * the coroutine whose collection called it. */
typedef struct body_log {
  fuzz_bheap *h;
  int ran, on_co;
  lua_State *co;
} body_log;

static void body_finalize(void *user, uint64_t token) {
  body_log *b = user;
  fuzz_bheap *h = b->h;
  int64_t v;
  b->ran++;
  b->on_co += luab_state(h) == b->co;
  CHECK(alloc_id(h, 3, FUZZ_SHAPE_SCAN, 2, 40 + token));
  B->store(h, 3, 0, SELF); /* resurrects the finalized block through a new one */
  B->store_int(h, 3, 1, 7);
  CHECK(B->load(h, 4, 3, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 4) == token);
  CHECK(B->weak_new(h, 5, 4) && B->weak_get(h, 6, 5) && id_of(h, 6) == token);
  CHECK(B->ephe_new(h, 7, 3, 4) && B->ephe_get(h, 8, 7) && id_of(h, 8) == token);
  CHECK(alloc_id(h, 9, FUZZ_SHAPE_RAW, 1, 60));
  B->raw_write(h, 9, 0, 99);
  CHECK(B->raw_read(h, 9, 0) == 99);
  CHECK(B->fin_set(h, 9, 61) && B->fin_clear(h, 9));
  B->copy(h, 10, 3);
  for (size_t c = 4; c < 10; c++) B->clear(h, c);
}

static void finalizer_body_on_a_coroutine(void) {
  for (int gen = 0; gen < 2; gen++) {
    body_log b = {0};
    fuzz_backend_config cfg = {.cells = CELLS,
                               .params = gen ? "generational" : NULL,
                               .out = stderr,
                               .events = {.user = &b, .finalize = body_finalize}};
    fuzz_bheap *h = b.h = B->create(&cfg);
    CHECK(B->domain_spawn(h, 2));
    b.co = luab_domain_state(h, 2);
    B->domain_on(h, 2);
    CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 1));
    CHECK(B->fin_set(h, 0, 1));
    B->clear(h, 0);
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    CHECK(b.ran == 1 && b.on_co == 1 && luab_state(h) == b.co);
    CHECK(clean(h));
    int64_t v;
    CHECK(id_of(h, 10) == 41 && B->load(h, 0, 10, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 0) == 1);
    CHECK(B->load(h, 1, 10, 1, &v) == FUZZ_FIELD_INT && v == 7);
    /* Again from steps the allocations pay for, on another coroutine. */
    CHECK(B->domain_spawn(h, 1));
    b.co = luab_domain_state(h, 1);
    B->domain_on(h, 1);
    CHECK(alloc_id(h, 0, FUZZ_SHAPE_SCAN, 1, 2));
    CHECK(B->fin_set(h, 0, 2));
    B->clear(h, 0);
    B->clear(h, 1);
    B->clear(h, 10);
    B->clear(h, 3);
    for (int i = 0; i < 20000 && b.ran < 2; i++) {
      alloc_id(h, 11, FUZZ_SHAPE_SCAN, 8, 1000 + (uint64_t)i);
      if (i % 64 == 0) CHECK(clean(h));
    }
    CHECK(b.ran == 2 && b.on_co == 2);
    CHECK(clean(h) && id_of(h, 10) == 42);
    B->domain_end(h, 1);
    B->domain_end(h, 2);
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    CHECK(clean(h));
    B->destroy(h);
  }
}

/* Threads have no barriers, so Lua keeps them gray until the atomic phase (incremental) and
 * keeps old ones gray (generational): a black one is lua.thread-colour. */
static void break_thread_colour(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  CHECK(B->domain_spawn(h, 1));
  GCObject *co = obj2gco(luab_domain_state(h, 1));
  B->collect(h, FUZZ_COLLECT_START, 0); /* the roots gray; the coroutine not yet reached */
  CHECK(G(luab_state(h))->gcstate == GCSpropagate && iswhite(co) && clean(h));
  lu_byte saved = co->marked;
  paint_black(co); /* as if traversed without being linked to grayagain */
  CHECK(only_kind(h, "lua.thread-colour"));
  co->marked = saved;
  CHECK(clean(h));
  B->destroy(h);

  h = make_heap(&log, CELLS, "generational");
  CHECK(B->domain_spawn(h, 1));
  global_State *g = G(luab_state(h));
  co = obj2gco(luab_domain_state(h, 1));
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(getage(co) == G_OLD && isgray(co) && clean(h));
  /* Unlinked from grayagain and black: the next young collection would not see its stack. */
  GCObject **p = &g->grayagain;
  while (*p != NULL && *p != co) p = &gco2th(*p)->gclist; /* only threads wait there now */
  CHECK(*p == co);
  *p = gco2th(co)->gclist;
  saved = co->marked;
  paint_black(co);
  CHECK(only_kind(h, "lua.thread-colour"));
  co->marked = saved;
  gco2th(co)->gclist = g->grayagain;
  g->grayagain = co;
  CHECK(clean(h));
  B->destroy(h);
}

/* INV-LUAB-3 broken three ways, then a stack planted with freed memory, then a coroutine kept
 * after its end. */
static void break_domains(void) {
  fin_log log;
  fuzz_bheap *h = make_heap(&log, CELLS, NULL);
  lua_State *L = luab_state(h);
  CHECK(B->domain_spawn(h, 1) && B->domain_spawn(h, 2));
  lua_State *co = luab_domain_state(h, 1);
  /* The anchor table: registry key LUA_RIDX_LAST + 2; domain d at its key d + 1. */
  Table *reg = gco2t(gcvalue(&G(L)->l_registry));
  Table *anchor = gco2t(gcvalue(&reg->array[LUA_RIDX_LAST + 1]));
  CHECK(ttisthread(&anchor->array[1]) && thvalue(&anchor->array[1]) == co);
  TValue saved = anchor->array[1];
  setnilvalue(&anchor->array[1]); /* unanchored while the backend runs ops on it */
  CHECK(only_kind(h, "lua.domain"));
  anchor->array[1] = saved;
  CHECK(clean(h));
  /* The ops running on a thread that is not the running domain's, and domain 0 not the main
   * thread: the view the check reads, changed. */
  fuzz_finding f[FINDINGS_MAX];
  luab_view v = luab_heap_view(h);
  CHECK(luab_check(&v, f, FINDINGS_MAX) == 0);
  v.L = co;
  CHECK(luab_check(&v, f, FINDINGS_MAX) == 1 && strcmp(f[0].kind, "lua.domain") == 0);
  v.L = L;
  v.domains[0] = co;
  CHECK(luab_check(&v, f, FINDINGS_MAX) >= 1 && strcmp(f[0].kind, "lua.domain") == 0);
  lua_pushinteger(co, 5); /* something left on a coroutine's stack between ops */
  CHECK(only_kind(h, "lua.domain-stack"));
  lua_pop(co, 1);
  CHECK(clean(h));
  /* Freed memory in the stack's one slot (the base frame's function). */
  static union GCUnion fake;
  sethvalue(co, s2v(co->stack), &fake.h);
  CHECK(only_kind(h, "lua.dangling"));
  setnilvalue(s2v(co->stack));
  CHECK(clean(h));
  /* Ended, but something of Lua's still holds it: the next whole cycle cannot free it. */
  lua_State *co2 = luab_domain_state(h, 2);
  B->domain_end(h, 2);
  static char key;
  lua_pushthread(co2);
  lua_xmove(co2, L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &key);
  CHECK(clean(h)); /* no cycle yet */
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(only_kind(h, "lua.thread-kept"));
  lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &key);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(clean(h));
  B->destroy(h);
}

int main(void) {
  RUN(domains_run_the_ops);
  RUN(finalizer_body_on_a_coroutine);
  RUN(break_thread_colour);
  RUN(break_domains);
  return summary();
}
