/* The set of blocks a walk has met: flat side tables indexed by the heap index's ordinals
 * (heapindex.h), one bit for every word of every pool in use, one byte for every large block in
 * use.
 *
 * A walk from the roots meets a block once per edge into it and must know, each time, whether it
 * met the block before. An address map answers with a hashed probe into buckets of 16 bytes, twice
 * as many as the blocks: 32 MiB at 10^6 blocks, a cache miss per edge. This set answers with one
 * bit, found from the block's pool (the heap index's small map of pools, a one-entry cache in
 * front) and the word offset inside it: GC_SEENSET_POOL_BYTES (512) bytes a pool, about 0.6 MiB at
 * 10^6 blocks, which stays in the second-level cache.
 *
 * A bit per word, not per slot: no division by the slot size to find it.
 *
 * INV-SEEN-1: the set is sized for the heap index it was last reset with, and means nothing once
 * that index is built again; an ordinal is the index's (INV-HINDEX-1), so below the counts the
 * set was sized for. A reset clears the bits of each pool's words below its frontier only (a
 * fuzzed heap's pools are mostly unused, and clearing every pool's 512 bytes at every walk cost
 * as much as the walk): the bits of the words from the first slot up to the frontier mean
 * something, the others are stale. A walk adds only slot starts below the frontier, and a
 * lookup of any other word answers no without reading its bit. The frontiers do not move between
 * the reset and the last lookup (the passes run on a heap that does not change).
 *
 * Memory: kept from one reset to the next (a pass after every cycle allocates nothing once the
 * heap stops growing).
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
  uint64_t *pool_bits;   /* GC_SEENSET_POOL_WORDS words per pool, the pool of ordinal i at i */
  unsigned char *larges; /* one byte per large block, by ordinal: 1 met */
  size_t pool_capacity;  /* pools pool_bits has room for */
  size_t large_capacity; /* large blocks `larges` has room for */
  /* 0: none. Otherwise the set never holds more bytes than this, as if the allocation failed:
   * how tests reach the walks' out-of-memory paths. Kept by reset, cleared by free. */
  size_t max_bytes;
} gc_seenset;

/* Empty, sized for every pool and large block of `ix`. Returns 0 when out of memory (the set may
 * then not be used). */
int gc_seenset_reset(gc_seenset *s, const gc_heapindex *ix);
void gc_seenset_free(gc_seenset *s);

/* Add the address `addr`, a word of the pool of ordinal `pool` from its first slot up to its
 * frontier (INV-SEEN-1); 1 if it was not in the set. */
static inline int gc_seenset_add_in_pool(gc_seenset *s, size_t pool, const void *addr) {
  size_t word = ((uintptr_t)addr & (GC_POOL_BSIZE - 1)) / GC_WORD_BSIZE;
  uint64_t *bits = &s->pool_bits[pool * GC_SEENSET_POOL_WORDS + word / 64];
  uint64_t bit = (uint64_t)1 << (word % 64);
  if (*bits & bit) return 0;
  *bits |= bit;
  return 1;
}

/* Add the large block of ordinal `large`; 1 if it was not in the set. */
static inline int gc_seenset_add_large(gc_seenset *s, size_t large) {
  if (s->larges[large]) return 0;
  s->larges[large] = 1;
  return 1;
}

/* Whether the block `v` (any word) is in the set: keyed as the walks key it, by its header's word
 * when that lies in a pool of `ix`, else as a large block of `ix`. */
int gc_seenset_has_block(const gc_seenset *s, gc_heapindex *ix, gc_value v);

#endif /* INVARIANTS_SEENSET_H */
