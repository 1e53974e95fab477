/* Running a program through a backend (run.h): each op on the backend and the model, the checks
 * of the model after loads, finalizers, weak gets and collections, the backend's deep check. */
#include "fuzz/oracle/run.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/model.h"

/* ---- Cells --------------------------------------------------------------------------------- */

/* The backend's cells, by what the program calls them. The scratch cells hold what the checks
 * load: a walk of the reachable graph keeps one per level of its depth-first path. */
enum {
  SCRATCH = 64,
  CELL_FRAMES = FUZZ_SLOTS,
  CELL_GLOBALS = CELL_FRAMES + FUZZ_FRAMES * FUZZ_SLOTS,
  CELL_SCRATCH = CELL_GLOBALS + FUZZ_GLOBALS,
  CELLS = CELL_SCRATCH + SCRATCH,
  CELL_SELF = CELLS,                            /* FUZZ_CELL_SELF */
  RANGE_WORDS = FUZZ_RANGES * FUZZ_RANGE_WORDS, /* ORACLE_RANGE_WORDS */
};

typedef struct runner {
  const oracle_options *opt;
  const fuzz_backend *b;
  fuzz_bheap *h;
  oracle_model *m;
  oracle_result *res;
  FILE *out;
  const fuzz_op *op;    /* the op running; NULL in the final checks */
  int frames;           /* local frames pushed */
  unsigned fail_window; /* allocating calls left in which the injected failure must come;
                         * 0: none due (backend.h: fail_after) */
  int tuned;            /* a tune op ran: the backend's limits may refuse an allocation */
  uintptr_t ranges[RANGE_WORDS];
  uint8_t *seen; /* the graph walk's visited objects */
  size_t seen_cap;
} runner;

static size_t slot_cell(int s) { return (size_t)s; }

/* ---- Findings ------------------------------------------------------------------------------ */

/* One verdict line (the format of invariants/verdict.h: the campaign keys crashes on it). The
 * pass is the kind's prefix: "oracle", or the backend's name for its deep check. */
static void print_verdict(FILE *out, const char *kind, long op, uint64_t cycle) {
  char pass[32];
  size_t n = strcspn(kind, ".");
  snprintf(pass, sizeof pass, "%.*s", (int)(n < sizeof pass ? n : sizeof pass - 1), kind);
  fprintf(out, "GCFUZZ-VERDICT {\"kind\": \"");
  for (const char *p = kind; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', out);
    if ((unsigned char)*p >= 0x20) fputc(*p, out);
  }
  fprintf(out, "\", \"pass\": \"%s\", \"point\": \"%s\", \"op\": %ld, \"cycle\": %" PRIu64 "}\n",
          pass, op >= 0 ? "op" : "final", op, cycle);
  fflush(out);
}

