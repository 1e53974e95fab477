/* `misuse in-collection`: the collector's entry points called from inside a collection.
 *
 * A hook runs inside a collection, on the thread of the domain that collects (gc.h, "Verification
 * hooks"). What gc.h promises a call from there, the driver checks at every hook point of the
 * next collection after the op (one thread only: see in_collection.c):
 *   - gc_compact is refused: it returns GC_ERR_IN_COLLECTION and records it ("Refused from a
 *     hook"), through drv_expect_error;
 *   - gc_collect of every kind is refused ("a collection asked for from inside one (a hook):
 *     refused"): no cycle, slice, sweep slice, stop or compaction;
 *   - gc_run_finalizers runs none and returns 0 (a finalizer runs "never inside a collection").
 * Each refused call also changes nothing else the heap counts: no rare event, no allocation, no
 * block freed. A difference is a driver.api-error violation.
 *
 * Calls down only: verdict.h.
 */
#ifndef FUZZ_DRIVER_IN_COLLECTION_H
#define FUZZ_DRIVER_IN_COLLECTION_H

#include "fuzz/driver/state.h"
#include "gc/gc.h"

/* The op, on mutator m: arms the checks for the next collection's hook points. */
void drv_in_collection_arm(driver *d, const mutator *m);
/* At every hook point, from the driver's hook on the collecting thread, m its mutator: runs the
 * checks while armed, and disarms at the collection's last stopped point. */
void drv_in_collection_at_hook(driver *d, const mutator *m, gc_hook_point point);

#endif /* FUZZ_DRIVER_IN_COLLECTION_H */
