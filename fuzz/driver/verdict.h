/* Violations: what the driver prints and counts when a pass or one of its own checks finds one,
 * attributed to an op. The bottom layer of the driver above its state (see state.h). */
#ifndef FUZZ_DRIVER_VERDICT_H
#define FUZZ_DRIVER_VERDICT_H

#include "fuzz/driver/state.h"
#include "invariants/report.h"

/* fuzz_result's per-pass rows: the heap's passes, then the driver's own checks. */
enum { PASS_REACH, PASS_SWEPT, PASS_CHECKMARK, PASS_MODEL, PASS_DRIVER };

/* One check of the driver's own made (fuzz_result.pass_runs of "driver"). */
static inline void drv_check_made(driver *d) { d->res->pass_runs[PASS_DRIVER]++; }

/* A violation of the API contract found by the driver itself, at m's running op (none: the final
 * checks): printed, counted; aborts if asked to. */
void drv_violation(driver *d, const mutator *m, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A call that must return `want` (a check of the driver's). */
void drv_expect_error(driver *d, const mutator *m, gc_error got, gc_error want, const char *call);

/* Print and count every report in `reports` as a violation of the pass that made it, attributed
 * to the op that started the cycle and, when another, m's running op; `how`, if not NULL, is one
 * more line saying how it was found (aborts if asked to). */
void drv_report_passes(driver *d, const mutator *m, const gc_verify_reports *reports,
                       const char *how);

/* The final runs of each heap pass, from the verifier's counts, into fuzz_result.pass_runs. */
void drv_count_pass_runs(driver *d);

#endif /* FUZZ_DRIVER_VERDICT_H */
