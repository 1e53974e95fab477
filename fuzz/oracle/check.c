/* The runner's checks (runner.h): findings as verdict lines, identities and fields read through
 * the backend against the model, the walk of the reachable graph, and what follows a
 * collection. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/text.h"
#include "fuzz/oracle/runner.h"

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

static void vreport(runner *r, const char *kind, const char *fmt, va_list ap) {
  const runner_mut *u = runner_me(r);
  const fuzz_op *at = u != NULL ? u->op : NULL;
  long op = at != NULL ? (long)at->index : -1;
  r->res->violations++;
  if (r->res->first_kind[0] == '\0') {
    snprintf(r->res->first_kind, sizeof r->res->first_kind, "%s", kind);
    r->res->first_op = op;
  }
  fprintf(r->out, "VIOLATION %s (backend %s)\n", kind, r->b->name);
  if (at != NULL) {
    char text[FUZZ_OP_TEXT_MAX];
    fprintf(r->out, "  at op %zu `%s` (byte offset %zu)", at->index,
            fuzz_op_format(at, text, sizeof text), at->offset);
    if (r->threaded) fprintf(r->out, " on d%u's thread", u->on);
    fprintf(r->out, "\n");
  } else {
    fprintf(r->out, "  in the final checks\n");
  }
  fprintf(r->out, "  what: ");
  vfprintf(r->out, fmt, ap);
  fprintf(r->out, "\n");
  print_verdict(r->out, kind, op, oracle_model_collects(r->m));
  if (r->opt->abort_on_violation) {
    fflush(stdout);
    abort();
  }
}

void runner_report(runner *r, const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(r, kind, fmt, ap);
  va_end(ap);
}

/* A finding of the whole-heap comparisons after a full collection. On threads it is held until
 * they end (the first one only): another thread may have run ops while they read the heap (at
 * the collector's points inside the calls they make), and then the heap and the model they
 * compared were never one moment's; collected() decides. */
