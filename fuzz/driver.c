/* The fuzz driver (see driver.h): one program, one fresh heap, every pass after every cycle. */
#include "fuzz/driver.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/corrupt.h"
#include "fuzz/driver_state.h"
#include "fuzz/program.h"
#include "fuzz/text.h"
#include "gc/gc.h"
#include "gc/pool_layout.h"
#include "invariants/model.h"
#include "invariants/verify.h"

/* Leaves a function out of libFuzzer's coverage instrumentation, trace-cmp included (clang;
 * other compilers do not instrument). */
#if defined(__clang__)
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_NO_COVERAGE
#endif

const char *const fuzz_pass_names[FUZZ_PASS_COUNT] = {"reach", "swept", "checkmark", "model",
                                                      "driver"};

__thread mutator *drv_self;
/* ---- Violations ---------------------------------------------------------------------------- */

static void describe_op(const fuzz_op *op, char *buf, size_t len) {
  char text[FUZZ_OP_TEXT_MAX];
  fuzz_op_format(op, text, sizeof text);
  snprintf(buf, len, "op %zu `%s` (byte offset %zu)", op->index, text, op->offset);
}

/* Where the cycle of a violation came from. */
static void print_attribution(driver *d) {
  if (d->cycle_op >= 0) {
    char text[FUZZ_OP_TEXT_MAX];
    fuzz_op_format(&d->cycle_op_copy, text, sizeof text);
    fprintf(d->out, "  cycle started by op %ld `%s`\n", d->cycle_op, text);
  } else {
    fprintf(d->out, "  cycle started by the driver's final full collection\n");
  }
  if (me()->op != NULL && (long)me()->op->index != d->cycle_op) {
    char buf[FUZZ_OP_TEXT_MAX + 48];
    describe_op(me()->op, buf, sizeof buf);
    fprintf(d->out, "  found while running %s\n", buf);
  } else if (me()->op == NULL && d->cycle_op >= 0) {
    fprintf(d->out, "  found during the driver's final full collection\n");
  }
}

/* pass -1: a violation the verifier counted but did not keep (its pass is unknown). */
static void note_violation(driver *d, int pass, const char *kind, long op) {
  d->res->violations++;
  if (pass >= 0) d->res->pass_violations[pass]++;
  if (d->res->first_kind[0] == '\0') {
    snprintf(d->res->first_kind, sizeof d->res->first_kind, "%s", kind);
    d->res->first_op = op;
  }
}

static void finish_violation(driver *d) {
  fflush(d->out);
  if (d->opt->abort_on_violation) abort();
}

/* A violation of the API contract found by the driver itself. */
void drv_violation(driver *d, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void drv_violation(driver *d, const char *kind, const char *fmt, ...) {
  note_violation(d, PASS_DRIVER, kind, me()->op != NULL ? (long)me()->op->index : -1);
  fprintf(d->out, "VIOLATION %s (pass driver)\n", kind);
  if (me()->op != NULL) {
    char buf[FUZZ_OP_TEXT_MAX + 48];
    describe_op(me()->op, buf, sizeof buf);
    fprintf(d->out, "  at %s\n", buf);
  } else {
    fprintf(d->out, "  in the driver's final checks\n");
  }
  fprintf(d->out, "  what: ");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(d->out, fmt, ap);
  va_end(ap);
  fprintf(d->out, "\n\n");
  finish_violation(d);
}

void drv_expect_error(driver *d, gc_error got, gc_error want, const char *call) {
  d->res->pass_runs[PASS_DRIVER]++;
  if (got != want) {
    drv_violation(d, "driver.api-error", "%s returned %s, expected %s (last error: %s)", call,
                     gc_error_name(got), gc_error_name(want), gc_last_error_message(d->heap));
  }
  gc_clear_error(d->heap);
}

/* ---- The verification passes --------------------------------------------------------------- */

static int pass_index(const char *pass) {
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    if (strcmp(fuzz_pass_names[p], pass) == 0) return p;
  }
  return PASS_DRIVER;
}

void drv_report_passes(driver *d, const gc_verify_reports *reports, const char *how) {
  for (size_t i = 0; i < reports->count; i++) {
    const gc_verify_report *r = &reports->items[i];
    const char *kind = gc_verify_kind_name(r->kind);
    note_violation(d, pass_index(gc_verify_kind_pass(r->kind)), kind, d->cycle_op);
    fprintf(d->out, "VIOLATION %s (pass %s, cycle %llu, at %s)\n", kind,
            gc_verify_kind_pass(r->kind), (unsigned long long)r->cycle, r->point);
    if (how != NULL) fprintf(d->out, "  %s\n", how);
    print_attribution(d);
    gc_verify_report_print(r, d->out);
  }
  for (size_t i = 0; i < reports->dropped; i++) note_violation(d, -1, "verify.dropped", d->cycle_op);
  if (reports->dropped > 0) fprintf(d->out, "(%zu more violations not kept)\n\n", reports->dropped);
  const char *dot = getenv("GCFUZZ_VERIFY_DOT");
  if (dot != NULL && dot[0] != '\0' && reports->count > 0 &&
      d->res->violations == reports->count + reports->dropped) {
    if (gc_verify_report_write_dot(&reports->items[0], dot)) {
      fprintf(d->out, "neighbourhood of the first violation written to %s\n", dot);
    }
  }
  finish_violation(d);
}

