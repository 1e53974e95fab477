/* The check of the deep check (backend.h: corrupt): invariants/'s corruption catalogue planted in
 * gcfuzz's heap, run past the one pass that must see it, repaired exactly, and that pass run
 * again. The catalogue's model corruptions do not apply (the backend runs no gc_model: the
 * oracle above is its model), nor do those that need a model object. */
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/gcfuzz/gcfuzz_heap.h"
#include "gc/heap.h" /* whether a cycle marks */
#include "invariants/corrupt.h"

typedef struct gcfuzz_corrupt_op {
  gc_corruption c;
  const char *name;
  int fired; /* a mark-done corruption's collection reached the point */
  fuzz_plant_result result;
  fuzz_finding *found;
} gcfuzz_corrupt_op;

static void set_found(gcfuzz_corrupt_op *op, const char *kind, const char *fmt, const char *a,
                      const char *b) {
  snprintf(op->found->kind, sizeof op->found->kind, "%s", kind);
  snprintf(op->found->message, sizeof op->found->message, fmt, a, b);
}

/* The pass on the heap as it is (a report there is the collector's own finding: nothing is
 * planted), then planted, checked, repaired, checked again. */
static void plant_check_repair(gcfuzz_corrupt_op *op) {
  gc_corruption *c = &op->c;
  gc_verify_kind kind = gc_corruption_kind(c->which);
  gc_verify_reports found;
  gc_verify_reports_init(&found);
  char planted[160], summary[160];
  gc_corruption_check(c, &found);
  if (found.count + found.dropped > 0) {
    gc_corruption_undo(c); /* only bytes kept for the check, none written */
    const gc_verify_report *rep = &found.items[0];
    snprintf(op->found->kind, sizeof op->found->kind, "%s", gc_verify_kind_name(rep->kind));
    snprintf(op->found->message, sizeof op->found->message,
             "found by `corrupt %s` before it planted anything: %s (%s; %s)", op->name, rep->what,
             rep->header_text, rep->where);
    op->result = FUZZ_PLANT_FOUND;
    gc_verify_reports_free(&found);
    return;
  }
  if (!gc_corruption_plant(c)) {
    gc_corruption_undo(c);
    gc_verify_reports_free(&found);
    return; /* FUZZ_PLANT_NONE */
  }
  gc_corruption_describe(c, planted, sizeof planted);
  gc_corruption_check(c, &found);
  if (gc_verify_reports_count_kind(&found, kind) == 0) {
    gc_verify_reports_summarize(&found, summary, sizeof summary);
    gc_corruption_undo(c);
    set_found(op, gc_verify_kind_name(kind), "planted %s; the pass reported no such kind but %s",
              planted, summary);
    op->result = FUZZ_PLANT_MISSED;
    gc_verify_reports_free(&found);
    return;
  }
  gc_verify_reports_clear(&found);
  gc_corruption_undo(c);
  gc_corruption_check(c, &found);
  if (found.count + found.dropped > 0) {
    gc_verify_reports_summarize(&found, summary, sizeof summary);
    set_found(op, gc_verify_kind_name(kind),
              "planted %s and repaired it; the pass still reports %s", planted, summary);
    op->result = FUZZ_PLANT_UNREPAIRED;
  } else {
    op->result = FUZZ_PLANT_CAUGHT;
  }
  gc_verify_reports_free(&found);
}

void gcfuzz_hook(gc_heap *heap, gc_hook_point point, void *user) {
  fuzz_bheap *h = user;
  (void)heap;
  if (point == GC_HOOK_COMPACTED) gcfuzz_report_moves(h);
  if (point != GC_HOOK_MARK_DONE || h->corrupt_armed == NULL) return;
  gcfuzz_corrupt_op *op = h->corrupt_armed;
  h->corrupt_armed = NULL; /* once: a later cycle of the same call is ordinary */
  op->fired = 1;
  /* The collection may have moved pools between lists (finishing the last sweep): look again. */
  if (gc_corruption_prepare(&op->c)) plant_check_repair(op);
}

fuzz_plant_result gcfuzz_corrupt(fuzz_bheap *h, const char *name, size_t cell, unsigned n,
                                 fuzz_finding *found) {
  long row = gc_corruption_find(name, strlen(name));
  if (row < 0 || cell >= h->ncells - 1) return FUZZ_PLANT_NONE;
  /* The victim's bank is the corruption's slots: the catalogue names the victim by its slot. */
  size_t bank = cell / h->bank_cells * h->bank_cells;
  gcfuzz_corrupt_op op = {
      .c = {.which = (size_t)row,
            .heap = h->heap,
            .model = NULL,
            .verifier = h->verifier,
            .dom = gcfuzz_dom(h),
            .slots = h->cells + bank,
            .slot_count = h->bank_cells,
            .slot = (int)(cell - bank),
            .n = (int)n},
      .name = name,
      .result = FUZZ_PLANT_NONE,
      .found = found,
  };
  /* The passes hold only between cycles: while an incremental cycle marks, only the corruptions
   * planted at a mark-done point of their own collection apply (it finishes the mark first). */
  int marking = __atomic_load_n(&h->heap->marking, __ATOMIC_ACQUIRE) != 0;
  int at_mark_done = gc_corruption_at_mark_done((size_t)row);
  if ((marking && !at_mark_done) || !gc_corruption_prepare(&op.c)) return FUZZ_PLANT_NONE;
  if (!at_mark_done) {
    plant_check_repair(&op);
    return op.result;
  }
  h->corrupt_armed = &op;
  gc_collect(gcfuzz_dom(h), GC_COLLECT_MAJOR);
  gc_clear_error(h->heap);
  h->corrupt_armed = NULL;
  if (!op.fired) {
    /* The collector's fault: a major collection is a whole cycle from the call. */
    set_found(&op, "gcfuzz.no-cycle", "`corrupt %s`: its major collection never reached the %s",
              name, "mark-done point");
    return FUZZ_PLANT_FOUND;
  }
  return op.result;
}
