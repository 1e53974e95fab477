/* The model's checks against the heap at each hook point (model.h says what each point checks). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants/model.h"
#include "invariants/model_graph.h"
#include "invariants/pass.h"

typedef struct mcheck {
  gc_model *m;
  gc_verify_run run;
  gc_heapindex *ix;
  size_t found;
} mcheck;

/* The model path root -> ... -> id, from the last reachability walk. */
static void report_model_path(mcheck *ck, gc_verify_report *r, gc_model_id id) {
  gc_model *m = ck->m;
  gc_mobj *o = &m->objs[id];
  if (o->epoch != m->epoch) {
    snprintf(r->origin, sizeof r->origin, "(unreachable in the model)");
    return;
  }
  size_t count = 0;
  for (gc_model_id at = id; m->objs[at].parent != GC_MODEL_NONE && count <= m->obj_count;
       at = m->objs[at].parent) {
    count++;
  }
  gc_verify_step *steps = calloc(count ? count : 1, sizeof *steps);
  if (steps == NULL) return;
  size_t i = count;
  gc_model_id at = id;
  for (; i > 0 && m->objs[at].parent != GC_MODEL_NONE; at = m->objs[at].parent) {
    gc_mobj *p = &m->objs[m->objs[at].parent];
    gc_verify_step *st = &steps[--i];
    st->block = p->val;
    st->field = m->objs[at].via;
    if (gc_heapindex_read_header(ck->ix, p->val, &st->header)) {
      st->colour = gc_verify_colour_of(m->heap, st->header);
    }
  }
  char origin[160];
  uint32_t via = m->objs[at].via;
  if (m->objs[at].holder != GC_MODEL_NONE) {
    snprintf(origin, sizeof origin, "field %u of model object #%u, which has a finalizer",
             (unsigned)via, (unsigned)m->objs[at].holder);
  } else if (via == GC_MVIA_PINNED) {
    snprintf(origin, sizeof origin, "pinned model object #%u", (unsigned)at);
  } else if (via == GC_MVIA_CONSERVATIVE) {
    snprintf(origin, sizeof origin, "a conservative range word into model object #%u",
             (unsigned)at);
  } else if (via == GC_MVIA_QUEUED) {
    snprintf(origin, sizeof origin, "model object #%u, its finalizer queued", (unsigned)at);
  } else if (via == GC_MVIA_SNAPSHOT) {
    snprintf(origin, sizeof origin,
             "model object #%u, reachable when marking began or allocated since", (unsigned)at);
  } else if (via == GC_MVIA_RUNNING) {
    snprintf(origin, sizeof origin, "model object #%u, its finalizer running", (unsigned)at);
  } else {
    snprintf(origin, sizeof origin, "model root %u (slot %p)", (unsigned)via,
             (void *)m->roots[via].slot);
  }
  gc_verify_report_path(r, origin, steps, count);
  free(steps);
}

static gc_verify_report *violation(mcheck *ck, gc_verify_kind kind, gc_model_id id, const char *fmt,
                                   ...) __attribute__((format(printf, 4, 5)));

static gc_verify_report *violation(mcheck *ck, gc_verify_kind kind, gc_model_id id, const char *fmt,
                                   ...) {
  ck->found++;
  gc_verify_report *r = gc_verify_report_new(&ck->run, kind);
  if (r == NULL) return NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
  if (id != GC_MODEL_NONE) {
    gc_verify_report_block(r, ck->ix, ck->m->objs[id].val);
    report_model_path(ck, r, id);
    gc_verify_report_neighbourhood(r, ck->ix);
  }
  return r;
}

static void flush_pending(mcheck *ck) {
  gc_model *m = ck->m;
  for (size_t i = 0; i < m->pend_count; i++) {
    gc_verify_report *r = violation(ck, m->pend[i].kind, GC_MODEL_NONE, "%s", m->pend[i].what);
    if (r != NULL) gc_verify_report_block(r, ck->ix, m->pend[i].block);
  }
  ck->found += m->pend_dropped;
  m->pend_count = 0;
  m->pend_dropped = 0;
}

