/* The bdwgc backend's incremental heap (mode=incremental, manual dirty bits): stores between a
 * cycle's increments, which the write barrier must report, into small blocks and into the later
 * pages of large ones; a cycle finished by budget-0 slices; the tunables mid-cycle.
 *
 * Its own process, so its first heap starts from a fresh bdwgc: bdwgc's own tables (the link
 * hash tables grow with the most links a process ever held, and never shrink) are still small
 * when test_stores_into_large_blocks runs, so a slip in the dirty bits of large objects loses the
 * test's blocks, which the deep check reports, before it loses bdwgc's own nodes (read by
 * GC_finalize a cycle later, which the test cannot see). */
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"
#include "gc.h"

/* Four old large blocks of three pages each (1151 fields), chained from cell 9 through field 0;
 * a cycle started and left mid-mark; then new blocks stored into the later pages of the large
 * blocks (marked already, likely), every other reference dropped, a slice after each: the
 * barrier's dirty bit on a later page must make bdwgc rescan it. */
/* Four large blocks of three pages each (ids 8000..8003), made old by a major collection: cell 9
 * holds the first, field 0 links on. */
static void old_large_chain(fuzz_bheap *h) {
  for (int i = 3; i >= 0; i--) {
    alloc_id(h, 8, 1151, 8000 + (uint64_t)i);
    B->store(h, 8, 0, 9);
    B->copy(h, 9, 8);
  }
  B->clear(h, 8);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
}

static void test_stores_into_large_blocks(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=incremental");
  CHECK(h != NULL && GC_is_incremental_mode());
  old_large_chain(h);
  /* Each round its own cycle: started, `round % 6` slices of mark work (the large blocks come
   * first: the chain from cell 9), the store, then slices until the cycle ends. */
  for (int round = 0; round < 40; round++) {
    GC_word cycle = GC_get_gc_no();
    B->collect(h, FUZZ_COLLECT_START, 0);
    for (int k = 0; k < round % 6; k++) B->collect(h, FUZZ_COLLECT_SLICE, 1);
    alloc_id(h, 5, 3, 90000 + (uint64_t)round);
    B->copy(h, 6, 9);
    int64_t v = 0;
    for (int k = 0; k < round % 4; k++) B->load(h, 6, 6, 0, &v);
    B->store(h, 6, 520 + (size_t)round * 15, 5); /* pages 2 and 3 of the block */
    B->clear(h, 5);
    B->clear(h, 6);
    for (int slice = 0; slice < 1000 && GC_get_gc_no() == cycle; slice++)
      B->collect(h, FUZZ_COLLECT_SLICE, (unsigned)round % 3);
    CHECK(clean_check(h) == 0);
  }
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(clean_check(h) == 0);
  size_t stored = 0;
  for (int round = 0; round < 40; round++) stored += walk_hits(h, 90000 + (uint64_t)round);
  CHECK(stored == 40);
  B->destroy(h);
}

static void test_incremental(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=incremental");
  CHECK(h != NULL && GC_is_incremental_mode());
  build_list(h, 400, 7000);
  old_large_chain(h);
  /* Start a cycle and leave it mid-mark, then store new blocks into old ones (likely scanned
   * already) and drop every other reference to them: the stores the barrier must report. The
   * large blocks take theirs in their last page. Cell 7 also grows a chain of new blocks. */
  B->collect(h, FUZZ_COLLECT_START, 0);
  for (int round = 0; round < 60; round++) {
    alloc_id(h, 5, 3, 90000 + (uint64_t)round);
    if (round % 4 == 3) {
      B->copy(h, 6, 9);
      int64_t v = 0;
      for (int k = 0; k < round % 4; k++) B->load(h, 6, 6, 0, &v);
      B->store(h, 6, 1000 + (size_t)round, 5);
    } else {
      B->copy(h, 6, 0);
      int64_t v = 0;
      for (int k = 0; k < (round * 37) % 400; k++) B->load(h, 6, 6, 0, &v);
      B->store(h, 6, 1, 5);
    }
    alloc_id(h, 4, 3, 95000 + (uint64_t)round);
    B->store(h, 4, 2, 7);
    B->copy(h, 7, 4); /* cell 7: a chain of new blocks */
    B->clear(h, 4);
    B->clear(h, 5);
    B->clear(h, 6);
    B->collect(h, FUZZ_COLLECT_SLICE, (unsigned)round % 5);
    CHECK(clean_check(h) == 0);
  }
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(clean_check(h) == 0);
  CHECK(verify_list(h, 400, 7000) == 400);
  size_t stored = 0;
  for (int round = 0; round < 60; round++) stored += walk_hits(h, 90000 + (uint64_t)round);
  CHECK(stored == 60);
  size_t chain = 0;
  B->copy(h, 8, 7);
  for (int round = 59; round >= 0; round--) {
    if (id_of(h, 8) == 95000 + (uint64_t)round) chain++;
    int64_t v = 0;
    if (B->load(h, 8, 8, 2, &v) != FUZZ_FIELD_BLOCK) break;
  }
  CHECK(chain == 60);
  CHECK(clean_check(h) == 0);
  /* A full cycle (full_freq 0) driven by slices of budget 0 only: its world-stopped finish is
   * abandoned at its first step, once (alloc.c: GC_n_attempts < max_prior_attempts; a partial
   * cycle's start counts as that attempt), and completes the next time. */
  B->tune(h, 1, 0);
  GC_word cycles = GC_get_gc_no();
  B->collect(h, FUZZ_COLLECT_START, 0);
  for (int slice = 0; slice < 10000 && GC_get_gc_no() == cycles; slice++)
    B->collect(h, FUZZ_COLLECT_SLICE, 0);
  CHECK(GC_get_gc_no() != cycles);
  CHECK(verify_list(h, 400, 7000) == 400 && clean_check(h) == 0);
  for (unsigned p = 0; p < B->tunable_count; p++) {
    if (p == 4) continue;
    B->tune(h, p, p == 3 ? 2 : 0); /* pause_steps 2: allocation's cycles go incremental */
  }
  build_list(h, 300, 20000);
  for (int i = 0; i < 20; i++) B->collect(h, FUZZ_COLLECT_SLICE, 1);
  CHECK(verify_list(h, 300, 20000) == 300 && clean_check(h) == 0);
  B->destroy(h);
  driver d2;
  CHECK(make(&d2, "mode=stop") == NULL); /* bdwgc cannot leave incremental mode */
  h = make(&d2, NULL);
  CHECK(h != NULL);
  for (int attempt = 0; attempt < ATTEMPTS && d2.ran == 0; attempt++) {
    drop_with_finalizer(h, 800 + 10 * (uint64_t)attempt);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    B->run_finalizers(h);
  }
  CHECK(d2.ran >= 1 && d2.tokens[0] == d2.ids[0] * 10);
  B->destroy(h);
}

int main(void) {
  RUN(test_stores_into_large_blocks);
  RUN(test_incremental);
  return test_summary();
}
