/* The perf pass: work the collector did that it should not have, from the counters it keeps
 * (gc_cycle_work in gc/heap.h, the domains' sweep counts), checked against bounds derived from
 * the heap's shape. A heap can be perfectly correct and still fail here: a cycle nobody asked
 * for, a mark stack that overflows while it could hold every block, a pool re-darkened though
 * nothing in it overflowed, a pool swept twice, a buffer split for a marker that does not exist.
 * No timing anywhere: every bound compares counts, so a finding replays exactly.
 *
 * At GC_HOOK_MARK_DONE it checks the mark just finished and why its cycle started; at
 * GC_HOOK_SWEPT each domain's sweep; called directly, both (the counters stay until the next
 * cycle or sweep replaces them).
 *
 *   perf.unpaced-cycle     INV-PACE-1      a paced start needs pacing on and the trigger reached
 *   perf.needless-overflow INV-OVERFLOW-1  an overflow needs more scanned blocks than fit
 *   perf.mark-work         INV-MARKWORK-1  fields scanned and pools re-darkened within bounds
 *   perf.lone-handoff      INV-HANDOFF-1   no handoff in a mark with one marker
 *   perf.recheck-limit     INV-RECHECK-1   a mark resumes after at most `rechecks` termination stops
 *   perf.markers           INV-MARKERS-1   an incremental mark's markers: its domains, the shade
 *                                          marker, and the domains made while it marked
 *   perf.overflow-count    INV-OVERFLOWCOUNT-1 overflow passes counted iff a push was refused,
 *                                          at most one per refused push
 *   perf.handoff-count     INV-HANDOFFCOUNT-1 handoffs the lists counted = splits givers saw
 *   perf.slice-count       INV-SLICECOUNT-1 slices counted = mark-slice hook calls
 *   perf.sweep-work        INV-SWEEPWORK-1 a sweep examines only the slots and large blocks due
 *
 * The three count witnesses compare a count its readers take (gc_get_stats, the trace line, the
 * bounds above) with a second one kept apart from it: the refused pushes each marker counts, the
 * splits each giving marker saw in its own buffer, the slice hook calls the verifier counted
 * (its record of the mark start, pass.h; called on its own, the pass checks what needs none).
 *
 * Cost: O(domains) at each point, a few comparisons; nothing walks the heap.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gc/cycle.h"
#include "gc/heap.h"
#include "invariants/pass.h"
#include "invariants/verify.h"

/* ---- The start ----------------------------------------------------------------------------- */

/* INV-PACE-1. The words come from the domains' allocation counters, not from the pacer's own
 * count, so a pacer that forgot to reset (or double-counted) is measured against what was really
 * reported to it. */
static size_t check_start(const gc_verify_run *run) {
  const gc_cycle_work *w = &run->heap->cycle_work;
  if (w->reason != GC_CYCLE_PACED) return 0;
  if (w->gc_percent == GC_PERCENT_OFF) {
    return gc_verify_state_violation(
        run, GC_VK_PERF_UNPACED_CYCLE, "the pacer (cycle start)",
        "a paced cycle started with pacing off (gc_percent off; the pacer read "
        "%zu words allocated against a trigger of %zu) (INV-PACE-1)",
        w->paced_words, w->trigger_words);
  }
  uint64_t due = w->trigger_words > w->min_trigger_words ? w->trigger_words : w->min_trigger_words;
  if (w->reported_at_start >= w->reported_at_reset &&
      w->reported_at_start - w->reported_at_reset >= due) {
    return 0;
  }
  return gc_verify_state_violation(
      run, GC_VK_PERF_UNPACED_CYCLE, "the pacer (cycle start)",
      "a paced cycle started after %lld words reported to the pacer since the last "
      "cycle (the domains' counters: %llu now, %llu at the last reset), below the "
      "trigger %zu (min_trigger_words %zu, gc_percent %d); the pacer's own count "
      "said %zu (INV-PACE-1)",
      (long long)(w->reported_at_start - w->reported_at_reset),
      (unsigned long long)w->reported_at_start, (unsigned long long)w->reported_at_reset,
      w->trigger_words, w->min_trigger_words, w->gc_percent, w->paced_words);
}

/* ---- The mark ------------------------------------------------------------------------------ */

/* INV-OVERFLOW-1: the fewest scanned blocks a mark that overflowed can have marked, less one:
 * (B - M + 1 - h')E + h', h' = min(h, B - M + 1). */
static uint64_t overflow_floor(uint64_t buffers, uint64_t entries, uint64_t markers,
                               uint64_t handoffs) {
  if (markers == 0) markers = 1;
  if (buffers + 1 < markers) return 0;
  uint64_t spare = buffers - markers + 1; /* buffers not held empty by another marker */
  uint64_t halves = handoffs < spare ? handoffs : spare;
  return (spare - halves) * entries + halves;
}