static void report(runner *r, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(runner *r, const char *kind, const char *fmt, ...) {
  long op = r->op != NULL ? (long)r->op->index : -1;
  r->res->violations++;
  if (r->res->first_kind[0] == '\0') {
    snprintf(r->res->first_kind, sizeof r->res->first_kind, "%s", kind);
    r->res->first_op = op;
  }
  fprintf(r->out, "VIOLATION %s (backend %s)\n", kind, r->b->name);
  if (r->op != NULL) {
    char text[FUZZ_OP_TEXT_MAX];
    fprintf(r->out, "  at op %zu `%s` (byte offset %zu)\n", r->op->index,
            fuzz_op_format(r->op, text, sizeof text), r->op->offset);
  } else {
    fprintf(r->out, "  in the final checks\n");
  }
  fprintf(r->out, "  what: ");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(r->out, fmt, ap);
  va_end(ap);
  fprintf(r->out, "\n");
  print_verdict(r->out, kind, op, oracle_model_collects(r->m));
  if (r->opt->abort_on_violation) {
    fflush(stdout);
    abort();
  }
}

/* ---- Identity ------------------------------------------------------------------------------ */

/* How the driver came to read a block, for a report: formatted only when there is one (the
 * checks run on every load and every field of every walk). `what` takes up to two numbers. */
typedef struct where {
  const char *what;
  unsigned long x, y;
} where;

static const char *where_text(const where *w, char *buf, size_t len) {
  snprintf(buf, len, w->what, w->x, w->y);
  return buf;
}

/* The block in `cell` must be object o (INV-ORACLE-1). `at` says how the driver got it. */
static int check_identity(runner *r, size_t cell, oracle_obj o, const where *at) {
  r->res->checks++;
  uint64_t id = 0, check = 0;
  const oracle_object *ob = oracle_model_object(r->m, o);
  int got = r->b->get_ident(r->h, cell, &id, &check);
  if (got && id == ob->id && check == ob->check) return 1;
  char buf[96];
  const char *where = where_text(at, buf, sizeof buf);
  if (!got) {
    report(r, "oracle.identity", "%s: expected object #%u, the backend's cell is empty", where,
           (unsigned)o);
    return 0;
  }
  oracle_obj other = oracle_model_by_id(r->m, id);
  if (other != ORACLE_NONE && other != o) {
    report(r, "oracle.identity",
           "%s: expected object #%u, found object #%u (a field or slot updated wrong, or #%u's "
           "memory reused for #%u)",
           where, (unsigned)o, (unsigned)other, (unsigned)o, (unsigned)other);
  } else if (id == ob->id) {
    report(r, "oracle.identity",
           "%s: object #%u's check word is 0x%016" PRIx64 ", not 0x%016" PRIx64
           " (its memory was overwritten)",
           where, (unsigned)o, check, ob->check);
  } else {
    report(r, "oracle.identity",
           "%s: expected object #%u, found id 0x%016" PRIx64
           " (no object of the program: freed and reused, or never a block)",
           where, (unsigned)o, id);
  }
  return 0;
}

static void give_identity(runner *r, size_t cell, oracle_obj o) {
  const oracle_object *ob = oracle_model_object(r->m, o);
  r->b->set_ident(r->h, cell, ob->id, ob->check);
  if (r->b->caps & FUZZ_CAP_CONSERVATIVE) {
    oracle_object *w = oracle_model_object(r->m, o);
    if (!r->b->address(r->h, cell, &w->addr, &w->bsize)) w->bsize = 0;
  }
}

/* What a field read through the backend must be: `got` and, for a block, the cell it is in. */
static int check_field(runner *r, oracle_field want, fuzz_field_kind got, int64_t value,
                       size_t cell, const where *at) {
  r->res->checks++;
  if (oracle_field_is_block(want) && got == FUZZ_FIELD_BLOCK) {
    return check_identity(r, cell, oracle_field_block_of(want), at);
  }
  if (oracle_field_is_int(want) && got == FUZZ_FIELD_INT && value == oracle_field_int_of(want)) {
    return 1;
  }
  if (want == ORACLE_FIELD_EMPTY && got == FUZZ_FIELD_EMPTY) return 1;
  char buf[96];
  const char *where = where_text(at, buf, sizeof buf);
  if (oracle_field_is_block(want)) {
    if (got != FUZZ_FIELD_BLOCK) {
      report(r, "oracle.contents", "%s: expected object #%u, the field holds %s", where,
             (unsigned)oracle_field_block_of(want),
             got == FUZZ_FIELD_EMPTY ? "nothing"
             : got == FUZZ_FIELD_INT ? "an integer"
                                     : "no block of ours");
      return 0;
    }
  }
  if (oracle_field_is_int(want)) {
    if (got != FUZZ_FIELD_INT || value != oracle_field_int_of(want)) {
      report(r, "oracle.contents", "%s: expected the integer %" PRId64 ", found %s %" PRId64, where,
             oracle_field_int_of(want), got == FUZZ_FIELD_INT ? "the integer" : "kind",
             got == FUZZ_FIELD_INT ? value : (int64_t)got);
      return 0;
    }
    return 1;
  }
  if (got != FUZZ_FIELD_EMPTY) {
    report(r, "oracle.contents", "%s: expected an empty field, found %s", where,
           got == FUZZ_FIELD_INT     ? "an integer"
           : got == FUZZ_FIELD_BLOCK ? "a block"
                                     : "junk");
    return 0;
  }
  return 1;
}

/* ---- The graph walk ------------------------------------------------------------------------ */

static int grow_seen(runner *r) {
  size_t n = oracle_model_count(r->m);
  if (n == 0) n = 1; /* never NULL: the walks clear it with memset */
  if (n <= r->seen_cap) return 1;
  uint8_t *p = realloc(r->seen, n);
  if (p == NULL) return 0;
  r->seen = p;
  r->seen_cap = n;
  return 1;
}

/* Object o, which is in `cell`, and everything below it not seen yet, read through the backend
 * depth first, one scratch cell a level; a path deeper than SCRATCH is read as far as the
 * scratch goes (the loads of later ops read the rest). */
static void verify_object(runner *r, size_t cell, oracle_obj o, int depth) {
  r->seen[o] = 1;
  where at = {"the walk after a collection, object #%lu", o, 0};
  if (!check_identity(r, cell, o, &at)) return;
  const oracle_object *ob = oracle_model_object(r->m, o);
  if (ob->role != ORACLE_PLAIN) return;
  if (ob->shape == FUZZ_SHAPE_RAW) {
    for (size_t w = 0; w < ob->nfields; w++) {
      uint64_t got = r->b->raw_read(r->h, cell, w), want = oracle_model_field(r->m, o, w);
      r->res->checks++;
      if (got != want) {
        report(r, "oracle.contents",
               "object #%u (raw), payload word %zu: 0x%016" PRIx64
               ", the program wrote 0x%016" PRIx64,
               (unsigned)o, w, got, want);
        return;
      }
    }
    return;
  }
  if (depth >= SCRATCH) return;
  size_t sc = CELL_SCRATCH + (size_t)depth;
  for (size_t f = 0; f < ob->nfields; f++) {
    oracle_field want = oracle_model_field(r->m, o, f);
    int64_t value = 0;
    fuzz_field_kind got = r->b->load(r->h, sc, cell, f, &value);
    where field = {"the walk, field %lu of object #%lu", f, o};
    if (!check_field(r, want, got, value, sc, &field)) break;
    if (oracle_field_is_block(want) && !r->seen[oracle_field_block_of(want)]) {
      verify_object(r, sc, oracle_field_block_of(want), depth + 1);
    }
  }
  r->b->clear(r->h, sc);
}

static void verify_graph(runner *r) {
  if (!grow_seen(r)) return;
  memset(r->seen, 0, oracle_model_count(r->m));
  for (size_t c = 0; c < CELL_SCRATCH; c++) {
    oracle_obj o = oracle_model_cell(r->m, c);
    if (o != ORACLE_NONE && !r->seen[o]) verify_object(r, c, o, 0);
  }
}

/* ---- After a collection -------------------------------------------------------------------- */

static void deep_check(runner *r) {
  if (!(r->b->caps & FUZZ_CAP_DEEP_CHECK) || r->b->check == NULL) return;
  fuzz_finding f[4];
  r->res->deep_checks++;
  size_t n = r->b->check(r->h, f, 4);
  for (size_t i = 0; i < n && i < 4; i++) report(r, f[i].kind, "%s", f[i].message);
  if (n > 4) fprintf(r->out, "  (%zu more findings of the backend's check)\n", n - 4);
}

typedef struct walk_state {
  runner *r;
  size_t unknown;
  oracle_obj first_unknown_id_low;
} walk_state;

static void walk_visit(void *user, uint64_t id, uint64_t check) {
  walk_state *w = user;
  runner *r = w->r;
  oracle_obj o = oracle_model_by_id(r->m, id);
  if (o == ORACLE_NONE || oracle_model_object(r->m, o)->check != check) {
    if (w->unknown++ == 0) {
      report(r, "oracle.identity",
             "the heap's walk after a full collection met a block with id 0x%016" PRIx64
             " and check 0x%016" PRIx64
             ": no object of the program (a block's identity words "
             "were overwritten)",
             id, check);
    }
    return;
  }
  if (r->seen[o]) return; /* the walk may meet a block twice (Lua's lists): once is enough */
  r->seen[o] = 1;
  if (!oracle_model_reached(r->m, ORACLE_REACH_KEPT, o)) {
    report(r, "oracle.not-freed",
           "object #%u is unreachable (no cell, field, finalizer or range keeps it) yet still "
           "in the heap after a full collection",
           (unsigned)o);
  }
}

/* The checks of a full collection: the leak bound, and on a precise backend the walk. */
static void check_full(runner *r) {
  oracle_model_reach(r->m, ORACLE_REACH_KEPT, CELL_SELF);
  if (r->b->live_bytes != NULL) {
    size_t live = r->b->live_bytes(r->h), kept = oracle_model_kept_bytes(r->m);
    double bound = r->b->leak_slack_factor * (double)kept + (double)r->b->leak_slack_bytes;
    r->res->checks++;
    if ((double)live > bound) {
      report(r, "oracle.leak",
             "after a full collection the backend holds %zu bytes; the program keeps %zu bytes "
             "of blocks, and the backend's stated bound is %.2f x that + %zu = %.0f bytes",
             live, kept, r->b->leak_slack_factor, r->b->leak_slack_bytes, bound);
    }
  }
  if ((r->b->caps & (FUZZ_CAP_PRECISE | FUZZ_CAP_WALK)) != (FUZZ_CAP_PRECISE | FUZZ_CAP_WALK)) {
    return;
  }
  if (!grow_seen(r)) return;
  memset(r->seen, 0, oracle_model_count(r->m));
  walk_state w = {r, 0, 0};
  r->res->checks++;
  r->b->walk(r->h, walk_visit, &w);
  /* Every object the cells reach must have been met. */
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, CELL_SELF);
  for (size_t k = 0; k < oracle_model_count(r->m); k++) {
    if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, (oracle_obj)k) && !r->seen[k]) {
      report(r, "oracle.lost",
             "object #%u is reachable from the cells but the heap's walk after a full "
             "collection did not meet it (freed while reachable)",
             (unsigned)k);
      break;
    }
  }
  /* A finalizer of a block nothing keeps must have run: the collection found it unreachable. */
  if (!(r->b->caps & FUZZ_CAP_FINALIZERS)) return;
  oracle_obj due = oracle_model_fin_overdue(r->m, CELL_SELF);
  r->res->checks++;
  if (due != ORACLE_NONE) {
    report(r, "oracle.finalizer-lost",
           "object #%u has a finalizer set and nothing keeps it (no cell, no block with a "
           "finalizer above it), but a full collection did not run its finalizer",
           (unsigned)due);
  }
}

