/* The marker. A block is marked when first reached (its colour set to MARKED) and pushed if it
 * has fields to scan; popping it scans its fields. Every stopped domain marks, each with its own
 * gc_marker and work buffer (workbuf.h); INV-MARK-1 (heap.h) says where a marked but unscanned
 * block can be: in a work buffer, or in a pool or large block flagged GC_*_REDARKEN. */
#include "gc/mark.h"

#include <string.h>

#include "gc/conservative.h"
#include "gc/ephemeron_mark.h"
#include "gc/finalizer.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "gc/workbuf.h"

/* ---- One block ----------------------------------------------------------------------------- */

/* No room for the block at hp: flag its pool or large block so re-darkening finds it. */
static void note_overflow(gc_marker *m, gc_header *hp, gc_header hd) {
  uint32_t old;
  if (gc_hd_whsize(hd) <= GC_SIZECLASS_MAX_WHSIZE) {
    old = gc_atomic_or_u32(&gc_pool_of_hp(hp)->flags, GC_POOL_REDARKEN) & GC_POOL_REDARKEN;
  } else {
    old = gc_atomic_or_u32((uint32_t *)&gc_large_of_hp(hp)->flags, GC_LARGE_REDARKEN) &
          GC_LARGE_REDARKEN;
  }
  m->counts.overflows++;
  gc_event_note(m->heap, GC_EVENT_MARK_OVERFLOW);
  if (!old) m->counts.flagged++; /* INV-MARKWORK-1 */
  gc_atomic_store(&m->heap->work.overflowed, 1);
}

/* The current buffer is full: publish it and take an empty one, or overflow. */
static void push_slow(gc_marker *m, gc_value v, gc_header *hp, gc_header hd) {
  gc_mark_work *w = &m->heap->work;
  gc_workbuf *fresh = m->buf_entries == 0 ? NULL : gc_work_get_empty(w);
  if (fresh == NULL) {
    note_overflow(m, hp, hd);
    return;
  }
  if (m->buf != NULL) gc_work_put_full(w, m->buf);
  m->buf = fresh;
  fresh->items[fresh->count++] = v;
}

static inline __attribute__((always_inline)) void push(gc_marker *m, gc_value v, gc_header *hp,
                                                       gc_header hd) {
  gc_workbuf *b = m->buf;
  if (b != NULL && b->count < m->buf_entries) {
    b->items[b->count++] = v;
  } else {
    push_slow(m, v, hp, hd);
  }
}

/* Mark the block at v if it is UNMARKED: colour it MARKED and push it if it has fields. With
 * other markers running, the colour changes by compare-and-swap so exactly one of them pushes. */
static inline __attribute__((always_inline)) void mark_block(gc_marker *m, gc_value v) {
  gc_header *hp = gc_hp_val(v);
  gc_header hd = gc_atomic_load_word(hp);
  if (gc_hd_colour(hd) != m->unmarked) return; /* marked, or NOT_MARKABLE */
  gc_header marked = gc_hd_with_colour(hd, m->marked);
  if (__builtin_expect(m->parallel, 0)) {
    if (!gc_atomic_cas(hp, hd, marked)) return; /* another marker got there first */
  } else {
    gc_atomic_store_relaxed(hp, marked);
  }
  m->marked_words += gc_hd_whsize(hd);
  m->marked_blocks++;
  if (gc_tag_is_scanned(gc_hd_tag(hd))) {
    m->counts.scan_blocks_marked++;
    m->counts.scan_fields_marked += gc_hd_wsize(hd);
    push(m, v, hp, hd);
  }
}

/* Reading a child's header is the marker's cache miss. Each pointer found first goes through a
 * small FIFO: its header is prefetched on the way in and examined GC_MARK_PREFETCH pointers
 * later, by which time it has usually arrived. */
