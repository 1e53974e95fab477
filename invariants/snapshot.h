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
 *     (satb.c);
 *   - which of the blocks the walk did not reach were reachable then only through a weak slot or
 *     an ephemeron's key or datum (GC_SNAP_WEAK): a get during marking may hand such a block to
 *     the mutator, shading it (gc.h), so it may end MARKED though the walk never reached it,
 *     floating garbage all the same (checkmark.c).
 *
 * Storage: each pool gets an array of one 32-bit state per slot (gc_snap_state: absent, present,
 * born-reported, weakly reached, or reached with the index of its record), found from a block's
 * address by its pool (a map of the pools, a small cache in front: poolmap.h) and its slot number;
 * large blocks, which
 * are few, get a map of their own. So the record is a memset and a store per allocated slot, and a
 * lookup is an array read, where a map entry per block cost a hashed insert and probe each. Only
 * the states below a pool's frontier are cleared when the record is taken; the rest are ABSENT
 * until one is written (a block born since, reported).
 *
 * Cost: O(slots below the frontiers) stores, plus the walk's O(reachable blocks + fields); memory: 4 bytes
 * a slot of every pool in use and one 24-byte record per reached block. Taken only when a pass of
 * the mask needs it: satb at every cycle, checkmark for incremental cycles only.
 */
#ifndef INVARIANTS_SNAPSHOT_H
#define INVARIANTS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "gc/heap.h"
#include "invariants/addrmap.h"
#include "invariants/heapindex.h"
#include "invariants/poolmap.h"

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
  gc_pool *pool;
  gc_header *first;            /* its first slot */
  uint32_t slot_whsize;        /* by the class the heap index gave it, not p->size_class now */
  uint32_t slots;              /* slots of its class */
  uint32_t slot_reciprocal;    /* 2^32 / slot_whsize + 1: a slot number by a multiply */
  size_t states;               /* offset of its slots' states in gc_verify_snapshot.states */
  uint32_t initialised;        /* states of the slots below are written; above, all ABSENT */
  gc_header *free_checked;     /* next slot of the start's free list not yet checked, or NULL */
  gc_header *free_end;         /* the frontier at the start: the free slots all lie below it */
  gc_header *frontier_checked; /* slots from here to the frontier are unchecked */
} gc_snap_pool;

/* What the record says of a block address. Stored as a 32-bit word: a reached block's word is
 * GC_SNAP_REACHED + the index of its record in `reached`. */
typedef enum gc_snap_state {
  GC_SNAP_ABSENT = 0,        /* not a block allocated at mark start (allocated since, or never) */
  GC_SNAP_PRESENT = 1,       /* allocated at mark start, not reached by the walk */
  GC_SNAP_BORN_REPORTED = 2, /* allocated since, and already reported born white at a slice */
  GC_SNAP_WEAK = 3,          /* allocated at mark start and reached then only through a weak
                              * slot, an ephemeron's key slot or the datum of an ephemeron whose
                              * key was not reached: a read during the mark shades what it
                              * returns (gc.h), so the cycle may keep it, and need not */
  GC_SNAP_REACHED = 4,       /* allocated at mark start and reached (any index) */
} gc_snap_state;

typedef struct gc_verify_snapshot {
  int taken;           /* recorded at a mark start (see gc_verify_snapshot_current) */
  const gc_heap *heap; /* the heap recorded */
  uint64_t cycle;      /* heap->cycles then: the cycle it belongs to, until its colours rotate */
  int complete;        /* 0: memory ran out; the record holds part of the heap */
  gc_snap_block *reached;
  size_t reached_count, reached_capacity;
  gc_value *stack;
  size_t stack_capacity;
  gc_poolmap pools; /* pool -> index into `pool_marks` */
  gc_snap_pool *pool_marks;
  size_t pool_count, pool_capacity;
  uint32_t *states; /* every recorded pool's slot states, one run a pool */
  size_t states_count, states_capacity;
  gc_addrmap larges; /* large block val -> its state word */
} gc_verify_snapshot;

/* Record the heap now (world stopped, at GC_HOOK_MARK_START; `ix` built for it). Returns 0 when
 * memory ran out (the record is then marked incomplete, and its users check less). */
int gc_verify_snapshot_take(gc_verify_snapshot *s, gc_heap *heap, gc_heapindex *ix);
/* 1 when s was taken at the start of the cycle marking now or whose marking just ended (before
 * its colours rotate), and is complete. */
int gc_verify_snapshot_current(const gc_verify_snapshot *s, const gc_heap *heap);
/* What the record says of v (any word: ABSENT for one that is no block of the record). A reached
 * block is GC_SNAP_REACHED. */
gc_snap_state gc_verify_snapshot_state(gc_verify_snapshot *s, gc_value v);
/* v's record if the walk reached it at mark start, else NULL. */
const gc_snap_block *gc_verify_snapshot_reached(gc_verify_snapshot *s, gc_value v);
/* 1 if v was allocated at mark start. */
int gc_verify_snapshot_present(gc_verify_snapshot *s, gc_value v);
/* 1 if the cycle may keep v: allocated since mark start, reached at mark start, or reached then
 * only weakly (GC_SNAP_WEAK). */
int gc_verify_snapshot_may_keep(gc_verify_snapshot *s, gc_value v);
/* The one place a MARKED block the roots do not reach at mark-done is allowed (checkmark.c says
 * why): floating garbage of an incremental cycle, as s (NULL: none) records it; without a
 * record of the cycle's start, every block. */
int gc_verify_snapshot_allows_unrooted(gc_verify_snapshot *s, const gc_heap *heap, gc_value v);
/* Remember that v, allocated since mark start, was reported born white (satb.c), so it is not
 * reported again. */
void gc_verify_snapshot_set_born_reported(gc_verify_snapshot *s, gc_value v);
/* The pool's record, added (as for a pool new since mark start: everything in it is new) if
 * missing; NULL when out of memory. */
gc_snap_pool *gc_verify_snapshot_pool(gc_verify_snapshot *s, gc_pool *p);
void gc_verify_snapshot_free(gc_verify_snapshot *s);

#endif /* INVARIANTS_SNAPSHOT_H */
