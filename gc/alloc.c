/* Allocation. The fast path pops the first free slot of the domain's first avail pool of the
 * block's class; everything else (sweeping for a pool, a new pool, pacing, large blocks, limits,
 * injected failure, misuse) is on slow paths. */
#include "gc/alloc.h"

#include <string.h>

#include "gc/cycle.h"
#include "gc/large.h"
#include "gc/orphan.h"
#include "gc/pool.h"
#include "gc/stw.h"
#include "gc/sweep.h"
#include "gc/zeal.h"

static inline gc_header *pop_free_slot(gc_domain *d, gc_sizeclass c) {
  gc_pool *p = d->avail[c];
  if (p == NULL) return NULL;
  gc_header *hp = p->free_list;
  if (hp != NULL) {
    p->free_list = (gc_header *)hp[1];
  } else {
    hp = p->frontier; /* an avail pool without a free slot has an unused one */
    p->frontier = hp + gc_wsize_of_class[c];
  }
  if (gc_pool_is_full(p)) { /* INV-POOL-2 */
    d->avail[c] = p->next;
    p->next = d->full[c];
    d->full[c] = p;
  }
  return hp;
}

/* Allocation is a safepoint: a cycle may start here, before the new block exists, so every
 * block the mutator holds is in a root. */
static void alloc_safepoint(gc_domain *d) {
  gc_poll(d);
  if (gc_atomic_load_relaxed(&d->head.marking)) {
    if (!d->in_collection) gc_cycle_assist(d);
  } else if (gc_cycle_due(d) && !d->in_collection) {
    gc_cycle_start(d, GC_CYCLE_PACED);
  } else if (d->sweeping) {
    gc_sweep_pay(d, gc_param_load(&d->heap->cfg.sweep_budget_words));
  }
}

static int limit_allows(gc_heap *heap, size_t more_bytes) {
  size_t limit_bytes = gc_param_load(&heap->cfg.heap_limit_bytes);
  return limit_bytes == 0 || gc_heap_used_bytes(heap) + more_bytes <= limit_bytes;
}

static gc_header *alloc_small_slow(gc_domain *d, gc_sizeclass c) {
  gc_heap *heap = d->heap;
  alloc_safepoint(d);
  gc_sweep_for_class(d, c);
  gc_header *hp = pop_free_slot(d, c);
  if (hp != NULL) return hp;
  uint64_t looked = UINT64_MAX;
  if (gc_orphan_adopt_pool(d, c, &looked)) return pop_free_slot(d, c);
  if (!limit_allows(heap, GC_POOL_BSIZE)) return NULL;
  gc_pool *p = gc_pool_acquire(heap, c, looked);
  if (p == NULL) return NULL;
  gc_heap_account_bytes(heap, GC_POOL_BSIZE);
  gc_pool_init(p, c, d);
  gc_heap_stats *s = &d->stats;
  s->pool_words += GC_POOL_WSIZE;
  if (s->pool_words > s->pool_max_words) s->pool_max_words = s->pool_words;
  s->pool_frag_words += GC_POOL_HEADER_WSIZE + gc_wastage_of_class[c];
  d->avail[c] = p;
  return pop_free_slot(d, c);
}

static inline void count_small_block(gc_domain *d, gc_sizeclass c, size_t whsize) {
  gc_heap_stats *s = &d->stats;
  s->pool_live_blocks++;
  s->pool_live_words += whsize;
  s->pool_frag_words += gc_wsize_of_class[c] - whsize;
}

/* One attempt at a slot or large block of `whsize` words; NULL when none can be had now. */
static gc_header *try_alloc(gc_domain *d, size_t whsize) {
  if (whsize <= GC_SIZECLASS_MAX_WHSIZE) {
    gc_sizeclass c = gc_class_of_whsize[whsize];
    gc_header *hp = pop_free_slot(d, c);
    if (hp == NULL) hp = alloc_small_slow(d, c);
    if (hp != NULL) count_small_block(d, c, whsize);
    return hp;
  }
  alloc_safepoint(d);
  if (!limit_allows(d->heap, gc_bsize_wsize(whsize + GC_LARGE_HEADER_WSIZE))) return NULL;
  return gc_large_alloc(d, whsize);
}

