/* The corrupt op: the verifier tested by the fuzzer itself.
 *
 * A program run against a correct collector never makes a verification pass report anything, so
 * under the fuzzer the code that builds, locates, paths and prints reports never runs, and a pass
 * that stopped seeing what it checks would go unnoticed. `corrupt NAME sS N` (fuzz/lang/ops.h)
 * closes that gap. Between two ops of the one-thread driver it
 *
 *   1. plants the corruption NAME of the catalogue (invariants/corrupt.h) in the heap or in the
 *      model, on the block in slot sS, N naming a field, a free-list entry, a statistic or another
 *      slot as the corruption says; every byte it writes goes through an undo log. A corruption
 *      that cannot apply (an empty slot, a field past the end, a pool without such an entry, its
 *      pass not in the heap's verify mask, a sweep not finished where the pass needs it finished)
 *      changes nothing: the op is a no-op;
 *   2. runs the one pass that must see it, directly, into reports of its own (never the driver's
 *      violation path), and requires at least one report of the corruption's kind. The first
 *      time in a program, every report is printed, and the first one drawn as Graphviz, to a
 *      memory stream: the report code runs on real reports under the build's sanitizers (the text
 *      is discarded);
 *   3. repairs: writes back every logged byte, newest first, so the heap and the model are exactly
 *      as before (the pass's own notes in the model included: a model check remembers what it
 *      reported, and forgets it again here);
 *   4. runs the pass again, which must report nothing.
 * A kind not reported is the driver violation driver.corruption-missed, anything reported after
 * the repair driver.corruption-unrepaired: a verifier that misses a planted corruption, or a
 * repair that is not exact, is a bug in gcfuzz, and the fuzz target reports it as a crash.
 *
 * Nothing but that one pass sees a corruption: no allocation and no collection runs between the
 * plant and the repair. The exception is checkmark, which only means something right after
 * marking: its corruptions run a major collection of their own (the call `collect major` makes,
 * on the running domain, so the model and every pass see an ordinary cycle) and plant, check and
 * repair at that collection's mark-done point, before the driver's own passes look.
 *
 * Calls down only: verdict.h, and the catalogue.
 */
#ifndef FUZZ_DRIVER_CORRUPT_OP_H
#define FUZZ_DRIVER_CORRUPT_OP_H

#include "fuzz/driver/state.h"
#include "fuzz/lang/ops.h"

/* corrupt NAME sS N, on mutator m (the one-thread targets only). */
/* Look up the catalogue's rows of the op language's corruptions, once per process; the first
 * `corrupt` op does it, fuzz_target_init before any program (so no input's path includes it). */
void drv_corrupt_init(void);
void drv_op_corrupt(driver *d, mutator *m, fuzz_corruption which, int slot, int n);
/* At GC_HOOK_MARK_DONE, before the driver's passes, when d->corrupt_armed is set: the armed
 * checkmark corruption is planted, checked and repaired, once. */
void drv_corrupt_mark_done(driver *d);

#endif /* FUZZ_DRIVER_CORRUPT_OP_H */
