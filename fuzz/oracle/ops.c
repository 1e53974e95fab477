/* What each op does (runner.h): to the backend through its table and to the model, with the
 * checks of the calls' answers; finalizers and their bodies; domains. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/runner.h"

/* ---- Finalizer bodies ---------------------------------------------------------------------- */

/* A fin_do's body as the model keeps it (never 0): where its ops start in the program's bytes,
 * the number of the first, their depth and their count. The op's own bytes are its opcode and
 * two one-byte operands. */
static uint64_t body_tag(const fuzz_op *op) {
  uint64_t pos = (uint64_t)op->offset + 3;
  return (uint64_t)1 << 63 | (pos & 0xffffffffu) << 30 |
         ((uint64_t)(op->index + 1) & 0xffffff) << 6 | (uint64_t)(op->depth + 1) << 4 |
         (uint64_t)op->body;
}

/* What a finalizer body may do here: what a body runs (ops.h), but collect (backend.h: the
 * finalize event may not collect). */
static int body_op_allowed(fuzz_opcode code) {
  return code != FUZZ_OP_COLLECT && fuzz_op_runs_in_body(code);
}

/* The body of object o's finalizer runs, inside the backend's finalize event: its ops, on the
 * program's slots and cells, with o in FUZZ_CELL_SELF (the self op reads it). */
static void run_body(runner *r, oracle_obj o, uint64_t tag) {
  runner_mut *u = runner_me(r);
  int depth0 = u->body_depth;
  oracle_obj self0 = u->fin_self;
  const fuzz_op *op0 = u->op;
  int depth = (int)(tag >> 4 & 3), count = (int)(tag & 15);
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init_body(&dec, r->set, r->data, r->size, (size_t)(tag >> 30 & 0xffffffffu),
                         (size_t)(tag >> 6 & 0xffffff), depth, count);
  u->body_depth = depth;
  u->fin_self = o;
  while (fuzz_program_next(&dec, &op)) {
    u->op = &op;
    runner_trace_op(r, &op);
    if (op.depth == depth) r->res->body_ops++;
    runner_run_op(r, &op);
  }
  u->op = op0;
  u->body_depth = depth0;
  u->fin_self = self0;
}

/* ---- Finalizers ---------------------------------------------------------------------------- */

void runner_on_finalize(void *user, uint64_t token) {
  runner *r = user;
  r->res->finalizers++;
  oracle_obj o = (oracle_obj)(token - 1);
  oracle_object *ob = oracle_model_object(r->m, o);
  if (ob == NULL) {
    runner_report(r, "oracle.finalizer-unset",
                  "a finalizer ran with token %" PRIu64 ", which the program never gave", token);
    return;
  }
  if (r->opt->trace != NULL) fprintf(r->opt->trace, "        [finalizer of #%u]\n", (unsigned)o);
  where at = {"the block the finalizer of #%lu was handed", o, 0};
  if (!runner_check_identity(r, r->cell_self, o, &at)) return;
  if (ob->fin != ORACLE_FIN_SET) {
    runner_report(r,
                  ob->fin == ORACLE_FIN_RAN ? "oracle.finalizer-twice" : "oracle.finalizer-unset",
                  "object #%u's finalizer runs, but %s", (unsigned)o,
                  ob->fin == ORACLE_FIN_RAN ? "it ran already and was not set again"
                                            : "it was cleared (or never set)");
    return;
  }
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, r->cell_self);
  r->res->checks++;
  if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, o) && !ob->revived) {
    runner_report(
        r, "oracle.finalizer-live",
        "object #%u's finalizer runs while the object is reachable from the cells (and no "
        "resurrection made it so)",
        (unsigned)o);
  }
  /* An ordering collector finalizes nothing a pending finalizer's block still reaches. */
  r->res->checks++;
  if ((r->b->caps & FUZZ_CAP_FIN_ORDERED) && !ob->revived &&
      oracle_model_below_finalizers(r->m, o)) {
    runner_report(r, "oracle.finalizer-order",
                  "object #%u's finalizer runs while a block whose finalizer is set (since before "
                  "this collection, and not run yet) reaches it: ordered finalization runs that "
                  "one first",
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
    /* Into the slot of whichever mutator runs the finalizer: on threads, only a domain's own
     * thread touches its bank. */
    size_t cell = slot_cell(r, (int)ob->fin_cell);
    r->b->copy(r->h, cell, r->cell_self);
    oracle_model_revive(r->m, cell, o, r->cell_self);
  }
  uint64_t body = ob->body; /* ob moves if the body makes objects */
  if (body != 0) run_body(r, o, body);
}

