/* Work buffers for the parallel mark, in the style of Go's: each marker pushes and pops entries
 * in the buffer it holds; a full buffer goes to the shared full list for any marker to take; a
 * marker that runs dry takes a full one, or waits idle; marking is over when every marker waits
 * and no full buffer is left. A marker with plenty of work hands half of it to an idle one.
 *
 * The total number of entries is bounded by cfg.mark_stack_entries: when no empty buffer is left
 * the block is flagged for re-darkening instead (mark.c), so a tiny mark stack stays correct.
 */
#ifndef GC_WORKBUF_H
#define GC_WORKBUF_H

#include "gc/heap.h"

struct gc_workbuf {
  gc_workbuf *next;
  size_t count;     /* entries in items */
  gc_value items[]; /* work.buf_entries of them */
};

/* Shape the buffers for `markers` markers sharing `total_entries`; keeps the old buffers when
 * memory runs out (fewer buffers means more re-darkening, never a wrong mark). Outside marking. */
void gc_work_shape(gc_heap *heap, size_t total_entries, size_t markers);
void gc_work_free(gc_heap *heap);
/* Start a mark with `markers` markers (every buffer is on the empty list). */
void gc_work_begin(gc_heap *heap, size_t markers);

gc_workbuf *gc_work_get_empty(gc_mark_work *w); /* NULL when none is left */
void gc_work_put_empty(gc_mark_work *w, gc_workbuf *b);
void gc_work_put_full(gc_mark_work *w, gc_workbuf *b);
/* A buffer that is not full goes on the full list for any marker to take (incremental marking
 * shares what a slice leaves; termination collects every marker's): counted in w->shares, as
 * INV-OVERFLOW-1 counts handoffs' halves. */
void gc_work_put_partial(gc_mark_work *w, gc_workbuf *b);
/* A full buffer, waiting while other markers still work; NULL when marking is over. */
gc_workbuf *gc_work_get_full_or_finish(gc_mark_work *w);
/* A full buffer if one waits, never waiting (incremental slices); NULL otherwise. */
gc_workbuf *gc_work_try_get_full(gc_mark_work *w);
/* If a marker is idle and no full buffer waits, move half of b into a new full buffer. */
void gc_work_maybe_handoff(gc_mark_work *w, gc_workbuf *b);
/* Incremental slices: if another domain is in a slice and no full buffer waits, move half of b
 * into a new full buffer (a handoff), so that its slice finds work to pay its debt with. A tree
 * marked depth first keeps its frontier in one buffer, which one slice would otherwise hold. */
void gc_work_maybe_share(gc_mark_work *w, gc_workbuf *b);

#endif /* GC_WORKBUF_H */
