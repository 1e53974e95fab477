/* The model's shadow graph: objects, their fields, roots, pins, finalizers, and reachability.
 * What it checks, and the driver's contract: model.h. Encoding and states: model_graph.h. */
#include "invariants/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants/model_graph.h"

/* ---- Small helpers ------------------------------------------------------------------------- */

int gc_model_grow_array(void **items, size_t *capacity, size_t need, size_t item_bsize) {
  if (need <= *capacity) return 1;
  size_t n = *capacity ? *capacity : 64;
  while (n < need) n *= 2;
  void *p = realloc(*items, n * item_bsize);
  if (p == NULL) return 0;
  *items = p;
  *capacity = n;
  return 1;
}

void gc_model_add_pending(gc_model *m, gc_verify_kind kind, gc_value block, const char *fmt, ...) {
  if (m->pend_count == GC_MPENDING_MAX) {
    m->pend_dropped++;
    return;
  }
  gc_mpending *p = &m->pend[m->pend_count++];
  p->kind = kind;
  p->block = block;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->what, sizeof p->what, fmt, ap);
  va_end(ap);
}

/* ---- Creation ------------------------------------------------------------------------------ */

/* Zero an object's record, keeping its field buffer. */
static void clear_obj(gc_mobj *o) {
  uintptr_t *fields = o->fields;
  size_t cap = o->fields_cap;
  memset(o, 0, sizeof *o);
  o->fields = fields;
  o->fields_cap = cap;
}

static void scan_own_roots(gc_visit_fn visit, void *ctx, void *user) {
  gc_model *m = user;
  if (m->own_bound == 0) return; /* every root lives in a driver's slot, which the heap scans */
  for (size_t r = 0; r < m->root_count; r++) {
    if (m->roots[r].slot == &m->own_slots[r]) visit(ctx, &m->own_slots[r]);
  }
}

gc_model *gc_model_create(gc_heap *heap, size_t root_count) {
  gc_model *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->root_count = root_count;
  m->roots = calloc(root_count ? root_count : 1, sizeof *m->roots);
  m->own_slots = calloc(root_count ? root_count : 1, sizeof *m->own_slots);
  m->root_want = calloc(root_count ? root_count : 1, sizeof *m->root_want);
  m->root_runs = calloc(root_count + 1, sizeof *m->root_runs);
  pthread_mutex_init(&m->note_lock, NULL);
  if (m->roots == NULL || m->own_slots == NULL || m->root_want == NULL || m->root_runs == NULL ||
      !gc_addrmap_init(&m->by_val, 256) ||
      /* The doomed list exists from the start, not from the first cycle that dooms something:
       * whether it has room must not depend on the programs a kept model saw before (the
       * corrupt op's model.not-freed plants into its first entry). */
      !gc_model_grow_array((void **)&m->doomed, &m->doomed_capacity, 1, sizeof *m->doomed) ||
      !gc_model_attach(m, heap)) {
    pthread_mutex_destroy(&m->note_lock);
    gc_addrmap_free(&m->by_val);
    free(m->doomed);
    free(m->roots);
    free(m->own_slots);
    free(m->root_want);
    free(m->root_runs);
    free(m);
    return NULL;
  }
  return m;
}

/* No id is in use any more, nothing is doomed or pending (new_id clears a record when it hands
 * it out again; the field buffers stay, for the ids of the next attach). */
static void forget_objects(gc_model *m) {
  m->obj_count = 0;
  m->free_count = 0;
  m->doomed_count = 0;
  m->pend_count = 0;
  m->pend_dropped = 0;
}

static int attach(gc_model *m, gc_heap *heap, int keep_bindings);

int gc_model_attach(gc_model *m, gc_heap *heap) { return attach(m, heap, 0); }
int gc_model_reattach(gc_model *m, gc_heap *heap) { return attach(m, heap, 1); }

