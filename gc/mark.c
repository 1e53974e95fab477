/* The marker. A block is marked when first reached (its colour set to MARKED) and pushed if it
 * has fields to scan; popping it scans its fields. INV-MARK-1 (heap.h) says where a marked but
 * unscanned block can be: on the stack, or in a pool or large block flagged GC_*_REDARKEN. */
#include "gc/mark.h"

#include <stdlib.h>
#include <string.h>

#include "gc/conservative.h"
#include "gc/finalizer.h"
#include "gc/large.h"
#include "gc/pool.h"

/* Remember that the block at hp is marked but unscanned: flag its pool or large block. */
static void note_overflow(gc_heap *heap, gc_header *hp, gc_header hd) {
  if (gc_hd_whsize(hd) <= GC_SIZECLASS_MAX_WHSIZE) {
    gc_pool_of_hp(hp)->flags |= GC_POOL_REDARKEN;
  } else {
    gc_large_of_hp(hp)->flags |= GC_LARGE_REDARKEN;
  }
  if (!heap->mark_overflowed) heap->mark_overflows++;
  heap->mark_overflowed = 1;
}

/* Mark the block at v if it is UNMARKED: colour it MARKED and push it if it has fields. */
static inline void mark_block(gc_heap *heap, gc_value v) {
  gc_header *hp = gc_hp_val(v);
  gc_header hd = *hp;
  if (gc_hd_colour(hd) != heap->colours.unmarked) return; /* marked, or NOT_MARKABLE */
  *hp = gc_hd_with_colour(hd, heap->colours.marked);
  heap->marked_words += gc_hd_whsize(hd);
  heap->marked_blocks++;
  if (!gc_tag_is_scanned(gc_hd_tag(hd))) return;
  if (heap->mark_sp < heap->mark_stack_capacity) {
    heap->mark_stack[heap->mark_sp++] = v;
  } else {
    note_overflow(heap, hp, hd);
  }
}

/* Reading a child's header is the marker's cache miss. Each pointer found first goes through a
 * small FIFO: its header is prefetched on the way in and examined GC_MARK_PREFETCH pointers
 * later, by which time it has usually arrived. */
static inline void mark_value(gc_heap *heap, gc_value v) {
  if (!gc_is_block(v)) return;
  __builtin_prefetch(gc_hp_val(v), 1);
  unsigned i = heap->prefetch_head;
  gc_value oldest = heap->prefetch[i];
  heap->prefetch[i] = v;
  heap->prefetch_head = (i + 1) % GC_MARK_PREFETCH;
  if (oldest != 0) {
    mark_block(heap, oldest);
  } else {
    heap->prefetch_count++;
  }
}

static void scan_fields(gc_heap *heap, gc_value v) {
  size_t wsize = gc_hd_wsize(gc_hd_val(v));
  gc_value *fields = gc_fields(v);
  for (size_t i = 0; i < wsize; i++) mark_value(heap, fields[i]);
}

/* Empty the FIFO into mark_block; returns 1 if it held anything. */
static int flush_prefetch(gc_heap *heap) {
  if (heap->prefetch_count == 0) return 0;
  heap->prefetch_count = 0;
  int any = 0;
  for (unsigned k = 0; k < GC_MARK_PREFETCH; k++) {
    unsigned i = (heap->prefetch_head + k) % GC_MARK_PREFETCH;
    gc_value v = heap->prefetch[i];
    if (v == 0) continue;
    heap->prefetch[i] = 0;
    mark_block(heap, v);
    any = 1;
  }
  return any;
}

/* Until the stack and the FIFO are both empty. */
static void drain(gc_heap *heap) {
  do {
    while (heap->mark_sp > 0) scan_fields(heap, heap->mark_stack[--heap->mark_sp]);
  } while (flush_prefetch(heap));
}

static void visit_root(void *ctx, gc_value *slot) {
  gc_heap *heap = ctx;
  mark_value(heap, *slot);
  /* Draining per root keeps the stack shallow when roots are many and graphs small. */
  drain(heap);
}

