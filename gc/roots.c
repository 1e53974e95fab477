/* Root sets: global root slots, local root frames, pinned blocks and embedders' scanners.
 * (Visiting them all is gc_roots_visit in mark.c, next to its only hot user.) */
#include <stdlib.h>

#include "gc/heap.h"
#include "gc/mark.h"

int gc_ptr_vec_push(gc_ptr_vec *v, void *item) {
  if (v->count == v->capacity) {
    size_t capacity = v->capacity ? v->capacity * 2 : 16;
    void **items = realloc(v->items, capacity * sizeof *items);
    if (items == NULL) return 0;
    v->items = items;
    v->capacity = capacity;
  }
  v->items[v->count++] = item;
  return 1;
}

void gc_ptr_vec_free(gc_ptr_vec *v) {
  free(v->items);
  v->items = NULL;
  v->count = v->capacity = 0;
}

/* Index of `item` in v, or -1. Root sets are small and change rarely; a scan is enough. */
static long ptr_vec_find(const gc_ptr_vec *v, const void *item) {
  for (size_t i = 0; i < v->count; i++) {
    if (v->items[i] == item) return (long)i;
  }
  return -1;
}

static void ptr_vec_remove_at(gc_ptr_vec *v, size_t i) { v->items[i] = v->items[--v->count]; }

/* ---- Global roots ----
 * The root sets change under roots_lock, from running domains; a collection reads them with the
 * world stopped (the domains' state changes order those reads after every change). */

static gc_error root_register_with_lock(gc_heap *heap, gc_value *slot) {
  if (slot == NULL) return gc_fail(heap, GC_ERR_UNKNOWN_ROOT, "gc_root_register: NULL slot");
  if (ptr_vec_find(&heap->global_roots, slot) >= 0) {
    return gc_fail(heap, GC_ERR_DUP_ROOT, "gc_root_register: slot %p is already a root",
                   (void *)slot);
  }
  if (!gc_ptr_vec_push(&heap->global_roots, slot)) {
    return gc_fail(heap, GC_ERR_NOMEM, "gc_root_register: out of memory");
  }
  return GC_OK;
}

static gc_error root_unregister_with_lock(gc_heap *heap, gc_value *slot) {
  long i = ptr_vec_find(&heap->global_roots, slot);
  if (i < 0) {
    return gc_fail(heap, GC_ERR_UNKNOWN_ROOT, "gc_root_unregister: slot %p is not a root",
                   (void *)slot);
  }
  ptr_vec_remove_at(&heap->global_roots, (size_t)i);
  return GC_OK;
}

/* ---- Local root frames ---- */

gc_error gc_frame_pop_mismatch(gc_domain *d, gc_frame *frame) {
  return gc_fail(d->heap, GC_ERR_FRAME_ORDER,
                 "gc_frame_pop: frame %p is not the innermost frame (%p); frames left as they were",
                 (void *)frame, (void *)d->head.frames);
}

/* ---- Scanners ---- */

static gc_error root_scanner_add_with_lock(gc_heap *heap, gc_scan_roots_fn fn, void *user) {
  if (fn == NULL) return gc_fail(heap, GC_ERR_UNKNOWN_ROOT, "gc_root_scanner_add: NULL function");
  if (heap->scanner_count == heap->scanner_capacity) {
    size_t capacity = heap->scanner_capacity ? heap->scanner_capacity * 2 : 4;
    gc_scanner *s = realloc(heap->scanners, capacity * sizeof *s);
    if (s == NULL) return gc_fail(heap, GC_ERR_NOMEM, "gc_root_scanner_add: out of memory");
    heap->scanners = s;
    heap->scanner_capacity = capacity;
  }
  heap->scanners[heap->scanner_count++] = (gc_scanner){fn, user};
  return GC_OK;
}

static gc_error root_scanner_remove_with_lock(gc_heap *heap, gc_scan_roots_fn fn, void *user) {
  for (size_t i = 0; i < heap->scanner_count; i++) {
    if (heap->scanners[i].fn == fn && heap->scanners[i].user == user) {
      heap->scanners[i] = heap->scanners[--heap->scanner_count];
      return GC_OK;
    }
  }
  return gc_fail(heap, GC_ERR_UNKNOWN_ROOT, "gc_root_scanner_remove: scanner not registered");
}

/* ---- Pinned blocks ---- */

