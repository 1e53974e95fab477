/* What each op does (see semantics.h): to the heap through the model, with the driver's checks of
 * the API contract it exercises. */
#include "fuzz/driver/semantics.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/driver/corrupt_op.h"
#include "fuzz/driver/in_collection.h"
#include "fuzz/driver/params_op.h"
#include "fuzz/driver/verdict.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/pool_layout.h"

/* ---- Slots and frames ---------------------------------------------------------------------- */

static gc_model_id slot_obj(driver *d, const mutator *m, int s) {
  return gc_model_root_get(d->model, m->root_base + BANK_SLOTS + (size_t)s);
}

static void set_slot(driver *d, mutator *m, int s, gc_model_id obj) {
  gc_model_root_set(d->model, m->root_base + BANK_SLOTS + (size_t)s, obj);
}

/* The first non-zero word of words[from..n), or n; long runs are compared with zeros by memcmp
 * first, one call instead of a load per word. Not instrumented for coverage: traced (as an
 * OSS-Fuzz build traces every file) a comparison per word of every new block cost more than the
 * rest of the driver, and neither the values of a fresh block's words nor how many there are is
 * anything the fuzzer can steer by. The check is the same. (noinline: inlined, it would be
 * instrumented as its caller's code.) */
FUZZ_NO_COVERAGE __attribute__((noinline)) static size_t first_nonzero(const gc_value *words,
                                                                       size_t from, size_t n) {
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
static void check_new_block(driver *d, mutator *m, gc_value v, size_t wsize, unsigned tag) {
  drv_check_made(d);
  if (!gc_is_block(v) || ((uintptr_t)v & (sizeof(gc_value) - 1)) != 0) {
    drv_violation(d, m, GC_VK_DRIVER_BAD_BLOCK, "gc_alloc returned 0x%" PRIxPTR ", not a block", v);
    return;
  }
  if (gc_wsize(v) != wsize || gc_tag(v) != tag) {
    drv_violation(d, m, GC_VK_DRIVER_BAD_BLOCK,
                  "a new block of %zu fields, tag %u has %zu fields, tag %u", wsize, tag,
                  gc_wsize(v), gc_tag(v));
    return;
  }
  size_t i = first_nonzero(gc_fields(v), tag == GC_TAG_CUSTOM ? 2 : 0, wsize);
  if (i < wsize) {
    drv_violation(d, m, GC_VK_DRIVER_BAD_BLOCK, "a new block's field %zu is 0x%" PRIxPTR ", not 0",
                  i, GC_FIELD(v, i));
  }
}

/* An allocation through the model, held to the failure an injected `fail` or the heap limit
 * makes due: GC_MODEL_NONE when it failed (as it had to). A custom block has `n` data words after
 * its function (the model uses data word 1), so n + 1 fields. */
static gc_model_id alloc_checked(driver *d, mutator *m, fuzz_block_kind kind, size_t n) {
  int expect_fail = d->fail_countdown > 0 && --d->fail_countdown == 0;
  gc_model_id obj;
  size_t wsize = n;
  unsigned tag;
  if (kind == FUZZ_KIND_CUSTOM) {
    tag = GC_TAG_CUSTOM;
    wsize = n + 1;
    obj = gc_model_alloc_custom(d->model, m->dom, n);
  } else {
    tag = kind == FUZZ_KIND_SCAN ? GC_TAG_SCAN : GC_TAG_RAW;
    obj = gc_model_alloc(d->model, m->dom, n, tag);
  }
  drv_check_made(d);
  if (obj == GC_MODEL_NONE) {
    gc_error e = gc_last_error(d->heap);
    if (e != GC_ERR_NOMEM) {
      drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "a failed allocation recorded %s, not nomem",
                    gc_error_name(e));
    } else if (!expect_fail && d->limit_bytes == 0) {
      drv_violation(d, m, GC_VK_DRIVER_UNEXPECTED_FAILURE,
                    "an allocation of %zu fields failed with no heap limit and no injected "
                    "failure due: %s",
                    wsize, gc_last_error_message(d->heap));
    }
    gc_clear_error(d->heap);
    return GC_MODEL_NONE;
  }
  if (expect_fail) {
    drv_violation(d, m, GC_VK_DRIVER_INJECTED_FAILURE_MISSED,
                  "the injected failure was due at this allocation, but it succeeded");
  }
  check_new_block(d, m, gc_model_value(d->model, obj), wsize, tag);
  return obj;
}

/* alloc / alloc_large. */
static void op_alloc(driver *d, mutator *m, int dst, fuzz_block_kind kind, size_t n) {
  set_slot(d, m, dst, alloc_checked(d, m, kind, n));
}

/* store / store_imm into field f of the object in slot s. Scanned fields take the value; raw and
 * custom data take the word (a pointer stored there is data: it keeps nothing alive). A custom
 * block's function and model words (fields 0, 1) and fields past the end are no-ops. */
static void op_store(driver *d, mutator *m, fuzz_arg dst, int is_imm, int value) {
  gc_model_id obj = slot_obj(d, m, dst.a);
  if (obj == GC_MODEL_NONE) return;
  size_t f = (size_t)dst.b;
  if (f >= gc_model_wsize(d->model, obj)) return;
  if (gc_model_tag(d->model, obj) <= GC_TAG_SCAN_MAX) {
    /* The barrier runs on this thread's domain. Scheduled threads share the model, so it is set
     * here, at the store: no scheduling point lies between this and the model's gc_store. */
    gc_model_set_domain(d->model, m->dom);
    if (is_imm) {
      gc_model_store_imm(d->model, obj, f, value);
    } else {
      gc_model_store_ptr(d->model, obj, f, slot_obj(d, m, value));
    }
  } else if (gc_model_tag(d->model, obj) == GC_TAG_RAW || f >= 2) {
    uintptr_t word = is_imm ? gc_val_int(value) : gc_model_value(d->model, slot_obj(d, m, value));
    gc_model_store_raw(d->model, obj, f, word);
  }
}

