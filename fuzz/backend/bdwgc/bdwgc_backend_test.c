/* The bdwgc backend's table, driven directly: every op of the interface on a healthy heap, the
 * stop-the-world heap first and a random stress of the incremental one after (bdwgc cannot leave
 * incremental mode), and heaps broken on purpose that the deep check must report. The
 * incremental heap's own tests are bdwgc_incremental_test.c, the threads' bdwgc_domains_test.c.
 * Helpers: bdwgc_test.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"
#include "gc.h"

/* ---- Stop-the-world heap --------------------------------------------------------------------- */

/* bdwgc scans an object of more than 128 words in pieces (mark.c: SPLIT_RANGE_WORDS), pushing
 * the rest of it as it goes: blocks referenced only from the words around each piece's edges of
 * a block of 1151 fields must live. First in the process, while bdwgc's own tables (its link
 * hash tables grow with the links the process has held) are under 1 KiB, so a slip in the split
 * loses the test's blocks, which the deep check reports, before it loses bdwgc's own nodes. */
static void test_wide_block_pieces(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  alloc_id(h, 0, 1151, 1);
  size_t stored = 0;
  for (size_t edge = 128; edge < 1151 + 6; edge += 128)
    for (size_t f = edge - 6; f <= edge + 2 && f < 1151; f++) {
      alloc_id(h, 1, 1, 10000 + f);
      B->store(h, 0, f, 1);
      stored++;
    }
  B->clear(h, 1);
  for (int round = 0; round < 2; round++) {
    B->collect(h, round == 0 ? FUZZ_COLLECT_MAJOR : FUZZ_COLLECT_FULL, 0);
    CHECK(clean_check(h) == 0);
  }
  size_t good = 0;
  for (size_t edge = 128; edge < 1151 + 6; edge += 128)
    for (size_t f = edge - 6; f <= edge + 2 && f < 1151; f++) {
      int64_t v = 0;
      good += B->load(h, 2, 0, f, &v) == FUZZ_FIELD_BLOCK && id_of(h, 2) == 10000 + f;
    }
  CHECK(good == stored);
  B->destroy(h);
}

static void test_alloc_and_ident(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  CHECK(h != NULL);
  alloc_id(h, 0, 3, 101);
  CHECK(B->alloc(h, 1, FUZZ_SHAPE_RAW, 4) == 1);
  B->set_ident(h, 1, 102, ~102ull);
  alloc_id(h, 2, 1151, 103);
  CHECK(B->alloc(h, 3, FUZZ_SHAPE_RAW, 1000) == 1);
  B->set_ident(h, 3, 104, ~104ull);
  alloc_id(h, 4, 0, 105);
  CHECK(id_of(h, 0) == 101 && id_of(h, 1) == 102 && id_of(h, 2) == 103);
  CHECK(id_of(h, 3) == 104 && id_of(h, 4) == 105);
  CHECK(id_of(h, 5) == 0); /* empty cell */
  for (size_t w = 0; w < 4; w++) CHECK(B->raw_read(h, 1, w) == 0);
  for (size_t w = 0; w < 1000; w += 97) CHECK(B->raw_read(h, 3, w) == 0);
  int64_t v = -1;
  CHECK(B->load(h, 6, 2, 1150, &v) == FUZZ_FIELD_EMPTY);
  B->raw_write(h, 3, 999, 0xdeadbeef);
  CHECK(B->raw_read(h, 3, 999) == 0xdeadbeef);
  uintptr_t start = 0;
  size_t bsize = 0;
  CHECK(B->address(h, 2, &start, &bsize) == 1);
  CHECK(bsize >= (1151 + 2) * sizeof(uintptr_t));
  CHECK(B->address(h, 5, &start, &bsize) == 0);
  CHECK(clean_check(h) == 0);
  B->destroy(h);
}

