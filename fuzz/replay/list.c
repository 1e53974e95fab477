/* The op table as markdown (fuzz/replay/list.h). */
#include "fuzz/replay/list.h"

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "fuzz/oracle/run.h"

/* A table cell: '|' would end it, so it is escaped; nothing else in the op table needs it. */
static void cell(FILE *out, const char *text) {
  for (const char *c = text; *c != '\0'; c++) {
    if (*c == '|') fputc('\\', out);
    fputc(*c, out);
  }
}

void replay_list_ops(FILE *out) {
  fprintf(out, "| op | operands | what it does |\n| --- | --- | --- |\n");
  for (int code = 0; code < FUZZ_OP_COUNT; code++) {
    const fuzz_op_info *info = &fuzz_op_table[code];
    fprintf(out, "| `%s` | ", info->mnemonic);
    int operands = 0;
    for (int i = 0; i < FUZZ_MAX_OPERANDS && info->operands[i] != FUZZ_OPND_NONE; i++) {
      if (operands++ > 0) fputs("; ", out);
      cell(out, fuzz_operand_table[info->operands[i]].what);
    }
    if (operands == 0) fputs("none", out);
    fputs(" | ", out);
    cell(out, info->what);
    fputs(" |\n", out);
  }
}

void replay_list_backends(FILE *out) {
  static const char *const names[] = {"gcfuzz", "lua", "bdwgc"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const fuzz_backend *b = fuzz_backend_find(names[i]);
    if (b == NULL) continue;
    fprintf(out, "%s: %s\n  capabilities:", b->name, b->what);
    for (int c = 0; c < FUZZ_CAP_COUNT; c++) {
      if (b->caps & (1u << c)) fprintf(out, " %s", fuzz_backend_cap_names[c]);
    }
    fprintf(out, "\n  ops: %zu of %d\n", oracle_opset(b)->count, FUZZ_OP_COUNT);
    for (size_t t = 0; t < b->tunable_count; t++) {
      fprintf(out, "  tune p%zu  %-11s %s\n", t, b->tunables[t].name, b->tunables[t].what);
    }
    for (size_t e = 0; b->rare_counts != NULL && e < b->rare_event_count; e++) {
      fprintf(out, "  event %-24s %s\n", b->rare_events[e].name, b->rare_events[e].what);
    }
  }
}
