/* The printer and the assembler of the text form (fuzz/lang/text.h). */
#include "fuzz/lang/text.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/shapes.h"

/* ---- Printing ------------------------------------------------------------------------------ */

static void format_limit(size_t index, char *buf, size_t len) {
  size_t kib = fuzz_limit_bytes(index) / 1024;
  if (kib == 0) {
    snprintf(buf, len, "off");
  } else if (kib % 1024 == 0) {
    snprintf(buf, len, "%zum", kib / 1024);
  } else {
    snprintf(buf, len, "%zuk", kib);
  }
}

static void format_param_value(fuzz_param p, size_t index, char *buf, size_t len) {
  const char *name = fuzz_param_value_name(p, index);
  if (name != NULL) {
    snprintf(buf, len, "%s", name);
  } else {
    snprintf(buf, len, "%ld", fuzz_param_value(p, index));
  }
}

/* Appends " operand" to buf at *used. */
static void format_operand(fuzz_operand_kind kind, fuzz_arg arg, char *buf, size_t len,
                           size_t *used) {
  char tmp[48]; /* the longest: a corruption's name */
  switch (kind) {
    case FUZZ_OPND_NONE:
    case FUZZ_OPND_KIND_COUNT: return;
    case FUZZ_OPND_SLOT: snprintf(tmp, sizeof tmp, "s%d", arg.a); break;
    case FUZZ_OPND_FIELD: snprintf(tmp, sizeof tmp, "s%d.%d", arg.a, arg.b); break;
    case FUZZ_OPND_GLOBAL: snprintf(tmp, sizeof tmp, "g%d", arg.a); break;
    case FUZZ_OPND_KIND: snprintf(tmp, sizeof tmp, "%s", fuzz_kind_names[arg.a]); break;
    case FUZZ_OPND_SMALL:
    case FUZZ_OPND_LARGE:
    case FUZZ_OPND_INT: snprintf(tmp, sizeof tmp, "%d", arg.a); break;
    case FUZZ_OPND_COLLECT: snprintf(tmp, sizeof tmp, "%s", fuzz_collect_names[arg.a]); break;
    case FUZZ_OPND_PARAM: {
      char value[40]; /* the longest: a zeal value, "slice+cycle+overflow+recheck" */
      format_param_value((fuzz_param)arg.a, (size_t)arg.b, value, sizeof value);
      snprintf(tmp, sizeof tmp, "%s %s", fuzz_param_name((fuzz_param)arg.a), value);
      break;
    }
    case FUZZ_OPND_FAIL:
      if (arg.a == 0)
        snprintf(tmp, sizeof tmp, "off");
      else
        snprintf(tmp, sizeof tmp, "%d", arg.a);
      break;
    case FUZZ_OPND_LIMIT: format_limit((size_t)arg.a, tmp, sizeof tmp); break;
    case FUZZ_OPND_MISUSE: snprintf(tmp, sizeof tmp, "%s", fuzz_misuse_names[arg.a]); break;
    case FUZZ_OPND_DOMAIN: snprintf(tmp, sizeof tmp, "d%d", arg.a); break;
    case FUZZ_OPND_OPTSLOT:
      if (arg.a == FUZZ_NO_SLOT)
        snprintf(tmp, sizeof tmp, "-");
      else
        snprintf(tmp, sizeof tmp, "s%d", arg.a);
      break;
    case FUZZ_OPND_RWORD: snprintf(tmp, sizeof tmp, "r%d.%d", arg.a, arg.b); break;
    case FUZZ_OPND_OFFSET:
      if (arg.a == FUZZ_FROM_START)
        snprintf(tmp, sizeof tmp, "%+d", arg.b);
      else if (arg.b == 0)
        snprintf(tmp, sizeof tmp, "end");
      else
        snprintf(tmp, sizeof tmp, "end%+d", arg.b);
      break;
    case FUZZ_OPND_WORD: snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)arg.word); break;
    case FUZZ_OPND_CORRUPTION: snprintf(tmp, sizeof tmp, "%s", fuzz_corruption_names[arg.a]); break;
    case FUZZ_OPND_BODY: snprintf(tmp, sizeof tmp, "%d", arg.a); break;
    case FUZZ_OPND_TUNABLE: snprintf(tmp, sizeof tmp, "p%d", arg.a); break;
    case FUZZ_OPND_PARAMS: snprintf(tmp, sizeof tmp, "%d", arg.a); break;
  }
  int n = snprintf(buf + *used, len - *used, " %s", tmp);
  if (n > 0) *used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