/* ---- The ops ------------------------------------------------------------------------------- */

static oracle_obj slot_obj(runner *r, int s) { return oracle_model_cell(r->m, slot_cell(r, s)); }

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
  if (r->fail_window > 0 && runner_me(r)->body_depth == 0) { /* none made in a finalizer counts */
    /* Under a heap limit or a tuned parameter a failure may be the limit's, not the injected
     * one: the window then runs on (the injected one may still come), and ends unreported. */
    int excused = r->tuned || r->limit_bytes != 0;
    if (!ok && !excused) {
      r->fail_window = 0; /* the failure came */
      return;
    }
    if (!ok) r->fail_maybe_spent = 1;
    if (--r->fail_window == 0 && !r->fail_maybe_spent) {
      runner_report(
          r, "oracle.failure-missed",
          "the injected failure was due by this %s (the last call of its window), but every "
          "call succeeded",
          what);
    }
    return;
  }
  if (!ok && !r->tuned && r->limit_bytes == 0) {
    runner_report(r, "oracle.unexpected-failure",
                  "%s failed with no injected failure due and no heap limit", what);
  }
}

/* After an allocating call into cell `dst` that answered `ok`: the answer checked, and on
 * success the model's new object, its identity given and the cell set; ORACLE_NONE (the cell
 * empty) on failure. */
static oracle_obj made(runner *r, size_t dst, int ok, const char *what, fuzz_block_shape shape,
                       oracle_role role, size_t n) {
  check_allocation(r, ok, what);
  if (!ok) {
    set_cell(r, dst, ORACLE_NONE);
    return ORACLE_NONE;
  }
  oracle_obj o = oracle_model_new(r->m, shape, role, n);
  if (o == ORACLE_NONE) abort(); /* the model's memory is the harness's */
  runner_give_identity(r, dst, o);
  set_cell(r, dst, o);
  return o;
}

/* A new block holds nothing the program did not write (backend.h: alloc's fields are empty, a
 * raw block's words zero), read back at once: a field left with what a freed block held would
 * be marked through at the next collection, and the crash there would name the marker, not the
 * allocator. */
static void check_fresh(runner *r, size_t cell, oracle_obj o, fuzz_block_shape shape, size_t n) {
  size_t sc = scratch_cell(r, 0);
  for (size_t f = 0; f < n; f++) {
    r->res->checks++;
    if (shape == FUZZ_SHAPE_RAW) {
      uint64_t w = r->b->raw_read(r->h, cell, f);
      if (w != 0) {
        runner_report(r, "oracle.contents",
                      "object #%u, just allocated (raw), payload word %zu holds 0x%016" PRIx64
                      ", not 0",
                      (unsigned)o, f, w);
        return;
      }
      continue;
    }
    int64_t value = 0;
    fuzz_field_kind got = r->b->load(r->h, sc, cell, f, &value);
    if (got == FUZZ_FIELD_BLOCK) r->b->clear(r->h, sc);
    if (got != FUZZ_FIELD_EMPTY) {
      runner_report(r, "oracle.contents",
                    "object #%u, just allocated, field %zu holds %s, not nothing", (unsigned)o, f,
                    got == FUZZ_FIELD_INT ? "an integer" : "a block or junk");
      return;
    }
  }
}

