/* Ephemerons and weak references: the marking side (ephemeron_mark.c). The API is gc.h's; the
 * invariants, INV-EPHE-1 (the marking fixpoint), INV-EPHE-2 (the clean phase) and INV-EPHE-3
 * (the lists), are stated in heap.h where the state they govern lives. */
#ifndef GC_EPHEMERON_MARK_H
#define GC_EPHEMERON_MARK_H

#include "gc/heap.h"

/* How a round marks a datum: mark.c's gc_mark_block_now (1 when it coloured the block). The
 * marker hands it in, so the rounds sit below the marker that runs them. */
typedef int (*gc_ephe_mark_fn)(gc_marker *m, gc_value v);

/* One round over `list` on marker m: the datum of every live ephemeron on it whose key is alive
 * is marked now with mark_now (pushed for scanning when it has fields). Returns the data it
 * marked; adds the entries it passed to *examined (a slice's budget) when examined is not NULL.
 * Run by the list's owner in its mark slices, or by the leader of a stopped world. */
size_t gc_ephe_round(gc_marker *m, const gc_ephe_list *list, size_t *examined,
                     gc_ephe_mark_fn mark_now);
/* A round over every domain's list and the orphans': world stopped. */
size_t gc_ephe_round_all(gc_heap *heap, gc_marker *m, gc_ephe_mark_fn mark_now);
/* The clean phase (INV-EPHE-2), world stopped, marking over, colours not yet rotated, in two
 * steps around finalizer queueing (gc.h: the order). gc_ephe_clean_weak, before: every weak
 * slot naming an UNMARKED block is cleared. gc_ephe_clean, after the finalizers' marking and the
 * second fixpoint: the entries whose block is itself UNMARKED (dead, about to be swept) are
 * dropped from their list, and in the others every weak slot naming an UNMARKED block and both
 * slots of every ephemeron whose key is not alive are cleared. */
void gc_ephe_clean_weak(gc_heap *heap);
void gc_ephe_clean(gc_heap *heap);
/* Move every entry of `from` onto `to` (a terminating domain's list to the orphans, the orphans'
 * to their adopter). Under stw_lock. */
void gc_ephe_list_splice(gc_ephe_list *from, gc_ephe_list *to);

#endif /* GC_EPHEMERON_MARK_H */