/* Run the passes due at `point` (the heap's verify mask, read at every point like the verifier's
 * own hook) and print what they found, attributed to the op that started the cycle. The driver
 * owns the hook so that it can say which op that was before anything else runs. */
static void driver_check_cycle(driver *d, gc_hook_point point) {
  size_t found = gc_verify_run_point(d->verifier, gc_heap_config(d->heap)->verify, point);
  if (found == 0) return;
  drv_report_passes(d, gc_verify_reports_of(d->verifier), NULL);
  gc_verify_clear(d->verifier);
}

/* Runs at every hook point: its comparisons are of the driver's own bookkeeping, nothing the
 * fuzzer can steer by, so it is left out of coverage (an OSS-Fuzz build traces the comparisons
 * of every file; the fuzz config already spares this one). */
FUZZ_NO_COVERAGE static void driver_hook(gc_heap *heap, gc_hook_point point, void *user) {
  driver *d = user;
  (void)heap;
  if (point == GC_HOOK_MARK_DONE) {
    /* Marking runs inside one op: that op started this cycle. */
    if (me()->op != NULL) {
      d->cycle_op = (long)me()->op->index;
      d->cycle_op_copy = *me()->op;
    } else {
      d->cycle_op = -1;
    }
  }
  if (d->opt->trace != NULL) {
    static const char *const names[] = {"mark-done", "cycled", "swept"};
    fprintf(d->opt->trace, "        [cycle %s]\n", names[point]);
  }
  /* A checkmark corruption planted, checked and repaired before the driver's own passes look. */
  if (point == GC_HOOK_MARK_DONE && d->corrupt_armed != NULL) drv_corrupt_mark_done(d);
  driver_check_cycle(d, point);
}

/* ---- Ops ----------------------------------------------------------------------------------- */

static gc_model_id slot_obj(driver *d, int s) { return gc_model_root_get(d->model, me()->root_base + BANK_SLOTS + (size_t)s); }
void drv_set_slot(driver *d, int s, gc_model_id obj) {
  gc_model_root_set(d->model, me()->root_base + BANK_SLOTS + (size_t)s, obj);
}

/* The first non-zero word of words[from..n), or n; long runs are compared with zeros by memcmp
 * first, one call instead of a load per word. Not instrumented for coverage: traced (as an
 * OSS-Fuzz build traces every file) a comparison per word of every new block cost more than the
 * rest of the driver, and neither the values of a fresh block's words nor how many there are is
 * anything the fuzzer can steer by. The check is the same. (noinline: inlined, it would be
 * instrumented as its caller's code.) */
FUZZ_NO_COVERAGE __attribute__((noinline))
static size_t first_nonzero(const gc_value *words, size_t from, size_t n) {
  static const gc_value zeros[512];
  size_t i = from;
  while (n - i >= 32) {
    size_t k = n - i < 512 ? n - i : 512;
    if (memcmp(words + i, zeros, k * sizeof *words) != 0) break; /* find it below */
    i += k;
  }
  for (; i < n; i++) {
    if (words[i] != 0) return i;
  }
  return n;
}

/* A fresh block must be what was asked for: size, tag, fields zeroed (custom: past the words the
 * model wrote). */
static void check_new_block(driver *d, gc_value v, size_t wsize, unsigned tag) {
  d->res->pass_runs[PASS_DRIVER]++;
  if (!gc_is_block(v) || ((uintptr_t)v & (sizeof(gc_value) - 1)) != 0) {
    drv_violation(d, "driver.bad-block", "gc_alloc returned 0x%" PRIxPTR ", not a block", v);
    return;
  }
  if (gc_wsize(v) != wsize || gc_tag(v) != tag) {
    drv_violation(d, "driver.bad-block",
                     "a new block of %zu fields, tag %u has %zu fields, tag %u", wsize, tag,
                     gc_wsize(v), gc_tag(v));
    return;
  }
  size_t i = first_nonzero(gc_fields(v), tag == GC_TAG_CUSTOM ? 2 : 0, wsize);
  if (i < wsize) {
    drv_violation(d, "driver.bad-block", "a new block's field %zu is 0x%" PRIxPTR ", not 0", i,
                     GC_FIELD(v, i));
  }
}

/* alloc / alloc_large. A custom block has `n` data words after its function (the model uses
 * data word 1), so n + 1 fields. */
static void op_alloc(driver *d, int dst, fuzz_block_kind kind, size_t n) {
  int expect_fail = d->fail_countdown > 0 && --d->fail_countdown == 0;
  gc_model_id obj;
  size_t wsize = n;
  unsigned tag;
  if (kind == FUZZ_KIND_CUSTOM) {
    tag = GC_TAG_CUSTOM;
    wsize = n + 1;
    obj = gc_model_alloc_custom(d->model, me()->dom, n);
  } else {
    tag = kind == FUZZ_KIND_SCAN ? GC_TAG_SCAN : GC_TAG_RAW;
    obj = gc_model_alloc(d->model, me()->dom, n, tag);
  }
  d->res->pass_runs[PASS_DRIVER]++;
  if (obj == GC_MODEL_NONE) {
    gc_error e = gc_last_error(d->heap);
    if (e != GC_ERR_NOMEM) {
      drv_violation(d, "driver.api-error", "a failed allocation recorded %s, not nomem",
                       gc_error_name(e));
    } else if (!expect_fail && d->limit_bytes == 0) {
      drv_violation(d, "driver.unexpected-failure",
                       "an allocation of %zu fields failed with no heap limit and no injected "
                       "failure due: %s", wsize, gc_last_error_message(d->heap));
    }
    gc_clear_error(d->heap);
    drv_set_slot(d, dst, GC_MODEL_NONE);
    return;
  }
  if (expect_fail) {
    drv_violation(d, "driver.injected-failure-missed",
                     "the injected failure was due at this allocation, but it succeeded");
  }
  check_new_block(d, gc_model_value(d->model, obj), wsize, tag);
  drv_set_slot(d, dst, obj);
}

