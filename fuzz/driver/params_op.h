/* The params op and the trace sink: gc_set_params held to what gc/gc.h and gc/README.md
 * ("Parameters", "The trace line") promise.
 *
 * `params N` (fuzz/lang/ops.h) hands gc_set_params row N of one catalogue of parameter strings
 * (params_op.c). Each row says whether the collector must accept the string and, if so, which
 * fields of gc_config it sets to what. The driver checks the whole configuration afterwards,
 * field by field: a refused string returns GC_ERR_PARAM and leaves every field as it was; an
 * accepted one returns GC_OK and changes exactly the fields its row names, to the row's values.
 * gc_config_parse on a copy, with no message buffer and with one of length 0 (left untouched),
 * must give the same verdict and fields.
 * Rows that would weaken the run are skipped (no call): a `verify` string that does not name
 * exactly the passes the heap runs now, `trace=1` without the driver's sink. What the driver
 * itself expects of allocation follows an accepted string (the heap limit, an injected failure,
 * the program's markslice), as it follows `limit`, `fail` and `param markslice`.
 *
 * The trace sink: every heap the driver makes writes its trace line (gc_config.trace_file) to a
 * memory stream the driver owns (the scratch's, kept from one program to the next, or one of the
 * program's own), rewound for each program. The hook counts the cycles and compactions that end
 * with `trace` on; after the final collection the lines written are read back: one line a cycle
 * ("gc N @...", N increasing) and one a compaction ("gc compact N @..."), each a whole line,
 * no more and no fewer.
 *
 * One thread only (graph, roots): the check that nothing changed reads the configuration,
 * which another domain's `param` could change meanwhile on threads. Calls down only: verdict.h. */
#ifndef FUZZ_DRIVER_PARAMS_OP_H
#define FUZZ_DRIVER_PARAMS_OP_H

#include "fuzz/driver/state.h"

/* params N, on mutator m. */
void drv_op_params(driver *d, mutator *m, int row);

/* The sink a new heap's trace_file is: the scratch's `sink` when given (opened the first time),
 * else one of the driver's own; rewound. NULL when no memory stream could be opened (the heap
 * then writes to stderr, and the catalogue's trace=1 is skipped). */
FILE *drv_trace_sink_open(driver *d, drv_trace_sink *sink);
void drv_trace_sink_close(drv_trace_sink *sink); /* a sink no heap writes to any more */
/* At GC_HOOK_CYCLED and GC_HOOK_COMPACTED: one more line due when the heap's trace is on. */
void drv_trace_note(driver *d, gc_hook_point point);
/* After the final collection: the lines written since the program began, held to the count. */
void drv_trace_check(driver *d);

#endif /* FUZZ_DRIVER_PARAMS_OP_H */
