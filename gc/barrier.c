/* The write barrier's slow path (gc_store's fast path is inline in gc.h): a deletion barrier,
 * snapshot at the beginning (INV-BARRIER-1 in heap.h). While a cycle marks beside the mutators,
 * the value a store overwrites is darkened before the store: whatever path from the roots ran
 * through that field when marking began, the marker still gets past this point. The new value
 * needs nothing: it was reachable when marking began (the mutator got it from a root or a field)
 * or it was born MARKED. */
#include "gc/cycle.h"
#include "gc/mark.h"

void gc_store_slow(gc_domain *d, gc_value block, size_t i, gc_value value) {
  gc_value *field = &gc_fields(block)[i];
  /* Zeal store: a mark slice between the mutator's last safepoint and this store's barrier (a
   * hook or finalizer's store inside a collection excepted: the collection is its slice). */
  if ((gc_atomic_load_relaxed(&d->heap->zeal) & GC_ZEAL_STORE) && !d->in_collection) {
    gc_cycle_store_slice(d);
  }
  /* The field is a protocol word here: a marker of another domain may scan it between this
   * load and the store below, and the scheduler must be able to put it there. */
  gc_plat_point_reached(GC_PLAT_LOAD, field);
  /* Acquire and release, as a marker's load of a field and gc_store's fast path: darkening reads
   * the header of the block the old value names, which another domain may have initialised. */
  gc_mark_darken(d, __atomic_load_n(field, __ATOMIC_ACQUIRE));
  gc_plat_point_reached(GC_PLAT_STORE, field);
  __atomic_store_n(field, value, __ATOMIC_RELEASE);
}
