/* Pools: aligned, fixed-size runs of equal slots for small blocks.
 *
 * A pool is used from its first slot upwards: `frontier` is the first slot never handed out since
 * the pool was initialised, so a new pool costs nothing to set up and sweeping, re-darkening and
 * checking a pool cost in proportion to the slots it has used, not its size.
 * INV-POOL-1: every slot below the frontier either holds a block (non-zero header, whsize no
 * larger than the slot) or is free: a zero header, linked through its word 1 on the pool's free
 * list. The free list holds exactly those free slots, each inside its own pool at a slot
 * boundary, in ascending address order, without a cycle. Slots from the frontier to `end` are
 * unused: on no list, their contents undefined, never read.
 * INV-POOL-3: a pool's contribution to pool_frag_words is its header, its class's wastage and,
 * for each block, slot size minus whsize.
 * INV-SPACE-1: once its sweep is done, every pool a domain or the orphans own holds a block in
 * the slot just below its frontier. Sweeping moves the frontier down over the free slots above
 * the last block and gives a pool that holds none back to the heap (gc_pool_sweep); the one pool
 * gc_sweep_for_class keeps empty receives the asking allocation's block at once; only
 * allocation raises a frontier, onto the block it makes. A non-moving heap cannot compact, so
 * this is its space bound: per size class, pools <= live blocks, and pool words <=
 * GC_POOL_WSIZE per live small block, whatever the fragmentation.
 */
#ifndef GC_POOL_H
#define GC_POOL_H

#include <stdint.h>

#include "gc/heap.h"
#include "gc/pool_layout.h"

/* The flag is the mark's: an overflow sets it (note_overflow, mark.c) and only re-darkening
 * clears it, so no flag is left when a mark ends. Sweeping leaves it alone: a pool can be swept
 * while a cycle marks (a full orphan adopted mid-mark, gc_orphan_adopt_pool), and a flag lost
 * there leaves that pool's unscanned MARKED blocks unscanned, their children to the sweep. */
enum gc_pool_flag {
  GC_POOL_REDARKEN = 1u << 0,  /* holds a MARKED block whose fields were not scanned (overflow) */
  GC_POOL_EVACUATED = 1u << 1, /* compaction moved its blocks out (INV-COMPACT-1, heap.h): set
                                * and dropped inside one stop, with the pool given back */
};

struct gc_pool {
  gc_pool *next;        /* on exactly one list (INV-POOL-2, heap.h) */
  gc_header *free_list; /* first free slot below the frontier (a header pointer), or NULL */
  gc_domain *owner;     /* NULL while on the heap's free pool list */
  gc_header *frontier;  /* first unused slot; == end when every slot has been used */
  gc_header *end;       /* one past the last whole slot (gc_pool_slots_end, kept for speed) */
  uint32_t size_class;  /* gc_sizeclass */
  uint32_t flags;       /* enum gc_pool_flag */
};
_Static_assert(sizeof(struct gc_pool) == GC_POOL_HEADER_WSIZE * sizeof(gc_value),
               "the pool header is GC_POOL_HEADER_WSIZE words");

static inline gc_pool *gc_pool_of_hp(const gc_header *hp) {
  return (gc_pool *)((uintptr_t)hp & ~(uintptr_t)(GC_POOL_BSIZE - 1));
}
static inline gc_header *gc_pool_first_slot(gc_pool *p) {
  return (gc_header *)p + GC_POOL_HEADER_WSIZE;
}
/* A pool is full when it has neither a free slot nor an unused one (INV-POOL-2: the full list). */
static inline int gc_pool_is_full(const gc_pool *p) {
  return p->free_list == NULL && p->frontier == p->end;
}
/* One past the last whole slot; the class's wastage follows. */
static inline gc_header *gc_pool_slots_end(gc_pool *p) {
  return gc_pool_first_slot(p) +
         (size_t)gc_slots_of_class(p->size_class) * gc_wsize_of_class[p->size_class];
}

/* A pool from the heap's free list, or from a new OS batch, for size class c; NULL when none can
 * be had. `looked` is the last orphaning the caller saw when it found no orphan pool of c to
 * adopt (gc_orphan_adopt_pool; UINT64_MAX if it did not look): recorded for INV-SPACE-3. The
 * caller initialises the pool. Takes the pool lock. */
gc_pool *gc_pool_acquire(gc_heap *heap, gc_sizeclass c, uint64_t looked);
/* Back to the heap's free list, or to the OS above cfg.free_pools_kept. Takes the pool lock. */
void gc_pool_release(gc_heap *heap, gc_pool *p);
/* Make `p` an empty pool of class `c` owned by `owner`: no free slot, the frontier at the first
 * slot. No slot is touched. */
void gc_pool_init(gc_pool *p, gc_sizeclass c, gc_domain *owner);

/* Sweep the first pool of *list: free its GARBAGE blocks (running custom finalizers), rebuild
 * its free list, and put it on d's avail or full list, or release it when empty and allowed.
 * Returns the words of work done (the pool's slot words), 0 if the list was empty. */
size_t gc_pool_sweep(gc_domain *d, gc_pool **list, int release_if_empty);

/* Add the recount of one pool's blocks to *s (pool_words, live, frag); for adoption and checks. */
void gc_pool_recount(gc_pool *p, gc_heap_stats *s);

/* Unmap every pool on the free list (heap destroy). */
void gc_pool_unmap_free(gc_heap *heap);
/* Run the custom finalizers of every block in `p` and unmap it (heap destroy). */
void gc_pool_destroy(gc_heap *heap, gc_pool *p);

#endif /* GC_POOL_H */
