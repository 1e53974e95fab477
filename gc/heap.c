/* The heap object: creation, destruction, errors, statistics, parameters and hooks. */
#include "gc/heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/blockindex.h"
#include "gc/cycle.h"
#include "gc/domain.h"
#include "gc/finalizer.h"
#include "gc/large.h"
#include "gc/mark.h"
#include "gc/pool.h"
#include "gc/poolcache.h"
#include "gc/workbuf.h"

/* ---- Creation and destruction ---- */

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
      config.sweep_budget_words < 1) {
    fprintf(stderr, "gcfuzz: gc_heap_create: markstack >= 4, batch >= 1 and sweep >= 1 needed\n");
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
  heap->created_ns = gc_plat_now_ns();
  heap->trigger_words = gc_cycle_trigger_words(heap);
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
  gc_mutex_destroy(&heap->work.lock);
  gc_mutex_destroy(&heap->roots_lock);
  gc_mutex_destroy(&heap->pool_lock);
  gc_mutex_destroy(&heap->stw_lock);
  gc_spare_free(heap->cfg.pool_cache, GC_SPARE_HEAP, heap, sizeof *heap);
}

gc_domain *gc_main_domain(gc_heap *heap) { return heap->main_domain; }
gc_heap *gc_domain_heap(gc_domain *d) { return d->heap; }
const gc_config *gc_heap_config(const gc_heap *heap) { return &heap->cfg; }

gc_error gc_set_params(gc_heap *heap, const char *params) {
  gc_config next = heap->cfg;
  /* "failafter=N" arms a countdown from now each time it is given, even with the value it had:
   * a sentinel tells whether the string set it at all. */
  next.fail_alloc_after = UINT64_MAX;
  char err[200];
  if (gc_config_parse(&next, params, err, sizeof err) != GC_OK) {
    return gc_fail(heap, GC_ERR_PARAM, "gc_set_params: %s", err);
  }
  if (next.fail_alloc_after == UINT64_MAX) {
    next.fail_alloc_after = heap->cfg.fail_alloc_after;
  } else {
    gc_atomic_store(&heap->fail_countdown, next.fail_alloc_after);
  }
  heap->cfg = next; /* the work buffers take the new mark stack size at the next mark */
  heap->trigger_words = gc_cycle_trigger_words(heap);
  return GC_OK;
}

/* ---- Errors ---- */

/* The calling thread's last error (gc.h: like errno). Thread-local rather than in the heap: two
 * domains failing at once must not see each other's error, and recording one takes no lock. */
static __thread struct {
  uint64_t heap_serial; /* gc_heap.serial of the heap it is for; 0: none */
  gc_error err;
  char msg[256];
} last_error;

gc_error gc_fail(gc_heap *heap, gc_error err, const char *fmt, ...) {
  last_error.heap_serial = heap->serial;
  last_error.err = err;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error.msg, sizeof last_error.msg, fmt, ap);
  va_end(ap);
  return err;
}

gc_error gc_last_error(const gc_heap *heap) {
  return last_error.heap_serial == heap->serial ? last_error.err : GC_OK;
}

const char *gc_last_error_message(const gc_heap *heap) {
  return gc_last_error(heap) == GC_OK ? "" : last_error.msg;
}

void gc_clear_error(gc_heap *heap) {
  if (last_error.heap_serial != heap->serial) return;
  last_error.err = GC_OK;
  last_error.msg[0] = '\0';
}

const char *gc_error_name(gc_error err) {
  switch (err) {
    case GC_OK: return "ok";
    case GC_ERR_NOMEM: return "nomem";
    case GC_ERR_ZERO_SIZE: return "zero-size";
    case GC_ERR_TOO_LARGE: return "too-large";
    case GC_ERR_BAD_TAG: return "bad-tag";
    case GC_ERR_UNKNOWN_ROOT: return "unknown-root";
    case GC_ERR_DUP_ROOT: return "duplicate-root";
    case GC_ERR_FRAME_ORDER: return "frame-order";
    case GC_ERR_PARAM: return "param";
    case GC_ERR_NOT_BLOCK: return "not-block";
    case GC_ERR_NO_FINALIZER: return "no-finalizer";
    case GC_ERR_UNKNOWN_RANGE: return "unknown-range";
    case GC_ERR_MAIN_DOMAIN: return "main-domain";
  }
  return "unknown-error";
}

/* ---- Statistics ---- */