void gc_roots_visit(gc_heap *heap, gc_visit_fn visit, void *ctx) {
  for (size_t i = 0; i < heap->global_roots.count; i++) {
    visit(ctx, (gc_value *)heap->global_roots.items[i]);
  }
  gc_domain *d = heap->main_domain;
  for (gc_frame *f = d->head.frames; f != NULL; f = f->prev) {
    for (size_t i = 0; i < f->count; i++) visit(ctx, &f->slots[i]);
  }
  for (size_t i = 0; i < heap->pinned.count; i++) {
    gc_value v = (gc_value)heap->pinned.items[i];
    if (!gc_tag_is_scanned(gc_tag(v))) continue;
    for (size_t k = 0; k < gc_wsize(v); k++) visit(ctx, &gc_fields(v)[k]);
  }
  gc_finalizer_visit_roots(heap, visit, ctx);
  for (size_t i = 0; i < heap->scanner_count; i++) {
    heap->scanners[i].fn(visit, ctx, heap->scanners[i].user);
  }
}

/* Scan again every MARKED block of a flagged pool: its unscanned children are among them. */
static void redarken_pool(gc_heap *heap, gc_pool *p) {
  p->flags &= ~GC_POOL_REDARKEN;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  const gc_header marked = heap->colours.marked;
  for (gc_header *slot = gc_pool_first_slot(p); slot < gc_pool_slots_end(p); slot += slot_whsize) {
    gc_header hd = slot[0];
    if (hd == 0 || gc_hd_colour(hd) != marked || !gc_tag_is_scanned(gc_hd_tag(hd))) continue;
    scan_fields(heap, gc_val_hp(slot));
    drain(heap);
  }
}

static void redarken_pool_list(gc_heap *heap, gc_pool *list) {
  for (gc_pool *p = list; p != NULL; p = p->next) {
    if (p->flags & GC_POOL_REDARKEN) redarken_pool(heap, p);
  }
}

static void redarken_large_list(gc_heap *heap, gc_large *list) {
  for (gc_large *a = list; a != NULL; a = a->next) {
    if (!(a->flags & GC_LARGE_REDARKEN)) continue;
    a->flags &= ~GC_LARGE_REDARKEN;
    scan_fields(heap, gc_val_hp(gc_large_hp(a)));
    drain(heap);
  }
}

/* Overflow recovery: repeat until no push failed during a whole pass. Each pass scans at least
 * every block that overflowed before it began, so the set of marked blocks only grows and the
 * loop ends. Sweeping is complete, so every pool is on an avail or full list. */
static void redarken(gc_heap *heap) {
  while (heap->mark_overflowed) {
    heap->mark_overflowed = 0;
    gc_domain *d = heap->main_domain;
    for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
      redarken_pool_list(heap, d->avail[c]);
      redarken_pool_list(heap, d->full[c]);
    }
    redarken_large_list(heap, d->swept_large);
  }
}

/* A block found by a conservative word: a root like any other. */
static void mark_conservative(void *ctx, gc_value block, const uintptr_t *where) {
  gc_heap *heap = ctx;
  (void)where;
  mark_value(heap, block);
  drain(heap);
}

/* A block whose finalizer was just queued survives this cycle. */
static void mark_queued(gc_heap *heap, gc_value v) {
  mark_block(heap, v);
  drain(heap);
}

void gc_mark_heap(gc_heap *heap) {
  heap->marked_words = 0;
  heap->marked_blocks = 0;
  heap->mark_sp = 0;
  memset(heap->prefetch, 0, sizeof heap->prefetch);
  heap->prefetch_head = 0;
  heap->prefetch_count = 0;
  heap->mark_overflowed = 0;
  gc_roots_visit(heap, visit_root, heap);
  gc_conservative_visit(heap, mark_conservative, heap);
  drain(heap);
  redarken(heap);
  gc_finalizer_queue_unreachable(heap, mark_queued);
  redarken(heap);
}

gc_error gc_mark_stack_resize(gc_heap *heap, size_t entries) {
  gc_value *stack = realloc(heap->mark_stack, entries * sizeof(gc_value));
  if (stack == NULL) return gc_fail(heap, GC_ERR_NOMEM, "cannot allocate a mark stack of %zu entries", entries);
  heap->mark_stack = stack;
  heap->mark_stack_capacity = entries;
  return GC_OK;
}
