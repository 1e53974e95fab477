/* A threaded program's plan (plan.h): the parts, one a domain, and the scheduler's configuration
 * read from the program. */
#include "fuzz/sched/plan.h"

#include <stdlib.h>

#include "fuzz/lang/program.h"
#include "gc/platform.h"

enum {
  PCT_DEPTH_DEFAULT = 3, /* no pct op, or `pct SEED 0` */
  PCT_DEPTH_MAX = 8,
  CHOICE_BYTES = 8, /* a `choose` op's: its WORD */
};

/* The default seed's hash starts here, not at FNV-1a's offset basis (GC_FNV1A_BASIS,
 * 14695981039346656037): that number with its last digit lost, as both callers wrote it before
 * they shared the plan. Any start gives each program its own seed; this one keeps the schedule of
 * every saved program with neither pct nor choose (seeds, crashes) what it was. */
static const uint64_t seed_hash_start = 1469598103934665603ull;

/* Default: PCT seeded by the program itself, so every mutation of it is a new schedule. */
static uint64_t program_hash(const uint8_t *data, size_t size) {
  uint64_t hash = seed_hash_start;
  for (size_t i = 0; i < size; i++) hash = gc_fnv1a(hash, data[i]);
  return hash;
}

/* The domain whose part `op` goes to, while the ops stand in `part`'s. */
static int owner_of(const fuzz_op *op, int part) {
  return op->code == FUZZ_OP_TERMINATE && op->args[0].a != 0 ? op->args[0].a : part;
}

/* Decode the program: the ops it keeps into ops[] (in program order) with their domains into
 * owner[], the configuration into plan->cfg, the choice bytes into plan->choices. Returns how
 * many ops it kept. */
static size_t read_program(fuzz_sched_plan *plan, const fuzz_opset *set, const uint8_t *data,
                           size_t size, fuzz_op *ops, int *owner) {
  plan->cfg = (fuzz_sched_config){
      .mode = FUZZ_SCHED_PCT, .seed = program_hash(data, size), .depth = PCT_DEPTH_DEFAULT};
  int pct_seen = 0;
  size_t kept = 0, collects = 0;
  int part = 0;
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    if (op.depth > 0) continue; /* a finalizer body's: not a part's (plan.h) */
    if (op.code == FUZZ_OP_ON) {
      part = op.args[0].a;
    } else if (op.code == FUZZ_OP_PCT) {
      if (!pct_seen) {
        int depth = op.args[1].a;
        plan->cfg.seed = op.args[0].word;
        plan->cfg.depth = depth == 0 ? PCT_DEPTH_DEFAULT
                                     : (unsigned)(depth > PCT_DEPTH_MAX ? PCT_DEPTH_MAX : depth);
      }
      pct_seen = 1;
    } else if (op.code == FUZZ_OP_CHOOSE) {
      for (int b = 0; b < CHOICE_BYTES; b++)
        plan->choices[plan->choices_len++] = (uint8_t)(op.args[0].word >> (8 * b));
    } else {
      collects += op.code == FUZZ_OP_COLLECT;
      ops[kept] = op;
      owner[kept++] = owner_of(&op, part);
    }
  }
  if (!pct_seen && plan->choices_len > 0) {
    plan->cfg.mode = FUZZ_SCHED_BYTES;
    plan->cfg.bytes = plan->choices;
    plan->cfg.bytes_len = plan->choices_len;
  }
  /* k, the steps change points are drawn from: about what a program takes (a few steps an op,
   * some 64 a collection: the stop, the sweep and mark barriers, the work lists and the protocol
   * words' loads and stores); too large a k puts the change points past the end of the run, too
   * small a k all of them before its first collection. */
  plan->cfg.pct_steps = 4 * (uint64_t)kept + 64 * (uint64_t)collects + 32;
  /* A collector that only spins for this long is stuck: a real wait ends in a few hundred. */
  plan->cfg.livelock_steps = 20000;
  return kept;
}

/* The kept ops into plan->ops, part by part, each in program order: a domain's thread runs one
 * slice of the one array. Returns 0 when out of memory. */
static int sort_parts(fuzz_sched_plan *plan, const fuzz_op *ops, const int *owner, size_t kept) {
  plan->ops = malloc((kept ? kept : 1) * sizeof *plan->ops);
  if (plan->ops == NULL) return 0;
  size_t at = 0;
  for (int k = 0; k < FUZZ_DOMAINS; k++) {
    plan->start[k] = at;
    for (size_t i = 0; i < kept; i++) {
      if (owner[i] == k) plan->ops[at++] = ops[i];
    }
    plan->count[k] = at - plan->start[k];
  }
  return 1;
}

int fuzz_sched_plan_make(fuzz_sched_plan *plan, const fuzz_opset *set, const uint8_t *data,
                         size_t size) {
  *plan = (fuzz_sched_plan){0};
  size_t n = fuzz_program_count(set, data, size);
  fuzz_op *ops = malloc((n ? n : 1) * sizeof *ops);
  int *owner = malloc((n ? n : 1) * sizeof *owner);
  plan->choices = malloc(n * CHOICE_BYTES + 1);
  int ok = ops != NULL && owner != NULL && plan->choices != NULL &&
           sort_parts(plan, ops, owner, read_program(plan, set, data, size, ops, owner));
  free(ops);
  free(owner);
  if (!ok) fuzz_sched_plan_free(plan);
  return ok;
}

void fuzz_sched_plan_free(fuzz_sched_plan *plan) {
  free(plan->ops);
  free(plan->choices);
  *plan = (fuzz_sched_plan){0};
}
