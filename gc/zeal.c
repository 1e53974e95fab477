/* The phantom domain of zeal domains (zeal.h). */
#include "gc/zeal.h"

#include "gc/platform.h"

/* The boundaries a phantom lives: spawned at one, blocked at the next three, terminated at the
 * fifth. Five is prime to the two phases a stw cycle shows a domain (idle, sweeping) and the
 * three of an incremental one, so each act meets every phase in turn. */
enum { ZEAL_PHANTOM_BOUNDARIES = 5 };

/* The phase d sees, with the cycle it belongs to: a new value at every boundary d crosses. A
 * running domain reads `cycles` plainly: only a stop writes it, and a stop parks d first. */
static uintptr_t phase_of(gc_domain *d) {
  uintptr_t phase = gc_atomic_load_relaxed(&d->head.marking) ? 1 : d->sweeping ? 2 : 0;
  return (uintptr_t)d->heap->cycles * 3 + phase;
}

void gc_zeal_domains(gc_domain *d) {
  gc_heap *heap = d->heap;
  uintptr_t phase = phase_of(d);
  if (phase == gc_atomic_load_relaxed(&heap->zeal_phase)) return;
  if (!gc_atomic_cas(&heap->zeal_acting, 0, 1)) return;
  gc_atomic_store_relaxed(&heap->zeal_phase, phase);
  gc_domain *p = heap->zeal_phantom;
  if (p == NULL) {
    /* Born in a blocking section: no thread need answer a stop for it. */
    heap->zeal_phantom = gc_domain_spawn(d);
    heap->zeal_phantom_age = 0;
  } else {
    /* One thread runs both: d blocks while the phantom runs (its leaving may stop the world to
     * make the mark parallel, and that stop must not wait for d). */
    gc_enter_blocking(d);
    gc_leave_blocking(p);
    if (++heap->zeal_phantom_age == ZEAL_PHANTOM_BOUNDARIES - 1) { /* age 0: spawned */
      gc_domain_terminate(p);
      heap->zeal_phantom = NULL;
    } else {
      gc_enter_blocking(p);
    }
    gc_leave_blocking(d);
  }
  gc_atomic_store(&heap->zeal_acting, 0);
}