static void op_alloc(runner *r, int dst, fuzz_block_kind kind, size_t n) {
  /* A custom block is gcfuzz's own (a block with a finalize function): elsewhere, raw data. */
  fuzz_block_shape shape =
      kind == FUZZ_KIND_SCAN || !(r->b->caps & FUZZ_CAP_RAW) ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW;
  /* sD's old block is dropped before the allocation, which may collect: a backend may empty the
   * cell first or last, so the model and the backend empty it first, together. */
  op_clear(r, slot_cell(r, dst));
  int ok = r->b->alloc(r->h, slot_cell(r, dst), shape, n);
  oracle_obj o = made(r, slot_cell(r, dst), ok, "allocation", shape, ORACLE_PLAIN, n);
  if (o != ORACLE_NONE) check_fresh(r, slot_cell(r, dst), o, shape, n);
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
    r->b->raw_write(r->h, slot_cell(r, dst.a), f, word);
    oracle_model_set_field(r->m, o, f, word);
  } else if (is_imm) {
    r->b->store_int(r->h, slot_cell(r, dst.a), f, value);
    oracle_model_set_field(r->m, o, f, oracle_field_int(value));
  } else {
    oracle_obj v = slot_obj(r, value);
    r->b->store(r->h, slot_cell(r, dst.a), f, slot_cell(r, value));
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
  fuzz_field_kind got = r->b->load(r->h, slot_cell(r, dst), slot_cell(r, src.a), f, &value);
  where at = {"load of field %lu of object #%lu", f, o};
  runner_check_field(r, want, got, value, slot_cell(r, dst), &at);
  /* The model follows the program: whatever the backend put there, the slot means `want`. */
  oracle_obj now = oracle_field_is_block(want) ? oracle_field_block_of(want) : ORACLE_NONE;
  if (now == ORACLE_NONE && got == FUZZ_FIELD_BLOCK) r->b->clear(r->h, slot_cell(r, dst));
  set_cell(r, slot_cell(r, dst), now);
}

static void op_push(runner *r) {
  runner_mut *u = runner_me(r);
  if (u->frames == FUZZ_FRAMES) return;
  int k = u->frames++;
  for (int s = 0; s < FUZZ_SLOTS; s++) op_copy(r, frame_cell(r, k, s), slot_cell(r, s));
}

static void op_pop(runner *r) {
  runner_mut *u = runner_me(r);
  if (u->frames == 0) return;
  int k = --u->frames;
  for (int s = 0; s < FUZZ_SLOTS; s++) op_clear(r, frame_cell(r, k, s));
}

static void op_fin(runner *r, int s, int revive) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  if (!r->b->fin_set(r->h, slot_cell(r, s), (uint64_t)o + 1)) return;
  oracle_object *ob = oracle_model_object(r->m, o);
  ob->fin = ORACLE_FIN_SET;
  ob->fin_set_collect = oracle_model_collects(r->m);
  ob->fin_cell = revive == FUZZ_NO_SLOT ? SIZE_MAX : (size_t)revive;
  ob->body = 0;
}

/* fin_do sS N: a finalizer whose body is the next N ops. */
static void op_fin_do(runner *r, const fuzz_op *op) {
  int s = op->args[0].a;
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  if (!r->b->fin_set(r->h, slot_cell(r, s), (uint64_t)o + 1)) return;
  oracle_object *ob = oracle_model_object(r->m, o);
  ob->fin = ORACLE_FIN_SET;
  ob->fin_set_collect = oracle_model_collects(r->m);
  ob->fin_cell = SIZE_MAX;
  ob->body = body_tag(op);
}

/* self sD, in a body: sD = the block whose finalizer runs, a resurrection. */
static void op_self(runner *r, int dst) {
  if (runner_me(r)->body_depth == 0) return;
  r->b->copy(r->h, slot_cell(r, dst), r->cell_self);
  oracle_model_revive(r->m, slot_cell(r, dst), runner_me(r)->fin_self, r->cell_self);
}

/* ---- Pins and the heap limit --------------------------------------------------------------- */

static void op_pin(runner *r, int s) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  int ok = r->b->pin(r->h, slot_cell(r, s));
  r->res->checks++;
  if (!ok) {
    runner_report(r, "oracle.pin", "pinning object #%u, a live block, was refused", (unsigned)o);
    return;
  }
  oracle_model_set_pinned(r->m, o, 1);
}