static size_t check_mark(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  const gc_cycle_work *w = &heap->cycle_work;
  const gc_mark_counts *c = &w->mark;
  size_t found = 0;
  /* Zeal overflow gave a marker no room (INV-OVERFLOW-1): its pushes overflow by design. */
  if (c->overflows > 0 && !w->overflow_zeal) {
    uint64_t floor = overflow_floor(heap->work.buf_count, heap->work.buf_entries, w->markers,
                                    w->handoffs + w->shares);
    if (c->scan_blocks_marked <= floor) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_NEEDLESS_OVERFLOW, "the mark stack",
          "the mark stack overflowed %zu time(s) in a mark of %zu scanned blocks, which fit in "
          "it: %zu buffers of %zu entries (markstack=%zu), %zu marker(s), %llu handoff(s) and "
          "%llu shared partial buffer(s) leave room for %llu entries before a push can find "
          "none (INV-OVERFLOW-1)",
          c->overflows, c->scan_blocks_marked, heap->work.buf_count, heap->work.buf_entries,
          heap->cfg.mark_stack_entries, w->markers, (unsigned long long)w->handoffs,
          (unsigned long long)w->shares, (unsigned long long)floor);
    }
  }
  uint64_t fields_bound = gc_mark_fields_bound(w);
  if (c->fields_scanned > fields_bound) {
    found += gc_verify_state_violation(
        run, GC_VK_PERF_MARK_WORK, "the marker",
        "marking scanned %zu fields in %zu block scans, above the %zu fields of "
        "the %zu scanned blocks it marked times 1 + %zu re-darkening pass(es), plus %llu words "
        "born MARKED times the passes = %llu (INV-MARKWORK-1)",
        c->fields_scanned, c->blocks_scanned, c->scan_fields_marked, c->scan_blocks_marked,
        c->redarken_passes, (unsigned long long)w->born_marked_words,
        (unsigned long long)fields_bound);
  }
  if (c->redarkened > c->flagged) {
    found += gc_verify_state_violation(
        run, GC_VK_PERF_MARK_WORK, "the marker's re-darkening",
        "re-darkening scanned %zu pools and large blocks in %zu pass(es), but "
        "refused pushes flagged only %zu of them: it rescanned what no overflow "
        "asked for (INV-MARKWORK-1)",
        c->redarkened, c->redarken_passes, c->flagged);
  }
  if (w->markers <= 1 && w->handoffs > 0) {
    found += gc_verify_state_violation(
        run, GC_VK_PERF_LONE_HANDOFF, "the mark work buffers",
        "%llu work buffer(s) split for an idle marker in a mark with %zu "
        "marker(s): there was no other marker to take them (INV-HANDOFF-1)",
        (unsigned long long)w->handoffs, w->markers);
  }
  if (w->rechecks > w->recheck_limit) {
    found += gc_verify_state_violation(
        run, GC_VK_PERF_RECHECK_LIMIT, "the incremental termination",
        "the mark resumed after %llu termination stops, but its limit allowed %llu "
        "(rechecks=%llu at its largest): a stop at the limit must finish the mark itself "
        "(INV-RECHECK-1)",
        (unsigned long long)w->rechecks, (unsigned long long)w->recheck_limit,
        (unsigned long long)w->recheck_limit);
  }
  if (w->incremental) {
    /* The ids handed out while it marked, each a domain that joined it (unsigned: wraps alike). */
    size_t joined = (unsigned)(w->domain_id_at_end - w->domain_id_at_start);
    if (w->markers != w->domains_at_start + 1 + joined) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_MARKERS, "the incremental mark's markers",
          "the mark counted %zu markers, but %zu domains began it, %zu were made while it "
          "marked (domain ids %u to %u) and the shade marker is one: %zu (INV-MARKERS-1)",
          w->markers, w->domains_at_start, joined, w->domain_id_at_start, w->domain_id_at_end,
          w->domains_at_start + 1 + joined);
    }
  }
  return found;
}

/* ---- The counts and their witnesses ------------------------------------------------------- */

/* How far a counter grew since the record: 0 and *fell set when it is below it (no wrap). */
static uint64_t growth(uint64_t now, uint64_t then, int *fell) {
  if (now < then) {
    *fell = 1;
    return 0;
  }
  return now - then;
}

/* INV-OVERFLOWCOUNT-1: the re-darkening passes against the refused pushes the markers counted,
 * each where it refused. */
static size_t check_overflow_passes(const gc_verify_run *run, uint64_t passes, uint64_t refused) {
  if ((passes > 0) == (refused > 0) && passes <= refused) return 0;
  return gc_verify_state_violation(
      run, GC_VK_PERF_OVERFLOW_COUNT, "the mark's overflow count",
      "the mark counted %llu overflow pass(es) (re-darkening) while its markers refused %llu "
      "push(es): a mark recovers from overflow iff a push was refused, at most once per refused "
      "push (INV-OVERFLOWCOUNT-1)",
      (unsigned long long)passes, (unsigned long long)refused);
}

