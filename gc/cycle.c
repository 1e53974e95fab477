/* The major cycle and pacing. In both modes a cycle begins with one stop:
 *
 *   stop the world -> every domain finishes sweeping (INV-COL-1) -> [hook SWEPT if not yet] ->
 *   the leader adopts the orphans -> [hook MARK_START] -> ...
 *
 * marking=stw:  ... every stopped domain marks -> [hook MARK_DONE] -> rotate colours ->
 *               [hook CYCLED] -> the world runs; lazy sweeping resumes in each domain.
 * marking=incremental: ... the leader darkens every root, new blocks are born MARKED, the
 *               barrier is on -> the world runs; every running domain marks in slices (its
 *               allocation slow path, GC_COLLECT_SLICE) [hook MARK_SLICE after each] -> the
 *               domain that finds no grey work left stops the world: every domain's work goes
 *               to the shared lists; if any is found the world runs again (a recheck), else
 *               overflow recovery, the conservative ranges again, finalizers -> [hook MARK_DONE]
 *               -> rotate colours -> [hook CYCLED] -> the world runs; lazy sweeping.
 *
 * Pacing (pacer.h): gc_percent is the heap's size when the next mark ends, above the live heap
 * this one found; the next cycle starts a runway before that (incremental marking), so that its
 * mark ends there, never fewer than min_trigger_words after this one. GC_PERCENT_OFF disables it.
 * Sweeping never lands in the first stop: each domain's allocation pays sweep credit in
 * proportion to its pools left (sweep.c), and the domain starting a cycle finishes its own sweep
 * and those of the domains in blocking sections before it stops the world.
 */
#include "gc/cycle.h"

#include <stdio.h>

#include "gc/compact.h"
#include "gc/finalizer.h"
#include "gc/mark.h"
#include "gc/orphan.h"
#include "gc/pacer.h"
#include "gc/pool.h"
#include "gc/stw.h"
#include "gc/sweep.h"

static void rotate_colours(gc_colours *c) {
  gc_header old_garbage = c->garbage;
  c->garbage = c->unmarked;
  c->unmarked = c->marked;
  c->marked = old_garbage;
}

static void record_pause(gc_heap *heap, uint64_t ns) {
  heap->pauses++;
  heap->pause_ns[heap->pause_next] = ns;
  heap->pause_next = (heap->pause_next + 1) % GC_PAUSE_RING;
  heap->last_pause_ns = ns;
  heap->max_pause_ns = gc_time_max(ns, heap->max_pause_ns);
}

static uint64_t freed_words_total(gc_heap *heap) {
  uint64_t total = heap->retired.freed_words;
  for (size_t i = 0; i < heap->domain_count; i++) total += heap->domains[i]->freed_words;
  return total;
}