static int attach(gc_model *m, gc_heap *heap, int keep_bindings) {
  if (m->attached) return 0;
  /* As gc_model_create leaves it: no object, every root empty and in the model's own slot. */
  m->heap = heap;
  forget_objects(m);
  m->doomed_cycle = 0;
  m->pinned_count = 0;
  m->fin_count = 0;
  m->finalized_notes = 0;
  m->reach_valid = 0;
  m->reach_count = 0;
  m->running_depth = 0;
  m->dom = gc_main_domain(heap);
  m->mark_serial = 0;
  m->marking = 0;
  m->fin_callback = NULL;
  m->fin_callback_user = NULL;
  m->compactions_followed = heap->compact.count;
  gc_model_touch(m);
  if (!gc_addrmap_reset(&m->by_val, 256)) return 0;
  if (keep_bindings) {
    for (size_t r = 0; r < m->root_count; r++) {
      *m->roots[r].slot = 0;
      m->root_want[r] = 0;
      m->roots[r].obj = GC_MODEL_NONE;
      m->roots[r].retired = 0;
    }
  } else {
    for (size_t r = 0; r < m->root_count; r++) {
      m->own_slots[r] = 0;
      m->root_want[r] = 0;
      m->roots[r] = (gc_mroot){GC_MODEL_NONE, &m->own_slots[r], 0};
    }
    m->own_bound = m->root_count;
    m->root_runs_valid = 0;
  }
  m->roots_exact = 1;
  m->images_exact = 1;
  if (gc_root_scanner_add(heap, scan_own_roots, m) != GC_OK) return 0;
  m->attached = 1;
  return 1;
}

void gc_model_detach(gc_model *m) {
  if (m == NULL || !m->attached) return;
  m->attached = 0;
  gc_root_scanner_remove(m->heap, scan_own_roots, m);
  /* Finalizers set through the model name it as their user data: take them back. (A queued one
   * cannot be recalled: no collection may run between this call and gc_heap_destroy.) */
  if (m->fin_count > 0) {
    for (size_t id = 0; id < m->obj_count; id++) {
      gc_mobj *o = &m->objs[id];
      if (o->state != GC_MOBJ_FREE && o->fin == GC_MFIN_SET) gc_finalizer_clear(m->heap, o->val);
    }
  }
  /* The heap outlives the model and will finalize these blocks: clear their model word so the
   * finalizer finds no model. Only blocks the index confirms are still ours are written. */
  int indexed = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state == GC_MOBJ_FREE || o->reused || o->tag != GC_TAG_CUSTOM) continue;
    if (!indexed) {
      gc_heapindex_build(&m->index, m->heap);
      indexed = 1;
    }
    gc_header hd;
    if (!gc_heapindex_read_header(&m->index, o->val, &hd) || hd == 0 ||
        gc_hd_tag(hd) != GC_TAG_CUSTOM || gc_hd_wsize(hd) < 2) {
      continue;
    }
    if (GC_FIELD(o->val, 1) == (gc_value)(uintptr_t)m) GC_FIELD(o->val, 1) = 0;
  }
  for (size_t r = 0; r < m->range_count; r++) gc_conservative_remove(m->heap, m->ranges[r].words);
  m->range_count = 0;
  forget_objects(m);
  m->heap = NULL;
}

void gc_model_destroy(gc_model *m) {
  if (m == NULL) return;
  gc_model_detach(m);
  for (size_t id = 0; id < m->obj_high; id++) free(m->objs[id].fields);
  free(m->objs);
  free(m->free_ids);
  gc_addrmap_free(&m->by_val);
  free(m->roots);
  free(m->own_slots);
  free(m->root_want);
  free(m->root_runs);
  free(m->doomed);
  free(m->stack);
  free(m->spans);
  gc_heapindex_free(&m->index);
  pthread_mutex_destroy(&m->note_lock);
  free(m);
}

/* ---- Allocation ---------------------------------------------------------------------------- */

static gc_model_id new_id(gc_model *m) {
  if (m->free_count > 0) {
    gc_model_id id = m->free_ids[--m->free_count];
    clear_obj(&m->objs[id]);
    return id;
  }
  if (m->obj_count >= GC_MODEL_NONE - 1) return GC_MODEL_NONE;
  if (!gc_model_grow_array((void **)&m->objs, &m->obj_capacity, m->obj_count + 1,
                           sizeof *m->objs)) {
    return GC_MODEL_NONE;
  }
  gc_mobj *o = &m->objs[m->obj_count];
  if (m->obj_count < m->obj_high) {
    clear_obj(o); /* a slot of an earlier attach: its buffer is ours */
  } else {
    memset(o, 0, sizeof *o);
    m->obj_high = m->obj_count + 1;
  }
  return (gc_model_id)m->obj_count++;
}