/* a[0..n) == b[0..n): one block's fields against what the model says they hold, for every
 * object a check compares (twice a cycle), the check's largest cost. Not instrumented at all, and
 * no memcmp (whose interceptor checks both ranges and, under libFuzzer, records the comparison):
 * `a` is the model's own array of n words, and `b` either the fields of a block whose header (the
 * word before them, in the same slot or large block) check_alive has just read, instrumented, and
 * found to say wsize n, so a freed block is reported there, before this runs; or a run of root
 * slots, which the model's roots are bound to for the whole program (the embedder's storage). */
GC_VERIFY_NOT_INSTRUMENTED static int words_equal(const uintptr_t *a, const uintptr_t *b,
                                                  size_t n) {
  uintptr_t diff = 0;
  for (size_t i = 0; i < n; i++) diff |= a[i] ^ b[i]; /* no early exit: the loop vectorizes */
  return diff == 0;
}

/* What field f of o must hold in the heap. */
static gc_value expected_field(const gc_model *m, const gc_mobj *o, size_t f) {
  uintptr_t w = o->fields[f];
  if (!gc_tag_is_scanned(o->tag) || !gc_model_is_ptr(w)) return w;
  gc_mobj *t = gc_model_obj(m, gc_model_dec_ptr(w));
  return t != NULL ? t->val : 0;
}

/* A reachable object must be a live block with the model's header and contents. */
static void check_alive(mcheck *ck, gc_model_id id) {
  gc_model *m = ck->m;
  gc_mobj *o = &m->objs[id];
  if (o->lost) return;
  const char *dead = NULL;
  gc_header hd = 0;
  gc_loc loc = gc_heapindex_locate_start(ck->ix, o->val);
  if (o->reused) {
    dead = "a later allocation got its address, so the collector freed it";
  } else if (loc.kind != GC_LOC_SLOT && loc.kind != GC_LOC_LARGE) {
    dead = "its memory is no longer a block in use (pool released or large block freed)";
  } else if ((hd = gc_hd_val(o->val)) == 0) {
    dead = "its slot is free (header 0)";
  } else if (gc_hd_colour(hd) == m->heap->colours.garbage) {
    dead = "it is GARBAGE: the collector decided it is dead";
  }
  if (dead != NULL) {
    o->lost = 1;
    violation(ck, GC_VK_MODEL_DEAD, id, "model object #%u is reachable in the model but %s",
              (unsigned)id, dead);
    return;
  }
  if (gc_hd_wsize(hd) != o->wsize || gc_hd_tag(hd) != o->tag) {
    violation(ck, GC_VK_MODEL_CONTENTS, id,
              "model object #%u: the header says wsize %zu tag %u, the model wsize %zu tag %u",
              (unsigned)id, gc_hd_wsize(hd), gc_hd_tag(hd), o->wsize, o->tag);
    return;
  }
  /* What the fields must hold, as words: an unscanned object's model words as they are, a
   * scanned object's image (model_graph.h: equal to the decoded fields while images_exact). One
   * comparison of the whole block; the field by field search below, which decodes each field,
   * names the first difference, and decides alone when the image cannot be trusted. */
  const uintptr_t *words =
      gc_tag_is_scanned(o->tag) ? (m->images_exact ? o->image : NULL) : o->fields;
  if (words != NULL && words_equal(words, gc_fields(o->val), o->wsize)) return;
  for (size_t f = 0; f < o->wsize; f++) {
    gc_value want = expected_field(m, o, f), got = GC_FIELD(o->val, f);
    if (want == got) continue;
    violation(ck, GC_VK_MODEL_CONTENTS, id,
              "model object #%u field %zu holds %#llx; the model says %#llx", (unsigned)id, f,
              (unsigned long long)got, (unsigned long long)want);
    return; /* one report per object */
  }
}

/* Roots [from, to) one by one. */
static void check_roots_range(mcheck *ck, size_t from, size_t to) {
  gc_model *m = ck->m;
  for (size_t r = from; r < to; r++) {
    gc_model_id obj = m->roots[r].obj;
    gc_value want = obj != GC_MODEL_NONE ? m->objs[obj].val : 0, got = *m->roots[r].slot;
    if (want == got) continue;
    gc_verify_report *rep =
        violation(ck, GC_VK_MODEL_ROOT, GC_MODEL_NONE,
                  "model root %zu (slot %p) holds %#llx; the model put %#llx "
                  "(object #%d) there",
                  r, (void *)m->roots[r].slot, (unsigned long long)got, (unsigned long long)want,
                  obj == GC_MODEL_NONE ? -1 : (int)obj);
    if (rep != NULL) gc_verify_report_block(rep, ck->ix, got);
  }
}

