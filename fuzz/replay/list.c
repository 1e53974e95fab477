/* The op table as markdown (fuzz/replay/list.h). */
#include "fuzz/replay/list.h"

#include "fuzz/lang/ops.h"

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