static void collected(runner *r, fuzz_collect_kind kind) {
  if (r->b->run_finalizers != NULL) r->b->run_finalizers(r->h);
  deep_check(r);
  if (kind == FUZZ_COLLECT_MAJOR || kind == FUZZ_COLLECT_FULL) verify_graph(r);
  if (kind == FUZZ_COLLECT_FULL) {
    check_full(r);
    oracle_model_forget_revivals(r->m); /* every finalizer due has run */
  }
}

static void collect(runner *r, fuzz_collect_kind kind, unsigned budget) {
  oracle_model_count_collect(r->m);
  if (r->opt->trace != NULL) {
    fprintf(r->opt->trace, "        [collect %s, budget %u]\n", fuzz_collect_names[kind], budget);
  }
  /* What the collection begins with it keeps, whatever its finalizers resurrect over cells. */
  oracle_model_reach(r->m, ORACLE_REACH_AT_COLLECT, CELL_SELF);
  r->b->collect(r->h, kind, budget);
  collected(r, kind);
}

/* ---- Finalizers ---------------------------------------------------------------------------- */

static void on_finalize(void *user, uint64_t token) {
  runner *r = user;
  r->res->finalizers++;
  oracle_obj o = (oracle_obj)(token - 1);
  oracle_object *ob = oracle_model_object(r->m, o);
  if (ob == NULL) {
    report(r, "oracle.finalizer-unset",
           "a finalizer ran with token %" PRIu64 ", which the program never gave", token);
    return;
  }
  if (r->opt->trace != NULL) fprintf(r->opt->trace, "        [finalizer of #%u]\n", (unsigned)o);
  where at = {"the block the finalizer of #%lu was handed", o, 0};
  if (!check_identity(r, CELL_SELF, o, &at)) return;
  if (ob->fin != ORACLE_FIN_SET) {
    report(r, ob->fin == ORACLE_FIN_RAN ? "oracle.finalizer-twice" : "oracle.finalizer-unset",
           "object #%u's finalizer runs, but %s", (unsigned)o,
           ob->fin == ORACLE_FIN_RAN ? "it ran already and was not set again"
                                     : "it was cleared (or never set)");
    return;
  }
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, CELL_SELF);
  r->res->checks++;
  if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, o) && !ob->revived) {
    report(r, "oracle.finalizer-live",
           "object #%u's finalizer runs while the object is reachable from the cells (and no "
           "resurrection made it so)",
           (unsigned)o);
  }
  /* The weak references to it that the program can still reach were cleared before this
   * finalizer ran, unless a revival made it reachable again after the collector looked. */
  if (!ob->revived) {
    for (size_t k = 0; k < oracle_model_count(r->m); k++) {
      oracle_object *w = oracle_model_object(r->m, (oracle_obj)k);
      /* Not a reference that was itself revived: a weak table the collector separated with its
       * target (Lua clears a resurrected weak table of values that are dead after the
       * finalizers' marking, and its target is not). */
      if (w->role == ORACLE_WEAK && w->a == o && !w->revived &&
          oracle_model_reached(r->m, ORACLE_REACH_STRONG, (oracle_obj)k)) {
        w->after_finalizer = 1;
      }
    }
  }
  ob->fin = ORACLE_FIN_RAN;
  ob->fin_ran_collect = oracle_model_collects(r->m);
  oracle_model_excuse_weak(r->m, o);
  if (ob->fin_cell != SIZE_MAX && (r->b->caps & FUZZ_CAP_RESURRECT)) {
    r->b->copy(r->h, ob->fin_cell, CELL_SELF);
    oracle_model_revive(r->m, ob->fin_cell, o, CELL_SELF);
  }
}