static void op_unpin(runner *r, int s) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  int was = oracle_model_object(r->m, o)->pinned;
  int had = r->b->unpin(r->h, slot_cell(r, s));
  r->res->checks++;
  if (had != was) {
    runner_report(r, "oracle.pin", "unpinning object #%u answered %s, but the model says it %s",
                  (unsigned)o, had ? "it was pinned" : "it was not pinned",
                  was ? "was pinned" : "was not");
  }
  oracle_model_set_pinned(r->m, o, 0);
}

static void op_limit(runner *r, int index) {
  r->limit_bytes = fuzz_limit_bytes((size_t)index);
  r->b->limit(r->h, r->limit_bytes);
}

/* ---- Domains ------------------------------------------------------------------------------- */

static void op_spawn(runner *r, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || r->spawned[d]) return;
  if (r->threaded) {
    r->spawn_thread(r, d);
    return;
  }
  int ok = r->b->domain_spawn(r->h, d);
  r->res->checks++;
  if (!ok && !r->tuned) {
    runner_report(r, "oracle.unexpected-failure", "spawning domain d%u failed", d);
    return;
  }
  r->spawned[d] = ok != 0;
}

/* One thread: the calls that follow run on d. A threaded run splits the program at `on`
 * instead (threads.c), so none reaches here. */
static void op_on(runner *r, unsigned d) {
  runner_mut *u = runner_me(r);
  if (r->threaded || d == u->on || (d != 0 && !r->spawned[d])) return;
  r->b->domain_on(r->h, d);
  u->on = d;
}

void runner_end_domain(runner *r, unsigned d) {
  if (r->threaded) {
    /* Its thread's bank: the roots of the domain that ends, and so gone with it. */
    runner_mut *u = &r->muts[d];
    for (size_t c = u->bank; c < u->bank + BANK_CELLS; c++) {
      if (oracle_model_cell(r->m, c) != ORACLE_NONE) op_clear(r, c);
    }
    u->frames = 0;
  }
  r->b->domain_end(r->h, d);
  r->spawned[d] = 0;
  r->blocked[d] = 0;
}

/* terminate dN: one thread ends any domain from the one it is on; a threaded run sends the op
 * to dN's own thread (threads.c), so a domain ends itself. */
static void op_terminate(runner *r, unsigned d) {
  runner_mut *u = runner_me(r);
  if (d == 0 || !r->spawned[d] || (r->threaded && d != u->on)) return;
  runner_end_domain(r, d);
  if (u->on == d && !r->threaded) u->on = 0;
}

static void op_block(runner *r, int block) {
  unsigned on = runner_me(r)->on;
  if (r->blocked[on] == block) return;
  if (block) {
    r->b->domain_block(r->h);
  } else {
    r->b->domain_unblock(r->h);
  }
  r->blocked[on] = (unsigned char)block;
}

void runner_unblock(runner *r) { op_block(r, 0); }

static void op_unfin(runner *r, int s) {
  oracle_obj o = slot_obj(r, s);
  if (o == ORACLE_NONE) return;
  oracle_object *ob = oracle_model_object(r->m, o);
  int had = r->b->fin_clear(r->h, slot_cell(r, s));
  r->res->checks++;
  if (had != (ob->fin == ORACLE_FIN_SET)) {
    runner_report(r, "oracle.finalizer-clear",
                  "clearing object #%u's finalizer answered %s, but the model says it %s",
                  (unsigned)o, had ? "one was set" : "none was set",
                  ob->fin == ORACLE_FIN_SET ? "was set and has not run" : "has none");
  }
  /* A finalizer that ran stays one that ran: what it leaves is kept until the collection it
   * ran in is over (model.h: kept), whatever is cleared after. */
  if (ob->fin == ORACLE_FIN_SET) ob->fin = ORACLE_FIN_NONE;
}