static inline __attribute__((always_inline)) void mark_value(gc_marker *m, gc_value v) {
  if (!gc_is_block(v)) return;
  __builtin_prefetch(gc_hp_val(v), 1);
  unsigned i = m->prefetch_head;
  gc_value oldest = m->prefetch[i];
  m->prefetch[i] = v;
  m->prefetch_head = (i + 1) % GC_MARK_PREFETCH;
  if (oldest != 0) {
    mark_block(m, oldest);
  } else {
    m->prefetch_count++;
  }
}

/* Fields are read atomically: with incremental marking a mutator may gc_store into the block
 * while a marker scans it (either value is fine: the barrier darkened the old one). Acquire,
 * pairing with gc_store's release: the marker then reads the header of the block found, which
 * the storing domain initialised (on x86-64 a plain load). */
static void scan_fields(gc_marker *m, gc_value v) {
  size_t wsize = gc_hd_wsize(gc_atomic_load_word(gc_hp_val(v)));
  gc_value *fields = gc_fields(v);
  for (size_t i = 0; i < wsize; i++) mark_value(m, __atomic_load_n(&fields[i], __ATOMIC_ACQUIRE));
}

/* scan_fields, counted (INV-MARKWORK-1): the header is read again, from the line scan_fields is
 * about to read, so the count costs two adds and a cache hit per scanned block. */
static inline __attribute__((always_inline)) void scan_block(gc_marker *m, gc_value v) {
  m->counts.blocks_scanned++;
  m->counts.fields_scanned += gc_hd_wsize(gc_atomic_load_word(gc_hp_val(v)));
  scan_fields(m, v);
}

/* Empty the FIFO into mark_block, oldest first; returns 1 if it held anything. The FIFO fills
 * from empty one slot after another and is emptied only here, so its prefetch_count pointers
 * are the slots just before prefetch_head: a flush of a few pointers (a small heap's every
 * drain) reads those few, not all GC_MARK_PREFETCH slots. */
static int flush_prefetch(gc_marker *m) {
  unsigned n = m->prefetch_count;
  if (n == 0) return 0;
  m->prefetch_count = 0;
  for (unsigned k = n; k > 0; k--) {
    unsigned i = (m->prefetch_head + GC_MARK_PREFETCH - k) % GC_MARK_PREFETCH;
    gc_value v = m->prefetch[i];
    m->prefetch[i] = 0;
    mark_block(m, v);
  }
  return 1;
}

/* Offer half of m's buffer to another marker (`offer`: gc_work_maybe_handoff or _share). The
 * giver counts a handoff when its buffer came back smaller (INV-HANDOFFCOUNT-1): seen from its
 * own buffer, apart from work.handoffs, which the lists count under their lock. */
static void offer_half(gc_marker *m, void (*offer)(gc_mark_work *, gc_workbuf *)) {
  gc_workbuf *b = m->buf;
  size_t before = b->count;
  offer(&m->heap->work, b);
  if (b->count < before) m->counts.handoffs++;
}

/* Scan until this marker's buffer and FIFO are empty. */
static void drain_local(gc_marker *m) {
  do {
    gc_workbuf *b;
    while ((b = m->buf) != NULL && b->count > 0) {
      scan_block(m, b->items[--b->count]);
      if (m->parallel && (++m->pops & 63) == 0) offer_half(m, gc_work_maybe_handoff);
    }
  } while (flush_prefetch(m));
}

/* Mark until every marker is out of work; then hand the buffer back (INV-WB-1). */
static void mark_loop(gc_marker *m) {
  gc_mark_work *w = &m->heap->work;
  for (;;) {
    drain_local(m);
    gc_workbuf *full = gc_work_get_full_or_finish(w);
    if (full == NULL) break;
    if (m->buf != NULL) gc_work_put_empty(w, m->buf);
    m->buf = full;
  }
  if (m->buf != NULL) {
    gc_work_put_empty(w, m->buf);
    m->buf = NULL;
  }
}

/* ---- Roots ----------------------------------------------------------------------------------- */

static void visit_root(void *ctx, gc_value *slot) {
  gc_marker *m = ctx;
  mark_value(m, *slot);
}

