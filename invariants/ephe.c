/* The ephe pass: ephemerons and weak references against their rules (gc.h), at mark-done and
 * when sweeping completes.
 *
 * Every block of every pool and large block the owners hold is read once (the heap index, never
 * the collector's lists, gives them); each live ephemeron and weak reference found is held to:
 *   - INV-EPHE-1, at mark-done: an ephemeron whose key is alive (MARKED, NOT_MARKABLE, or an
 *     immediate) has its datum MARKED: ephe.datum-unmarked. A datum lost while its key lived.
 *   - INV-EPHE-2, at mark-done (the clean phase ran in the same stop, before the hook): no weak
 *     slot names an UNMARKED block, and no ephemeron keeps a key that is, or a datum that is
 *     UNMARKED without a key: ephe.uncleaned. The clean phase missed it, and the sweep would
 *     free what it names.
 *   - INV-EPHE-2, at every point: every slot is empty, an immediate, or a block start with a
 *     non-zero header that is not GARBAGE: ephe.dangling (after a sweep, what a missed clean
 *     leaves: a slot naming a freed slot).
 *   - INV-EPHE-3, at every point: every live ephemeron and weak reference is on exactly one
 *     owner's list, every list entry is a live block of a weak tag, and each list's counts are
 *     its entries: ephe.unlisted.
 * Over-retention through an ephemeron (a datum MARKED while its key is dead) and a datum lost
 * while its key lived are found by checkmark too, whose walk follows the ephemeron rule
 * (walk.c): checkmark.over-retained, checkmark.unmarked.
 *
 * The point: at a hook, the hook's; called directly (the corruption catalogue, tests), mark-done
 * when a cycle has begun, not ended and no longer marks (the hook of its last stop is running),
 * otherwise a point between cycles, where only the checks of every point apply.
 *
 * Cost: one header read per used slot and large block, the slots of each weak block (one index
 * lookup each), and one address-map insert per list entry.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc/heap.h"
#include "invariants/pass.h"

typedef struct ephe_check {
  const gc_verify_run *run;
  gc_heapindex *ix;
  gc_addrmap *listed; /* every list entry (in the scratch memory) */
  int mark_done;
  size_t found;
} ephe_check;

/* A block is live when marking is over if it is MARKED (or pinned); at any other time if it is
 * not GARBAGE (between cycles live blocks are UNMARKED, and mid-mark MARKED ones too). */
static int live(const ephe_check *c, gc_header hd) {
  gc_header colour = gc_hd_colour(hd);
  if (c->mark_done) return colour == c->run->heap->colours.marked || colour == GC_NOT_MARKABLE;
  return colour != c->run->heap->colours.garbage;
}

static int at_mark_done(const gc_verify_run *run) {
  if (run->at_hook) return run->hook == GC_HOOK_MARK_DONE;
  const gc_heap *heap = run->heap;
  return heap->trace.start_ns != 0 && heap->trace.end_ns == 0 &&
         !gc_atomic_load_relaxed(&heap->marking);
}

static gc_verify_report *report(ephe_check *c, gc_verify_kind kind, gc_value block, const char *fmt,
                                ...) __attribute__((format(printf, 4, 5), cold));

static gc_verify_report *report(ephe_check *c, gc_verify_kind kind, gc_value block, const char *fmt,
                                ...) {
  c->found++;
  gc_verify_report *r = gc_verify_report_new(c->run, kind);
  if (r == NULL) return NULL;
  gc_verify_report_block(r, c->ix, block);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
  return r;
}

/* ---- The lists (INV-EPHE-3) --------------------------------------------------------------- */

/* Each owner's chain, from its head through the link words, each entry checked to be a block
 * start of a weak tag before its link is read; a chain longer than the heap's blocks loops. */
