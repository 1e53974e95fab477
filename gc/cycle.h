/* The major cycle: finish sweeping, mark, rotate colours, start sweeping; and pacing. */
#ifndef GC_CYCLE_H
#define GC_CYCLE_H

#include "gc/heap.h"

/* Run one major cycle from domain d (stop-the-world with one domain: d is the world). */
void gc_major_cycle(gc_domain *d);
/* Words to allocate before the next paced cycle, from the last cycle's live words and the
 * pacing parameters; SIZE_MAX when pacing is off. */
size_t gc_cycle_trigger_words(const gc_heap *heap);

#endif /* GC_CYCLE_H */