/* store / store_imm into field f of the object in slot s. Scanned fields take the value; raw and
 * custom data take the word (a pointer stored there is data: it keeps nothing alive). A custom
 * block's function and model words (fields 0, 1) and fields past the end are no-ops. */
static void op_store(driver *d, fuzz_arg dst, int is_imm, int value) {
  gc_model_id obj = slot_obj(d, dst.a);
  if (obj == GC_MODEL_NONE) return;
  size_t f = (size_t)dst.b;
  if (f >= gc_model_wsize(d->model, obj)) return;
  if (gc_model_tag(d->model, obj) <= GC_TAG_SCAN_MAX) {
    if (is_imm) {
      gc_model_store_imm(d->model, obj, f, value);
    } else {
      gc_model_store_ptr(d->model, obj, f, slot_obj(d, value));
    }
  } else if (gc_model_tag(d->model, obj) == GC_TAG_RAW || f >= 2) {
    uintptr_t word = is_imm ? gc_val_int(value) : gc_model_value(d->model, slot_obj(d, value));
    gc_model_store_raw(d->model, obj, f, word);
  }
}

static void op_load(driver *d, int dst, fuzz_arg src) {
  gc_model_id obj = slot_obj(d, src.a);
  if (obj == GC_MODEL_NONE || gc_model_tag(d->model, obj) > GC_TAG_SCAN_MAX ||
      (size_t)src.b >= gc_model_wsize(d->model, obj)) {
    return;
  }
  drv_set_slot(d, dst, gc_model_load(d->model, obj, (size_t)src.b)); /* an immediate: empty */
}

static void op_push(driver *d) {
  if (me()->frame_count == FUZZ_FRAMES) return;
  int k = 0;
  while (me()->frames[k].domain >= 0) k++;
  me()->frame_count++;
  driver_frame *f = &me()->frames[k];
  f->domain = me()->on;
  f->seq = ++me()->frame_seq;
  size_t base = me()->root_base + BANK_FRAMES + (size_t)k * FUZZ_SLOTS;
  gc_frame_push(me()->dom, &f->frame, f->values, FUZZ_SLOTS);
  for (int i = 0; i < FUZZ_SLOTS; i++) gc_model_root_set(d->model, base + (size_t)i, slot_obj(d, i));
}

/* The record of domain dom's innermost frame, or -1. */
int drv_innermost_frame(const driver *d, int dom) {
  int k = -1;
  for (int i = 0; i < FUZZ_FRAMES; i++) {
    if (me()->frames[i].domain == dom && (k < 0 || me()->frames[i].seq > me()->frames[k].seq)) k = i;
  }
  return k;
}

/* The frame record is free again and its snapshot no model root (the frame is popped, or dropped
 * with its domain). */
void drv_release_frame(driver *d, int k) {
  me()->frames[k].domain = -1;
  me()->frame_count--;
  size_t base = me()->root_base + BANK_FRAMES + (size_t)k * FUZZ_SLOTS;
  for (int i = 0; i < FUZZ_SLOTS; i++) gc_model_root_clear(d->model, base + (size_t)i);
}

static void op_pop(driver *d) {
  int k = drv_innermost_frame(d, me()->on);
  if (k < 0) return;
  /* Popping a frame that is not the domain's innermost must be refused and change nothing: the
   * slots' frame is d0's outermost, and no frame of any other domain. */
  drv_expect_error(d, gc_frame_pop(me()->dom, &me()->slot_frame), GC_ERR_FRAME_ORDER,
               "gc_frame_pop(a frame that is not the innermost)");
  drv_expect_error(d, gc_frame_pop(me()->dom, &me()->frames[k].frame), GC_OK, "gc_frame_pop(innermost)");
  drv_release_frame(d, k);
}

/* ---- Domains ------------------------------------------------------------------------------- */

/* Move the program to domain `to` (spawned): the domain it leaves waits in a blocking section
 * (unless it is in one already), `to` runs (unless `block` left it in one). INV-DRV-2. */
static void switch_to(driver *d, int to) {
  if (to == me()->on) return;
  if (!d->blocked[me()->on]) gc_enter_blocking(d->domains[me()->on]);
  me()->on = to;
  if (!d->blocked[to]) gc_leave_blocking(d->domains[to]);
  me()->dom = d->blocked[to] ? NULL : d->domains[to];
}

void drv_op_spawn(driver *d, int n) {
  if (n == 0 || d->domains[n] != NULL) return;
  gc_domain *child = gc_domain_spawn(me()->dom);
  d->res->pass_runs[PASS_DRIVER]++;
  if (child == NULL) {
    /* Only out of memory may refuse a domain, and then with nomem. */
    drv_expect_error(d, gc_last_error(d->heap), GC_ERR_NOMEM, "gc_domain_spawn");
    return;
  }
  d->domains[n] = child;
  d->blocked[n] = 0;
}

