/* Orphans: what a terminated domain leaves behind, and its adoption by the living (INV-ORPHAN-1
 * in heap.h). Statistics move with the pools, exactly: what leaves a domain's stats arrives in
 * the orphans', and adoption moves a pool's recount back. */
#ifndef GC_ORPHAN_H
#define GC_ORPHAN_H

#include "gc/heap.h"

/* Move every pool and large block of d, swept, with its statistics, to the orphans. Takes the
 * pool lock. */
void gc_orphan_domain(gc_domain *d);
/* Adopt one orphan pool of class c for allocation: an avail one first, else a full one, which
 * is then swept. Returns 1 if d->avail[c] now has a pool; else *looked is the last orphaning it
 * had seen when it found none (INV-SPACE-3, for gc_pool_acquire). Takes the pool lock. */
int gc_orphan_adopt_pool(gc_domain *d, gc_sizeclass c, uint64_t *looked);
/* Adopt every orphan (the leader of a cycle, with the world stopped). */
void gc_orphan_adopt_all(gc_domain *d);

#endif /* GC_ORPHAN_H */