static void test_store_load_copy(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  alloc_id(h, 0, 4, 1);
  alloc_id(h, 1, 2, 2);
  B->store(h, 0, 0, 1);
  B->store_int(h, 0, 1, 12345);
  B->store_int(h, 0, 2, 0);
  B->store_int(h, 0, 3, INT64_C(1) << 31);
  int64_t v = 0;
  CHECK(B->load(h, 5, 0, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 5) == 2);
  CHECK(B->load(h, 5, 0, 1, &v) == FUZZ_FIELD_INT && v == 12345 && id_of(h, 5) == 0);
  CHECK(B->load(h, 5, 0, 2, &v) == FUZZ_FIELD_INT && v == 0);
  CHECK(B->load(h, 5, 0, 3, &v) == FUZZ_FIELD_INT && v == INT64_C(1) << 31);
  B->store(h, 0, 0, 9); /* an empty cell stores an empty field */
  CHECK(B->load(h, 5, 0, 0, &v) == FUZZ_FIELD_EMPTY);
  B->copy(h, 6, 1);
  CHECK(id_of(h, 6) == 2);
  B->clear(h, 6);
  CHECK(id_of(h, 6) == 0);
  CHECK(clean_check(h) == 0);
  B->destroy(h);
}

static void test_every_collect_kind(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  build_list(h, 300, 1000);
  static const fuzz_collect_kind kinds[] = {FUZZ_COLLECT_SLICE, FUZZ_COLLECT_MAJOR,
                                            FUZZ_COLLECT_FULL, FUZZ_COLLECT_START};
  for (size_t k = 0; k < 4; k++) {
    B->collect(h, kinds[k], 17);
    CHECK(verify_list(h, 300, 1000) == 300);
    CHECK(clean_check(h) == 0);
  }
  CHECK(walk_hits(h, 1299) == 1);
  size_t live = B->live_bytes(h);
  CHECK(live >= 300 * 4 * sizeof(uintptr_t));
  B->clear(h, 0);
  forget_and_collect(h, FUZZ_COLLECT_FULL);
  size_t after = B->live_bytes(h);
  fprintf(stderr, "  live bytes: %zu with the list, %zu without\n", live, after);
  CHECK(after < live / 4); /* conservative: a few may stay */
  B->destroy(h);
}

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

__attribute__((noinline)) static void aim_range(fuzz_bheap *h, uintptr_t *words, uint64_t id) {
  alloc_id(h, 0, 6, id);
  alloc_id(h, 1, 6, id + 1);
  B->store(h, 0, 5, 1); /* the range keeps id + 1 through the last field of id */
  uintptr_t start = 0;
  size_t bsize = 0;
  CHECK(B->address(h, 0, &start, &bsize) == 1);
  words[2] = start + 3 * sizeof(uintptr_t); /* an interior word */
  B->clear(h, 0);
  B->clear(h, 1);
}

/* A word into the last page of a large block (three pages) keeps it: bdwgc finds the block's
 * start from any of its pages (headers.c: the forwarding counts of GC_install_counts). */
