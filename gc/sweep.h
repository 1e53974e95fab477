/* Lazy, budgeted sweeping of a domain, size class by size class, then its large blocks. */
#ifndef GC_SWEEP_H
#define GC_SWEEP_H

#include "gc/heap.h"

/* Sweep about `budget_words` of d's unswept pools and large blocks. Returns 1 when d has
 * nothing left to sweep this cycle (and runs the SWEPT hook when the whole heap is swept). */
int gc_sweep_slice(gc_domain *d, size_t budget_words);
/* d's allocation slow path: a slice of `budget_words`, and more if d's sweep credit is behind
 * the heap's allocation (everything due once the domains allocated most of the trigger). */
void gc_sweep_pay(gc_domain *d, size_t budget_words);
/* Sweep everything d has left. */
void gc_sweep_finish(gc_domain *d);
/* Sweep d's unswept pools of class c until one has a free slot; the pool found is d->avail[c]. */
void gc_sweep_for_class(gc_domain *d, gc_sizeclass c);
/* Move every swept pool and large block of d to its unswept lists (at colour rotation): the
 * list heads only; what they hold is counted at the sweep's first step. */
void gc_sweep_begin(gc_domain *d);

#endif /* GC_SWEEP_H */
