/* Running a program through any backend (fuzz/backend/backend.h), checked by the backend-neutral
 * model (model.h) and by the backend's own deep check. What the interface targets (gcfuzz, lua,
 * bdwgc), `replay --backend NAME` and their tests call.
 *
 * The mutator of a program here: 16 slots s0..s15, 8 local frames (push snapshots every slot,
 * pop forgets the innermost), 8 global cells g0..g7 and 4 x 8 conservative range words, each
 * slot, frame slot and global one cell of the backend (so each is a root of the collector), and
 * scratch cells the checks load into. It runs on one domain at a time (spawn, on, terminate;
 * block leaves the heap until unblock or on), and a finalizer set by fin_do runs its body's ops
 * on the same slots when the backend runs it, its block in `self`. A threaded run
 * (options.h: threaded; FUZZ_CAP_THREADS) gives each domain its own mutator, bank of cells and
 * thread under the controlled scheduler instead (threads.c says how the checks stay sound). The ops a backend can run are
 * its op set (opset.c), made from its capabilities: the decoder never gives it an op it cannot
 * run.
 *
 * What is checked, and when (kinds `oracle.*`; each printed with its verdict line):
 *   every load        the field holds what the model says: empty, the integer, or the block
 *                     whose identity the model gave it (oracle.contents, oracle.identity);
 *   every finalizer   its block is the model's, its finalizer was set and has not run, and the
 *                     block is not finalizer-safe reachable (oracle.finalizer-*);
 *   every weak get    the target is the model's while it lives; cleared only when the target is
 *                     not finalizer-safe reachable, and never back (oracle.weak-*);
 *   every unpin       the backend's answer (was it pinned?) is the model's (oracle.pin);
 *   every allocation  it fails only inside an injected failure's window or under a heap limit,
 *                     and within the window exactly once (oracle.unexpected-failure,
 *                     oracle.failure-missed);
 *   every misuse      refused as documented (oracle.api-error), the deep check right after;
 *   every corruption  seen by the deep check and repaired (oracle.corruption-missed,
 *                     oracle.corruption-unrepaired; a finding before it planted: its kind);
 *   a threaded run    never stuck (oracle.deadlock, oracle.livelock);
 *   a backend finding as the backend makes it (events.finding), against the op running;
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
#include "fuzz/oracle/opset.h"
#include "fuzz/oracle/options.h"

/* Run the program in `data` (bytes of the backend's op set). Returns 0 clean, 1 when anything
 * was found (printed to opt->out), -1 when the heap could not be made. */
int oracle_run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res);

/* A libFuzzer target's one input: oracle_run with abort_on_violation (threaded 1: one thread a
 * domain under the controlled scheduler; 2: the same threads running free, free_threads), the
 * model's memory kept from one input to the next. Always returns 0. */
int oracle_target_run_one(const fuzz_backend *b, int threaded, const uint8_t *data, size_t size);

#endif /* FUZZ_ORACLE_RUN_H */