/* The trace line; its fields are documented in the README ("The trace line"). */
static void trace_cycle(gc_heap *heap, const gc_cycle_trace *t, uint64_t end_pause_ns) {
  gc_heap_stats s;
  gc_heap_sum_stats(heap, &s);
  const gc_heap_stats *before = &t->before;
  FILE *out = heap->cfg.trace_file ? heap->cfg.trace_file : stderr;
  const size_t kib = 1024 / GC_WORD_BSIZE;
  size_t trigger_words = gc_param_load(&heap->trigger_words);
  char mode[160];
  if (t->incremental) {
    snprintf(mode, sizeof mode,
             "incremental, %llu slices, %zu rechecks, start %.3f ms, end %.3f ms; ",
             (unsigned long long)heap->cycle_slices, heap->mark_rechecks,
             (double)t->start_pause_ns / 1e6, (double)end_pause_ns / 1e6);
  } else {
    mode[0] = '\0';
  }
  /* The pacer: this cycle's goal and trigger (heap words: blocks allocated and not yet freed),
   * and how far past its goal the heap was when the mark ended. */
  const gc_pacer *p = &heap->pacer;
  size_t end_words = s.pool_live_words + s.large_words;
  char pace[160];
  if (p->cycle_goal_words == SIZE_MAX) {
    snprintf(pace, sizeof pace, "goal off, at end %zu KiB", end_words / kib);
  } else {
    snprintf(pace, sizeof pace, "goal %zu KiB, trigger %zu KiB, at end %zu KiB (overshoot %+.1f%%)",
             p->cycle_goal_words / kib, p->cycle_trigger_words / kib, end_words / kib,
             100.0 * ((double)end_words - (double)p->cycle_goal_words) /
                 (double)(p->cycle_goal_words ? p->cycle_goal_words : 1));
  }
  fprintf(out,
          "gc %llu @%.3fs %zu markers: %ssweep %.3f ms, mark %.3f ms, pause %.3f ms; "
          "heap %zu->%zu KiB (pools %zu, large %zu), blocks %zu->%zu, live %zu KiB in %zu blocks, "
          "freed %llu KiB since last cycle; %s; next after %zu KiB; %llu overflows, %llu handoffs; "
          "ephemerons: %zu rounds, %zu data, %zu cleared\n",
          (unsigned long long)heap->cycles, (double)(t->end_ns - heap->created_ns) / 1e9,
          t->markers, mode, (double)t->sweep_ns / 1e6, (double)t->mark_ns / 1e6,
          (double)end_pause_ns / 1e6, (before->pool_words + before->large_words) / kib,
          (s.pool_words + s.large_words) / kib, s.pool_words / kib, s.large_words / kib,
          before->pool_live_blocks + before->large_blocks, s.pool_live_blocks + s.large_blocks,
          heap->marked_words / kib, heap->marked_blocks, (unsigned long long)(t->freed_words / kib),
          pace, trigger_words == SIZE_MAX ? 0 : trigger_words / kib,
          (unsigned long long)heap->mark_overflows,
          (unsigned long long)(heap->work.handoffs - t->handoffs_before),
          heap->ephe_work.cycle_rounds, heap->ephe_work.cycle_data, heap->ephe_work.cycle_cleared);
}

/* Every domain finishes sweeping: the caller its own and those the stop took without their
 * thread (claimed in blocking sections, held at safepoints: they cannot run), the enlisted ones
 * in parallel (their part of the program, stw.c). With `release` (the end of a full
 * collection) every empty pool then goes back to the OS (INV-SPACE-2). Then the SWEPT point,
 * which so sees what a full collection leaves. */
static void sweep_everywhere(gc_domain *leader, int release) {
  gc_heap *heap = leader->heap;
  gc_sweep_finish(leader);
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *o = heap->domains[i];
    if (o != leader && gc_domain_state_taken(gc_atomic_load(&o->state))) gc_sweep_finish(o);
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

/* Blocks and words allocated since the heap was created, every domain and the terminated ones.
 * World stopped. */
static void allocated_total(const gc_heap *heap, uint64_t *blocks, uint64_t *words) {
  *blocks = heap->retired.alloc_blocks;
  *words = heap->retired.alloc_words;
  for (size_t i = 0; i < heap->domain_count; i++) {
    *blocks += heap->domains[i]->alloc_blocks;
    *words += heap->domains[i]->alloc_words;
  }
}

/* Under the collection lock, before the stop: no cycle is marking. A domain that decided on a
 * cycle may have parked, while it waited for the lock, in another domain's stop that started
 * incremental marking: a second start would reshape the work buffers under the first one's
 * grey work. (Marking starts and ends only under this lock, so the answer holds until the
 * stop, and the read is no scheduling point: no other thread can change it meanwhile.) */
static int none_marking(gc_heap *heap) { return !gc_atomic_load_relaxed(&heap->marking); }
static int none_marking_and_paced_due(gc_heap *heap) {
  return none_marking(heap) && paced_still_due(heap);
}

/* Before a cycle stops the world: the sweeping it would otherwise find left, done with the
 * world running. d finishes its own; each domain in a blocking section is claimed, as a stop
 * claims it (INV-DOM-1: it stays outside until put back), swept by d, and put back; so is each
 * domain still parked at a safepoint since the last stop (held, as a stop holds it: its thread
 * is off a core or has not yet seen that stop end), which may have missed a whole cycle of
 * allocation slow paths and so owes its whole sweep. The collection lock keeps every stop out
 * meanwhile (d answers one while it waits for the lock). Running domains have paid their sweep
 * credit by the trigger (sweep.c); the rest of one that reached no allocation slow path since is
 * swept in the stop, by the leader (sweep_everywhere). */
static void sweep_before_the_stop(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_sweep_finish(d);
  if (gc_atomic_load(&heap->domain_count) == 1) return;
  while (!gc_mutex_trylock(&heap->stw_lock)) {
    gc_poll(d);
    gc_plat_spin(&heap->stw_lock);
  }
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *o = heap->domains[i];
    if (o == d) continue;
    if (gc_atomic_cas(&o->state, GC_DOMAIN_BLOCKING, GC_DOMAIN_CLAIMED)) {
      gc_sweep_finish(o);
      gc_atomic_store(&o->state, GC_DOMAIN_BLOCKING);
    } else if (gc_atomic_cas(&o->state, GC_DOMAIN_PARKED, GC_DOMAIN_HELD)) {
      gc_sweep_finish(o);
      gc_atomic_store(&o->state, GC_DOMAIN_PARKED);
    }
  }
  gc_mutex_unlock(&heap->stw_lock);
}

