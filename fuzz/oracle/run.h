/* Running a program through any backend (fuzz/backend/backend.h), checked by the backend-neutral
 * model (model.h) and by the backend's own deep check. What the fuzz targets of other collectors
 * (lua, bdwgc), `replay --backend NAME` and their tests call.
 *
 * The mutator of a program here: 16 slots s0..s15, 8 local frames (push snapshots every slot,
 * pop forgets the innermost), 8 global cells g0..g7 and 4 x 8 conservative range words, each
 * slot, frame slot and global one cell of the backend (so each is a root of the collector), and
 * scratch cells the checks load into. The ops a backend can run are its op set (opset.c), made
 * from its capabilities: the decoder never gives it an op it cannot run.
 *
 * What is checked, and when (kinds `oracle.*`; each printed with its verdict line):
 *   every load        the field holds what the model says: empty, the integer, or the block
 *                     whose identity the model gave it (oracle.contents, oracle.identity);
 *   every finalizer   its block is the model's, its finalizer was set and has not run, and the
 *                     block is not finalizer-safe reachable (oracle.finalizer-*);
 *   every weak get    the target is the model's while it lives; cleared only when the target is
 *                     not finalizer-safe reachable, and never back (oracle.weak-*);
 *   every collection  the backend's deep check (kind `<backend>.<what>`; a backend may also
 *                     check after the steps its collector takes by itself, as Lua's does);
 *                     after a major or full collection every block reachable from the cells,
 *                     read field by field through the backend (oracle.identity,
 *                     oracle.contents);
 *   a full collection the leak bound (oracle.leak), and on a precise backend with a walk, no
 *                     block the model does not keep (oracle.not-freed) and none it reaches gone
 *                     (oracle.lost), and every finalizer of an unreachable block run
 *                     (oracle.finalizer-lost);
 *   the end           a full collection and all of the above.
 */
#ifndef FUZZ_ORACLE_RUN_H
#define FUZZ_ORACLE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"

/* The op set of a backend: named after it (replay --target NAME reads bytes with it), the ops its
 * capabilities allow, in op-table order. Made once, kept for the life of the process. */
const fuzz_opset *oracle_opset(const fuzz_backend *b);
/* Whether `code` runs on a backend with capabilities `caps` (the rule oracle_opset applies). */
int oracle_op_allowed(fuzz_opcode code, unsigned caps);

typedef struct oracle_options {
  const fuzz_backend *backend;
  const fuzz_opset *ops;  /* NULL: oracle_opset(backend) */
  int abort_on_violation; /* fuzz targets: the first violation printed, then abort() */
  FILE *out;              /* violations and reports; NULL: stderr */
  FILE *trace;            /* if set: each op as it runs, each collection and finalizer */
  const char *params;     /* the backend's own parameter text, or NULL */
} oracle_options;

typedef struct oracle_result {
  size_t ops;          /* ops run */
  size_t body_ops;     /* ops run in finalizer bodies (fin_do), each time its finalizer ran */
  uint64_t collects;   /* collections the program asked for, the final one included */
  size_t checks;       /* the model's checks made (loads, finalizers, gets, walks) */
  size_t deep_checks;  /* runs of the backend's deep check */
  size_t finalizers;   /* finalizers that ran */
  size_t violations;   /* every finding, the model's and the backend's */
  long first_op;       /* the op of the first, or -1 (the final checks) */
  char first_kind[48]; /* "" if none */
} oracle_result;

/* Run the program in `data` (bytes of the backend's op set). Returns 0 clean, 1 when anything
 * was found (printed to opt->out), -1 when the heap could not be made. */
int oracle_run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res);

/* A libFuzzer target's one input: oracle_run with abort_on_violation, the model's memory kept
 * from one input to the next. Always returns 0. */
int oracle_target_run_one(const fuzz_backend *b, const uint8_t *data, size_t size);

#endif /* FUZZ_ORACLE_RUN_H */