static void op_load(driver *d, mutator *m, int dst, fuzz_arg src) {
  gc_model_id obj = slot_obj(d, m, src.a);
  if (obj == GC_MODEL_NONE || gc_model_tag(d->model, obj) > GC_TAG_SCAN_MAX ||
      (size_t)src.b >= gc_model_wsize(d->model, obj)) {
    return;
  }
  set_slot(d, m, dst, gc_model_load(d->model, obj, (size_t)src.b)); /* an immediate: empty */
}

static void op_push(driver *d, mutator *m) {
  if (m->frame_count == FUZZ_FRAMES) return;
  int k = 0;
  while (m->frames[k].domain >= 0) k++;
  m->frame_count++;
  driver_frame *f = &m->frames[k];
  f->domain = m->on;
  f->seq = ++m->frame_seq;
  size_t base = m->root_base + BANK_FRAMES + (size_t)k * FUZZ_SLOTS;
  gc_frame_push(m->dom, &f->frame, f->values, FUZZ_SLOTS);
  for (int i = 0; i < FUZZ_SLOTS; i++)
    gc_model_root_set(d->model, base + (size_t)i, slot_obj(d, m, i));
}

/* The record of domain dom's innermost frame, or -1. */
int drv_innermost_frame(const mutator *m, int dom) {
  int k = -1;
  for (int i = 0; i < FUZZ_FRAMES; i++) {
    if (m->frames[i].domain == dom && (k < 0 || m->frames[i].seq > m->frames[k].seq)) k = i;
  }
  return k;
}

/* The frame record is free again and its snapshot no model root (the frame is popped, or dropped
 * with its domain). */
void drv_release_frame(driver *d, mutator *m, int k) {
  m->frames[k].domain = -1;
  m->frame_count--;
  size_t base = m->root_base + BANK_FRAMES + (size_t)k * FUZZ_SLOTS;
  for (int i = 0; i < FUZZ_SLOTS; i++) gc_model_root_clear(d->model, base + (size_t)i);
}

static void op_pop(driver *d, mutator *m) {
  int k = drv_innermost_frame(m, m->on);
  if (k < 0) return;
  /* Popping a frame that is not the domain's innermost must be refused and change nothing: the
   * slots' frame is d0's outermost, and no frame of any other domain. */
  drv_expect_error(d, m, gc_frame_pop(m->dom, &m->slot_frame), GC_ERR_FRAME_ORDER,
                   "gc_frame_pop(a frame that is not the innermost)");
  drv_expect_error(d, m, gc_frame_pop(m->dom, &m->frames[k].frame), GC_OK,
                   "gc_frame_pop(innermost)");
  drv_release_frame(d, m, k);
}

/* ---- Domains ------------------------------------------------------------------------------- */

/* Move the program to domain `to` (spawned): the domain it leaves waits in a blocking section
 * (unless it is in one already), `to` runs (unless `block` left it in one). INV-DRV-2. */
static void switch_to(driver *d, mutator *m, int to) {
  if (to == m->on) return;
  if (!d->blocked[m->on]) gc_enter_blocking(d->domains[m->on]);
  m->on = to;
  if (!d->blocked[to]) gc_leave_blocking(d->domains[to]);
  m->dom = d->blocked[to] ? NULL : d->domains[to];
}

void drv_op_spawn(driver *d, mutator *m, int n) {
  if (n == 0 || d->domains[n] != NULL) return;
  gc_domain *child = gc_domain_spawn(m->dom);
  drv_check_made(d);
  if (child == NULL) {
    /* Only out of memory may refuse a domain, and then with nomem. */
    drv_expect_error(d, m, gc_last_error(d->heap), GC_ERR_NOMEM, "gc_domain_spawn");
    return;
  }
  d->domains[n] = child;
  d->blocked[n] = 0;
}

static void op_terminate(driver *d, mutator *m, int n) {
  if (n == 0) {
    drv_expect_error(d, m, gc_domain_terminate(d->domains[0]), GC_ERR_MAIN_DOMAIN,
                     "gc_domain_terminate(the main domain)");
    return;
  }
  if (d->domains[n] == NULL) return;
  /* A domain terminates itself, running (it is in a blocking section unless the program is on
   * it); the program then goes on where it was, or on d0 if dN was where it was. */
  int back = m->on == n ? 0 : m->on;
  if (m->on != n) {
    gc_enter_blocking(m->dom);
    gc_leave_blocking(d->domains[n]);
  }
  for (int k; (k = drv_innermost_frame(m, n)) >= 0;) drv_release_frame(d, m, k);
  drv_expect_error(d, m, gc_domain_terminate(d->domains[n]), GC_OK, "gc_domain_terminate");
  d->domains[n] = NULL;
  d->blocked[n] = 0;
  m->on = back;
  if (!d->blocked[back]) gc_leave_blocking(d->domains[back]);
  m->dom = d->blocked[back] ? NULL : d->domains[back];
}

/* collect: gc_collect. A major or full collection is a whole cycle from the call (API-COLLECT):
 * on one thread the heap's count of cycles must have grown when it returns, whatever marked
 * when it was called (a cycle under way is finished first, then one more runs). On threads the
 * count is not read (the other domains run: gc_get_stats would race with them). */