/* Runs of roots whose slots are consecutive words (model_graph.h). */
static void compute_root_runs(gc_model *m) {
  size_t n = 0;
  for (size_t r = 0; r < m->root_count; r++) {
    if (r == 0 || m->roots[r].slot != m->roots[r - 1].slot + 1) m->root_runs[n++] = r;
  }
  m->root_runs[n] = m->root_count;
  m->root_run_count = n;
  m->root_runs_valid = 1;
}

/* Every root slot holds what the model put there: a run at a time against root_want, and one by
 * one (decoding each root's object) in a run that differs, or when root_want cannot be trusted. */
static void check_roots(mcheck *ck) {
  gc_model *m = ck->m;
  if (!m->roots_exact) {
    check_roots_range(ck, 0, m->root_count);
    return;
  }
  if (!m->root_runs_valid) compute_root_runs(m);
  for (size_t k = 0; k < m->root_run_count; k++) {
    size_t from = m->root_runs[k], to = m->root_runs[k + 1];
    if (!words_equal(m->roots[from].slot, &m->root_want[from], to - from)) {
      check_roots_range(ck, from, to);
    }
  }
}

/* Every object reachable in the model alive with its contents, every root slot holding its
 * object. Returns gc_model_block_count as it is afterwards (counted in the same loop). */
static size_t check_reachable_and_roots(mcheck *ck) {
  gc_model *m = ck->m;
  gc_model_reach_current(m);
  size_t blocks = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    const gc_mobj *o = &m->objs[id];
    if (o->state == GC_MOBJ_FREE) continue;
    if (o->epoch == m->epoch) check_alive(ck, (gc_model_id)id); /* may set o->lost */
    blocks += (o->state == GC_MOBJ_LIVE && !o->lost) || (o->state == GC_MOBJ_DOOMED && !o->reused);
  }
  check_roots(ck);
  return blocks;
}

/* MARK_START: the finalizers queued by the last cycle have run (outside the collector's finalizer
 * loop: a collection from inside it, a finalizer's own or the one zeal finalizer runs after each
 * finalizer, finds the rest of the queue still queued, gc_finalizer_fn in gc/gc.h), and those
 * that did are ordinary objects from this mark on. The loop's flag is read in the stop that
 * starts the mark: the domain running the loop is parked there or is the one starting it. */
static void settle_finalizers(mcheck *ck) {
  gc_model *m = ck->m;
  if (m->fin_count == 0) return; /* no object has a finalizer state otherwise */
  int loop_running = gc_atomic_load(&m->heap->running_finalizers) != 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state == GC_MOBJ_FREE) continue;
    if (o->fin == GC_MFIN_RAN) {
      o->fin = GC_MFIN_NONE;
      m->fin_count--;
      gc_model_touch(m);
    }
    if (o->fin == GC_MFIN_QUEUED && m->running_depth == 0 && !loop_running) {
      violation(ck, GC_VK_MODEL_FINALIZER_COUNT, (gc_model_id)id,
                "the finalizer of model object #%u, queued by cycle %llu, has not run by the "
                "next cycle's mark",
                (unsigned)id, (unsigned long long)o->fin_cycle + 1);
      o->fin = GC_MFIN_RAN; /* reported; from now on an ordinary object */
      gc_model_touch(m);
    }
  }
}

/* MARK_START: record the snapshot, what the roots reach now (model_graph.h). O(model objects +
 * reachable fields). */
static void record_snapshot(mcheck *ck) {
  gc_model *m = ck->m;
  settle_finalizers(ck);
  if (++m->mark_serial == 0) { /* wrapped: an old kept_mark could look current */
    for (size_t id = 0; id < m->obj_count; id++) m->objs[id].kept_mark = 0;
    m->mark_serial = 1;
  }
  gc_model_reach_current(m);
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state == GC_MOBJ_LIVE && o->epoch == m->epoch) o->kept_mark = m->mark_serial;
  }
  m->marking = 1;
  m->start_cycle = m->heap->cycles;
  m->start_gen = m->gen;
}

