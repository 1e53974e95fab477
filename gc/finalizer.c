/* Go-style finalizers.
 *
 * While a block has a finalizer, its fields are roots: what it points to stays alive, so a
 * finalizer always finds its block's referents intact, and of two unreachable finalizable blocks
 * where one points to the other, only the outer one is queued first (ordered finalization). The
 * block itself is not a root: when marking ends with it UNMARKED, the record moves to the queue
 * and the block is marked, surviving this cycle. The queue is run after the cycle; a block whose
 * finalizer has run and that is unreachable again is freed by a later cycle like any other.
 *
 * Records are kept in arrays: set and clear scan them (finalizers are few and long-lived in the
 * programs this collector serves), and marking visits every record anyway.
 */
#include "gc/finalizer.h"

#include <stdlib.h>

static int vec_push(gc_finalizer_vec *v, gc_finalizer f) {
  if (v->count == v->capacity) {
    size_t capacity = v->capacity ? v->capacity * 2 : 16;
    gc_finalizer *items = realloc(v->items, capacity * sizeof *items);
    if (items == NULL) return 0;
    v->items = items;
    v->capacity = capacity;
  }
  v->items[v->count++] = f;
  return 1;
}

static long vec_find(const gc_finalizer_vec *v, gc_value block) {
  for (size_t i = 0; i < v->count; i++) {
    if (v->items[i].block == block) return (long)i;
  }
  return -1;
}

static gc_error set_with_lock(gc_heap *heap, gc_value block, gc_finalizer_fn fn, void *user) {
  if (!gc_is_block(block)) return gc_fail(heap, GC_ERR_NOT_BLOCK, "gc_finalizer_set: not a block");
  if (fn == NULL) return gc_fail(heap, GC_ERR_NO_FINALIZER, "gc_finalizer_set: NULL function");
  long i = vec_find(&heap->finalizers, block);
  if (i >= 0) {
    heap->finalizers.items[i].fn = fn;
    heap->finalizers.items[i].user = user;
    return GC_OK;
  }
  if (!vec_push(&heap->finalizers, (gc_finalizer){block, fn, user})) {
    return gc_fail(heap, GC_ERR_NOMEM, "gc_finalizer_set: out of memory");
  }
  return GC_OK;
}

static gc_error clear_with_lock(gc_heap *heap, gc_value block) {
  long i = vec_find(&heap->finalizers, block);
  if (i < 0) {
    return gc_fail(heap, GC_ERR_NO_FINALIZER, "gc_finalizer_clear: block %p has no finalizer",
                   (void *)block);
  }
  heap->finalizers.items[i] = heap->finalizers.items[--heap->finalizers.count];
  return GC_OK;
}

gc_error gc_finalizer_set(gc_heap *heap, gc_value block, gc_finalizer_fn fn, void *user) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = set_with_lock(heap, block, fn, user);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

gc_error gc_finalizer_clear(gc_heap *heap, gc_value block) {
  gc_mutex_lock(&heap->roots_lock);
  gc_error e = clear_with_lock(heap, block);
  gc_mutex_unlock(&heap->roots_lock);
  return e;
}

void gc_finalizer_visit_roots(gc_heap *heap, gc_visit_fn visit, void *ctx) {
  for (size_t i = 0; i < heap->finalizers.count; i++) {
    gc_value v = heap->finalizers.items[i].block;
    /* Other markers may be colouring this header right now: an atomic read of it. */
    gc_header hd = gc_atomic_load_word(gc_hp_val(v));
    if (!gc_tag_is_scanned(gc_hd_tag(hd))) continue;
    size_t wsize = gc_hd_wsize(hd);
    for (size_t k = 0; k < wsize; k++) visit(ctx, &gc_fields(v)[k]);
  }
  for (size_t i = heap->finq_head; i < heap->finq.count; i++)
    visit(ctx, &heap->finq.items[i].block);
  visit(ctx, &heap->fin_running);
}

void gc_finalizer_queue_unreachable(gc_heap *heap, void (*mark_fn)(void *, gc_value), void *ctx) {
  gc_finalizer_vec *set = &heap->finalizers;
  for (size_t i = 0; i < set->count;) {
    gc_finalizer f = set->items[i];
    if (gc_hd_colour(gc_hd_val(f.block)) != heap->colours.unmarked) {
      i++;
      continue;
    }
    /* Out of memory for the queue: keep the record; the next cycle tries again. */
    if (!vec_push(&heap->finq, f)) break;
    set->items[i] = set->items[--set->count];
    mark_fn(ctx, f.block);
  }
}

int gc_finalizers_enter(gc_domain *d) {
  /* One runner at a time, whichever domain: the others' queued finalizers run in its loop. */
  return !d->in_collection && gc_atomic_cas(&d->heap->running_finalizers, 0, 1);
}

int gc_finalizer_run_next(gc_domain *d) {
  gc_heap *heap = d->heap;
  /* FIFO, so finalizers run in the order cycles queued them. finq_head passes a record before
   * its function runs (exactly once), and fin_running keeps the block a root meanwhile. A cycle
   * started by a finalizer may append to the queue; the loop runs those too. */
  if (heap->finq_head >= heap->finq.count) return 0;
  gc_finalizer f = heap->finq.items[heap->finq_head++];
  heap->fin_running = f.block;
  uint64_t allocated_before = d->alloc_blocks, cycles_before = heap->cycles;
  f.fn(heap, f.block, f.user);
  heap->fin_running = 0;
  gc_event_note(heap, GC_EVENT_FIN_RUN);
  if (d->alloc_blocks != allocated_before) gc_event_note(heap, GC_EVENT_FIN_ALLOCATED);
  if (heap->cycles != cycles_before) gc_event_note(heap, GC_EVENT_FIN_COLLECTED);
  heap->finalizers_run++;
  return 1;
}

void gc_finalizers_leave(gc_domain *d) {
  gc_heap *heap = d->heap;
  heap->finq.count = 0;
  heap->finq_head = 0;
  gc_atomic_store(&heap->running_finalizers, 0);
}

void gc_finalizer_free_all(gc_heap *heap) {
  free(heap->finalizers.items);
  free(heap->finq.items);
  heap->finalizers = (gc_finalizer_vec){0};
  heap->finq = (gc_finalizer_vec){0};
}