static void op_terminate(driver *d, int n) {
  if (n == 0) {
    drv_expect_error(d, gc_domain_terminate(d->domains[0]), GC_ERR_MAIN_DOMAIN,
                 "gc_domain_terminate(the main domain)");
    return;
  }
  if (d->domains[n] == NULL) return;
  /* A domain terminates itself, running (it is in a blocking section unless the program is on
   * it); the program then goes on where it was, or on d0 if dN was where it was. */
  int back = me()->on == n ? 0 : me()->on;
  if (me()->on != n) {
    gc_enter_blocking(me()->dom);
    gc_leave_blocking(d->domains[n]);
  }
  for (int k; (k = drv_innermost_frame(d, n)) >= 0;) drv_release_frame(d, k);
  drv_expect_error(d, gc_domain_terminate(d->domains[n]), GC_OK, "gc_domain_terminate");
  d->domains[n] = NULL;
  d->blocked[n] = 0;
  me()->on = back;
  if (!d->blocked[back]) gc_leave_blocking(d->domains[back]);
  me()->dom = d->blocked[back] ? NULL : d->domains[back];
}

static void op_block(driver *d) {
  if (d->blocked[me()->on]) return;
  gc_enter_blocking(d->domains[me()->on]);
  d->blocked[me()->on] = 1;
  me()->dom = NULL;
}

static void op_unblock(driver *d) {
  if (!d->blocked[me()->on]) return;
  gc_leave_blocking(d->domains[me()->on]);
  d->blocked[me()->on] = 0;
  me()->dom = d->domains[me()->on];
}

/* ---- Finalizers and conservative ranges ---------------------------------------------------- */

static void op_fin(driver *d, int s, int revive) {
  gc_model_id obj = slot_obj(d, s);
  if (obj == GC_MODEL_NONE) return;
  size_t root = revive == FUZZ_NO_SLOT ? GC_MODEL_NO_ROOT : me()->root_base + BANK_SLOTS + (size_t)revive;
  /* The model refuses only an object whose finalizer is queued (INV-FIN-1); the collector
   * must accept everything else. */
  gc_model_finalizer_set_reviving(d->model, obj, root);
  gc_clear_error(d->heap);
}

static void op_unfin(driver *d, int s) {
  gc_model_id obj = slot_obj(d, s);
  if (obj == GC_MODEL_NONE) return;
  if (gc_model_finalizer_clear(d->model, obj)) return;
  /* No finalizer set, as far as the model knows: the collector must refuse it too. */
  drv_expect_error(d, gc_finalizer_clear(d->heap, gc_model_value(d->model, obj)),
               GC_ERR_NO_FINALIZER, "gc_finalizer_clear(a block without a finalizer set)");
}

static void op_range(driver *d, fuzz_arg word, int s, fuzz_arg offset) {
  gc_model_id obj = slot_obj(d, s);
  uintptr_t w = 0;
  if (obj != GC_MODEL_NONE) {
    uintptr_t base = gc_model_value(d->model, obj);
    if (offset.a == FUZZ_FROM_END) base += gc_model_wsize(d->model, obj) * sizeof(gc_value);
    w = base + (uintptr_t)(intptr_t)offset.b;
  }
  gc_model_range_store(d->model, (size_t)word.a, (size_t)word.b, w);
}

/* A word into the pool-aligned unit holding the block: the pool's header, its first slots. The
 * driver knows the layout only to aim words; what they must keep alive the model decides. */
static void op_range_pool(driver *d, fuzz_arg word, int s, int k) {
  gc_model_id obj = slot_obj(d, s);
  uintptr_t w = 0;
  if (obj != GC_MODEL_NONE) {
    uintptr_t unit = gc_model_value(d->model, obj) & ~(uintptr_t)(GC_POOL_BSIZE - 1);
    w = unit + (uintptr_t)k * sizeof(gc_value);
  }
  gc_model_range_store(d->model, (size_t)word.a, (size_t)word.b, w);
}

static void op_root(driver *d, int g, int src) {
  mutator *m = me();
  size_t root = m->root_base + BANK_GLOBALS + (size_t)g;
  if (m->registered[g]) {
    drv_expect_error(d, gc_root_register(d->heap, &m->globals[g]), GC_ERR_DUP_ROOT,
                 "gc_root_register(a registered cell)");
  } else {
    drv_expect_error(d, gc_root_register(d->heap, &m->globals[g]), GC_OK, "gc_root_register");
    m->registered[g] = 1;
  }
  gc_model_root_set(d->model, root, slot_obj(d, src));
}

void drv_op_unroot(driver *d, int g) {
  mutator *m = me();
  size_t root = m->root_base + BANK_GLOBALS + (size_t)g;
  if (m->registered[g]) {
    drv_expect_error(d, gc_root_unregister(d->heap, &m->globals[g]), GC_OK, "gc_root_unregister");
    m->registered[g] = 0;
    gc_model_root_clear(d->model, root);
  } else {
    drv_expect_error(d, gc_root_unregister(d->heap, &m->globals[g]), GC_ERR_UNKNOWN_ROOT,
                 "gc_root_unregister(an unregistered cell)");
  }
}

static void set_param(driver *d, const char *text) {
  drv_expect_error(d, gc_set_params(d->heap, text), GC_OK, text);
}

