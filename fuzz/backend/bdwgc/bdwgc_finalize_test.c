/* The bdwgc backend's finalizers and weak references, on the stop-the-world heap: a finalizer
 * runs once and resurrects, fin_clear disarms, a weak reference keeps nothing and clears when its
 * target goes (before any finalizer of the target runs), and a dead weak reference's link is
 * dropped; and the rare events a known program counts. Helpers: bdwgc_test.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"

static void test_finalizer_and_resurrection(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  d.resurrect_into = 5;
  uint64_t id = 0;
  for (int attempt = 0; attempt < ATTEMPTS && d.ran == 0; attempt++) {
    id = 700 + 10 * (uint64_t)attempt;
    drop_with_finalizer(h, id);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR); /* may run it, at the end of an allocation */
    B->run_finalizers(h);
  }
  CHECK(d.ran == 1 && d.tokens[0] == d.ids[0] * 10);
  id = d.ids[0];
  fprintf(stderr, "  finalized after %d attempt(s)\n", (int)(id - 700) / 10 + 1);
  CHECK(id_of(h, 5) == id);    /* resurrected by the copy */
  CHECK(id_of(h, CELLS) == 0); /* the self cell is empty again */
  int64_t v = 0;
  CHECK(B->load(h, 6, 5, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 6) == id + 1);
  B->clear(h, 6);
  d.resurrect_into = SIZE_MAX;
  size_t ran = d.ran;
  forget_and_collect(h, FUZZ_COLLECT_MAJOR);
  B->run_finalizers(h);
  for (size_t i = ran; i < d.ran && i < 32; i++) CHECK(d.ids[i] != id); /* once only */
  CHECK(walk_hits(h, id) == 1 && walk_hits(h, id + 1) == 1 && clean_check(h) == 0);
  B->clear(h, 5);
  for (int attempt = 0; attempt < ATTEMPTS && walk_hits(h, id) != 0; attempt++)
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
  CHECK(walk_hits(h, id) == 0); /* its finalizer ran: now it goes like any block */
  B->run_finalizers(h);
  for (size_t i = ran; i < d.ran && i < 32; i++) CHECK(d.ids[i] != id);
  B->destroy(h);
}

__attribute__((noinline)) static void drop_cleared_finalizer(fuzz_bheap *h, uint64_t id) {
  alloc_id(h, 0, 6, id);
  CHECK(B->fin_clear(h, 0) == 0);
  CHECK(B->fin_set(h, 0, 9) == 1);
  CHECK(B->fin_clear(h, 0) == 1);
  CHECK(B->fin_clear(h, 0) == 0);
  B->clear(h, 0);
}

static void test_fin_clear(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  bool gone = false;
  int attempts = 0;
  for (int attempt = 0; attempt < ATTEMPTS && !gone; attempt++, attempts++) {
    drop_cleared_finalizer(h, 550 + (uint64_t)attempt);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    CHECK(B->run_finalizers(h) == 0 && d.ran == 0);
    gone = walk_hits(h, 550 + (uint64_t)attempt) == 0;
  }
  CHECK(gone);
  fprintf(stderr, "  dropped block gone after %d attempt(s)\n", attempts);
  B->destroy(h);
}

__attribute__((noinline)) static void make_weak(fuzz_bheap *h, size_t weak_cell, uint64_t id) {
  alloc_id(h, 0, 6, id);
  CHECK(B->weak_new(h, weak_cell, 0) == 1);
  B->set_ident(h, weak_cell, id + 1, ~(id + 1));
  CHECK(B->weak_get(h, 2, weak_cell) == 1 && id_of(h, 2) == id);
  B->clear(h, 2);
}

