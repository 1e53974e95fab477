/* What the bdwgc backend's tests share: the checks' counters, a driver for the finalizer
 * callback, heaps, blocks with identities, lists, and the deep check run expecting nothing.
 *
 * bdwgc scans the C stack conservatively: a block a test drops may survive in a dead stack slot
 * or a register. The tests that expect a block to go drop it and collect in noinline functions
 * and scrub the stack below them first (forget_and_collect). */
#ifndef FUZZ_BACKEND_BDWGC_BDWGC_TEST_H
#define FUZZ_BACKEND_BDWGC_BDWGC_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"

extern const fuzz_backend fuzz_backend_bdwgc;
#define B (&fuzz_backend_bdwgc)

extern int failures, passed, failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* Run test(args...) and count it passed or failed by the CHECKs it failed. */
#define RUN(test, ...)                                                        \
  do {                                                                        \
    int before_ = failures;                                                   \
    test(__VA_ARGS__);                                                        \
    fprintf(stderr, "%s %s\n", failures == before_ ? "ok  " : "FAIL", #test); \
    if (failures == before_)                                                  \
      passed++;                                                               \
    else                                                                      \
      failed++;                                                               \
  } while (0)

enum { CELLS = 16, MAX_TEST_FIELDS = 1151 };

/* MemorySanitizer makes bdwgc's heap scans several times slower: the same tests, smaller, so
 * the whole stays within a small test's minute. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define SLOW_SANITIZER 1
#endif
#endif
#ifndef SLOW_SANITIZER
#define SLOW_SANITIZER 0
#endif

/* The driver's side of the finalizer callback: what ran, and a cell to resurrect into. */
typedef struct driver {
  fuzz_bheap *h;
  uint64_t tokens[32];
  uint64_t ids[32];
  size_t ran;
  size_t resurrect_into; /* SIZE_MAX: do not resurrect */
  size_t weak_cell;      /* SIZE_MAX, or a weak reference to read while a finalizer runs */
  int weak_at_finalize;  /* what weak_get said then */
} driver;

fuzz_bheap *make(driver *d, const char *params);
/* A scanned block with identity (id, ~id) into cell. */
void alloc_id(fuzz_bheap *h, size_t cell, size_t fields, uint64_t id);
/* The id of the block in cell, 0 when empty, UINT64_MAX when its check word is not ~id. */
uint64_t id_of(fuzz_bheap *h, size_t cell);
/* How many blocks the walk met with identity (id, ~id). */
size_t walk_hits(fuzz_bheap *h, uint64_t id);
/* The deep check's findings on a heap that must have none: each printed, and the first as a
 * GCFUZZ-VERDICT line (the zoo keys a test's failure on the check that saw it). */
size_t clean_check(fuzz_bheap *h);
void scrub_stack(void);
void forget_and_collect(fuzz_bheap *h, fuzz_collect_kind kind);
/* A list of n blocks hanging off cell 0 through field 0, ids first_id..; garbage between. */
void build_list(fuzz_bheap *h, size_t n, uint64_t first_id);
size_t verify_list(fuzz_bheap *h, size_t n, uint64_t first_id);

/* A block dropped in a conservative heap goes only when no stale word points into it: a dead
 * stack slot, a register, a field of a garbage object some stale word marks again. So each test
 * that needs a dropped finalizable block to go tries up to ATTEMPTS fresh ones (bdwgc_test.c). */
enum { ATTEMPTS = 5 };
void drop_with_finalizer(fuzz_bheap *h, uint64_t id);

/* The summary line; the exit status. */
int test_summary(void);

#endif /* FUZZ_BACKEND_BDWGC_BDWGC_TEST_H */
