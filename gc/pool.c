/* Pools: getting them from the OS, giving them back, initialising and sweeping them. */
#include "gc/pool.h"

#include <string.h>

#include "gc/custom.h"
#include "gc/poolcache.h"
#include "gc/poolset.h"

/* ---- The heap's free pool list ---------------------------------------------------------- */

/* A pool leaves the heap: to the pool cache if there is one with room, else to the OS. */
static void unmap_pool(gc_heap *heap, gc_pool *p) {
  heap->mapped_pool_count--;
  if (heap->cfg.pool_cache != NULL && gc_pool_cache_give(heap->cfg.pool_cache, p)) return;
  gc_plat_unmap(p, GC_POOL_BSIZE);
}

/* Map a batch of pools and put all but one on the free list (a cached pool first, alone).
 * Called with the pool lock held. */
static gc_pool *map_batch_with_lock(gc_heap *heap) {
  if (heap->cfg.pool_cache != NULL) {
    gc_pool *cached = gc_pool_cache_take(heap->cfg.pool_cache);
    if (cached != NULL) {
      heap->mapped_pool_count++;
      return cached;
    }
  }
  size_t count = gc_param_load(&heap->cfg.pools_per_batch);
  char *mem = gc_plat_map_aligned(count * GC_POOL_BSIZE, GC_POOL_BSIZE);
  if (mem == NULL) return NULL;
  for (size_t i = 1; i < count; i++) {
    gc_pool *p = (gc_pool *)(mem + i * GC_POOL_BSIZE);
    p->owner = NULL;
    p->next = GC_GUARDED_LOAD(heap->free_pools);
    GC_GUARDED_STORE(heap->free_pools, p);
    heap->free_pool_count++;
  }
  heap->mapped_pool_count += count;
  return (gc_pool *)mem;
}

gc_pool *gc_pool_acquire(gc_heap *heap, gc_sizeclass c, uint64_t looked) {
  gc_mutex_lock(&heap->pool_lock);
  gc_pool *p = GC_GUARDED_LOAD(heap->free_pools);
  if (p != NULL) {
    GC_GUARDED_STORE(heap->free_pools, p->next);
    heap->free_pool_count--;
  } else {
    p = map_batch_with_lock(heap);
  }
  if (p != NULL && !gc_pool_set_insert(heap, p)) { /* INV-INDEX-1 */
    p->next = GC_GUARDED_LOAD(heap->free_pools);
    GC_GUARDED_STORE(heap->free_pools, p);
    heap->free_pool_count++;
    p = NULL;
  }
  if (p != NULL) { /* INV-STATS-2: the owned pools' high-water mark */
    size_t owned_words = (heap->mapped_pool_count - heap->free_pool_count) * GC_POOL_WSIZE;
    if (owned_words > heap->pool_max_words) heap->pool_max_words = owned_words;
  }
  if (p != NULL) { /* INV-SPACE-3: what the taker had seen of the orphans */
    gc_orphans *o = &heap->orphans;
    uint64_t seen = looked < o->serial ? looked : o->serial;
    if (seen > o->fresh_seen[c]) o->fresh_seen[c] = seen;
  }
  gc_mutex_unlock(&heap->pool_lock);
  return p;
}

/* How many empty pools to keep mapped. Pools freed by sweeping are usually needed again before
 * the next cycle (it starts after trigger_words more words), so those are kept as well as the
 * configured reserve; unmapping and re-faulting them would cost more than the memory. */
static size_t keep_limit(const gc_heap *heap) {
  size_t trigger_words = gc_param_load(&heap->trigger_words);
  size_t until_next_cycle = trigger_words == SIZE_MAX ? 0 : trigger_words / GC_POOL_WSIZE;
  return gc_param_load(&heap->cfg.free_pools_kept) + until_next_cycle;
}

void gc_pool_release(gc_heap *heap, gc_pool *p) {
  p->owner = NULL;
  gc_mutex_lock(&heap->pool_lock);
  gc_pool_set_remove(heap, p);
  if (heap->free_pool_count >= keep_limit(heap)) {
    unmap_pool(heap, p);
    gc_mutex_unlock(&heap->pool_lock);
    return;
  }
  p->next = GC_GUARDED_LOAD(heap->free_pools);
  GC_GUARDED_STORE(heap->free_pools, p);
  heap->free_pool_count++;
  gc_mutex_unlock(&heap->pool_lock);
}

