/* gc_verify_block_fields against gc_is_block, field by field: every count of fields from 0 to 64,
 * on words of every kind the walks meet (0, immediates, block pointers, words with the top bit
 * set or clear), in runs of zeros as a fuzzed heap's large blocks hold them and mixed. */
#include <stdint.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "invariants/heapindex.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rng(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* A word of a kind picked at random; `zeros` in 8: how often it is 0. */
static gc_value word(unsigned zeros) {
  uint64_t r = rng();
  if (r % 8 < zeros) return 0;
  switch ((r >> 3) % 6) {
    case 0: return 1;                                   /* the immediate 0 */
    case 1: return (gc_value)(r | 1);                   /* an immediate, any */
    case 2: return (gc_value)(r & ~(uint64_t)7);        /* a pointer, any */
    case 3: return (gc_value)(UINT64_C(1) << 63);       /* even, top bit set */
    case 4: return (gc_value)((UINT64_C(1) << 63) | 1); /* odd, top bit set */
    default: return 2;                                  /* the smallest even word */
  }
}

static void against_gc_is_block(void) {
  gc_value fields[GC_VERIFY_FIELDS_PER_MASK];
  for (int round = 0; round < 2000; round++) {
    unsigned zeros = (unsigned)(round % 9);
    for (size_t i = 0; i < GC_VERIFY_FIELDS_PER_MASK; i++) fields[i] = word(zeros);
    for (size_t n = 0; n <= GC_VERIFY_FIELDS_PER_MASK; n++) {
      uint64_t want = 0;
      for (size_t i = 0; i < n; i++) want |= (uint64_t)(gc_is_block(fields[i]) != 0) << i;
      CHECK_EQ_U(gc_verify_block_fields(fields, n), want);
    }
  }
}

int main(void) {
  RUN(against_gc_is_block);
  CHECK_MAIN_END();
}
