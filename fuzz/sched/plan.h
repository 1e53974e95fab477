/* A threaded program's plan: the program split into one part per domain, and the controlled
 * scheduler's configuration read from it. What a threaded run does with a fuzz program, shared by
 * gcfuzz's own schedule target (fuzz/driver/threads.c) and the backend-neutral oracle's threaded
 * runs (fuzz/oracle/threads.c), so that one program means the same threads and the same
 * interleaving in both.
 *
 * The split. The program's own ops only (a finalizer body's ops, depth > 0, are not the part's:
 * the driver decodes them again when the finalizer runs, and the oracle's threaded op sets have
 * no bodies, so a stray one runs nowhere). d0's part starts at the beginning; `on dN` sends the
 * ops after it to dN's part (and is in no part: it runs nothing); `terminate dN` (N != 0) goes to
 * dN's own part, wherever it stands, as a domain ends itself. Each part keeps program order.
 *
 * The configuration. By default PCT of depth 3, seeded by a hash of the program's bytes (FNV-1a
 * steps; plan.c), so every mutation of a program is a new schedule. The first `pct SEED DEPTH`
 * sets the seed and the depth (0 means 3, at most 8); later ones change nothing. Each
 * `choose WORD` appends its word's 8 bytes, low byte first, to the choices; with choices and no
 * `pct` op the run takes them (FUZZ_SCHED_BYTES). Neither op is in a part. PCT's k and the
 * livelock bound come from the kept ops (plan.c says why). The caller adds what is its own: the
 * trace, a mode of its own (FUZZ_SCHED_FREE).
 *
 * Depends on fuzz/lang (the decoder), fuzz/sched's scheduler (its configuration) and gc/platform.h
 * (the hash) only.
 */
#ifndef FUZZ_SCHED_PLAN_H
#define FUZZ_SCHED_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/lang/ops.h"
#include "fuzz/sched/sched.h"

typedef struct fuzz_sched_plan {
  fuzz_op *ops;               /* every part's ops in one array, part by part, d0's first */
  size_t start[FUZZ_DOMAINS]; /* domain k's part: ops[start[k]] ... */
  size_t count[FUZZ_DOMAINS]; /* ... and the count[k] ops after it (0: an empty part) */
  fuzz_sched_config cfg;      /* mode, seed, depth, pct_steps, livelock_steps, bytes; no trace */
  uint8_t *choices;           /* the `choose` ops' bytes, 8 an op; cfg.bytes points here in
                                * BYTES mode, so the plan must outlive the run */
  size_t choices_len;
} fuzz_sched_plan;

/* The plan of the program `data` (`size` bytes) as op set `set` (NULL: the graph target's) decodes
 * it. Returns 1, or 0 when out of memory (then nothing is held, and fuzz_sched_plan_free may still
 * be called). */
int fuzz_sched_plan_make(fuzz_sched_plan *plan, const fuzz_opset *set, const uint8_t *data,
                         size_t size);

/* Frees what the plan holds (the ops and the choices). */
void fuzz_sched_plan_free(fuzz_sched_plan *plan);

#endif /* FUZZ_SCHED_PLAN_H */
