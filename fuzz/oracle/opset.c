/* The op set of a backend (run.h): the ops its capabilities allow, in op-table order. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/oracle/opset.h"

/* ---- Op sets ------------------------------------------------------------------------------- */

int oracle_op_allowed(fuzz_opcode code, unsigned caps) {
  switch (code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_STORE:
    case FUZZ_OP_STORE_IMM:
    case FUZZ_OP_LOAD:
    case FUZZ_OP_DROP:
    case FUZZ_OP_COPY:
    case FUZZ_OP_PUSH:
    case FUZZ_OP_POP:
    case FUZZ_OP_ROOT:
    case FUZZ_OP_UNROOT:
    case FUZZ_OP_COLLECT: return 1;
    case FUZZ_OP_ALLOC_LARGE: return (caps & FUZZ_CAP_LARGE) != 0;
    case FUZZ_OP_MARK_SLICE: return (caps & FUZZ_CAP_INCREMENTAL) != 0;
    case FUZZ_OP_FAIL: return (caps & FUZZ_CAP_FAIL) != 0;
    case FUZZ_OP_FIN:
    case FUZZ_OP_FIN_DO: return (caps & FUZZ_CAP_FINALIZERS) != 0;
    case FUZZ_OP_SELF: return (caps & FUZZ_CAP_FINALIZERS) && (caps & FUZZ_CAP_RESURRECT);
    case FUZZ_OP_SPAWN:
    case FUZZ_OP_ON:
    case FUZZ_OP_TERMINATE: return (caps & FUZZ_CAP_DOMAINS) != 0;
    case FUZZ_OP_BLOCK:
    case FUZZ_OP_UNBLOCK: return (caps & FUZZ_CAP_DOMAINS) && (caps & FUZZ_CAP_BLOCKING);
    case FUZZ_OP_PIN:
    case FUZZ_OP_UNPIN: return (caps & FUZZ_CAP_PIN) != 0;
    case FUZZ_OP_LIMIT: return (caps & FUZZ_CAP_LIMIT) != 0;
    case FUZZ_OP_UNFIN: return (caps & FUZZ_CAP_FIN_CLEAR) != 0;
    case FUZZ_OP_RANGE:
    case FUZZ_OP_RANGE_INT:
    case FUZZ_OP_RANGE_WORD: return (caps & FUZZ_CAP_CONSERVATIVE) != 0;
    case FUZZ_OP_RANGE_POOL: return (caps & FUZZ_CAP_CONSERVATIVE) && (caps & FUZZ_CAP_UNITS);
    case FUZZ_OP_TUNE: return (caps & FUZZ_CAP_TUNE) != 0;
    case FUZZ_OP_WEAK:
    case FUZZ_OP_WEAK_GET: return (caps & FUZZ_CAP_WEAK) != 0;
    case FUZZ_OP_EPHE:
    case FUZZ_OP_EPHE_GET: return (caps & FUZZ_CAP_EPHEMERON) != 0;
    case FUZZ_OP_WEAK_SET: return (caps & FUZZ_CAP_WEAK) && (caps & FUZZ_CAP_WEAK_SET);
    case FUZZ_OP_EPHE_SET: return (caps & FUZZ_CAP_EPHEMERON) && (caps & FUZZ_CAP_WEAK_SET);
    case FUZZ_OP_MISUSE: return (caps & FUZZ_CAP_MISUSE) != 0;
    case FUZZ_OP_CORRUPT: return (caps & FUZZ_CAP_CORRUPT) != 0;
    case FUZZ_OP_COMPACT: return (caps & FUZZ_CAP_COMPACT) != 0;
    default: return 0;
  }
}

/* A threaded run's (FUZZ_CAP_THREADS): the scheduler's configuration ops join; four leave,
 * each because several threads would make its check unsound, not because the collector could
 * not run it. An injected failure counts allocating calls in one order, and on threads the
 * calls return in another; a heap limit makes any domain's failure everyone's excuse; a
 * finalizer body (fin_do, and self in it) runs on whichever thread finalizes, on its bank, in
 * the middle of that thread's op. compact stays: the runner names blocks by cell and object,
 * never by an address held across a backend call, so a thread parked inside an op while
 * another compacts finds its cells forwarded; the addresses the model keeps for range words
 * follow the moves the backend reports to the compacting thread (backend.h: compact). */
static int threads_allowed(fuzz_opcode code, unsigned caps) {
  if (!(caps & FUZZ_CAP_THREADS)) return 0;
  switch (code) {
    case FUZZ_OP_PCT:
    case FUZZ_OP_CHOOSE: return 1;
    case FUZZ_OP_FAIL:
    case FUZZ_OP_LIMIT:
    case FUZZ_OP_FIN_DO:
    case FUZZ_OP_SELF: return 0;
    default: return oracle_op_allowed(code, caps);
  }
}

enum { MAX_BACKENDS = 8 };

typedef struct made_set {
  const fuzz_backend *b;
  fuzz_opset set;
  fuzz_opcode ops[FUZZ_OP_COUNT];
  char name[32];
} made_set;

static const fuzz_opset *make(made_set *made, const fuzz_backend *b, int threaded) {
  for (size_t i = 0; i < MAX_BACKENDS; i++) {
    if (made[i].b == b) return &made[i].set;
    if (made[i].b != NULL) continue;
    size_t n = 0;
    for (int code = 0; code < FUZZ_OP_COUNT; code++) {
      int ok = threaded ? threads_allowed((fuzz_opcode)code, b->caps)
                        : oracle_op_allowed((fuzz_opcode)code, b->caps);
      if (ok) made[i].ops[n++] = (fuzz_opcode)code;
    }
    snprintf(made[i].name, sizeof made[i].name, "%s%s", b->name, threaded ? "-threads" : "");
    made[i].set = (fuzz_opset){made[i].name, made[i].ops, n};
    made[i].b = b;
    return &made[i].set;
  }
  abort(); /* more backends than any binary links */
}

const fuzz_opset *oracle_opset(const fuzz_backend *b) {
  static made_set made[MAX_BACKENDS];
  return make(made, b, 0);
}

const fuzz_opset *oracle_opset_threads(const fuzz_backend *b) {
  static made_set made[MAX_BACKENDS];
  if (!(b->caps & FUZZ_CAP_THREADS)) return NULL;
  return make(made, b, 1);
}
