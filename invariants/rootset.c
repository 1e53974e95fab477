/* The verifier's own enumeration of the root set; see rootset.h. */
#include "invariants/rootset.h"

#include "gc/platform.h"

/* The fields of a block whose fields are roots (pinned, or with a finalizer set): all of them if
 * it is scanned. The header is read atomically, as the marker reads it (another marker may be
 * colouring it when a hook runs with markers still parked at the barrier). */
static void visit_fields(gc_value v, gc_visit_fn fn, void *ctx) {
  gc_header hd = gc_atomic_load_word(gc_hp_val(v));
  if (!gc_tag_is_scanned(gc_hd_tag(hd))) return;
  for (size_t k = 0; k < gc_hd_wsize(hd); k++) fn(ctx, &gc_fields(v)[k]);
}

void gc_verify_visit_roots(gc_heap *heap, gc_heapindex *ix, gc_visit_fn slot_fn,
                           gc_verify_word_fn word_fn, void *ctx) {
  for (size_t i = 0; i < heap->global_roots.count; i++) {
    slot_fn(ctx, (gc_value *)heap->global_roots.items[i]);
  }
  for (size_t i = 0; i < heap->pinned.count; i++)
    visit_fields((gc_value)heap->pinned.items[i], slot_fn, ctx);
  for (size_t i = 0; i < heap->finalizers.count; i++) {
    visit_fields(heap->finalizers.items[i].block, slot_fn, ctx); /* INV-FIN-1 */
  }
  for (size_t i = heap->finq_head; i < heap->finq.count; i++)
    slot_fn(ctx, &heap->finq.items[i].block);
  slot_fn(ctx, &heap->fin_running);
  for (size_t i = 0; i < heap->scanner_count; i++) {
    heap->scanners[i].fn(slot_fn, ctx, heap->scanners[i].user);
  }
  for (size_t d = 0; d < heap->domain_count; d++) {
    for (gc_frame *f = heap->domains[d]->head.frames; f != NULL; f = f->prev) {
      for (size_t i = 0; i < f->count; i++) slot_fn(ctx, &f->slots[i]);
    }
  }
  for (size_t i = 0; i < heap->range_count; i++) {
    const gc_range *r = &heap->ranges[i];
    for (size_t k = 0; k < r->wsize; k++) {
      uintptr_t word;
      /* The embedder's raw memory: read as bytes, whatever its declared type. */
      __builtin_memcpy(&word, &r->start[k], sizeof word);
      gc_value block = gc_heapindex_containing(ix, word);
      if (block != 0) word_fn(ctx, block, &r->start[k]);
    }
  }
}
