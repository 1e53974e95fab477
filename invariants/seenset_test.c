/* The seen set on its own (the walks' tests use it through reach and checkmark): adds answer new
 * once per word and reset, a reset leaves every word of bits zero however many walks came before
 * and however the heap index grew (INV-SEEN-1), large blocks by stamp, and a bound on its memory
 * fails a reset cleanly. */
#include <stdint.h>
#include <string.h>

#include "gc/check.h"
#include "invariants/seenset.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rng(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* Only the counts matter to a reset. */
static gc_heapindex index_of(size_t pools, size_t larges) {
  gc_heapindex ix;
  memset(&ix, 0, sizeof ix);
  ix.pool_count = pools;
  ix.large_count = larges;
  return ix;
}

/* A word address inside the pool area, at word `word` of some pool (the set keys by the offset
 * inside the pool; which pool is the ordinal's business). */
static const void *word_at(size_t word) {
  return (const void *)((uintptr_t)0x40000000 + word * GC_WORD_BSIZE);
}

static void all_zero(const gc_seenset *s) {
  for (size_t i = 0; i < s->pool_capacity * GC_SEENSET_POOL_WORDS; i++) {
    CHECK_EQ_U(s->pool_bits[i], 0);
  }
  CHECK_EQ_U(s->dirty_count, 0);
}

static void walks_of_growing_heaps(void) {
  gc_seenset s;
  memset(&s, 0, sizeof s);
  static uint8_t added[64][GC_POOL_WSIZE];
  for (int walk = 0; walk < 40; walk++) {
    size_t pools = 1 + (size_t)walk % 64, larges = (size_t)walk % 5;
    gc_heapindex ix = index_of(pools, larges);
    CHECK(gc_seenset_reset(&s, &ix));
    all_zero(&s);
    memset(added, 0, sizeof added);
    for (int k = 0; k < 3000; k++) {
      size_t pool = rng() % pools, word = rng() % GC_POOL_WSIZE;
      CHECK_EQ_U(gc_seenset_add_in_pool(&s, pool, word_at(word)), !added[pool][word]);
      added[pool][word] = 1;
    }
    CHECK(s.dirty_count <= pools * GC_SEENSET_POOL_WORDS);
    for (size_t l = 0; l < larges; l++) {
      CHECK_EQ_U(gc_seenset_add_large(&s, l), 1);
      CHECK_EQ_U(gc_seenset_add_large(&s, l), 0);
    }
  }
  gc_heapindex ix = index_of(64, 4);
  CHECK(gc_seenset_reset(&s, &ix));
  all_zero(&s);
  CHECK_EQ_U(gc_seenset_add_large(&s, 3), 1); /* a new stamp: met again after a reset */
  gc_seenset_free(&s);
}

static void bounded_memory_fails_a_reset(void) {
  gc_seenset s;
  memset(&s, 0, sizeof s);
  s.max_bytes = GC_SEENSET_POOL_BYTES - 1; /* less than one pool's bits */
  gc_heapindex ix = index_of(1, 0);
  CHECK(!gc_seenset_reset(&s, &ix));
  s.max_bytes = 0;
  CHECK(gc_seenset_reset(&s, &ix));
  CHECK_EQ_U(gc_seenset_add_in_pool(&s, 0, word_at(7)), 1);
  CHECK_EQ_U(gc_seenset_add_in_pool(&s, 0, word_at(7)), 0);
  gc_seenset_free(&s);
}

int main(void) {
  RUN(walks_of_growing_heaps);
  RUN(bounded_memory_fails_a_reset);
  CHECK_MAIN_END();
}
