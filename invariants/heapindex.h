/* The heap index: every pool and large block in use, built from the owners' lists at the start of
 * a pass, so a pass can tell a block from a wild pointer before it dereferences anything.
 *
 * A pointer found in a field may point anywhere: into a pool given back to the OS, into freed
 * memory, outside the heap. Reading its header would crash (or, under ASan, report the pass
 * itself). The index answers "is this a block start, and where" from addresses alone: the pool of
 * a small block is an address mask, checked against the set of pools the owners' lists hold;
 * a large block is checked against the set of large blocks on those lists.
 *
 * Owners. A part of the heap that owns pools and large blocks and keeps statistics is an owner:
 * each domain, and the orphans (what terminated domains left, INV-ORPHAN-1). Every pass loops over
 * owners through gc_verify_owner_next, never over heap->domains itself, so a new kind of owner
 * needs only a new case there.
 */
#ifndef INVARIANTS_HEAPINDEX_H
#define INVARIANTS_HEAPINDEX_H

#include <stddef.h>

#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "invariants/addrmap.h"
#include "invariants/poolmap.h"

/* Leaves a small scanning loop out of every instrumentation: libFuzzer's coverage counters
 * (clang's -fsanitize-coverage; other compilers do not instrument), ASan's address checks and
 * UBSan's. Only for a loop whose every read lies in memory an instrumented read has just vouched
 * for (each use says which), and which runs so often that its checks cost more than the rest of
 * its pass. Put on a noinline function (inlined, a function is instrumented as its caller's code),
 * and call no inline helper from it: clang inlines no function into one whose sanitizer
 * attributes differ, so a helper becomes a call per word. */
#if defined(__clang__)
/* "unsigned-integer-overflow" is no part of "undefined" (OSS-Fuzz's UBSan build adds it): the
 * loops shift bits out of a mask and wrap 0 - 1 on purpose. */
#define GC_VERIFY_NOT_INSTRUMENTED                                                             \
  __attribute__((no_sanitize("coverage", "address", "undefined", "unsigned-integer-overflow"), \
                 noinline))
#else
#define GC_VERIFY_NOT_INSTRUMENTED __attribute__((noinline))
#endif

/* Bit i set for each block pointer (gc_is_block) among fields[0..n), n at most 64: how the walks
 * skip the immediates of a block they scan, one call for a small block's fields (a call per
 * pointer field cost as much as the rest of the scan), then a loop over the bits, field `base`
 * (a multiple of GC_VERIFY_FIELDS_PER_MASK) at bit 0:
 *   for (uint64_t m = gc_verify_block_fields(fields + base, n); m != 0; m &= m - 1) {
 *     size_t i = base + (size_t)__builtin_ctzll(m); ... fields[i] ... }
 * Not instrumented at all: its coverage counters were most of the cost of scanning a block, and
 * an address check per field most of the rest. A caller passes the fields of a block whose header
 * (the first word of the same slot or large block) it has just read, instrumented, and checked to
 * fit where it is, and n within that slot or large block (INV-POOL-1): nothing read here is
 * unvouched for. */
#define GC_VERIFY_FIELDS_PER_MASK 64
GC_VERIFY_NOT_INSTRUMENTED uint64_t gc_verify_block_fields(const gc_value *fields, size_t n);

/* ---- Owners -------------------------------------------------------------------------------- */

enum { GC_VERIFY_POOL_LISTS = 4, GC_VERIFY_LARGE_LISTS = 2 };

typedef struct gc_verify_owner {
  char name[32];        /* "domain 0", "orphans": for reports */
  gc_domain *domain;    /* the owning domain (NULL: orphans); its pools have p->owner == domain */
  gc_heap_stats *stats; /* the running statistics the swept pass compares with a recount */
  /* Pool lists by size class: avail, full, unswept_avail, unswept_full (INV-POOL-2). A list an
   * owner does not have is NULL (the orphans have no unswept lists). */
  gc_pool **pool_lists[GC_VERIFY_POOL_LISTS];
  const char *pool_list_names[GC_VERIFY_POOL_LISTS];
  /* Large block lists: swept, unswept (INV-LARGE-1); NULL when the owner has no such list. */
  gc_large **large_lists[GC_VERIFY_LARGE_LISTS];
  const char *large_list_names[GC_VERIFY_LARGE_LISTS];
  int sweeping; /* the owner has not finished sweeping this cycle */
} gc_verify_owner;