/* The first stop of a cycle, in both modes: the world stops (the parked domains run `program`),
 * every domain finishes sweeping (INV-COL-1), the leader adopts the orphans, and the heap is
 * what marking starts from (GC_HOOK_MARK_START). 0 if the cycle is no longer wanted: a paced one
 * no longer due, or another cycle marking already. */
static int begin_cycle_stop(gc_domain *d, enum gc_cycle_reason reason, int program) {
  gc_heap *heap = d->heap;
  sweep_before_the_stop(d);
  if (!gc_stw_begin(d, program,
                    reason == GC_CYCLE_PACED ? none_marking_and_paced_due : none_marking)) {
    return 0;
  }
  gc_cycle_trace *t = &heap->trace;
  *t = (gc_cycle_trace){0};
  t->start_ns = gc_plat_now_ns();
  t->handoffs_before = heap->work.handoffs;
  note_start(heap, reason);
  sweep_everywhere(d, 0);
  gc_orphan_adopt_all(d);
  gc_heap_sum_stats(heap, &t->before);
  t->freed_total = freed_words_total(heap);
  t->freed_words = t->freed_total - heap->freed_words_at_last_cycle;
  t->markers = heap->participants;
  gc_heap_call_hook(heap, GC_HOOK_MARK_START);
  t->mark_start_ns = gc_plat_now_ns();
  t->sweep_ns = t->mark_start_ns - t->start_ns;
  return 1;
}

/* Marking is over (world stopped, in both modes): rotate the colours, start sweeping, reset the
 * pacer, with the hook points on either side of the rotation. */
static void end_of_mark(gc_heap *heap) {
  gc_heap_call_hook(heap, GC_HOOK_MARK_DONE);
  rotate_colours(&heap->colours);
  heap->alloc_colour = heap->colours.unmarked;
  for (size_t i = 0; i < heap->domain_count; i++) gc_sweep_begin(heap->domains[i]);
  heap->swept_reported = 0;
  heap->cycles++;
  gc_event_note(heap, GC_EVENT_CYCLE);
  gc_pacer_mark_done(heap);
  heap->live_words_after_mark = heap->marked_words;
  gc_pacer_plan(heap);
  heap->freed_words_at_last_cycle = heap->trace.freed_total;
  gc_atomic_store(&heap->alloc_words_since_cycle, 0);
  heap->reported_words_at_reset = reported_words(heap);
  gc_heap_call_hook(heap, GC_HOOK_CYCLED);
}

/* The last stop of a cycle: the world runs again, the pause is recorded, the trace printed,
 * and the queued finalizers run on the leader. */