static void test_weak(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  bool cleared = false;
  int attempts = 0;
  for (int attempt = 0; attempt < ATTEMPTS && !cleared; attempt++, attempts++) {
    uint64_t id = 310 + 10 * (uint64_t)attempt;
    size_t weak_cell = 7 + (size_t)attempt; /* earlier weak refs stay, to be read again */
    make_weak(h, weak_cell, id);
    B->collect(h, FUZZ_COLLECT_MAJOR, 0);
    CHECK(B->weak_get(h, 2, weak_cell) == 1 && id_of(h, 2) == id); /* the cell keeps it */
    B->clear(h, 2);
    B->clear(h, 0);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    for (int earlier = 0; earlier <= attempt && !cleared; earlier++)
      cleared = B->weak_get(h, 2, 7 + (size_t)earlier) == 0 && id_of(h, 2) == 0 &&
                walk_hits(h, 310 + 10 * (uint64_t)earlier) == 0;
    B->clear(h, 2);
    CHECK(id_of(h, weak_cell) == id + 1 && walk_hits(h, id + 1) == 1); /* the ref itself stays */
  }
  CHECK(cleared);
  fprintf(stderr, "  weak reference cleared after %d attempt(s)\n", attempts);
  CHECK(B->weak_new(h, 3, 5) == 1 && B->weak_get(h, 4, 3) == 0); /* weak to nothing */
  CHECK(clean_check(h) == 0);
  B->destroy(h);
}

/* gc.h: a short disappearing link is cleared "BEFORE any finalization code is invoked": a weak
 * reference to a block whose finalizer is queued reads as gone, though the block lives on for
 * its finalizer (weak=short, the default). */
__attribute__((noinline)) static void weak_to_finalizable(fuzz_bheap *h, uint64_t id) {
  alloc_id(h, 0, 6, id);
  CHECK(B->fin_set(h, 0, id) == 1);
  CHECK(B->weak_new(h, 1, 0) == 1);
  B->set_ident(h, 1, id + 1, ~(id + 1));
  B->clear(h, 0);
}

static void test_weak_cleared_before_finalizer(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  d.weak_cell = 1; /* read by the finalizer: cleared by the cycle that queued it */
  d.weak_at_finalize = -1;
  for (int attempt = 0; attempt < ATTEMPTS && d.ran == 0; attempt++) {
    weak_to_finalizable(h, 3100 + 10 * (uint64_t)attempt);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    B->run_finalizers(h);
  }
  CHECK(d.ran == 1 && d.weak_at_finalize == 0);
  B->destroy(h);
}

/* A weak reference that dies drops its link (bdwgc: "a link disappears when the object
 * containing it is garbage collected"): the collector must not later clear the link's word in
 * memory that has become another block. Raw blocks of one payload word have the weak
 * reference's size (three words, pointer-free), their payload word where its link was; the
 * test allocates them until they land where the dead weak references were. Addresses are kept
 * complemented, or the test's own memory would keep the weak references alive. */
enum { DYING_WEAK = 64, REUSE_TRIES = 200000 };

__attribute__((noinline)) static void make_dying_weak_refs(fuzz_bheap *h, uintptr_t *hidden) {
  for (size_t i = 0; i < DYING_WEAK; i++) {
    CHECK(B->weak_new(h, 2, 1) == 1); /* all to cell 1's block */
    uintptr_t start = 0;
    size_t bsize = 0;
    B->address(h, 2, &start, &bsize);
    hidden[i] = ~start;
  }
  B->clear(h, 2);
}

/* Allocate raw blocks until they cover the dead weak references' memory; keeps those that do,
 * eight to a scanned block in a chain from cell 13, and returns how many. */
__attribute__((noinline)) static size_t reuse_weak_memory(fuzz_bheap *h, const uintptr_t *hidden) {
  size_t kept = 0;
  for (size_t t = 0; t < REUSE_TRIES && kept < DYING_WEAK; t++) {
    CHECK(B->alloc(h, 3, FUZZ_SHAPE_RAW, 1) == 1);
    uintptr_t start = 0;
    size_t bsize = 0;
    B->address(h, 3, &start, &bsize);
    bool hit = false;
    for (size_t i = 0; i < DYING_WEAK && !hit; i++) hit = ~hidden[i] == start;
    if (!hit) continue;
    B->set_ident(h, 3, 4200 + kept, ~(4200 + kept));
    B->raw_write(h, 3, 0, 0xfeedface00 + kept);
    if (kept % 8 == 0) {
      alloc_id(h, 12, 9, 4300 + kept);
      B->store(h, 12, 8, 13);
      B->copy(h, 13, 12);
    }
    B->store(h, 13, kept % 8, 3);
    kept++;
  }
  B->clear(h, 3);
  B->clear(h, 12);
  return kept;
}

