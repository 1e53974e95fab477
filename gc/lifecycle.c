/* The heap's lifecycle: creation, run-time parameter changes and destruction.
 *
 * The top of the collector's call graph: these functions call into every other file (domains,
 * pools, large blocks, the block index, finalizers, work buffers, pacing) and no collector file
 * calls back into them, so the files below form no call cycle through the heap's creation. Keep
 * it so: a lower file that needs something from here needs it moved down (to heap.c, the ground
 * floor) instead.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gc/blockindex.h"
#include "gc/cycle.h"
#include "gc/domain.h"
#include "gc/finalizer.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pacer.h"
#include "gc/pool.h"
#include "gc/poolcache.h"
#include "gc/poolset.h"
#include "gc/workbuf.h"

gc_heap *gc_heap_create(const gc_config *cfg) {
  gc_config config;
  if (cfg != NULL) {
    config = *cfg;
  } else {
    gc_config_default(&config);
    char err[256];
    if (gc_config_parse(&config, getenv(GC_PARAMS_ENV), err, sizeof err) != GC_OK) {
      fprintf(stderr, "gcfuzz: %s: %s\n", GC_PARAMS_ENV, err);
      return NULL;
    }
  }
  if (config.mark_stack_entries < 4 || config.pools_per_batch < 1 ||
      config.sweep_budget_words < 1 || config.mark_slice_words < 1 ||
      (config.marking != GC_MARKING_INCREMENTAL && config.marking != GC_MARKING_STW)) {
    fprintf(stderr,
            "gcfuzz: gc_heap_create: markstack >= 4, batch >= 1, sweep >= 1, markslice >= 1 "
            "and marking incremental or stw needed\n");
    return NULL;
  }

  gc_heap *heap = gc_spare_calloc(config.pool_cache, GC_SPARE_HEAP, sizeof *heap);
  if (heap == NULL) return NULL;
  heap->cfg = config;
  /* Serials tell heaps apart for the thread-local last error even when a new heap reuses a
   * destroyed one's address. (Not a scheduling point: heaps are made outside the world.) */
  static uint64_t next_serial;
  heap->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
  heap->colours = (gc_colours){GC_COLOUR_0, GC_COLOUR_1, GC_COLOUR_2};
  gc_mutex_init(&heap->stw_lock);
  gc_mutex_init(&heap->pool_lock);
  gc_mutex_init(&heap->roots_lock);
  gc_mutex_init(&heap->work.lock);
  gc_mutex_init(&heap->params_lock);
  gc_mutex_init(&heap->shade_lock);
  heap->alloc_colour = heap->colours.unmarked;
  heap->marking_mode = (uintptr_t)config.marking;
  heap->zeal = config.zeal;
  heap->created_ns = gc_plat_now_ns();
  gc_pacer_plan(heap);
  heap->swept_reported = 1; /* nothing to sweep before the first cycle */
  heap->fail_countdown = config.fail_alloc_after;
  heap->main_domain = gc_domain_new(heap, GC_DOMAIN_RUNNING);
  if (heap->main_domain == NULL || !gc_domain_list_add(heap, heap->main_domain)) {
    free(heap->main_domain);
    heap->main_domain = NULL;
    gc_heap_destroy(heap);
    return NULL;
  }
  gc_work_shape(heap, config.mark_stack_entries, 1);
  if (heap->work.arena == NULL) {
    gc_heap_destroy(heap);
    return NULL;
  }
  return heap;
}

static void destroy_pool_list(gc_heap *heap, gc_pool *p) {
  while (p != NULL) {
    gc_pool *next = p->next;
    gc_pool_destroy(heap, p);
    p = next;
  }
}