static void op_collect(driver *d, mutator *m, gc_collect_kind kind) {
  int check =
      d->opt->threads == FUZZ_ONE_THREAD && (kind == GC_COLLECT_MAJOR || kind == GC_COLLECT_FULL);
  gc_stats before, after;
  if (check) gc_get_stats(d->heap, &before);
  gc_collect(m->dom, kind);
  if (!check) return;
  gc_get_stats(d->heap, &after);
  if (after.cycles <= before.cycles) {
    drv_violation(d, m, GC_VK_DRIVER_NO_CYCLE,
                  "gc_collect(%s) on d%d returned with no cycle completed since the call (%llu "
                  "cycles before and after)",
                  kind == GC_COLLECT_MAJOR ? "major" : "full", m->on,
                  (unsigned long long)after.cycles);
  }
}

/* compact: gc_compact on the running domain. The model follows the moves in the driver's hook
 * (run.c, GC_HOOK_COMPACTED); the slots, frames and global cells are the collector's roots, so
 * it rewrites them itself. Out of memory for its tables is the one refusal gc.h allows.
 *
 * On threads the other domains are parked at a safepoint or in a blocking section meanwhile,
 * some of them inside an op. That is sound because no op holds a block's address in a C
 * variable across a call that can reach a safepoint (gc.h's rule for several domains): ops name
 * blocks by model id and read the address (gc_model_value) right where they use it, with no
 * collector call in between, and the model (invariants/model.c) hands o->val only to calls
 * that never park (gc_store, gc_pin, gc_unpin, gc_finalizer_set and _clear take a lock at
 * most). A domain parked inside gc_model_alloc has no block yet (an allocation parks before it
 * takes a slot); the model's finalizer looks its block up by address before the body runs and
 * not after (that block never moves anyway: INV-COMPACT-2). */
static void op_compact(driver *d, mutator *m) {
  gc_error err = gc_compact(m->dom);
  if (err == GC_ERR_NOMEM) {
    gc_clear_error(d->heap);
    return;
  }
  drv_expect_error(d, m, err, GC_OK, "gc_compact");
}

static void op_block(driver *d, mutator *m) {
  if (d->blocked[m->on]) return;
  gc_enter_blocking(d->domains[m->on]);
  d->blocked[m->on] = 1;
  m->dom = NULL;
}

static void op_unblock(driver *d, mutator *m) {
  if (!d->blocked[m->on]) return;
  gc_leave_blocking(d->domains[m->on]);
  d->blocked[m->on] = 0;
  m->dom = d->domains[m->on];
}

/* ---- Finalizers and conservative ranges ---------------------------------------------------- */

static void op_fin(driver *d, mutator *m, int s, int revive) {
  gc_model_id obj = slot_obj(d, m, s);
  if (obj == GC_MODEL_NONE) return;
  size_t root =
      revive == FUZZ_NO_SLOT ? GC_MODEL_NO_ROOT : m->root_base + BANK_SLOTS + (size_t)revive;
  /* The model refuses only an object whose finalizer is queued (INV-FIN-1); the collector
   * must accept everything else. */
  gc_model_finalizer_set_reviving(d->model, obj, root);
  gc_clear_error(d->heap);
}

static void op_unfin(driver *d, mutator *m, int s) {
  gc_model_id obj = slot_obj(d, m, s);
  if (obj == GC_MODEL_NONE) return;
  if (gc_model_finalizer_clear(d->model, obj)) return;
  /* No finalizer set, as far as the model knows: the collector must refuse it too. */
  drv_expect_error(d, m, gc_finalizer_clear(d->heap, gc_model_value(d->model, obj)),
                   GC_ERR_NO_FINALIZER, "gc_finalizer_clear(a block without a finalizer set)");
}

/* `base` moved by a signed byte offset, modulo 2^64: the word may point anywhere, or nowhere. */
static GC_WRAPS uintptr_t word_at(uintptr_t base, intptr_t offset) {
  return base + (uintptr_t)offset;
}

static void op_range(driver *d, mutator *m, fuzz_arg word, int s, fuzz_arg offset) {
  gc_model_id obj = slot_obj(d, m, s);
  uintptr_t w = 0;
  if (obj != GC_MODEL_NONE) {
    uintptr_t base = gc_model_value(d->model, obj);
    if (offset.a == FUZZ_FROM_END) base += gc_model_wsize(d->model, obj) * sizeof(gc_value);
    w = word_at(base, (intptr_t)offset.b);
  }
  gc_model_range_store(d->model, (size_t)word.a, (size_t)word.b, w);
}

/* A word into the pool-aligned unit holding the block: the pool's header, its first slots. The
 * driver knows the layout only to aim words; what they must keep alive the model decides. A large
 * block has no pool: where its unit starts depends on where malloc put the block, which depends
 * on the programs that ran before (ASan's quarantine), so a word there hit other blocks or none
 * from one run of the program to the next. For a large block the word is inside it instead: its
 * header plus K words, modulo its size (the same word, relative to the block, on every run). */
static void op_range_pool(driver *d, mutator *m, fuzz_arg word, int s, int k) {
  gc_model_id obj = slot_obj(d, m, s);
  uintptr_t w = 0;
  if (obj != GC_MODEL_NONE) {
    uintptr_t val = gc_model_value(d->model, obj);
    size_t whsize = gc_model_wsize(d->model, obj) + 1;
    if (whsize > GC_SIZECLASS_MAX_WHSIZE) {
      w = val - sizeof(gc_value) + (uintptr_t)((size_t)k % whsize) * sizeof(gc_value);
    } else {
      w = (val & ~(uintptr_t)(GC_POOL_BSIZE - 1)) + (uintptr_t)k * sizeof(gc_value);
    }
  }
  gc_model_range_store(d->model, (size_t)word.a, (size_t)word.b, w);
}