static void op_param(driver *d, fuzz_arg arg) {
  char text[64];
  long v = fuzz_param_value((fuzz_param)arg.a, (size_t)arg.b);
  if (v < 0) {
    snprintf(text, sizeof text, "%s=off", fuzz_param_name((fuzz_param)arg.a));
  } else {
    snprintf(text, sizeof text, "%s=%ld", fuzz_param_name((fuzz_param)arg.a), v);
  }
  set_param(d, text);
}

static void op_fail(driver *d, int n) {
  char text[32];
  snprintf(text, sizeof text, "failafter=%d", n);
  set_param(d, text);
  d->fail_countdown = (unsigned)n;
}

static void op_limit(driver *d, int index) {
  char text[48];
  d->limit_bytes = fuzz_limit_bytes((size_t)index);
  snprintf(text, sizeof text, "limit=%zu", d->limit_bytes);
  set_param(d, text);
}

static void op_pin(driver *d, int s) {
  gc_model_id obj = slot_obj(d, s);
  if (obj == GC_MODEL_NONE) return;
  d->res->pass_runs[PASS_DRIVER]++;
  if (!gc_model_pin(d->model, obj)) {
    drv_violation(d, "driver.api-error", "gc_pin of a live block failed: %s",
                     gc_last_error_message(d->heap));
  }
  gc_clear_error(d->heap);
}

static void op_unpin(driver *d, int s) {
  gc_model_id obj = slot_obj(d, s);
  if (obj == GC_MODEL_NONE) return;
  if (gc_model_unpin(d->model, obj)) return;
  /* Not pinned, as far as the model knows: the collector must refuse it too. */
  drv_expect_error(d, gc_unpin(d->heap, gc_model_value(d->model, obj)), GC_ERR_NOT_BLOCK,
               "gc_unpin(a block that is not pinned)");
}

static void never_added_scanner(gc_visit_fn visit, void *visit_ctx, void *user) {
  (void)visit;
  (void)visit_ctx;
  (void)user;
}

/* A refused allocation returns 0 with `want` recorded, allocates nothing and does not count
 * toward an injected failure. */
static void expect_alloc_refused(driver *d, gc_value v, gc_error want, const char *call) {
  d->res->pass_runs[PASS_DRIVER]++;
  if (v != 0) {
    drv_violation(d, "driver.api-error", "%s returned a block, expected %s", call,
                     gc_error_name(want));
    return; /* the block is not in the model: the live count will say so too */
  }
  drv_expect_error(d, gc_last_error(d->heap), want, call);
}

/* Field by field: a struct's padding bytes are not part of its value. */
static int same_config(const gc_config *a, const gc_config *b) {
  return a->gc_percent == b->gc_percent && a->min_trigger_words == b->min_trigger_words &&
         a->sweep_budget_words == b->sweep_budget_words &&
         a->mark_stack_entries == b->mark_stack_entries &&
         a->heap_limit_bytes == b->heap_limit_bytes && a->pools_per_batch == b->pools_per_batch &&
         a->free_pools_kept == b->free_pools_kept && a->fail_alloc_after == b->fail_alloc_after &&
         a->trace == b->trace && a->verify == b->verify;
}

static void op_misuse(driver *d, fuzz_misuse m) {
  gc_heap *h = d->heap;
  switch (m) {
    case FUZZ_MISUSE_ALLOC0:
      expect_alloc_refused(d, gc_alloc(me()->dom, 0, GC_TAG_SCAN), GC_ERR_ZERO_SIZE, "gc_alloc(0 fields)");
      break;
    case FUZZ_MISUSE_TOO_LARGE:
      expect_alloc_refused(d, gc_alloc(me()->dom, GC_MAX_WSIZE + 1, GC_TAG_RAW), GC_ERR_TOO_LARGE,
                           "gc_alloc(GC_MAX_WSIZE + 1 fields)");
      break;
    case FUZZ_MISUSE_BAD_TAG:
      expect_alloc_refused(d, gc_alloc(me()->dom, 1, 251), GC_ERR_BAD_TAG, "gc_alloc(tag 251)");
      break;
    case FUZZ_MISUSE_CUSTOM_TAG:
      expect_alloc_refused(d, gc_alloc(me()->dom, 2, GC_TAG_CUSTOM), GC_ERR_BAD_TAG,
                           "gc_alloc(the custom tag)");
      break;
    case FUZZ_MISUSE_PIN_NULL: drv_expect_error(d, gc_pin(h, 0), GC_ERR_NOT_BLOCK, "gc_pin(NULL)"); break;
    case FUZZ_MISUSE_PIN_INT:
      drv_expect_error(d, gc_pin(h, gc_val_int(3)), GC_ERR_NOT_BLOCK, "gc_pin(an immediate)");
      break;
    case FUZZ_MISUSE_UNPIN_INT:
      drv_expect_error(d, gc_unpin(h, gc_val_int(3)), GC_ERR_NOT_BLOCK, "gc_unpin(an immediate)");
      break;
    case FUZZ_MISUSE_SCANNER_REMOVE:
      drv_expect_error(d, gc_root_scanner_remove(h, never_added_scanner, d), GC_ERR_UNKNOWN_ROOT,
                   "gc_root_scanner_remove(a scanner never added)");
      break;
    case FUZZ_MISUSE_REGISTER_NULL:
      drv_expect_error(d, gc_root_register(h, NULL), GC_ERR_UNKNOWN_ROOT, "gc_root_register(NULL)");
      break;
    case FUZZ_MISUSE_BAD_PARAM:
    case FUZZ_MISUSE_UNKNOWN_PARAM: {
      gc_config before = *gc_heap_config(h);
      const char *text = m == FUZZ_MISUSE_BAD_PARAM ? "markstack=3" : "bogus=1";
      drv_expect_error(d, gc_set_params(h, text), GC_ERR_PARAM, text);
      /* (Scheduled threads: another domain's `param` may run while this call waits at a lock,
       * so only the error is checked there.) */
      d->res->pass_runs[PASS_DRIVER]++;
      if (d->opt->threads != FUZZ_SCHEDULED && !same_config(&before, gc_heap_config(h))) {
        drv_violation(d, "driver.api-error", "a refused gc_set_params(\"%s\") changed the "
                         "configuration", text);
      }
      break;
    }
    case FUZZ_MISUSE_COUNT: break;
  }
}


