/* Random programs against a model of the bdwgc backend's heap, in the stop-the-world heap and
 * then the incremental one (bdwgc cannot leave incremental mode: the incremental stress runs
 * last). Helpers: bdwgc_test.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"

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
  RUN(test_stress_stop);
  RUN(test_stress_incremental); /* bdwgc_incremental_test: the incremental heap's own tests */
  return test_summary();
}
