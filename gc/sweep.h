/* Lazy, budgeted sweeping of a domain, size class by size class, then its large blocks. */
#ifndef GC_SWEEP_H
#define GC_SWEEP_H

#include "gc/heap.h"

/* Sweep about `budget_words` of d's unswept pools and large blocks. Returns 1 when d has
 * nothing left to sweep this cycle (and runs the SWEPT hook when the whole heap is swept). */
int gc_sweep_slice(gc_domain *d, size_t budget_words);
/* Sweep everything d has left. */
void gc_sweep_finish(gc_domain *d);
/* Sweep d's unswept pools of class c until one has a free slot; the pool found is d->avail[c]. */
void gc_sweep_for_class(gc_domain *d, gc_sizeclass c);
/* Move every swept pool and large block of d to its unswept lists (at colour rotation). */
void gc_sweep_begin(gc_domain *d);

#endif /* GC_SWEEP_H */
