/* `misuse in-collection` (see in_collection.h): the collector's entry points from its own hook. */
#include "fuzz/driver/in_collection.h"

#include <stdio.h>

#include "fuzz/driver/verdict.h"
#include "gc/heap.h" /* the domain's re-entrancy guard */
#include "invariants/verify.h"

/* What a refused call must leave as it was: every rare event (a cycle, a mark or sweep slice,
 * a compaction, a finalizer run) and the counts no event covers (stops, blocks made and freed). */
typedef struct heap_counts {
  uint64_t events[GC_EVENT_COUNT];
  uint64_t cycles, pauses, mark_slices, compactions, alloc_blocks, freed_blocks, finalizers_run;
} heap_counts;

static void take_counts(gc_heap *heap, heap_counts *c) {
  for (int e = 0; e < GC_EVENT_COUNT; e++) c->events[e] = gc_event_count(heap, (gc_event)e);
  gc_stats s;
  gc_get_stats(heap, &s);
  c->cycles = s.cycles;
  c->pauses = s.pauses;
  c->mark_slices = s.mark_slices;
  c->compactions = s.compactions;
  c->alloc_blocks = s.alloc_blocks;
  c->freed_blocks = s.freed_blocks;
  c->finalizers_run = s.finalizers_run;
}

/* The first count that differs, by name, or NULL. */
static const char *changed_count(const heap_counts *a, const heap_counts *b) {
  for (int e = 0; e < GC_EVENT_COUNT; e++) {
    if (a->events[e] != b->events[e]) return gc_event_name((gc_event)e);
  }
  if (a->cycles != b->cycles) return "cycles";
  if (a->pauses != b->pauses) return "pauses";
  if (a->mark_slices != b->mark_slices) return "mark_slices";
  if (a->compactions != b->compactions) return "compactions";
  if (a->alloc_blocks != b->alloc_blocks) return "alloc_blocks";
  if (a->freed_blocks != b->freed_blocks) return "freed_blocks";
  if (a->finalizers_run != b->finalizers_run) return "finalizers_run";
  return NULL;
}

static const char *point_name(gc_hook_point point) {
  return gc_verify_point_id_name((gc_verify_point_id)point);
}

/* A refused call changed something the heap counts. */
static void expect_unchanged(driver *d, const mutator *m, const heap_counts *before,
                             const char *call, gc_hook_point point) {
  heap_counts after;
  take_counts(d->heap, &after);
  drv_check_made(d);
  const char *what = changed_count(before, &after);
  if (what != NULL) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "%s from the %s hook (armed by op %ld) must be refused, yet it changed %s", call,
                  point_name(point), d->in_collection_op, what);
  }
}

static const struct {
  gc_collect_kind kind;
  const char *call;
} collects[] = {
    {GC_COLLECT_SLICE, "gc_collect(GC_COLLECT_SLICE)"},
    {GC_COLLECT_START, "gc_collect(GC_COLLECT_START)"},
    {GC_COLLECT_MAJOR, "gc_collect(GC_COLLECT_MAJOR)"},
    {GC_COLLECT_FULL, "gc_collect(GC_COLLECT_FULL)"},
};

void drv_in_collection_arm(driver *d, const mutator *m) {
  /* One thread only. On threads the hook runs on whichever domain's thread leads the stop or
   * ends a slice, and a refusal that failed would collect from inside another domain's op: the
   * schedule target gives the op no meaning. */
  if (d->opt->threads != FUZZ_ONE_THREAD) return;
  d->in_collection_armed = 1;
  d->in_collection_op = m->op != NULL ? (long)m->op->index : -1;
}

/* gc.h: from a hook, whatever would collect is refused (GC_ERR_IN_COLLECTION). That holds only
 * while the domain the hook runs on is inside its collection's re-entrancy guard, at every point,
 * whoever reports it: a point reported outside the guard (as the lazy sweep's end once was) lets
 * a call from the hook start a collection, or wait forever for the lock its own thread holds. So
 * every program checks the guard at every point, armed or not, and finds that bug as a report
 * rather than as a hang of the calls below. One thread: the collecting domain is m's. */
static void check_guard(driver *d, const mutator *m, gc_hook_point point) {
  if (d->opt->threads != FUZZ_ONE_THREAD || m == NULL || m->dom == NULL) return;
  if (m->dom->in_collection) return;
  drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                "the %s hook ran on d%d outside its collection's re-entrancy guard: a "
                "collection asked for from this hook would not be refused (gc.h)",
                point_name(point), m->on);
}

void drv_in_collection_at_hook(driver *d, const mutator *m, gc_hook_point point) {
  check_guard(d, m, point);
  if (!d->in_collection_armed || m == NULL || m->dom == NULL) return;
  /* Every point, SWEPT included: with one domain the collector also reports it from the
   * domain's own lazy sweep (gc/sweep.c, sweep_done), with the collection lock held, where
   * gc_compact and gc_collect once waited for that lock forever instead of refusing. */
  /* One thread: the collecting domain is the one this thread runs. */
  gc_domain *dom = m->dom;
  char call[96];
  heap_counts before;
  take_counts(d->heap, &before);
  snprintf(call, sizeof call, "gc_compact from the %s hook", point_name(point));
  drv_expect_error(d, m, gc_compact(dom), GC_ERR_IN_COLLECTION, call);
  expect_unchanged(d, m, &before, "gc_compact", point);
  for (size_t k = 0; k < sizeof collects / sizeof collects[0]; k++) {
    take_counts(d->heap, &before);
    gc_clear_error(d->heap); /* the error must be this call's */
    gc_collect(dom, collects[k].kind);
    snprintf(call, sizeof call, "%s from the %s hook", collects[k].call, point_name(point));
    drv_expect_error(d, m, gc_last_error(d->heap), GC_ERR_IN_COLLECTION, call);
    expect_unchanged(d, m, &before, collects[k].call, point);
  }
  take_counts(d->heap, &before);
  size_t ran = gc_run_finalizers(dom);
  drv_check_made(d);
  if (ran != 0) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "gc_run_finalizers from the %s hook (armed by op %ld) ran %zu finalizer(s): "
                  "none runs inside a collection",
                  point_name(point), d->in_collection_op, ran);
  }
  expect_unchanged(d, m, &before, "gc_run_finalizers", point);
  /* The collection's last point (a cycle's sweep end, perhaps reported by the lazy sweep after
   * the cycle's stops; a compaction's end): the next collection is an ordinary one. */
  if (point == GC_HOOK_SWEPT || point == GC_HOOK_COMPACTED) d->in_collection_armed = 0;
}