static void visit_conservative(void *ctx, gc_value block, const uintptr_t *where) {
  (void)where;
  mark_value(ctx, block);
}

void gc_roots_visit_domain(gc_domain *d, gc_visit_fn visit, void *ctx) {
  for (gc_frame *f = d->head.frames; f != NULL; f = f->prev) {
    for (size_t i = 0; i < f->count; i++) visit(ctx, &f->slots[i]);
  }
}

void gc_roots_visit_global(gc_heap *heap, gc_visit_fn visit, void *ctx) {
  for (size_t i = 0; i < heap->global_roots.count; i++) {
    visit(ctx, (gc_value *)heap->global_roots.items[i]);
  }
  for (size_t i = 0; i < heap->pinned.count; i++) {
    gc_value v = (gc_value)heap->pinned.items[i];
    gc_header hd = gc_atomic_load_word(gc_hp_val(v)); /* NOT_MARKABLE, but read like any header */
    if (!gc_tag_is_scanned(gc_hd_tag(hd))) continue;
    for (size_t k = 0; k < gc_hd_wsize(hd); k++) visit(ctx, &gc_fields(v)[k]);
  }
  gc_finalizer_visit_roots(heap, visit, ctx);
  for (size_t i = 0; i < heap->scanner_count; i++) {
    heap->scanners[i].fn(visit, ctx, heap->scanners[i].user);
  }
}

void gc_roots_visit(gc_heap *heap, gc_visit_fn visit, void *ctx) {
  gc_roots_visit_global(heap, visit, ctx);
  for (size_t i = 0; i < heap->domain_count; i++)
    gc_roots_visit_domain(heap->domains[i], visit, ctx);
}

/* ---- Overflow recovery ------------------------------------------------------------------------ */

/* Scan again every MARKED block of a flagged pool: its unscanned children are among them. */
static void redarken_pool(gc_marker *m, gc_pool *p) {
  p->flags &= ~GC_POOL_REDARKEN;
  m->counts.redarkened++;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  const gc_header marked = m->heap->colours.marked;
  for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
    gc_header hd = gc_atomic_load_word(slot); /* read like every header a marker reads */
    if (hd == 0 || gc_hd_colour(hd) != marked || !gc_tag_is_scanned(gc_hd_tag(hd))) continue;
    scan_block(m, gc_val_hp(slot));
    /* Drain only when the buffer is full: draining after every block would empty the prefetch
     * FIFO each time. A push that finds no room flags a pool again, which a later pass rescans. */
    if (m->buf != NULL && m->buf->count == m->buf_entries) mark_loop(m);
  }
  mark_loop(m);
}

static void redarken_pools(gc_marker *m, gc_pool *list) {
  for (gc_pool *p = list; p != NULL; p = p->next) {
    if (p->flags & GC_POOL_REDARKEN) redarken_pool(m, p);
  }
}

static void redarken_large(gc_marker *m, gc_large *list) {
  for (gc_large *a = list; a != NULL; a = a->next) {
    if (!(a->flags & GC_LARGE_REDARKEN)) continue;
    a->flags &= ~GC_LARGE_REDARKEN;
    m->counts.redarkened++;
    scan_block(m, gc_val_hp(gc_large_hp(a)));
    mark_loop(m);
  }
}

/* Repeat until no push failed during a whole pass. Each pass scans at least every block that
 * overflowed before it began, so the set of marked blocks only grows and the loop ends. Run by
 * one marker with the world stopped, sweeping complete and orphans adopted, so every pool is on
 * a domain's avail or full list. */
static void redarken(gc_marker *m) {
  gc_heap *heap = m->heap;
  while (gc_atomic_load(&heap->work.overflowed)) {
    heap->mark_overflows++;
    m->counts.redarken_passes++;
    gc_event_note(heap, GC_EVENT_MARK_REDARKEN);
    gc_atomic_store(&heap->work.overflowed, 0);
    for (size_t i = 0; i < heap->domain_count; i++) {
      gc_domain *d = heap->domains[i];
      for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
        redarken_pools(m, d->avail[c]);
        redarken_pools(m, d->full[c]);
      }
      redarken_large(m, d->swept_large);
    }
  }
}