/* Word I of range N = w, in the backend's range and in the model. */
static void set_range_word(runner *r, fuzz_arg word, uintptr_t w) {
  size_t i = (size_t)word.a * FUZZ_RANGE_WORDS + (size_t)word.b;
  r->ranges[i] = w;
  oracle_model_set_range_word(r->m, i, w, r->cell_self);
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

/* Word I of range N: the start of the unit holding sS's block (backend.h: address_unit) plus K
 * words, modulo the unit's size: its header, its first slots, free or not. */
static void op_range_unit(runner *r, fuzz_arg word, int s, int k) {
  uintptr_t w = 0, start;
  size_t bytes;
  if (slot_obj(r, s) != ORACLE_NONE && r->b->address_unit(r->h, slot_cell(r, s), &start, &bytes) &&
      bytes > 0) {
    w = start + ((size_t)k * sizeof(uint64_t)) % bytes;
  }
  set_range_word(r, word, w);
}

static void op_weak(runner *r, int dst, int target) {
  oracle_obj t = slot_obj(r, target);
  if (t == ORACLE_NONE) return;
  if (dst != target) op_clear(r, slot_cell(r, dst)); /* as in op_alloc */
  int ok = r->b->weak_new(r->h, slot_cell(r, dst), slot_cell(r, target));
  oracle_obj w = made(r, slot_cell(r, dst), ok, "weak reference", FUZZ_SHAPE_SCAN, ORACLE_WEAK, 0);
  if (w != ORACLE_NONE) oracle_model_object(r->m, w)->a = t;
}

static void op_ephe(runner *r, int dst, int key, int datum) {
  oracle_obj k = slot_obj(r, key), v = slot_obj(r, datum);
  if (k == ORACLE_NONE || v == ORACLE_NONE) return;
  if (dst != key && dst != datum) op_clear(r, slot_cell(r, dst)); /* as in op_alloc */
  int ok = r->b->ephe_new(r->h, slot_cell(r, dst), slot_cell(r, key), slot_cell(r, datum));
  oracle_obj e = made(r, slot_cell(r, dst), ok, "ephemeron", FUZZ_SHAPE_SCAN, ORACLE_EPHE, 0);
  if (e == ORACLE_NONE) return;
  oracle_model_object(r->m, e)->a = k;
  oracle_model_object(r->m, e)->b = v;
}

/* A set aims the reference anew (backend.h: weak_set, ephe_set): it answers as a new reference
 * to the same blocks would. What the model kept about the old target or key goes: a get that
 * answered empty (the old target found dead), an excuse for answering empty (the old target or
 * key finalized or revived), a finalizer that ran on the old target while this named it. A later
 * finalizer or revival of the new one excuses it again (oracle_model_excuse_weak). */
static void aim(oracle_object *ob, oracle_obj a, oracle_obj b) {
  ob->a = a;
  ob->b = b;
  ob->weak_cleared = 0;
  ob->may_be_empty = 0;
  ob->after_finalizer = 0;
}

/* --trace, inside a compaction's stop: where each other domain's thread stands (a threaded run;
 * one thread runs at a time, so the others' records hold still), into u->others. */
static void note_others(runner *r, runner_mut *u) {
  size_t n = 0;
  u->others[0] = 0;
  for (unsigned d = 0; r->threaded && d < FUZZ_DOMAINS; d++) {
    const runner_mut *o = &r->muts[d];
    if (o == u || (d != 0 && !r->spawned[d])) continue;
    char text[FUZZ_OP_TEXT_MAX];
    int w;
    if (!r->attached[d]) {
      w = snprintf(u->others + n, sizeof u->others - n, "; d%u parked, its part not begun or over",
                   d);
    } else if (o->op != NULL) {
      w = snprintf(u->others + n, sizeof u->others - n, "; d%u inside op %zu `%s`", d, o->op->index,
                   fuzz_op_format(o->op, text, sizeof text));
    } else {
      w = snprintf(u->others + n, sizeof u->others - n, "; d%u between ops%s", d,
                   r->blocked[d] ? ", blocked" : "");
    }
    if (w < 0 || (size_t)w >= sizeof u->others - n) break; /* cut: the trace says enough */
    n += (size_t)w;
  }
}

/* A block the backend's compaction moved (backend.h: compact): its address follows, and any
 * other object whose recorded block overlaps where it went was freed before (a compaction moves
 * into free slots only), so a range word there names the moved block from now on. Called on the
 * thread whose compact op led the compaction, with every other domain stopped. */
static void moved_to(void *user, uint64_t id, uintptr_t start) {
  runner *r = user;
  runner_mut *u = runner_me(r);
  if (r->opt->trace != NULL && u->moves++ == 0) note_others(r, u);
  oracle_model_moved(r->m, oracle_model_by_id(r->m, id), start);
}

/* compact: a collection for the model (it finishes the cycle marking now, whose finalizers then
 * run), then every cell and field must read back as before: the walk after it. */
static void op_compact(runner *r) {
  runner_mut *u = runner_me(r);
  oracle_model_count_collect(r->m);
  oracle_model_reach(r->m, ORACLE_REACH_AT_COLLECT, r->cell_self);
  if (r->opt->trace != NULL) fprintf(r->opt->trace, "        [compact]\n");
  u->moves = 0;
  u->others[0] = 0;
  r->b->compact(r->h, moved_to, r);
  if (r->opt->trace != NULL) {
    fprintf(r->opt->trace, "        [compacted: %zu blocks moved%s]\n", u->moves, u->others);
  }
  runner_collected(r, FUZZ_COLLECT_MAJOR);
}

/* weak_set sW sT: sW's weak reference names sT's block, or none. */
static void op_weak_set(runner *r, int weak, int target) {
  oracle_obj w = slot_obj(r, weak);
  if (w == ORACLE_NONE || oracle_model_object(r->m, w)->role != ORACLE_WEAK) return;
  r->b->weak_set(r->h, slot_cell(r, weak), slot_cell(r, target));
  aim(oracle_model_object(r->m, w), slot_obj(r, target), ORACLE_NONE);
}

/* ephe_set sE sK sV: sE's ephemeron has key sK and datum sV, either none. */
static void op_ephe_set(runner *r, int ephe, int key, int datum) {
  oracle_obj e = slot_obj(r, ephe);
  if (e == ORACLE_NONE || oracle_model_object(r->m, e)->role != ORACLE_EPHE) return;
  r->b->ephe_set(r->h, slot_cell(r, ephe), slot_cell(r, key), slot_cell(r, datum));
  aim(oracle_model_object(r->m, e), slot_obj(r, key), slot_obj(r, datum));
}

/* weak_get and ephe_get: `want` is the target (datum), `alive` the object whose life decides
 * (the target; the key). A reference set to none (either of an ephemeron's) answers empty. */
static void op_get(runner *r, int dst, int src, oracle_role role) {
  oracle_obj w = slot_obj(r, src);
  if (w == ORACLE_NONE) return;
  oracle_object *ob = oracle_model_object(r->m, w);
  if (ob->role != role) return;
  oracle_obj want = role == ORACLE_WEAK ? ob->a : ob->b, alive = ob->a;
  int got = role == ORACLE_WEAK ? r->b->weak_get(r->h, slot_cell(r, dst), slot_cell(r, src))
                                : r->b->ephe_get(r->h, slot_cell(r, dst), slot_cell(r, src));
  where at = {role == ORACLE_WEAK ? "the weak reference #%lu's get" : "the ephemeron #%lu's get", w,
              0};
  char buf[96];
  r->res->checks++;
  int none = want == ORACLE_NONE || alive == ORACLE_NONE;
  if (got && none) {
    runner_report(r, "oracle.identity",
                  "%s answered a block, but its %s was set to none: it must answer empty",
                  runner_where_text(&at, buf, sizeof buf),
                  role == ORACLE_WEAK    ? "target"
                  : alive == ORACLE_NONE ? "key"
                                         : "datum");
    op_clear(r, slot_cell(r, dst));
    return;
  }
  if (got) {
    if (ob->weak_cleared) {
      runner_report(r, "oracle.weak-revived", "%s answered a block after it had answered empty",
                    runner_where_text(&at, buf, sizeof buf));
    } else if (ob->after_finalizer) {
      runner_report(
          r, "oracle.weak-after-finalizer",
          "%s answered its target, object #%u, whose finalizer ran while the weak reference "
          "was reachable: it should have been cleared before the finalizer",
          runner_where_text(&at, buf, sizeof buf), (unsigned)want);
    }
    if (!runner_check_identity(r, slot_cell(r, dst), want, &at)) {
      op_clear(r, slot_cell(r, dst));
      return;
    }
    /* A get that hands back a block nothing else reached is a revival like a resurrection: the
     * collector may already have separated it for finalization (Lua keeps an ephemeron's entry
     * until the cycle after its key was separated), so its finalizer may still run. */
    oracle_model_reach(r->m, ORACLE_REACH_STRONG, r->cell_self);
    if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, want)) {
      set_cell(r, slot_cell(r, dst), want);
    } else {
      oracle_model_revive(r->m, slot_cell(r, dst), want, r->cell_self);
    }
    return;
  }
  set_cell(r, slot_cell(r, dst), ORACLE_NONE);
  if (none) return; /* the right answer, and no sign of a clearing */
  ob->weak_cleared = 1;
  if (ob->may_be_empty) return;
  oracle_model_reach(r->m, ORACLE_REACH_STRONG, r->cell_self);
  if (oracle_model_reached(r->m, ORACLE_REACH_STRONG, alive)) {
    runner_report(r, "oracle.weak-cleared",
                  "%s answered empty while its %s, object #%u, is reachable from the cells",
                  runner_where_text(&at, buf, sizeof buf), role == ORACLE_WEAK ? "target" : "key",
                  (unsigned)alive);
  }
}