/* MARK_DONE: what this cycle keeps, as the epoch marks of one walk: what the roots reach now,
 * plus the snapshot when anything changed since it was taken (else the two are one set), closed
 * under pointer fields. A MARK_DONE with no MARK_START check of its cycle before it (the model
 * attached, or its pass turned on, while a cycle marked) has no snapshot: the roots alone decide,
 * which is the stop-the-world rule. */
static void reach_kept(gc_model *m) {
  gc_model_reach_current(m);
  if (!m->marking || m->start_cycle != m->heap->cycles || m->gen == m->start_gen) return;
  size_t sp = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_LIVE || o->kept_mark != m->mark_serial || o->epoch == m->epoch)
      continue;
    gc_model_reach_visit(m, &sp, (gc_model_id)id, GC_MODEL_NONE, GC_MODEL_NONE, GC_MVIA_SNAPSHOT);
  }
  if (sp > 0) {
    gc_model_reach_drain(m, sp);
    gc_model_touch(m); /* the marks are more than the roots reach: the next check walks again */
  }
}

/* MARK_DONE: an object with a finalizer set that the cycle does not keep is queued and survives
 * (as the collector queues the finalizer blocks it did not mark, INV-FIN-1); whatever else the
 * cycle does not keep must be gone when its sweep ends. */
static void doom_unreachable(mcheck *ck) {
  gc_model *m = ck->m;
  reach_kept(m);
  m->marking = 0;
  if (m->fin_count > 0) {
    size_t sp = 0;
    for (size_t id = 0; id < m->obj_count; id++) {
      gc_mobj *o = &m->objs[id];
      if (o->state != GC_MOBJ_LIVE || o->fin != GC_MFIN_SET || o->epoch == m->epoch) continue;
      o->fin = GC_MFIN_QUEUED;
      o->fin_cycle = m->heap->cycles;
      gc_model_reach_visit(m, &sp, (gc_model_id)id, GC_MODEL_NONE, GC_MODEL_NONE, GC_MVIA_QUEUED);
    }
    if (sp > 0) {
      gc_model_reach_drain(m, sp);
      /* The marks now include what the queued finalizers keep alive, reached in another order
       * than a new walk would: the next check walks again. */
      gc_model_touch(m);
    }
  }
  m->doomed_count = 0;
  m->doomed_cycle = m->heap->cycles;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_LIVE || o->epoch == m->epoch) continue;
    if (!gc_model_grow_array((void **)&m->doomed, &m->doomed_capacity, m->doomed_count + 1,
                             sizeof *m->doomed)) {
      m->images_exact = 0; /* a live unreachable object may keep pointing at a doomed one */
      break;               /* out of memory: the rest are checked next cycle */
    }
    o->state = GC_MOBJ_DOOMED;
    m->doomed[m->doomed_count++] = (gc_model_id)id;
  }
}

/* Does o's block still exist? A doomed object is never reachable, so its memory may be anything:
 * only addresses the heap index vouches for are read. */
static int block_exists(mcheck *ck, const gc_mobj *o) {
  if (o->reused) return 0;
  gc_loc loc = gc_heapindex_locate_start(ck->ix, o->val);
  if (loc.kind == GC_LOC_LARGE) return 1;
  return loc.kind == GC_LOC_SLOT && gc_hd_val(o->val) != 0;
}

/* SWEPT: the doomed are freed and finalized once, then their ids are released. */
static void settle_doomed(mcheck *ck) {
  gc_model *m = ck->m;
  for (size_t i = 0; i < m->doomed_count; i++) {
    gc_model_id id = m->doomed[i];
    gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_DOOMED) continue;
    if (block_exists(ck, o)) {
      violation(ck, GC_VK_MODEL_NOT_FREED, id,
                "model object #%u was unreachable in the model when cycle %llu's marking began "
                "(and no conservative word held it when it ended), and its block is still in the "
                "heap after that cycle's sweep",
                (unsigned)id, (unsigned long long)m->doomed_cycle + 1);
      o->state = GC_MOBJ_LIVE; /* still unreachable: doomed again next cycle */
      m->images_exact = 0;     /* and it may point at doomed objects being released now */
      continue;
    }
    if (o->tag == GC_TAG_CUSTOM && o->finalized != 1) {
      violation(ck, GC_VK_MODEL_FINALIZER_COUNT, id,
                "custom model object #%u was freed and its finalize function ran %u times "
                "(exactly once expected)",
                (unsigned)id, (unsigned)o->finalized);
    }
    gc_model_release_id(m, id);
  }
  m->doomed_count = 0;
}