/* ---- The ops ------------------------------------------------------------------------------- */

static oracle_obj slot_obj(runner *r, int s) { return oracle_model_cell(r->m, slot_cell(s)); }

static void set_cell(runner *r, size_t dst, oracle_obj o) { oracle_model_set_cell(r->m, dst, o); }

static void op_copy(runner *r, size_t dst, size_t src) {
  r->b->copy(r->h, dst, src);
  set_cell(r, dst, oracle_model_cell(r->m, src));
}

static void op_clear(runner *r, size_t cell) {
  r->b->clear(r->h, cell);
  set_cell(r, cell, ORACLE_NONE);
}

/* The injected failure (backend.h, fail_after N): exactly one of the next N allocating calls
 * (alloc, weak, ephe) fails, and no other call fails. Returns whether `ok` is what a correct
 * collector may answer, after reporting when it is not. */
static void check_allocation(runner *r, int ok, const char *what) {
  r->res->checks++;
  if (r->fail_window > 0) {
    if (!ok) {
      r->fail_window = 0; /* the failure came */
      return;
    }
    if (--r->fail_window == 0) {
      report(r, "oracle.failure-missed",
             "the injected failure was due by this %s (the last call of its window), but every "
             "call succeeded",
             what);
    }
    return;
  }
  if (!ok && !r->tuned) {
    report(r, "oracle.unexpected-failure", "%s failed with no injected failure due", what);
  }
}

