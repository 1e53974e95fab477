/* Orphans and adoption (see orphan.h). */
#include "gc/orphan.h"

#include <string.h>

#include "gc/ephemeron_mark.h"
#include "gc/large.h"
#include "gc/pool.h"

/* Moves every pool of *src onto the list `onto`, owned by `owner` now; returns the new head. The
 * caller stores it: the orphan heads are protocol words (platform.h), read and written once. */
static gc_pool *move_pools(gc_pool **src, gc_pool *onto, gc_domain *owner) {
  while (*src != NULL) {
    gc_pool *p = *src;
    *src = p->next;
    p->owner = owner;
    p->next = onto;
    onto = p;
  }
  return onto;
}

static gc_large *move_large(gc_large **src, gc_large *onto) {
  while (*src != NULL) {
    gc_large *a = *src;
    *src = a->next;
    a->next = onto;
    onto = a;
  }
  return onto;
}

static void stats_sub(gc_heap_stats *acc, const gc_heap_stats *s) {
  acc->pool_words -= s->pool_words;
  acc->pool_live_words -= s->pool_live_words;
  acc->pool_live_blocks -= s->pool_live_blocks;
  acc->pool_frag_words -= s->pool_frag_words;
  acc->large_words -= s->large_words;
  acc->large_blocks -= s->large_blocks;
}

static void raise_maxima(gc_heap_stats *s) {
  if (s->pool_words > s->pool_max_words) s->pool_max_words = s->pool_words;
  if (s->large_words > s->large_max_words) s->large_max_words = s->large_words;
}

void gc_orphan_domain(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_orphans *o = &heap->orphans;
  gc_mutex_lock(&heap->pool_lock);
  o->serial++;
  /* A running domain may be adopting at the same time (it waits for pool_lock). */
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    if (d->avail[c] != NULL) {
      gc_pool *head = GC_GUARDED_LOAD(o->avail[c]);
      if (head == NULL) o->avail_since[c] = o->serial;
      GC_GUARDED_STORE(o->avail[c], move_pools(&d->avail[c], head, NULL));
    }
    if (d->full[c] != NULL) {
      gc_pool *head = GC_GUARDED_LOAD(o->full[c]);
      GC_GUARDED_STORE(o->full[c], move_pools(&d->full[c], head, NULL));
    }
  }
  if (d->swept_large != NULL) {
    gc_large *head = GC_GUARDED_LOAD(o->large);
    GC_GUARDED_STORE(o->large, move_large(&d->swept_large, head));
  }
  gc_heap_stats_add(&o->stats, &d->stats);
  memset(&d->stats, 0, sizeof d->stats);
  gc_mutex_unlock(&heap->pool_lock);
}

int gc_orphan_adopt_pool(gc_domain *d, gc_sizeclass c, uint64_t *looked) {
  gc_heap *heap = d->heap;
  gc_orphans *o = &heap->orphans;
  gc_mutex_lock(&heap->pool_lock);
  *looked = o->serial;
  gc_pool *p = GC_GUARDED_LOAD(o->avail[c]);
  int full = 0;
  if (p != NULL) {
    GC_GUARDED_STORE(o->avail[c], p->next);
  } else if ((p = GC_GUARDED_LOAD(o->full[c])) != NULL) {
    GC_GUARDED_STORE(o->full[c], p->next);
    full = 1;
  }
  if (p != NULL) {
    gc_heap_stats recount = {0};
    gc_pool_recount(p, &recount);
    stats_sub(&o->stats, &recount);
    gc_heap_stats_add(&d->stats, &recount); /* a recount has no maxima: they stay */
    raise_maxima(&d->stats);
    p->owner = d;
    gc_event_note(heap, GC_EVENT_ADOPT_POOL);
  }
  gc_mutex_unlock(&heap->pool_lock);
  if (p == NULL) return 0;
  /* By INV-ORPHAN-1 a full orphan holds no dead block, so sweeping it frees nothing unless the
   * invariant was broken; the pass is cheap next to the allocation slow path that asked. */
  p->next = NULL;
  gc_pool *list = p;
  if (full) {
    gc_pool_sweep(d, &list, 0);
  } else {
    p->next = d->avail[c];
    d->avail[c] = p;
  }
  return d->avail[c] != NULL;
}

void gc_orphan_adopt_all(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_orphans *o = &heap->orphans;
  gc_mutex_lock(&heap->pool_lock);
  if (o->stats.pool_words != 0 || o->stats.large_blocks != 0 || o->ephe.head != 0) {
    gc_event_note(heap, GC_EVENT_ADOPT_STOP);
  }
  /* The world is stopped: no other thread of the heap runs, so no point is needed here. */
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    d->avail[c] = move_pools(&o->avail[c], d->avail[c], d);
    d->full[c] = move_pools(&o->full[c], d->full[c], d);
  }
  d->swept_large = move_large(&o->large, d->swept_large);
  gc_ephe_list_splice(&o->ephe, &d->ephe); /* a stop holds stw_lock too (INV-EPHE-3) */
  size_t pool_max = d->stats.pool_max_words, large_max = d->stats.large_max_words;
  gc_heap_stats_add(&d->stats, &o->stats);
  d->stats.pool_max_words = pool_max;
  d->stats.large_max_words = large_max;
  raise_maxima(&d->stats);
  memset(&o->stats, 0, sizeof o->stats);
  gc_mutex_unlock(&heap->pool_lock);
}
