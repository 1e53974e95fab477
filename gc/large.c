/* Large blocks: allocation, sweeping and teardown. */
#include "gc/large.h"

#include <stdlib.h>

#include "gc/custom.h"

/* The heap's large words and their high-water mark (INV-STATS-2): a new maximum is published
 * by compare-and-swap, since several domains may allocate large blocks at once. */
static void raise_large_words(gc_heap *heap, size_t words) {
  uintptr_t now = gc_atomic_fetch_add(&heap->large_words, words) + words;
  uintptr_t max = gc_atomic_load_relaxed(&heap->large_max_words);
  while (now > max && !gc_atomic_cas(&heap->large_max_words, max, now)) {
    max = gc_atomic_load_relaxed(&heap->large_max_words);
  }
}

gc_header *gc_large_alloc(gc_domain *d, size_t whsize) {
  gc_large *a = calloc(1, sizeof(gc_large) + gc_bsize_wsize(whsize));
  if (a == NULL) return NULL;
  a->next = d->swept_large;
  d->swept_large = a;
  gc_large_index_invalidate(d->heap);
  gc_heap_account_bytes(d->heap, (intptr_t)gc_bsize_wsize(whsize + GC_LARGE_HEADER_WSIZE));
  raise_large_words(d->heap, whsize + GC_LARGE_HEADER_WSIZE);
  gc_heap_stats *s = &d->stats;
  s->large_words += whsize + GC_LARGE_HEADER_WSIZE;
  if (s->large_words > s->large_max_words) s->large_max_words = s->large_words;
  s->large_blocks++;
  return gc_large_hp(a);
}

size_t gc_large_sweep_one(gc_domain *d) {
  gc_large *a = d->unswept_large;
  if (a == NULL) return 0;
  d->unswept_large = a->next;
  gc_header hd = *gc_large_hp(a);
  size_t whsize = gc_hd_whsize(hd);
  if (gc_hd_colour(hd) == d->heap->colours.garbage) {
    if (gc_hd_tag(hd) == GC_TAG_CUSTOM) gc_custom_finalize(gc_val_hp(gc_large_hp(a)));
    d->stats.large_words -= whsize + GC_LARGE_HEADER_WSIZE;
    d->stats.large_blocks--;
    d->freed_blocks++;
    d->freed_words += whsize;
    gc_large_index_invalidate(d->heap);
    gc_heap_account_bytes(d->heap, -(intptr_t)gc_bsize_wsize(whsize + GC_LARGE_HEADER_WSIZE));
    gc_atomic_fetch_sub(&d->heap->large_words, whsize + GC_LARGE_HEADER_WSIZE);
    /* This heap may still hold a stale pointer to it: ASan reports such a use with the stack
     * that freed it. */
    free(a);
  } else {
    a->next = d->swept_large;
    d->swept_large = a;
  }
  return whsize;
}

void gc_large_destroy_list(gc_large *list) {
  while (list != NULL) {
    gc_large *next = list->next;
    gc_header hd = *gc_large_hp(list);
    if (gc_hd_tag(hd) == GC_TAG_CUSTOM) gc_custom_finalize(gc_val_hp(gc_large_hp(list)));
    free(list);
    list = next;
  }
}
