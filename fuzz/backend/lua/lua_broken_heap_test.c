/* The Lua backend's deep check on heaps broken on purpose: each slip (a write without a
 * barrier, a gray object off its list, a wrong count, colour, age, bit, size or identity, a
 * dangling reference, an unfinished mark, a wrong free) reported by exactly its finding kind,
 * and the heap clean again once repaired; a finding made inside an op reaches events.finding at
 * once. Prints "N passed, M failed". */
#include "fuzz/backend/lua/lua_test_kit.h"

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
  return summary();
}
