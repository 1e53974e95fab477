/* The verifier: the hook that runs the passes at their points, in abort or collect mode. */
#include "invariants/verify.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/heap.h"
#include "invariants/model_graph.h"
#include "invariants/pass.h"
#include "invariants/snapshot.h"

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
  gc_verify_history history;           /* the heap's last sweep end, for the stats pass */
  gc_verify_mark_record mark_record;   /* the last mark start and its slices, for the perf pass */
  /* Mark slices end on several threads at once, with the world running: their passes take
   * turns, so the reports, the run counts and the snapshot's slice records have one writer at
   * a time. A plain mutex, not the platform's: it is no protocol of the collector, and nothing
   * under it reaches a scheduling point, so under the controlled scheduler it is never held
   * across a switch. */
  pthread_mutex_t slice_lock;
};

void gc_verify_fail_and_abort(const gc_verify_reports *r, long op, const char *dot_path,
                              FILE *out) {
  fflush(stdout); /* what the program printed before comes first */
  gc_verify_reports_emit(r, op, dot_path, out);
  abort();
}

/* The rows of gc/passes.h, as the verifier runs them. */
typedef struct pass_row {
  gc_verify_pass_id id;
  unsigned points; /* GC_HOOK_BIT()s */
  unsigned needs;  /* enum gc_verify_needs */
  size_t (*run)(const gc_verify_run *);
} pass_row;