static void end_cycle_stop(gc_domain *d, uint64_t stop_start_ns) {
  gc_heap *heap = d->heap;
  gc_cycle_trace *t = &heap->trace;
  gc_barrier_release(&heap->barrier);
  t->end_ns = gc_plat_now_ns();
  record_pause(heap, t->end_ns - stop_start_ns);
  if (t->incremental) {
    heap->max_end_pause_ns = gc_time_max(t->end_ns - stop_start_ns, heap->max_end_pause_ns);
  } else {
    heap->max_start_pause_ns = gc_time_max(t->end_ns - stop_start_ns, heap->max_start_pause_ns);
  }
  if (heap->cfg.trace) trace_cycle(heap, t, t->end_ns - stop_start_ns);
  gc_stw_end(d);
  d->in_collection = 0;
  gc_run_finalizers(d);
}

/* A whole cycle in one stop (marking=stw): every stopped domain marks beside the leader. 0 if
 * it was refused (no longer due, or an incremental cycle marks). */
static int stw_cycle(gc_domain *d, enum gc_cycle_reason reason) {
  gc_heap *heap = d->heap;
  if (!begin_cycle_stop(d, reason, GC_STW_CYCLE)) {
    d->in_collection = 0;
    return 0;
  }
  gc_cycle_trace *t = &heap->trace;
  gc_mark_begin(heap, heap->participants);
  gc_barrier_release(&heap->barrier);
  gc_mark_domain(d, 1);
  gc_barrier_lead(&heap->barrier, heap->participants - 1);
  gc_mark_finish(heap, d);
  t->mark_ns = gc_plat_now_ns() - t->mark_start_ns;
  end_of_mark(heap);
  end_cycle_stop(d, t->start_ns);
  return 1;
}

/* Every domain's copy of the marking phase, written while they are all stopped (INV-BARRIER-1).
 * A domain's slices are paced by what it allocates from here on, not since its last cycle's. */
static void set_marking(gc_heap *heap, uintptr_t marking) {
  gc_atomic_store(&heap->marking, marking);
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *d = heap->domains[i];
    gc_atomic_store_relaxed(&d->head.marking, marking);
    d->slice_alloc_words = d->alloc_words;
    d->mark_debt_words = 0;
  }
}

/* The stop that starts incremental marking: the roots are darkened, new blocks are born MARKED
 * and stores darken what they overwrite from now on; the world then runs and marks in slices. */
static int incremental_start(gc_domain *d, enum gc_cycle_reason reason) {
  gc_heap *heap = d->heap;
  /* The leader darkens every domain's frames: the parked ones are held, not enlisted. */
  if (!begin_cycle_stop(d, reason, GC_STW_HOLD)) return 0;
  gc_cycle_trace *t = &heap->trace;
  t->incremental = 1;
  gc_mark_start_incremental(heap, d);
  heap->alloc_colour = heap->colours.marked;
  heap->mark_rechecks = 0;
  heap->cycle_work.rechecks = heap->cycle_work.recheck_limit = 0;
  heap->cycle_slices = 0;
  gc_pacer_mark_start(heap);
  allocated_total(heap, &heap->alloc_blocks_at_mark_start, &heap->alloc_words_at_mark_start);
  set_marking(heap, 1);
  gc_barrier_release(&heap->barrier);
  t->start_pause_ns = gc_plat_now_ns() - t->start_ns;
  record_pause(heap, t->start_pause_ns);
  heap->max_start_pause_ns = gc_time_max(t->start_pause_ns, heap->max_start_pause_ns);
  gc_stw_end(d);
  return 1;
}

/* The termination stop's condition: a domain that ran out of work may find, once it holds the
 * collection lock, that another domain's stop already ended marking. */
static int still_marking(gc_heap *heap) { return gc_atomic_load(&heap->marking) != 0; }

