/* The bdwgc backend's deep check on a heap broken on purpose: a field into the middle of a
 * block (bdwgc.dangling), a field naming a block bdwgc freed (bdwgc.freed-reachable), each
 * clean again once repaired. Helpers: bdwgc_test.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"

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

int main(void) {
  RUN(test_check_reports_broken_heaps);
  return test_summary();
}
