/* Mutations that know where ops begin (see mutate.h). */
#include "fuzz/lang/mutate.h"

#include <string.h>

#include "fuzz/lang/program.h"

/* The input being mutated and the random numbers of this mutation. */
typedef struct mctx {
  const fuzz_mutator *m;
  uint8_t *data;
  size_t size, max_size;
  size_t ops; /* ops in data */
  uint64_t rng;
} mctx;

static uint64_t next_random(mctx *c) {
  /* xorshift64: enough for picking places, the same seed gives the same mutation, and no
   * arithmetic wraps (gc/platform.h, GC_WRAPS: the language has no collector dependency). */
  c->rng ^= c->rng << 13;
  c->rng ^= c->rng >> 7;
  c->rng ^= c->rng << 17;
  return c->rng;
}

/* A number in [0, n), n >= 1. */
static size_t below(mctx *c, size_t n) { return (size_t)(next_random(c) % n); }

/* Where op k begins (k < ops), or size for k == ops: the boundaries of the input. Decoding is a
 * few instructions an op, so each call decodes from the start rather than keep a table. */
static size_t op_start(const mctx *c, size_t k) {
  if (k >= c->ops) return c->size;
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, c->m->set, c->data, c->size);
  while (fuzz_program_next(&dec, &op)) {
    if (op.index == k) return op.offset;
  }
  return c->size;
}

/* Opens `n` bytes at `at` (moving the rest up); the caller fills them. 0 when they do not fit. */
static int open_gap(mctx *c, size_t at, size_t n) {
  if (n > c->max_size || c->size > c->max_size - n) return 0;
  memmove(c->data + at + n, c->data + at, c->size - at);
  c->size += n;
  return 1;
}

static void close_gap(mctx *c, size_t at, size_t n) {
  memmove(c->data + at, c->data + at + n, c->size - at - n);
  c->size -= n;
}

static const fuzz_dict_entry *pick_entry(mctx *c) {
  const fuzz_dict *d = c->m->dict;
  if (d == NULL || d->count == 0) return NULL;
  return &d->entries[below(c, d->count)];
}

/* ---- The mutations -------------------------------------------------------------------------- */

/* libFuzzer's own: byte flips, inserted and erased bytes, dictionary words at any byte, words
 * from the comparisons it traced, crossover with another input. */
static size_t mutate_bytes(mctx *c) {
  if (c->m->bytes == NULL) return 0;
  return c->m->bytes(c->data, c->size, c->max_size);
}

/* A dictionary entry (whole ops) where an op begins, or at the end. */
static size_t insert_idiom(mctx *c) {
  const fuzz_dict_entry *e = pick_entry(c);
  if (e == NULL) return 0;
  size_t at = op_start(c, below(c, c->ops + 1));
  if (!open_gap(c, at, e->size)) return 0;
  memcpy(c->data + at, e->bytes, e->size);
  return c->size;
}

/* One op replaced by a dictionary entry. */
static size_t replace_op(mctx *c) {
  const fuzz_dict_entry *e = pick_entry(c);
  if (e == NULL || c->ops == 0) return 0;
  size_t k = below(c, c->ops), at = op_start(c, k), len = op_start(c, k + 1) - at;
  if (e->size > len && !open_gap(c, at, e->size - len)) return 0;
  if (e->size < len) close_gap(c, at, len - e->size);
  memcpy(c->data + at, e->bytes, e->size);
  return c->size;
}

/* A run of 1 to 4 whole ops removed (never the last op left). */
static size_t delete_ops(mctx *c) {
  if (c->ops < 2) return 0;
  size_t k = below(c, c->ops), run = 1 + below(c, 4);
  if (run > c->ops - k) run = c->ops - k;
  if (run == c->ops) run--;
  size_t at = op_start(c, k), end = op_start(c, k + run);
  close_gap(c, at, end - at);
  return c->size;
}

/* A run of 1 to 4 whole ops copied to where another op begins: a step of the program again,
 * elsewhere (a store repeated after a switch of domain, a collect again after a mutation). */