void drv_run_op(driver *d, const fuzz_op *op) {
  const fuzz_arg *a = op->args;
  /* No domain runs (`block`): only on and unblock touch nothing a blocked thread may not. */
  if (me()->dom == NULL && op->code != FUZZ_OP_ON && op->code != FUZZ_OP_UNBLOCK) return;
  switch (op->code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE:
      op_alloc(d, a[0].a, (fuzz_block_kind)a[1].a, (size_t)a[2].a);
      break;
    case FUZZ_OP_STORE: op_store(d, a[0], 0, a[1].a); break;
    case FUZZ_OP_STORE_IMM: op_store(d, a[0], 1, a[1].a); break;
    case FUZZ_OP_LOAD: op_load(d, a[0].a, a[1]); break;
    case FUZZ_OP_DROP: drv_set_slot(d, a[0].a, GC_MODEL_NONE); break;
    case FUZZ_OP_COPY: drv_set_slot(d, a[0].a, slot_obj(d, a[1].a)); break;
    case FUZZ_OP_PUSH: op_push(d); break;
    case FUZZ_OP_POP: op_pop(d); break;
    case FUZZ_OP_ROOT: op_root(d, a[0].a, a[1].a); break;
    case FUZZ_OP_UNROOT: drv_op_unroot(d, a[0].a); break;
    case FUZZ_OP_COLLECT: gc_collect(me()->dom, (gc_collect_kind)a[0].a); break;
    case FUZZ_OP_PARAM: op_param(d, a[0]); break;
    case FUZZ_OP_FAIL: op_fail(d, a[0].a); break;
    case FUZZ_OP_LIMIT: op_limit(d, a[0].a); break;
    case FUZZ_OP_PIN: op_pin(d, a[0].a); break;
    case FUZZ_OP_UNPIN: op_unpin(d, a[0].a); break;
    case FUZZ_OP_MISUSE: op_misuse(d, (fuzz_misuse)a[0].a); break;
    case FUZZ_OP_SPAWN:
      if (d->opt->threads == FUZZ_ONE_THREAD) drv_op_spawn(d, a[0].a);
      else drv_op_spawn_thread(d, a[0].a);
      break;
    case FUZZ_OP_TERMINATE:
      if (d->opt->threads == FUZZ_ONE_THREAD || a[0].a == 0) op_terminate(d, a[0].a);
      else drv_op_terminate_self(d);
      break;
    case FUZZ_OP_ON:
      if (d->domains[a[0].a] != NULL) switch_to(d, a[0].a);
      break;
    case FUZZ_OP_FIN: op_fin(d, a[0].a, a[1].a); break;
    case FUZZ_OP_UNFIN: op_unfin(d, a[0].a); break;
    case FUZZ_OP_RANGE: op_range(d, a[0], a[1].a, a[2]); break;
    case FUZZ_OP_RANGE_INT:
      gc_model_range_store(d->model, (size_t)a[0].a, (size_t)a[0].b, (uintptr_t)a[1].a);
      break;
    case FUZZ_OP_RANGE_WORD:
      gc_model_range_store(d->model, (size_t)a[0].a, (size_t)a[0].b, (uintptr_t)a[1].word);
      break;
    case FUZZ_OP_RANGE_POOL: op_range_pool(d, a[0], a[1].a, a[2].a); break;
    case FUZZ_OP_BLOCK: op_block(d); break;
    case FUZZ_OP_UNBLOCK: op_unblock(d); break;
    case FUZZ_OP_PCT:
    case FUZZ_OP_CHOOSE: break; /* read before the run (schedule_config) */
    case FUZZ_OP_CORRUPT:
      /* One thread only: it breaks the heap for a moment, which no other thread may see. */
      if (d->opt->threads == FUZZ_ONE_THREAD) {
        drv_op_corrupt(d, (fuzz_corruption)a[0].a, a[1].a, a[2].a);
      }
      break;
    case FUZZ_OP_COUNT: break;
  }
}

/* ---- Running a program --------------------------------------------------------------------- */

static void bind_roots(driver *d, gc_model *m);

struct fuzz_scratch {
  gc_verify_scratch *verify;
  gc_model *model; /* detached between programs (gc_model_detach), or NULL before the first */
  driver *d;       /* the driver state, cleared for each program; the model's roots stay bound to
                    * its slots from one program to the next */
};