/* Termination: with the world stopped, every domain's grey work goes to the shared lists; if
 * they are empty, marking is over (overflow, conservative words and finalizers are finished in
 * this stop); otherwise the world runs again and marking resumes, at most `rechecks` times a
 * cycle (gc_config.mark_rechecks), after which this stop finishes the mark itself so that a
 * mutator that keeps storing cannot keep marking from ending. `finish`: the pacer's ceiling, the
 * stop finishes the mark whatever is left. */
static void incremental_terminate(gc_domain *d, int finish) {
  gc_heap *heap = d->heap;
  d->in_collection = 1;
  /* The leader flushes every domain's buffer and finishes the mark alone: the parked domains
   * are held, not enlisted. */
  if (!gc_stw_begin(d, GC_STW_HOLD, still_marking)) {
    d->in_collection = 0;
    return;
  }
  uint64_t stop_start_ns = gc_plat_now_ns();
  sweep_everywhere(d, 0); /* nothing is left to sweep, and nobody enlisted to wait for */
  gc_orphan_adopt_all(d); /* re-darkening walks the domains' pools (mark.c) */
  /* Zeal recheck (gc.h): a stop that could end the mark resumes it while rechecks are left. */
  int quiescent =
      gc_mark_quiescent(heap) && !(gc_atomic_load_relaxed(&heap->zeal) & GC_ZEAL_RECHECK);
  gc_cycle_work *w = &heap->cycle_work;
  if (w->recheck_limit < heap->cfg.mark_rechecks) w->recheck_limit = heap->cfg.mark_rechecks;
  if (!quiescent && heap->mark_rechecks < heap->cfg.mark_rechecks && !finish) {
    heap->mark_rechecks++;
    w->rechecks++; /* INV-RECHECK-1: counted apart from mark_rechecks, which decides */
    gc_event_note(heap, GC_EVENT_MARK_RECHECK);
    gc_barrier_release(&heap->barrier);
    record_pause(heap, gc_plat_now_ns() - stop_start_ns);
    gc_stw_end(d);
    d->in_collection = 0;
    return;
  }
  if (finish) {
    gc_event_note(heap, GC_EVENT_MARK_CEILING);
  } else if (!quiescent) {
    gc_event_note(heap, GC_EVENT_MARK_RECHECK_LIMIT);
  }
  gc_mark_finish_incremental(heap, d);
  /* Born MARKED: every block allocated since marking began counts as live. */
  uint64_t blocks, words;
  allocated_total(heap, &blocks, &words);
  heap->cycle_work.born_marked_blocks = blocks - heap->alloc_blocks_at_mark_start;
  heap->cycle_work.born_marked_words = words - heap->alloc_words_at_mark_start;
  heap->marked_blocks += heap->cycle_work.born_marked_blocks;
  heap->marked_words += heap->cycle_work.born_marked_words;
  /* Pinned while MARKED: counted with the pinned ones now (INV-MARKCOUNT-1). */
  heap->marked_blocks -= heap->mark_pinned_blocks;
  heap->marked_words -= heap->mark_pinned_words;
  heap->cycle_work.markers = heap->mark_markers;
  heap->cycle_work.domain_id_at_end = heap->next_domain_id; /* INV-MARKERS-1 */
  set_marking(heap, 0);
  gc_cycle_trace *t = &heap->trace;
  t->mark_ns = gc_plat_now_ns() - t->mark_start_ns;
  t->markers = heap->mark_markers - 1;
  end_of_mark(heap);
  end_cycle_stop(d, stop_start_ns);
}

/* The stop's condition: marking, with plain stores still (no other domain made it parallel). */
static int marking_alone(gc_heap *heap) {
  return gc_atomic_load(&heap->marking) != 0 && gc_atomic_load(&heap->mark_parallel) == 0;
}

void gc_cycle_make_mark_parallel(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (d->in_collection) return;
  d->in_collection = 1;
  if (gc_stw_begin(d, GC_STW_HOLD, marking_alone)) {
    uint64_t start_ns = gc_plat_now_ns();
    sweep_everywhere(d, 0); /* nothing to sweep while marking, and nobody enlisted */
    gc_mark_set_parallel(heap, 1);
    gc_barrier_release(&heap->barrier);
    record_pause(heap, gc_plat_now_ns() - start_ns);
    gc_stw_end(d);
  }
  d->in_collection = 0;
}