int gc_mark_block_now(gc_marker *m, gc_value v) {
  size_t before = m->marked_blocks;
  mark_block(m, v);
  return m->marked_blocks != before;
}

/* Ephemeron rounds over every list until one marks nothing, each datum's subtree marked in
 * between (INV-EPHE-1): the fixpoint, world stopped, the leader alone. */
static void ephe_fixpoint(gc_marker *m) {
  while (gc_ephe_round_all(m->heap, m, gc_mark_block_now) > 0) {
    gc_event_note(m->heap, GC_EVENT_EPHE_ROUND_MARKED);
    mark_loop(m);
    redarken(m);
  }
}

/* A block whose finalizer was just queued survives this cycle. */
static void mark_queued(void *ctx, gc_value v) {
  gc_marker *m = ctx;
  mark_block(m, v);
  mark_loop(m);
}

/* ---- The phases ------------------------------------------------------------------------------ */

void gc_mark_init_marker(gc_heap *heap, gc_marker *m, int parallel) {
  memset(m, 0, sizeof *m);
  m->heap = heap;
  /* Zeal overflow (gc.h): a marker whose buffers hold nothing overflows at every push. */
  int overflow_zeal = (gc_atomic_load_relaxed(&heap->zeal) & GC_ZEAL_OVERFLOW) != 0;
  m->buf_entries = overflow_zeal ? 0 : heap->work.buf_entries;
  if (overflow_zeal) gc_atomic_store_relaxed(&heap->cycle_work.overflow_zeal, 1);
  m->unmarked = heap->colours.unmarked;
  m->marked = heap->colours.marked;
  m->parallel = parallel;
}

void gc_mark_begin(gc_heap *heap, size_t markers) {
  gc_work_shape(heap, heap->cfg.mark_stack_entries, markers);
  gc_work_begin(heap, markers);
  gc_atomic_store(&heap->work.overflowed, 0);
  heap->cycle_work.markers = markers;
  heap->cycle_work.incremental = 0;
  heap->cycle_work.overflow_zeal = 0;
  heap->mark_pinned_blocks = heap->mark_pinned_words = 0;
  heap->handoffs_at_mark_begin = heap->work.handoffs;
  heap->shares_at_mark_begin = heap->work.shares;
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_mark_init_marker(heap, &heap->domains[i]->marker, markers > 1);
  }
  gc_mark_init_marker(heap, &heap->shade, markers > 1);
}

void gc_mark_domain(gc_domain *d, int with_global_roots) {
  gc_marker *m = &d->marker;
  gc_roots_visit_domain(d, visit_root, m);
  if (with_global_roots) {
    gc_heap *heap = d->heap;
    gc_roots_visit_global(heap, visit_root, m);
    gc_conservative_visit(heap, visit_conservative, m);
    /* Domains the stop took without their thread (in blocking sections) do not mark; their
     * frames are roots all the same. */
    for (size_t i = 0; i < heap->domain_count; i++) {
      gc_domain *o = heap->domains[i];
      if (o != d && gc_domain_state_taken(gc_atomic_load(&o->state))) {
        gc_roots_visit_domain(o, visit_root, m);
      }
    }
  }
  mark_loop(m);
}

/* Add o's totals to acc (the leader's sum at the end of a mark, a terminating domain's counts
 * kept by the shade marker). */