static void op_root(driver *d, mutator *m, int g, int src) {
  size_t root = m->root_base + BANK_GLOBALS + (size_t)g;
  if (m->registered[g]) {
    drv_expect_error(d, m, gc_root_register(d->heap, &m->globals[g]), GC_ERR_DUP_ROOT,
                     "gc_root_register(a registered cell)");
  } else {
    drv_expect_error(d, m, gc_root_register(d->heap, &m->globals[g]), GC_OK, "gc_root_register");
    m->registered[g] = 1;
  }
  gc_model_root_set(d->model, root, slot_obj(d, m, src));
}

void drv_op_unroot(driver *d, mutator *m, int g) {
  size_t root = m->root_base + BANK_GLOBALS + (size_t)g;
  if (m->registered[g]) {
    drv_expect_error(d, m, gc_root_unregister(d->heap, &m->globals[g]), GC_OK,
                     "gc_root_unregister");
    m->registered[g] = 0;
    gc_model_root_clear(d->model, root);
  } else {
    drv_expect_error(d, m, gc_root_unregister(d->heap, &m->globals[g]), GC_ERR_UNKNOWN_ROOT,
                     "gc_root_unregister(an unregistered cell)");
  }
}

static void set_param(driver *d, mutator *m, const char *text) {
  drv_expect_error(d, m, gc_set_params(d->heap, text), GC_OK, text);
}

static void op_param(driver *d, mutator *m, fuzz_arg arg) {
  char text[64];
  fuzz_param p = (fuzz_param)arg.a;
  const char *name = fuzz_param_value_name(p, (size_t)arg.b);
  if (name != NULL) {
    snprintf(text, sizeof text, "%s=%s", fuzz_param_name(p), name);
  } else {
    snprintf(text, sizeof text, "%s=%ld", fuzz_param_name(p), fuzz_param_value(p, (size_t)arg.b));
  }
  if (p == FUZZ_PARAM_MARKSLICE) d->markslice = (size_t)fuzz_param_value(p, (size_t)arg.b);
  set_param(d, m, text);
}

/* mark_slice N: one GC_COLLECT_SLICE whose mark budget is N words. The budget is the heap's
 * markslice parameter, set for the call and put back after it to the program's own (its last
 * `param markslice`, read after the slice: on scheduled threads another domain may set one
 * while this slice runs), which still paces the slices its allocations run. */
static void op_mark_slice(driver *d, mutator *m, int words) {
  char text[48];
  snprintf(text, sizeof text, "markslice=%d", words > 0 ? words : 1);
  set_param(d, m, text);
  gc_collect(m->dom, GC_COLLECT_SLICE);
  snprintf(text, sizeof text, "markslice=%zu", d->markslice);
  set_param(d, m, text);
}

static void op_fail(driver *d, mutator *m, int n) {
  char text[32];
  snprintf(text, sizeof text, "failafter=%d", n);
  set_param(d, m, text);
  d->fail_countdown = (unsigned)n;
}

static void op_limit(driver *d, mutator *m, int index) {
  char text[48];
  d->limit_bytes = fuzz_limit_bytes((size_t)index);
  snprintf(text, sizeof text, "limit=%zu", d->limit_bytes);
  set_param(d, m, text);
}

static void op_pin(driver *d, mutator *m, int s) {
  gc_model_id obj = slot_obj(d, m, s);
  if (obj == GC_MODEL_NONE) return;
  drv_check_made(d);
  if (!gc_model_pin(d->model, obj)) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "gc_pin of a live block failed: %s",
                  gc_last_error_message(d->heap));
  }
  gc_clear_error(d->heap);
}

static void op_unpin(driver *d, mutator *m, int s) {
  gc_model_id obj = slot_obj(d, m, s);
  if (obj == GC_MODEL_NONE) return;
  if (gc_model_unpin(d->model, obj)) return;
  /* Not pinned, as far as the model knows: the collector must refuse it too. */
  drv_expect_error(d, m, gc_unpin(d->heap, gc_model_value(d->model, obj)), GC_ERR_NOT_BLOCK,
                   "gc_unpin(a block that is not pinned)");
}

static void never_added_scanner(gc_visit_fn visit, void *visit_ctx, void *user) {
  (void)visit;
  (void)visit_ctx;
  (void)user;
}

/* A refused allocation returns 0 with `want` recorded, allocates nothing and does not count
 * toward an injected failure. */
static void expect_alloc_refused(driver *d, mutator *m, gc_value v, gc_error want,
                                 const char *call) {
  drv_check_made(d);
  if (v != 0) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "%s returned a block, expected %s", call,
                  gc_error_name(want));
    return; /* the block is not in the model: the live count will say so too */
  }
  drv_expect_error(d, m, gc_last_error(d->heap), want, call);
}

/* Field by field: a struct's padding bytes are not part of its value. */
static int same_config(const gc_config *a, const gc_config *b) {
  return a->gc_percent == b->gc_percent && a->min_trigger_words == b->min_trigger_words &&
         a->sweep_budget_words == b->sweep_budget_words &&
         a->mark_stack_entries == b->mark_stack_entries &&
         a->heap_limit_bytes == b->heap_limit_bytes && a->pools_per_batch == b->pools_per_batch &&
         a->free_pools_kept == b->free_pools_kept && a->fail_alloc_after == b->fail_alloc_after &&
         a->trace == b->trace && a->verify == b->verify && a->marking == b->marking &&
         a->mark_slice_words == b->mark_slice_words;
}

