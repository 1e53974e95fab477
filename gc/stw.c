/* Stopping the world (see stw.h and INV-DOM-1 in heap.h). */
#include "gc/stw.h"

#include "gc/mark.h"
#include "gc/sweep.h"

/* An enlisted domain's part of the program: its own sweep, then (a mark) its share of the
 * marking, each phase ended at the barrier the leader leads. */
static void participate(gc_domain *d, int program) {
  gc_heap *heap = d->heap;
  gc_sweep_finish(d);
  gc_barrier_follow(&heap->barrier);
  if (program == GC_STW_SWEEP) return;
  gc_mark_domain(d, 0);
  gc_barrier_follow(&heap->barrier);
}

int gc_stw_begin(gc_domain *leader, enum gc_stw_program program, int (*proceed)(gc_heap *heap)) {
  gc_heap *heap = leader->heap;
  /* Another domain may be collecting: keep answering its stop while waiting for the lock. */
  while (!gc_mutex_trylock(&heap->stw_lock)) {
    gc_poll(leader);
    gc_plat_spin(&heap->stw_lock);
  }
  if (proceed != NULL && !proceed(heap)) {
    gc_mutex_unlock(&heap->stw_lock);
    return 0;
  }
  heap->stw_program = program;
  uintptr_t taken = program == GC_STW_HOLD ? GC_DOMAIN_HELD : GC_DOMAIN_ENLISTED;
  gc_atomic_store(&heap->stw_requested, 1);
  size_t enlisted = 0;
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *o = heap->domains[i];
    if (o == leader) continue;
    for (;;) {
      uintptr_t state = gc_atomic_load(&o->state);
      if (state == GC_DOMAIN_PARKED && gc_atomic_cas(&o->state, state, taken)) {
        enlisted += taken == GC_DOMAIN_ENLISTED; /* it starts on the program at once */
        break;
      }
      if (state == GC_DOMAIN_BLOCKING && gc_atomic_cas(&o->state, state, GC_DOMAIN_CLAIMED)) break;
      /* RUNNING: it will reach a safepoint. ENLISTED: still leaving the previous collection.
       * (Never HELD: whoever held it put it back before letting go of the lock.) */
      gc_plat_spin(o);
    }
  }
  heap->participants = enlisted + 1;
  return 1;
}

void gc_stw_end(gc_domain *leader) {
  gc_heap *heap = leader->heap;
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *o = heap->domains[i];
    if (o == leader) continue;
    uintptr_t state = gc_atomic_load(&o->state);
    if (state == GC_DOMAIN_CLAIMED) gc_atomic_store(&o->state, GC_DOMAIN_BLOCKING);
    /* Before the request goes off: a held domain leaves only from PARKED, by compare-and-swap,
     * once it reads the request off (which orders this store before it). */
    if (state == GC_DOMAIN_HELD) gc_atomic_store(&o->state, GC_DOMAIN_PARKED);
  }
  gc_atomic_store(&heap->stw_requested, 0);
  gc_mutex_unlock(&heap->stw_lock);
}

void gc_stw_park(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_atomic_store(&d->state, GC_DOMAIN_PARKED);
  /* HELD: a leader does this domain's part; it waits here as when PARKED, until put back. */
  for (;;) {
    if (gc_atomic_load(&d->state) == GC_DOMAIN_ENLISTED) {
      participate(d, heap->stw_program);
      gc_atomic_store(&d->state, GC_DOMAIN_PARKED);
      continue;
    }
    /* Leaving is a compare-and-swap: a leader may enlist this domain at the same moment. */
    if (!gc_atomic_load(&heap->stw_requested) &&
        gc_atomic_cas(&d->state, GC_DOMAIN_PARKED, GC_DOMAIN_RUNNING)) {
      return;
    }
    gc_plat_spin(heap);
  }
}

void gc_poll(gc_domain *d) {
  if (gc_safepoint_load(&d->heap->stw_requested, d)) gc_stw_park(d);
}