enum {
  GC_VERIFY_AVAIL = 0,
  GC_VERIFY_FULL = 1,
  GC_VERIFY_UNSWEPT_AVAIL = 2,
  GC_VERIFY_UNSWEPT_FULL = 3
};
enum { GC_VERIFY_SWEPT_LARGE = 0, GC_VERIFY_UNSWEPT_LARGE = 1 };

/* Fill *out with the owner after *cursor (start with *cursor = 0); returns 0 when none is left.
 * Every field of *out is assigned. */
int gc_verify_owner_next(gc_heap *heap, size_t *cursor, gc_verify_owner *out);

/* Bit c set for each size class c whose list in `heads` (GC_NUM_SIZECLASSES heads) is not empty.
 * The owners' lists are read at every hook point and most classes' lists are empty (and whole
 * lists are: the unswept ones once sweeping is done, the swept ones right after the colours
 * cycle), so loops over classes visit only the others, in class order:
 *   for (uint32_t bits = gc_verify_pool_classes(heads); bits != 0; bits &= bits - 1) {
 *     gc_sizeclass c = (gc_sizeclass)__builtin_ctz(bits); ... } */
uint32_t gc_verify_pool_classes(gc_pool *const *heads);
_Static_assert(GC_NUM_SIZECLASSES <= 32, "a class bit mask fits 32 bits");

/* ---- The index ----------------------------------------------------------------------------- */

typedef enum gc_loc_kind {
  GC_LOC_OUTSIDE,       /* not in any pool or large block in use */
  GC_LOC_SLOT,          /* the start of a slot of a pool in use (the header may still be 0) */
  GC_LOC_POOL_INTERIOR, /* inside a pool in use, but not at a slot start */
  GC_LOC_LARGE,         /* the start of a large block in use */
  GC_LOC_LARGE_INTERIOR /* inside a large block, not at its start */
} gc_loc_kind;

typedef struct gc_loc {
  gc_loc_kind kind;
  gc_pool *pool;       /* SLOT, POOL_INTERIOR */
  unsigned size_class; /* SLOT, POOL_INTERIOR; GC_NUM_SIZECLASSES if the pool's is corrupt */
  size_t slot;         /* SLOT: slot index in the pool */
  gc_large *large;     /* LARGE, LARGE_INTERIOR */
  gc_value large_val;  /* LARGE_INTERIOR: the block it points into */
} gc_loc;

/* The pools map's value: the pool's size class in the low bits, and above them its ordinal, its
 * position in pool_list, by which flat side tables (seenset.h) find their part for the pool.
 * INV-HINDEX-1: every key of `pools` (`larges`) has an ordinal below pool_count (large_count),
 * the entry of pool_list (large_list) at that ordinal being the same pool (large block); a build
 * that runs out of memory takes back the key whose list entry it could not append. */
#define GC_HEAPINDEX_CLASS_BITS 8
_Static_assert(GC_NUM_SIZECLASSES < (1u << GC_HEAPINDEX_CLASS_BITS), "a class fits its bits");

typedef struct gc_heapindex {
  gc_heap *heap;
  gc_poolmap pools;  /* pool address -> size class | ordinal << GC_HEAPINDEX_CLASS_BITS */
  gc_addrmap larges; /* large block val -> its ordinal, its position in large_list */
  /* The same entries, each once, in the order the build met them (owner, list, class, list
   * position): what a pass that visits every pool or large block loops over, in O(pools) and
   * O(large blocks) rather than over every bucket of a map (up to sixteen times as many in a
   * fuzzing process, whose maps keep the buckets of earlier, larger heaps). The buffers are kept
   * from one build to the next. A pool's entry: `key` its address, `word` its class as the map
   * holds it (GC_NUM_SIZECLASSES when the pool's own was corrupt); a large block's: `key` its
   * val, `word` its gc_large. (No epoch bits: `word` is the value.) */
  gc_addrmap_entry *pool_list, *large_list;
  size_t pool_count, large_count;
  size_t pool_list_capacity, large_list_capacity;
  /* Large blocks by address, for the interior-pointer diagnosis; built on first need. */
  gc_large **sorted_larges;
  size_t sorted_count, sorted_capacity; /* the buffer is kept from one build to the next */
  int sorted_built;
  int complete; /* 0 when memory ran out while building: lookups may miss blocks */
} gc_heapindex;

/* Index every pool and large block on the owners' lists (a list walk stops at the first pool or
 * large block met twice, so a corrupt list cannot loop). `ix` is zero-initialised or was built
 * before: its memory is reused, which is what makes an index per pass per cycle cheap. Returns 0
 * on out of memory (the index is then incomplete). */
int gc_heapindex_build(gc_heapindex *ix, gc_heap *heap);
void gc_heapindex_free(gc_heapindex *ix);

