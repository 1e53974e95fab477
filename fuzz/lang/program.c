/* The op table, the operand encodings and the decoder. */
#include "fuzz/lang/program.h"

#include <stdlib.h>
#include <string.h>

/* ---- Tables -------------------------------------------------------------------------------- */

const fuzz_op_info fuzz_op_table[FUZZ_OP_COUNT] = {
#define FUZZ_OP_ROW(name, mnemonic, k1, k2, k3, what) \
  [FUZZ_OP_##name] = {mnemonic, {FUZZ_OPND_##k1, FUZZ_OPND_##k2, FUZZ_OPND_##k3}, what},
    FUZZ_OPS(FUZZ_OP_ROW)
#undef FUZZ_OP_ROW
};

const fuzz_operand_info fuzz_operand_table[FUZZ_OPND_KIND_COUNT] = {
#define FUZZ_OPND_ROW(name, bytes, what) [FUZZ_OPND_##name] = {bytes, what},
    FUZZ_OPERAND_KINDS(FUZZ_OPND_ROW)
#undef FUZZ_OPND_ROW
};

const char *const fuzz_kind_names[FUZZ_KIND_COUNT] = {"scan", "raw", "custom"};
const char *const fuzz_collect_names[FUZZ_COLLECT_COUNT] = {"slice", "major", "full", "start"};
const char *const fuzz_misuse_names[FUZZ_MISUSE_COUNT] = {
    [FUZZ_MISUSE_ALLOC0] = "alloc0",
    [FUZZ_MISUSE_TOO_LARGE] = "too-large",
    [FUZZ_MISUSE_BAD_TAG] = "bad-tag",
    [FUZZ_MISUSE_CUSTOM_TAG] = "custom-tag",
    [FUZZ_MISUSE_PIN_NULL] = "pin-null",
    [FUZZ_MISUSE_PIN_INT] = "pin-int",
    [FUZZ_MISUSE_UNPIN_INT] = "unpin-int",
    [FUZZ_MISUSE_SCANNER_REMOVE] = "scanner-remove",
    [FUZZ_MISUSE_REGISTER_NULL] = "register-null",
    [FUZZ_MISUSE_BAD_PARAM] = "bad-param",
    [FUZZ_MISUSE_UNKNOWN_PARAM] = "unknown-param",
    [FUZZ_MISUSE_WEAK_GET_INT] = "weak-get-int",
    [FUZZ_MISUSE_EPHE_KEY_INT] = "ephe-key-int",
    [FUZZ_MISUSE_WEAK_TOO_LARGE] = "weak-too-large",
    [FUZZ_MISUSE_IN_COLLECTION] = "in-collection",
    [FUZZ_MISUSE_EPHE_GET_SCAN] = "ephe-get-scan",
    [FUZZ_MISUSE_EPHE_SET_SCAN] = "ephe-set-scan",
    [FUZZ_MISUSE_WEAK_GET_SCAN] = "weak-get-scan",
    [FUZZ_MISUSE_WEAK_SET_SCAN] = "weak-set-scan",
    [FUZZ_MISUSE_FIN_SET_INT] = "fin-set-int",
    [FUZZ_MISUSE_CUSTOM_TOO_LARGE] = "custom-too-large",
    [FUZZ_MISUSE_RANGE_REMOVE] = "range-remove",
    [FUZZ_MISUSE_SCANNER_USER] = "scanner-user",
    [FUZZ_MISUSE_RANGE_SHORT] = "range-short",
};
const char *const fuzz_corruption_names[FUZZ_CORRUPTION_COUNT] = {
#define FUZZ_CORRUPTION_NAME(name, text) [FUZZ_CORRUPT_##name] = text,
    FUZZ_CORRUPTIONS(FUZZ_CORRUPTION_NAME)
#undef FUZZ_CORRUPTION_NAME
};

/* Parameter values: the defaults' neighbourhood and the edges (a 4-entry mark stack, a 1-word
 * sweep budget, pacing that triggers on every allocation slow path or never). */
static const long percent_values[] = {0, 1, 10, 50, 100, 200, 1000, -1 /* off */};
static const long mintrigger_values[] = {0, 16, 64, 256, 1024, 8192, 262144};
static const long sweep_values[] = {1, 4, 16, 64, 256, 1024, 16384};
static const long markstack_values[] = {4, 5, 8, 16, 64, 1024, 65536};
static const long batch_values[] = {1, 2, 4, 16};
static const long keep_values[] = {0, 1, 4, 64};
/* marking: gc_marking_mode's order is not ours to rely on; the names are what gc_set_params
 * reads. markslice: from a slice per few blocks to the default and beyond. */
static const long marking_values[] = {0, 1};
static const char *const marking_names[] = {"stw", "incremental"};
static const long markslice_values[] = {1, 16, 256, 4096, 65536};
/* compact: off (-1), always (0: any free slot and a class in more pools than it needs), the
 * middle and the edge of never (100: no slot may be free, so it never compacts). */
static const long compact_values[] = {-1, 0, 10, 50, 90, 100};
/* The limits that were constants, at their corners (gc/README.md, "Parameters"). */
static const long rechecks_values[] = {0, 1, 2, 8, 64};
static const long markbuf_values[] = {1, 2, 3, 16, 512};
static const long slicecap_values[] = {1, 2, 32, 1024};
/* zeal: every mode alone, the pairs that meet in one mark, and the first four together (gc.h,
 * GC_ZEALS). Modes added later are appended, so the bytes of older inputs keep their modes. */
static const char *const zeal_names[] = {"none",           "slice",
                                         "cycle",          "overflow",
                                         "recheck",        "slice+overflow",
                                         "slice+recheck",  "overflow+recheck",
                                         "cycle+overflow", "slice+cycle+overflow+recheck",
                                         "store",          "store+recheck",
                                         "domains",        "finalizer",
                                         "domains+slice"};
static const long zeal_values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
_Static_assert(sizeof zeal_names / sizeof zeal_names[0] == sizeof zeal_values / sizeof(long),
               "a name for every zeal value");

static const struct {
  const char *name;
  const long *values;
  size_t count;
  const char *const *names; /* the values' names, or NULL: numbers (percent's -1 is off) */
} param_table[FUZZ_PARAM_COUNT] = {
    [FUZZ_PARAM_PERCENT] = {"percent", percent_values, sizeof percent_values / sizeof(long)},
    [FUZZ_PARAM_MINTRIGGER] = {"mintrigger", mintrigger_values,
                               sizeof mintrigger_values / sizeof(long)},
    [FUZZ_PARAM_SWEEP] = {"sweep", sweep_values, sizeof sweep_values / sizeof(long)},
    [FUZZ_PARAM_MARKSTACK] = {"markstack", markstack_values,
                              sizeof markstack_values / sizeof(long)},
    [FUZZ_PARAM_BATCH] = {"batch", batch_values, sizeof batch_values / sizeof(long)},
    [FUZZ_PARAM_KEEP] = {"keep", keep_values, sizeof keep_values / sizeof(long)},
    [FUZZ_PARAM_MARKING] = {"marking", marking_values, sizeof marking_values / sizeof(long),
                            marking_names},
    [FUZZ_PARAM_MARKSLICE] = {"markslice", markslice_values,
                              sizeof markslice_values / sizeof(long)},
    [FUZZ_PARAM_COMPACT] = {"compact", compact_values, sizeof compact_values / sizeof(long)},
    [FUZZ_PARAM_RECHECKS] = {"rechecks", rechecks_values, sizeof rechecks_values / sizeof(long)},
    [FUZZ_PARAM_MARKBUF] = {"markbuf", markbuf_values, sizeof markbuf_values / sizeof(long)},
    [FUZZ_PARAM_SLICECAP] = {"slicecap", slicecap_values, sizeof slicecap_values / sizeof(long)},
    [FUZZ_PARAM_ZEAL] = {"zeal", zeal_values, sizeof zeal_values / sizeof(long), zeal_names},
};

const char *fuzz_param_name(fuzz_param p) { return param_table[p].name; }
size_t fuzz_param_value_count(fuzz_param p) { return param_table[p].count; }
long fuzz_param_value(fuzz_param p, size_t i) { return param_table[p].values[i]; }
const char *fuzz_param_value_name(fuzz_param p, size_t i) {
  if (param_table[p].names != NULL) return param_table[p].names[i];
  return (p == FUZZ_PARAM_PERCENT || p == FUZZ_PARAM_COMPACT) && param_table[p].values[i] < 0
             ? "off"
             : NULL;
}

/* Heap limits in KiB; 0 is off. 32 KiB is one pool: the first pool fits, the second does not. */
static const size_t limit_kib[] = {0, 32, 64, 96, 128, 256, 512, 1024, 4096};
size_t fuzz_limit_count(void) { return sizeof limit_kib / sizeof limit_kib[0]; }
size_t fuzz_limit_bytes(size_t i) { return limit_kib[i] * 1024; }

/* ---- Decoding ------------------------------------------------------------------------------ */

/* ---- Op sets ------------------------------------------------------------------------------- */

/* The ops of one thread: every op but the schedule-only ones, in table order (so the ops before
 * pct keep the bytes they had when the set was "every op before pct"), those after them last. */
static const fuzz_opcode graph_ops[] = {
    FUZZ_OP_ALLOC,  FUZZ_OP_ALLOC_LARGE, FUZZ_OP_STORE,      FUZZ_OP_STORE_IMM,  FUZZ_OP_LOAD,
    FUZZ_OP_DROP,   FUZZ_OP_COPY,        FUZZ_OP_PUSH,       FUZZ_OP_POP,        FUZZ_OP_ROOT,
    FUZZ_OP_UNROOT, FUZZ_OP_COLLECT,     FUZZ_OP_PARAM,      FUZZ_OP_FAIL,       FUZZ_OP_LIMIT,
    FUZZ_OP_PIN,    FUZZ_OP_UNPIN,       FUZZ_OP_MISUSE,     FUZZ_OP_SPAWN,      FUZZ_OP_TERMINATE,
    FUZZ_OP_ON,     FUZZ_OP_FIN,         FUZZ_OP_UNFIN,      FUZZ_OP_RANGE,      FUZZ_OP_RANGE_INT,
    FUZZ_OP_BLOCK,  FUZZ_OP_UNBLOCK,     FUZZ_OP_RANGE_WORD, FUZZ_OP_RANGE_POOL, FUZZ_OP_CORRUPT,
    FUZZ_OP_FIN_DO, FUZZ_OP_SELF,        FUZZ_OP_MARK_SLICE, FUZZ_OP_COMPACT,    FUZZ_OP_PARAMS,
};
/* The ops after mark_slice up to ephe_set (tune, weak, weak_get, ephe, ephe_get, weak_set,
 * ephe_set) are the backends' (fuzz/oracle runs them through fuzz/backend/backend.h); gcfuzz's
 * own driver does not run them yet. compact and params, after them, are everyone's. */
enum { BACKEND_ONLY_OPS = FUZZ_OP_EPHE_SET - FUZZ_OP_MARK_SLICE };
_Static_assert(sizeof graph_ops / sizeof graph_ops[0] == FUZZ_OP_COUNT - 2 - BACKEND_ONLY_OPS,
               "graph_ops: every op but pct and choose and the backends' own; a new op goes here "
               "unless schedule-only");
const fuzz_opset fuzz_opset_graph = {"graph", graph_ops, sizeof graph_ops / sizeof graph_ops[0]};

/* Conservative roots: blocks to point at, words to point with, collections in between. */
static const fuzz_opcode roots_ops[] = {
    FUZZ_OP_ALLOC,      FUZZ_OP_ALLOC_LARGE, FUZZ_OP_STORE,     FUZZ_OP_STORE_IMM,
    FUZZ_OP_LOAD,       FUZZ_OP_DROP,        FUZZ_OP_COPY,      FUZZ_OP_PUSH,
    FUZZ_OP_POP,        FUZZ_OP_COLLECT,     FUZZ_OP_PARAM,     FUZZ_OP_PIN,
    FUZZ_OP_UNPIN,      FUZZ_OP_RANGE,       FUZZ_OP_RANGE_INT, FUZZ_OP_RANGE_WORD,
    FUZZ_OP_RANGE_POOL, FUZZ_OP_MARK_SLICE,  FUZZ_OP_COMPACT,   FUZZ_OP_PARAMS,
};
const fuzz_opset fuzz_opset_roots = {"roots", roots_ops, sizeof roots_ops / sizeof roots_ops[0]};

/* Several domains on threads: every op but the two whose checks assume one thread (an injected
 * failure and a heap limit are heap-wide, so which thread's allocation fails depends on the
 * interleaving), params (its catalogue sets both, and its check that a refused string changes
 * nothing reads the configuration another domain's param may change meanwhile) and corrupt (it
 * breaks the heap for a moment, which no other thread may see),
 * plus the scheduling ops. compact is here: a domain it stops is parked at a safepoint, possibly
 * inside an op, and the driver and its model hold no block address in a C variable across one
 * (they name blocks by model ids and read the address when they use it; gc.h's rule for several
 * domains), so what the compaction moves is what the collector forwards and the model follows.
 * Appended last, so the ops before it keep their bytes. */
static const fuzz_opcode schedule_ops[] = {
    FUZZ_OP_ALLOC,      FUZZ_OP_ALLOC_LARGE, FUZZ_OP_STORE,     FUZZ_OP_STORE_IMM, FUZZ_OP_LOAD,
    FUZZ_OP_DROP,       FUZZ_OP_COPY,        FUZZ_OP_PUSH,      FUZZ_OP_POP,       FUZZ_OP_ROOT,
    FUZZ_OP_UNROOT,     FUZZ_OP_COLLECT,     FUZZ_OP_PARAM,     FUZZ_OP_PIN,       FUZZ_OP_UNPIN,
    FUZZ_OP_MISUSE,     FUZZ_OP_SPAWN,       FUZZ_OP_TERMINATE, FUZZ_OP_ON,        FUZZ_OP_FIN,
    FUZZ_OP_UNFIN,      FUZZ_OP_RANGE,       FUZZ_OP_RANGE_INT, FUZZ_OP_BLOCK,     FUZZ_OP_UNBLOCK,
    FUZZ_OP_RANGE_WORD, FUZZ_OP_RANGE_POOL,  FUZZ_OP_PCT,       FUZZ_OP_CHOOSE,    FUZZ_OP_FIN_DO,
    FUZZ_OP_SELF,       FUZZ_OP_MARK_SLICE,  FUZZ_OP_COMPACT,
};
_Static_assert(sizeof schedule_ops / sizeof schedule_ops[0] ==
                   sizeof graph_ops / sizeof graph_ops[0] - 4 + 2,
               "schedule_ops: graph's ops but fail, limit, corrupt and params, plus pct and "
               "choose");
const fuzz_opset fuzz_opset_schedule = {"schedule", schedule_ops,
                                        sizeof schedule_ops / sizeof schedule_ops[0]};

static const fuzz_opset *const all_opsets[] = {&fuzz_opset_graph, &fuzz_opset_roots,
                                               &fuzz_opset_schedule};
const char fuzz_opset_names[] = "graph, roots, schedule";

const fuzz_opset *fuzz_opset_find(const char *name) {
  for (size_t i = 0; i < sizeof all_opsets / sizeof all_opsets[0]; i++) {
    if (strcmp(all_opsets[i]->name, name) == 0) return all_opsets[i];
  }
  return NULL;
}

int fuzz_op_runs_in_body(fuzz_opcode code) {
  switch (code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE:
    case FUZZ_OP_STORE:
    case FUZZ_OP_STORE_IMM:
    case FUZZ_OP_LOAD:
    case FUZZ_OP_DROP:
    case FUZZ_OP_COPY:
    case FUZZ_OP_ROOT:
    case FUZZ_OP_UNROOT:
    case FUZZ_OP_COLLECT:
    case FUZZ_OP_PIN:
    case FUZZ_OP_UNPIN:
    case FUZZ_OP_FIN:
    case FUZZ_OP_UNFIN:
    case FUZZ_OP_RANGE:
    case FUZZ_OP_RANGE_INT:
    case FUZZ_OP_RANGE_WORD:
    case FUZZ_OP_RANGE_POOL:
    case FUZZ_OP_FIN_DO:
    case FUZZ_OP_SELF:
    case FUZZ_OP_WEAK:
    case FUZZ_OP_WEAK_GET:
    case FUZZ_OP_EPHE:
    case FUZZ_OP_EPHE_GET: return 1;
    default: return 0;
  }
}

int fuzz_opset_byte(const fuzz_opset *set, fuzz_opcode code) {
  if (set->ops == NULL) return (size_t)code < set->count ? (int)code : -1;
  for (size_t i = 0; i < set->count; i++) {
    if (set->ops[i] == code) return (int)i;
  }
  return -1;
}

/* ---- Decoding ------------------------------------------------------------------------------ */

static uint8_t byte_at(const fuzz_decoder *dec, size_t pos) {
  return pos < dec->size ? dec->data[pos] : 0;
}

static fuzz_arg decode_operand(fuzz_operand_kind kind, const uint8_t *b) {
  fuzz_arg arg = {0, 0, 0};
  switch (kind) {
    case FUZZ_OPND_NONE: break;
    case FUZZ_OPND_SLOT: arg.a = b[0] % FUZZ_SLOTS; break;
    case FUZZ_OPND_FIELD:
      arg.a = b[0] % FUZZ_SLOTS;
      arg.b = b[1] % FUZZ_FIELDS;
      break;
    case FUZZ_OPND_GLOBAL: arg.a = b[0] % FUZZ_GLOBALS; break;
    case FUZZ_OPND_KIND: arg.a = b[0] % FUZZ_KIND_COUNT; break;
    case FUZZ_OPND_SMALL: arg.a = 1 + b[0] % FUZZ_SMALL_MAX; break;
    case FUZZ_OPND_LARGE:
      arg.a = FUZZ_LARGE_MIN + (int)(((unsigned)b[0] | (unsigned)b[1] << 8) % FUZZ_LARGE_SPAN);
      break;
    case FUZZ_OPND_INT: arg.a = b[0]; break;
    case FUZZ_OPND_COLLECT: arg.a = b[0] % FUZZ_COLLECT_COUNT; break;
    case FUZZ_OPND_PARAM:
      arg.a = b[0] % FUZZ_PARAM_COUNT;
      arg.b = (int)(b[1] % param_table[arg.a].count);
      break;
    case FUZZ_OPND_FAIL: arg.a = b[0] % (FUZZ_FAIL_MAX + 1); break;
    case FUZZ_OPND_LIMIT: arg.a = (int)(b[0] % fuzz_limit_count()); break;
    case FUZZ_OPND_MISUSE: arg.a = b[0] % FUZZ_MISUSE_COUNT; break;
    case FUZZ_OPND_DOMAIN: arg.a = b[0] % FUZZ_DOMAINS; break;
    case FUZZ_OPND_OPTSLOT: arg.a = b[0] % (FUZZ_SLOTS + 1); break; /* FUZZ_NO_SLOT last */
    case FUZZ_OPND_RWORD:
      arg.a = (b[0] / FUZZ_RANGE_WORDS) % FUZZ_RANGES;
      arg.b = b[0] % FUZZ_RANGE_WORDS;
      break;
    case FUZZ_OPND_OFFSET:
      if (b[0] < FUZZ_OFFSET_END_BYTE) {
        arg.a = FUZZ_FROM_START;
        arg.b = b[0] + FUZZ_OFFSET_START_MIN;
      } else {
        arg.a = FUZZ_FROM_END;
        arg.b = b[0] - FUZZ_OFFSET_END_ZERO;
      }
      break;
    case FUZZ_OPND_WORD:
      for (int i = FUZZ_OPERAND_MAX_BYTES - 1; i >= 0; i--) arg.word = arg.word << 8 | b[i];
      break;
    case FUZZ_OPND_CORRUPTION: arg.a = b[0] % FUZZ_CORRUPTION_COUNT; break;
    case FUZZ_OPND_BODY: arg.a = b[0] % (FUZZ_BODY_MAX + 1); break;
    case FUZZ_OPND_TUNABLE: arg.a = b[0] % FUZZ_TUNABLE_COUNT; break;
    case FUZZ_OPND_PARAMS: arg.a = b[0] % FUZZ_PARAMS_ROWS; break;
    case FUZZ_OPND_KIND_COUNT: break;
  }
  return arg;
}

/* The op just decoded takes one op of every open body (closing those it fills); a fin_do then
 * opens its own, as long as the input, the enclosing body and the depth allow. */
static void track_bodies(fuzz_decoder *dec, fuzz_op *op) {
  op->depth = dec->depth;
  op->body = 0;
  for (int k = 0; k < dec->depth; k++) dec->rem[k]--;
  while (dec->depth > 0 && dec->rem[dec->depth - 1] == 0) dec->depth--;
  if (op->code != FUZZ_OP_FIN_DO || op->depth >= FUZZ_BODY_DEPTH) return;
  int n = op->args[1].a;
  if (dec->depth > 0 && dec->rem[dec->depth - 1] < n) n = dec->rem[dec->depth - 1];
  op->body = n; /* the input may end first: the body is then what there is */
  if (n > 0) dec->rem[dec->depth++] = n;
}

void fuzz_decoder_init_body(fuzz_decoder *dec, const fuzz_opset *set, const uint8_t *data,
                            size_t size, size_t pos, size_t index, int depth, int count) {
  fuzz_decoder_init(dec, set, data, size);
  dec->index = index;
  if (count <= 0 || depth < 1 || depth > FUZZ_BODY_DEPTH) { /* no body: nothing to decode */
    dec->pos = size;
    return;
  }
  dec->pos = pos;
  /* The bodies around this one stay open throughout: only this one's count ends the walk. */
  for (int k = 0; k + 1 < depth && k < FUZZ_BODY_DEPTH; k++) dec->rem[k] = FUZZ_BODY_MAX + 1;
  dec->depth = depth;
  dec->rem[depth - 1] = count;
  dec->floor = depth;
}

int fuzz_program_next(fuzz_decoder *dec, fuzz_op *op) {
  if (dec->pos >= dec->size || dec->depth < dec->floor) return 0;
  op->offset = dec->pos;
  op->index = dec->index++;
  size_t byte = dec->data[dec->pos++] % dec->set->count;
  op->code = dec->set->ops != NULL ? dec->set->ops[byte] : (fuzz_opcode)byte;
  const fuzz_op_info *info = &fuzz_op_table[op->code];
  for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) {
    fuzz_operand_kind kind = info->operands[i];
    size_t n = fuzz_operand_table[kind].bytes;
    uint8_t padded[FUZZ_OPERAND_MAX_BYTES] = {0}; /* an operand the input ends inside of: */
    const uint8_t *b = padded;                    /* its bytes past the end read as 0 */
    if (dec->pos <= dec->size && n <= dec->size - dec->pos) {
      b = dec->data + dec->pos;
    } else {
      for (size_t k = 0; k < n; k++) padded[k] = byte_at(dec, dec->pos + k);
    }
    /* The slots after an op's last operand are NONE: nothing to read. */
    op->args[i] = kind == FUZZ_OPND_NONE ? (fuzz_arg){0, 0, 0} : decode_operand(kind, b);
    dec->pos += n;
  }
  if (dec->pos > dec->size) dec->pos = dec->size;
  track_bodies(dec, op);
  return 1;
}

