/* The heap as it was when the current cycle's marking began (GC_HOOK_MARK_START), recorded by the
 * verifier for the passes that judge marking against it (GC_VERIFY_NEEDS_SNAPSHOT, pass.h).
 *
 * INV-BARRIER-1 (gc/heap.h) is a promise about that moment: what was reachable then is MARKED
 * when marking ends, and what was allocated after it was born MARKED. Neither can be read off the
 * heap at mark-done (the paths may be cut, the new blocks look like the old), so the verifier
 * writes down, in memory of its own, with the world stopped:
 *   - every block allocated then (slots below each pool's frontier with a non-zero header, and
 *     large blocks, as the heap index finds them);
 *   - which of them the roots reached, by its own walk (the roots as rootset.h enumerates them,
 *     conservative words by gc.h's rule through the heap index), each with the edge that first
 *     led to it: the referrer and its field, or the root slot or range word. Those edges are the
 *     recorded path of every reached block, and comparing them with the fields at mark-done
 *     names an edge overwritten since;
 *   - each pool's frontier and free-list head, where the mark slices' born-black check starts
 *     (satb.c).
 *
 * Cost: O(allocated blocks) address-map inserts, plus the walk's O(reachable blocks + fields);
 * memory: the map (16 bytes a bucket) and one 24-byte record per reached block. Taken only when a
 * pass of the mask needs it: satb at every cycle, checkmark for incremental cycles only.
 */
#ifndef INVARIANTS_SNAPSHOT_H
#define INVARIANTS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "gc/heap.h"
#include "invariants/addrmap.h"
#include "invariants/heapindex.h"

/* How a reached block was first reached. */
typedef enum gc_snap_via {
  GC_SNAP_FIELD,     /* field `field` of the block `from` */
  GC_SNAP_ROOT_SLOT, /* the root slot at address `from` */
  GC_SNAP_ROOT_WORD, /* the conservative range word at address `from` */
  GC_SNAP_PINNED,    /* pinned (NOT_MARKABLE, on heap->pinned) at mark start: live by being
                      * pinned, whatever points to it; an unpin mid-mark makes it MARKED */
} gc_snap_via;

typedef struct gc_snap_block {
  gc_value v;
  uintptr_t from;
  uint32_t field;
  uint32_t via; /* gc_snap_via */
} gc_snap_block;

/* A pool's state at mark start, and how far the slices' born-black check got (satb.c). The free
 * list ascends and allocation pops its head, and nothing is freed while marking, so the slots
 * allocated from it since are those from its head at the start up to its head now. */
typedef struct gc_snap_pool {
  gc_header *free_checked;     /* next slot of the start's free list not yet checked, or NULL */
  gc_header *free_end;         /* the frontier at the start: the free slots all lie below it */
  gc_header *frontier_checked; /* slots from here to the frontier are unchecked */
} gc_snap_pool;

/* Values of `blocks` besides 1 + an index into `reached`: allocated at mark start and not
 * reached; allocated since, and already reported born white at a slice. */
#define GC_SNAP_PRESENT       0u
#define GC_SNAP_BORN_REPORTED GC_ADDRMAP_VALUE_MAX

typedef struct gc_verify_snapshot {
  int taken;         /* recorded at a mark start (see gc_verify_snapshot_current) */
  uint64_t cycle;    /* heap->cycles then: the cycle it belongs to, until its colours rotate */
  int complete;      /* 0: memory ran out; the record holds part of the heap */
  gc_addrmap blocks; /* block val -> GC_SNAP_PRESENT, 1 + index into `reached`, or BORN_REPORTED */
  gc_snap_block *reached;
  size_t reached_count, reached_capacity;
  gc_value *stack;
  size_t stack_capacity;
  gc_addrmap pools; /* pool -> index into `pool_marks` */
  gc_snap_pool *pool_marks;
  size_t pool_count, pool_capacity;
} gc_verify_snapshot;

/* Record the heap now (world stopped, at GC_HOOK_MARK_START; `ix` built for it). Returns 0 when
 * memory ran out (the record is then marked incomplete, and its users check less). */
int gc_verify_snapshot_take(gc_verify_snapshot *s, gc_heap *heap, gc_heapindex *ix);
/* 1 when s was taken at the start of the cycle marking now or whose marking just ended (before
 * its colours rotate), and is complete. */
int gc_verify_snapshot_current(const gc_verify_snapshot *s, const gc_heap *heap);
/* v's record if the walk reached it at mark start, else NULL. */
const gc_snap_block *gc_verify_snapshot_reached(const gc_verify_snapshot *s, gc_value v);
/* 1 if v was allocated at mark start. */
int gc_verify_snapshot_present(const gc_verify_snapshot *s, gc_value v);
/* The pool's record, added (as for a pool new since mark start: everything in it is new) if
 * missing; NULL when out of memory. */
gc_snap_pool *gc_verify_snapshot_pool(gc_verify_snapshot *s, gc_pool *p);
void gc_verify_snapshot_free(gc_verify_snapshot *s);

#endif /* INVARIANTS_SNAPSHOT_H */