/* No memory now: one forced collection, then one more try. */
static gc_header *alloc_after_collection(gc_domain *d, size_t whsize) {
  enum gc_cycle_reason why = gc_param_load(&d->heap->cfg.heap_limit_bytes) != 0
                                 ? GC_CYCLE_HEAP_LIMIT
                                 : GC_CYCLE_ALLOC_FAILURE;
  if (!d->in_collection) gc_cycle_collect(d, GC_COLLECT_FULL, why);
  return try_alloc(d, whsize);
}

static gc_value alloc_failed(gc_domain *d, size_t wsize, const char *why) {
  gc_heap *heap = d->heap;
  gc_atomic_fetch_add(&heap->alloc_failures, 1);
  gc_fail(heap, GC_ERR_NOMEM, "gc_alloc: no memory for a block of %zu words (%s)", wsize, why);
  return 0;
}

/* Write the header and clear the fields. The loop is kept a loop (no_builtin): most blocks are a
 * few words, where a call to memset costs more than the stores. */
__attribute__((no_builtin("memset"))) static inline gc_value init_block(gc_domain *d, gc_header *hp,
                                                                        size_t wsize,
                                                                        unsigned tag) {
  /* UNMARKED, or MARKED while a cycle marks beside the mutators (born MARKED: INV-BARRIER-1).
   * The header is stored atomically: a marker may read it as soon as a gc_store publishes the
   * block (relaxed: the marker needs the header's value only; it never scans a block born
   * MARKED, so the zeroed fields below publish nothing to it). */
  gc_atomic_store_relaxed(hp, gc_hd_make(wsize, d->heap->alloc_colour, tag));
  for (size_t i = 1; i <= wsize; i++) hp[i] = 0;
  size_t whsize = wsize + 1;
  d->alloc_blocks++;
  d->alloc_words += whsize;
  d->unpaced_words += whsize;
  return gc_val_hp(hp);
}

/* Counts an armed injected failure down; 1 for the allocation that must fail (exactly one, even
 * with several domains counting). */
static int injected_failure_due(gc_heap *heap) {
  uintptr_t n = gc_atomic_load_relaxed(&heap->fail_countdown);
  while (n != 0) {
    if (gc_atomic_cas(&heap->fail_countdown, n, n - 1)) return n == 1;
    n = gc_atomic_load_relaxed(&heap->fail_countdown);
  }
  return 0;
}

/* Zeal modes that act at every allocation (gc.h): they send each one down the slow path. */
enum { ZEAL_ON_ALLOCATION = GC_ZEAL_SLICE | GC_ZEAL_CYCLE | GC_ZEAL_DOMAINS };

/* The collector's step a zeal mode asks of every allocation, before the block is taken. */
static void zeal_step(gc_domain *d, unsigned zeal) {
  if (zeal & GC_ZEAL_DOMAINS) gc_zeal_domains(d);
  if (!(zeal & (GC_ZEAL_SLICE | GC_ZEAL_CYCLE))) return;
  if (gc_atomic_load_relaxed(&d->head.marking)) {
    if (zeal & GC_ZEAL_SLICE) gc_cycle_collect(d, GC_COLLECT_SLICE, GC_CYCLE_FORCED);
  } else if (zeal & GC_ZEAL_CYCLE) {
    gc_cycle_collect(d, GC_COLLECT_START, GC_CYCLE_FORCED);
  } else {
    gc_cycle_collect(d, GC_COLLECT_SLICE, GC_CYCLE_FORCED);
  }
}