void gc_model_release_id(gc_model *m, gc_model_id id) {
  gc_mobj *o = &m->objs[id];
  /* A released object is never one the last walk reached (only doomed objects are released, and
   * new ones whose recording failed), so the cached walk stays exact; if it ever were, the
   * cache is dropped. */
  if (m->reach_valid && o->state != GC_MOBJ_FREE && o->epoch == m->epoch) gc_model_touch(m);
  if (o->state != GC_MOBJ_FREE) {
    if (o->pinned) m->pinned_count--;
    if (o->fin != GC_MFIN_NONE) m->fin_count--;
    if (o->rooted) m->roots_exact = 0; /* never, unless the model's own assumptions broke */
  }
  uint64_t owner;
  if (gc_addrmap_get(&m->by_val, o->val, &owner) && owner == id)
    gc_addrmap_remove(&m->by_val, o->val);
  clear_obj(o);
  o->state = GC_MOBJ_FREE;
  if (gc_model_grow_array((void **)&m->free_ids, &m->free_capacity, m->free_count + 1,
                          sizeof *m->free_ids)) {
    m->free_ids[m->free_count++] = id;
  }
}

/* Record the block v that gc_alloc just returned. */
static gc_model_id record(gc_model *m, gc_value v, size_t wsize, unsigned tag) {
  gc_model_id id = new_id(m);
  if (id == GC_MODEL_NONE) return GC_MODEL_NONE;
  gc_mobj *o = &m->objs[id];
  /* Scanned: NULL; raw: zero, as gc_alloc does. A scanned object's image follows its fields. */
  size_t words = gc_tag_is_scanned(tag) ? 2 * wsize : wsize;
  if (o->fields_cap >= words) {
    memset(o->fields, 0, words * sizeof *o->fields);
  } else {
    free(o->fields);
    o->fields = calloc(words, sizeof *o->fields);
    o->fields_cap = o->fields != NULL ? words : 0;
  }
  if (o->fields == NULL) {
    gc_model_release_id(m, id);
    return GC_MODEL_NONE;
  }
  gc_model_touch(m); /* a new object; and its id may be one a stale field still names */
  o->val = v;
  o->wsize = wsize;
  o->tag = tag;
  o->image = gc_tag_is_scanned(tag) ? o->fields + wsize : NULL;
  o->state = GC_MOBJ_LIVE;
  if (m->marking) o->kept_mark = m->mark_serial; /* born MARKED: this cycle keeps it */
  uint64_t prev;
  if (gc_addrmap_get(&m->by_val, v, &prev)) {
    /* The address came back from the allocator: the old block there was freed. That is right for
     * a doomed object, and a collector bug for a live one. */
    gc_mobj *old = &m->objs[prev];
    old->reused = 1;
    if (old->state == GC_MOBJ_LIVE && !old->lost) {
      old->lost = 1;
      gc_model_add_pending(
          m, GC_VK_MODEL_DEAD, v,
          "model object #%u was freed while the model holds it alive: a later allocation "
          "(object #%u) got its address",
          (unsigned)prev, (unsigned)id);
    }
  }
  if (!gc_addrmap_put(&m->by_val, v, id)) {
    gc_model_release_id(m, id);
    return GC_MODEL_NONE;
  }
  return id;
}

gc_model_id gc_model_alloc(gc_model *m, gc_domain *d, size_t wsize, unsigned tag) {
  gc_value v = gc_alloc(d, wsize, tag);
  if (v == 0) return GC_MODEL_NONE;
  return record(m, v, wsize, tag);
}

static void model_finalize(gc_value block) {
  gc_model *m = (gc_model *)(uintptr_t)GC_FIELD(block, 1);
  if (m != NULL) gc_model_note_finalized(m, block);
}

gc_model_id gc_model_alloc_custom(gc_model *m, gc_domain *d, size_t data_wsize) {
  if (data_wsize < 1) return GC_MODEL_NONE;
  gc_value v = gc_alloc_custom(d, data_wsize, model_finalize);
  if (v == 0) return GC_MODEL_NONE;
  GC_FIELD(v, 1) = (gc_value)(uintptr_t)m;
  gc_model_id id = record(m, v, data_wsize + 1, GC_TAG_CUSTOM);
  if (id == GC_MODEL_NONE) {
    GC_FIELD(v, 1) = 0; /* unrecorded: its finalizer must not look for the model */
    return GC_MODEL_NONE;
  }
  gc_finalize_fn fn = model_finalize;
  memcpy(&m->objs[id].fields[0], &fn, sizeof fn);
  m->objs[id].fields[1] = (uintptr_t)m;
  return id;
}

/* ---- Mutation ------------------------------------------------------------------------------ */

