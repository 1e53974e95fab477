/* The bdwgc backend's finalizers and weak references.
 *
 * Finalizers run on demand (GC_set_finalize_on_demand): in run_finalizers, and at the end of an
 * op whose allocation triggered a collection (bdwgc_op_end), on the thread of the domain the op
 * runs on; never inside bdwgc. A finalizer's body (the driver's events.finalize) may call the
 * table back from there: those calls run directly on that thread (bdwgc_run_on). A weak
 * reference is a raw block whose third word is bdwgc's link to the target (short: a
 * disappearing link; long with weak=long).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

/* ---- Finalizers ------------------------------------------------------------------------------ */

size_t bdwgc_run_finalizers(fuzz_bheap *h) {
  (void)h;
  return (size_t)GC_invoke_finalizers();
}

/* bdwgc calls this from GC_invoke_finalizers (finalize-on-demand: only run_finalizers runs it). */
static void GC_CALLBACK run_finalizer(void *obj, void *token) {
  fuzz_bheap *h = bdwgc_current;
  if (h == NULL || h->dying) return;
  block_entry *e = bdwgc_reg_find(&h->reg, obj);
  if (e != NULL) e->has_fin = 0;
  /* A body that allocates may run the finalizers its allocation queued, inside it (bdwgc_op_end):
   * the outer body's block is back in SELF when the inner one returns, and the cell is empty
   * when the outermost does. */
  size_t self = FUZZ_CELL_SELF(&h->cfg);
  void *outer = h->cells[self];
  h->rare[BDWGC_RARE_FIN_RUN]++;
  if (outer != NULL) h->rare[BDWGC_RARE_FIN_NESTED]++;
  h->cells[self] = obj;
  h->cfg.events.finalize(h->cfg.events.user, (uint64_t)(uintptr_t)token);
  h->cells[self] = outer;
}

/* Register run_finalizer with `token` on p in the heap's order; false when bdwgc could not
 * allocate the registration (it leaves *ofn alone then: the value set here says so). */
static bool register_fin(fuzz_bheap *h, void *p, uint64_t token) {
  GC_finalization_proc ofn = bdwgc_never_runs;
  void *ocd, *cd = (void *)(uintptr_t)token;
  switch (h->fin) {
    case FIN_ORDERED: GC_register_finalizer(p, run_finalizer, cd, &ofn, &ocd); break;
    case FIN_UNORDERED: GC_register_finalizer_no_order(p, run_finalizer, cd, &ofn, &ocd); break;
    case FIN_IGNORE_SELF:
      GC_register_finalizer_ignore_self(p, run_finalizer, cd, &ofn, &ocd);
      break;
  }
  return ofn != bdwgc_never_runs;
}

/* The driver's model has the finalizers that run during fin_set run before its registration:
 * one of their bodies may set or clear this very block's finalizer, and must find it as it was
 * before the call. So the ones already queued run first (a finalizer's body calling fin_set
 * leaves the rest of bdwgc's queue waiting), and when a collection inside the registration
 * (bdwgc allocating its tables) queued more, the registration is taken back while they run and
 * made again after them. Running them after the registration was the fuzz target's
 * oracle.finalizer-clear (a body's fin_clear answered one was set). */
enum { FIN_SET_ROUNDS = 8 };

int bdwgc_fin_set(fuzz_bheap *h, size_t cell, uint64_t token) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  if (GC_should_invoke_finalizers()) GC_invoke_finalizers();
  bdwgc_op_begin(h);
  bool ok = register_fin(h, p, token);
  for (int round = 0; ok && round < FIN_SET_ROUNDS && GC_should_invoke_finalizers(); round++) {
    GC_finalization_proc ofn;
    void *ocd;
    GC_register_finalizer(p, 0, NULL, &ofn, &ocd); /* taken back, whatever its order */
    h->rare[BDWGC_RARE_FIN_SET_AGAIN]++;
    bdwgc_steps_left = SIZE_MAX;
    GC_invoke_finalizers();
    bdwgc_op_begin(h);
    ok = register_fin(h, p, token);
  }
  block_entry *e = bdwgc_reg_find(&h->reg, p);
  if (ok && e != NULL) e->has_fin = 1;
  bdwgc_op_end();
  return ok;
}

int bdwgc_fin_clear(fuzz_bheap *h, size_t cell) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  GC_finalization_proc ofn = 0;
  void *ocd = NULL;
  GC_register_finalizer(p, 0, NULL, &ofn, &ocd);
  block_entry *e = bdwgc_reg_find(&h->reg, p);
  if (e != NULL) e->has_fin = 0;
  return ofn != 0;
}

/* ---- Weak references ------------------------------------------------------------------------- */

/* The weak reference block w, rooted already, made to name t. */
static int weak_link(fuzz_bheap *h, uintptr_t *w, void *t) {
  if (!bdwgc_reg_add(h, w, WEAK_WORDS, SHAPE_WEAK)) return 0;
  if (t == NULL) return 1; /* a weak reference to nothing reads as gone */
  /* gc.h: the link location holds a disguised pointer to the target, cleared (to 0) by bdwgc. */
  w[WEAK_SLOT] = GC_HIDE_POINTER(t);
  void **link = (void **)&w[WEAK_SLOT];
  int rc = h->weak_long ? GC_register_long_link(link, t)
                        : GC_general_register_disappearing_link(link, t);
  if (rc == GC_DUPLICATE) /* bdwgc re-aimed a registration it kept at t: a dead one's */
    bdwgc_note(h, "bdwgc.link-duplicate",
               "the link word of the new weak reference %p was still registered: a dead weak "
               "reference's link was never dropped",
               w);
  if (rc == GC_SUCCESS || rc == GC_DUPLICATE) return 1;
  w[WEAK_SLOT] = 0;
  return 0;
}

int bdwgc_weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  void *t = h->cells[target];
  bdwgc_op_begin(h);
  uintptr_t *w = GC_MALLOC_ATOMIC(WEAK_WORDS * sizeof(uintptr_t));
  bdwgc_steps_left = SIZE_MAX;
  size_t slot = bdwgc_inflight_enter(h);
  int ok = w != NULL;
  if (!ok) h->rare[BDWGC_RARE_ALLOC_FAILED]++;
  if (ok) {
    memset(w, 0, WEAK_WORDS * sizeof(uintptr_t));
    h->cells[slot] = w;
    ok = weak_link(h, w, t);
  }
  bdwgc_op_end();
  h->cells[dst] = ok ? (void *)w : NULL;
  bdwgc_inflight_leave(h, slot);
  return ok;
}

/* Under the allocation lock, so the collector cannot clear the link between the read and the
 * reveal (gc.h's advice for disguised pointers). */
static void *GC_CALLBACK read_weak(void *slot) {
  GC_hidden_pointer hidden = *(GC_hidden_pointer *)slot;
  return hidden != 0 ? GC_REVEAL_POINTER(hidden) : NULL;
}

int bdwgc_weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  uintptr_t *w = bdwgc_block(h, weak);
  void *t = w != NULL ? GC_call_with_alloc_lock(read_weak, &w[WEAK_SLOT]) : NULL;
  if (w != NULL && t == NULL) h->rare[BDWGC_RARE_WEAK_CLEARED]++;
  h->cells[dst] = t;
  return t != NULL;
}