static void add_counts(gc_marker *acc, const gc_marker *o) {
  acc->marked_words += o->marked_words;
  acc->marked_blocks += o->marked_blocks;
  gc_mark_counts *sum = &acc->counts;
  sum->scan_blocks_marked += o->counts.scan_blocks_marked;
  sum->scan_fields_marked += o->counts.scan_fields_marked;
  sum->blocks_scanned += o->counts.blocks_scanned;
  sum->fields_scanned += o->counts.fields_scanned;
  sum->overflows += o->counts.overflows;
  sum->flagged += o->counts.flagged;
  sum->redarken_passes += o->counts.redarken_passes;
  sum->redarkened += o->counts.redarkened;
  sum->ephe_rounds += o->counts.ephe_rounds;
  sum->ephe_data += o->counts.ephe_data;
  sum->handoffs += o->counts.handoffs;
}

void gc_mark_finish(gc_heap *heap, gc_domain *leader) {
  /* The parallel part is over: the leader's marker finishes alone. */
  gc_marker *m = &leader->marker;
  m->parallel = 0;
  gc_work_begin(heap, 1);
  redarken(m);
  /* Ephemerons to their fixpoint, then the weak slots of what is dead cleared before any
   * finalizer is queued (gc.h: the order). The finalizers' marking makes the blocks they queue
   * live keys (and may reach ephemerons not live before), so a second fixpoint; then the clean
   * phase proper, which drops the dead entries and empties the ephemerons of dead keys. */
  heap->ephe_work.cycle_cleared = 0;
  ephe_fixpoint(m);
  gc_ephe_clean_weak(heap);
  gc_finalizer_queue_unreachable(heap, mark_queued, m);
  redarken(m);
  ephe_fixpoint(m);
  gc_ephe_clean(heap);
  gc_marker total = {0};
  for (size_t i = 0; i < heap->domain_count; i++) add_counts(&total, &heap->domains[i]->marker);
  add_counts(&total, &heap->shade);
  heap->marked_words = total.marked_words;
  heap->marked_blocks = total.marked_blocks;
  heap->cycle_work.mark = total.counts;
  heap->ephe_work.cycle_rounds = total.counts.ephe_rounds;
  heap->ephe_work.cycle_data = total.counts.ephe_data;
  heap->ephe_work.rounds += total.counts.ephe_rounds;
  heap->ephe_work.data += total.counts.ephe_data;
  heap->cycle_work.handoffs = heap->work.handoffs - heap->handoffs_at_mark_begin;
  heap->events[GC_EVENT_MARK_HANDOFF] += heap->cycle_work.handoffs; /* the world is stopped */
  heap->cycle_work.shares = heap->work.shares - heap->shares_at_mark_begin;
}

/* ---- Incremental marking ---------------------------------------------------------------------
 *
 * Between the two stops (INV-BARRIER-1 in heap.h) grey work lives in four places: each domain's
 * marker buffer (its slices and its barrier push there), the shared full list, the shade
 * marker's buffer, and the pools and large blocks flagged by an overflow. Outside a slice a
 * marker's prefetch FIFO is empty: every slice ends by flushing it. */

/* What the barrier and gc_mark_shade_fields do to a value: mark it now if it is UNMARKED (no
 * FIFO: the value may be gone from the heap by the time a FIFO would examine it). */
static inline void darken(gc_marker *m, gc_value v) {
  if (gc_is_block(v)) mark_block(m, v);
}

void gc_mark_darken(gc_domain *d, gc_value v) { darken(&d->marker, v); }

void gc_mark_shade_fields(gc_heap *heap, gc_value v) {
  gc_header hd = gc_atomic_load_word(gc_hp_val(v));
  if (!gc_tag_is_scanned(gc_hd_tag(hd))) return;
  gc_value *fields = gc_fields(v);
  gc_mutex_lock(&heap->shade_lock);
  for (size_t i = 0; i < gc_hd_wsize(hd); i++)
    darken(&heap->shade, __atomic_load_n(&fields[i], __ATOMIC_ACQUIRE)); /* as scan_fields */
  gc_mutex_unlock(&heap->shade_lock);
}