const char *fuzz_op_format(const fuzz_op *op, char *buf, size_t buf_len) {
  const fuzz_op_info *info = &fuzz_op_table[op->code];
  int n = snprintf(buf, buf_len, "%s", info->mnemonic);
  size_t used = n > 0 && (size_t)n < buf_len ? (size_t)n : 0;
  for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) {
    format_operand(info->operands[i], op->args[i], buf, buf_len, &used);
  }
  return buf;
}

/* A field operand past the end of its slot's block (shapes.h), as bytes may hold it: written
 * `sN.F!`, which the assembler takes as meant (fuzz_assemble). `operand` counts the operands
 * from 0; the line has room for the mark (FUZZ_OP_TEXT_MAX leaves it). */
static void mark_unchecked(char *line, int operand) {
  char *p = line + strspn(line, " ");  /* past the indent: the mnemonic */
  for (int k = 0; k <= operand; k++) { /* to the operand's token */
    p += strcspn(p, " ");
    if (*p == '\0') return;
    p++;
  }
  char *end = p + strcspn(p, " ");
  memmove(end + 1, end, strlen(end) + 1);
  *end = '!';
}

size_t fuzz_print_program(FILE *out, const fuzz_opset *set, const uint8_t *data, size_t size,
                          int numbered) {
  fuzz_decoder dec;
  fuzz_op op;
  char line[FUZZ_OP_TEXT_MAX + 2 * FUZZ_BODY_DEPTH + 1]; /* + 1: the `!` of mark_unchecked */
  fuzz_shapes shapes;
  fuzz_shapes_init(&shapes);
  fuzz_decoder_init(&dec, set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    /* A finalizer body's ops are indented under their fin_do, two blanks a level. */
    int indent = 2 * op.depth;
    fuzz_op_format(&op, line + indent, sizeof line - (size_t)indent);
    memset(line, ' ', (size_t)indent);
    int operand;
    fuzz_shape shape;
    if (fuzz_shapes_field_past_end(&shapes, &op, &operand, &shape)) mark_unchecked(line, operand);
    fuzz_shapes_step(&shapes, &op);
    if (numbered) {
      fprintf(out, "%-28s # op %zu\n", line, op.index);
    } else {
      fprintf(out, "%s\n", line);
    }
  }
  return dec.index;
}

/* ---- Assembling ---------------------------------------------------------------------------- */

/* The line being assembled: tokens are runs of non-blank characters before any '#'. */
typedef struct line_cursor {
  const char *text; /* the line, not NUL-terminated */
  size_t len;
  size_t pos;
  size_t line_no;
  fuzz_text_error *err;
  size_t field_col; /* the column of this line's field operand, 0 if none */
  int unchecked;    /* its field was written sN.F!: meant even past the block's end */
} line_cursor;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The next token of the line; 0 when the line (or its code part) is done. */
static int next_token(line_cursor *lc, const char **tok, size_t *tok_len, size_t *col) {
  while (lc->pos < lc->len && is_blank(lc->text[lc->pos])) lc->pos++;
  if (lc->pos >= lc->len || lc->text[lc->pos] == '#') return 0;
  size_t start = lc->pos;
  while (lc->pos < lc->len && !is_blank(lc->text[lc->pos]) && lc->text[lc->pos] != '#') lc->pos++;
  *tok = lc->text + start;
  *tok_len = lc->pos - start;
  *col = start + 1;
  return 1;
}

static int fail_at(line_cursor *lc, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(line_cursor *lc, size_t col, const char *fmt, ...) {
  lc->err->line = lc->line_no;
  lc->err->column = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lc->err->message, sizeof lc->err->message, fmt, ap);
  va_end(ap);
  return 0;
}