/* ---- The check of the collector's API and of its deep check --------------------------------- */

/* misuse NAME: the backend says how its collector answered; a refused call leaves the heap as it
 * was, which the deep check right after says. */
static void op_misuse(runner *r, fuzz_misuse which) {
  char what[256] = "";
  fuzz_misuse_answer a = r->b->misuse(r->h, fuzz_misuse_names[which], what, sizeof what);
  if (a == FUZZ_ANSWER_NOT_MINE) return;
  r->res->checks++;
  if (a == FUZZ_ANSWER_WRONG) {
    runner_report(r, "oracle.api-error", "misuse %s: %s", fuzz_misuse_names[which], what);
  } else {
    r->res->refused++;
  }
  runner_deep_check(r);
}

/* corrupt NAME sS N: the backend plants, checks, repairs and checks again (backend.h). The part
 * of the deep check it runs compares the whole heap, so on threads it needs every other thread
 * between two ops (threads.c): while one is inside an op, the heap may be halfway through it
 * (a pool in the heap's set and not yet in its owner's list), and the op is a no-op. */
static void op_corrupt(runner *r, fuzz_corruption which, int s, int n) {
  if (r->threaded && r->inflight > 1) return;
  fuzz_finding found = {"", ""};
  const char *name = fuzz_corruption_names[which];
  fuzz_plant_result got = r->b->corrupt(r->h, name, slot_cell(r, s), (unsigned)n, &found);
  if (got == FUZZ_PLANT_NONE) return;
  r->res->checks++;
  switch (got) {
    case FUZZ_PLANT_CAUGHT: r->res->planted++; break;
    case FUZZ_PLANT_FOUND: runner_report(r, found.kind, "%s", found.message); break;
    case FUZZ_PLANT_MISSED:
      runner_report(r, "oracle.corruption-missed", "corrupt %s s%d %d (expected %s): %s", name, s,
                    n, found.kind, found.message);
      break;
    case FUZZ_PLANT_UNREPAIRED:
      runner_report(r, "oracle.corruption-unrepaired", "corrupt %s s%d %d: %s", name, s, n,
                    found.message);
      break;
    default: break;
  }
}