/* Whether a cycle marks now. The caller runs a domain (gc.h), and marking starts and ends only
 * while every domain is stopped, so it cannot change under the caller: a plain (relaxed) read,
 * not a scheduling point (a point here would open no window, and would shift every schedule of
 * the stop-the-world mode by one step). */
static int marking_now(gc_heap *heap) { return gc_atomic_load_relaxed(&heap->marking) != 0; }

/* Give the header at hp `colour`: while a cycle marks by compare-and-swap, since markers may
 * colour the header meanwhile; otherwise no marker runs, and a relaxed store is enough. Returns
 * the header it replaced. */
static gc_header repaint(gc_heap *heap, gc_header *hp, gc_header colour) {
  gc_header hd = gc_atomic_load_word(hp);
  if (!marking_now(heap)) {
    gc_atomic_store_relaxed(hp, gc_hd_with_colour(hd, colour));
    return hd;
  }
  while (!gc_atomic_cas(hp, hd, gc_hd_with_colour(hd, colour))) hd = gc_atomic_load_word(hp);
  return hd;
}

static gc_error pin_with_lock(gc_heap *heap, gc_value v) {
  if (!gc_is_block(v)) return gc_fail(heap, GC_ERR_NOT_BLOCK, "gc_pin: not a block");
  gc_header *hp = gc_hp_val(v);
  if (gc_hd_colour(gc_atomic_load_word(hp)) == GC_NOT_MARKABLE) return GC_OK;
  if (!gc_ptr_vec_push(&heap->pinned, (void *)v)) {
    return gc_fail(heap, GC_ERR_NOMEM, "gc_pin: out of memory");
  }
  /* Outside marking every live block is UNMARKED, so repainting loses nothing. While a cycle
   * marks (INV-BARRIER-1), a NOT_MARKABLE block is scanned neither by a marker that reaches it
   * later nor by re-darkening (which rescans MARKED blocks of flagged pools only, so shading the
   * block itself is lost if its push overflows): its fields, roots from now on, are darkened
   * here, and whatever a mutator overwrites in them later the barrier darkens. Then it is
   * repainted, by compare-and-swap since markers may colour the header meanwhile. */
  int marking = marking_now(heap);
  if (marking) {
    gc_mark_shade_fields(heap, v);
    gc_event_note(heap, GC_EVENT_PIN_MARKING);
  }
  /* A block a marker (or its birth) coloured MARKED was counted as marked; pinned, it is counted
   * with the pinned ones instead (INV-MARKCOUNT-1). */
  gc_header was = repaint(heap, hp, GC_NOT_MARKABLE);
  if (marking && gc_hd_colour(was) == heap->colours.marked) gc_mark_count_pinned(heap, was);
  return GC_OK;
}

static gc_error unpin_with_lock(gc_heap *heap, gc_value v) {
  if (!gc_is_block(v)) return gc_fail(heap, GC_ERR_NOT_BLOCK, "gc_unpin: not a block");
  long i = ptr_vec_find(&heap->pinned, (void *)v);
  if (i < 0) return gc_fail(heap, GC_ERR_NOT_BLOCK, "gc_unpin: block %p is not pinned", (void *)v);
  ptr_vec_remove_at(&heap->pinned, (size_t)i);
  gc_header *hp = gc_hp_val(v);
  /* While a cycle marks, the block was a root when marking began and stays live: MARKED (its
   * fields were darkened as roots then; INV-BARRIER-1). */
  if (marking_now(heap)) {
    gc_event_note(heap, GC_EVENT_UNPIN_MARKING);
    gc_mark_count_unpinned(heap, gc_atomic_load_word(hp));
    repaint(heap, hp, heap->colours.marked);
  } else {
    repaint(heap, hp, heap->colours.unmarked);
  }
  return GC_OK;
}

/* ---- Locked entry points ---- */

gc_error gc_root_register(gc_heap *heap, gc_value *slot) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = root_register_with_lock(heap, slot);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_root_unregister(gc_heap *heap, gc_value *slot) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = root_unregister_with_lock(heap, slot);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_root_scanner_add(gc_heap *heap, gc_scan_roots_fn fn, void *user) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = root_scanner_add_with_lock(heap, fn, user);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_root_scanner_remove(gc_heap *heap, gc_scan_roots_fn fn, void *user) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = root_scanner_remove_with_lock(heap, fn, user);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_pin(gc_heap *heap, gc_value v) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = pin_with_lock(heap, v);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_unpin(gc_heap *heap, gc_value v) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = unpin_with_lock(heap, v);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}
