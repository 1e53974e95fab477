/* Ephemerons and weak references, the marking side: the rounds that take ephemerons to their
 * fixpoint, the clean phase that empties the slots of dead blocks before any sweep can free them,
 * and the lists. INV-EPHE-1, INV-EPHE-2 and INV-EPHE-3 are stated in heap.h; making and reading
 * them (gc.h's API) is ephemeron.c's.
 *
 * Both kinds are leaves for the marker (gc_tag_is_scanned is 0): their slots are read only here.
 * Each one sits on its owner's list (heap.h, gc_ephe_list), chained through its link word, from
 * its allocation until the clean phase of the cycle that finds it dead. Rounds pass over those
 * lists, so a round costs the ephemerons and weak references of the list, whether live or not.
 */
#include "gc/ephemeron_mark.h"

/* ---- Colours ------------------------------------------------------------------------------ */

/* A block is alive for this mark when it is MARKED or pinned (NOT_MARKABLE). Headers are read
 * atomically: other markers may be colouring them. */
static inline int alive(gc_value v, gc_header marked) {
  gc_header c = gc_hd_colour(gc_atomic_load_word(gc_hp_val(v)));
  return c == marked || c == GC_NOT_MARKABLE;
}

/* A key keeps its datum while it is alive; an immediate never dies, an empty key is none. */
static inline int key_alive(gc_value key, gc_header marked) {
  return key != 0 && (!gc_is_block(key) || alive(key, marked));
}

/* Slots are read with acquire, as a marker reads a field (a mutator may set them meanwhile). */
static inline gc_value load_slot(gc_value v, size_t i) {
  return __atomic_load_n(&gc_fields(v)[i], __ATOMIC_ACQUIRE);
}

static inline gc_value next_of(gc_value v) { return gc_fields(v)[GC_WEAK_LINK]; }

/* ---- Marking rounds ----------------------------------------------------------------------- */

size_t gc_ephe_round(gc_marker *m, const gc_ephe_list *list, size_t *examined,
                     gc_ephe_mark_fn mark_now) {
  size_t marked = 0, passed = 0;
  for (gc_value e = list->head; e != 0; e = next_of(e)) {
    passed++;
    gc_header hd = gc_atomic_load_word(gc_hp_val(e));
    if (gc_hd_tag(hd) != GC_TAG_EPHEMERON) continue;
    /* An ephemeron not yet found alive keeps nothing; a later round looks again. */
    gc_header c = gc_hd_colour(hd);
    if (c != m->marked && c != GC_NOT_MARKABLE) continue;
    if (!key_alive(load_slot(e, GC_EPHE_KEY), m->marked)) continue;
    gc_value datum = load_slot(e, GC_EPHE_DATUM);
    if (gc_is_block(datum) && mark_now(m, datum)) marked++;
  }
  m->counts.ephe_rounds++;
  m->counts.ephe_data += marked;
  if (examined != NULL) *examined += passed;
  return marked;
}

size_t gc_ephe_round_all(gc_heap *heap, gc_marker *m, gc_ephe_mark_fn mark_now) {
  size_t marked = gc_ephe_round(m, &heap->orphans.ephe, NULL, mark_now);
  for (size_t i = 0; i < heap->domain_count; i++) {
    marked += gc_ephe_round(m, &heap->domains[i]->ephe, NULL, mark_now);
  }
  return marked;
}

/* ---- The clean phase ---------------------------------------------------------------------- */

/* Clear what e names that this mark found dead; returns the slots or pairs cleared. */
static size_t clean_block(gc_value e, unsigned tag, gc_header marked) {
  gc_value *f = gc_fields(e);
  if (tag == GC_TAG_WEAK) {
    gc_value t = f[GC_WEAK_TARGET];
    if (!gc_is_block(t) || alive(t, marked)) return 0;
    f[GC_WEAK_TARGET] = 0;
    return 1;
  }
  gc_value key = f[GC_EPHE_KEY], datum = f[GC_EPHE_DATUM];
  if (key != 0 && !key_alive(key, marked)) {
    f[GC_EPHE_KEY] = 0; /* the key is dead: the datum goes with it */
    f[GC_EPHE_DATUM] = 0;
    return 1;
  }
  /* No key: the ephemeron kept nothing, so its datum may be dead too. */
  if (key == 0 && gc_is_block(datum) && !alive(datum, marked)) {
    f[GC_EPHE_DATUM] = 0;
    return 1;
  }
  return 0;
}

/* `all`: prune the dead entries and clean both kinds; otherwise the weak references only. */
static size_t clean_list(gc_ephe_list *list, gc_header marked, int all) {
  size_t cleared = 0;
  gc_value *link = &list->head;
  while (*link != 0) {
    gc_value e = *link;
    unsigned tag = gc_hd_tag(gc_hd_val(e));
    if (!all && tag != GC_TAG_WEAK) {
      link = &gc_fields(e)[GC_WEAK_LINK];
      continue;
    }
    if (all && !alive(e, marked)) {
      *link = next_of(e); /* dead: the sweep frees it, no list may name it */
      if (tag == GC_TAG_EPHEMERON) {
        list->ephemerons--;
      } else {
        list->weak_refs--;
      }
      continue;
    }
    cleared += clean_block(e, tag, marked);
    link = &gc_fields(e)[GC_WEAK_LINK];
  }
  return cleared;
}

static void clean_lists(gc_heap *heap, int all) {
  gc_header marked = heap->colours.marked;
  size_t cleared = clean_list(&heap->orphans.ephe, marked, all);
  for (size_t i = 0; i < heap->domain_count; i++) {
    cleared += clean_list(&heap->domains[i]->ephe, marked, all);
  }
  heap->ephe_work.cycle_cleared += cleared;
  heap->ephe_work.cleared += cleared;
}

void gc_ephe_clean_weak(gc_heap *heap) { clean_lists(heap, 0); }

void gc_ephe_clean(gc_heap *heap) { clean_lists(heap, 1); }

void gc_ephe_list_splice(gc_ephe_list *from, gc_ephe_list *to) {
  if (from->head == 0) return;
  gc_value last = from->head;
  while (next_of(last) != 0) last = next_of(last);
  gc_fields(last)[GC_WEAK_LINK] = to->head;
  to->head = from->head;
  to->ephemerons += from->ephemerons;
  to->weak_refs += from->weak_refs;
  *from = (gc_ephe_list){0};
}