static void report_whole(runner *r, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_whole(runner *r, const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (!r->threaded) {
    vreport(r, kind, fmt, ap);
  } else if (r->held.count++ == 0) {
    snprintf(r->held.kind, sizeof r->held.kind, "%s", kind);
    vsnprintf(r->held.message, sizeof r->held.message, fmt, ap);
  }
  va_end(ap);
}

/* ---- Identity ------------------------------------------------------------------------------ */

const char *runner_where_text(const where *w, char *buf, size_t len) {
  snprintf(buf, len, w->what, w->x, w->y);
  return buf;
}

/* The block in `cell` must be object o (INV-ORACLE-1). `at` says how the driver got it. */
int runner_check_identity(runner *r, size_t cell, oracle_obj o, const where *at) {
  r->res->checks++;
  uint64_t id = 0, check = 0;
  const oracle_object *ob = oracle_model_object(r->m, o);
  int got = r->b->get_ident(r->h, cell, &id, &check);
  if (got && id == ob->id && check == ob->check) return 1;
  char buf[96];
  const char *where = runner_where_text(at, buf, sizeof buf);
  if (!got) {
    runner_report(r, "oracle.identity", "%s: expected object #%u, the backend's cell is empty",
                  where, (unsigned)o);
    return 0;
  }
  oracle_obj other = oracle_model_by_id(r->m, id);
  if (other != ORACLE_NONE && other != o) {
    runner_report(
        r, "oracle.identity",
        "%s: expected object #%u, found object #%u (a field or slot updated wrong, or #%u's "
        "memory reused for #%u)",
        where, (unsigned)o, (unsigned)other, (unsigned)o, (unsigned)other);
  } else if (id == ob->id) {
    runner_report(r, "oracle.identity",
                  "%s: object #%u's check word is 0x%016" PRIx64 ", not 0x%016" PRIx64
                  " (its memory was overwritten)",
                  where, (unsigned)o, check, ob->check);
  } else {
    runner_report(r, "oracle.identity",
                  "%s: expected object #%u, found id 0x%016" PRIx64
                  " (no object of the program: freed and reused, or never a block)",
                  where, (unsigned)o, id);
  }
  return 0;
}

void runner_give_identity(runner *r, size_t cell, oracle_obj o) {
  const oracle_object *ob = oracle_model_object(r->m, o);
  r->b->set_ident(r->h, cell, ob->id, ob->check);
  if (r->b->caps & FUZZ_CAP_CONSERVATIVE) {
    oracle_object *w = oracle_model_object(r->m, o);
    if (!r->b->address(r->h, cell, &w->addr, &w->bsize)) w->bsize = 0;
  }
}

/* What a field read through the backend must be: `got` and, for a block, the cell it is in. */
int runner_check_field(runner *r, oracle_field want, fuzz_field_kind got, int64_t value,
                       size_t cell, const where *at) {
  r->res->checks++;
  if (oracle_field_is_block(want) && got == FUZZ_FIELD_BLOCK) {
    return runner_check_identity(r, cell, oracle_field_block_of(want), at);
  }
  if (oracle_field_is_int(want) && got == FUZZ_FIELD_INT && value == oracle_field_int_of(want)) {
    return 1;
  }
  if (want == ORACLE_FIELD_EMPTY && got == FUZZ_FIELD_EMPTY) return 1;
  char buf[96];
  const char *where = runner_where_text(at, buf, sizeof buf);
  if (oracle_field_is_block(want)) {
    if (got != FUZZ_FIELD_BLOCK) {
      runner_report(r, "oracle.contents", "%s: expected object #%u, the field holds %s", where,
                    (unsigned)oracle_field_block_of(want),
                    got == FUZZ_FIELD_EMPTY ? "nothing"
                    : got == FUZZ_FIELD_INT ? "an integer"
                                            : "no block of ours");
      return 0;
    }
  }
  if (oracle_field_is_int(want)) {
    if (got != FUZZ_FIELD_INT || value != oracle_field_int_of(want)) {
      runner_report(r, "oracle.contents", "%s: expected the integer %" PRId64 ", found %s %" PRId64,
                    where, oracle_field_int_of(want),
                    got == FUZZ_FIELD_INT ? "the integer" : "kind",
                    got == FUZZ_FIELD_INT ? value : (int64_t)got);
      return 0;
    }
    return 1;
  }
  if (got != FUZZ_FIELD_EMPTY) {
    runner_report(r, "oracle.contents", "%s: expected an empty field, found %s", where,
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
  if (!runner_check_identity(r, cell, o, &at)) return;
  const oracle_object *ob = oracle_model_object(r->m, o);
  if (ob->role != ORACLE_PLAIN) return;
  if (ob->shape == FUZZ_SHAPE_RAW) {
    for (size_t w = 0; w < ob->nfields; w++) {
      uint64_t got = r->b->raw_read(r->h, cell, w), want = oracle_model_field(r->m, o, w);
      r->res->checks++;
      if (got != want) {
        runner_report(r, "oracle.contents",
                      "object #%u (raw), payload word %zu: 0x%016" PRIx64
                      ", the program wrote 0x%016" PRIx64,
                      (unsigned)o, w, got, want);
        return;
      }
    }
    return;
  }
  if (depth >= SCRATCH) return;
  size_t sc = scratch_cell(r, depth);
  for (size_t f = 0; f < ob->nfields; f++) {
    oracle_field want = oracle_model_field(r->m, o, f);
    int64_t value = 0;
    fuzz_field_kind got = r->b->load(r->h, sc, cell, f, &value);
    where field = {"the walk, field %lu of object #%lu", f, o};
    if (!runner_check_field(r, want, got, value, sc, &field)) break;
    if (oracle_field_is_block(want) && !r->seen[oracle_field_block_of(want)]) {
      verify_object(r, sc, oracle_field_block_of(want), depth + 1);
    }
  }
  r->b->clear(r->h, sc);
}

/* From every bank's cells but the scratch ones, into the calling thread's scratch. */
static void verify_graph(runner *r) {
  r->walk_due = 0;
  if (!grow_seen(r)) return;
  memset(r->seen, 0, oracle_model_count(r->m));
  for (size_t bank = 0; bank < r->cells; bank += BANK_CELLS) {
    for (size_t c = bank; c < bank + BANK_SCRATCH; c++) {
      oracle_obj o = oracle_model_cell(r->m, c);
      if (o != ORACLE_NONE && !r->seen[o]) verify_object(r, c, o, 0);
    }
  }
}

/* One thread inside an op: the calling one, whose op the walk follows (threads.c counts). */
void runner_walk_if_due(runner *r) {
  if (r->walk_due && r->inflight <= 1) verify_graph(r);
}

/* ---- After a collection -------------------------------------------------------------------- */

void runner_deep_check(runner *r) {
  if (!(r->b->caps & FUZZ_CAP_DEEP_CHECK) || r->b->check == NULL) return;
  fuzz_finding f[4];
  r->res->deep_checks++;
  size_t n = r->b->check(r->h, f, 4);
  for (size_t i = 0; i < n && i < 4; i++) runner_report(r, f[i].kind, "%s", f[i].message);
  if (n > 4) fprintf(r->out, "  (%zu more findings of the backend's check)\n", n - 4);
}

void runner_on_finding(void *user, const fuzz_finding *f) {
  runner *r = user;
  r->res->deep_checks++;
  runner_report(r, f->kind, "%s", f->message);
}

typedef struct walk_state {
  runner *r;
  size_t unknown;
  oracle_obj first_unknown_id_low;
  int whole; /* check_full's: the blocks not freed are judged too */
} walk_state;

static void walk_visit(void *user, uint64_t id, uint64_t check) {
  walk_state *w = user;
  runner *r = w->r;
  oracle_obj o = oracle_model_by_id(r->m, id);
  if (o == ORACLE_NONE || oracle_model_object(r->m, o)->check != check) {
    if (w->unknown++ == 0) {
      report_whole(r, "oracle.identity",
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
  if (w->whole && (r->b->caps & FUZZ_CAP_PRECISE) &&
      !oracle_model_reached(r->m, ORACLE_REACH_KEPT, o)) {
    report_whole(
        r, "oracle.not-freed",
        "object #%u is unreachable (no cell, field, finalizer or range keeps it) yet still "
        "in the heap after a full collection",
        (unsigned)o);
  }
}

/* The checks of a full collection: the leak bound, and on a precise backend the walk. */
/* `whole`: no other domain runs with a lazy sweep of its own to do (threads.c): the collection
 * then gave back everything it freed, and the leak bound, the blocks not freed and the finalizers
 * due are judged too; else only what the cells reach (oracle.lost). */
static void check_full(runner *r, int whole) {
  oracle_model_reach(r->m, ORACLE_REACH_KEPT, r->cell_self);
  if (whole && r->b->live_bytes != NULL) {
    size_t live = r->b->live_bytes(r->h), kept = oracle_model_kept_bytes(r->m);
    double bound = r->b->leak_slack_factor * (double)kept + (double)r->b->leak_slack_bytes;
    r->res->checks++;
    if ((double)live > bound) {
      report_whole(
          r, "oracle.leak",
          "after a full collection the backend holds %zu bytes; the program keeps %zu bytes "
          "of blocks, and the backend's stated bound is %.2f x that + %zu = %.0f bytes",
          live, kept, r->b->leak_slack_factor, r->b->leak_slack_bytes, bound);
    }
  }
  if (!(r->b->caps & FUZZ_CAP_WALK)) return;
  if (!grow_seen(r)) return;
  memset(r->seen, 0, oracle_model_count(r->m));
  walk_state w = {r, 0, 0, whole};
  r->res->checks++;
  r->b->walk(r->h, walk_visit, &w);
  /* Every object the cells reach must have been met. */
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, r->cell_self);
  for (size_t k = 0; k < oracle_model_count(r->m); k++) {
    if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, (oracle_obj)k) && !r->seen[k]) {
      report_whole(r, "oracle.lost",
                   "object #%u is reachable from the cells but the heap's walk after a full "
                   "collection did not meet it (freed while reachable)",
                   (unsigned)k);
      break;
    }
  }
  /* A finalizer of a block nothing keeps must have run: the collection found it unreachable. */
  if (!whole || !(r->b->caps & FUZZ_CAP_FINALIZERS) || !(r->b->caps & FUZZ_CAP_PRECISE)) return;
  oracle_obj due =
      oracle_model_fin_overdue(r->m, r->cell_self, (r->b->caps & FUZZ_CAP_FIN_ORDERED) != 0);
  r->res->checks++;
  if (due != ORACLE_NONE) {
    report_whole(r, "oracle.finalizer-lost",
                 "object #%u has a finalizer set and nothing keeps it (no cell, no block with a "
                 "finalizer above it), but a full collection did not run its finalizer",
                 (unsigned)due);
  }
}

/* On threads: no other domain runs (its thread attached, not in a blocking section). A running
 * domain sweeps its own pools lazily, so a full collection another starts need not give back
 * the garbage in them; one parked in a blocking section is swept by whoever needs it. */
static int others_parked(const runner *r) {
  if (!r->threaded) return 1;
  unsigned me = runner_me(r)->on;
  for (unsigned d = 0; d < FUZZ_DOMAINS; d++) {
    if (d != me && r->attached[d] && !r->blocked[d]) return 0;
  }
  return 1;
}

/* What follows a collection. On threads, a collection another thread's op overlapped (one
 * inside an op when it began, or one that began or ended an op while it ran) saw a heap the
 * model does not describe at any one moment: the full collection's comparisons are skipped, and
 * the graph walk waits for a boundary where no other thread is inside an op (threads.c). */
static void collected(runner *r, fuzz_collect_kind kind, int alone, uint64_t events) {
  if (r->b->run_finalizers != NULL) r->b->run_finalizers(r->h);
  runner_deep_check(r);
  if (kind == FUZZ_COLLECT_MAJOR || kind == FUZZ_COLLECT_FULL) {
    r->walk_due = 1;
    runner_walk_if_due(r);
  }
  if (kind != FUZZ_COLLECT_FULL) return;
  if (!alone || r->op_events != events) {
    r->res->skipped_full++;
    return;
  }
  int whole = others_parked(r);
  r->held.count = 0;
  check_full(r, whole);
  if (r->op_events != events) { /* another thread ran ops while the checks read the heap */
    r->res->skipped_full++;
    return;
  }
  if (r->held.count > 0) runner_report(r, r->held.kind, "%s", r->held.message);
  if (whole) oracle_model_forget_revivals(r->m); /* every finalizer due has run */
}

void runner_collected(runner *r, fuzz_collect_kind kind) {
  collected(r, kind, r->inflight <= 1, r->op_events);
}

void runner_collect(runner *r, fuzz_collect_kind kind, unsigned budget) {
  oracle_model_count_collect(r->m);
  if (r->opt->trace != NULL) {
    fprintf(r->opt->trace, "        [collect %s, budget %u]\n", fuzz_collect_names[kind], budget);
  }
  /* What the collection begins with it keeps, whatever its finalizers resurrect over cells. */
  oracle_model_reach(r->m, ORACLE_REACH_AT_COLLECT, r->cell_self);
  uint64_t events = r->op_events;
  int alone = r->inflight <= 1;
  r->b->collect(r->h, kind, budget);
  collected(r, kind, alone, events);
}