static int incremental_mode(gc_heap *heap) {
  return gc_atomic_load_relaxed(&heap->marking_mode) == GC_MARKING_INCREMENTAL;
}

/* A slice's budget is at most slicecap (gc_config.mark_slice_cap, 32 by default) times markslice:
 * an allocation of megabytes is paid for over several slices (the domain's mark debt), not by one
 * that stalls its mutator for the whole mark. */
static uint64_t slice_cap_words(gc_heap *heap) {
  size_t slice_words = gc_param_load(&heap->cfg.mark_slice_words);
  size_t factor = gc_param_load(&heap->cfg.mark_slice_cap);
  return slice_words <= UINT64_MAX / factor ? (uint64_t)slice_words * factor : UINT64_MAX;
}

/* One slice of marking on d and its accounting, without termination: the part of a mark step
 * that is no safepoint. *others_slicing: another domain was in a slice when this one ended. */
static int mark_slice_only(gc_domain *d, size_t budget_words, int *others_slicing) {
  gc_heap *heap = d->heap;
  gc_plat_point_reached(GC_PLAT_MARK, d);
  d->in_collection = 1;
  gc_atomic_fetch_add(&heap->work.slicing, 1);
  uint64_t start_ns = gc_plat_now_ns();
  const gc_mark_counts *c = &d->marker.counts;
  size_t work_before = c->fields_scanned + c->blocks_scanned;
  int more = gc_mark_slice(d, budget_words);
  d->max_slice_ns = gc_time_max(gc_plat_now_ns() - start_ns, d->max_slice_ns);
  /* The debt falls by the work done, not by the budget: a slice that found no grey work (another
   * domain's slice held it) still owes it, and pays it at its next slices. */
  size_t done_words = c->fields_scanned + c->blocks_scanned - work_before;
  gc_pacer_note_mark_work(heap, done_words);
  d->mark_debt_words -= d->mark_debt_words < done_words ? d->mark_debt_words : done_words;
  /* Out of work while another domain is in a slice: that one ends with its leftover shared, or
   * out of work too and then it tries; stopping the world now would find its work and only
   * resume (a recheck for every handover of the last buffer between two domains). */
  *others_slicing = gc_atomic_fetch_sub(&heap->work.slicing, 1) != 1;
  d->mark_slices++;
  gc_event_note(d->heap, GC_EVENT_MARK_SLICE);
  gc_atomic_add_relaxed(&heap->cycle_slices, 1);
  gc_heap_call_slice_hook(d);
  d->in_collection = 0;
  return more;
}

int gc_cycle_mark_step(gc_domain *d, size_t budget_words) {
  gc_heap *heap = d->heap;
  if (budget_words == 0) {
    /* Paced by allocation (an assist): the words allocated since the last slice owe mark work
     * at the pacer's ratio (pacer.h), paid markslice to slicecap markslices at a time. */
    size_t slice_words = gc_param_load(&heap->cfg.mark_slice_words);
    uint64_t allocated = d->alloc_words - d->slice_alloc_words;
    uint64_t owed = gc_pacer_assist_words(heap, allocated);
    d->mark_debt_words =
        owed <= UINT64_MAX - d->mark_debt_words ? d->mark_debt_words + owed : UINT64_MAX;
    uint64_t cap = slice_cap_words(heap);
    uint64_t budget = d->mark_debt_words < slice_words ? slice_words : d->mark_debt_words;
    if (budget > cap) budget = cap;
    budget_words = budget <= SIZE_MAX ? (size_t)budget : SIZE_MAX;
  }
  d->slice_alloc_words = d->alloc_words;
  int others_slicing;
  int more = mark_slice_only(d, budget_words, &others_slicing);
  if (!more && !others_slicing) incremental_terminate(d, 0);
  return more || !others_slicing;
}