static void op_alloc(runner *r, int dst, fuzz_block_kind kind, size_t n) {
  /* A custom block is gcfuzz's own (a block with a finalize function): elsewhere, raw data. */
  fuzz_block_shape shape =
      kind == FUZZ_KIND_SCAN || !(r->b->caps & FUZZ_CAP_RAW) ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW;
  /* sD's old block is dropped before the allocation, which may collect: a backend may empty the
   * cell first or last, so the model and the backend empty it first, together. */
  op_clear(r, slot_cell(dst));
  int ok = r->b->alloc(r->h, slot_cell(dst), shape, n);
  check_allocation(r, ok, "allocation");
  if (!ok) {
    set_cell(r, slot_cell(dst), ORACLE_NONE);
    return;
  }
  oracle_obj o = oracle_model_new(r->m, shape, ORACLE_PLAIN, n);
  if (o == ORACLE_NONE) abort();
  give_identity(r, slot_cell(dst), o);
  set_cell(r, slot_cell(dst), o);
}

/* A word a raw block holds for a pointer stored into it: the target's id (data, not a pointer,
 * so the same on every run), or 0. */
static uint64_t raw_word_of(runner *r, oracle_obj o) {
  return o == ORACLE_NONE ? 0 : oracle_model_object(r->m, o)->id;
}

static void op_store(runner *r, fuzz_arg dst, int is_imm, int value) {
  oracle_obj o = slot_obj(r, dst.a);
  if (o == ORACLE_NONE) return;
  const oracle_object *ob = oracle_model_object(r->m, o);
  size_t f = (size_t)dst.b;
  if (ob->role != ORACLE_PLAIN || f >= ob->nfields) return;
  if (ob->shape == FUZZ_SHAPE_RAW) {
    uint64_t word = is_imm ? (uint64_t)value << 1 | 1 : raw_word_of(r, slot_obj(r, value));
    r->b->raw_write(r->h, slot_cell(dst.a), f, word);
    oracle_model_set_field(r->m, o, f, word);
  } else if (is_imm) {
    r->b->store_int(r->h, slot_cell(dst.a), f, value);
    oracle_model_set_field(r->m, o, f, oracle_field_int(value));
  } else {
    oracle_obj v = slot_obj(r, value);
    r->b->store(r->h, slot_cell(dst.a), f, slot_cell(value));
    oracle_model_set_field(r->m, o, f,
                           v == ORACLE_NONE ? ORACLE_FIELD_EMPTY : oracle_field_block(v));
  }
}