fuzz_scratch *fuzz_scratch_create(void) {
  fuzz_scratch *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->verify = gc_verify_scratch_create();
  if (s->verify == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

void fuzz_scratch_destroy(fuzz_scratch *s) {
  if (s == NULL) return;
  gc_verify_scratch_destroy(s->verify);
  gc_model_destroy(s->model);
  free(s->d);
  free(s);
}

/* The model for this program, its roots bound to the driver's slots (INV-DRV-1): the scratch's,
 * attached to the new heap (still bound: the scratch's driver state is where its slots were),
 * or a new one. */
/* The banks of model roots a program needs: one mutator on one thread, one per domain on threads.
 * (Every model check visits every root: the one-thread targets do not pay for banks they never
 * use.) */
static size_t bank_count(const fuzz_options *opt) {
  return opt->threads == FUZZ_ONE_THREAD ? 1 : FUZZ_DOMAINS;
}

static gc_model *open_model(driver *d) {
  fuzz_scratch *s = d->opt->scratch;
  size_t roots = bank_count(d->opt) * BANK_ROOTS;
  if (s == NULL) {
    gc_model *m = gc_model_create(d->heap, roots);
    if (m != NULL) bind_roots(d, m);
    return m;
  }
  if (s->model != NULL &&
      (gc_model_root_count(s->model) != roots || !gc_model_reattach(s->model, d->heap))) {
    gc_model_detach(s->model); /* no-op unless reattach succeeded */
    gc_model_destroy(s->model);
    s->model = NULL;
  }
  if (s->model == NULL) {
    s->model = gc_model_create(d->heap, roots);
    if (s->model != NULL) bind_roots(d, s->model);
  }
  return s->model;
}

static void close_model(driver *d) {
  if (d->model == NULL) return;
  if (d->opt->scratch != NULL) {
    gc_model_detach(d->model); /* kept in the scratch for the next program */
  } else {
    gc_model_destroy(d->model);
  }
  d->model = NULL;
}

/* The heap every program starts with: pacing that can trigger within a short program, pools
 * mapped one at a time and none kept but in the caller's pool cache (creating and destroying a
 * heap per input stays cheap), a modest mark stack (`param markstack` goes down to 4). */
static gc_heap *create_heap(const fuzz_options *opt) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.min_trigger_words = 4096;
  cfg.mark_stack_entries = 1024;
  cfg.pools_per_batch = 1;
  cfg.free_pools_kept = 0;
  cfg.pool_cache = opt->pool_cache;
  if (opt->threads == FUZZ_SCHEDULED && cfg.pool_cache == NULL) {
    /* Scheduled runs always go through a pool cache: taking and giving pools passes the cache's
     * lock, two scheduling points, whether it holds pools or not. With the cache in some runs and
     * not in others, an input would take one interleaving in the fuzzer and another in replay. */
    static gc_pool_cache *scheduled_cache;
    if (scheduled_cache == NULL) scheduled_cache = gc_pool_cache_create(256);
    cfg.pool_cache = scheduled_cache;
  }
  cfg.verify = opt->verify_given ? opt->verify : GC_VERIFY_ALL;
  if (opt->params != NULL) {
    char err[200];
    if (gc_config_parse(&cfg, opt->params, err, sizeof err) != GC_OK) {
      fprintf(opt->out ? opt->out : stderr, "fuzz driver: bad parameters: %s\n", err);
      return NULL;
    }
  }
  return gc_heap_create(&cfg);
}

/* Every model root lives in the driver's storage from the start: a slot, a frame's snapshot word,
 * a global cell. A frame not pushed and a cell not registered hold NULL (their model roots are
 * empty), so the model's root set and the heap's agree at every point, and the model's own root
 * scanner has nothing to visit. */
static void bind_roots(driver *d, gc_model *m) {
  for (size_t b = 0; b < bank_count(d->opt); b++) {
    mutator *mu = &d->muts[b];
    size_t base = b * BANK_ROOTS;
    for (size_t i = 0; i < FUZZ_SLOTS; i++) gc_model_root_bind(m, base + BANK_SLOTS + i, &mu->slots[i]);
    for (size_t k = 0; k < FUZZ_FRAMES; k++) {
      for (size_t i = 0; i < FUZZ_SLOTS; i++) {
        gc_model_root_bind(m, base + BANK_FRAMES + k * FUZZ_SLOTS + i, &mu->frames[k].values[i]);
      }
    }
    for (size_t g = 0; g < FUZZ_GLOBALS; g++) gc_model_root_bind(m, base + BANK_GLOBALS + g, &mu->globals[g]);
  }

}

static void teardown(driver *d) {
  /* The model first (it disarms its finalizers), then the roots the program left, the hook and
   * the verifier, then the heap. */
  close_model(d);
  /* The frames of d0 (the program ends on it, running); other domains' frames go with their
   * domains when the heap is destroyed. */
  for (int k; me()->dom != NULL && (k = drv_innermost_frame(d, 0)) >= 0;) {
    gc_frame_pop(me()->dom, &me()->frames[k].frame);
    me()->frames[k].domain = -1;
  }
  if (me()->dom != NULL) gc_frame_pop(me()->dom, &me()->slot_frame);
  for (int g = 0; g < FUZZ_GLOBALS; g++) {
    for (int b = 0; b < FUZZ_DOMAINS; b++) {
      if (d->muts[b].registered[g]) gc_root_unregister(d->heap, &d->muts[b].globals[g]);
    }
  }
  gc_set_hook(d->heap, NULL, NULL);
  gc_verify_uninstall(d->verifier);
  gc_heap_destroy(d->heap);
  if (d->opt->scratch == NULL) free(d);
}

int fuzz_run(const uint8_t *data, size_t size, const fuzz_options *opt, fuzz_result *res) {
  memset(res, 0, sizeof *res);
  res->first_op = -1;
  driver *d;
  if (opt->scratch != NULL) {
    if (opt->scratch->d == NULL) opt->scratch->d = malloc(sizeof *d);
    d = opt->scratch->d;
    if (d != NULL) memset(d, 0, sizeof *d);
  } else {
    d = calloc(1, sizeof *d);
  }
  if (d == NULL) return -1;
  d->opt = opt;
  d->out = opt->out ? opt->out : stderr;
  d->res = res;
  d->cycle_op = -1;
  d->heap = create_heap(opt);
  if (d->heap == NULL) {
    if (opt->scratch == NULL) free(d);
    return -1;
  }
  for (size_t b = 0; b < FUZZ_DOMAINS; b++) {
    d->muts[b].root_base = b * BANK_ROOTS;
    d->muts[b].on = (int)b;
    for (int k = 0; k < FUZZ_FRAMES; k++) d->muts[b].frames[k].domain = -1;
  }
  drv_self = &d->muts[0];
  me()->dom = d->domains[0] = gc_main_domain(d->heap);
  /* The verifier runs from the driver's hook (driver_check_cycle), in collect mode: the driver
   * prints each report with the op it belongs to, then aborts if asked to. */
  d->verifier = gc_verify_install(d->heap, GC_VERIFY_COLLECT);
  if (d->verifier != NULL && opt->scratch != NULL) gc_verify_use_scratch(d->verifier, opt->scratch->verify);
  d->model = open_model(d);
  if (d->verifier == NULL || d->model == NULL) {
    teardown(d);
    return -1;
  }
  gc_verify_set_model(d->verifier, d->model);
  gc_set_hook(d->heap, driver_hook, d);
  gc_frame_push(me()->dom, &me()->slot_frame, me()->slots, FUZZ_SLOTS);
  for (int r = 0; r < FUZZ_RANGES; r++) {
    if (!gc_model_range_add(d->model, d->ranges[r], FUZZ_RANGE_WORDS)) {
      teardown(d);
      return -1;
    }
  }

  if (opt->threads != FUZZ_ONE_THREAD) {
    int ran = drv_run_threads(d, data, size);
    if (ran <= 0) {
      /* Stuck threads hold the heap's locks: leave the heap and the driver as they are. */
      if (ran < 0) teardown(d);
      return ran < 0 ? -1 : 1;
    }
    goto final_checks;
  }

  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, opt->ops, data, size);
  while (fuzz_program_next(&dec, &op)) {
    me()->op = &op;
    if (opt->trace != NULL) {
      char text[FUZZ_OP_TEXT_MAX];
      fprintf(opt->trace, "%4zu  %s\n", op.index, fuzz_op_format(&op, text, sizeof text));
    }
    drv_run_op(d, &op);
    res->ops++;
    if (opt->after_op != NULL) opt->after_op(opt->after_op_user, d->heap, me()->slots, &op);
  }
  me()->op = NULL;
  /* The program ends on d0, running; the other domains stay in their blocking sections. */
  switch_to(d, 0);
  op_unblock(d);

final_checks:
  /* The final checks: a full collection runs every pass once more (the model's live count is
   * exact when its sweep ends). */
  gc_collect(me()->dom, GC_COLLECT_FULL);
  gc_stats stats;
  gc_get_stats(d->heap, &stats);
  res->cycles = stats.cycles;
  /* What determinism compares besides the interleaving: the heap's shape and activity, never a
   * time or an address. */
  const uint64_t shape[] = {stats.pool_words,     stats.pool_live_words, stats.pool_live_blocks,
                            stats.large_words,    stats.large_blocks,    stats.cycles,
                            stats.alloc_blocks,   stats.alloc_words,     stats.freed_blocks,
                            stats.freed_words,    stats.finalizers_run,  stats.handoffs,
                            stats.mark_overflows, stats.domains};
  res->stats_hash = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
    res->stats_hash = (res->stats_hash ^ shape[i]) * 1099511628211ull;
  }
  static const unsigned bits[] = {GC_VERIFY_REACH, GC_VERIFY_SWEPT, GC_VERIFY_CHECKMARK,
                                  GC_VERIFY_MODEL};
  for (int p = 0; p < 4; p++) res->pass_runs[p] = (size_t)gc_verify_runs(d->verifier, bits[p]);
  teardown(d);
  return res->violations ? 1 : 0;
}

/* ---- Fuzz targets -------------------------------------------------------------------------- */

int fuzz_target_run_one(const fuzz_opset *set, const uint8_t *data, size_t size) {
  static gc_pool_cache *pool_cache;
  static fuzz_scratch *scratch;
  if (pool_cache == NULL) pool_cache = gc_pool_cache_create(256);
  if (scratch == NULL) scratch = fuzz_scratch_create();
  fuzz_options opt = {.ops = set, .abort_on_violation = 1, .pool_cache = pool_cache, .scratch = scratch};
  if (set == &fuzz_opset_schedule) opt.threads = FUZZ_SCHEDULED;
  fuzz_result res;
  fuzz_run(data, size, &opt, &res);
  return 0;
}