void gc_heap_destroy(gc_heap *heap) {
  if (heap == NULL) return;
  for (size_t i = 0; i < heap->domain_count; i++) gc_domain_destroy(heap->domains[i]);
  free(heap->domains);
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    destroy_pool_list(heap, heap->orphans.avail[c]);
    destroy_pool_list(heap, heap->orphans.full[c]);
  }
  gc_large_destroy_list(heap->orphans.large);
  gc_pool_unmap_free(heap);
  gc_ptr_vec_free(&heap->global_roots);
  gc_ptr_vec_free(&heap->pinned);
  gc_finalizer_free_all(heap);
  gc_pool_set_free(heap);
  gc_large_index_free(heap);
  gc_work_free(heap);
  free(heap->ranges);
  free(heap->scanners);
  gc_mutex_destroy(&heap->params_lock);
  gc_mutex_destroy(&heap->shade_lock);
  gc_mutex_destroy(&heap->work.lock);
  gc_mutex_destroy(&heap->roots_lock);
  gc_mutex_destroy(&heap->pool_lock);
  gc_mutex_destroy(&heap->stw_lock);
  gc_spare_free(heap->cfg.pool_cache, GC_SPARE_HEAP, heap, sizeof *heap, sizeof *heap);
}

/* Put `next` in force (INV-PARAM-1, heap.h). Every key gc_config_parse knows is applied here,
 * field by field: a whole-struct copy would also write the fields running domains read. */
static void apply_params(gc_heap *heap, const gc_config *next) {
  /* Read by running domains on their slow paths: relaxed atomic words. */
  gc_param_store(&heap->cfg.sweep_budget_words, next->sweep_budget_words);
  gc_param_store(&heap->cfg.heap_limit_bytes, next->heap_limit_bytes);
  gc_param_store(&heap->cfg.pools_per_batch, next->pools_per_batch);
  gc_param_store(&heap->cfg.free_pools_kept, next->free_pools_kept);
  gc_param_store(&heap->cfg.mark_slice_words, next->mark_slice_words);
  /* The mode: read when a domain starts a cycle; a cycle under way ends in the mode it began. */
  heap->cfg.marking = next->marking;
  gc_atomic_store_relaxed(&heap->marking_mode, (uintptr_t)next->marking);
  heap->cfg.zeal = next->zeal;
  gc_atomic_store_relaxed(&heap->zeal, (uintptr_t)next->zeal);
  /* Read only with the world stopped (marking, pacing, tracing, the hook points), or here. */
  heap->cfg.gc_percent = next->gc_percent;
  heap->cfg.min_trigger_words = next->min_trigger_words;
  heap->cfg.mark_stack_entries = next->mark_stack_entries; /* the work buffers: at the next mark */
  heap->cfg.fail_alloc_after = next->fail_alloc_after;
  heap->cfg.trace = next->trace;
  heap->cfg.verify = next->verify;
  heap->cfg.compact_percent = next->compact_percent;
  heap->cfg.mark_rechecks = next->mark_rechecks;       /* read in a termination stop */
  heap->cfg.mark_buf_entries = next->mark_buf_entries; /* the work buffers: at the next mark */
  gc_param_store(&heap->cfg.mark_slice_cap, next->mark_slice_cap);
  gc_pacer_plan(heap);
}

gc_error gc_set_params(gc_heap *heap, const char *params) {
  gc_mutex_lock(&heap->params_lock);
  gc_config next = heap->cfg; /* only gc_set_params writes cfg, and it holds the lock */
  /* "failafter=N" arms a countdown from now each time it is given, even with the value it had:
   * a sentinel tells whether the string set it at all. */
  next.fail_alloc_after = UINT64_MAX;
  char err[200];
  if (gc_config_parse(&next, params, err, sizeof err) != GC_OK) {
    gc_mutex_unlock(&heap->params_lock);
    return gc_fail(heap, GC_ERR_PARAM, "gc_set_params: %s", err);
  }
  if (next.fail_alloc_after == UINT64_MAX) {
    next.fail_alloc_after = heap->cfg.fail_alloc_after;
  } else {
    gc_atomic_store(&heap->fail_countdown, next.fail_alloc_after);
  }
  apply_params(heap, &next);
  gc_mutex_unlock(&heap->params_lock);
  return GC_OK;
}