static void op_load(runner *r, int dst, fuzz_arg src) {
  oracle_obj o = slot_obj(r, src.a);
  if (o == ORACLE_NONE) return;
  const oracle_object *ob = oracle_model_object(r->m, o);
  size_t f = (size_t)src.b;
  if (ob->role != ORACLE_PLAIN || ob->shape != FUZZ_SHAPE_SCAN || f >= ob->nfields) return;
  oracle_field want = oracle_model_field(r->m, o, f);
  int64_t value = 0;
  fuzz_field_kind got = r->b->load(r->h, slot_cell(dst), slot_cell(src.a), f, &value);
  where at = {"load of field %lu of object #%lu", f, o};
  check_field(r, want, got, value, slot_cell(dst), &at);
  /* The model follows the program: whatever the backend put there, the slot means `want`. */
  oracle_obj now = oracle_field_is_block(want) ? oracle_field_block_of(want) : ORACLE_NONE;
  if (now == ORACLE_NONE && got == FUZZ_FIELD_BLOCK) r->b->clear(r->h, slot_cell(dst));
  set_cell(r, slot_cell(dst), now);
}

static void op_push(runner *r) {
  if (r->frames == FUZZ_FRAMES) return;
  size_t base = CELL_FRAMES + (size_t)r->frames++ * FUZZ_SLOTS;
  for (int s = 0; s < FUZZ_SLOTS; s++) op_copy(r, base + (size_t)s, slot_cell(s));
}

static void op_pop(runner *r) {
  if (r->frames == 0) return;
  size_t base = CELL_FRAMES + (size_t)--r->frames * FUZZ_SLOTS;
  for (int s = 0; s < FUZZ_SLOTS; s++) op_clear(r, base + (size_t)s);
}

static void op_fin(runner *r, int s, int revive) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  if (!r->b->fin_set(r->h, slot_cell(s), (uint64_t)o + 1)) return;
  oracle_object *ob = oracle_model_object(r->m, o);
  ob->fin = ORACLE_FIN_SET;
  ob->fin_cell = revive == FUZZ_NO_SLOT ? SIZE_MAX : slot_cell(revive);
}

static void op_unfin(runner *r, int s) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  oracle_object *ob = oracle_model_object(r->m, o);
  int had = r->b->fin_clear(r->h, slot_cell(s));
  r->res->checks++;
  if (had != (ob->fin == ORACLE_FIN_SET)) {
    report(r, "oracle.finalizer-clear",
           "clearing object #%u's finalizer answered %s, but the model says it %s", (unsigned)o,
           had ? "one was set" : "none was set",
           ob->fin == ORACLE_FIN_SET ? "was set and has not run" : "has none");
  }
  ob->fin = ORACLE_FIN_NONE;
}

/* Word I of range N = w, in the backend's range and in the model. */
static void set_range_word(runner *r, fuzz_arg word, uintptr_t w) {
  size_t i = (size_t)word.a * FUZZ_RANGE_WORDS + (size_t)word.b;
  r->ranges[i] = w;
  oracle_model_set_range_word(r->m, i, w, CELL_SELF);
}

/* Word I of range N: the block in sS's address plus the offset (run.h). */
static void op_range(runner *r, fuzz_arg word, int s, fuzz_arg offset) {
  oracle_obj o = slot_obj(r, s);
  uintptr_t w = 0;
  if (o != ORACLE_NONE) {
    const oracle_object *ob = oracle_model_object(r->m, o);
    uintptr_t base = ob->addr + (offset.a == FUZZ_FROM_END ? ob->bsize : 0);
    w = base + (uintptr_t)(intptr_t)offset.b;
  }
  set_range_word(r, word, w);
}

static void op_weak(runner *r, int dst, int target) {
  oracle_obj t = slot_obj(r, target);
  if (t == ORACLE_NONE) return;
  if (dst != target) op_clear(r, slot_cell(dst)); /* as in op_alloc */
  int ok = r->b->weak_new(r->h, slot_cell(dst), slot_cell(target));
  check_allocation(r, ok, "weak reference");
  if (!ok) {
    set_cell(r, slot_cell(dst), ORACLE_NONE);
    return;
  }
  oracle_obj w = oracle_model_new(r->m, FUZZ_SHAPE_SCAN, ORACLE_WEAK, 0);
  if (w == ORACLE_NONE) abort();
  oracle_model_object(r->m, w)->a = t;
  give_identity(r, slot_cell(dst), w);
  set_cell(r, slot_cell(dst), w);
}