static const pass_row passes[GC_VERIFY_PASS_COUNT] = {
#define PASS_ROW(id, name, points, run_fn, needs, what) \
  [GC_VERIFY_BIT_##id] = {GC_VPASS_##id, points, needs, run_fn},
    GC_VERIFY_PASS_TABLE(PASS_ROW)
#undef PASS_ROW
};

/* The pass of `mask` runs at `point` on this verifier: its row lists the point, and what it needs
 * is there. */
static int pass_runs(const gc_verifier *v, const pass_row *p, unsigned mask, gc_hook_point point) {
  return (mask & gc_verify_pass_mask(p->id)) && (p->points & GC_HOOK_BIT(point)) &&
         (!(p->needs & GC_VERIFY_NEEDS_MODEL) || v->model != NULL);
}

/* At a mark start: does a pass of `mask` need the record of it? One that runs there, or any one
 * when the cycle marks incrementally (checkmark's floating garbage; in the stw mode it needs
 * none, so it costs nothing there). */
static int snapshot_wanted(gc_verifier *v, unsigned mask) {
  int incremental = gc_atomic_load_relaxed(&v->heap->marking_mode) == GC_MARKING_INCREMENTAL;
  for (int b = 0; b < GC_VERIFY_PASS_COUNT; b++) {
    const pass_row *p = &passes[b];
    if (!(mask & gc_verify_pass_mask(p->id)) || !(p->needs & GC_VERIFY_NEEDS_SNAPSHOT)) continue;
    if (incremental || (p->points & GC_HOOK_BIT(GC_HOOK_MARK_START))) return 1;
  }
  return 0;
}

/* The passes of one point; at a mark slice, the caller holds slice_lock. */
static size_t run_passes(gc_verifier *v, unsigned mask, gc_hook_point point) {
  gc_verify_run run = {.heap = v->heap,
                       .point = gc_verify_point_name(point),
                       .out = &v->reports,
                       .scratch = v->scratch,
                       .at_hook = 1,
                       .hook = point,
                       .model = v->model,
                       .history = &v->history,
                       .snapshot = &v->scratch->snapshot,
                       .mark_record = &v->mark_record,
                       .domain = point == GC_HOOK_MARK_SLICE ? gc_heap_hook_domain(v->heap) : NULL};
  /* The world runs at a slice: no index (other domains' lists move), and nothing without the
   * domain whose slice ended. */
  if (point == GC_HOOK_MARK_SLICE && run.domain == NULL) return 0;
  if (point == GC_HOOK_MARK_START) {
    v->scratch->snapshot.taken = 0;
    if (snapshot_wanted(v, mask)) {
      run.index_complete = gc_heapindex_build(&v->scratch->index, v->heap);
      run.index_built = 1;
      gc_verify_snapshot_take(&v->scratch->snapshot, v->heap, &v->scratch->index);
    }
  }
  size_t found = 0;
  for (int b = 0; b < GC_VERIFY_PASS_COUNT; b++) {
    const pass_row *p = &passes[b];
    if (!pass_runs(v, p, mask, point)) continue;
    /* One heap index for every pass of this point: they only read the heap, so the index built
     * before the first is the index each would build for itself. (A chained hook that breaks the
     * heap on purpose ran before this.) */
    if ((p->needs & GC_VERIFY_NEEDS_INDEX) && !run.index_built && point != GC_HOOK_MARK_SLICE) {
      run.index_complete = gc_heapindex_build(&v->scratch->index, v->heap);
      run.index_built = 1;
    }
    v->runs[b]++;
    found += p->run(&run);
  }
  return found;
}

/* The perf pass's record of each mark (pass.h), whatever the mask: a mask changed mid-cycle, or
 * perf turned on, still finds the mark's start recorded. A slice is counted only when the
 * collector calls its hook (the slice's domain is known on this thread), not when a test or a
 * tool runs the point's passes by hand. */
static void note_mark_point(gc_verifier *v, gc_hook_point point) {
  gc_verify_mark_record *rec = &v->mark_record;
  if (point == GC_HOOK_MARK_SLICE) {
    if (gc_heap_hook_domain(v->heap) != NULL) __atomic_fetch_add(&rec->slices, 1, __ATOMIC_RELAXED);
    return;
  }
  if (point != GC_HOOK_MARK_START) return;
  gc_stats s;
  gc_get_stats(v->heap, &s);
  rec->taken = 1;
  rec->cycles = v->heap->cycles;
  rec->mark_slices = s.mark_slices;
  rec->handoffs = s.handoffs;
  rec->mark_overflows = s.mark_overflows;
  __atomic_store_n(&rec->slices, 0, __ATOMIC_RELAXED);
}

int gc_verify_mark_record_fits(const gc_verify_mark_record *rec, gc_heap *heap, int at_mark_done) {
  if (rec == NULL || !rec->taken) return 0;
  if (at_mark_done) return heap->cycles == rec->cycles;
  return !gc_atomic_load(&heap->marking) && rec->cycles < heap->cycles &&
         heap->cycles - rec->cycles == 1;
}

gc_verify_mark_record *gc_verify_mark_record_of(gc_verifier *v) { return &v->mark_record; }

size_t gc_verify_run_point(gc_verifier *v, unsigned mask, gc_hook_point point) {
  size_t found;
  note_mark_point(v, point);
  if (point == GC_HOOK_MARK_SLICE) {
    pthread_mutex_lock(&v->slice_lock);
    found = run_passes(v, mask, point);
    pthread_mutex_unlock(&v->slice_lock);
  } else {
    found = run_passes(v, mask, point);
  }
  /* Every sweep end is the stats pass's history; the pass records it itself when it ran. */
  if (point == GC_HOOK_SWEPT && !(mask & GC_VERIFY_STATS)) {
    gc_verify_stats_record(&v->history, v->heap);
  }
  if (found > 0 && v->mode == GC_VERIFY_ABORT) {
    gc_verify_fail_and_abort(&v->reports, -1, v->dot_path, stderr);
  }
  return found;
}

size_t gc_verify_pass_now(gc_verifier *v, unsigned pass, gc_verify_reports *out) {
  gc_verify_run run = {.heap = v->heap,
                       .point = "direct",
                       .out = out,
                       .scratch = v->scratch,
                       .history = &v->history,
                       .snapshot = &v->scratch->snapshot,
                       .mark_record = &v->mark_record};
  for (int b = 0; b < GC_VERIFY_PASS_COUNT; b++) {
    const pass_row *p = &passes[b];
    /* A pass that needs the model belongs to hook points: not called directly. */
    if (gc_verify_pass_mask(p->id) == pass && !(p->needs & GC_VERIFY_NEEDS_MODEL)) {
      return p->run(&run);
    }
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
  pthread_mutex_init(&v->slice_lock, NULL);
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
  pthread_mutex_destroy(&v->slice_lock);
  free(v->dot_path);
  free(v);
}

void gc_verify_set_model(gc_verifier *v, gc_model *m) { v->model = m; }

gc_verify_scratch *gc_verify_scratch_of(gc_verifier *v) { return v->scratch; }

gc_verify_scratch *gc_verify_scratch_create(void) { return calloc(1, sizeof(gc_verify_scratch)); }

void gc_verify_scratch_destroy(gc_verify_scratch *s) {
  if (s == NULL) return;
  gc_verify_scratch_free(s);
  free(s);
}

void gc_verify_use_scratch(gc_verifier *v, gc_verify_scratch *s) {
  gc_verify_scratch_free(&v->own_scratch);
  v->scratch = s != NULL ? s : &v->own_scratch;
  v->scratch->snapshot.taken = 0; /* another heap's, or an earlier verifier's of this one */
  v->scratch->moved.taken = 0;
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
  for (int b = 0; b < GC_VERIFY_PASS_COUNT; b++) {
    if (gc_verify_pass_mask(passes[b].id) == pass) return v->runs[b];
  }
  return 0;
}

int gc_verify_allows_unrooted(gc_verifier *v, gc_value block) {
  return gc_verify_snapshot_allows_unrooted(&v->scratch->snapshot, v->heap, block);
}

int gc_verify_reached_at_mark_start(gc_verifier *v, gc_value block) {
  return gc_verify_snapshot_current(&v->scratch->snapshot, v->heap) &&
         gc_verify_snapshot_reached(&v->scratch->snapshot, block) != NULL;
}
