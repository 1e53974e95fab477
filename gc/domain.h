/* Domains, internal side (the public side is in gc.h). */
#ifndef GC_DOMAIN_H
#define GC_DOMAIN_H

#include "gc/heap.h"

/* A zeroed domain in `state`, not yet on the heap's list. */
gc_domain *gc_domain_new(gc_heap *heap, uintptr_t state);
/* Add d to the heap's list (caller holds stw_lock); 0 when out of memory. */
int gc_domain_list_add(gc_heap *heap, gc_domain *d);
/* Free every pool and large block of d (finalizers run) and d itself (heap destroy). */
void gc_domain_destroy(gc_domain *d);

#endif /* GC_DOMAIN_H */