static size_t check_counts(const gc_verify_run *run, int at_mark_done) {
  gc_heap *heap = run->heap;
  const gc_cycle_work *w = &heap->cycle_work;
  const gc_mark_counts *c = &w->mark;
  const gc_verify_mark_record *rec = run->mark_record;
  int fits = gc_verify_mark_record_fits(rec, heap, at_mark_done);
  gc_stats s;
  if (fits) gc_get_stats(heap, &s);
  size_t found = 0;

  /* Overflows: the passes the marker counted against the refusals; the statistics' growth
   * against the passes. */
  found += check_overflow_passes(run, c->redarken_passes, c->overflows);
  if (fits) {
    int fell = 0;
    uint64_t grew = growth(s.mark_overflows, rec->mark_overflows, &fell);
    if (fell || grew != c->redarken_passes) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_OVERFLOW_COUNT, "gc_stats.mark_overflows",
          "gc_stats.mark_overflows went from %llu at the mark's start to %llu at its end, but its "
          "re-darkening loop ran %zu pass(es) (INV-OVERFLOWCOUNT-1)",
          (unsigned long long)rec->mark_overflows, (unsigned long long)s.mark_overflows,
          c->redarken_passes);
    }
  }

  /* Handoffs: the lists' count against the givers'; the statistics' growth against the lists'. */
  if (w->handoffs != c->handoffs) {
    found += gc_verify_state_violation(
        run, GC_VK_PERF_HANDOFF_COUNT, "the mark's handoff count",
        "the work lists split %llu buffer(s) for other markers in this mark, but the giving "
        "markers saw %zu of their buffers split (INV-HANDOFFCOUNT-1)",
        (unsigned long long)w->handoffs, c->handoffs);
  }
  if (fits) {
    int fell = 0;
    uint64_t grew = growth(s.handoffs, rec->handoffs, &fell);
    if (fell || grew != w->handoffs) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_HANDOFF_COUNT, "gc_stats.handoffs",
          "gc_stats.handoffs went from %llu at the mark's start to %llu at its end, but the "
          "work lists split %llu buffer(s) in it (INV-HANDOFFCOUNT-1)",
          (unsigned long long)rec->handoffs, (unsigned long long)s.handoffs,
          (unsigned long long)w->handoffs);
    }
  }

  /* Slices: the statistics' and the trace's counts against the hook calls. */
  if (fits) {
    uint64_t hooks = __atomic_load_n(&rec->slices, __ATOMIC_RELAXED);
    int fell = 0;
    uint64_t grew = growth(s.mark_slices, rec->mark_slices, &fell);
    if (fell || grew != hooks) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_SLICE_COUNT, "gc_stats.mark_slices",
          "gc_stats.mark_slices went from %llu at the mark's start to %llu at its end, but the "
          "collector called the mark-slice hook %llu time(s) between them (INV-SLICECOUNT-1)",
          (unsigned long long)rec->mark_slices, (unsigned long long)s.mark_slices,
          (unsigned long long)hooks);
    }
    uint64_t traced = gc_atomic_load_relaxed(&heap->cycle_slices);
    if (w->incremental && traced != hooks) {
      found += gc_verify_state_violation(
          run, GC_VK_PERF_SLICE_COUNT, "the trace line's slices",
          "the cycle counted %llu slice(s) for its trace line, but the collector called the "
          "mark-slice hook %llu time(s) since its mark began (INV-SLICECOUNT-1)",
          (unsigned long long)traced, (unsigned long long)hooks);
    }
  }
  return found;
}

/* ---- The sweep ----------------------------------------------------------------------------- */

static size_t check_sweep(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  size_t found = 0;
  for (size_t i = 0; i < heap->domain_count; i++) {
    const gc_domain *d = heap->domains[i];
    if (d->sweep_slots_swept <= d->sweep_slots_due && d->sweep_large_swept <= d->sweep_large_due)
      continue;
    char where[48];
    snprintf(where, sizeof where, "domain %u's sweep", d->id);
    found += gc_verify_state_violation(
        run, GC_VK_PERF_SWEEP_WORK, where,
        "domain %u's sweep examined %zu slots and %zu large blocks; its pools "
        "had %zu slots below their frontiers and it had %zu large blocks when "
        "the sweep began (INV-SWEEPWORK-1)",
        d->id, d->sweep_slots_swept, d->sweep_large_swept, d->sweep_slots_due, d->sweep_large_due);
  }
  return found;
}

size_t gc_verify_perf_run(const gc_verify_run *run) {
  int mark_done = run->at_hook && run->hook == GC_HOOK_MARK_DONE;
  int swept = run->at_hook && run->hook == GC_HOOK_SWEPT;
  size_t found = 0;
  if (!swept) found += check_start(run) + check_mark(run) + check_counts(run, mark_done);
  if (!mark_done) found += check_sweep(run);
  return found;
}

size_t gc_verify_perf(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_perf_run(&run);
}
