/* The op set of a backend (run.h): the ops its capabilities allow, in op-table order. */
#include <stdlib.h>

#include "fuzz/oracle/runner.h"

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
    case FUZZ_OP_UNFIN: return (caps & FUZZ_CAP_FIN_CLEAR) != 0;
    case FUZZ_OP_RANGE:
    case FUZZ_OP_RANGE_INT:
    case FUZZ_OP_RANGE_WORD: return (caps & FUZZ_CAP_CONSERVATIVE) != 0;
    case FUZZ_OP_TUNE: return (caps & FUZZ_CAP_TUNE) != 0;
    case FUZZ_OP_WEAK:
    case FUZZ_OP_WEAK_GET: return (caps & FUZZ_CAP_WEAK) != 0;
    case FUZZ_OP_EPHE:
    case FUZZ_OP_EPHE_GET: return (caps & FUZZ_CAP_EPHEMERON) != 0;
    default: return 0;
  }
}

enum { MAX_BACKENDS = 8 };

const fuzz_opset *oracle_opset(const fuzz_backend *b) {
  static struct {
    const fuzz_backend *b;
    fuzz_opset set;
    fuzz_opcode ops[FUZZ_OP_COUNT];
  } made[MAX_BACKENDS];
  for (size_t i = 0; i < MAX_BACKENDS; i++) {
    if (made[i].b == b) return &made[i].set;
    if (made[i].b != NULL) continue;
    size_t n = 0;
    for (int code = 0; code < FUZZ_OP_COUNT; code++) {
      if (oracle_op_allowed((fuzz_opcode)code, b->caps)) made[i].ops[n++] = (fuzz_opcode)code;
    }
    made[i].set = (fuzz_opset){b->name, made[i].ops, n};
    made[i].b = b;
    return &made[i].set;
  }
  abort(); /* more backends than any binary links */
}
