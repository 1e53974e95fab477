/* The set of blocks a walk has met: flat side tables indexed by the heap index's ordinals
 * (heapindex.h), one bit for every word of every pool in use, one stamp for every large block in
 * use.
 *
 * A walk from the roots meets a block once per edge into it and must know, each time, whether it
 * met the block before. An address map answers with a hashed probe into buckets of 16 bytes, twice
 * as many as the blocks: 32 MiB at 10^6 blocks, a cache miss per edge. This set answers with one
 * bit, found from the block's pool (the heap index's map of pools, poolmap.h) and the word offset
 * inside it: GC_SEENSET_POOL_BYTES (512) bytes a pool, about 0.6 MiB at 10^6 blocks, which stays
 * in the second-level cache. A bit per word, not per slot: no division by the slot size to find
 * it.
 *
 * Emptying it touches only what the last walk set. A fuzzed heap's pools are mostly unused and a
 * walk of it meets a few dozen blocks: clearing 512 bytes a pool at every walk cost as much as
 * the walk, and in the fuzz targets a memset is also an ASan range check. So the set lists each
 * word of bits it turns from zero to non-zero, and a reset zeroes those; a large block's entry is
 * the stamp of the reset after which it was met, and a reset takes a new stamp.
 *
 * INV-SEEN-1: every word of pool_bits that `dirty` does not list is zero, and `dirty` lists a word
 * once at most (as a 32-bit position: up to 2^26 pools, 2 TiB of them); a large block is in the
 * set when its stamp is the current one. The set is sized
 * for the heap index it was last reset with, and means nothing once that index is built again; an
 * ordinal is the index's (INV-HINDEX-1), so below the counts the set was sized for.
 *
 * Memory: 512 bytes of bits and 256 of list a pool, 4 bytes a large block, kept from one reset
 * to the next (a pass after every cycle allocates nothing once the heap stops growing).
 */
#ifndef INVARIANTS_SEENSET_H
#define INVARIANTS_SEENSET_H

#include <stddef.h>
#include <stdint.h>

#include "gc/header.h"
#include "gc/pool_layout.h"
#include "invariants/heapindex.h"

/* One bit per word of a pool: its 64-bit words of bits. */
#define GC_SEENSET_POOL_WORDS (GC_POOL_WSIZE / 64)
#define GC_SEENSET_POOL_BYTES (GC_SEENSET_POOL_WORDS * 8)

typedef struct gc_seenset {
  uint64_t *pool_bits;    /* GC_SEENSET_POOL_WORDS words per pool, the pool of ordinal i at i */
  uint32_t *dirty;        /* the words of pool_bits made non-zero since the last reset */
  size_t dirty_count;     /* entries of `dirty` */
  uint32_t *large_stamps; /* one per large block, by ordinal: the stamp when it was met */
  uint32_t stamp;         /* the current reset's; 0 is no reset's */
  size_t pool_capacity;   /* pools pool_bits has room for */
  size_t dirty_capacity;  /* pools `dirty` has room for (GC_SEENSET_POOL_WORDS entries each) */
  size_t large_capacity;  /* large blocks large_stamps has room for */
  /* 0: none. Otherwise the set never holds more bytes than this, as if the allocation failed:
   * how tests reach the walks' out-of-memory paths. Kept by reset, cleared by free. */
  size_t max_bytes;
} gc_seenset;

/* Empty, sized for every pool and large block of `ix`. Returns 0 when out of memory (the set may
 * then not be used). */
int gc_seenset_reset(gc_seenset *s, const gc_heapindex *ix);
void gc_seenset_free(gc_seenset *s);

/* Add the word `addr` of the pool of ordinal `pool`; 1 if it was not in the set. */
static inline int gc_seenset_add_in_pool(gc_seenset *s, size_t pool, const void *addr) {
  size_t word = ((uintptr_t)addr & (GC_POOL_BSIZE - 1)) / GC_WORD_BSIZE;
  size_t at = pool * GC_SEENSET_POOL_WORDS + word / 64;
  uint64_t bits = s->pool_bits[at], bit = (uint64_t)1 << (word % 64);
  if (bits & bit) return 0;
  if (bits == 0) s->dirty[s->dirty_count++] = (uint32_t)at; /* INV-SEEN-1 */
  s->pool_bits[at] = bits | bit;
  return 1;
}

/* Add the large block of ordinal `large`; 1 if it was not in the set. */
static inline int gc_seenset_add_large(gc_seenset *s, size_t large) {
  if (s->large_stamps[large] == s->stamp) return 0;
  s->large_stamps[large] = s->stamp;
  return 1;
}

/* Whether the block `v` (any word) is in the set: keyed as the walks key it, by its header's word
 * when that lies in a pool of `ix`, else as a large block of `ix`. */
int gc_seenset_has_block(const gc_seenset *s, gc_heapindex *ix, gc_value v);

#endif /* INVARIANTS_SEENSET_H */