static void op_ephe(runner *r, int dst, int key, int datum) {
  oracle_obj k = slot_obj(r, key), v = slot_obj(r, datum);
  if (k == ORACLE_NONE || v == ORACLE_NONE) return;
  if (dst != key && dst != datum) op_clear(r, slot_cell(dst)); /* as in op_alloc */
  int ok = r->b->ephe_new(r->h, slot_cell(dst), slot_cell(key), slot_cell(datum));
  check_allocation(r, ok, "ephemeron");
  if (!ok) {
    set_cell(r, slot_cell(dst), ORACLE_NONE);
    return;
  }
  oracle_obj e = oracle_model_new(r->m, FUZZ_SHAPE_SCAN, ORACLE_EPHE, 0);
  if (e == ORACLE_NONE) abort();
  oracle_model_object(r->m, e)->a = k;
  oracle_model_object(r->m, e)->b = v;
  give_identity(r, slot_cell(dst), e);
  set_cell(r, slot_cell(dst), e);
}

/* weak_get and ephe_get: `want` is the target (datum), `alive` the object whose life decides
 * (the target; the key). */
static void op_get(runner *r, int dst, int src, oracle_role role) {
  oracle_obj w = slot_obj(r, src);
  if (w == ORACLE_NONE) return;
  oracle_object *ob = oracle_model_object(r->m, w);
  if (ob->role != role) return;
  oracle_obj want = role == ORACLE_WEAK ? ob->a : ob->b, alive = ob->a;
  int got = role == ORACLE_WEAK ? r->b->weak_get(r->h, slot_cell(dst), slot_cell(src))
                                : r->b->ephe_get(r->h, slot_cell(dst), slot_cell(src));
  where at = {role == ORACLE_WEAK ? "the weak reference #%lu's get" : "the ephemeron #%lu's get", w,
              0};
  char buf[96];
  r->res->checks++;
  if (got) {
    if (ob->weak_cleared) {
      report(r, "oracle.weak-revived", "%s answered a block after it had answered empty",
             where_text(&at, buf, sizeof buf));
    } else if (ob->after_finalizer) {
      report(r, "oracle.weak-after-finalizer",
             "%s answered its target, object #%u, whose finalizer ran while the weak reference "
             "was reachable: it should have been cleared before the finalizer",
             where_text(&at, buf, sizeof buf), (unsigned)want);
    }
    if (!check_identity(r, slot_cell(dst), want, &at)) {
      op_clear(r, slot_cell(dst));
      return;
    }
    /* A get that hands back a block nothing else reached is a revival like a resurrection: the
     * collector may already have separated it for finalization (Lua keeps an ephemeron's entry
     * until the cycle after its key was separated), so its finalizer may still run. */
    oracle_model_reach(r->m, ORACLE_REACH_STRONG, CELL_SELF);
    if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, want)) {
      set_cell(r, slot_cell(dst), want);
    } else {
      oracle_model_revive(r->m, slot_cell(dst), want, CELL_SELF);
    }
    return;
  }
  set_cell(r, slot_cell(dst), ORACLE_NONE);
  ob->weak_cleared = 1;
  if (ob->may_be_empty) return;
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, CELL_SELF);
  if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, alive)) {
    report(r, "oracle.weak-cleared",
           "%s answered empty while its %s, object #%u, is reachable from the cells",
           where_text(&at, buf, sizeof buf), role == ORACLE_WEAK ? "target" : "key",
           (unsigned)alive);
  }
}

static void trace_op(runner *r, const fuzz_op *op) {
  if (r->opt->trace == NULL) return;
  char text[FUZZ_OP_TEXT_MAX];
  fprintf(r->opt->trace, "%4zu  %s", op->index, fuzz_op_format(op, text, sizeof text));
  if (op->code == FUZZ_OP_TUNE && (size_t)op->args[0].a < r->b->tunable_count) {
    fprintf(r->opt->trace, "   (%s)", r->b->tunables[op->args[0].a].name);
  }
  fputc('\n', r->opt->trace);
}