void gc_pool_unmap_free(gc_heap *heap) {
  gc_mutex_lock(&heap->pool_lock);
  for (gc_pool *p; (p = GC_GUARDED_LOAD(heap->free_pools)) != NULL;) {
    GC_GUARDED_STORE(heap->free_pools, p->next);
    heap->free_pool_count--;
    unmap_pool(heap, p);
  }
  gc_mutex_unlock(&heap->pool_lock);
}

/* ---- One pool ------------------------------------------------------------------------------ */

void gc_pool_init(gc_pool *p, gc_sizeclass c, gc_domain *owner) {
  p->next = NULL;
  p->owner = owner;
  p->flags = 0;
  p->size_class = c;
  p->free_list = NULL;
  p->frontier = gc_pool_first_slot(p);
  p->end = gc_pool_slots_end(p);
}

size_t gc_pool_sweep(gc_domain *d, gc_pool **list, int release_if_empty) {
  gc_pool *p = *list;
  if (p == NULL) return 0;
  *list = p->next;

  gc_heap *heap = d->heap;
  const gc_header garbage = heap->colours.garbage;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  gc_header *frontier = p->frontier;
  /* Counted in locals: stores to the slots could alias the domain's statistics, which would
   * force every update through memory in this, the hottest loop of sweeping. */
  size_t live_blocks = 0, freed_blocks = 0, freed_words = 0;
  gc_header *free_list = NULL;

  /* Walk backwards so the rebuilt free list is in ascending address order (INV-POOL-1). Free
   * slots above the last live block go back behind the frontier instead of on the list. */
  for (gc_header *slot = frontier - slot_whsize; slot >= first; slot -= slot_whsize) {
    gc_header hd = slot[0];
    if (hd != 0) {
      if (gc_hd_colour(hd) != garbage) {
        live_blocks++;
        continue;
      }
      if (gc_hd_tag(hd) == GC_TAG_CUSTOM) gc_custom_finalize(gc_val_hp(slot));
      freed_blocks++;
      freed_words += gc_hd_whsize(hd);
      slot[0] = 0;
    }
    if (live_blocks == 0) {
      p->frontier = slot;
      continue;
    }
    slot[1] = (gc_header)free_list;
    free_list = slot;
  }
  p->free_list = free_list; /* p->flags stay: they are the mark's (pool.h) */

  gc_heap_stats *s = &d->stats;
  s->pool_live_blocks -= freed_blocks;
  s->pool_live_words -= freed_words;
  s->pool_frag_words -= freed_blocks * slot_whsize - freed_words;
  d->freed_blocks += freed_blocks;
  d->freed_words += freed_words;

  gc_sizeclass c = p->size_class;
  if (live_blocks == 0 && release_if_empty) {
    s->pool_words -= GC_POOL_WSIZE;
    s->pool_frag_words -= GC_POOL_HEADER_WSIZE + gc_wastage_of_class[c];
    gc_heap_account_bytes(heap, -(intptr_t)GC_POOL_BSIZE);
    gc_pool_release(heap, p);
  } else {
    gc_pool **dest = gc_pool_is_full(p) ? &d->full[c] : &d->avail[c];
    p->next = *dest;
    *dest = p;
  }
  /* At least 1: callers read 0 as "that list was empty". */
  return (size_t)(frontier - first) + 1;
}

void gc_pool_recount(gc_pool *p, gc_heap_stats *s) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  s->pool_words += GC_POOL_WSIZE;
  s->pool_frag_words += GC_POOL_HEADER_WSIZE + gc_wastage_of_class[p->size_class];
  for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
    /* Atomic: adopting an orphan pool recounts it while another domain's mark slice may colour
     * one of its headers (incremental marking). */
    gc_header hd = gc_atomic_load_word(slot);
    if (hd == 0) continue;
    s->pool_live_blocks++;
    s->pool_live_words += gc_hd_whsize(hd);
    s->pool_frag_words += slot_whsize - gc_hd_whsize(hd);
  }
}

void gc_pool_destroy(gc_heap *heap, gc_pool *p) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
    if (slot[0] != 0 && gc_hd_tag(slot[0]) == GC_TAG_CUSTOM) gc_custom_finalize(gc_val_hp(slot));
  }
  gc_pool_set_remove(heap, p);
  unmap_pool(heap, p);
}