void gc_mark_count_unpinned(gc_heap *heap, gc_header hd) {
  gc_mutex_lock(&heap->shade_lock);
  gc_marker *m = &heap->shade;
  m->marked_words += gc_hd_whsize(hd);
  m->marked_blocks++;
  if (gc_tag_is_scanned(gc_hd_tag(hd))) {
    /* Counted as marked, never scanned: its fields were roots when marking began. */
    m->counts.scan_blocks_marked++;
    m->counts.scan_fields_marked += gc_hd_wsize(hd);
  }
  gc_mutex_unlock(&heap->shade_lock);
}

/* A slice that ends with grey work left shares it: otherwise a domain that runs dry finds
 * nothing on the shared list while this one sits on work until its next slice, and stops the
 * world for a termination that can only resume marking (a recheck). Between slices a domain's
 * buffer then holds only what its barrier pushed. */
static void share_leftover(gc_domain *d) {
  gc_workbuf *b = d->marker.buf;
  if (b == NULL || b->count == 0) return;
  d->marker.buf = NULL;
  gc_work_put_partial(&d->heap->work, b);
}

void gc_mark_set_parallel(gc_heap *heap, int parallel) {
  for (size_t i = 0; i < heap->domain_count; i++) heap->domains[i]->marker.parallel = parallel;
  heap->shade.parallel = parallel;
  gc_atomic_store(&heap->mark_parallel, (uintptr_t)parallel);
}

void gc_mark_start_incremental(gc_heap *heap, gc_domain *leader) {
  gc_mark_begin(heap, heap->domain_count + 1); /* every domain, and the shade marker */
  heap->cycle_work.incremental = 1; /* INV-MARKERS-1's witness: the domains and ids now */
  heap->cycle_work.domains_at_start = heap->domain_count;
  heap->cycle_work.domain_id_at_start = heap->next_domain_id;
  heap->mark_markers = heap->domain_count + 1;
  gc_mark_set_parallel(heap, heap->domain_count > 1);
  gc_marker *m = &leader->marker;
  gc_roots_visit_global(heap, visit_root, m);
  gc_conservative_visit(heap, visit_conservative, m);
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_roots_visit_domain(heap->domains[i], visit_root, m);
  }
  flush_prefetch(m);
  share_leftover(leader); /* the roots' buffer: for whichever domain slices first */
}

/* Take a full buffer from the shared list, without waiting; NULL if there is none. The shade
 * marker's buffer goes there first when it holds anything. */
static gc_workbuf *take_full(gc_heap *heap) {
  gc_mutex_lock(&heap->shade_lock);
  gc_workbuf *b = heap->shade.buf;
  if (b != NULL && b->count > 0) {
    heap->shade.buf = NULL;
    gc_work_put_full(&heap->work, b);
  }
  gc_mutex_unlock(&heap->shade_lock);
  return gc_work_try_get_full(&heap->work);
}

int gc_mark_slice(gc_domain *d, size_t budget_words) {
  gc_marker *m = &d->marker;
  size_t done_words = 0;
  for (;;) {
    gc_workbuf *b;
    while (done_words < budget_words && (b = m->buf) != NULL && b->count > 0) {
      gc_value v = b->items[--b->count];
      done_words += gc_hd_whsize(gc_atomic_load_word(gc_hp_val(v)));
      scan_block(m, v);
      /* m->buf, not b: a push that found b full published it (push_slow), and another domain's
       * slice may already be popping from it. */
      if ((++m->pops & 63) == 0) offer_half(m, gc_work_maybe_share);
    }
    int flushed = flush_prefetch(m);
    if (done_words >= budget_words) {
      share_leftover(d);
      return 1;
    }
    if (flushed) continue;
    gc_workbuf *full = take_full(d->heap);
    if (full == NULL) {
      /* No grey work: a round over this domain's own ephemerons may make some, each entry it
       * passes paid from the budget (a chain of n ephemerons takes n rounds). */
      size_t passed = 0;
      size_t marked = gc_ephe_round(m, &d->ephe, &passed, gc_mark_block_now);
      done_words += passed;
      if (marked > 0) {
        gc_event_note(d->heap, GC_EVENT_EPHE_ROUND_MARKED);
        continue;
      }
      return 0;
    }
    if (m->buf != NULL) gc_work_put_empty(&d->heap->work, m->buf);
    m->buf = full;
  }
}