void gc_cycle_store_slice(gc_domain *d) {
  int others_slicing;
  (void)mark_slice_only(d, gc_param_load(&d->heap->cfg.mark_slice_words), &others_slicing);
}

/* Mark on d until this cycle's marking is over (other domains may end it meanwhile). */
static void finish_marking(gc_domain *d) {
  while (gc_atomic_load_relaxed(&d->head.marking)) {
    if (!gc_cycle_mark_step(d, SIZE_MAX)) {
      gc_poll(d); /* out of work, others still slicing: answer their stops meanwhile */
      gc_plat_spin(d->heap);
    }
  }
}

/* Start a cycle in the heap's mode: the first stop only (incremental), or a whole cycle (stw).
 * 0 if it did not start (see begin_cycle_stop). */
static int start_cycle(gc_domain *d, enum gc_cycle_reason reason) {
  d->in_collection = 1;
  int started;
  if (incremental_mode(d->heap)) {
    started = incremental_start(d, reason);
    d->in_collection = 0;
  } else {
    started = stw_cycle(d, reason); /* which resets in_collection */
  }
  return started;
}

void gc_cycle_start(gc_domain *d, enum gc_cycle_reason reason) {
  if (d->in_collection || gc_atomic_load_relaxed(&d->head.marking)) return;
  start_cycle(d, reason);
}

void gc_major_cycle(gc_domain *d, enum gc_cycle_reason reason) {
  if (d->in_collection) return;
  finish_marking(d); /* a cycle from now: the one under way first */
  if (incremental_mode(d->heap)) {
    /* Refused if another domain started marking meanwhile: that cycle began after this call,
     * so finishing it is a whole cycle from now too. */
    d->in_collection = 1;
    incremental_start(d, reason);
    d->in_collection = 0;
    finish_marking(d);
  } else {
    /* Refused if no longer due (paced), or if another domain began an incremental cycle
     * meanwhile (the mode changed): finish that one, then run this one. */
    for (;;) {
      d->in_collection = 1;
      if (stw_cycle(d, reason) || reason == GC_CYCLE_PACED) break;
      finish_marking(d);
    }
  }
}

/* Stop the world only to finish every domain's sweeping and give the empty pools back (the end
 * of a full collection); with `may_compact` (a full collection the embedder asked for, never an
 * allocation's), compact in the same stop when the `compact` parameter says so. */
static void sweep_cycle(gc_domain *d, int may_compact) {
  gc_heap *heap = d->heap;
  if (d->in_collection) return;
  d->in_collection = 1;
  gc_stw_begin(d, GC_STW_SWEEP, NULL);
  uint64_t start_ns = gc_plat_now_ns();
  sweep_everywhere(d, 1);
  if (may_compact && gc_compact_wanted(heap)) gc_compact_stopped(d);
  gc_barrier_release(&heap->barrier);
  record_pause(heap, gc_plat_now_ns() - start_ns);
  gc_stw_end(d);
  d->in_collection = 0;
}

size_t gc_cycle_report(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (d->unpaced_words == 0) return gc_atomic_load_relaxed(&heap->alloc_words_since_cycle);
  size_t total =
      gc_atomic_fetch_add(&heap->alloc_words_since_cycle, d->unpaced_words) + d->unpaced_words;
  d->unpaced_words = 0;
  return total;
}

/* Add what d allocated since its last report to the heap's count; 1 if a cycle is due. */
int gc_cycle_due(gc_domain *d) {
  return gc_cycle_report(d) >= gc_param_load(&d->heap->trigger_words);
}