static void test_dead_weak_links_dropped(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  static uintptr_t hidden[DYING_WEAK];
  alloc_id(h, 1, 6, 4100);
  size_t kept = 0;
  int attempts = 0;
  for (; attempts < ATTEMPTS && kept == 0; attempts++) { /* the refs may be kept alive too */
    make_dying_weak_refs(h, hidden);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR); /* the weak refs go; their target stays */
    kept = reuse_weak_memory(h, hidden);
  }
  fprintf(stderr, "  %zu of %d dead weak references' memory reused (attempt %d)\n", kept,
          DYING_WEAK, attempts);
  CHECK(kept > 0);
  B->clear(h, 1);
  forget_and_collect(h, FUZZ_COLLECT_MAJOR); /* the target goes: its live links clear */
  size_t intact = 0;
  B->copy(h, 12, 13);
  for (size_t batch = (kept + 7) / 8; batch-- > 0;) {
    for (size_t k = 0; k < 8 && batch * 8 + k < kept; k++) {
      int64_t v = 0;
      size_t i = batch * 8 + k;
      if (B->load(h, 3, 12, k, &v) == FUZZ_FIELD_BLOCK)
        intact += id_of(h, 3) == 4200 + i && B->raw_read(h, 3, 0) == 0xfeedface00 + i;
    }
    int64_t v = 0;
    B->load(h, 12, 12, 8, &v);
  }
  CHECK(intact == kept);
  CHECK(clean_check(h) == 0);
  B->destroy(h);
}

/* A known program gives known counts: two whole collections and nothing else on a fresh heap,
 * every finalizer that ran, a weak reference read after its link was cleared, the allocations a
 * small max_heap refused. */
static void test_rare_events(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  CHECK(B->rare_event_count <= FUZZ_RARE_EVENTS_MAX);
  CHECK(strcmp(B->rare_events[0].name, "cycle") == 0);
  CHECK(fuzz_rare_count(B, h, "cycle") == 0 && fuzz_rare_count(B, h, "full") == 0 &&
        fuzz_rare_count(B, h, "fin.run") == 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(fuzz_rare_count(B, h, "full") == 2 && fuzz_rare_count(B, h, "cycle") == 2 &&
        fuzz_rare_count(B, h, "full.abandoned") == 0);
  CHECK(fuzz_rare_count(B, h, "increments.completed") == 0 &&
        fuzz_rare_count(B, h, "mark.abandoned") == 0);
  for (int attempt = 0; attempt < ATTEMPTS && d.ran == 0; attempt++) {
    drop_with_finalizer(h, 900 + 10 * (uint64_t)attempt);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    B->run_finalizers(h);
  }
  CHECK(d.ran >= 1 && fuzz_rare_count(B, h, "fin.run") == d.ran &&
        fuzz_rare_count(B, h, "fin.nested") == 0);
  bool cleared = false;
  for (int attempt = 0; attempt < ATTEMPTS && !cleared; attempt++) {
    make_weak(h, 7, 950 + 10 * (uint64_t)attempt);
    B->clear(h, 0);
    forget_and_collect(h, FUZZ_COLLECT_MAJOR);
    cleared = B->weak_get(h, 2, 7) == 0;
  }
  CHECK(cleared && fuzz_rare_count(B, h, "weak.read-cleared") == 1);
  CHECK(fuzz_rare_count(B, h, "alloc.failed") == 0);
  B->tune(h, 4, 1); /* max_heap 128 KiB */
  size_t failed_allocs = 0;
  for (int i = 0; i < 64; i++)
    failed_allocs += !B->alloc(h, 8 + (size_t)(i % 8), FUZZ_SHAPE_RAW, 1151);
  CHECK(failed_allocs > 0 && fuzz_rare_count(B, h, "alloc.failed") == failed_allocs);
  B->tune(h, 4, 0);
  CHECK(fuzz_rare_count(B, h, "cycle") >= fuzz_rare_count(B, h, "full"));
  B->destroy(h);
}

int main(void) {
  RUN(test_finalizer_and_resurrection);
  RUN(test_fin_clear);
  RUN(test_weak);
  RUN(test_weak_cleared_before_finalizer);
  RUN(test_dead_weak_links_dropped);
  RUN(test_rare_events);
  return test_summary();
}