/* The misuses of the ephemeron and weak API on a block of another tag take the mutator's first
 * slot holding a scanned block of 3 or more fields (an ephemeron's key and datum fields exist in
 * it), or 0. */
static gc_value misuse_scan_block(driver *d, const mutator *m) {
  for (int s = 0; s < FUZZ_SLOTS; s++) {
    gc_model_id obj = slot_obj(d, m, s);
    if (obj != GC_MODEL_NONE && gc_model_tag(d->model, obj) <= GC_TAG_SCAN_MAX &&
        gc_model_wsize(d->model, obj) >= 3) {
      return gc_model_value(d->model, obj);
    }
  }
  return 0;
}

/* A read of the wrong kind: 0, with bad-tag recorded by this call. */
static void expect_read_refused(driver *d, mutator *m, gc_value (*read)(gc_domain *, gc_value),
                                gc_value v, const char *call) {
  gc_clear_error(d->heap); /* the error must be this call's */
  gc_value got = read(m->dom, v);
  drv_check_made(d);
  if (got != 0) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "%s returned 0x%" PRIxPTR ", expected 0", call,
                  got);
  }
  drv_expect_error(d, m, gc_last_error(d->heap), GC_ERR_BAD_TAG, call);
}

/* A write of the wrong kind: bad-tag recorded by this call, and fields 1 and 2 (an ephemeron's
 * key and datum, a weak reference's target) as they were. (A refused call has no scheduling
 * point: on threads too, nothing else stores into the block meanwhile.) */
static void expect_write_refused(driver *d, mutator *m,
                                 void (*write)(gc_domain *, gc_value, gc_value), gc_value v,
                                 const char *call) {
  gc_value before[2] = {GC_FIELD(v, 1), GC_FIELD(v, 2)};
  gc_clear_error(d->heap);
  write(m->dom, v, gc_val_int(7));
  drv_check_made(d);
  if (GC_FIELD(v, 1) != before[0] || GC_FIELD(v, 2) != before[1]) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "a refused %s changed the scanned block's fields 1, 2 from 0x%" PRIxPTR
                  ", 0x%" PRIxPTR " to 0x%" PRIxPTR ", 0x%" PRIxPTR,
                  call, before[0], before[1], GC_FIELD(v, 1), GC_FIELD(v, 2));
  }
  drv_expect_error(d, m, gc_last_error(d->heap), GC_ERR_BAD_TAG, call);
}

static void misuse_finalizer(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)block;
  (void)user;
}

/* A scanner only the misuse scanner-user adds (with its mutator as user) and removes at once. */
static void misuse_scanner(gc_visit_fn visit, void *visit_ctx, void *user) {
  (void)visit;
  (void)visit_ctx;
  (void)user;
}

/* A range none of the driver's conservative ranges starts at. */
static const uintptr_t never_added_range[1];

static void misuse_scanner_user(driver *d, mutator *m) {
  gc_heap *h = d->heap;
  drv_expect_error(d, m, gc_root_scanner_add(h, misuse_scanner, m), GC_OK,
                   "gc_root_scanner_add(a scanner)");
  drv_expect_error(d, m, gc_root_scanner_remove(h, misuse_scanner, NULL), GC_ERR_UNKNOWN_ROOT,
                   "gc_root_scanner_remove(a scanner added with another user)");
  drv_expect_error(d, m, gc_root_scanner_remove(h, misuse_scanner, m), GC_OK,
                   "gc_root_scanner_remove(the scanner added, after a removal with another user)");
}

/* Two bytes into one word, ending two bytes before the next: no whole aligned word. */
static void misuse_range_short(driver *d, mutator *m) {
  gc_heap *h = d->heap;
  uintptr_t words[2] = {0, 0};
  const char *start = (const char *)words + 2;
  drv_expect_error(d, m, gc_conservative_add(h, start, sizeof(uintptr_t) - 4), GC_OK,
                   "gc_conservative_add(a range shorter than a word)");
  drv_expect_error(d, m, gc_conservative_remove(h, start), GC_OK,
                   "gc_conservative_remove(a range shorter than a word)");
  drv_expect_error(d, m, gc_conservative_remove(h, start), GC_ERR_UNKNOWN_RANGE,
                   "gc_conservative_remove(a range removed already)");
}