static int token_is(const char *tok, size_t len, const char *word) {
  return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* A decimal number with no sign and no leading zeros (so the text is canonical); -1 if not. */
static long parse_decimal(const char *s, size_t len) {
  if (len == 0 || len > 9) return -1;
  if (len > 1 && s[0] == '0') return -1;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* "sN" with N < limit, prefix 's' or 'g'. */
static int parse_indexed(const char *tok, size_t len, char prefix, int limit, int *out) {
  if (len < 2 || tok[0] != prefix) return 0;
  long v = parse_decimal(tok + 1, len - 1);
  if (v < 0 || v >= limit) return 0;
  *out = (int)v;
  return 1;
}

static int parse_word(const char *tok, size_t len, const char *const *names, int count, int *out) {
  for (int i = 0; i < count; i++) {
    if (token_is(tok, len, names[i])) {
      *out = i;
      return 1;
    }
  }
  return 0;
}

/* A refused token is quoted first in its message, whole: the operand's description comes after
 * it, so however long that is, the token is never what gets cut. One longer than
 * FUZZ_TEXT_TOKEN_MAX (never a valid token) is quoted that far and says its length. */
typedef struct quoted {
  char text[FUZZ_TEXT_TOKEN_MAX + 48];
} quoted;

static quoted quote(const char *tok, size_t len) {
  quoted q;
  if (len <= FUZZ_TEXT_TOKEN_MAX) {
    snprintf(q.text, sizeof q.text, "'%.*s'", (int)len, tok);
  } else {
    snprintf(q.text, sizeof q.text, "'%.*s...' (a %zu-character token)", FUZZ_TEXT_TOKEN_MAX, tok,
             len);
  }
  return q;
}

static int parse_param(line_cursor *lc, const char *tok, size_t len, size_t col, fuzz_arg *arg) {
  int p = -1;
  for (int i = 0; i < FUZZ_PARAM_COUNT; i++) {
    if (token_is(tok, len, fuzz_param_name((fuzz_param)i))) p = i;
  }
  if (p < 0) {
    return fail_at(lc, col,
                   "unknown parameter %s (percent, mintrigger, sweep, markstack, batch, keep, "
                   "marking, markslice, compact)",
                   quote(tok, len).text);
  }
  const char *vtok;
  size_t vlen, vcol;
  if (!next_token(lc, &vtok, &vlen, &vcol)) {
    return fail_at(lc, lc->pos + 1, "missing the value of parameter %s",
                   fuzz_param_name((fuzz_param)p));
  }
  long want = parse_decimal(vtok, vlen);
  size_t n = fuzz_param_value_count((fuzz_param)p);
  for (size_t i = 0; i < n; i++) {
    const char *name = fuzz_param_value_name((fuzz_param)p, i);
    if (name != NULL ? token_is(vtok, vlen, name)
                     : want >= 0 && fuzz_param_value((fuzz_param)p, i) == want) {
      arg->a = p;
      arg->b = (int)i;
      return 1;
    }
  }
  char choices[320];
  size_t used = 0;
  for (size_t i = 0; i < n && used < sizeof choices; i++) {
    char v[40];
    format_param_value((fuzz_param)p, i, v, sizeof v);
    int k = snprintf(choices + used, sizeof choices - used, "%s%s", i ? ", " : "", v);
    if (k > 0) used += (size_t)k;
  }
  return fail_at(lc, vcol, "%s cannot be %s (one of: %s)", fuzz_param_name((fuzz_param)p),
                 quote(vtok, vlen).text, choices);
}

static int parse_limit(const char *tok, size_t len, int *out) {
  for (size_t i = 0; i < fuzz_limit_count(); i++) {
    char name[16];
    format_limit(i, name, sizeof name);
    if (token_is(tok, len, name)) {
      *out = (int)i;
      return 1;
    }
  }
  return 0;
}

/* "sN.F" (prefix 's' or 'r') with N < limit_a, F < limit_b, into a and b. */
static int parse_dotted(const char *tok, size_t len, char prefix, int limit_a, int limit_b,
                        fuzz_arg *arg) {
  const char *dot = memchr(tok, '.', len);
  if (dot == NULL) return 0;
  size_t head_len = (size_t)(dot - tok);
  long v = parse_decimal(dot + 1, len - head_len - 1);
  if (v < 0 || v >= limit_b || !parse_indexed(tok, head_len, prefix, limit_a, &arg->a)) return 0;
  arg->b = (int)v;
  return 1;
}

/* "+N" or "-N" (the sign is required; zero is "+0"). */
static int parse_signed(const char *tok, size_t len, long *out) {
  if (len < 2 || (tok[0] != '+' && tok[0] != '-')) return 0;
  long v = parse_decimal(tok + 1, len - 1);
  if (v < 0 || (tok[0] == '-' && v == 0)) return 0;
  *out = tok[0] == '-' ? -v : v;
  return 1;
}

/* "0x" and 1 to 16 lower-case hex digits, no leading zeros (so the text is canonical). */
static int parse_hex_word(const char *tok, size_t len, uint64_t *out) {
  if (len < 3 || len > 18 || tok[0] != '0' || tok[1] != 'x') return 0;
  if (len > 3 && tok[2] == '0') return 0;
  uint64_t v = 0;
  for (size_t i = 2; i < len; i++) {
    char c = tok[i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return 0;
    v = v << 4 | (uint64_t)digit;
  }
  *out = v;
  return 1;
}

/* OFFSET: "+N"/"-N" from the block's first field, "end", "end+N"/"end-N" from one past its end;
 * only the values an operand byte can encode. */
static int parse_offset(const char *tok, size_t len, fuzz_arg *arg) {
  long v;
  if (len >= 3 && memcmp(tok, "end", 3) == 0) {
    if (len == 3)
      v = 0;
    else if (!parse_signed(tok + 3, len - 3, &v) || v == 0)
      return 0;
    arg->a = FUZZ_FROM_END;
    arg->b = (int)v;
    return v >= FUZZ_OFFSET_END_BYTE - FUZZ_OFFSET_END_ZERO && v <= 255 - FUZZ_OFFSET_END_ZERO;
  }
  if (!parse_signed(tok, len, &v)) return 0;
  arg->a = FUZZ_FROM_START;
  arg->b = (int)v;
  return v >= FUZZ_OFFSET_START_MIN && v < FUZZ_OFFSET_END_BYTE + FUZZ_OFFSET_START_MIN;
}

static int parse_operand(line_cursor *lc, fuzz_operand_kind kind, const char *mnemonic,
                         fuzz_arg *arg) {
  const char *tok;
  size_t len, col;
  if (!next_token(lc, &tok, &len, &col)) {
    return fail_at(lc, lc->pos + 1, "%s: missing operand: %s", mnemonic,
                   fuzz_operand_table[kind].what);
  }
  int ok = 0;
  long v;
  switch (kind) {
    case FUZZ_OPND_NONE:
    case FUZZ_OPND_KIND_COUNT: break;
    case FUZZ_OPND_SLOT: ok = parse_indexed(tok, len, 's', FUZZ_SLOTS, &arg->a); break;
    case FUZZ_OPND_FIELD:
      lc->field_col = col;
      lc->unchecked = len > 0 && tok[len - 1] == '!';
      ok = parse_dotted(tok, len - (size_t)lc->unchecked, 's', FUZZ_SLOTS, FUZZ_FIELDS, arg);
      break;
    case FUZZ_OPND_GLOBAL: ok = parse_indexed(tok, len, 'g', FUZZ_GLOBALS, &arg->a); break;
    case FUZZ_OPND_KIND:
      ok = parse_word(tok, len, fuzz_kind_names, FUZZ_KIND_COUNT, &arg->a);
      break;
    case FUZZ_OPND_SMALL:
      v = parse_decimal(tok, len);
      ok = v >= 1 && v <= FUZZ_SMALL_MAX;
      arg->a = (int)v;
      break;
    case FUZZ_OPND_LARGE:
      v = parse_decimal(tok, len);
      ok = v >= FUZZ_LARGE_MIN && v < FUZZ_LARGE_MIN + FUZZ_LARGE_SPAN;
      arg->a = (int)v;
      break;
    case FUZZ_OPND_INT:
      v = parse_decimal(tok, len);
      ok = v >= 0 && v <= 255;
      arg->a = (int)v;
      break;
    case FUZZ_OPND_COLLECT:
      ok = parse_word(tok, len, fuzz_collect_names, FUZZ_COLLECT_COUNT, &arg->a);
      break;
    case FUZZ_OPND_PARAM: return parse_param(lc, tok, len, col, arg);
    case FUZZ_OPND_FAIL:
      if (token_is(tok, len, "off")) {
        arg->a = 0;
        ok = 1;
      } else {
        v = parse_decimal(tok, len);
        ok = v >= 1 && v <= FUZZ_FAIL_MAX;
        arg->a = (int)v;
      }
      break;
    case FUZZ_OPND_LIMIT: ok = parse_limit(tok, len, &arg->a); break;
    case FUZZ_OPND_MISUSE:
      ok = parse_word(tok, len, fuzz_misuse_names, FUZZ_MISUSE_COUNT, &arg->a);
      break;
    case FUZZ_OPND_DOMAIN: ok = parse_indexed(tok, len, 'd', FUZZ_DOMAINS, &arg->a); break;
    case FUZZ_OPND_OPTSLOT:
      if (token_is(tok, len, "-")) {
        arg->a = FUZZ_NO_SLOT;
        ok = 1;
      } else {
        ok = parse_indexed(tok, len, 's', FUZZ_SLOTS, &arg->a);
      }
      break;
    case FUZZ_OPND_RWORD:
      ok = parse_dotted(tok, len, 'r', FUZZ_RANGES, FUZZ_RANGE_WORDS, arg);
      break;
    case FUZZ_OPND_OFFSET: ok = parse_offset(tok, len, arg); break;
    case FUZZ_OPND_WORD: ok = parse_hex_word(tok, len, &arg->word); break;
    case FUZZ_OPND_CORRUPTION:
      ok = parse_word(tok, len, fuzz_corruption_names, FUZZ_CORRUPTION_COUNT, &arg->a);
      break;
    case FUZZ_OPND_BODY:
      v = parse_decimal(tok, len);
      ok = v >= 0 && v <= FUZZ_BODY_MAX;
      arg->a = (int)v;
      break;
    case FUZZ_OPND_TUNABLE: ok = parse_indexed(tok, len, 'p', FUZZ_TUNABLE_COUNT, &arg->a); break;
    case FUZZ_OPND_PARAMS:
      v = parse_decimal(tok, len);
      ok = v >= 0 && v < FUZZ_PARAMS_ROWS;
      arg->a = (int)v;
      break;
  }
  if (!ok) {
    return fail_at(lc, col, "%s: %s is not %s", mnemonic, quote(tok, len).text,
                   fuzz_operand_table[kind].what);
  }
  return 1;
}

/* Where each assembled op came from, for the checks that need the whole program first. */
typedef struct op_place {
  size_t line, field_col;
  int unchecked;
} op_place;

typedef struct op_places {
  op_place *items;
  size_t count, capacity;
} op_places;

static int assemble_line(line_cursor *lc, const fuzz_opset *set, fuzz_buf *out, op_places *places) {
  const char *tok;
  size_t len, col;
  if (!next_token(lc, &tok, &len, &col)) return 1; /* blank or comment */
  int code = -1;
  for (int i = 0; i < FUZZ_OP_COUNT; i++) {
    if (token_is(tok, len, fuzz_op_table[i].mnemonic)) code = i;
  }
  if (code < 0) return fail_at(lc, col, "unknown op %s", quote(tok, len).text);
  if (fuzz_opset_byte(set, (fuzz_opcode)code) < 0) {
    return fail_at(lc, col, "op %s is not one of the %s target's ops", quote(tok, len).text,
                   set->name);
  }
  fuzz_op op = {.code = (fuzz_opcode)code};
  const fuzz_op_info *info = &fuzz_op_table[code];
  for (int i = 0; i < FUZZ_MAX_OPERANDS && info->operands[i] != FUZZ_OPND_NONE; i++) {
    if (!parse_operand(lc, info->operands[i], info->mnemonic, &op.args[i])) return 0;
  }
  if (next_token(lc, &tok, &len, &col)) {
    return fail_at(lc, col, "%s: unexpected %s after the operands", info->mnemonic,
                   quote(tok, len).text);
  }
  uint8_t bytes[FUZZ_OP_MAX_BYTES];
  size_t n = fuzz_op_encode(set, &op, bytes);
  if (!fuzz_buf_append(out, bytes, n)) return fail_at(lc, 1, "out of memory");
  if (places->count == places->capacity) {
    size_t capacity = places->capacity ? 2 * places->capacity : 64;
    op_place *items = realloc(places->items, capacity * sizeof *items);
    if (items == NULL) return fail_at(lc, 1, "out of memory");
    places->items = items;
    places->capacity = capacity;
  }
  places->items[places->count++] = (op_place){lc->line_no, lc->field_col, lc->unchecked};
  return 1;
}

/* A field operand past the end of the block its slot is known to hold (shapes.h) does nothing
 * when it runs: in text, a mistake, unless written sN.F! (as the printer writes what bytes
 * hold). The program's ops from `from` on, decoded as the target reads them. */
static int check_fields(const fuzz_opset *set, const fuzz_buf *out, size_t from,
                        const op_places *places, fuzz_text_error *err) {
  if (out->size == from) return 1; /* no op (and perhaps no buffer yet) */
  fuzz_shapes shapes;
  fuzz_shapes_init(&shapes);
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, set, out->data + from, out->size - from);
  while (fuzz_program_next(&dec, &op) && op.index < places->count) {
    int operand;
    fuzz_shape shape;
    const op_place *at = &places->items[op.index];
    if (!at->unchecked && fuzz_shapes_field_past_end(&shapes, &op, &operand, &shape)) {
      const fuzz_arg *f = &op.args[operand];
      err->line = at->line;
      err->column = at->field_col;
      snprintf(err->message, sizeof err->message,
               "%s: field %d of s%d is past the end of its block: s%d holds the %zu-field block "
               "made at line %zu (fields 0..%zu), and the op would do nothing (write s%d.%d! if "
               "that is what you mean)",
               fuzz_op_table[op.code].mnemonic, f->b, f->a, f->a, shape.fields,
               places->items[shape.made_by].line, shape.fields - 1, f->a, f->b);
      return 0;
    }
    fuzz_shapes_step(&shapes, &op);
  }
  return 1;
}

/* Ops and their operands are printable ASCII; a comment is prose and may hold any other byte
 * too (UTF-8 arrows, accents), but no control character besides tab and CR. */
static int byte_allowed(unsigned char c, int in_comment) {
  if (c == '\t' || c == '\r') return 1;
  if (c < 0x20 || c == 0x7f) return 0;
  return c < 0x7f || in_comment;
}

int fuzz_assemble(const fuzz_opset *set, const char *text, size_t len, fuzz_buf *out,
                  fuzz_text_error *err) {
  memset(err, 0, sizeof *err);
  if (set == NULL) set = &fuzz_opset_graph;
  size_t line_no = 1;
  size_t pos = 0;
  size_t from = out->size;
  op_places places = {0};
  while (pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t line_len = nl ? (size_t)(nl - (text + pos)) : len - pos;
    const char *hash = memchr(text + pos, '#', line_len);
    size_t code_len = hash ? (size_t)(hash - (text + pos)) : line_len;
    for (size_t i = 0; i < line_len; i++) {
      unsigned char c = (unsigned char)text[pos + i];
      if (!byte_allowed(c, i >= code_len)) {
        err->line = line_no;
        err->column = i + 1;
        snprintf(err->message, sizeof err->message,
                 "unexpected byte 0x%02x (ops are ASCII; comments may hold any byte but a "
                 "control character)",
                 c);
        free(places.items);
        return 0;
      }
    }
    line_cursor lc = {text + pos, line_len, 0, line_no, err, 0, 0};
    if (!assemble_line(&lc, set, out, &places)) {
      free(places.items);
      return 0;
    }
    pos += line_len + (nl ? 1 : 0);
    line_no++;
  }
  int ok = check_fields(set, out, from, &places, err);
  free(places.items);
  return ok;
}

int fuzz_assemble_file(const fuzz_opset *set, const char *path, fuzz_buf *out,
                       fuzz_text_error *err) {
  memset(err, 0, sizeof *err);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err->message, sizeof err->message, "cannot read %s: %s", path, strerror(errno));
    return 0;
  }
  fuzz_buf text = {0};
  char chunk[4096];
  size_t n;
  int appended = 1;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    appended = fuzz_buf_append(&text, chunk, n) && appended;
  }
  const char *why = ferror(f) ? strerror(errno) : appended ? NULL : "out of memory";
  fclose(f);
  if (why != NULL) {
    snprintf(err->message, sizeof err->message, "cannot read %s: %s", path, why);
    fuzz_buf_free(&text);
    return 0;
  }
  int ok = fuzz_assemble(set, (const char *)text.data, text.size, out, err);
  fuzz_buf_free(&text);
  return ok;
}

int fuzz_text_has_control_byte(const uint8_t *data, size_t size) {
  for (size_t i = 0; i < size; i++) {
    if (data[i] != '\n' && !byte_allowed(data[i], 1)) return 1;
  }
  return 0;
}

int fuzz_looks_like_text(const uint8_t *data, size_t size) {
  if (fuzz_text_has_control_byte(data, size)) return 0;
  size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n')) i++;
  if (i == size) return 1; /* empty or blank: the empty program either way */
  if (data[i] == '#') return 1;
  size_t start = i;
  while (i < size && (isalnum(data[i]) || data[i] == '_')) i++;
  for (int k = 0; k < FUZZ_OP_COUNT; k++) {
    if (token_is((const char *)data + start, i - start, fuzz_op_table[k].mnemonic)) return 1;
  }
  return 0;
}