/* Give back m's buffer: to the full list if it holds work, else to the empty list. */
static void flush_marker(gc_mark_work *w, gc_marker *m) {
  gc_workbuf *b = m->buf;
  if (b == NULL) return;
  m->buf = NULL;
  if (b->count > 0) {
    gc_work_put_partial(w, b);
  } else {
    gc_work_put_empty(w, b);
  }
}

void gc_mark_flush(gc_domain *d) { flush_marker(&d->heap->work, &d->marker); }

void gc_mark_retire(gc_domain *d) {
  gc_heap *heap = d->heap;
  gc_mark_flush(d);
  gc_mutex_lock(&heap->shade_lock);
  add_counts(&heap->shade, &d->marker);
  gc_mutex_unlock(&heap->shade_lock);
  memset(&d->marker.counts, 0, sizeof d->marker.counts);
  d->marker.marked_words = d->marker.marked_blocks = 0;
}

int gc_mark_quiescent(gc_heap *heap) {
  gc_mark_work *w = &heap->work;
  for (size_t i = 0; i < heap->domain_count; i++) flush_marker(w, &heap->domains[i]->marker);
  flush_marker(w, &heap->shade);
  if (gc_atomic_load(&w->full_count) != 0) return 0;
  /* No grey work anywhere: marking is over only if a round over every list, the blocked and the
   * orphaned domains' included, marks no datum (INV-EPHE-1). What it marks is resumed work. */
  while (gc_ephe_round_all(heap, &heap->shade, gc_mark_block_now) > 0) {
    gc_event_note(heap, GC_EVENT_EPHE_ROUND_MARKED);
    flush_marker(w, &heap->shade);
    if (gc_atomic_load(&w->full_count) != 0) return 0;
    /* Leaves only (no fields to scan): they may be keys, so round again. */
  }
  return 1;
}

void gc_mark_finish_incremental(gc_heap *heap, gc_domain *leader) {
  gc_marker *m = &leader->marker;
  m->parallel = 0;
  gc_work_begin(heap, 1);
  mark_loop(m); /* whatever a recheck found when no more rechecks were allowed */
  /* Conservative words change without a barrier (INV-BARRIER-1): scan the ranges again. */
  gc_conservative_visit(heap, visit_conservative, m);
  flush_prefetch(m);
  mark_loop(m);
  gc_mark_finish(heap, leader);
}

void gc_mark_count_pinned(gc_heap *heap, gc_header hd) {
  gc_mutex_lock(&heap->shade_lock);
  heap->mark_pinned_words += gc_hd_whsize(hd);
  heap->mark_pinned_blocks++;
  gc_mutex_unlock(&heap->shade_lock);
}

size_t gc_mark_marked_blocks(const gc_heap *heap) { return heap->marked_blocks; }

size_t gc_mark_domain_marked_blocks(const gc_domain *d) { return d->marker.marked_blocks; }

int gc_mark_undo_full(gc_heap *heap) {
  gc_heap_stats s;
  gc_heap_sum_stats(heap, &s);
  /* Unswept dead blocks count in the stats until swept (INV-STATS-1), so a heap with sweeping
   * left is refused too: its GARBAGE blocks were not reached. */
  if (heap->marked_blocks + heap->pinned.count != s.pool_live_blocks + s.large_blocks) return 0;
  gc_header unmarked = heap->colours.unmarked;
  heap->colours.unmarked = heap->colours.marked;
  heap->colours.marked = unmarked;
  return 1;
}

void gc_mark_heap(gc_heap *heap) {
  gc_domain *d = heap->main_domain;
  gc_mark_begin(heap, 1);
  gc_mark_domain(d, 1);
  gc_mark_finish(heap, d);
}