/* Everything but a small block from a non-empty avail pool. */
__attribute__((noinline)) static gc_value alloc_block_slow(gc_domain *d, size_t wsize,
                                                           unsigned tag) {
  gc_heap *heap = d->heap;
  size_t whsize = wsize + 1;
  if (injected_failure_due(heap)) {
    if (!d->in_collection) gc_cycle_collect(d, GC_COLLECT_FULL, GC_CYCLE_ALLOC_FAILURE);
    return alloc_failed(d, wsize, "injected failure");
  }
  unsigned zeal = (unsigned)gc_atomic_load_relaxed(&heap->zeal);
  if ((zeal & ZEAL_ON_ALLOCATION) && !d->in_collection) zeal_step(d, zeal);
  gc_header *hp = try_alloc(d, whsize);
  if (hp == NULL) {
    hp = alloc_after_collection(d, whsize);
    if (hp == NULL) {
      return alloc_failed(
          d, wsize, gc_param_load(&heap->cfg.heap_limit_bytes) ? "heap limit" : "out of memory");
    }
  }
  return init_block(d, hp, wsize, tag);
}

/* The fast path: a free slot of the block's class, no failure injection armed. */
static inline gc_value alloc_block(gc_domain *d, size_t wsize, unsigned tag) {
  size_t whsize = wsize + 1;
  gc_heap *heap = d->heap;
  if (whsize <= GC_SIZECLASS_MAX_WHSIZE &&
      (gc_atomic_load_relaxed(&heap->fail_countdown) |
       (gc_atomic_load_relaxed(&heap->zeal) & ZEAL_ON_ALLOCATION)) == 0) {
    gc_sizeclass c = gc_class_of_whsize[whsize];
    gc_header *hp = pop_free_slot(d, c);
    if (hp != NULL) {
      count_small_block(d, c, whsize);
      return init_block(d, hp, wsize, tag);
    }
  }
  return alloc_block_slow(d, wsize, tag);
}

static gc_value alloc_misuse(gc_domain *d, size_t wsize, unsigned tag) {
  gc_heap *heap = d->heap;
  if (wsize == 0) {
    gc_fail(heap, GC_ERR_ZERO_SIZE, "gc_alloc: a block needs at least 1 field (wsize 0)");
  } else if (wsize > GC_MAX_WSIZE) {
    gc_fail(heap, GC_ERR_TOO_LARGE, "gc_alloc: wsize %zu exceeds the maximum %zu", wsize,
            (size_t)GC_MAX_WSIZE);
  } else if (tag == GC_TAG_CUSTOM) {
    gc_fail(heap, GC_ERR_BAD_TAG, "gc_alloc: custom blocks are made by gc_alloc_custom");
  } else {
    gc_fail(heap, GC_ERR_BAD_TAG, "gc_alloc: tag %u is not a scanned (0..%d), raw (%d) tag", tag,
            GC_TAG_SCAN_MAX, GC_TAG_RAW);
  }
  return 0;
}

gc_value gc_alloc(gc_domain *d, size_t wsize, unsigned tag) {
  if (__builtin_expect(wsize == 0 || wsize > GC_MAX_WSIZE, 0)) return alloc_misuse(d, wsize, tag);
  if (__builtin_expect(tag > GC_TAG_SCAN_MAX && tag != GC_TAG_RAW, 0)) {
    return alloc_misuse(d, wsize, tag);
  }
  return alloc_block(d, wsize, tag);
}

gc_value gc_alloc_custom(gc_domain *d, size_t data_wsize, gc_finalize_fn fn) {
  if (data_wsize >= GC_MAX_WSIZE) {
    /* Not through alloc_misuse with data_wsize + 1: SIZE_MAX + 1 wraps to 0, a zero-size
     * refusal for a request far too large. */
    gc_fail(d->heap, GC_ERR_TOO_LARGE,
            "gc_alloc_custom: %zu data words exceed the maximum %zu (with the function word)",
            data_wsize, (size_t)GC_MAX_WSIZE - 1);
    return 0;
  }
  gc_value v = alloc_block(d, data_wsize + 1, GC_TAG_CUSTOM);
  if (v != 0) memcpy((void *)v, &fn, sizeof fn);
  return v;
}

gc_value gc_alloc_weak_block(gc_domain *d, size_t wsize, unsigned tag) {
  return alloc_block(d, wsize, tag);
}

size_t gc_wsize(gc_value v) { return gc_is_block(v) ? gc_hd_wsize(gc_hd_val(v)) : 0; }

unsigned gc_tag(gc_value v) { return gc_is_block(v) ? gc_hd_tag(gc_hd_val(v)) : 0; }