void gc_model_set_domain(gc_model *m, gc_domain *d) { m->dom = d; }

static gc_mobj *field_target(gc_model *m, gc_model_id obj, size_t field, int scanned) {
  gc_mobj *o = gc_model_live_obj(m, obj);
  if (o == NULL || field >= o->wsize || gc_tag_is_scanned(o->tag) != scanned) return NULL;
  return o;
}

int gc_model_store_ptr(gc_model *m, gc_model_id obj, size_t field, gc_model_id target) {
  if (target == GC_MODEL_NONE) return gc_model_store_null(m, obj, field);
  gc_mobj *o = field_target(m, obj, field, 1);
  gc_mobj *t = gc_model_live_obj(m, target);
  if (o == NULL || t == NULL) return 0;
  gc_store(m->dom, o->val, field, t->val);
  o->fields[field] = gc_model_enc_ptr(target);
  o->image[field] = t->val;
  gc_model_touch(m);
  return 1;
}

int gc_model_store_null(gc_model *m, gc_model_id obj, size_t field) {
  gc_mobj *o = field_target(m, obj, field, 1);
  if (o == NULL) return 0;
  gc_store(m->dom, o->val, field, 0);
  o->fields[field] = 0;
  o->image[field] = 0;
  gc_model_touch(m);
  return 1;
}

int gc_model_store_imm(gc_model *m, gc_model_id obj, size_t field, intptr_t n) {
  gc_mobj *o = field_target(m, obj, field, 1);
  if (o == NULL) return 0;
  gc_store(m->dom, o->val, field, gc_val_int(n));
  o->fields[field] = gc_val_int(n);
  o->image[field] = gc_val_int(n);
  gc_model_touch(m);
  return 1;
}

int gc_model_store_raw(gc_model *m, gc_model_id obj, size_t field, uintptr_t word) {
  gc_mobj *o = field_target(m, obj, field, 0);
  if (o == NULL || (o->tag == GC_TAG_CUSTOM && field < 2)) return 0;
  GC_FIELD(o->val, field) = word; /* no barrier: the collector never reads unscanned fields */
  o->fields[field] = word;        /* an unscanned object: reachability does not read its fields */
  return 1;
}

gc_model_id gc_model_load(const gc_model *m, gc_model_id obj, size_t field) {
  gc_mobj *o = gc_model_obj(m, obj);
  if (o == NULL || field >= o->wsize || !gc_tag_is_scanned(o->tag)) return GC_MODEL_NONE;
  return gc_model_is_ptr(o->fields[field]) ? gc_model_dec_ptr(o->fields[field]) : GC_MODEL_NONE;
}

/* ---- Roots and pins ------------------------------------------------------------------------ */

size_t gc_model_root_count(const gc_model *m) { return m->root_count; }

int gc_model_root_set(gc_model *m, size_t root, gc_model_id obj) {
  if (root >= m->root_count || m->roots[root].retired) return 0;
  gc_value v = 0;
  if (obj != GC_MODEL_NONE) {
    gc_mobj *o = gc_model_live_obj(m, obj);
    if (o == NULL) return 0;
    v = o->val;
  }
  *m->roots[root].slot = v;
  m->root_want[root] = v;
  gc_model_id old = m->roots[root].obj;
  if (old != obj) {
    gc_model_touch(m);
    if (old != GC_MODEL_NONE && old < m->obj_count && m->objs[old].rooted > 0)
      m->objs[old].rooted--;
    if (obj != GC_MODEL_NONE) m->objs[obj].rooted++;
  }
  m->roots[root].obj = obj;
  return 1;
}

void gc_model_root_retire(gc_model *m, size_t root) {
  if (root >= m->root_count) return;
  gc_model_root_clear(m, root);
  m->roots[root].retired = 1;
}

gc_model_id gc_model_root_get(const gc_model *m, size_t root) {
  return root < m->root_count ? m->roots[root].obj : GC_MODEL_NONE;
}

int gc_model_root_bind(gc_model *m, size_t root, gc_value *slot) {
  if (root >= m->root_count) return 0;
  gc_value *to = slot != NULL ? slot : &m->own_slots[root];
  gc_value *from = m->roots[root].slot;
  *to = *from;
  if (from == &m->own_slots[root] && to != from) {
    *from = 0; /* no longer scanned */
    m->own_bound--;
  } else if (from != &m->own_slots[root] && to == &m->own_slots[root]) {
    m->own_bound++;
  }
  m->roots[root].slot = to;
  m->root_runs_valid = 0;
  return 1;
}