static void op_misuse(driver *d, mutator *m, fuzz_misuse which) {
  gc_heap *h = d->heap;
  switch (which) {
    case FUZZ_MISUSE_ALLOC0:
      expect_alloc_refused(d, m, gc_alloc(m->dom, 0, GC_TAG_SCAN), GC_ERR_ZERO_SIZE,
                           "gc_alloc(0 fields)");
      break;
    case FUZZ_MISUSE_TOO_LARGE:
      expect_alloc_refused(d, m, gc_alloc(m->dom, GC_MAX_WSIZE + 1, GC_TAG_RAW), GC_ERR_TOO_LARGE,
                           "gc_alloc(GC_MAX_WSIZE + 1 fields)");
      break;
    case FUZZ_MISUSE_BAD_TAG:
      expect_alloc_refused(d, m, gc_alloc(m->dom, 1, 251), GC_ERR_BAD_TAG, "gc_alloc(tag 251)");
      break;
    case FUZZ_MISUSE_CUSTOM_TAG:
      expect_alloc_refused(d, m, gc_alloc(m->dom, 2, GC_TAG_CUSTOM), GC_ERR_BAD_TAG,
                           "gc_alloc(the custom tag)");
      break;
    case FUZZ_MISUSE_PIN_NULL:
      drv_expect_error(d, m, gc_pin(h, 0), GC_ERR_NOT_BLOCK, "gc_pin(NULL)");
      break;
    case FUZZ_MISUSE_PIN_INT:
      drv_expect_error(d, m, gc_pin(h, gc_val_int(3)), GC_ERR_NOT_BLOCK, "gc_pin(an immediate)");
      break;
    case FUZZ_MISUSE_UNPIN_INT:
      drv_expect_error(d, m, gc_unpin(h, gc_val_int(3)), GC_ERR_NOT_BLOCK,
                       "gc_unpin(an immediate)");
      break;
    case FUZZ_MISUSE_SCANNER_REMOVE:
      drv_expect_error(d, m, gc_root_scanner_remove(h, never_added_scanner, d), GC_ERR_UNKNOWN_ROOT,
                       "gc_root_scanner_remove(a scanner never added)");
      break;
    case FUZZ_MISUSE_REGISTER_NULL:
      drv_expect_error(d, m, gc_root_register(h, NULL), GC_ERR_UNKNOWN_ROOT,
                       "gc_root_register(NULL)");
      break;
    case FUZZ_MISUSE_BAD_PARAM:
    case FUZZ_MISUSE_UNKNOWN_PARAM: {
      gc_config before = *gc_heap_config(h);
      const char *text = which == FUZZ_MISUSE_BAD_PARAM ? "markstack=3" : "bogus=1";
      drv_expect_error(d, m, gc_set_params(h, text), GC_ERR_PARAM, text);
      /* (Scheduled threads: another domain's `param` may run while this call waits at a lock,
       * so only the error is checked there.) */
      drv_check_made(d);
      if (d->opt->threads != FUZZ_SCHEDULED && !same_config(&before, gc_heap_config(h))) {
        drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                      "a refused gc_set_params(\"%s\") changed the "
                      "configuration",
                      text);
      }
      break;
    }
    case FUZZ_MISUSE_WEAK_GET_INT:
      gc_clear_error(h); /* the error must be this call's */
      (void)gc_weak_get(m->dom, gc_val_int(3));
      drv_expect_error(d, m, gc_last_error(h), GC_ERR_NOT_BLOCK, "gc_weak_get(an immediate)");
      break;
    case FUZZ_MISUSE_EPHE_KEY_INT:
      gc_clear_error(h);
      (void)gc_ephemeron_key(m->dom, gc_val_int(3));
      drv_expect_error(d, m, gc_last_error(h), GC_ERR_NOT_BLOCK, "gc_ephemeron_key(an immediate)");
      break;
    case FUZZ_MISUSE_WEAK_TOO_LARGE:
      expect_alloc_refused(d, m, gc_weak_alloc(m->dom, 0, GC_MAX_WSIZE), GC_ERR_TOO_LARGE,
                           "gc_weak_alloc(GC_MAX_WSIZE data words)");
      break;
    case FUZZ_MISUSE_IN_COLLECTION: drv_in_collection_arm(d, m); break;
    case FUZZ_MISUSE_EPHE_GET_SCAN:
    case FUZZ_MISUSE_EPHE_SET_SCAN:
    case FUZZ_MISUSE_WEAK_GET_SCAN:
    case FUZZ_MISUSE_WEAK_SET_SCAN: {
      gc_value v = misuse_scan_block(d, m);
      if (v == 0) break;
      if (which == FUZZ_MISUSE_EPHE_GET_SCAN) {
        expect_read_refused(d, m, gc_ephemeron_key, v, "gc_ephemeron_key(a scanned block)");
        expect_read_refused(d, m, gc_ephemeron_datum, v, "gc_ephemeron_datum(a scanned block)");
      } else if (which == FUZZ_MISUSE_EPHE_SET_SCAN) {
        expect_write_refused(d, m, gc_ephemeron_set_key, v,
                             "gc_ephemeron_set_key(a scanned block)");
        expect_write_refused(d, m, gc_ephemeron_set_datum, v,
                             "gc_ephemeron_set_datum(a scanned block)");
      } else if (which == FUZZ_MISUSE_WEAK_GET_SCAN) {
        expect_read_refused(d, m, gc_weak_get, v, "gc_weak_get(a scanned block)");
      } else {
        expect_write_refused(d, m, gc_weak_set, v, "gc_weak_set(a scanned block)");
      }
      break;
    }
    case FUZZ_MISUSE_FIN_SET_INT:
      drv_expect_error(d, m, gc_finalizer_set(h, gc_val_int(3), misuse_finalizer, NULL),
                       GC_ERR_NOT_BLOCK, "gc_finalizer_set(an immediate)");
      break;
    case FUZZ_MISUSE_CUSTOM_TOO_LARGE:
      expect_alloc_refused(d, m, gc_alloc_custom(m->dom, GC_MAX_WSIZE, NULL), GC_ERR_TOO_LARGE,
                           "gc_alloc_custom(GC_MAX_WSIZE data words)");
      /* The largest request: its size plus the function word wraps to 0 words. */
      expect_alloc_refused(d, m, gc_alloc_custom(m->dom, SIZE_MAX, NULL), GC_ERR_TOO_LARGE,
                           "gc_alloc_custom(SIZE_MAX data words)");
      break;
    case FUZZ_MISUSE_RANGE_REMOVE:
      drv_expect_error(d, m, gc_conservative_remove(h, never_added_range), GC_ERR_UNKNOWN_RANGE,
                       "gc_conservative_remove(a range never added)");
      break;
    case FUZZ_MISUSE_SCANNER_USER: misuse_scanner_user(d, m); break;
    case FUZZ_MISUSE_RANGE_SHORT: misuse_range_short(d, m); break;
    case FUZZ_MISUSE_COUNT: break;
  }
}

