/* Orphans and adoption (see orphan.h). */
#include "gc/orphan.h"

#include <string.h>

#include "gc/large.h"
#include "gc/pool.h"

static void move_pools(gc_pool **src, gc_pool **dst, gc_domain *owner) {
  while (*src != NULL) {
    gc_pool *p = *src;
    *src = p->next;
    p->owner = owner;
    p->next = *dst;
    *dst = p;
  }
}

static void move_large(gc_large **src, gc_large **dst) {
  while (*src != NULL) {
    gc_large *a = *src;
    *src = a->next;
    a->next = *dst;
    *dst = a;
  }
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
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    if (o->avail[c] == NULL && d->avail[c] != NULL) o->avail_since[c] = o->serial;
    move_pools(&d->avail[c], &o->avail[c], NULL);
    move_pools(&d->full[c], &o->full[c], NULL);
  }
  move_large(&d->swept_large, &o->large);
  gc_heap_stats_add(&o->stats, &d->stats);
  memset(&d->stats, 0, sizeof d->stats);
  gc_mutex_unlock(&heap->pool_lock);
}

int gc_orphan_adopt_pool(gc_domain *d, gc_sizeclass c, uint64_t *looked) {
  gc_heap *heap = d->heap;
  gc_orphans *o = &heap->orphans;
  gc_mutex_lock(&heap->pool_lock);
  *looked = o->serial;
  gc_pool *p = o->avail[c];
  int full = 0;
  if (p != NULL) {
    o->avail[c] = p->next;
  } else if ((p = o->full[c]) != NULL) {
    o->full[c] = p->next;
    full = 1;
  }
  if (p != NULL) {
    gc_heap_stats recount = {0};
    gc_pool_recount(p, &recount);
    stats_sub(&o->stats, &recount);
    gc_heap_stats_add(&d->stats, &recount); /* a recount has no maxima: they stay */
    raise_maxima(&d->stats);
    p->owner = d;
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
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    move_pools(&o->avail[c], &d->avail[c], d);
    move_pools(&o->full[c], &d->full[c], d);
  }
  move_large(&o->large, &d->swept_large);
  size_t pool_max = d->stats.pool_max_words, large_max = d->stats.large_max_words;
  gc_heap_stats_add(&d->stats, &o->stats);
  d->stats.pool_max_words = pool_max;
  d->stats.large_max_words = large_max;
  raise_maxima(&d->stats);
  memset(&o->stats, 0, sizeof o->stats);
  gc_mutex_unlock(&heap->pool_lock);
}