int gc_model_pin(gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_live_obj(m, obj);
  if (o == NULL || gc_pin(m->heap, o->val) != GC_OK) return 0;
  if (!o->pinned) m->pinned_count++;
  o->pinned = 1;
  gc_model_touch(m);
  return 1;
}

int gc_model_unpin(gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_live_obj(m, obj);
  if (o == NULL || !o->pinned || gc_unpin(m->heap, o->val) != GC_OK) return 0;
  o->pinned = 0;
  m->pinned_count--;
  gc_model_touch(m);
  return 1;
}

/* ---- Go-style finalizers ------------------------------------------------------------------- */

/* The model's Go-style finalizer: QUEUED -> RUNNING (a root meanwhile), the resurrection, the
 * driver's callback for a finalizer with a tag, then RAN unless the callback set a finalizer on
 * the object again (SET: re-armed). */
static void model_go_finalizer(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  gc_model *m = user;
  uint64_t id;
  if (!gc_addrmap_get(&m->by_val, block, &id)) {
    gc_model_add_pending(m, GC_VK_MODEL_FINALIZER_COUNT, block,
                         "a finalizer ran on a block the model does not know");
    return;
  }
  gc_mobj *o = &m->objs[id];
  if (o->fin == GC_MFIN_QUEUED) {
    o->fin = GC_MFIN_RUNNING;
    gc_model_touch(m);
    if (o->revive_root != GC_MNO_ROOT) gc_model_root_set(m, o->revive_root, (gc_model_id)id);
    uint64_t tag = o->fin_tag;
    int pushed = m->running_depth < GC_MRUNNING_MAX;
    if (pushed) m->running[m->running_depth++] = (gc_model_id)id;
    if (tag != 0 && m->fin_callback != NULL)
      m->fin_callback(m->fin_callback_user, (gc_model_id)id, tag);
    if (pushed) m->running_depth--;
    o = &m->objs[id]; /* the callback may have grown the table */
    if (o->fin == GC_MFIN_RUNNING) o->fin = GC_MFIN_RAN;
    gc_model_touch(m);
    return;
  }
  gc_model_add_pending(m, GC_VK_MODEL_FINALIZER_COUNT, block,
                       "the finalizer of model object #%u ran although %s", (unsigned)id,
                       o->fin == GC_MFIN_RAN       ? "it had already run (twice for one queueing)"
                       : o->fin == GC_MFIN_RUNNING ? "it is running now (it ran inside itself)"
                       : o->fin == GC_MFIN_SET
                           ? "the object was never found unreachable (not queued)"
                           : "the object has no finalizer");
}

static int finalizer_set(gc_model *m, gc_model_id obj, size_t root, uint64_t tag) {
  gc_mobj *o = gc_model_live_obj(m, obj);
  if (o == NULL || o->fin == GC_MFIN_QUEUED) return 0; /* INV-FIN-1: one record per block */
  if (root != GC_MODEL_NO_ROOT && root >= m->root_count) return 0;
  if (gc_finalizer_set(m->heap, o->val, model_go_finalizer, m) != GC_OK) return 0;
  if (o->fin == GC_MFIN_NONE) m->fin_count++;
  o->fin = GC_MFIN_SET; /* from RUNNING too: re-armed by its own finalizer */
  o->revive_root = root == GC_MODEL_NO_ROOT ? GC_MNO_ROOT : (uint32_t)root;
  o->fin_tag = tag;
  gc_model_touch(m);
  return 1;
}

int gc_model_finalizer_set_reviving(gc_model *m, gc_model_id obj, size_t root) {
  return finalizer_set(m, obj, root, 0);
}

int gc_model_finalizer_set_calling(gc_model *m, gc_model_id obj, uint64_t tag) {
  return finalizer_set(m, obj, GC_MODEL_NO_ROOT, tag);
}

void gc_model_set_fin_callback(gc_model *m, gc_model_fin_callback fn, void *user) {
  m->fin_callback = fn;
  m->fin_callback_user = user;
}

gc_model_id gc_model_fin_running(const gc_model *m) {
  return m->running_depth > 0 ? m->running[m->running_depth - 1] : GC_MODEL_NONE;
}

int gc_model_finalizer_set(gc_model *m, gc_model_id obj) {
  return gc_model_finalizer_set_reviving(m, obj, GC_MODEL_NO_ROOT);
}