/* Where the block pointer `v` (a val, even and non-zero) points. Never dereferences `v` itself;
 * reads only pool headers and the headers of indexed large blocks. */
gc_loc gc_heapindex_locate(gc_heapindex *ix, gc_value v);
/* The same for the questions "is v a slot start or a large block, and which": SLOT,
 * POOL_INTERIOR and LARGE as gc_heapindex_locate says them; anything else is OUTSIDE here,
 * without the search that tells a pointer into a large block from one outside the heap (it sorts
 * the large blocks: only reports need it). */
gc_loc gc_heapindex_locate_start(gc_heapindex *ix, gc_value v);

/* The pool holding `addr` if it is a pool in use, else NULL; its class in *size_class and its
 * ordinal (its position in pool_list) in *ordinal. */
static inline gc_pool *gc_heapindex_pool_at(gc_heapindex *ix, uintptr_t addr, unsigned *size_class,
                                            size_t *ordinal) {
  uintptr_t base = addr & ~(uintptr_t)(GC_POOL_BSIZE - 1);
  uint64_t value;
  if (base == 0 || !gc_poolmap_get(&ix->pools, base, &value)) return NULL;
  *size_class = (unsigned)(value & ((1u << GC_HEAPINDEX_CLASS_BITS) - 1));
  *ordinal = (size_t)(value >> GC_HEAPINDEX_CLASS_BITS);
  return (gc_pool *)base;
}

/* The pool holding `addr` if it is a pool in use, else NULL; its class in *size_class. */
static inline gc_pool *gc_heapindex_pool(gc_heapindex *ix, uintptr_t addr, unsigned *size_class) {
  size_t ordinal;
  return gc_heapindex_pool_at(ix, addr, size_class, &ordinal);
}

/* The large block whose val is `v` if it is one in use, else NULL; its ordinal (its position in
 * large_list) in *ordinal. */
static inline gc_large *gc_heapindex_large(const gc_heapindex *ix, gc_value v, size_t *ordinal) {
  uint64_t i;
  if (!gc_addrmap_get(&ix->larges, v, &i)) return NULL;
  *ordinal = (size_t)i;
  return (gc_large *)(uintptr_t)ix->large_list[i].word;
}

/* The block whose header or fields contain the address `word`, or 0: gc.h's rule for a
 * conservative root word, by which the collector resolves one too (gc_block_containing,
 * gc/blockindex.h: not in a pool header, a class's wastage, slot padding past a block's end, an
 * unused slot above the frontier or a free slot; a slot whose header has no size is free),
 * computed from this index alone, not from the collector's pool set and large-block array. The
 * walks resolve conservative roots with it, so a word the collector's resolution misses is still
 * a root there, and checkmark names a word it accepts that this rule ignores. */
gc_value gc_heapindex_containing(gc_heapindex *ix, uintptr_t word);

/* The header of `v` if v is a block start (slot or large block) the index knows, so reading it is
 * safe; 0 otherwise (and for a free slot). */
int gc_heapindex_read_header(gc_heapindex *ix, gc_value v, gc_header *hd);

/* "pool 0x... class 3 (5-word slots), slot 17", "large block 0x...", "outside the heap ...". */
void gc_heapindex_describe(gc_heapindex *ix, gc_value v, char *buf, size_t buf_len);

/* ---- Every block ---------------------------------------------------------------------------- */

/* Every block the heap index knows: slot by slot below each pool's frontier (free slots, whose
 * header is 0, included: callers skip them), then every large block. Pools and large blocks in
 * the order of the index's lists (the order its build met them). A caller may skip the rest of
 * the pool it is in by setting `slot` to `limit` (checkmark counts a pool's colours in one
 * loop). */
typedef struct gc_heapindex_cursor {
  gc_heapindex *ix;
  size_t next;             /* next entry of the list being walked */
  int larges;              /* 0: ix->pool_list, 1: ix->large_list */
  gc_header *slot, *limit; /* the pool being walked: next slot, its frontier */
  size_t slot_whsize;
} gc_heapindex_cursor;

typedef struct gc_heapindex_block {
  gc_value v;
  gc_header hd;
  size_t max_whsize; /* what the header may say: the slot's words, SIZE_MAX for a large block */
} gc_heapindex_block;

void gc_heapindex_cursor_start(gc_heapindex_cursor *c, gc_heapindex *ix);
/* The next block in *b; 0 when every one was given. */
int gc_heapindex_next_block(gc_heapindex_cursor *c, gc_heapindex_block *b);

#endif /* INVARIANTS_HEAPINDEX_H */
