/* Tests of the Lua backend's finalizers, weak references and ephemerons: a finalizer runs once
 * with its block, resurrects, is cleared; weak references and ephemerons hold and clear as Lua
 * says, chains of ephemerons converge in every arrangement, and weak values are cleared before
 * a finalizer runs. Prints "N passed, M failed". */
#include "fuzz/backend/lua/lua_test_kit.h"

/* ---- Finalizers ----------------------------------------------------------------------------- */

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

/* ---- Weak references and ephemerons ------------------------------------------------------------ */

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

int main(void) {
  RUN(finalizer_runs_once_with_its_block);
  RUN(finalizer_resurrects);
  RUN(finalizer_cleared);
  RUN(weak_references);
  RUN(ephemerons);
  RUN(ephemeron_chains_converge);
  RUN(weak_cleared_before_finalizer);
  return summary();
}