/* ---- Finalizer bodies ---------------------------------------------------------------------- */

/* A fin_do's body as the model's finalizer tag (never 0): where its ops start in the program's
 * bytes, the number of the first, their depth and their count. The op's own bytes are its
 * opcode and two one-byte operands. */
static uint64_t body_tag(const fuzz_op *op) {
  uint64_t pos = (uint64_t)op->offset + 3;
  return (uint64_t)1 << 63 | (pos & 0xffffffffu) << 30 |
         ((uint64_t)(op->index + 1) & 0xffffff) << 6 | (uint64_t)(op->depth + 1) << 4 |
         (uint64_t)op->body;
}

static void op_fin_do(driver *d, mutator *m, const fuzz_op *op) {
  gc_model_id obj = slot_obj(d, m, op->args[0].a);
  if (obj == GC_MODEL_NONE) return;
  /* As fin: refused by the model only while its finalizer is queued. */
  gc_model_finalizer_set_calling(d->model, obj, body_tag(op));
  gc_clear_error(d->heap);
}

/* The model's check of everything reachable (API-LIVE, API-ROOT) when a body returns: its own
 * block and what it points to are roots while it runs, whatever the body allocated, stored or
 * collected. O(model objects + reachable fields), once per finalizer body run. */
static void check_after_body(driver *d, const mutator *m, gc_model_id obj) {
  unsigned mask = gc_heap_config(d->heap)->verify & GC_VERIFY_MODEL;
  if (mask == 0) return;
  if (gc_verify_run_point(d->verifier, mask, GC_HOOK_CYCLED) == 0) return;
  char how[96];
  snprintf(how, sizeof how, "found when the finalizer body of model object #%u returned",
           (unsigned)obj);
  drv_report_passes(d, m, gc_verify_reports_of(d->verifier), how);
  gc_verify_clear(d->verifier);
}

/* The model's callback: a finalizer with a body runs (gc_finalizer_fn's contract, gc/gc.h). On
 * the thread running the queue, with that thread's mutator and domain. */
static void run_body(void *user, gc_model_id obj, uint64_t tag) {
  driver *d = user;
  mutator *m = drv_thread_mutator;
  drv_check_made(d);
  if (d->in_stw || d->in_hook > 0) {
    drv_violation(d, m, GC_VK_DRIVER_FINALIZER_CONTEXT,
                  "the finalizer of model object #%u runs inside a collection (%s): finalizers "
                  "run once the world runs again",
                  (unsigned)obj,
                  d->in_stw ? "the world stopped between mark-done and cycled" : "in a hook");
  }
  if (d->fin_running > 0) {
    drv_violation(d, m, GC_VK_DRIVER_FINALIZER_CONTEXT,
                  "the finalizer of model object #%u starts inside another finalizer (of #%d): "
                  "finalizers never nest",
                  (unsigned)obj, m != NULL && m->body_depth > 0 ? (int)m->fin_self : -1);
  }
  if (m == NULL || m->dom == NULL) return;
  d->fin_running++;
  int depth0 = m->body_depth;
  gc_model_id self0 = m->fin_self;
  const fuzz_op *op0 = m->op;
  m->fin_self = obj;
  if (d->opt->at_body != NULL) d->opt->at_body(d->opt->after_op_user, d->heap, m->dom);
  /* From inside a finalizer, running the queue must do nothing: the loop outside runs it. */
  size_t ran = gc_run_finalizers(m->dom);
  drv_check_made(d);
  if (ran != 0) {
    drv_violation(d, m, GC_VK_DRIVER_FINALIZER_CONTEXT,
                  "gc_run_finalizers called from the finalizer of model object #%u ran %zu "
                  "finalizer(s); from a finalizer it must run none",
                  (unsigned)obj, ran);
  }
  /* Zeal finalizer (gc.h): the collector runs a cycle after every finalizer; a finalizer that
   * allocates and collects is the embedder's part, so every finalizer body (fin_do: the model
   * calls this only for those; a plain `fin` runs no code of the program) first allocates one
   * block, through the model and unreachable at once, then runs a major cycle from inside. */
  if (gc_heap_config(d->heap)->zeal & GC_ZEAL_FINALIZER) {
    alloc_checked(d, m, FUZZ_KIND_SCAN, 1);
    gc_collect(m->dom, GC_COLLECT_MAJOR);
  }
  int depth = (int)(tag >> 4 & 3), count = (int)(tag & 15);
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init_body(&dec, d->opt->ops, d->data, d->size, (size_t)(tag >> 30 & 0xffffffffu),
                         (size_t)(tag >> 6 & 0xffffff), depth, count);
  m->body_depth = depth;
  while (fuzz_program_next(&dec, &op)) {
    m->op = &op;
    if (d->opt->trace != NULL && op.depth == depth) {
      char text[FUZZ_OP_TEXT_MAX];
      fprintf(d->opt->trace, "%4zu  %*s%s   (finalizer of #%u)\n", op.index, 2 * depth, "",
              fuzz_op_format(&op, text, sizeof text), (unsigned)obj);
    }
    drv_run_op(d, m, &op);
  }
  m->op = op0;
  m->body_depth = depth0;
  m->fin_self = self0;
  check_after_body(d, m, obj);
  d->fin_running--;
}

