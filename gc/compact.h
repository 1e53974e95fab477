/* Compaction: evacuate the sparsest pools of each size class into the free slots of the others,
 * forward every reference, give the emptied pools back (the idea of OCaml 5.2's
 * caml_compact_heap). The invariants (INV-COMPACT-1..3) are stated in heap.h, at the heap's
 * `compact` record; gc.h says what an embedder must know (blocks move).
 *
 * It runs on one domain, the leader of a stop of the world, after every domain has swept (so
 * the heap holds live blocks and free slots only, and no GARBAGE colour): the stop is
 * gc_compact's or a full collection's (cycle.c), which call gc_compact_stopped.
 */
#ifndef GC_COMPACT_H
#define GC_COMPACT_H

#include "gc/heap.h"

/* Whether a full collection should compact now (world stopped, every domain swept): the
 * `compact` parameter is on and more than its share of the owned pools' slots is free. */
int gc_compact_wanted(gc_heap *heap);

/* Compact with the world stopped and every domain swept, on `leader`: adopt the orphans, call
 * GC_HOOK_COMPACT_START, move, forward, give the evacuated pools and every free pool back, count,
 * call GC_HOOK_COMPACTED, print the trace line. Returns 0 when it could not have the memory for
 * its tables (nothing moved then), 1 otherwise. */
int gc_compact_stopped(gc_domain *leader);

/* Where the block `v` lives now, while a compaction's stop runs: its new address if it moved
 * (its old slot holds a forwarding header), else `v` itself. For the collector's own reference
 * updates; valid only between the moves and the release of the evacuated pools. */
gc_value gc_compact_forward(gc_heap *heap, gc_value v);

#endif /* GC_COMPACT_H */