__attribute__((noinline)) static void aim_range_large(fuzz_bheap *h, uintptr_t *words,
                                                      uint64_t id) {
  alloc_id(h, 0, 1151, id);
  uintptr_t start = 0;
  size_t bsize = 0;
  CHECK(B->address(h, 0, &start, &bsize) == 1);
  CHECK(bsize > 2 * 4096);
  words[1] = start + bsize - 3 * sizeof(uintptr_t); /* the identity's last page */
  B->clear(h, 0);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILT_WITH_ASAN 1
#endif
#endif
#ifndef BUILT_WITH_ASAN
#define BUILT_WITH_ASAN 0
#endif

static void test_ranges(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  uintptr_t *words = calloc(4, sizeof *words);
  CHECK(B->range_add(h, words, 4) == 1);
  bool gone = false;
  int attempts = 0;
  for (int attempt = 0; attempt < ATTEMPTS && !gone; attempt++, attempts++) {
    uint64_t id = 610 + 10 * (uint64_t)attempt;
    aim_range(h, words, id);
    forget_and_collect(h, FUZZ_COLLECT_FULL);
    CHECK(walk_hits(h, id) == 1 && walk_hits(h, id + 1) == 1); /* kept by the range alone */
    CHECK(clean_check(h) == 0);
    words[2] = 0;
    forget_and_collect(h, FUZZ_COLLECT_FULL);
    gone = walk_hits(h, id) == 0 && walk_hits(h, id + 1) == 0;
  }
  /* A block the range alone kept must go when the word does. Not under ASan with the threaded
   * libgc: there a copy of the address survives somewhere bdwgc scans conservatively (every
   * attempt, not by chance; the single-threaded build freed it at the first), so that build
   * shows only what comes before. */
  CHECK(gone || BUILT_WITH_ASAN);
  fprintf(stderr, "  range-kept blocks %s after %d attempt(s)\n", gone ? "gone" : "still held",
          attempts);
  aim_range_large(h, words, 690);
  CHECK(clean_check(h) == 0); /* GC_base must know the block's last page */
  for (int round = 0; round < 3; round++) {
    forget_and_collect(h, FUZZ_COLLECT_FULL);
    CHECK(B->alloc(h, 5, FUZZ_SHAPE_SCAN, 1151) == 1); /* would reuse it, were it freed */
    B->clear(h, 5);
  }
  CHECK(walk_hits(h, 690) == 1 && clean_check(h) == 0);
  B->destroy(h);
  free(words);
}

/* Two shapes for bdwgc's marker. Deep: a chain of DEEP nodes of FAN fields (below the 128 words
 * bdwgc scans in one piece), FAN - 1 leaves each and the next node in the last field; every leaf
 * holds a child of its own. The mark stack is LIFO and a node's fields are pushed in address
 * order, so the next node is taken first and the leaves pile up: about DEEP * FAN entries at
 * once, past the initial stack of 4096 (mark.c: INITIAL_MARK_STACK_SIZE) and the doubled ones
 * after it, so bdwgc overflows, discards entries (marked leaves whose children are not) and must
 * rescan from the marked objects. Wide: blocks of 1151 fields, all distinct leaves, which bdwgc
 * scans in 128-word pieces (mark.c: SPLIT_RANGE_WORDS). Ids: a node id + node * fan, its leaf f
 * one more than that plus f, the leaf's child that plus CHILD_ID. */
enum { DEEP = SLOW_SANITIZER ? 40 : 80, FAN = 120, WIDE_BLOCKS = 8, WIDE = 1151 };
enum { CHILD_ID = 500000 };

static void build_fan_chain(fuzz_bheap *h, size_t cell, size_t nodes, size_t fan, uint64_t id,
                            bool children) {
  for (size_t node = nodes; node-- > 0;) {
    alloc_id(h, 1, fan, id + node * fan);
    B->store(h, 1, fan - 1, cell);
    for (size_t f = 0; f + 1 < fan; f++) {
      uint64_t leaf = id + node * fan + 1 + f;
      alloc_id(h, 2, children ? 1 : 0, leaf);
      if (children) {
        alloc_id(h, 4, 0, leaf + CHILD_ID);
        B->store(h, 2, 0, 4);
      }
      B->store(h, 1, f, 2);
    }
    B->copy(h, cell, 1);
  }
  B->clear(h, 1);
  B->clear(h, 2);
  B->clear(h, 4);
}

static size_t verify_fan_chain(fuzz_bheap *h, size_t cell, size_t nodes, size_t fan, uint64_t id,
                               bool children) {
  size_t good = 0;
  B->copy(h, 1, cell);
  for (size_t node = 0; node < nodes; node++) {
    good += id_of(h, 1) == id + node * fan;
    for (size_t f = 0; f + 1 < fan; f++) {
      uint64_t leaf = id + node * fan + 1 + f;
      int64_t v = 0;
      if (B->load(h, 2, 1, f, &v) != FUZZ_FIELD_BLOCK || id_of(h, 2) != leaf) continue;
      if (!children ||
          (B->load(h, 4, 2, 0, &v) == FUZZ_FIELD_BLOCK && id_of(h, 4) == leaf + CHILD_ID))
        good++;
    }
    int64_t v = 0;
    B->load(h, 1, 1, fan - 1, &v);
  }
  B->clear(h, 1);
  B->clear(h, 2);
  B->clear(h, 4);
  return good;
}

static void test_mark_stack_overflow(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  build_fan_chain(h, 0, DEEP, FAN, 1000000, true);
  build_fan_chain(h, 3, WIDE_BLOCKS, WIDE, 2000000, false);
  for (int round = 0; round < 3; round++) {
    B->collect(h, FUZZ_COLLECT_MAJOR, 0);
    CHECK(clean_check(h) == 0);
  }
  CHECK(verify_fan_chain(h, 0, DEEP, FAN, 1000000, true) == (size_t)DEEP * FAN);
  CHECK(verify_fan_chain(h, 3, WIDE_BLOCKS, WIDE, 2000000, false) == (size_t)WIDE_BLOCKS * WIDE);
  B->destroy(h);
}

/* Every block size the interface has, each live block right after a garbage one of its own size
 * (so most share a heap block with garbage), in a chain through field 0 (size 0: through the
 * cells it is kept in, four at a time, and dropped). */
static void test_every_size(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  for (size_t n = 1; n <= MAX_TEST_FIELDS; n++) {
    CHECK(B->alloc(h, 3, n % 5 ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW, n) == 1); /* garbage */
    alloc_id(h, 1, n, 400000 + n);
    B->store(h, 1, 0, 0);
    B->copy(h, 0, 1);
  }
  B->clear(h, 1);
  B->clear(h, 3);
  for (int round = 0; round < 2; round++) {
    B->collect(h, round ? FUZZ_COLLECT_FULL : FUZZ_COLLECT_MAJOR, 0);
    CHECK(clean_check(h) == 0);
    /* Allocate into what the collection freed: a live block handed out again shows here. */
    for (size_t n = 1; n <= MAX_TEST_FIELDS; n += 7) {
      CHECK(B->alloc(h, 3, FUZZ_SHAPE_SCAN, n) == 1);
      B->set_ident(h, 3, 1, 1);
    }
    B->clear(h, 3);
    size_t good = 0;
    B->copy(h, 1, 0);
    for (size_t n = MAX_TEST_FIELDS; n >= 1; n--) {
      good += id_of(h, 1) == 400000 + n;
      int64_t v = 0;
      if (B->load(h, 1, 1, 0, &v) != FUZZ_FIELD_BLOCK) break;
    }
    CHECK(good == MAX_TEST_FIELDS);
    CHECK(clean_check(h) == 0);
  }
  B->destroy(h);
}

/* The address of a block about to die, kept complemented, or the test's own stack would keep the
 * block alive. */
__attribute__((noinline)) static uintptr_t dead_address_hidden(fuzz_bheap *h) {
  alloc_id(h, 3, 40, 91);
  uintptr_t start = 0;
  size_t bsize = 0;
  B->address(h, 3, &start, &bsize);
  B->clear(h, 3);
  return ~start;
}

/* The deep check on heaps broken on purpose. raw_write on a scanned block writes its field word + 2, behind the barrier's back. */
static void test_check_reports_broken_heaps(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  alloc_id(h, 0, 3, 81);
  alloc_id(h, 1, 3, 82);
  uintptr_t start = 0;
  size_t bsize = 0;
  B->address(h, 1, &start, &bsize);
  B->raw_write(h, 0, 0, start + sizeof(uintptr_t)); /* field 2: into the middle of a block */
  fuzz_finding f[4];
  size_t n = B->check(h, f, 4);
  CHECK(n == 1 && strcmp(f[0].kind, "bdwgc.dangling") == 0);
  int64_t v = 0;
  CHECK(B->load(h, 5, 0, 2, &v) == FUZZ_FIELD_OTHER);
  B->store_int(h, 0, 2, 3);
  CHECK(clean_check(h) == 0);

  /* A field naming a block bdwgc has found unreachable (freed, its memory on a free list). */
  uintptr_t dead_hidden = dead_address_hidden(h);
  forget_and_collect(h, FUZZ_COLLECT_MAJOR);
  if (walk_hits(h, 91) == 0) {
    B->raw_write(h, 0, 0, ~dead_hidden);
    n = B->check(h, f, 4);
    CHECK(n == 1);
    CHECK(n >= 1 && (strcmp(f[0].kind, "bdwgc.freed-reachable") == 0 ||
                     strcmp(f[0].kind, "bdwgc.dangling") == 0));
    if (n >= 1) fprintf(stderr, "  reported as expected: %s: %s\n", f[0].kind, f[0].message);
    CHECK(B->load(h, 5, 0, 2, &v) == FUZZ_FIELD_OTHER);
    B->store_int(h, 0, 2, 1);
  } else {
    fprintf(stderr, "  (the dead block stayed alive conservatively; skipped)\n");
  }
  CHECK(clean_check(h) == 0);
  B->destroy(h);
}

static void test_tunables(void) {
  driver d;
  fuzz_bheap *h = make(&d, "mode=stop");
  CHECK(B->tunable_count >= 5 && B->tunable_count <= FUZZ_TUNABLES_MAX);
  static const unsigned corners[] = {0, 1, 2, 31, 32, 128, 255};
  for (unsigned p = 0; p < B->tunable_count; p++) {
    if (p == 4) continue; /* max_heap: below */
    for (size_t c = 0; c < sizeof corners / sizeof corners[0]; c++) {
      B->tune(h, p, corners[c]);
      build_list(h, 40, 5000);
      B->collect(h, FUZZ_COLLECT_SLICE, corners[c]);
      CHECK(verify_list(h, 40, 5000) == 40);
      CHECK(clean_check(h) == 0);
    }
  }
  /* max_heap is a real limit: allocations fail once the heap is full, and the heap is sound. */
  B->tune(h, 4, 1);
  size_t failed_allocs = 0, made = 0;
  for (size_t i = 0; i < 4000 && failed_allocs == 0; i++) {
    if (!B->alloc(h, 2, FUZZ_SHAPE_SCAN, 1000)) {
      failed_allocs++;
      CHECK(id_of(h, 2) == 0);
      continue;
    }
    made++;
    B->set_ident(h, 2, i, ~(uint64_t)i);
    B->store(h, 2, 0, 3); /* a chain: every block stays reachable */
    B->copy(h, 3, 2);
  }
  fprintf(stderr, "  max_heap 128 KiB: %zu blocks of 8 KiB, then a refusal\n", made);
  CHECK(failed_allocs == 1);
  B->clear(h, 2);
  B->clear(h, 3);
  CHECK(verify_list(h, 40, 5000) == 40 && clean_check(h) == 0);
  B->tune(h, 4, 0);
  CHECK(B->alloc(h, 2, FUZZ_SHAPE_SCAN, 1000) == 1);
  B->destroy(h);
}

static void test_many_heaps(void) {
  for (int round = 0; round < 40; round++) {
    driver d;
    fuzz_bheap *h = make(&d, "mode=stop");
    CHECK(h != NULL);
    if (h == NULL) return;
    build_list(h, 50, 100);
    CHECK(B->fin_set(h, 0, 1) == 1);
    CHECK(B->weak_new(h, 4, 0) == 1);
    B->collect(h, round % 2 ? FUZZ_COLLECT_MAJOR : FUZZ_COLLECT_SLICE, 3);
    CHECK(verify_list(h, 50, 100) == 50);
    B->destroy(h); /* the finalizer must not run in the next heap */
    CHECK(d.ran == 0);
  }
  /* The other finalizer orders and long weak links take the same ops. */
  driver d3;
  fuzz_bheap *h3 = make(&d3, "mode=stop,fin=unordered weak=long");
  CHECK(h3 != NULL);
  if (h3 != NULL) {
    build_list(h3, 20, 100);
    CHECK(B->fin_set(h3, 0, 1) == 1 && B->fin_clear(h3, 0) == 1);
    CHECK(B->weak_new(h3, 4, 0) == 1 && B->weak_get(h3, 5, 4) == 1 && id_of(h3, 5) == 100);
    B->collect(h3, FUZZ_COLLECT_MAJOR, 0);
    CHECK(verify_list(h3, 20, 100) == 20 && clean_check(h3) == 0);
    B->destroy(h3);
  }
  CHECK((h3 = make(&d3, "fin=ignore_self mode=stop")) != NULL);
  if (h3 != NULL) B->destroy(h3);
  driver d1, d2;
  fuzz_bheap *h1 = make(&d1, "mode=stop");
  fuzz_bheap *h2 = make(&d2, "mode=stop"); /* one heap at a time */
  CHECK(h2 == NULL);
  B->destroy(h1);
  CHECK(make(&d2, "colour=blue") == NULL);
}

/* ---- A random program against a model -------------------------------------------------------- */

/* A small model of the heap: what each cell and field holds. After every collection the deep
 * check must be clean and the walk must list every block the model reaches, with its identity;
 * every load must read back what the model says; a finalizer may run only for a block the model
 * no longer reaches, and a weak reference to a reachable block must still name it. */
enum {
  MODEL_BLOCKS = 8192,
  STRESS_OPS = SLOW_SANITIZER ? 1000 : 2500,
  STRESS_SEEDS = SLOW_SANITIZER ? 2 : 4
};

typedef struct model_field {
  int kind;  /* FUZZ_FIELD_EMPTY, _INT, _BLOCK */
  int64_t v; /* the integer, or the model block index */
} model_field;

typedef struct model_block {
  fuzz_block_shape shape;
  bool weak;
  size_t fields;
  model_field *f; /* scan: fields; raw: payload words in .v */
  long target;    /* weak: the model block it names */
  bool finalized;
} model_block;

static struct {
  fuzz_bheap *h;
  model_block b[MODEL_BLOCKS];
  size_t count;
  long cell[CELLS];
  uint64_t rng;
  bool reach[MODEL_BLOCKS];
  size_t finalized, weak_cleared;
} M;

static uint64_t next_random(void) {
  M.rng ^= M.rng << 13;
  M.rng ^= M.rng >> 7;
  M.rng ^= M.rng << 17;
  return M.rng;
}

static uint64_t model_id(long i) { return 0x5000000 + (uint64_t)i; }

static void model_reach(void) {
  long stack[MODEL_BLOCKS];
  size_t depth = 0;
  memset(M.reach, 0, sizeof M.reach);
  for (size_t c = 0; c < CELLS; c++)
    if (M.cell[c] >= 0 && !M.reach[M.cell[c]]) M.reach[stack[depth++] = M.cell[c]] = true;
  while (depth > 0) {
    model_block *b = &M.b[stack[--depth]];
    if (b->shape != FUZZ_SHAPE_SCAN || b->weak) continue;
    for (size_t i = 0; i < b->fields; i++)
      if (b->f[i].kind == FUZZ_FIELD_BLOCK && !M.reach[b->f[i].v])
        M.reach[stack[depth++] = (long)b->f[i].v] = true;
  }
}

/* Finalizers run in run_finalizers and at the end of an allocating op (alloc, weak_new, fin_set)
 * whose allocation collected: reachability is the model's as of the op's start. */
static void stress_finalize(void *user, uint64_t token) {
  (void)user;
  model_reach();
  long i = (long)token;
  CHECK(i >= 0 && (size_t)i < M.count && !M.reach[i] && !M.b[i].finalized);
  CHECK(id_of(M.h, CELLS) == model_id(i));
  if (i >= 0 && (size_t)i < M.count) M.b[i].finalized = true;
  M.finalized++;
}

typedef struct walk_seen {
  bool seen[MODEL_BLOCKS];
} walk_seen;

static void stress_visit(void *user, uint64_t id, uint64_t check) {
  walk_seen *w = user;
  if (id >= model_id(0) && id < model_id((long)M.count) && check == ~id)
    w->seen[id - model_id(0)] = true;
}

static void stress_verify(void) {
  CHECK(clean_check(M.h) == 0);
  model_reach();
  static walk_seen w;
  memset(&w, 0, sizeof w);
  CHECK(B->walk(M.h, stress_visit, &w) == 0);
  size_t missing = 0;
  for (size_t i = 0; i < M.count; i++) missing += M.reach[i] && !w.seen[i];
  if (missing) fprintf(stderr, "  %zu reachable blocks missing from the walk\n", missing);
  CHECK(missing == 0);
  CHECK(B->run_finalizers(M.h) < MODEL_BLOCKS); /* the callback checks each */
}

static void stress_step(void) {
  size_t a = next_random() % CELLS, c = next_random() % CELLS;
  long ba = M.cell[a];
  model_block *b = ba >= 0 ? &M.b[ba] : NULL;
  bool scan = b != NULL && b->shape == FUZZ_SHAPE_SCAN && !b->weak && b->fields > 0;
  switch (next_random() % 20) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: { /* alloc */
      if (M.count == MODEL_BLOCKS) break;
      fuzz_block_shape shape = next_random() % 5 ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW;
      size_t n = next_random() % 16 ? next_random() % 12 : next_random() % 1152;
      long i = (long)M.count;
      if (!B->alloc(M.h, a, shape, n)) {
        CHECK(id_of(M.h, a) == 0);
        M.cell[a] = -1;
        break;
      }
      model_block *nb = &M.b[M.count++];
      *nb = (model_block){.shape = shape, .fields = n, .target = -1};
      nb->f = calloc(n ? n : 1, sizeof *nb->f);
      B->set_ident(M.h, a, model_id(i), ~model_id(i));
      M.cell[a] = i;
      break;
    }
    case 5:
    case 6:
    case 7:
    case 8: /* store */
      if (!scan) break;
      {
        size_t f = next_random() % b->fields;
        B->store(M.h, a, f, c);
        b->f[f] = (model_field){M.cell[c] >= 0 ? FUZZ_FIELD_BLOCK : FUZZ_FIELD_EMPTY, M.cell[c]};
      }
      break;
    case 9: /* store_int */
      if (!scan) break;
      {
        size_t f = next_random() % b->fields;
        int64_t v = (int64_t)(next_random() % (UINT64_C(1) << 31));
        B->store_int(M.h, a, f, v);
        b->f[f] = (model_field){FUZZ_FIELD_INT, v};
      }
      break;
    case 10:
    case 11:
    case 12: { /* load */
      if (!scan) break;
      size_t f = next_random() % b->fields;
      int64_t v = -1;
      model_field want = b->f[f];
      fuzz_field_kind k = B->load(M.h, c, a, f, &v);
      CHECK((int)k == want.kind);
      if (k == FUZZ_FIELD_INT) CHECK(v == want.v);
      if (k == FUZZ_FIELD_BLOCK) CHECK(id_of(M.h, c) == model_id((long)want.v));
      M.cell[c] = k == FUZZ_FIELD_BLOCK ? (long)want.v : -1;
      break;
    }
    case 13: /* raw words */
      if (b == NULL || b->shape != FUZZ_SHAPE_RAW || b->fields == 0) break;
      {
        size_t w = next_random() % b->fields;
        CHECK(B->raw_read(M.h, a, w) == (uint64_t)b->f[w].v);
        b->f[w].v = (int64_t)next_random();
        B->raw_write(M.h, a, w, (uint64_t)b->f[w].v);
      }
      break;
    case 14:
      B->copy(M.h, a, c);
      M.cell[a] = M.cell[c];
      break;
    case 15:
      B->clear(M.h, a);
      M.cell[a] = -1;
      break;
    case 16: /* finalizer or weak reference */
      if (next_random() % 2 && b != NULL && !b->weak) {
        CHECK(B->fin_set(M.h, a, (uint64_t)ba) == 1);
      } else if (M.count < MODEL_BLOCKS) {
        long i = (long)M.count;
        if (!B->weak_new(M.h, c, a)) break;
        M.b[M.count++] = (model_block){.weak = true, .target = ba};
        B->set_ident(M.h, c, model_id(i), ~model_id(i));
        M.cell[c] = i;
      }
      break;
    case 17: /* weak get */
      if (b == NULL || !b->weak) break;
      model_reach();
      if (B->weak_get(M.h, c, a)) {
        CHECK(b->target >= 0 && id_of(M.h, c) == model_id(b->target));
        CHECK(b->target < 0 || !M.b[b->target].finalized);
        M.cell[c] = b->target;
      } else {
        CHECK(b->target < 0 || !M.reach[b->target]);
        M.cell[c] = -1;
        M.weak_cleared++;
      }
      break;
    case 18: { /* tune: any but max_heap */
      unsigned p = (unsigned)(next_random() % B->tunable_count);
      if (p != 4) B->tune(M.h, p, (unsigned)(next_random() % 256));
      break;
    }
    case 19: /* collect */
      B->collect(M.h, (fuzz_collect_kind)(next_random() % 4), (unsigned)(next_random() % 256));
      model_reach();
      stress_verify();
      break;
  }
}

