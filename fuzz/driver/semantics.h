/* The op semantics: what each op of fuzz/lang/ops.h does to the heap, the model and the mutator
 * that runs it, and the driver's checks of the API contract it exercises (allocation fails
 * exactly when allowed, misuse is refused with the documented error, a new block is what was
 * asked for). Calls down only: verdict.h, corrupt_op.h, params_op.h. */
#ifndef FUZZ_DRIVER_SEMANTICS_H
#define FUZZ_DRIVER_SEMANTICS_H

#include "fuzz/driver/state.h"
#include "fuzz/lang/ops.h"

/* Run one op on mutator m, with the meaning it has on one thread. On threads, threads.c gives
 * `spawn` and `terminate dN` their meaning there (a thread per domain) and runs every other op
 * through here. */
void drv_run_op(driver *d, mutator *m, const fuzz_op *op);

/* spawn dN: the domain (born in a blocking section), or nothing when it is refused. */
void drv_op_spawn(driver *d, mutator *m, int n);
/* unroot gN (m's cell). */
void drv_op_unroot(driver *d, mutator *m, int g);
/* The record of m's innermost frame on domain dom, or -1; and freeing a record (its snapshot is
 * no model root any more). */
int drv_innermost_frame(const mutator *m, int dom);
void drv_release_frame(driver *d, mutator *m, int k);
/* Finalizer bodies (fin_do): the model calls the driver back when such a finalizer runs; this
 * installs that callback on d's model (after every attach). */
void drv_install_bodies(driver *d);
/* The end of a one-thread program: m back on d0, running. */
void drv_end_on_main(driver *d, mutator *m);

#endif /* FUZZ_DRIVER_SEMANTICS_H */
