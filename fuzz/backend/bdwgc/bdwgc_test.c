/* What the bdwgc backend's tests share (bdwgc_test.h). */
#include "fuzz/backend/bdwgc/bdwgc_test.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int failures, passed, failed;

static void on_finalize(void *user, uint64_t token) {
  driver *d = user;
  uint64_t id = 0, check = 0;
  B->get_ident(d->h, CELLS, &id, &check); /* FUZZ_CELL_SELF */
  if (d->ran < 32) {
    d->tokens[d->ran] = token;
    d->ids[d->ran] = id;
  }
  d->ran++;
  if (d->weak_cell != SIZE_MAX) {
    d->weak_at_finalize = B->weak_get(d->h, CELLS - 2, d->weak_cell);
    B->clear(d->h, CELLS - 2);
  }
  if (d->resurrect_into != SIZE_MAX) B->copy(d->h, d->resurrect_into, CELLS);
}

fuzz_bheap *make(driver *d, const char *params) {
  memset(d, 0, sizeof *d);
  d->resurrect_into = SIZE_MAX;
  d->weak_cell = SIZE_MAX;
  fuzz_backend_config cfg = {.cells = CELLS, .params = params, .out = stderr};
  cfg.events.user = d;
  cfg.events.finalize = on_finalize;
  d->h = B->create(&cfg);
  return d->h;
}

/* Allocate a scanned block with identity (id, ~id) into cell. */
void alloc_id(fuzz_bheap *h, size_t cell, size_t fields, uint64_t id) {
  CHECK(B->alloc(h, cell, FUZZ_SHAPE_SCAN, fields) == 1);
  B->set_ident(h, cell, id, ~id);
}

uint64_t id_of(fuzz_bheap *h, size_t cell) {
  uint64_t id = 0, check = 0;
  if (!B->get_ident(h, cell, &id, &check)) return 0;
  return check == ~id ? id : UINT64_MAX;
}

typedef struct seen {
  uint64_t want;
  size_t hits, total;
} seen;

static void count_id(void *user, uint64_t id, uint64_t check) {
  seen *s = user;
  s->total++;
  if (id == s->want && check == ~id) s->hits++;
}

size_t walk_hits(fuzz_bheap *h, uint64_t id) {
  seen s = {.want = id};
  CHECK(B->walk(h, count_id, &s) == 0);
  return s.hits;
}

size_t clean_check(fuzz_bheap *h) {
  fuzz_finding f[4];
  size_t n = B->check(h, f, 4);
  for (size_t i = 0; i < n && i < 4; i++)
    fprintf(stderr, "  finding %s: %s\n", f[i].kind, f[i].message);
  if (n > 0)
    fprintf(stderr,
            "GCFUZZ-VERDICT {\"kind\": \"%s\", \"pass\": \"bdwgc\", \"point\": \"test\", "
            "\"op\": -1, \"cycle\": -1}\n",
            f[0].kind);
  return n;
}

/* Overwrite the dead stack below the caller, where the backend's frames left block addresses. */
__attribute__((noinline)) void scrub_stack(void) {
  volatile uintptr_t junk[4096];
  for (size_t i = 0; i < 4096; i++) junk[i] = 0;
}

/* Collect until the dropped blocks are gone: a few rounds, each with a scrubbed stack and a
 * little allocation, which also moves bdwgc's own caches on (under ASan a dropped block was
 * seen to survive two collections this way, never five). */
__attribute__((noinline)) void forget_and_collect(fuzz_bheap *h, fuzz_collect_kind kind) {
  for (int round = 0; round < 5; round++) {
    scrub_stack();
    B->alloc(h, CELLS - 1, FUZZ_SHAPE_SCAN, 1 + (size_t)round);
    B->alloc(h, CELLS - 1, FUZZ_SHAPE_RAW, 30);
    B->clear(h, CELLS - 1);
    scrub_stack();
    B->collect(h, kind, 255);
  }
}

/* A list of n blocks hanging off cell 0, and garbage between them. */
void build_list(fuzz_bheap *h, size_t n, uint64_t first_id) {
  alloc_id(h, 0, 2, first_id);
  B->copy(h, 1, 0);
  for (size_t i = 1; i < n; i++) {
    alloc_id(h, 2, 2 + i % 7, first_id + i);
    B->store(h, 1, 0, 2);
    B->store_int(h, 1, 1, (int64_t)i);
    B->copy(h, 1, 2);
    CHECK(B->alloc(h, 3, i % 3 ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW, i % 200) == 1); /* garbage */
  }
  B->clear(h, 1);
  B->clear(h, 2);
  B->clear(h, 3);
}

size_t verify_list(fuzz_bheap *h, size_t n, uint64_t first_id) {
  size_t good = 0;
  B->copy(h, 1, 0);
  for (size_t i = 0; i < n; i++) {
    if (id_of(h, 1) == first_id + i) good++;
    int64_t v = 0;
    if (i + 1 < n && B->load(h, 1, 1, 0, &v) != FUZZ_FIELD_BLOCK) break;
  }
  B->clear(h, 1);
  return good;
}

/* Blocks of 6 fields (80 bytes: no size class bdwgc's own nodes use): seen while the backend
 * still let bdwgc scan static data, bdwgc's own GC_unix_mmap_get_mem.last_addr (its next mmap
 * hint) named the start of a heap section where an outgrown long-link hash table lay, which then
 * kept whatever 32-byte objects later filled the slots its stale words named. */
__attribute__((noinline)) void drop_with_finalizer(fuzz_bheap *h, uint64_t id) {
  alloc_id(h, 0, 6, id);
  alloc_id(h, 1, 6, id + 1); /* reachable from the finalized block only */
  B->store(h, 0, 0, 1);
  CHECK(B->fin_set(h, 0, id) == 1);
  CHECK(B->fin_set(h, 0, id * 10) == 1); /* replaces */
  B->clear(h, 0);
  B->clear(h, 1);
}

int test_summary(void) {
  fprintf(stderr, "%d passed, %d failed\n", passed, failed);
  return failed == 0 && failures == 0 ? 0 : 1;
}