static void run_op(runner *r, const fuzz_op *op) {
  const fuzz_arg *a = op->args;
  if (op->depth != 0) return; /* finalizer bodies: not in the backends' op sets */
  switch (op->code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE: op_alloc(r, a[0].a, (fuzz_block_kind)a[1].a, (size_t)a[2].a); break;
    case FUZZ_OP_STORE: op_store(r, a[0], 0, a[1].a); break;
    case FUZZ_OP_STORE_IMM: op_store(r, a[0], 1, a[1].a); break;
    case FUZZ_OP_LOAD: op_load(r, a[0].a, a[1]); break;
    case FUZZ_OP_DROP: op_clear(r, slot_cell(a[0].a)); break;
    case FUZZ_OP_COPY: op_copy(r, slot_cell(a[0].a), slot_cell(a[1].a)); break;
    case FUZZ_OP_PUSH: op_push(r); break;
    case FUZZ_OP_POP: op_pop(r); break;
    case FUZZ_OP_ROOT: op_copy(r, CELL_GLOBALS + (size_t)a[0].a, slot_cell(a[1].a)); break;
    case FUZZ_OP_UNROOT: op_clear(r, CELL_GLOBALS + (size_t)a[0].a); break;
    case FUZZ_OP_COLLECT: collect(r, (fuzz_collect_kind)a[0].a, 0); break;
    case FUZZ_OP_MARK_SLICE: collect(r, FUZZ_COLLECT_SLICE, (unsigned)a[0].a); break;
    case FUZZ_OP_FAIL:
      r->fail_window = (unsigned)a[0].a;
      r->b->fail_after(r->h, r->fail_window);
      break;
    case FUZZ_OP_FIN: op_fin(r, a[0].a, a[1].a); break;
    case FUZZ_OP_UNFIN: op_unfin(r, a[0].a); break;
    case FUZZ_OP_RANGE: op_range(r, a[0], a[1].a, a[2]); break;
    case FUZZ_OP_RANGE_INT: set_range_word(r, a[0], (uintptr_t)a[1].a); break;
    case FUZZ_OP_RANGE_WORD: set_range_word(r, a[0], (uintptr_t)a[1].word); break;
    case FUZZ_OP_TUNE:
      if ((size_t)a[0].a < r->b->tunable_count) {
        r->tuned = 1;
        r->b->tune(r->h, (unsigned)a[0].a, (unsigned)a[1].a);
      }
      break;
    case FUZZ_OP_WEAK: op_weak(r, a[0].a, a[1].a); break;
    case FUZZ_OP_WEAK_GET: op_get(r, a[0].a, a[1].a, ORACLE_WEAK); break;
    case FUZZ_OP_EPHE: op_ephe(r, a[0].a, a[1].a, a[2].a); break;
    case FUZZ_OP_EPHE_GET: op_get(r, a[0].a, a[1].a, ORACLE_EPHE); break;
    default: break; /* not in a backend's op set */
  }
}

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
    case FUZZ_OP_FIN: return (caps & FUZZ_CAP_FINALIZERS) != 0;
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

/* ---- Running ------------------------------------------------------------------------------- */

static oracle_model *kept_model;

static int run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res,
               oracle_model *m) {
  memset(res, 0, sizeof *res);
  res->first_op = -1;
  runner r = {0};
  r.opt = opt;
  r.b = opt->backend;
  r.m = m;
  r.res = res;
  r.out = opt->out != NULL ? opt->out : stderr;
  fuzz_backend_config cfg = {CELLS, opt->params, r.out, {&r, on_finalize}};
  r.h = r.b->create(&cfg);
  if (r.h == NULL) return -1;
  if (r.b->caps & FUZZ_CAP_CONSERVATIVE) {
    r.b->range_add(r.h, r.ranges, RANGE_WORDS);
  }
  const fuzz_opset *set = opt->ops != NULL ? opt->ops : oracle_opset(r.b);
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    r.op = &op;
    trace_op(&r, &op);
    run_op(&r, &op);
    res->ops++;
  }
  r.op = NULL;
  /* The end: a full collection and every check of one. */
  collect(&r, FUZZ_COLLECT_FULL, 0);
  res->collects = oracle_model_collects(m);
  r.b->destroy(r.h);
  free(r.seen);
  return res->violations ? 1 : 0;
}

int oracle_run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res) {
  oracle_model *m = oracle_model_create(CELLS);
  if (m == NULL) return -1;
  int rc = run(data, size, opt, res, m);
  oracle_model_destroy(m);
  return rc;
}

int oracle_target_run_one(const fuzz_backend *b, const uint8_t *data, size_t size) {
  if (kept_model == NULL && (kept_model = oracle_model_create(CELLS)) == NULL) abort();
  oracle_model_reset(kept_model);
  oracle_options opt = {b, NULL, 1, stderr, NULL, NULL};
  oracle_result res;
  if (run(data, size, &opt, &res, kept_model) < 0) abort(); /* no heap: nothing can be tested */
  return 0;
}

_Static_assert(RANGE_WORDS == ORACLE_RANGE_WORDS, "the model keeps an object a range word");