static size_t duplicate_ops(mctx *c) {
  if (c->ops == 0) return 0;
  size_t k = below(c, c->ops), run = 1 + below(c, 4);
  if (run > c->ops - k) run = c->ops - k;
  size_t from = op_start(c, k), len = op_start(c, k + run) - from;
  enum { COPY_MAX = 4 * FUZZ_OP_MAX_BYTES };
  uint8_t copy[COPY_MAX];
  if (len == 0 || len > COPY_MAX) return 0;
  memcpy(copy, c->data + from, len);
  size_t at = op_start(c, below(c, c->ops + 1));
  if (!open_gap(c, at, len)) return 0;
  memcpy(c->data + at, copy, len);
  return c->size;
}

/* Two neighbouring ops trade places (a store before or after a mark slice, say). */
static size_t swap_ops(mctx *c) {
  if (c->ops < 2) return 0;
  size_t k = below(c, c->ops - 1);
  size_t a = op_start(c, k), b = op_start(c, k + 1), end = op_start(c, k + 2);
  uint8_t first[FUZZ_OP_MAX_BYTES];
  size_t first_len = b - a;
  if (first_len > sizeof first) return 0;
  memcpy(first, c->data + a, first_len);
  memmove(c->data + a, c->data + b, end - b);
  memcpy(c->data + a + (end - b), first, first_len);
  return c->size;
}

/* The catalogue. Weights: libFuzzer's own mutations stay half of all (its dictionary, traced
 * comparisons and crossover find operand values these cannot); the other half cut at ops. */
static const struct {
  const char *name;
  unsigned weight;
  size_t (*fn)(mctx *);
} mutations[FUZZ_MUTATION_COUNT] = {
    {"bytes", 8, mutate_bytes},          {"insert-idiom", 4, insert_idiom},
    {"replace-op", 1, replace_op},       {"delete-ops", 1, delete_ops},
    {"duplicate-ops", 1, duplicate_ops}, {"swap-ops", 1, swap_ops},
};

const char *fuzz_mutation_name(int mutation) {
  return mutation >= 0 && mutation < FUZZ_MUTATION_COUNT ? mutations[mutation].name : NULL;
}

static void init_ctx(mctx *c, const fuzz_mutator *m, uint8_t *data, size_t size, size_t max_size,
                     unsigned seed) {
  c->m = m;
  c->data = data;
  c->size = size < max_size ? size : max_size;
  c->max_size = max_size;
  c->ops = fuzz_program_count(m->set, data, c->size);
  /* Never 0, which xorshift keeps; a few steps spread a small seed over every bit. */
  c->rng = (uint64_t)seed << 32 | (uint64_t)(seed ^ 0x9E3779B9u) | 1;
  for (int i = 0; i < 8; i++) next_random(c);
}

size_t fuzz_mutate_with(const fuzz_mutator *m, int mutation, uint8_t *data, size_t size,
                        size_t max_size, unsigned seed) {
  if (mutation < 0 || mutation >= FUZZ_MUTATION_COUNT || max_size == 0) return 0;
  mctx c;
  init_ctx(&c, m, data, size, max_size, seed);
  return mutations[mutation].fn(&c);
}

size_t fuzz_mutate(const fuzz_mutator *m, uint8_t *data, size_t size, size_t max_size,
                   unsigned seed) {
  if (max_size == 0) return 0;
  mctx c;
  init_ctx(&c, m, data, size, max_size, seed);
  unsigned total = 0;
  for (int i = 0; i < FUZZ_MUTATION_COUNT; i++) total += mutations[i].weight;
  /* A mutation that cannot apply (no room, too few ops) gives way to the next in the table. */
  unsigned pick = (unsigned)below(&c, total);
  int first = 0;
  while (pick >= mutations[first].weight) pick -= mutations[first++].weight;
  for (int i = 0; i < FUZZ_MUTATION_COUNT; i++) {
    size_t got = mutations[(first + i) % FUZZ_MUTATION_COUNT].fn(&c);
    if (got > 0) return got;
  }
  /* Nothing applied (no byte mutator, and no op mutation fits): one byte changed, or written
   * into an empty input. */
  if (c.size == 0) {
    data[0] = (uint8_t)next_random(&c);
    return 1;
  }
  data[below(&c, c.size)] ^= (uint8_t)(1 + below(&c, 255));
  return c.size;
}