void drv_install_bodies(driver *d) { gc_model_set_fin_callback(d->model, run_body, d); }

/* ---- One op -------------------------------------------------------------------------------- */

void drv_run_op(driver *d, mutator *m, const fuzz_op *op) {
  const fuzz_arg *a = op->args;
  /* A finalizer body's ops run only in it (run_body), and only those a body may run. */
  if (op->depth != m->body_depth || (m->body_depth > 0 && !fuzz_op_runs_in_body(op->code))) return;
  /* No domain runs (`block`): only on and unblock touch nothing a blocked thread may not. */
  if (m->dom == NULL && op->code != FUZZ_OP_ON && op->code != FUZZ_OP_UNBLOCK) return;
  switch (op->code) {
    case FUZZ_OP_ALLOC:
    case FUZZ_OP_ALLOC_LARGE:
      op_alloc(d, m, a[0].a, (fuzz_block_kind)a[1].a, (size_t)a[2].a);
      break;
    case FUZZ_OP_STORE: op_store(d, m, a[0], 0, a[1].a); break;
    case FUZZ_OP_STORE_IMM: op_store(d, m, a[0], 1, a[1].a); break;
    case FUZZ_OP_LOAD: op_load(d, m, a[0].a, a[1]); break;
    case FUZZ_OP_DROP: set_slot(d, m, a[0].a, GC_MODEL_NONE); break;
    case FUZZ_OP_COPY: set_slot(d, m, a[0].a, slot_obj(d, m, a[1].a)); break;
    case FUZZ_OP_PUSH: op_push(d, m); break;
    case FUZZ_OP_POP: op_pop(d, m); break;
    case FUZZ_OP_ROOT: op_root(d, m, a[0].a, a[1].a); break;
    case FUZZ_OP_UNROOT: drv_op_unroot(d, m, a[0].a); break;
    case FUZZ_OP_COLLECT: op_collect(d, m, (gc_collect_kind)a[0].a); break;
    case FUZZ_OP_PARAM: op_param(d, m, a[0]); break;
    case FUZZ_OP_FAIL: op_fail(d, m, a[0].a); break;
    case FUZZ_OP_LIMIT: op_limit(d, m, a[0].a); break;
    case FUZZ_OP_PIN: op_pin(d, m, a[0].a); break;
    case FUZZ_OP_UNPIN: op_unpin(d, m, a[0].a); break;
    case FUZZ_OP_MISUSE: op_misuse(d, m, (fuzz_misuse)a[0].a); break;
    case FUZZ_OP_SPAWN: drv_op_spawn(d, m, a[0].a); break;
    case FUZZ_OP_TERMINATE: op_terminate(d, m, a[0].a); break;
    case FUZZ_OP_ON:
      if (d->domains[a[0].a] != NULL) switch_to(d, m, a[0].a);
      break;
    case FUZZ_OP_FIN: op_fin(d, m, a[0].a, a[1].a); break;
    case FUZZ_OP_UNFIN: op_unfin(d, m, a[0].a); break;
    case FUZZ_OP_RANGE: op_range(d, m, a[0], a[1].a, a[2]); break;
    case FUZZ_OP_RANGE_INT:
      gc_model_range_store(d->model, (size_t)a[0].a, (size_t)a[0].b, (uintptr_t)a[1].a);
      break;
    case FUZZ_OP_RANGE_WORD:
      gc_model_range_store(d->model, (size_t)a[0].a, (size_t)a[0].b, (uintptr_t)a[1].word);
      break;
    case FUZZ_OP_RANGE_POOL: op_range_pool(d, m, a[0], a[1].a, a[2].a); break;
    case FUZZ_OP_BLOCK: op_block(d, m); break;
    case FUZZ_OP_UNBLOCK: op_unblock(d, m); break;
    case FUZZ_OP_PCT:
    case FUZZ_OP_CHOOSE: break; /* read before the run (schedule_config) */
    case FUZZ_OP_CORRUPT:
      /* One thread only: it breaks the heap for a moment, which no other thread may see. */
      if (d->opt->threads == FUZZ_ONE_THREAD) {
        drv_op_corrupt(d, m, (fuzz_corruption)a[0].a, a[1].a, a[2].a);
      }
      break;
    case FUZZ_OP_FIN_DO: op_fin_do(d, m, op); break;
    case FUZZ_OP_SELF:
      if (m->body_depth > 0) set_slot(d, m, a[0].a, m->fin_self);
      break;
    case FUZZ_OP_MARK_SLICE: op_mark_slice(d, m, a[0].a); break;
    case FUZZ_OP_COMPACT: op_compact(d, m); break;
    case FUZZ_OP_PARAMS:
      /* One thread only (params_op.h): the schedule target's op set leaves it out. */
      if (d->opt->threads == FUZZ_ONE_THREAD) drv_op_params(d, m, a[0].a);
      break;
    /* The backends' ops (fuzz/oracle): no target of this driver's op sets names them. */
    case FUZZ_OP_TUNE:
    case FUZZ_OP_WEAK:
    case FUZZ_OP_WEAK_GET:
    case FUZZ_OP_EPHE:
    case FUZZ_OP_EPHE_GET:
    case FUZZ_OP_WEAK_SET:
    case FUZZ_OP_EPHE_SET:
    case FUZZ_OP_COUNT: break;
  }
}

void drv_end_on_main(driver *d, mutator *m) {
  switch_to(d, m, 0);
  op_unblock(d, m);
}
