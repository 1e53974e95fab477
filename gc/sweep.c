/* Lazy sweeping. After the colours rotate, every pool and large block of a domain is unswept;
 * allocation sweeps the pools of the class it needs, and each slow path also sweeps in class
 * order: a budgeted slice, or more when the domain's sweep credit says it is behind, so that
 * every domain has swept everything by the time the next cycle is due (proportional sweep).
 *
 * The stop that rotates the colours only moves each domain's list heads (O(size classes) per
 * domain): what the sweep is due to examine is counted by the domain itself, on its own thread,
 * before its first sweep step (or by whoever sweeps it in a stop or a claim). */
#include "gc/sweep.h"

#include "gc/large.h"
#include "gc/pool.h"

/* Slots below p's frontier: what sweeping p examines. */
static size_t used_slots(gc_pool *p) {
  return (size_t)(p->frontier - gc_pool_first_slot(p)) / gc_wsize_of_class[p->size_class];
}

static size_t used_slots_of_list(gc_pool *list) {
  size_t slots = 0;
  for (gc_pool *p = list; p != NULL; p = p->next) slots += used_slots(p);
  return slots;
}

/* INV-SWEEPWORK-1 (heap.h): what this sweep is due to examine, one walk of the unswept lists
 * before the sweep's first step. */
static void count_sweep_due(gc_domain *d) {
  if (d->sweep_counted) return;
  size_t slots = 0, large = 0;
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    slots += used_slots_of_list(d->unswept_avail[c]) + used_slots_of_list(d->unswept_full[c]);
  }
  for (gc_large *a = d->unswept_large; a != NULL; a = a->next) large++;
  d->sweep_slots_due = slots;
  d->sweep_large_due = large;
  d->sweep_counted = 1;
}

void gc_sweep_begin(gc_domain *d) {
  d->sweep_slots_due = 0;
  d->sweep_large_due = 0;
  d->sweep_slots_swept = 0;
  d->sweep_large_swept = 0;
  d->sweep_counted = 0;
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    /* INV-COL-1: sweeping finished before this cycle's marking began. */
    d->unswept_avail[c] = d->avail[c];
    d->unswept_full[c] = d->full[c];
    d->avail[c] = NULL;
    d->full[c] = NULL;
  }
  d->unswept_large = d->swept_large;
  d->swept_large = NULL;
  d->next_to_sweep = 0;
  d->sweeping = 1;
}

static void sweep_done(gc_domain *d) {
  d->sweeping = 0;
  /* With one domain, that domain is the world: the heap is swept now. The collection lock keeps
   * it so (no domain is created or terminated meanwhile); when it is busy, or there are several
   * domains, the next stop of the world reports it once every domain has finished (cycle.c). */
  gc_heap *heap = d->heap;
  if (gc_atomic_load(&heap->domain_count) != 1 || !gc_mutex_trylock(&heap->stw_lock)) return;
  if (gc_atomic_load(&heap->domain_count) == 1 && !heap->swept_reported) {
    heap->swept_reported = 1;
    /* The hook runs inside the collection, as at every other point: what gc.h refuses from a
     * hook is refused here too. Without it gc_compact or gc_collect from this hook waited for
     * the collection lock this thread holds, forever. */
    int was_in_collection = d->in_collection;
    d->in_collection = 1;
    gc_heap_call_hook(heap, GC_HOOK_SWEPT);
    d->in_collection = was_in_collection;
  }
  gc_mutex_unlock(&heap->stw_lock);
}

/* Sweep the first pool of an unswept list, counting the slots it examines (INV-SWEEPWORK-1). */
static size_t sweep_pool(gc_domain *d, gc_pool **list, int release_if_empty) {
  if (*list != NULL) d->sweep_slots_swept += used_slots(*list);
  return gc_pool_sweep(d, list, release_if_empty);
}

static size_t sweep_large(gc_domain *d) {
  if (d->unswept_large != NULL) d->sweep_large_swept++;
  return gc_large_sweep_one(d);
}

int gc_sweep_slice(gc_domain *d, size_t budget_words) {
  if (!d->sweeping) return 1;
  gc_event_note(d->heap, GC_EVENT_SWEEP_SLICE);
  count_sweep_due(d);
  size_t done = 0;
  while (done < budget_words && d->next_to_sweep < GC_NUM_SIZECLASSES) {
    gc_sizeclass c = d->next_to_sweep;
    size_t work = sweep_pool(d, &d->unswept_avail[c], 1);
    if (work == 0) work = sweep_pool(d, &d->unswept_full[c], 1);
    if (work == 0) d->next_to_sweep++;
    done += work;
  }
  while (done < budget_words && d->unswept_large != NULL) done += sweep_large(d);
  if (d->next_to_sweep < GC_NUM_SIZECLASSES || d->unswept_large != NULL) return 0;
  sweep_done(d);
  return 1;
}

void gc_sweep_finish(gc_domain *d) {
  while (!gc_sweep_slice(d, (size_t)-1)) {}
}

void gc_sweep_for_class(gc_domain *d, gc_sizeclass c) {
  if (d->sweeping) count_sweep_due(d);
  /* Empty pools are kept, not released: the allocation that asked is about to use one. */
  while (d->avail[c] == NULL && d->unswept_avail[c] != NULL) {
    sweep_pool(d, &d->unswept_avail[c], 0);
  }
  while (d->avail[c] == NULL && d->unswept_full[c] != NULL) {
    sweep_pool(d, &d->unswept_full[c], 0);
  }
}

/* Sweep credit, as Go's proportional sweep: d's sweep is due in full once the domains have
 * allocated GC_SWEEP_DEADLINE_SHARE of the trigger since the colours rotated, in proportion
 * before, so the next cycle finds it done. The deadline is short of the trigger by an eighth:
 * a domain reports its allocation at its slow paths, so the count it reads lags the heap's. */
#define GC_SWEEP_DEADLINE_EIGHTHS 7
static size_t sweep_owed(gc_domain *d) {
  size_t trigger = gc_param_load(&d->heap->trigger_words);
  if (trigger == SIZE_MAX) return 0; /* pacing off: no cycle to be ready for */
  size_t deadline = trigger / 8 * GC_SWEEP_DEADLINE_EIGHTHS + 1;
  size_t paced = gc_atomic_load_relaxed(&d->heap->alloc_words_since_cycle);
  size_t due = d->sweep_slots_due + d->sweep_large_due;
  if (paced >= deadline) return due;
  return (size_t)((unsigned __int128)due * paced / deadline);
}

void gc_sweep_pay(gc_domain *d, size_t budget_words) {
  if (gc_sweep_slice(d, budget_words)) return; /* counts what is due first */
  size_t owed = sweep_owed(d);
  while (d->sweep_slots_swept + d->sweep_large_swept < owed && !gc_sweep_slice(d, 1)) {}
}