/* ---- Conservative roots -------------------------------------------------------------------- */

int gc_model_range_add(gc_model *m, uintptr_t *words, size_t count) {
  if (m->range_count == GC_MRANGES_MAX) return 0;
  if (gc_conservative_add(m->heap, words, count * sizeof *words) != GC_OK) return 0;
  m->ranges[m->range_count++] = (gc_mrange){words, count};
  gc_model_touch(m);
  return 1;
}

void gc_model_range_store(gc_model *m, size_t range, size_t index, uintptr_t word) {
  if (range >= m->range_count || index >= m->ranges[range].count) return;
  m->ranges[range].words[index] = word;
  gc_model_touch(m);
}

static int span_order(const void *a, const void *b) {
  uintptr_t x = ((const gc_mspan *)a)->lo, y = ((const gc_mspan *)b)->lo;
  return (x > y) - (x < y);
}

/* Visit the object each non-zero range word falls in. The spans are every live object's block
 * (header to last field), sorted; the model's own addresses, so a collector that resolves a
 * word wrongly (a free slot, wastage, one past the end, the wrong neighbour) disagrees with it. */
static void visit_conservative(gc_model *m, size_t *sp) {
  int any = 0;
  for (size_t r = 0; r < m->range_count && !any; r++) {
    for (size_t k = 0; k < m->ranges[r].count; k++) any |= m->ranges[r].words[k] != 0;
  }
  if (!any) return;
  if (!gc_model_grow_array((void **)&m->spans, &m->span_capacity, m->obj_count ? m->obj_count : 1,
                           sizeof *m->spans)) {
    m->reach_incomplete = 1;
    return;
  }
  size_t n = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    const gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_LIVE || o->lost) continue;
    m->spans[n++] =
        (gc_mspan){o->val - GC_WORD_BSIZE, o->val + o->wsize * GC_WORD_BSIZE, (gc_model_id)id};
  }
  qsort(m->spans, n, sizeof *m->spans, span_order);
  for (size_t r = 0; r < m->range_count; r++) {
    for (size_t k = 0; k < m->ranges[r].count; k++) {
      uintptr_t w = m->ranges[r].words[k];
      size_t lo = 0, hi = n; /* the last span starting at or before w */
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->spans[mid].lo <= w)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo > 0 && w < m->spans[lo - 1].hi) {
        gc_model_reach_visit(m, sp, m->spans[lo - 1].id, GC_MODEL_NONE, GC_MODEL_NONE,
                             GC_MVIA_CONSERVATIVE);
      }
    }
  }
}

int gc_model_finalizer_clear(gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_live_obj(m, obj);
  if (o == NULL || o->fin != GC_MFIN_SET || gc_finalizer_clear(m->heap, o->val) != GC_OK) return 0;
  o->fin = GC_MFIN_NONE;
  m->fin_count--;
  gc_model_touch(m);
  return 1;
}

/* ---- Queries ------------------------------------------------------------------------------- */

gc_value gc_model_value(const gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_obj(m, obj);
  return o != NULL ? o->val : 0;
}

gc_model_id gc_model_id_of(const gc_model *m, gc_value v) {
  uint64_t id;
  return gc_addrmap_get(&m->by_val, v, &id) ? (gc_model_id)id : GC_MODEL_NONE;
}

size_t gc_model_wsize(const gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_obj(m, obj);
  return o != NULL ? o->wsize : 0;
}

unsigned gc_model_tag(const gc_model *m, gc_model_id obj) {
  gc_mobj *o = gc_model_obj(m, obj);
  return o != NULL ? o->tag : 0;
}

int gc_model_is_live(const gc_model *m, gc_model_id obj) {
  return gc_model_live_obj(m, obj) != NULL;
}

size_t gc_model_block_count(const gc_model *m) {
  size_t n = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    const gc_mobj *o = &m->objs[id];
    n += (o->state == GC_MOBJ_LIVE && !o->lost) || (o->state == GC_MOBJ_DOOMED && !o->reused);
  }
  return n;
}

/* ---- Reachability -------------------------------------------------------------------------- */