void gc_cycle_assist(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_event_note(heap, GC_EVENT_MARK_ASSIST);
  gc_cycle_report(d);
  if (gc_pacer_at_ceiling(heap)) {
    incremental_terminate(d, 1);
    return;
  }
  gc_cycle_mark_step(d, 0);
  /* A debt beyond one capped slice: the domain allocates faster than marking advances (its
   * slices found no grey work, another domain's slice held it). It waits for work and pays
   * before it allocates on, as Go's assists do, so the goal holds (the ceiling is the last
   * resort). Out of work with no other domain slicing, the step tries termination itself. */
  uint64_t cap = slice_cap_words(heap);
  while (d->mark_debt_words > cap && gc_atomic_load_relaxed(&d->head.marking) &&
         !gc_pacer_at_ceiling(heap)) {
    if (!gc_cycle_mark_step(d, (size_t)cap)) {
      gc_poll(d);
      gc_plat_spin(heap);
    }
  }
}

void gc_cycle_collect(gc_domain *d, gc_collect_kind kind, enum gc_cycle_reason reason) {
  if (d->in_collection) return; /* from a finalizer or hook: refused, nothing to undo */
  switch (kind) {
    case GC_COLLECT_SLICE:
      gc_poll(d);
      if (gc_atomic_load_relaxed(&d->head.marking)) {
        gc_cycle_mark_step(d, gc_param_load(&d->heap->cfg.mark_slice_words));
      } else if (gc_cycle_due(d)) {
        gc_cycle_start(d, GC_CYCLE_PACED);
      } else {
        gc_sweep_slice(d, gc_param_load(&d->heap->cfg.sweep_budget_words));
      }
      break;
    case GC_COLLECT_START: gc_cycle_start(d, reason); break;
    case GC_COLLECT_MAJOR: gc_major_cycle(d, reason); break;
    case GC_COLLECT_FULL:
      gc_major_cycle(d, reason);
      /* An allocation's forced collection never moves: its caller holds values in C variables
       * across it (gc.h, gc_compact). */
      sweep_cycle(d, reason == GC_CYCLE_FORCED);
      break;
  }
}

size_t gc_run_finalizers(gc_domain *d) {
  if (!gc_finalizers_enter(d)) return 0;
  size_t ran = 0;
  while (gc_finalizer_run_next(d)) {
    ran++;
    /* Zeal finalizer (gc.h): a whole cycle after each finalizer, from inside the loop, with its
     * block no longer a root (what the finalizer returned from is what the embedder was
     * promised): the cycle finds the rest of the queue queued and may queue more. */
    if (gc_atomic_load_relaxed(&d->heap->zeal) & GC_ZEAL_FINALIZER) {
      gc_cycle_collect(d, GC_COLLECT_MAJOR, GC_CYCLE_FORCED);
    }
  }
  gc_finalizers_leave(d);
  return ran;
}

gc_error gc_compact(gc_domain *d) {
  gc_heap *heap = d->heap;
  if (d->in_collection) {
    return gc_fail(heap, GC_ERR_IN_COLLECTION, "gc_compact: called inside a collection");
  }
  /* An incremental mark under way is finished first (the moves need a swept heap); refused if
   * another domain starts marking before the stop: finish that one too. */
  for (;;) {
    finish_marking(d);
    d->in_collection = 1;
    if (gc_stw_begin(d, GC_STW_SWEEP, none_marking)) break;
    d->in_collection = 0;
  }
  uint64_t start_ns = gc_plat_now_ns();
  sweep_everywhere(d, 1);
  int ok = gc_compact_stopped(d);
  gc_barrier_release(&heap->barrier);
  record_pause(heap, gc_plat_now_ns() - start_ns);
  gc_stw_end(d);
  d->in_collection = 0;
  return ok ? GC_OK : gc_fail(heap, GC_ERR_NOMEM, "gc_compact: no memory for its tables");
}

void gc_collect(gc_domain *d, gc_collect_kind kind) {
  /* From a hook: refused and recorded, as gc.h's errors are (the collector's own calls from
   * inside a collection are refused in gc_cycle_collect without a word). */
  if (d->in_collection) {
    gc_fail(d->heap, GC_ERR_IN_COLLECTION, "gc_collect: called from inside a collection (a hook)");
    return;
  }
  gc_cycle_collect(d, kind, GC_CYCLE_FORCED);
}
