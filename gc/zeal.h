/* Zeal modes that act beside the collector's paths rather than inside one (gc.h, GC_ZEALS):
 * a domain that joins, blocks and leaves at every phase boundary. */
#ifndef GC_ZEAL_H
#define GC_ZEAL_H

#include "gc/heap.h"

/* Zeal domains, from d's allocation slow path (a safepoint): when the phase d sees (idle,
 * marking or sweeping, and the cycle) has changed since the last call on any domain, the
 * heap's phantom domain acts once: it is spawned if there is none, else it leaves its blocking
 * section and enters it again, or it terminates (the fifth boundary of its life). d waits in
 * a blocking section meanwhile, as a thread that runs several domains must. One domain acts at
 * a time; a domain that finds another acting goes on. */
void gc_zeal_domains(gc_domain *d);

#endif /* GC_ZEAL_H */
