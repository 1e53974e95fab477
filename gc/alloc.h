/* The allocator's entry points inside the collector (alloc.c); gc.h has the API's. */
#ifndef GC_ALLOC_H
#define GC_ALLOC_H

#include "gc/heap.h"

/* A block of a weak tag (gc_alloc refuses those tags), for ephemeron.c: its fields zeroed. */
gc_value gc_alloc_weak_block(gc_domain *d, size_t wsize, unsigned tag);

#endif /* GC_ALLOC_H */
