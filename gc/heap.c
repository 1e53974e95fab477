/* The heap's ground floor: errors, statistics, accessors and the verification hook. Every other
 * collector file calls these, so this file calls none of them: creation and destruction, which
 * call everything, live above the rest in lifecycle.c. */
#include "gc/heap.h"

#include <stdio.h>
#include <string.h>

#include "gc/pool_layout.h"

/* ---- Accessors ---- */

gc_domain *gc_main_domain(gc_heap *heap) { return heap->main_domain; }
gc_heap *gc_domain_heap(gc_domain *d) { return d->heap; }
const gc_config *gc_heap_config(const gc_heap *heap) { return &heap->cfg; }

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
    case GC_ERR_IN_COLLECTION: return "in-collection";
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
  out->pool_max_words = heap->pool_max_words;
  out->pool_live_words = s.pool_live_words;
  out->pool_live_blocks = s.pool_live_blocks;
  out->pool_frag_words = s.pool_frag_words;
  out->large_words = s.large_words;
  out->large_max_words = gc_atomic_load_relaxed(&heap->large_max_words);
  out->large_blocks = s.large_blocks;
  out->cycles = heap->cycles;
  out->alloc_blocks = heap->retired.alloc_blocks;
  out->alloc_words = heap->retired.alloc_words;
  out->freed_blocks = heap->retired.freed_blocks;
  out->freed_words = heap->retired.freed_words;
  out->mark_slices = heap->retired.mark_slices;
  out->max_slice_ns = heap->retired.max_slice_ns;
  for (size_t i = 0; i < heap->domain_count; i++) {
    const gc_domain *d = heap->domains[i];
    out->mark_slices += d->mark_slices;
    out->max_slice_ns = gc_time_max(d->max_slice_ns, out->max_slice_ns);
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
  /* The one running counts as queued until it returns and counts as run: a collection from
   * inside it (a finalizer's own, or zeal's) must not see run + queued fall by one. */
  out->finalizers_queued = heap->finq.count - heap->finq_head + (heap->fin_running != 0);
  out->finalizers_run = heap->finalizers_run;
  out->free_pools = heap->free_pool_count;
  out->os_pool_bytes = (uint64_t)heap->mapped_pool_count * GC_POOL_BSIZE;
  out->pauses = heap->pauses;
  out->last_pause_ns = heap->last_pause_ns;
  out->max_pause_ns = heap->max_pause_ns;
  out->max_start_pause_ns = heap->max_start_pause_ns;
  out->max_end_pause_ns = heap->max_end_pause_ns;
  out->ephemerons = heap->orphans.ephe.ephemerons;
  out->weak_refs = heap->orphans.ephe.weak_refs;
  for (size_t i = 0; i < heap->domain_count; i++) {
    out->ephemerons += heap->domains[i]->ephe.ephemerons;
    out->weak_refs += heap->domains[i]->ephe.weak_refs;
  }
  out->ephe_rounds = heap->ephe_work.rounds;
  out->ephe_data = heap->ephe_work.data;
  out->weak_cleared = heap->ephe_work.cleared;
  out->compactions = heap->compact.count;
  out->compact_moved_blocks = heap->compact.moved_blocks;
  out->compact_moved_words = heap->compact.moved_words;
  out->compact_pools_released = heap->compact.released_pools;
}

size_t gc_pause_history(gc_heap *heap, uint64_t *out, size_t max) {
  size_t have = heap->pauses < GC_PAUSE_RING ? (size_t)heap->pauses : GC_PAUSE_RING;
  size_t n = have < max ? have : max;
  if (n == 0) return 0;
  /* The ring's oldest entry is at pause_next once it has wrapped, at 0 before. */
  size_t first = (heap->pause_next + GC_PAUSE_RING - have) % GC_PAUSE_RING;
  /* The newest n of them: at most two runs of the ring, copied whole (the verifier reads the
   * history at every sweep end). */
  size_t from = (first + have - n) % GC_PAUSE_RING;
  size_t run = n < GC_PAUSE_RING - from ? n : GC_PAUSE_RING - from;
  memcpy(out, &heap->pause_ns[from], run * sizeof *out);
  memcpy(out + run, &heap->pause_ns[0], (n - run) * sizeof *out);
  return n;
}

/* ---- Hooks and names ---- */

void gc_set_hook(gc_heap *heap, gc_hook_fn fn, void *user) {
  heap->hook = fn;
  heap->hook_user = user;
}

/* Thread-local: several domains end slices at once, each on its own thread. */
static __thread gc_domain *slice_hook_domain;

void gc_heap_call_slice_hook(gc_domain *d) {
  /* The world runs: only the hook itself, not gc_heap_call_hook's warning, whose flag and the
   * verify mask it reads are guarded by stw_lock. */
  gc_heap *heap = d->heap;
  if (heap->hook == NULL) return;
  slice_hook_domain = d;
  heap->hook(heap, GC_HOOK_MARK_SLICE, heap->hook_user);
  slice_hook_domain = NULL;
}

gc_domain *gc_heap_hook_domain(const gc_heap *heap) {
  gc_domain *d = slice_hook_domain;
  return d != NULL && d->heap == heap ? d : NULL;
}

void gc_heap_call_hook(gc_heap *heap, gc_hook_point point) {
  if (heap->hook != NULL) {
    heap->hook(heap, point, heap->hook_user);
    return;
  }
  /* The passes live in invariants/, above the collector: a verify mask without them installed
   * would silently check nothing. Hook points run with stw_lock held, which guards the flag. */
  if (heap->cfg.verify != 0 && !heap->warned_no_verifier) {
    heap->warned_no_verifier = 1;
    fprintf(stderr,
            "gcfuzz: verify= asks for verification passes (mask 0x%x), but this heap has no "
            "verifier installed, so none runs. Install one after gc_heap_create with "
            "gc_verify_install(heap, GC_VERIFY_ABORT) from invariants/verify.h (Bazel: "
            "//invariants), or drop verify= from the parameters. (Said once per heap.)\n",
            heap->cfg.verify);
  }
}

const char *gc_colour_name(const gc_heap *heap, gc_header colour) {
  if (colour == GC_NOT_MARKABLE) return "NOT_MARKABLE";
  if (colour == heap->colours.unmarked) return "UNMARKED";
  if (colour == heap->colours.marked) return "MARKED";
  return "GARBAGE";
}

const char *gc_hd_describe(gc_header hd, char *buf, size_t buf_len) {
  unsigned tag = gc_hd_tag(hd);
  const char *kind = tag <= GC_TAG_SCAN_MAX    ? "scan"
                     : tag == GC_TAG_RAW       ? "raw"
                     : tag == GC_TAG_EPHEMERON ? "ephemeron"
                     : tag == GC_TAG_WEAK      ? "weak"
                     : tag == GC_TAG_CUSTOM    ? "custom"
                                               : "invalid";
  snprintf(buf, buf_len, "0x%llx (wsize=%zu tag=%s(%u) colour=%u)", (unsigned long long)hd,
           gc_hd_wsize(hd), kind, tag, (unsigned)(gc_hd_colour(hd) >> GC_HD_COLOUR_SHIFT));
  return buf;
}
