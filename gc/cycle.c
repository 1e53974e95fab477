/* The major cycle and pacing.
 *
 *   finish sweeping (INV-COL-1) -> mark from the roots -> [hook MARK_DONE] -> rotate colours ->
 *   [hook CYCLED] -> lazy sweeping resumes in the domain's allocation slow paths.
 *
 * Pacing is GOGC-like: the next cycle starts once the domain has allocated gc_percent% of the
 * words marked live by this one (never fewer than min_trigger_words); GC_PERCENT_OFF disables it.
 */
#include "gc/cycle.h"

#include <stdio.h>

#include "gc/mark.h"
#include "gc/pool.h"
#include "gc/sweep.h"

static void rotate_colours(gc_colours *c) {
  gc_header old_garbage = c->garbage;
  c->garbage = c->unmarked;
  c->unmarked = c->marked;
  c->marked = old_garbage;
}

size_t gc_cycle_trigger_words(const gc_heap *heap) {
  if (heap->cfg.gc_percent == GC_PERCENT_OFF) return SIZE_MAX;
  size_t grow = heap->live_words_after_mark / 100 * (size_t)heap->cfg.gc_percent;
  return grow > heap->cfg.min_trigger_words ? grow : heap->cfg.min_trigger_words;
}

static void record_pause(gc_heap *heap, uint64_t ns) {
  heap->pause_ns[heap->pause_next] = ns;
  heap->pause_next = (heap->pause_next + 1) % GC_PAUSE_RING;
  heap->last_pause_ns = ns;
  if (ns > heap->max_pause_ns) heap->max_pause_ns = ns;
}

/* The trace line; its fields are documented in the README ("The trace line"). */
static void trace_cycle(gc_heap *heap, uint64_t now_ns, uint64_t sweep_tail_ns, uint64_t mark_ns,
                        uint64_t pause_ns, uint64_t freed_words) {
  gc_heap_stats s;
  gc_heap_sum_stats(heap, &s);
  FILE *out = heap->cfg.trace_file ? heap->cfg.trace_file : stderr;
  const size_t kib = 1024 / GC_WORD_BSIZE;
  fprintf(out,
          "gc %llu @%.3fs: sweep-tail %.3f ms, mark %.3f ms, pause %.3f ms; "
          "heap %zu KiB (pools %zu, large %zu), live %zu KiB in %zu blocks, "
          "freed %llu KiB since last cycle; next after %zu KiB; %llu overflows\n",
          (unsigned long long)heap->cycles, (double)(now_ns - heap->created_ns) / 1e9,
          (double)sweep_tail_ns / 1e6, (double)mark_ns / 1e6, (double)pause_ns / 1e6,
          (s.pool_words + s.large_words) / kib, s.pool_words / kib, s.large_words / kib,
          heap->marked_words / kib, heap->marked_blocks, (unsigned long long)(freed_words / kib),
          heap->trigger_words == SIZE_MAX ? 0 : heap->trigger_words / kib,
          (unsigned long long)heap->mark_overflows);
}

void gc_major_cycle(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (heap->in_collection) return;
  heap->in_collection = 1;

  uint64_t start_ns = gc_plat_now_ns();
  gc_sweep_finish(d);
  uint64_t mark_start_ns = gc_plat_now_ns();
  uint64_t freed_words = d->freed_words - heap->freed_words_at_last_cycle;

  gc_mark_heap(heap);
  gc_heap_call_hook(heap, GC_HOOK_MARK_DONE);
  uint64_t mark_ns = gc_plat_now_ns() - mark_start_ns;

  rotate_colours(&heap->colours);
  gc_sweep_begin(d);
  heap->cycles++;
  heap->live_words_after_mark = heap->marked_words;
  heap->trigger_words = gc_cycle_trigger_words(heap);
  heap->freed_words_at_last_cycle = d->freed_words;
  d->alloc_words_since_cycle = 0;

  uint64_t end_ns = gc_plat_now_ns();
  record_pause(heap, end_ns - mark_start_ns);
  gc_heap_call_hook(heap, GC_HOOK_CYCLED);
  if (heap->cfg.trace) {
    trace_cycle(heap, end_ns, mark_start_ns - start_ns, mark_ns, end_ns - mark_start_ns,
                freed_words);
  }
  heap->in_collection = 0;
  gc_run_finalizers(d);
}

void gc_collect(gc_domain *d, gc_collect_kind kind) {
  gc_heap *heap = d->heap;
  if (heap->in_collection) return; /* from a finalizer or hook: refused, nothing to undo */
  switch (kind) {
    case GC_COLLECT_SLICE:
      if (d->alloc_words_since_cycle >= heap->trigger_words) {
        gc_major_cycle(d);
      } else {
        gc_sweep_slice(d, heap->cfg.sweep_budget_words);
      }
      break;
    case GC_COLLECT_MAJOR:
      gc_major_cycle(d);
      break;
    case GC_COLLECT_FULL:
      gc_major_cycle(d);
      gc_sweep_finish(d);
      gc_pool_unmap_free(heap);
      break;
  }
}
