/* The pacer (see pacer.h for the goal, the trigger and the assists, and INV-PACE-2 in heap.h).
 *
 * Every figure is a count of words, never a time: a fuzz target's runs of one input take the
 * same path however fast the machine is, and the trigger a cycle started at can be checked
 * (INV-PACE-1) from the domains' own counters. The "mark rate" of the design is therefore mark
 * work per allocated word: marking runs only in the mutators' own slices, paid for by what they
 * allocate, so the ratio of the two rates is the ratio of the two counts.
 */
#include "gc/pacer.h"

#include "gc/cycle.h"

/* The assist ratio the first incremental mark is planned with (words of mark work per word
 * allocated; cons/mark starts at its inverse), and the bounds of every ratio after it. Above 2
 * (what a slice paid before the pacer): a shorter runway means less allocated while marking,
 * which is also less born MARKED and so less floating garbage in the next goal's `kept`; a
 * slice is capped anyway (slicecap, cycle.c), so a high ratio costs no long stall. */
#define GC_PACER_START_RATIO 32
#define GC_PACER_MIN_RATIO   2
/* The longest runway: a mark planned at fewer than this many words of work per allocated word
 * lets the mutators allocate so much while it runs (all of it born MARKED, so kept by the next
 * goal) that the next trigger falls to min_trigger_words and marking never stops. */
#define GC_PACER_RUNWAY_RATIO 8
#define GC_PACER_MAX_RATIO    64
/* The ceiling: marking still unfinished when the heap has grown this share of its goal past it
 * ends in one stop (Go's hard goal is the same 10%). */
#define GC_PACER_CEILING_DIVISOR 10

/* x * num / den without overflow for the figures here (x below 2^48 words, num below 2^17). */
static size_t scale(size_t x, size_t num, size_t den) {
  return x / den * num + x % den * num / den;
}

static size_t clamp(size_t x, size_t lo, size_t hi) { return x < lo ? lo : x > hi ? hi : x; }

void gc_pacer_mark_done(gc_heap *heap) {
  gc_pacer *p = &heap->pacer;
  const gc_cycle_work *w = &heap->cycle_work;
  size_t born_words = (size_t)w->born_marked_words;
  size_t scan_words = w->mark.fields_scanned + w->mark.blocks_scanned;
  /* The plan this cycle ran under, for the trace line, before the next replaces it. */
  size_t goal = gc_param_load(&p->goal_alloc_words);
  size_t trigger = gc_param_load(&heap->trigger_words);
  p->cycle_goal_words = goal == SIZE_MAX ? SIZE_MAX : p->kept_words + goal;
  p->cycle_trigger_words = trigger == SIZE_MAX ? SIZE_MAX : p->kept_words + trigger;
  /* cons/mark from the marks the pacer ran: a forced mark (gc_collect) marks in a loop without
   * allocating, which says nothing of the mutators' rate. Never below the start ratio's: while
   * assists alone mark, the measure is the ratio the pacer asked for, and letting it fall would
   * walk the runway down to the maximum ratio's for no gain; above it, it is what the mutators
   * allocated beyond the plan (slices capped, debts carried, domains that mark less than they
   * allocate), and the next runway makes room for it. */
  if (heap->trace.incremental && w->reason == GC_CYCLE_PACED && scan_words != 0) {
    size_t measured = clamp(scale(born_words, 1024, scan_words), 1024 / GC_PACER_START_RATIO,
                            1024 / GC_PACER_RUNWAY_RATIO);
    p->cons_mark_x1024 = (p->cons_mark_x1024 + measured) / 2;
  }
  p->kept_words = heap->marked_words;
  /* What the markers reached: the count less the blocks born MARKED, plus the ones pinned while
   * MARKED, which a marker (or their birth) counted before they left the count (INV-MARKCOUNT-1;
   * a born block may be among those, so the count alone may be below born_words). */
  p->reached_words = heap->marked_words + heap->mark_pinned_words - born_words;
  p->scan_words = scan_words;
}

/* The mark work the next mark is expected to do. Before the first mark nothing was measured:
 * everything allocated so far may be live, so the first cycle's work is its trigger's words. */
static size_t expected_work(const gc_heap *heap, size_t first_estimate) {
  return heap->cycles == 0 ? first_estimate : heap->pacer.scan_words;
}

void gc_pacer_plan(gc_heap *heap) {
  gc_pacer *p = &heap->pacer;
  if (p->cons_mark_x1024 == 0) p->cons_mark_x1024 = 1024 / GC_PACER_START_RATIO; /* no mark yet */
  if (heap->cfg.gc_percent == GC_PERCENT_OFF) {
    p->runway_words = 0;
    gc_param_store(&p->goal_alloc_words, SIZE_MAX);
    gc_param_store(&heap->trigger_words, SIZE_MAX);
    return;
  }
  size_t goal_words = scale(p->reached_words, 100 + (size_t)heap->cfg.gc_percent, 100);
  size_t goal_alloc = goal_words > p->kept_words ? goal_words - p->kept_words : 0;
  size_t runway = 0;
  if (gc_atomic_load_relaxed(&heap->marking_mode) == GC_MARKING_INCREMENTAL) {
    size_t min_trigger = heap->cfg.min_trigger_words;
    runway = scale(expected_work(heap, min_trigger), p->cons_mark_x1024, 1024);
  }
  size_t trigger = goal_alloc > runway ? goal_alloc - runway : 0;
  if (trigger < heap->cfg.min_trigger_words) trigger = heap->cfg.min_trigger_words;
  if (goal_alloc < trigger + runway) goal_alloc = trigger + runway; /* the floor moves it up */
  p->runway_words = runway;
  gc_param_store(&p->goal_alloc_words, goal_alloc);
  gc_param_store(&heap->trigger_words, trigger);
}

void gc_pacer_mark_start(gc_heap *heap) {
  gc_atomic_store_relaxed(&heap->pacer.mark_work_words, 0);
}

void gc_pacer_note_mark_work(gc_heap *heap, size_t words) {
  gc_atomic_add_relaxed(&heap->pacer.mark_work_words, words);
}

uint64_t gc_pacer_assist_words(gc_heap *heap, uint64_t allocated_words) {
  gc_pacer *p = &heap->pacer;
  size_t now = gc_atomic_load_relaxed(&heap->alloc_words_since_cycle);
  size_t expected = expected_work(heap, now); /* written only with the world stopped */
  size_t done = gc_atomic_load_relaxed(&p->mark_work_words);
  /* A mark that outgrew the last one's work still has some left: at least an eighth of it, so
   * the ratio climbs as the goal nears instead of falling to the minimum. */
  size_t remaining = expected > done ? expected - done : 0;
  if (remaining < expected / 8) remaining = expected / 8;
  size_t goal = gc_param_load(&p->goal_alloc_words);
  size_t left = goal > now ? goal - now : 1;
  size_t ratio_x1024 = clamp(left == SIZE_MAX ? 0 : scale(remaining, 1024, left),
                             GC_PACER_MIN_RATIO * 1024, GC_PACER_MAX_RATIO * 1024);
  if (allocated_words > UINT64_MAX / ratio_x1024) return UINT64_MAX;
  return allocated_words * ratio_x1024 / 1024;
}

int gc_pacer_at_ceiling(gc_heap *heap) {
  gc_pacer *p = &heap->pacer;
  size_t goal = gc_param_load(&p->goal_alloc_words);
  if (goal == SIZE_MAX) return 0;
  size_t slack = (p->kept_words + goal) / GC_PACER_CEILING_DIVISOR;
  return gc_atomic_load_relaxed(&heap->alloc_words_since_cycle) >= goal + slack;
}
