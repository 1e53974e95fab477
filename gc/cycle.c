/* The major cycle and pacing.
 *
 *   stop the world -> every domain finishes sweeping (INV-COL-1) -> [hook SWEPT if not yet] ->
 *   the leader adopts the orphans -> every stopped domain marks -> [hook MARK_DONE] ->
 *   rotate colours -> [hook CYCLED] -> the world runs; lazy sweeping resumes in each domain.
 *
 * Pacing is GOGC-like: the next cycle starts once the domains have allocated gc_percent% of the
 * words marked live by this one (never fewer than min_trigger_words); GC_PERCENT_OFF disables it.
 */
#include "gc/cycle.h"

#include <stdio.h>

#include "gc/mark.h"
#include "gc/orphan.h"
#include "gc/pool.h"
#include "gc/stw.h"
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
  /* The maximum without a branch: a time decides no branch of the collector, so a fuzz target's
   * runs of one input take the same edges however long each pause took (a ternary is a branch
   * once UBSan checks each arm's load). */
  uint64_t max = heap->max_pause_ns;
  uint64_t grew = (uint64_t)(ns > max) * UINT64_MAX; /* all ones when it grew; no wrap (OSS-Fuzz's
                                                      * UBSan set reports -1u as one) */
  heap->max_pause_ns = (ns & grew) | (max & ~grew);
}

static uint64_t freed_words_total(gc_heap *heap) {
  uint64_t total = heap->retired.freed_words;
  for (size_t i = 0; i < heap->domain_count; i++) total += heap->domains[i]->freed_words;
  return total;
}

/* The times of one cycle, for the trace line. */
typedef struct cycle_times {
  uint64_t start_ns, marked_ns, end_ns; /* world stopped at start_ns, running again at end_ns */
  uint64_t sweep_ns, mark_ns;           /* finishing the sweep; marking */
  uint64_t handoffs_before;
} cycle_times;

/* The trace line; its fields are documented in the README ("The trace line"). */
static void trace_cycle(gc_heap *heap, const cycle_times *t, const gc_heap_stats *before,
                        uint64_t freed_words) {
  gc_heap_stats s;
  gc_heap_sum_stats(heap, &s);
  FILE *out = heap->cfg.trace_file ? heap->cfg.trace_file : stderr;
  const size_t kib = 1024 / GC_WORD_BSIZE;
  size_t trigger_words = gc_param_load(&heap->trigger_words);
  fprintf(out,
          "gc %llu @%.3fs %zu markers: sweep %.3f ms, mark %.3f ms, pause %.3f ms; "
          "heap %zu->%zu KiB (pools %zu, large %zu), blocks %zu->%zu, live %zu KiB in %zu blocks, "
          "freed %llu KiB since last cycle; next after %zu KiB; %llu overflows, %llu handoffs\n",
          (unsigned long long)heap->cycles, (double)(t->end_ns - heap->created_ns) / 1e9,
          heap->participants, (double)t->sweep_ns / 1e6, (double)t->mark_ns / 1e6,
          (double)(t->end_ns - t->start_ns) / 1e6, (before->pool_words + before->large_words) / kib,
          (s.pool_words + s.large_words) / kib, s.pool_words / kib, s.large_words / kib,
          before->pool_live_blocks + before->large_blocks, s.pool_live_blocks + s.large_blocks,
          heap->marked_words / kib, heap->marked_blocks, (unsigned long long)(freed_words / kib),
          trigger_words == SIZE_MAX ? 0 : trigger_words / kib,
          (unsigned long long)heap->mark_overflows,
          (unsigned long long)(heap->work.handoffs - t->handoffs_before));
}

/* Every domain finishes sweeping: the caller its own and those in blocking sections (they cannot
 * run), the enlisted ones in parallel (gc_cycle_participate). With `release` (the end of a full
 * collection) every empty pool then goes back to the OS (INV-SPACE-2). Then the SWEPT point,
 * which so sees what a full collection leaves. */
static void sweep_everywhere(gc_domain *leader, int release) {
  gc_heap *heap = leader->heap;
  gc_sweep_finish(leader);
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *o = heap->domains[i];
    if (gc_atomic_load(&o->state) == GC_DOMAIN_CLAIMED) gc_sweep_finish(o);
  }
  gc_barrier_lead(&heap->barrier, heap->participants - 1);
  if (release) gc_pool_unmap_free(heap);
  if (!heap->swept_reported) {
    heap->swept_reported = 1;
    heap->full_release = release;
    gc_heap_call_hook(heap, GC_HOOK_SWEPT);
    heap->full_release = 0;
  }
}

void gc_cycle_participate(gc_domain *d, int program) {
  gc_heap *heap = d->heap;
  gc_sweep_finish(d);
  gc_barrier_follow(&heap->barrier);
  if (program == GC_STW_SWEEP) return;
  gc_mark_domain(d, 0);
  gc_barrier_follow(&heap->barrier);
}

/* Under the collection lock, before the stop: the paced cycle a domain decided on is still due.
 * It is not when another domain's cycle ran while this one waited for the lock (the waiter parks
 * and marks in it), which reset the count: running a second cycle then would collect a heap
 * that has allocated next to nothing since. */
static int paced_still_due(gc_heap *heap) {
  gc_cycle_work *s = &heap->pace_decision;
  /* The pacing parameters change under params_lock (INV-PARAM-1): read them as one state. */
  gc_mutex_lock(&heap->params_lock);
  s->paced_words = gc_atomic_load_relaxed(&heap->alloc_words_since_cycle);
  s->trigger_words = gc_param_load(&heap->trigger_words);
  s->min_trigger_words = heap->cfg.min_trigger_words;
  s->gc_percent = heap->cfg.gc_percent;
  gc_mutex_unlock(&heap->params_lock);
  return s->paced_words >= s->trigger_words;
}

