/* The major cycle: finish sweeping, mark, rotate colours, start sweeping; and pacing. */
#ifndef GC_CYCLE_H
#define GC_CYCLE_H

#include "gc/heap.h"

/* Run one major cycle with d as the leader: stops the world, every stopped domain helps. */
void gc_major_cycle(gc_domain *d);
/* An enlisted domain's part of a stopped-world program (enum gc_stw_program). */
void gc_cycle_participate(gc_domain *d, int program);
/* Report d's allocation to the pacer; 1 if a cycle is due. */
int gc_cycle_due(gc_domain *d);
/* Words to allocate before the next paced cycle, from the last cycle's live words and the
 * pacing parameters; SIZE_MAX when pacing is off. */
size_t gc_cycle_trigger_words(const gc_heap *heap);

#endif /* GC_CYCLE_H */
