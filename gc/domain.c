/* Domains: creation, termination, blocking sections (see gc.h and INV-DOM-1 in heap.h). */
#include <stdlib.h>

#include "gc/cycle.h"
#include "gc/ephemeron_mark.h"
#include "gc/large.h"
#include "gc/mark.h"
#include "gc/orphan.h"
#include "gc/pool.h"
#include "gc/poolcache.h"
#include "gc/stw.h"
#include "gc/sweep.h"

gc_domain *gc_domain_new(gc_heap *heap, uintptr_t state) {
  /* The main domain is made first, and may be a spare (poolcache.h); a spawned one never is. */
  gc_domain *d = heap->main_domain == NULL
                     ? gc_spare_calloc(heap->cfg.pool_cache, GC_SPARE_DOMAIN, sizeof *d)
                     : calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  d->heap = heap;
  d->state = state;
  d->next_to_sweep = GC_NUM_SIZECLASSES;
  d->marker.heap = heap;
  return d;
}

/* Add d to the heap's list; the caller holds stw_lock (INV-STW-1). */
int gc_domain_list_add(gc_heap *heap, gc_domain *d) {
  if (heap->domain_count == heap->domain_capacity) {
    size_t capacity = heap->domain_capacity ? heap->domain_capacity * 2 : 4;
    gc_domain **domains = realloc(heap->domains, capacity * sizeof *domains);
    if (domains == NULL) return 0;
    heap->domains = domains;
    heap->domain_capacity = capacity;
  }
  d->id = heap->next_domain_id++;
  /* Marking starts and ends only under stw_lock, which the caller holds: a domain made while a
   * cycle marks joins it now, with the barrier on and a marker of this cycle's colours. */
  if (gc_atomic_load_relaxed(&heap->marking)) {
    gc_mark_init_marker(heap, &d->marker, 1);
    d->head.marking = 1;
    heap->mark_markers++;
  }
  heap->domains[heap->domain_count] = d;
  gc_atomic_store(&heap->domain_count, heap->domain_count + 1);
  return 1;
}

static void list_remove(gc_heap *heap, gc_domain *d) {
  for (size_t i = 0; i < heap->domain_count; i++) {
    if (heap->domains[i] == d) {
      heap->domains[i] = heap->domains[heap->domain_count - 1];
      gc_atomic_store(&heap->domain_count, heap->domain_count - 1);
      return;
    }
  }
}

gc_domain *gc_domain_create(gc_heap *heap) {
  /* Born in a blocking section: a collection running now need not wait for it. */
  gc_domain *d = gc_domain_new(heap, GC_DOMAIN_BLOCKING);
  if (d == NULL) {
    gc_fail(heap, GC_ERR_NOMEM, "gc_domain_create: out of memory");
    return NULL;
  }
  gc_mutex_lock(&heap->stw_lock);
  int added = gc_domain_list_add(heap, d);
  gc_mutex_unlock(&heap->stw_lock);
  if (!added) {
    free(d);
    gc_fail(heap, GC_ERR_NOMEM, "gc_domain_create: out of memory");
    return NULL;
  }
  return d;
}

gc_domain *gc_domain_spawn(gc_domain *parent) {
  gc_event_note_phase(parent, GC_EVENT_SPAWN_IDLE);
  /* Waiting for the lock inside a blocking section lets a collection claim the parent. */
  gc_enter_blocking(parent);
  gc_domain *d = gc_domain_create(parent->heap);
  gc_leave_blocking(parent);
  return d;
}

gc_error gc_domain_terminate(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (d == heap->main_domain) {
    return gc_fail(heap, GC_ERR_MAIN_DOMAIN,
                   "gc_domain_terminate: the main domain lives as long as the heap");
  }
  gc_event_note_phase(d, GC_EVENT_TERMINATE_IDLE);
  gc_enter_blocking(d);
  gc_mutex_lock(&heap->stw_lock);
  /* Its grey work to the shared lists, its counts to the shade marker's (mark.c). */
  if (gc_atomic_load_relaxed(&heap->marking)) gc_mark_retire(d); /* stw_lock held: stable */
  /* With the lock held no cycle can start, so sweeping now leaves nothing for later: the
   * orphans are swept for the current cycle (INV-ORPHAN-1). */
  gc_sweep_finish(d);
  gc_orphan_domain(d);
  gc_ephe_list_splice(&d->ephe, &heap->orphans.ephe); /* under stw_lock (INV-EPHE-3) */
  heap->retired.alloc_blocks += d->alloc_blocks;
  heap->retired.alloc_words += d->alloc_words;
  heap->retired.freed_blocks += d->freed_blocks;
  heap->retired.freed_words += d->freed_words;
  heap->retired.mark_slices += d->mark_slices;
  heap->retired.max_slice_ns = gc_time_max(d->max_slice_ns, heap->retired.max_slice_ns);
  if (d->unpaced_words) gc_atomic_fetch_add(&heap->alloc_words_since_cycle, d->unpaced_words);
  list_remove(heap, d);
  gc_mutex_unlock(&heap->stw_lock);
  free(d);
  return GC_OK;
}

void gc_enter_blocking(gc_domain *d) {
  gc_plat_point_reached(GC_PLAT_SAFEPOINT, d);
  gc_event_note_phase(d, GC_EVENT_BLOCK_IDLE);
  /* Its grey work must not wait for it: other domains' slices take it from the shared list. */
  if (gc_atomic_load_relaxed(&d->head.marking)) gc_mark_flush(d);
  gc_atomic_store(&d->state, GC_DOMAIN_BLOCKING);
}

void gc_leave_blocking(gc_domain *d) {
  /* A collection may have claimed the domain: wait until it lets the world go. */
  while (!gc_atomic_cas(&d->state, GC_DOMAIN_BLOCKING, GC_DOMAIN_RUNNING)) gc_plat_spin(d);
  /* A mark that began with one domain marks with plain stores: it must not meet this one's
   * compare-and-swaps (heap->mark_parallel). */
  if (gc_atomic_load_relaxed(&d->head.marking) && !gc_atomic_load(&d->heap->mark_parallel) &&
      gc_atomic_load(&d->heap->domain_count) > 1) {
    gc_cycle_make_mark_parallel(d);
  }
}

unsigned gc_domain_id(const gc_domain *d) { return d->id; }

void gc_domain_destroy(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_pool **lists[] = {d->avail, d->full, d->unswept_avail, d->unswept_full};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
      gc_pool *p = lists[l][c];
      while (p != NULL) {
        gc_pool *next = p->next;
        gc_pool_destroy(heap, p);
        p = next;
      }
    }
  }
  gc_large_destroy_list(d->swept_large);
  gc_large_destroy_list(d->unswept_large);
  if (d == heap->main_domain) {
    gc_spare_free(heap->cfg.pool_cache, GC_SPARE_DOMAIN, d, sizeof *d, sizeof *d);
  } else {
    free(d);
  }
}