static void read_lists(ephe_check *c) {
  gc_heap *heap = c->run->heap;
  size_t bound = c->ix->large_count;
  for (size_t i = 0; i < c->ix->pool_count; i++) bound += GC_POOL_WSIZE / 2;
  for (size_t d = 0; d <= heap->domain_count; d++) {
    gc_ephe_list *list = d < heap->domain_count ? &heap->domains[d]->ephe : &heap->orphans.ephe;
    const char *owner = d < heap->domain_count ? "a domain's" : "the orphans'";
    size_t ephemerons = 0, weak_refs = 0, steps = 0;
    for (gc_value e = list->head; e != 0; e = gc_fields(e)[GC_WEAK_LINK]) {
      gc_header hd;
      if (!gc_heapindex_read_header(c->ix, e, &hd) || !gc_tag_is_weak(gc_hd_tag(hd)) ||
          gc_hd_wsize(hd) < gc_tag_weak_words(gc_hd_tag(hd))) {
        report(c, GC_VK_EPHE_UNLISTED, e,
               "%s ephemeron list names a block that is not an ephemeron or weak reference "
               "(INV-EPHE-3); the list is not followed further",
               owner);
        break;
      }
      if (!live(c, hd)) {
        report(c, GC_VK_EPHE_UNLISTED, e,
               "%s ephemeron list keeps a dead block (%s): the clean phase drops them before the "
               "sweep frees them (INV-EPHE-3)",
               owner, gc_colour_name(heap, gc_hd_colour(hd)));
      }
      int added = gc_addrmap_add(c->listed, e, 1);
      if (added == 0) {
        report(c, GC_VK_EPHE_UNLISTED, e,
               "a block is on the ephemeron lists twice (INV-EPHE-3: exactly one list); the "
               "list is not followed further");
        break;
      }
      if (gc_hd_tag(hd) == GC_TAG_EPHEMERON) {
        ephemerons++;
      } else {
        weak_refs++;
      }
      if (++steps > bound) break;
    }
    if (ephemerons != list->ephemerons || weak_refs != list->weak_refs) {
      gc_verify_state_violation(c->run, GC_VK_EPHE_UNLISTED, owner,
                                "the list counts %zu ephemerons and %zu weak references, its "
                                "chain holds %zu and %zu (INV-EPHE-3)",
                                list->ephemerons, list->weak_refs, ephemerons, weak_refs);
      c->found++;
    }
  }
}

/* ---- One block's slots (INV-EPHE-1, INV-EPHE-2) ------------------------------------------- */

typedef enum slot_state { SLOT_NONE, SLOT_LIVE, SLOT_DEAD, SLOT_BAD } slot_state;

/* What slot value x names: nothing (empty), an immediate (live), a live or a dead block, or no
 * block at all (a freed slot, GARBAGE, outside the heap). */
static slot_state state_of(ephe_check *c, gc_value x, gc_header *hd) {
  if (x == 0) return SLOT_NONE;
  if (!gc_is_block(x)) return SLOT_LIVE;
  gc_loc loc = gc_heapindex_locate_start(c->ix, x);
  if ((loc.kind != GC_LOC_SLOT && loc.kind != GC_LOC_LARGE) ||
      !gc_heapindex_read_header(c->ix, x, hd) || *hd == 0) {
    return SLOT_BAD;
  }
  if (live(c, *hd)) return SLOT_LIVE;
  return c->mark_done ? SLOT_DEAD : SLOT_BAD; /* UNMARKED when marking is over; else GARBAGE */
}

static void check_slot(ephe_check *c, gc_value e, size_t field, const char *name) {
  gc_header hd = 0;
  gc_value x = gc_fields(e)[field];
  if (state_of(c, x, &hd) != SLOT_BAD) return;
  gc_verify_report *r = report(c, GC_VK_EPHE_DANGLING, e,
                               "its %s (field %zu) names %#llx, which is no live block: a freed "
                               "slot, a dead block or no block at all (INV-EPHE-2)",
                               name, field, (unsigned long long)x);
  if (r != NULL) {
    char where[160];
    gc_heapindex_describe(c->ix, x, where, sizeof where);
    gc_verify_report_where(r, "slot names %s, header %#llx", where, (unsigned long long)hd);
  }
}