/* Words reported to the pacer since the heap was created, from the domains' own counters
 * (INV-PACE-1): what alloc_words_since_cycle has counted since each reset, summed. World
 * stopped. */
static uint64_t reported_words(const gc_heap *heap) {
  uint64_t total = heap->retired.alloc_words; /* a terminating domain reports what it had left */
  for (size_t i = 0; i < heap->domain_count; i++) {
    total += heap->domains[i]->alloc_words - heap->domains[i]->unpaced_words;
  }
  return total;
}

/* What starts this cycle, for the perf pass: the reason, the pacer's view when it decided. */
static void note_start(gc_heap *heap, enum gc_cycle_reason reason) {
  gc_cycle_work *w = &heap->cycle_work;
  if (reason == GC_CYCLE_PACED) {
    *w = heap->pace_decision;
  } else {
    *w = (gc_cycle_work){0};
  }
  w->reason = reason;
  w->reported_at_reset = heap->reported_words_at_reset;
  w->reported_at_start = reported_words(heap);
}

void gc_major_cycle(gc_domain *d, enum gc_cycle_reason reason) {
  gc_heap *heap = d->heap;
  if (d->in_collection) return;
  d->in_collection = 1;
  cycle_times t = {0};
  if (!gc_stw_begin(d, GC_STW_CYCLE, reason == GC_CYCLE_PACED ? paced_still_due : NULL)) {
    d->in_collection = 0;
    return;
  }
  t.start_ns = gc_plat_now_ns();
  t.handoffs_before = heap->work.handoffs;
  note_start(heap, reason);

  sweep_everywhere(d, 0);
  gc_orphan_adopt_all(d);
  gc_heap_stats before;
  gc_heap_sum_stats(heap, &before);
  uint64_t freed_total = freed_words_total(heap);
  uint64_t freed_words = freed_total - heap->freed_words_at_last_cycle;
  gc_mark_begin(heap, heap->participants);
  uint64_t mark_start_ns = gc_plat_now_ns();
  t.sweep_ns = mark_start_ns - t.start_ns;
  gc_barrier_release(&heap->barrier);

  gc_mark_domain(d, 1);
  gc_barrier_lead(&heap->barrier, heap->participants - 1);
  gc_mark_finish(heap, d);
  t.mark_ns = gc_plat_now_ns() - mark_start_ns;
  gc_heap_call_hook(heap, GC_HOOK_MARK_DONE);

  rotate_colours(&heap->colours);
  for (size_t i = 0; i < heap->domain_count; i++) gc_sweep_begin(heap->domains[i]);
  heap->swept_reported = 0;
  heap->cycles++;
  heap->live_words_after_mark = heap->marked_words;
  gc_param_store(&heap->trigger_words, gc_cycle_trigger_words(heap));
  heap->freed_words_at_last_cycle = freed_total;
  gc_atomic_store(&heap->alloc_words_since_cycle, 0);
  heap->reported_words_at_reset = reported_words(heap);
  gc_heap_call_hook(heap, GC_HOOK_CYCLED);
  gc_barrier_release(&heap->barrier);

  t.end_ns = gc_plat_now_ns();
  record_pause(heap, t.end_ns - t.start_ns);
  if (heap->cfg.trace) trace_cycle(heap, &t, &before, freed_words);
  gc_stw_end(d);
  d->in_collection = 0;
  gc_run_finalizers(d);
}

/* Stop the world only to finish every domain's sweeping and give the empty pools back (the end
 * of a full collection). */
static void sweep_cycle(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (d->in_collection) return;
  d->in_collection = 1;
  gc_stw_begin(d, GC_STW_SWEEP, NULL);
  sweep_everywhere(d, 1);
  gc_barrier_release(&heap->barrier);
  gc_stw_end(d);
  d->in_collection = 0;
}

/* Add what d allocated since its last report to the heap's count; 1 if a cycle is due. */
int gc_cycle_due(gc_domain *d) {
  gc_heap *heap = d->heap;
  size_t total;
  if (d->unpaced_words != 0) {
    total =
        gc_atomic_fetch_add(&heap->alloc_words_since_cycle, d->unpaced_words) + d->unpaced_words;
    d->unpaced_words = 0;
  } else {
    total = gc_atomic_load_relaxed(&heap->alloc_words_since_cycle);
  }
  return total >= gc_param_load(&heap->trigger_words);
}

void gc_cycle_collect(gc_domain *d, gc_collect_kind kind, enum gc_cycle_reason reason) {
  if (d->in_collection) return; /* from a finalizer or hook: refused, nothing to undo */
  switch (kind) {
    case GC_COLLECT_SLICE:
      gc_poll(d);
      if (gc_cycle_due(d)) {
        gc_major_cycle(d, GC_CYCLE_PACED);
      } else {
        gc_sweep_slice(d, gc_param_load(&d->heap->cfg.sweep_budget_words));
      }
      break;
    case GC_COLLECT_MAJOR: gc_major_cycle(d, reason); break;
    case GC_COLLECT_FULL:
      gc_major_cycle(d, reason);
      sweep_cycle(d);
      break;
  }
}

void gc_collect(gc_domain *d, gc_collect_kind kind) { gc_cycle_collect(d, kind, GC_CYCLE_FORCED); }