static void stress(const char *params, uint64_t seed) {
  memset(&M, 0, sizeof M);
  M.rng = seed;
  for (size_t c = 0; c < CELLS; c++) M.cell[c] = -1;
  fuzz_backend_config cfg = {.cells = CELLS, .params = params, .out = stderr};
  cfg.events.finalize = stress_finalize;
  M.h = B->create(&cfg);
  CHECK(M.h != NULL);
  if (M.h == NULL) return;
  for (int op = 0; op < STRESS_OPS; op++) stress_step();
  B->collect(M.h, FUZZ_COLLECT_FULL, 0);
  model_reach();
  stress_verify();
  fprintf(stderr, "  %s seed %llu: %zu blocks, %zu finalized, %zu weak reads cleared\n", params,
          (unsigned long long)seed, M.count, M.finalized, M.weak_cleared);
  B->destroy(M.h);
  for (size_t i = 0; i < M.count; i++) free(M.b[i].f);
}

static void test_stress_stop(void) {
  for (uint64_t seed = 1; seed <= STRESS_SEEDS; seed++)
    stress("mode=stop", seed * 0x9E3779B97F4A7C15ull);
}

static void test_stress_incremental(void) {
  for (uint64_t seed = 1; seed <= 4; seed++)
    stress("mode=incremental", seed * 0x2545F4914F6CDD1Dull);
}

int main(void) {
  CHECK(strcmp(B->name, "bdwgc") == 0);
  CHECK(fuzz_backend_find("bdwgc") == B);
  RUN(test_wide_block_pieces); /* first: see its comment */
  RUN(test_alloc_and_ident);
  RUN(test_store_load_copy);
  RUN(test_every_collect_kind);
  RUN(test_finalizer_and_resurrection);
  RUN(test_fin_clear);
  RUN(test_weak);
  RUN(test_weak_cleared_before_finalizer);
  RUN(test_dead_weak_links_dropped);
  RUN(test_ranges);
  RUN(test_mark_stack_overflow);
  RUN(test_every_size);
  RUN(test_check_reports_broken_heaps);
  RUN(test_tunables);
  RUN(test_many_heaps);
  RUN(test_stress_stop);
  RUN(test_stress_incremental); /* bdwgc_incremental_test: the incremental heap's own tests */
  return test_summary();
}