static void check_ephemeron(ephe_check *c, gc_value e) {
  gc_value key = gc_fields(e)[GC_EPHE_KEY], datum = gc_fields(e)[GC_EPHE_DATUM];
  gc_header khd = 0, dhd = 0;
  slot_state ks = state_of(c, key, &khd), ds = state_of(c, datum, &dhd);
  if (ks == SLOT_BAD) check_slot(c, e, GC_EPHE_KEY, "key");
  if (ds == SLOT_BAD) check_slot(c, e, GC_EPHE_DATUM, "datum");
  if (!c->mark_done) return;
  if (ks == SLOT_LIVE && ds == SLOT_DEAD) {
    report(c, GC_VK_EPHE_DATUM_UNMARKED, e,
           "its key (%#llx) is alive and its datum %#llx is UNMARKED when marking ends: the "
           "fixpoint stopped short (INV-EPHE-1)",
           (unsigned long long)key, (unsigned long long)datum);
  } else if (ks == SLOT_DEAD) {
    report(c, GC_VK_EPHE_UNCLEANED, e,
           "its key %#llx is UNMARKED after the clean phase, which empties an ephemeron whose "
           "key died (INV-EPHE-2)",
           (unsigned long long)key);
  } else if (ks == SLOT_NONE && ds == SLOT_DEAD) {
    report(c, GC_VK_EPHE_UNCLEANED, e,
           "it has no key and its datum %#llx is UNMARKED after the clean phase (INV-EPHE-2)",
           (unsigned long long)datum);
  }
}

static void check_weak(ephe_check *c, gc_value w) {
  gc_value target = gc_fields(w)[GC_WEAK_TARGET];
  gc_header hd = 0;
  slot_state s = state_of(c, target, &hd);
  if (s == SLOT_BAD) check_slot(c, w, GC_WEAK_TARGET, "target");
  if (c->mark_done && s == SLOT_DEAD) {
    report(c, GC_VK_EPHE_UNCLEANED, w,
           "its target %#llx is UNMARKED after the clean phase, which empties the weak slot of "
           "every dead target (INV-EPHE-2)",
           (unsigned long long)target);
  }
}

/* ---- The pass ------------------------------------------------------------------------------ */

size_t gc_verify_ephe_run(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  ephe_check c = {.run = run, .mark_done = at_mark_done(run)};
  gc_verify_scratch own = {0};
  gc_verify_scratch *s = run->scratch != NULL ? run->scratch : &own;
  c.ix = &s->index;
  c.listed = &s->listed;
  int index_ok =
      run->index_built && s == run->scratch ? run->index_complete : gc_heapindex_build(c.ix, heap);
  if (!index_ok || !gc_addrmap_reset(c.listed, 0)) {
    fprintf(stderr, "gcfuzz verify: out of memory in the ephe pass; it checked nothing\n");
    if (s == &own) gc_verify_scratch_free(&own);
    return 0;
  }
  read_lists(&c);
  gc_heapindex_cursor cur;
  gc_heapindex_cursor_start(&cur, c.ix);
  gc_heapindex_block b;
  while (gc_heapindex_next_block(&cur, &b)) {
    if (b.hd == 0 || !gc_tag_is_weak(gc_hd_tag(b.hd))) continue;
    if (gc_hd_wsize(b.hd) < gc_tag_weak_words(gc_hd_tag(b.hd))) continue; /* reach's, swept's */
    if (!live(&c, b.hd)) continue;
    uint64_t seen;
    if (!gc_addrmap_get(c.listed, b.v, &seen)) {
      report(&c, GC_VK_EPHE_UNLISTED, b.v,
             "a live %s is on no owner's list: the clean phase never visits it (INV-EPHE-3)",
             gc_hd_tag(b.hd) == GC_TAG_EPHEMERON ? "ephemeron" : "weak reference");
    }
    if (gc_hd_tag(b.hd) == GC_TAG_EPHEMERON) {
      check_ephemeron(&c, b.v);
    } else {
      check_weak(&c, b.v);
    }
  }
  if (s == &own) gc_verify_scratch_free(&own);
  return c.found;
}
