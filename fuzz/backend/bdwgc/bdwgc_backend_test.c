/* The bdwgc backend's table, driven directly on the stop-the-world heap: blocks and identities,
 * fields, every collection kind, the tunables' corners and max_heap, many heaps one after
 * another and the params. The other tests, each in a process of its own: what the marker must
 * keep (bdwgc_marking_test.c), finalizers and weak references (bdwgc_finalize_test.c), heaps
 * broken on purpose (bdwgc_broken_heap_test.c), random programs against a model
 * (bdwgc_model_test.c), the incremental heap (bdwgc_incremental_test.c), threads
 * (bdwgc_domains_test.c). Helpers: bdwgc_test.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"

/* ---- Stop-the-world heap --------------------------------------------------------------------- */

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

int main(void) {
  CHECK(strcmp(B->name, "bdwgc") == 0);
  CHECK(fuzz_backend_find("bdwgc") == B);
  RUN(test_alloc_and_ident);
  RUN(test_store_load_copy);
  RUN(test_every_collect_kind);
  RUN(test_tunables);
  RUN(test_many_heaps);
  return test_summary();
}
