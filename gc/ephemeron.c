/* Ephemerons and weak references (gc.h): making, reading and setting them. Both kinds are leaves
 * for the marker; each sits on its owner's list from its allocation (ephemeron_mark.c keeps the
 * lists, the marking rounds and the clean phase; INV-EPHE-1..3 in heap.h).
 */
#include "gc/alloc.h"
#include "gc/mark.h"

/* Slots are read with acquire, as a marker reads a field (a mutator may set them meanwhile). */
static inline gc_value load_slot(gc_value v, size_t i) {
  return __atomic_load_n(&gc_fields(v)[i], __ATOMIC_ACQUIRE);
}

/* ---- The API ------------------------------------------------------------------------------ */

/* v is a block of `tag`; otherwise the misuse is recorded and 0 returned. */
static int is_kind(gc_domain *d, gc_value v, unsigned tag, const char *fn) {
  if (!gc_is_block(v)) {
    gc_fail(d->heap, GC_ERR_NOT_BLOCK, "%s: not a block", fn);
    return 0;
  }
  if (gc_hd_tag(gc_atomic_load_word(gc_hp_val(v))) != tag) {
    gc_fail(d->heap, GC_ERR_BAD_TAG, "%s: block %p is not %s", fn, (void *)v,
            tag == GC_TAG_EPHEMERON ? "an ephemeron" : "a weak reference");
    return 0;
  }
  return 1;
}

static gc_value alloc_on_list(gc_domain *d, unsigned tag, size_t data_wsize, gc_value a, gc_value b,
                              const char *fn) {
  size_t words = gc_tag_weak_words(tag);
  if (data_wsize > GC_MAX_WSIZE - words) {
    gc_fail(d->heap, GC_ERR_TOO_LARGE, "%s: %zu data words exceed the maximum", fn, data_wsize);
    return 0;
  }
  /* The key and datum (the target) are the caller's, but the allocation may collect and run
   * finalizers, whose code may drop every other reference to them: they are roots of this call
   * until they are stored (a weak slot naming a block a collection inside the call freed would
   * dangle; found by the gcfuzz target, a finalizer's body overwriting the target's cell). */
  gc_value held[2] = {a, b};
  gc_frame frame;
  gc_frame_push(d, &frame, held, 2);
  gc_value v = gc_alloc_weak_block(d, words + data_wsize, tag);
  gc_frame_pop(d, &frame);
  a = held[0];
  b = held[1];
  if (v == 0) return 0;
  /* Initialising stores (gc.h, GC_FIELD): a block this domain just made, published nowhere,
   * UNMARKED with no cycle begun since, or born MARKED, so no marker reads it yet; and the list
   * is this domain's own. */
  gc_value *f = gc_fields(v);
  f[GC_WEAK_LINK] = d->ephe.head;
  if (tag == GC_TAG_EPHEMERON) {
    f[GC_EPHE_KEY] = a;
    f[GC_EPHE_DATUM] = b;
    d->ephe.ephemerons++;
  } else {
    f[GC_WEAK_TARGET] = a;
    d->ephe.weak_refs++;
  }
  d->ephe.head = v;
  return v;
}

/* What a read hands the mutator: while a cycle marks, shaded first, so that a block reachable
 * only through a weak slot when marking began is kept by the cycle now that the mutator holds
 * it (snapshot at the beginning: the mutator's roots are not scanned again). */
static gc_value read_slot(gc_domain *d, gc_value v, size_t i) {
  gc_value x = load_slot(v, i);
  if (gc_is_block(x) && __atomic_load_n(&d->head.marking, __ATOMIC_RELAXED)) {
    gc_mark_darken(d, x);
    gc_event_note(d->heap, GC_EVENT_WEAK_GET_SHADED);
  }
  return x;
}

/* A slot is a field like any other for the barrier: what it held is darkened while a cycle
 * marks, so an ephemeron's old key or datum cannot vanish from under a marker. */
static void write_slot(gc_domain *d, gc_value v, size_t i, gc_value x) {
  if (__atomic_load_n(&d->head.marking, __ATOMIC_RELAXED)) {
    gc_store_slow(d, v, i, x);
    return;
  }
  __atomic_store_n(&gc_fields(v)[i], x, __ATOMIC_RELEASE);
}

gc_value gc_ephemeron_alloc(gc_domain *d, gc_value key, gc_value datum, size_t data_wsize) {
  return alloc_on_list(d, GC_TAG_EPHEMERON, data_wsize, key, datum, "gc_ephemeron_alloc");
}

gc_value gc_weak_alloc(gc_domain *d, gc_value target, size_t data_wsize) {
  return alloc_on_list(d, GC_TAG_WEAK, data_wsize, target, 0, "gc_weak_alloc");
}

gc_value gc_ephemeron_key(gc_domain *d, gc_value ephe) {
  if (!is_kind(d, ephe, GC_TAG_EPHEMERON, "gc_ephemeron_key")) return 0;
  return read_slot(d, ephe, GC_EPHE_KEY);
}

gc_value gc_ephemeron_datum(gc_domain *d, gc_value ephe) {
  if (!is_kind(d, ephe, GC_TAG_EPHEMERON, "gc_ephemeron_datum")) return 0;
  if (load_slot(ephe, GC_EPHE_KEY) == 0) return 0; /* no key, or found dead: none */
  return read_slot(d, ephe, GC_EPHE_DATUM);
}

void gc_ephemeron_set_key(gc_domain *d, gc_value ephe, gc_value key) {
  if (is_kind(d, ephe, GC_TAG_EPHEMERON, "gc_ephemeron_set_key")) {
    write_slot(d, ephe, GC_EPHE_KEY, key);
  }
}

void gc_ephemeron_set_datum(gc_domain *d, gc_value ephe, gc_value datum) {
  if (is_kind(d, ephe, GC_TAG_EPHEMERON, "gc_ephemeron_set_datum")) {
    write_slot(d, ephe, GC_EPHE_DATUM, datum);
  }
}

gc_value gc_weak_get(gc_domain *d, gc_value weak) {
  if (!is_kind(d, weak, GC_TAG_WEAK, "gc_weak_get")) return 0;
  return read_slot(d, weak, GC_WEAK_TARGET);
}

void gc_weak_set(gc_domain *d, gc_value weak, gc_value target) {
  if (is_kind(d, weak, GC_TAG_WEAK, "gc_weak_set")) write_slot(d, weak, GC_WEAK_TARGET, target);
}