size_t fuzz_program_count(const fuzz_opset *set, const uint8_t *data, size_t size) {
  /* What fuzz_program_next would decode, op by op, without decoding it: the custom mutator counts
   * every input it mutates. Bodies change nothing here (a walk from the start ends only at the
   * input's end). */
  fuzz_decoder dec;
  fuzz_decoder_init(&dec, set, data, size);
  size_t count = 0;
  for (size_t pos = 0; pos < size; count++) {
    size_t byte = data[pos] % dec.set->count;
    const fuzz_op_info *info = &fuzz_op_table[dec.set->ops != NULL ? dec.set->ops[byte] : byte];
    pos++;
    for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) pos += fuzz_operand_table[info->operands[i]].bytes;
  }
  return count;
}

/* ---- Encoding ------------------------------------------------------------------------------ */

static size_t encode_operand(fuzz_operand_kind kind, fuzz_arg arg, uint8_t *out) {
  switch (kind) {
    case FUZZ_OPND_FIELD:
    case FUZZ_OPND_PARAM:
      out[0] = (uint8_t)arg.a;
      out[1] = (uint8_t)arg.b;
      return 2;
    case FUZZ_OPND_SMALL: out[0] = (uint8_t)(arg.a - 1); return 1;
    case FUZZ_OPND_LARGE: {
      unsigned v = (unsigned)(arg.a - FUZZ_LARGE_MIN);
      out[0] = (uint8_t)(v & 0xff);
      out[1] = (uint8_t)(v >> 8);
      return 2;
    }
    case FUZZ_OPND_RWORD: out[0] = (uint8_t)(arg.a * FUZZ_RANGE_WORDS + arg.b); return 1;
    case FUZZ_OPND_OFFSET:
      out[0] = (uint8_t)(arg.a == FUZZ_FROM_START ? arg.b - FUZZ_OFFSET_START_MIN
                                                  : arg.b + FUZZ_OFFSET_END_ZERO);
      return 1;
    case FUZZ_OPND_WORD:
      for (int i = 0; i < FUZZ_OPERAND_MAX_BYTES; i++) out[i] = (uint8_t)(arg.word >> (8 * i));
      return FUZZ_OPERAND_MAX_BYTES;
    case FUZZ_OPND_NONE:
    case FUZZ_OPND_KIND_COUNT: return 0;
    default: out[0] = (uint8_t)arg.a; return 1;
  }
}

size_t fuzz_op_encode(const fuzz_opset *set, const fuzz_op *op, uint8_t out[FUZZ_OP_MAX_BYTES]) {
  int byte = fuzz_opset_byte(set != NULL ? set : &fuzz_opset_graph, op->code);
  if (byte < 0) return 0;
  size_t n = 0;
  out[n++] = (uint8_t)byte;
  for (int i = 0; i < FUZZ_MAX_OPERANDS; i++) {
    n += encode_operand(fuzz_op_table[op->code].operands[i], op->args[i], out + n);
  }
  return n;
}

/* ---- Buffers ------------------------------------------------------------------------------- */

int fuzz_buf_append(fuzz_buf *b, const void *bytes, size_t n) {
  if (b->size + n > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->size + n) capacity *= 2;
    uint8_t *data = realloc(b->data, capacity);
    if (data == NULL) return 0;
    b->data = data;
    b->capacity = capacity;
  }
  if (n > 0) memcpy(b->data + b->size, bytes, n);
  b->size += n;
  return 1;
}

void fuzz_buf_free(fuzz_buf *b) {
  free(b->data);
  b->data = NULL;
  b->size = b->capacity = 0;
}
