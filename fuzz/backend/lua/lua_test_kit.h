/* What the Lua backend's tests share (lua_*_test.c): the CHECK and RUN macros, their counters
 * and the summary line, heaps with a finalizer log, the deep check's findings asserted clean or
 * of one kind, identities, the walk, a chain of blocks, and painting an object black.
 * Static: each test binary has its own copy. */
#ifndef FUZZ_BACKEND_LUA_LUA_TEST_KIT_H
#define FUZZ_BACKEND_LUA_LUA_TEST_KIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/lua/lua_check.h"
#include "lgc.h"
#include "lobject.h"
#include "lstate.h"
#include "ltable.h"

static int passed, failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      passed++;                                                                \
    } else {                                                                   \
      failed++;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* LUAB_TEST_ONLY=name runs one test (by hand, e.g. on a mutant). */
#define RUN(test)                                                             \
  do {                                                                        \
    const char *only = getenv("LUAB_TEST_ONLY");                              \
    if (only != NULL && strcmp(only, #test) != 0) break;                      \
    int before = failed;                                                      \
    test();                                                                   \
    fprintf(stderr, "%-40s %s\n", #test, failed == before ? "ok" : "FAILED"); \
  } while (0)

/* The summary line ("N passed, M failed": N and M count CHECKs); the exit status. */
static inline int summary(void) {
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

extern const fuzz_backend fuzz_backend_lua; /* lua_backend.c: only the registry names it */
static const fuzz_backend *const B = &fuzz_backend_lua;
enum { CELLS = 16, SELF = CELLS, FINDINGS_MAX = 32 };

/* ---- Helpers -------------------------------------------------------------------------------- */

typedef struct fin_log {
  fuzz_bheap *h;
  size_t n;
  uint64_t tokens[64], ids[64];
  size_t resurrect_into; /* SIZE_MAX: none */
} fin_log;

static inline void log_finalize(void *user, uint64_t token) {
  fin_log *log = user;
  uint64_t id = 0, check = 0;
  int full = B->get_ident(log->h, SELF, &id, &check);
  if (log->n < 64) {
    log->tokens[log->n] = token;
    log->ids[log->n] = full ? id : 0;
  }
  log->n++;
  if (log->resurrect_into != SIZE_MAX) B->copy(log->h, log->resurrect_into, SELF);
}

static inline fuzz_bheap *make_heap(fin_log *log, size_t cells, const char *params) {
  memset(log, 0, sizeof *log);
  log->resurrect_into = SIZE_MAX;
  fuzz_backend_config cfg = {.cells = cells,
                             .params = params,
                             .out = stderr,
                             .events = {.user = log, .finalize = log_finalize}};
  log->h = B->create(&cfg);
  return log->h;
}

static inline size_t findings(fuzz_bheap *h, fuzz_finding *out) {
  return B->check(h, out, FINDINGS_MAX);
}

static inline void print_findings(const fuzz_finding *f, size_t n) {
  for (size_t i = 0; i < n && i < FINDINGS_MAX; i++)
    fprintf(stderr, "  finding %s: %s\n", f[i].kind, f[i].message);
}

/* An unexpected finding also prints a verdict line (invariants/verdict.h's format), so the zoo
 * (ci/mutants/lua) credits a kill to the check that made it; findings a test provokes on
 * purpose (only_kind, has_kind) print none. */
static inline void print_verdict(const fuzz_finding *f) {
  printf(
      "GCFUZZ-VERDICT {\"kind\": \"%s\", \"pass\": \"lua\", \"point\": \"op\", \"op\": -1, "
      "\"cycle\": -1}\n",
      f->kind);
  fflush(stdout);
}

static inline int clean(fuzz_bheap *h) {
  fuzz_finding f[FINDINGS_MAX];
  size_t n = findings(h, f);
  print_findings(f, n);
  if (n > 0) print_verdict(&f[0]);
  return n == 0;
}

/* Some findings, every one of the kind. */
static inline int only_kind(fuzz_bheap *h, const char *kind) {
  fuzz_finding f[FINDINGS_MAX];
  size_t n = findings(h, f);
  int ok = n > 0;
  for (size_t i = 0; i < n && i < FINDINGS_MAX; i++) ok &= strcmp(f[i].kind, kind) == 0;
  if (!ok) {
    fprintf(stderr, "  expected only %s, got %zu:\n", kind, n);
    print_findings(f, n);
  }
  return ok;
}

static inline int has_kind(fuzz_bheap *h, const char *kind) {
  fuzz_finding f[FINDINGS_MAX];
  size_t n = findings(h, f);
  for (size_t i = 0; i < n && i < FINDINGS_MAX; i++)
    if (strcmp(f[i].kind, kind) == 0) return 1;
  fprintf(stderr, "  expected %s among %zu:\n", kind, n);
  print_findings(f, n);
  return 0;
}

static inline int alloc_id(fuzz_bheap *h, size_t cell, fuzz_block_shape shape, size_t n,
                           uint64_t id) {
  if (!B->alloc(h, cell, shape, n)) return 0;
  B->set_ident(h, cell, id, id * 3);
  return 1;
}

static inline uint64_t id_of(fuzz_bheap *h, size_t cell) {
  uint64_t id = 0, check = 0;
  if (!B->get_ident(h, cell, &id, &check) || check != id * 3) return 0;
  return id;
}

typedef struct id_set {
  uint64_t ids[4096];
  size_t n;
} id_set;

static inline void visit_id(void *user, uint64_t id, uint64_t check) {
  id_set *s = user;
  (void)check;
  if (s->n < 4096) s->ids[s->n] = id;
  s->n++;
}

static inline int walk_has(const id_set *s, uint64_t id) {
  for (size_t i = 0; i < s->n && i < 4096; i++)
    if (s->ids[i] == id) return 1;
  return 0;
}

static inline size_t walk(fuzz_bheap *h, id_set *s) {
  s->n = 0;
  return B->walk(h, visit_id, s);
}

/* A chain of n blocks from cell 0 (ids base..), and as many dropped ones. */
static inline void build_chain(fuzz_bheap *h, int n, uint64_t base) {
  alloc_id(h, 0, FUZZ_SHAPE_SCAN, 2, base);
  B->copy(h, 1, 0);
  for (int i = 1; i < n; i++) {
    alloc_id(h, 2, FUZZ_SHAPE_SCAN, 2, base + (uint64_t)i);
    B->store(h, 1, 0, 2);
    B->copy(h, 1, 2);
    alloc_id(h, 3, FUZZ_SHAPE_RAW, 3, base + 1000 + (uint64_t)i); /* garbage */
  }
  B->clear(h, 1);
  B->clear(h, 2);
  B->clear(h, 3);
}

static inline int chain_intact(fuzz_bheap *h, int n, uint64_t base) {
  int64_t v;
  B->copy(h, 1, 0);
  for (int i = 0; i < n; i++) {
    if (id_of(h, 1) != base + (uint64_t)i) return 0;
    if (i + 1 < n && B->load(h, 1, 1, 0, &v) != FUZZ_FIELD_BLOCK) return 0;
  }
  B->clear(h, 1);
  return 1;
}

static inline GCObject *cell_obj(fuzz_bheap *h, size_t cell) { return luab_cell_object(h, cell); }

#define PAINT_MASK (WHITEBITS | bitmask(BLACKBIT))

static inline void paint_black(GCObject *o) {
  o->marked = (lu_byte)((o->marked & ~PAINT_MASK) | bitmask(BLACKBIT));
}

#endif /* FUZZ_BACKEND_LUA_LUA_TEST_KIT_H */