void gc_heap_stats_add(gc_heap_stats *acc, const gc_heap_stats *s) {
  acc->pool_words += s->pool_words;
  acc->pool_max_words += s->pool_max_words;
  acc->pool_live_words += s->pool_live_words;
  acc->pool_live_blocks += s->pool_live_blocks;
  acc->pool_frag_words += s->pool_frag_words;
  acc->large_words += s->large_words;
  acc->large_max_words += s->large_max_words;
  acc->large_blocks += s->large_blocks;
}

void gc_heap_sum_stats(gc_heap *heap, gc_heap_stats *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < heap->domain_count; i++) gc_heap_stats_add(out, &heap->domains[i]->stats);
  gc_heap_stats_add(out, &heap->orphans.stats);
}

void gc_get_stats(gc_heap *heap, gc_stats *out) {
  gc_heap_stats s;
  gc_heap_sum_stats(heap, &s);
  memset(out, 0, sizeof *out);
  out->pool_words = s.pool_words;
  out->pool_max_words = s.pool_max_words;
  out->pool_live_words = s.pool_live_words;
  out->pool_live_blocks = s.pool_live_blocks;
  out->pool_frag_words = s.pool_frag_words;
  out->large_words = s.large_words;
  out->large_max_words = s.large_max_words;
  out->large_blocks = s.large_blocks;
  out->cycles = heap->cycles;
  out->alloc_blocks = heap->retired.alloc_blocks;
  out->alloc_words = heap->retired.alloc_words;
  out->freed_blocks = heap->retired.freed_blocks;
  out->freed_words = heap->retired.freed_words;
  for (size_t i = 0; i < heap->domain_count; i++) {
    const gc_domain *d = heap->domains[i];
    out->alloc_blocks += d->alloc_blocks;
    out->alloc_words += d->alloc_words;
    out->freed_blocks += d->freed_blocks;
    out->freed_words += d->freed_words;
  }
  out->alloc_failures = gc_atomic_load_relaxed(&heap->alloc_failures);
  out->domains = heap->domain_count;
  out->handoffs = heap->work.handoffs;
  out->orphan_pool_words = heap->orphans.stats.pool_words;
  out->mark_overflows = heap->mark_overflows;
  out->finalizers = heap->finalizers.count;
  out->finalizers_queued = heap->finq.count - heap->finq_head;
  out->finalizers_run = heap->finalizers_run;
  out->free_pools = heap->free_pool_count;
  out->os_pool_bytes = (uint64_t)heap->mapped_pool_count * GC_POOL_BSIZE;
  out->last_pause_ns = heap->last_pause_ns;
  out->max_pause_ns = heap->max_pause_ns;
}

size_t gc_pause_history(gc_heap *heap, uint64_t *out, size_t max) {
  size_t have = heap->cycles < GC_PAUSE_RING ? (size_t)heap->cycles : GC_PAUSE_RING;
  size_t n = have < max ? have : max;
  /* The ring's oldest entry is at pause_next once it has wrapped, at 0 before. */
  size_t first = (heap->pause_next + GC_PAUSE_RING - have) % GC_PAUSE_RING;
  for (size_t i = 0; i < n; i++) out[i] = heap->pause_ns[(first + have - n + i) % GC_PAUSE_RING];
  return n;
}

/* ---- Hooks and names ---- */

void gc_set_hook(gc_heap *heap, gc_hook_fn fn, void *user) {
  heap->hook = fn;
  heap->hook_user = user;
}

void gc_heap_call_hook(gc_heap *heap, gc_hook_point point) {
  if (heap->hook != NULL) heap->hook(heap, point, heap->hook_user);
}

const char *gc_colour_name(const gc_heap *heap, gc_header colour) {
  if (colour == GC_NOT_MARKABLE) return "NOT_MARKABLE";
  if (colour == heap->colours.unmarked) return "UNMARKED";
  if (colour == heap->colours.marked) return "MARKED";
  return "GARBAGE";
}

const char *gc_hd_describe(gc_header hd, char *buf, size_t buf_len) {
  unsigned tag = gc_hd_tag(hd);
  const char *kind = tag <= GC_TAG_SCAN_MAX ? "scan" : tag == GC_TAG_RAW ? "raw"
                     : tag == GC_TAG_CUSTOM ? "custom" : "invalid";
  snprintf(buf, buf_len, "0x%llx (wsize=%zu tag=%s(%u) colour=%u)", (unsigned long long)hd,
           gc_hd_wsize(hd), kind, tag, (unsigned)(gc_hd_colour(hd) >> GC_HD_COLOUR_SHIFT));
  return buf;
}