/* Only a finalize note makes `finalized` non-zero, and this check clears it on every live object
 * it does not skip as lost (freed ids start at zero): with no note since the last check there is
 * nothing to find. */
static void check_finalized_live(mcheck *ck) {
  gc_model *m = ck->m;
  if (m->finalized_notes == 0) return;
  m->finalized_notes = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_LIVE || o->finalized == 0 || o->lost) continue;
    violation(ck, GC_VK_MODEL_FINALIZER_COUNT, (gc_model_id)id,
              "the finalize function of model object #%u ran %u time(s), but its block is "
              "alive",
              (unsigned)id, (unsigned)o->finalized);
    o->finalized = 0; /* reported; do not repeat every cycle */
  }
}

static void check_live_count(mcheck *ck, size_t model_blocks) {
  gc_model *m = ck->m;
  gc_heap_stats s;
  gc_heap_sum_stats(m->heap, &s);
  size_t heap_blocks = s.pool_live_blocks + s.large_blocks;
  if (heap_blocks == model_blocks) return;
  gc_verify_report *r = violation(ck, GC_VK_MODEL_LIVE_COUNT, GC_MODEL_NONE,
                                  "the heap has %zu live blocks (pool %zu + large %zu); the "
                                  "model holds %zu",
                                  heap_blocks, s.pool_live_blocks, s.large_blocks, model_blocks);
  if (r != NULL) gc_verify_report_where(r, "the heap's statistics after sweeping");
}

size_t gc_model_check(gc_model *m, gc_hook_point point, gc_verify_reports *out) {
  if (point == GC_HOOK_MARK_SLICE) return 0; /* no index while the world runs (below) */
  gc_heapindex_build(&m->index, m->heap);
  return gc_model_check_with_index(m, point, out, &m->index);
}

size_t gc_verify_model_run(const gc_verify_run *run) {
  /* The verifier runs it only with a model, at a hook point, the heap index built (gc/passes.h). */
  return gc_model_check_with_index(run->model, run->hook, run->out, &run->scratch->index);
}

size_t gc_model_check_with_index(gc_model *m, gc_hook_point point, gc_verify_reports *out,
                                 gc_heapindex *ix) {
  /* A mark slice: the world runs and other domains mutate, so the model has nothing to compare
   * until the termination stop (the satb pass checks the slices); pending reports wait too. */
  if (point == GC_HOOK_MARK_SLICE) return 0;
  mcheck ck;
  memset(&ck, 0, sizeof ck);
  ck.m = m;
  ck.run = (gc_verify_run){.heap = m->heap, .point = gc_verify_point_name(point), .out = out};
  ck.ix = ix;
  flush_pending(&ck);
  switch (point) {
    case GC_HOOK_MARK_START:
      /* Left over from a cycle whose SWEPT check did not run: that sweep is over (INV-COL-1),
       * so they can be settled now. */
      if (m->doomed_count > 0) settle_doomed(&ck);
      record_snapshot(&ck);
      break;
    case GC_HOOK_MARK_SLICE:
      break; /* returned above */
    /* A compaction: every domain swept first (so the doomed are settled), and at its end the
     * model follows the moves (INV-COMPACT-4) and compares as at a sweep's end. */
    case GC_HOOK_COMPACT_START:
      if (m->doomed_count > 0) settle_doomed(&ck);
      break;
    case GC_HOOK_COMPACTED: {
      gc_model_follow_compaction(m);
      flush_pending(&ck); /* a block moved over a live one */
      size_t model_blocks = check_reachable_and_roots(&ck);
      check_live_count(&ck, model_blocks);
      break;
    }
    case GC_HOOK_MARK_DONE:
      if (m->doomed_count > 0) settle_doomed(&ck);
      doom_unreachable(&ck);
      break;
    case GC_HOOK_CYCLED: check_reachable_and_roots(&ck); break;
    case GC_HOOK_SWEPT: {
      settle_doomed(&ck);
      check_finalized_live(&ck);
      size_t model_blocks = check_reachable_and_roots(&ck);
      check_live_count(&ck, model_blocks);
      break;
    }
  }
  return ck.found;
}