int gc_model_reach_visit(gc_model *m, size_t *sp, gc_model_id id, gc_model_id parent,
                         gc_model_id holder, uint32_t via) {
  gc_mobj *o = gc_model_obj(m, id);
  if (o == NULL || o->epoch == m->epoch) return 1;
  o->epoch = m->epoch;
  o->parent = parent;
  o->holder = holder;
  o->via = via;
  if (!gc_model_grow_array((void **)&m->stack, &m->stack_capacity, *sp + 1, sizeof *m->stack)) {
    m->reach_incomplete = 1; /* this walk is not to be reused */
    m->images_exact = 0; /* a reachable object may be doomed, and its referrers' images go stale */
    return 0;
  }
  m->stack[(*sp)++] = id;
  return 1;
}

/* The first index >= f of a pointer in the encoded fields[0..n), or n. Not instrumented at all:
 * its coverage counters were most of the cost of a walk, and an address check per field most of
 * the rest (a large object has up to 1,151). The fields are the model's own array, allocated with
 * the object for its wsize n (record). (gc_model_is_ptr spelled out: clang inlines no function
 * into one whose sanitizer attributes differ.) */
GC_VERIFY_NOT_INSTRUMENTED static size_t next_ptr_field(const uintptr_t *fields, size_t f,
                                                        size_t n) {
  while (f < n && (fields[f] == 0 || (fields[f] & 1u) != 0)) f++;
  return f;
}

/* Everything reachable from what is on the stack. */
size_t gc_model_reach_drain(gc_model *m, size_t sp) {
  size_t count = 0;
  while (sp > 0) {
    gc_model_id id = m->stack[--sp];
    count++;
    gc_mobj *o = &m->objs[id];
    if (!gc_tag_is_scanned(o->tag)) continue;
    for (size_t f = next_ptr_field(o->fields, 0, o->wsize); f < o->wsize;
         f = next_ptr_field(o->fields, f + 1, o->wsize)) {
      gc_model_reach_visit(m, &sp, gc_model_dec_ptr(o->fields[f]), id, GC_MODEL_NONE, (uint32_t)f);
    }
  }
  return count;
}

/* Mark every object reachable from the model's roots with a new epoch, recording how each was
 * reached (for report paths); returns how many. The roots are the collector's: root slots,
 * conservative range words, the objects whose finalizers are running, pinned objects, objects
 * whose finalizer is queued, and the fields of objects whose finalizer is set (INV-FIN-1) but not
 * those objects themselves. */
size_t gc_model_reach_all(gc_model *m) {
  if (++m->epoch == 0) { /* wrapped: old marks could look current */
    for (size_t id = 0; id < m->obj_count; id++) m->objs[id].epoch = 0;
    m->epoch = 1;
  }
  size_t sp = 0;
  m->reach_incomplete = 0;
  for (size_t r = 0; r < m->root_count; r++) {
    gc_model_id obj = m->roots[r].obj;
    if (obj != GC_MODEL_NONE)
      gc_model_reach_visit(m, &sp, obj, GC_MODEL_NONE, GC_MODEL_NONE, (uint32_t)r);
  }
  visit_conservative(m, &sp);
  for (size_t k = 0; k < m->running_depth; k++) {
    gc_model_reach_visit(m, &sp, m->running[k], GC_MODEL_NONE, GC_MODEL_NONE, GC_MVIA_RUNNING);
  }
  /* Pinned objects and finalizer roots, when there are any (the counts say so exactly). */
  for (size_t id = 0; (m->pinned_count > 0 || m->fin_count > 0) && id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state != GC_MOBJ_LIVE) continue;
    if (o->pinned)
      gc_model_reach_visit(m, &sp, (gc_model_id)id, GC_MODEL_NONE, GC_MODEL_NONE, GC_MVIA_PINNED);
    if (o->fin == GC_MFIN_QUEUED) {
      gc_model_reach_visit(m, &sp, (gc_model_id)id, GC_MODEL_NONE, GC_MODEL_NONE, GC_MVIA_QUEUED);
    }
    if (o->fin == GC_MFIN_SET && gc_tag_is_scanned(o->tag)) {
      for (size_t f = 0; f < o->wsize; f++) {
        if (gc_model_is_ptr(o->fields[f])) {
          gc_model_reach_visit(m, &sp, gc_model_dec_ptr(o->fields[f]), GC_MODEL_NONE,
                               (gc_model_id)id, (uint32_t)f);
        }
      }
    }
  }
  m->reach_count = gc_model_reach_drain(m, sp);
  m->reach_gen = m->gen;
  m->reach_valid = !m->reach_incomplete;
  return m->reach_count;
}

size_t gc_model_reach_current(gc_model *m) {
  if (m->reach_valid && m->reach_gen == m->gen) return m->reach_count;
  return gc_model_reach_all(m);
}