void runner_trace_op(runner *r, const fuzz_op *op) {
  runner_mut *u = runner_me(r);
  if (r->opt->trace == NULL || op->depth != u->body_depth) return;
  char text[FUZZ_OP_TEXT_MAX];
  if (r->threaded) fprintf(r->opt->trace, "d%u ", u->on);
  fprintf(r->opt->trace, "%4zu  %*s%s", op->index, 2 * op->depth, "",
          fuzz_op_format(op, text, sizeof text));
  if (u->body_depth > 0) fprintf(r->opt->trace, "   (finalizer of #%u)", (unsigned)u->fin_self);
  if (op->code == FUZZ_OP_TUNE && (size_t)op->args[0].a < r->b->tunable_count) {
    fprintf(r->opt->trace, "   (%s)", r->b->tunables[op->args[0].a].name);
  }
  fputc('\n', r->opt->trace);
}

void runner_run_op(runner *r, const fuzz_op *op) {
  const fuzz_arg *a = op->args;
  const runner_mut *u = runner_me(r);
  /* A finalizer body's ops run only in it (run_body), and only those a body may run. */
  if (op->depth != u->body_depth || (u->body_depth > 0 && !body_op_allowed(op->code))) return;
  /* A domain in a blocking section touches no block: only on and unblock run (ops.h). */
  if (r->blocked[u->on] && op->code != FUZZ_OP_ON && op->code != FUZZ_OP_UNBLOCK) return;
  switch (op->code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE: op_alloc(r, a[0].a, (fuzz_block_kind)a[1].a, (size_t)a[2].a); break;
    case FUZZ_OP_STORE: op_store(r, a[0], 0, a[1].a); break;
    case FUZZ_OP_STORE_IMM: op_store(r, a[0], 1, a[1].a); break;
    case FUZZ_OP_LOAD: op_load(r, a[0].a, a[1]); break;
    case FUZZ_OP_DROP: op_clear(r, slot_cell(r, a[0].a)); break;
    case FUZZ_OP_COPY: op_copy(r, slot_cell(r, a[0].a), slot_cell(r, a[1].a)); break;
    case FUZZ_OP_PUSH: op_push(r); break;
    case FUZZ_OP_POP: op_pop(r); break;
    case FUZZ_OP_ROOT: op_copy(r, global_cell(r, a[0].a), slot_cell(r, a[1].a)); break;
    case FUZZ_OP_UNROOT: op_clear(r, global_cell(r, a[0].a)); break;
    case FUZZ_OP_COLLECT: runner_collect(r, (fuzz_collect_kind)a[0].a, 0); break;
    case FUZZ_OP_MARK_SLICE: runner_collect(r, FUZZ_COLLECT_SLICE, (unsigned)a[0].a); break;
    case FUZZ_OP_FAIL:
      r->fail_window = (unsigned)a[0].a;
      r->fail_maybe_spent = 0;
      r->b->fail_after(r->h, r->fail_window);
      break;
    case FUZZ_OP_FIN: op_fin(r, a[0].a, a[1].a); break;
    case FUZZ_OP_UNFIN: op_unfin(r, a[0].a); break;
    case FUZZ_OP_RANGE: op_range(r, a[0], a[1].a, a[2]); break;
    case FUZZ_OP_RANGE_INT: set_range_word(r, a[0], (uintptr_t)a[1].a); break;
    case FUZZ_OP_RANGE_WORD: set_range_word(r, a[0], (uintptr_t)a[1].word); break;
    case FUZZ_OP_RANGE_POOL: op_range_unit(r, a[0], a[1].a, a[2].a); break;
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
    case FUZZ_OP_WEAK_SET: op_weak_set(r, a[0].a, a[1].a); break;
    case FUZZ_OP_EPHE_SET: op_ephe_set(r, a[0].a, a[1].a, a[2].a); break;
    case FUZZ_OP_FIN_DO: op_fin_do(r, op); break;
    case FUZZ_OP_SELF: op_self(r, a[0].a); break;
    case FUZZ_OP_SPAWN: op_spawn(r, (unsigned)a[0].a); break;
    case FUZZ_OP_ON: op_on(r, (unsigned)a[0].a); break;
    case FUZZ_OP_TERMINATE: op_terminate(r, (unsigned)a[0].a); break;
    case FUZZ_OP_BLOCK: op_block(r, 1); break;
    case FUZZ_OP_UNBLOCK: op_block(r, 0); break;
    case FUZZ_OP_PIN: op_pin(r, a[0].a); break;
    case FUZZ_OP_UNPIN: op_unpin(r, a[0].a); break;
    case FUZZ_OP_LIMIT: op_limit(r, a[0].a); break;
    case FUZZ_OP_MISUSE: op_misuse(r, (fuzz_misuse)a[0].a); break;
    case FUZZ_OP_CORRUPT: op_corrupt(r, (fuzz_corruption)a[0].a, a[1].a, a[2].a); break;
    case FUZZ_OP_COMPACT: op_compact(r); break;
    default: break; /* not in a backend's op set */
  }
}
