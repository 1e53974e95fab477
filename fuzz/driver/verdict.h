/* Violations: what the driver prints and counts when a pass or one of its own checks finds one,
 * attributed to an op. Each is printed as a human report and as exactly one machine-readable
 * verdict line (invariants/verdict.h). The bottom layer of the driver above its state (state.h). */
#ifndef FUZZ_DRIVER_VERDICT_H
#define FUZZ_DRIVER_VERDICT_H

#include "fuzz/driver/state.h"
#include "invariants/report.h"

/* One check of the driver's own made (fuzz_result.pass_runs of the driver's row). */
static inline void drv_check_made(driver *d) { d->res->pass_runs[GC_VPASS_DRIVER]++; }

/* A violation of the API contract found by the driver itself (`kind` is one of the table's driver
 * kinds), at m's running op (none: the final checks): printed with its verdict line, counted;
 * aborts if asked to. */
void drv_violation(driver *d, const mutator *m, gc_verify_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A call that must return `want` (a check of the driver's). When it fails as it must, the heap's
 * last error is that error with a message; after gc_clear_error it is GC_OK with the message "".
 */
void drv_expect_error(driver *d, const mutator *m, gc_error got, gc_error want, const char *call);
/* At the start of every program: gc_error_name gives every error the name of the driver's table
 * (the op language's and every message's), and the new heap has no error recorded. */
void drv_check_error_api(driver *d, const mutator *m);

/* Print and count every report in `reports` as a violation of the pass that made it, attributed
 * to the op that started the cycle and, when another, m's running op; `how`, if not NULL, is one
 * more line saying how it was found. The reports themselves, each with its verdict line, and the
 * Graphviz file for the program's first violation go through the verifier's one way of emitting
 * findings (gc_verify_reports_emit, or gc_verify_fail_and_abort when asked to abort). */
void drv_report_passes(driver *d, const mutator *m, const gc_verify_reports *reports,
                       const char *how);

/* The final runs of each heap pass, from the verifier's counts, into fuzz_result.pass_runs. */
void drv_count_pass_runs(driver *d);

#endif /* FUZZ_DRIVER_VERDICT_H */
