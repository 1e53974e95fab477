/* The op set of a backend (fuzz/oracle/run.h): the ops its capabilities allow. */
#ifndef FUZZ_ORACLE_OPSET_H
#define FUZZ_ORACLE_OPSET_H

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"

/* The op set of a backend: named after it (replay --target NAME reads bytes with it), the ops its
 * capabilities allow, in op-table order. Made once, kept for the life of the process. */
const fuzz_opset *oracle_opset(const fuzz_backend *b);
/* A threaded run's op set (FUZZ_CAP_THREADS; NULL without it), named "NAME-threads": the
 * scheduler's ops (pct, choose) added, fail, limit, fin_do and self left out (opset.c says why). */
const fuzz_opset *oracle_opset_threads(const fuzz_backend *b);
/* Whether `code` runs on a backend with capabilities `caps` (the rule oracle_opset applies). */
int oracle_op_allowed(fuzz_opcode code, unsigned caps);

#endif /* FUZZ_ORACLE_OPSET_H */
