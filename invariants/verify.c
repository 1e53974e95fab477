/* The verifier: the hook that runs the passes at their points, in abort or collect mode. */
#include "invariants/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/heap.h"
#include "invariants/model_graph.h"
#include "invariants/pass.h"

struct gc_verifier {
  gc_heap *heap;
  gc_verify_mode mode;
  gc_hook_fn prev_hook; /* the hook found at install time: chained, run first */
  void *prev_user;
  gc_model *model;
  char *dot_path;
  gc_verify_reports reports;
  gc_verify_scratch *scratch;          /* the walk's map and stack, the index: kept across cycles */
  gc_verify_scratch own_scratch;       /* scratch when no one lends the verifier theirs */
  uint64_t runs[GC_VERIFY_PASS_COUNT]; /* by GC_VERIFY_BIT_* */
};

void gc_verify_fail_and_abort(const gc_verify_reports *r, long op, const char *dot_path,
                              FILE *out) {
  fflush(stdout); /* what the program printed before comes first */
  gc_verify_reports_emit(r, op, dot_path, out);
  abort();
}

size_t gc_verify_run_point(gc_verifier *v, unsigned mask, gc_hook_point point) {
  gc_verify_run run = {v->heap, gc_verify_point_name(point), &v->reports, v->scratch, 0, 0};
  size_t found = 0;
  /* One heap index for every pass of this point: they only read the heap, so the index built
   * before the first is the index each would build for itself. (A chained hook that breaks the
   * heap on purpose ran before this.) */
  int model = (mask & GC_VERIFY_MODEL) && v->model != NULL;
  if (model || (point == GC_HOOK_MARK_DONE && (mask & GC_VERIFY_CHECKMARK)) ||
      (point == GC_HOOK_CYCLED && (mask & GC_VERIFY_REACH))) {
    run.index_complete = gc_heapindex_build(&v->scratch->index, v->heap);
    run.index_built = 1;
  }
  switch (point) {
    case GC_HOOK_MARK_DONE:
      if (mask & GC_VERIFY_CHECKMARK) {
        v->runs[GC_VERIFY_BIT_CHECKMARK]++;
        found += gc_verify_checkmark_run(&run);
      }
      break;
    case GC_HOOK_CYCLED:
      if (mask & GC_VERIFY_REACH) {
        v->runs[GC_VERIFY_BIT_REACH]++;
        found += gc_verify_reach_run(&run);
      }
      break;
    case GC_HOOK_SWEPT:
      if (mask & GC_VERIFY_SWEPT) {
        v->runs[GC_VERIFY_BIT_SWEPT]++;
        found += gc_verify_swept_run(&run);
      }
      break;
  }
  if (model) {
    v->runs[GC_VERIFY_BIT_MODEL]++;
    found += gc_model_check_with_index(v->model, point, &v->reports, &v->scratch->index);
  }
  if (found > 0 && v->mode == GC_VERIFY_ABORT) {
    gc_verify_fail_and_abort(&v->reports, -1, v->dot_path, stderr);
  }
  return found;
}

size_t gc_verify_pass_now(gc_verifier *v, unsigned pass, gc_verify_reports *out) {
  gc_verify_run run = {v->heap, "direct", out, v->scratch, 0, 0};
  switch (pass) {
    case GC_VERIFY_REACH: return gc_verify_reach_run(&run);
    case GC_VERIFY_CHECKMARK: return gc_verify_checkmark_run(&run);
    case GC_VERIFY_SWEPT: return gc_verify_swept_run(&run);
  }
  return 0;
}

static void verify_hook(gc_heap *heap, gc_hook_point point, void *user) {
  gc_verifier *v = user;
  if (v->prev_hook != NULL) v->prev_hook(heap, point, v->prev_user);
  gc_verify_run_point(v, heap->cfg.verify, point);
}

gc_verifier *gc_verify_install(gc_heap *heap, gc_verify_mode mode) {
  gc_verifier *v = calloc(1, sizeof *v);
  if (v == NULL) return NULL;
  v->heap = heap;
  v->mode = mode;
  v->prev_hook = heap->hook;
  v->prev_user = heap->hook_user;
  v->scratch = &v->own_scratch;
  gc_verify_reports_init(&v->reports);
  const char *dot = getenv("GCFUZZ_VERIFY_DOT");
  if (dot != NULL && dot[0] != '\0') gc_verify_set_dot_path(v, dot);
  gc_set_hook(heap, verify_hook, v);
  return v;
}

void gc_verify_uninstall(gc_verifier *v) {
  if (v == NULL) return;
  if (v->heap->hook == verify_hook && v->heap->hook_user == v) {
    gc_set_hook(v->heap, v->prev_hook, v->prev_user);
  }
  gc_verify_reports_free(&v->reports);
  gc_verify_scratch_free(&v->own_scratch);
  free(v->dot_path);
  free(v);
}

void gc_verify_set_model(gc_verifier *v, gc_model *m) { v->model = m; }

gc_verify_scratch *gc_verify_scratch_create(void) { return calloc(1, sizeof(gc_verify_scratch)); }

void gc_verify_scratch_destroy(gc_verify_scratch *s) {
  if (s == NULL) return;
  gc_verify_scratch_free(s);
  free(s);
}

void gc_verify_use_scratch(gc_verifier *v, gc_verify_scratch *s) {
  gc_verify_scratch_free(&v->own_scratch);
  v->scratch = s != NULL ? s : &v->own_scratch;
}

void gc_verify_set_dot_path(gc_verifier *v, const char *path) {
  free(v->dot_path);
  v->dot_path = path != NULL ? strdup(path) : NULL;
}

const char *gc_verify_dot_path(const gc_verifier *v) { return v->dot_path; }

const gc_verify_reports *gc_verify_reports_of(const gc_verifier *v) { return &v->reports; }
size_t gc_verify_violations(const gc_verifier *v) { return v->reports.count + v->reports.dropped; }
void gc_verify_clear(gc_verifier *v) { gc_verify_reports_clear(&v->reports); }

uint64_t gc_verify_runs(const gc_verifier *v, unsigned pass) {
  static const unsigned bits[GC_VERIFY_PASS_COUNT] = {
#define PASS_BIT(id, name, points, what) [GC_VERIFY_BIT_##id] = GC_VERIFY_##id,
      GC_VERIFY_PASS_TABLE(PASS_BIT)
#undef PASS_BIT
  };
  for (int b = 0; b < GC_VERIFY_PASS_COUNT; b++) {
    if (bits[b] == pass) return v->runs[b];
  }
  return 0;
}
