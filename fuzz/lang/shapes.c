/* The slots' known block sizes, op by op (shapes.h). */
#include "fuzz/lang/shapes.h"

#include <string.h>

void fuzz_shapes_init(fuzz_shapes *s) {
  memset(s, 0, sizeof *s);
  s->spawned[0] = 1; /* d0 runs from the start */
}

int fuzz_shapes_field_past_end(const fuzz_shapes *s, const fuzz_op *op, int *operand,
                               fuzz_shape *shape) {
  if (op->depth > 0 || s->blocked[s->on]) return 0; /* it does not run here, or at all */
  int k;
  switch (op->code) {
    case FUZZ_OP_STORE:
    case FUZZ_OP_STORE_IMM: k = 0; break;
    case FUZZ_OP_LOAD: k = 1; break;
    default: return 0;
  }
  const fuzz_shape *known = &s->slot[s->on][op->args[k].a];
  if (known->fields == 0 || (size_t)op->args[k].b < known->fields) return 0;
  *operand = k;
  *shape = *known;
  return 1;
}

static void forget_bank(fuzz_shapes *s, int d) { memset(s->slot[d], 0, sizeof s->slot[d]); }

void fuzz_shapes_step(fuzz_shapes *s, const fuzz_op *op) {
  if (op->depth > 0) return; /* a finalizer body runs later, on whichever domain finalizes */
  const fuzz_arg *a = op->args;
  fuzz_shape *bank = s->slot[s->on];
  if (s->blocked[s->on] && op->code != FUZZ_OP_ON && op->code != FUZZ_OP_UNBLOCK) return;
  switch (op->code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE:
      /* A custom block's data words follow its function word: n + 1 fields. */
      bank[a[0].a].fields = (size_t)a[2].a + (a[1].a == FUZZ_KIND_CUSTOM ? 1 : 0);
      bank[a[0].a].made_by = op->index;
      break;
    case FUZZ_OP_COPY: bank[a[0].a] = bank[a[1].a]; break;
    case FUZZ_OP_LOAD:
    case FUZZ_OP_DROP:
    case FUZZ_OP_WEAK:
    case FUZZ_OP_WEAK_GET:
    case FUZZ_OP_EPHE:
    case FUZZ_OP_EPHE_GET:
    case FUZZ_OP_SELF: bank[a[0].a].fields = 0; break;
    case FUZZ_OP_POP: forget_bank(s, s->on); break;
    case FUZZ_OP_SPAWN:
      if (!s->spawned[a[0].a]) {
        s->spawned[a[0].a] = 1;
        forget_bank(s, a[0].a);
      }
      break;
    case FUZZ_OP_TERMINATE:
      if (a[0].a == 0 || !s->spawned[a[0].a]) break; /* refused, or nothing to end */
      s->spawned[a[0].a] = 0;
      s->blocked[a[0].a] = 0;
      forget_bank(s, a[0].a);
      if (s->on == a[0].a) s->on = 0;
      break;
    case FUZZ_OP_ON:
      if (s->spawned[a[0].a]) s->on = a[0].a;
      break;
    case FUZZ_OP_BLOCK: s->blocked[s->on] = 1; break;
    case FUZZ_OP_UNBLOCK: s->blocked[s->on] = 0; break;
    default: break;
  }
}