size_t gc_model_reachable_count(gc_model *m) { return gc_model_reach_current(m); }

/* ---- Compaction ---------------------------------------------------------------------------- */

/* INV-COMPACT-4 (gc/heap.h): inside GC_HOOK_COMPACTED the collector's table of moves answers
 * where each moved block went. The model's own addresses follow: each object whose block moved
 * (the object its old address belongs to, by_val), the images (a pointer field's expected word is
 * its target's block), the roots' expected words and the pending reports' blocks. Conservative
 * words are not touched: the collector does not update them either (a word naming a block keeps
 * it in place, and a word into an evacuated pool named no block), and the next walk resolves them
 * against the new addresses, so a word into a free slot a block moved into keeps that block, as
 * the collector's scan does. Idempotent per compaction. Cost: O(objects + scanned fields) map and
 * table lookups (each O(log moved blocks)), only when a compaction ran. */
void gc_model_follow_compaction(gc_model *m) {
  gc_heap *heap = m->heap;
  if (heap == NULL || m->compactions_followed == heap->compact.count) return;
  m->compactions_followed = heap->compact.count;
  if (heap->compact.forwarded_count == 0) return;
  gc_model_touch(m); /* addresses changed: the spans conservative words resolve through too */
  /* First every moved object leaves its old address, then takes its new one: an address one
   * object left may be where another arrives. `moved_to` keeps the new address meanwhile. */
  size_t moved = 0;
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    o->moved_to = 0;
    if (o->state == GC_MOBJ_FREE) continue;
    uint64_t owner;
    if (!gc_addrmap_get(&m->by_val, o->val, &owner) || owner != id) continue;
    gc_value to = gc_compact_forwarded(heap, o->val);
    if (to == o->val) continue;
    gc_addrmap_remove(&m->by_val, o->val);
    o->moved_to = to;
    moved++;
  }
  for (size_t id = 0; moved > 0 && id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->moved_to == 0) continue;
    uint64_t prev;
    if (gc_addrmap_get(&m->by_val, o->moved_to, &prev)) {
      /* A block moved into the slot of an object the model has: that block was freed (right
       * for a doomed one, whose sweep is over), or the collector moved a block over a live one. */
      gc_mobj *old = &m->objs[prev];
      old->reused = 1;
      if (old->state == GC_MOBJ_LIVE && !old->lost) {
        old->lost = 1;
        gc_model_add_pending(m, GC_VK_MODEL_DEAD, o->moved_to,
                             "model object #%u was overwritten by a compaction: object #%u "
                             "moved into its block",
                             (unsigned)prev, (unsigned)id);
      }
    }
    o->val = o->moved_to;
    o->moved_to = 0;
    if (!gc_addrmap_put(&m->by_val, o->val, id)) m->images_exact = 0;
  }
  for (size_t id = 0; id < m->obj_count; id++) {
    gc_mobj *o = &m->objs[id];
    if (o->state == GC_MOBJ_FREE || o->image == NULL) continue;
    for (size_t f = 0; f < o->wsize; f++) {
      if (gc_model_is_ptr(o->fields[f])) o->image[f] = gc_compact_forwarded(heap, o->image[f]);
    }
  }
  for (size_t r = 0; r < m->root_count; r++) {
    m->root_want[r] = gc_compact_forwarded(heap, m->root_want[r]);
  }
  for (size_t i = 0; i < m->pend_count; i++) {
    m->pend[i].block = gc_compact_forwarded(heap, m->pend[i].block);
  }
}

/* ---- Finalize notes ------------------------------------------------------------------------ */

/* INV-MODEL-NOTE-1: under note_lock, since parallel sweepers note at once. by_val is only read
 * here, and nothing writes it while the world is stopped. Cost: one map lookup and an
 * uncontended lock per finalized custom block. */
void gc_model_note_finalized(gc_model *m, gc_value block) {
  uint64_t id;
  pthread_mutex_lock(&m->note_lock);
  if (!gc_addrmap_get(&m->by_val, block, &id)) {
    gc_model_add_pending(
        m, GC_VK_MODEL_FINALIZER_COUNT, block,
        "a finalize function ran on a block the model does not know (freed before, or "
        "never allocated through the model)");
  } else {
    m->objs[id].finalized++;
    m->finalized_notes++;
  }
  pthread_mutex_unlock(&m->note_lock);
}
