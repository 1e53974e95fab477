/* The record of the heap at mark start; see snapshot.h. */
#include "invariants/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "invariants/rootset.h"
#include "invariants/values.h"

/* A block whose header the walk may trust: non-zero, a valid tag, a size that fits its slot (or
 * is a large size). Others are left out of the record: reach and checkmark name them. */
static int header_fits(const gc_heapindex_block *b) {
  size_t whsize = gc_hd_whsize(b->hd);
  return b->hd != 0 && gc_tag_is_valid(gc_hd_tag(b->hd)) && gc_hd_wsize(b->hd) > 0 &&
         whsize <= b->max_whsize && (b->max_whsize != SIZE_MAX || whsize > GC_SIZECLASS_MAX_WHSIZE);
}

/* ---- Lookups ------------------------------------------------------------------------------ */

/* Every slot's state is ABSENT above a pool's `initialised` mark, unwritten until a write
 * reaches it: the record clears only the slots below each pool's frontier, most of a small heap's
 * pools being mostly unused. */
static const uint32_t absent_state = GC_SNAP_ABSENT;

/* The state word of v if v is a slot start of a recorded pool, else NULL (a slot above its pool's
 * `initialised` mark: the shared ABSENT, never written through, as only a PRESENT word is). A
 * large block never lies in a recorded pool: nothing is freed (and no memory reused) between the
 * record and the end of marking. */
static const uint32_t *slot_state(gc_verify_snapshot *s, gc_value v, gc_snap_pool **pool,
                                  size_t *slot_out) {
  gc_header *hp = gc_hp_val(v);
  uintptr_t base = (uintptr_t)hp & ~(uintptr_t)(GC_POOL_BSIZE - 1);
  uint64_t i;
  if (base == 0 || !gc_poolmap_get(&s->pools, base, &i)) return NULL;
  gc_snap_pool *m = &s->pool_marks[i];
  if (hp < m->first) return NULL;
  size_t words = (size_t)(hp - m->first);
  if (words >= GC_POOL_WSIZE) return NULL;
  /* words / slot_whsize, by the reciprocal: exact for words < 2^32 / slot_whsize. */
  size_t slot = (size_t)(((uint64_t)words * m->slot_reciprocal) >> 32);
  if (slot * m->slot_whsize != words || slot >= m->slots) return NULL;
  *pool = m;
  *slot_out = slot;
  return slot < m->initialised ? &s->states[m->states + slot] : &absent_state;
}

/* v's state word (a gc_snap_state, or GC_SNAP_REACHED + a record index). */
static uint32_t state_word(gc_verify_snapshot *s, gc_value v) {
  if (!gc_is_block(v)) return GC_SNAP_ABSENT;
  gc_snap_pool *m;
  size_t slot;
  const uint32_t *st = slot_state(s, v, &m, &slot);
  if (st != NULL) return *st;
  uint64_t large;
  return gc_addrmap_get(&s->larges, v, &large) ? (uint32_t)large : GC_SNAP_ABSENT;
}

static int set_state_word(gc_verify_snapshot *s, gc_value v, uint32_t word) {
  gc_snap_pool *m;
  size_t slot;
  if (slot_state(s, v, &m, &slot) == NULL) return gc_addrmap_put(&s->larges, v, word);
  if (slot >= m->initialised) {
    memset(&s->states[m->states + m->initialised], 0,
           (slot + 1 - m->initialised) * sizeof *s->states);
    m->initialised = (uint32_t)slot + 1;
  }
  s->states[m->states + slot] = word;
  return 1;
}

/* ---- The walk ------------------------------------------------------------------------------ */

/* An edge met, not yet followed: its target's state word and header are being prefetched. The
 * walk is memory-bound (two cache misses a block: its state word, its header), so, as the marker
 * does (gc/mark.c), it lets SNAP_PREFETCH edges wait between meeting a target and reading it. */
typedef struct snap_edge {
  gc_value v;
  uintptr_t from;
  uint32_t field, via;
  /* Its slot's state word (slot_state: the shared ABSENT for a slot above the pool's
   * `initialised` mark); NULL: a large block, whose state is in the map. */
  uint32_t *state;
} snap_edge;

enum { SNAP_PREFETCH = 8 };

typedef struct snap_walk {
  gc_verify_snapshot *s;
  gc_value *ephe; /* the ephemerons and weak references recorded, for their rounds
                   * (follow_ephemerons, follow_weakly) */
  size_t ephe_count, ephe_capacity;
  size_t sp;
  snap_edge waiting[SNAP_PREFETCH]; /* a ring: the oldest at `head` */
  unsigned head, count;
  int out_of_memory;
} snap_walk;

static void push(snap_walk *w, gc_value v) {
  gc_verify_snapshot *s = w->s;
  if (!gc_verify_values_push(&s->stack, &w->sp, &s->stack_capacity, 1024, v)) {
    w->out_of_memory = 1;
  }
}

/* An ephemeron or a weak reference reached: its slots are followed after the strong walk
 * (follow_ephemerons, follow_weakly). */
static void note_weak_block(snap_walk *w, gc_value e) {
  if (!gc_verify_values_push(&w->ephe, &w->ephe_count, &w->ephe_capacity, 64, e)) {
    w->out_of_memory = 1;
  }
}

/* Follow edge e: record its target the first time, and walk on from it. */
static void follow(snap_walk *w, const snap_edge *e) {
  gc_verify_snapshot *s = w->s;
  uint64_t large = GC_SNAP_ABSENT;
  uint32_t word = e->state != NULL                           ? *e->state
                  : gc_addrmap_get(&s->larges, e->v, &large) ? (uint32_t)large
                                                             : GC_SNAP_ABSENT;
  if (word != GC_SNAP_PRESENT) {
    return; /* no block allocated now (other passes name it), or reached already */
  }
  if (s->reached_count == s->reached_capacity) {
    size_t capacity = s->reached_capacity ? 2 * s->reached_capacity : 1024;
    gc_snap_block *more = capacity <= UINT32_MAX - GC_SNAP_REACHED
                              ? realloc(s->reached, capacity * sizeof *more)
                              : NULL;
    if (more == NULL) {
      w->out_of_memory = 1;
      return;
    }
    s->reached = more;
    s->reached_capacity = capacity;
  }
  s->reached[s->reached_count] = (gc_snap_block){e->v, e->from, e->field, e->via};
  word = (uint32_t)(GC_SNAP_REACHED + s->reached_count);
  if (e->state != NULL) {
    *e->state = word;
  } else if (!gc_addrmap_put(&s->larges, e->v, word)) {
    w->out_of_memory = 1;
    return;
  }
  s->reached_count++;
  gc_header hd = gc_hd_val(e->v);
  if (gc_tag_is_weak(gc_hd_tag(hd)) && gc_hd_wsize(hd) >= gc_tag_weak_words(gc_hd_tag(hd))) {
    note_weak_block(w, e->v);
  }
  /* A NOT_MARKABLE block's fields are root slots of their own (rootset.h), as for the marker. */
  if (gc_tag_is_scanned(gc_hd_tag(hd)) && gc_hd_colour(hd) != GC_NOT_MARKABLE) push(w, e->v);
}

static void follow_oldest(snap_walk *w) {
  snap_edge e = w->waiting[w->head];
  w->head = (w->head + 1) % SNAP_PREFETCH;
  w->count--;
  follow(w, &e);
}

/* v was found through (via, from, field): follow the edge once its target is in the cache. */
static void reach(snap_walk *w, gc_value v, gc_snap_via via, uintptr_t from, size_t field) {
  if (!gc_is_block(v)) return;
  gc_snap_pool *m;
  size_t slot;
  /* Written through only when it holds PRESENT: never the shared ABSENT. */
  snap_edge e = {v, from, (uint32_t)field, (uint32_t)via,
                 (uint32_t *)slot_state(w->s, v, &m, &slot)};
  if (e.state == NULL) {
    follow(w, &e); /* a large block, or no block: rare */
    return;
  }
  __builtin_prefetch(e.state, 1);
  /* The header, and the line after it, which holds the fields of a small block that straddles a
   * line boundary (read when the block is scanned, as the walks of walk.c prefetch them too):
   * without it the scan's first read of the fields missed, a third of the record's time. */
  __builtin_prefetch(gc_hp_val(v), 0);
  __builtin_prefetch((const char *)gc_hp_val(v) + 64, 0);
  if (w->count == SNAP_PREFETCH) follow_oldest(w);
  w->waiting[(w->head + w->count) % SNAP_PREFETCH] = e;
  w->count++;
}

static void drain(snap_walk *w) {
  while ((w->sp > 0 || w->count > 0) && !w->out_of_memory) {
    if (w->sp == 0) {
      follow_oldest(w);
      continue;
    }
    gc_value v = w->s->stack[--w->sp];
    /* v's header fitted its slot when recorded PRESENT, and was read again when followed. */
    size_t wsize = gc_hd_wsize(gc_hd_val(v));
    const gc_value *fields = gc_fields(v);
    for (size_t base = 0; base < wsize; base += GC_VERIFY_FIELDS_PER_MASK) {
      size_t n =
          wsize - base < GC_VERIFY_FIELDS_PER_MASK ? wsize - base : GC_VERIFY_FIELDS_PER_MASK;
      for (uint64_t m = gc_verify_block_fields(fields + base, n); m != 0; m &= m - 1) {
        size_t f = base + (size_t)__builtin_ctzll(m);
        reach(w, fields[f], GC_SNAP_FIELD, v, f);
      }
    }
  }
}

static void visit_slot(void *ctx, gc_value *slot) {
  snap_walk *w = ctx;
  reach(w, *slot, GC_SNAP_ROOT_SLOT, (uintptr_t)slot, 0);
  drain(w);
}

static void visit_word(void *ctx, gc_value block, const uintptr_t *where) {
  snap_walk *w = ctx;
  reach(w, block, GC_SNAP_ROOT_WORD, (uintptr_t)where, 0);
  drain(w);
}

/* Ephemerons (gc.h): a datum was reachable at mark start only if its key was, by another path
 * (an immediate key always is). Rounds over the ephemerons recorded, until one records nothing
 * more: the fixpoint the collector's marking reaches (INV-EPHE-1), so what it keeps through a
 * live key is in the record, and nothing a datum reaches through its own key. */
static void follow_ephemerons(snap_walk *w) {
  gc_verify_snapshot *s = w->s;
  size_t before;
  do {
    before = s->reached_count;
    for (size_t i = 0; i < w->ephe_count && !w->out_of_memory; i++) {
      gc_value e = w->ephe[i];
      if (gc_hd_tag(gc_hd_val(e)) != GC_TAG_EPHEMERON) continue;
      gc_value key = gc_fields(e)[GC_EPHE_KEY], datum = gc_fields(e)[GC_EPHE_DATUM];
      if (!gc_is_block(datum) || state_word(s, datum) >= GC_SNAP_REACHED) continue;
      if (key == 0 || (gc_is_block(key) && state_word(s, key) < GC_SNAP_REACHED)) continue;
      reach(w, datum, GC_SNAP_FIELD, e, GC_EPHE_DATUM);
      drain(w);
    }
  } while (s->reached_count != before && !w->out_of_memory);
}

/* v, allocated at mark start and not reached, becomes GC_SNAP_WEAK, and so does what it reaches
 * (drain_weakly); a weak block met is recorded for its own slots. */
static void weak_reach(snap_walk *w, gc_value v) {
  if (!gc_is_block(v) || state_word(w->s, v) != GC_SNAP_PRESENT) return;
  if (!set_state_word(w->s, v, GC_SNAP_WEAK)) {
    w->out_of_memory = 1;
    return;
  }
  gc_header hd = gc_hd_val(v);
  if (gc_tag_is_weak(gc_hd_tag(hd)) && gc_hd_wsize(hd) >= gc_tag_weak_words(gc_hd_tag(hd))) {
    note_weak_block(w, v);
  }
  if (gc_tag_is_scanned(gc_hd_tag(hd)) && gc_hd_colour(hd) != GC_NOT_MARKABLE) push(w, v);
}

static void drain_weakly(snap_walk *w) {
  while (w->sp > 0 && !w->out_of_memory) {
    gc_value v = w->s->stack[--w->sp];
    size_t wsize = gc_hd_wsize(gc_hd_val(v));
    const gc_value *fields = gc_fields(v);
    for (size_t base = 0; base < wsize; base += GC_VERIFY_FIELDS_PER_MASK) {
      size_t n =
          wsize - base < GC_VERIFY_FIELDS_PER_MASK ? wsize - base : GC_VERIFY_FIELDS_PER_MASK;
      for (uint64_t m = gc_verify_block_fields(fields + base, n); m != 0; m &= m - 1) {
        weak_reach(w, fields[base + (size_t)__builtin_ctzll(m)]);
      }
    }
  }
}

/* After the strong walk and the ephemeron fixpoint: what a weak slot, an ephemeron's key slot or
 * the datum of an ephemeron whose key was not reached names at mark start, and everything under
 * it, is GC_SNAP_WEAK. A read during the mark shades what it returns (gc.h: gc_weak_get,
 * gc_ephemeron_key, gc_ephemeron_datum), so the cycle may keep such a block even after the
 * mutator dropped it again: floating garbage the collector documents, which the over-retention
 * check allows and nothing requires (satb.c asks only REACHED blocks to be marked). The list
 * grows while it is read: a weak block found here has slots of its own. */
static void follow_weakly(snap_walk *w) {
  for (size_t i = 0; i < w->ephe_count && !w->out_of_memory; i++) {
    gc_value e = w->ephe[i];
    const gc_value *f = gc_fields(e);
    if (gc_hd_tag(gc_hd_val(e)) == GC_TAG_EPHEMERON) {
      weak_reach(w, f[GC_EPHE_KEY]);
      weak_reach(w, f[GC_EPHE_DATUM]);
    } else {
      weak_reach(w, f[GC_WEAK_TARGET]);
    }
    drain_weakly(w);
  }
}

/* ---- The record ---------------------------------------------------------------------------- */

/* A record for pool p of class `cls`, its slots' states all ABSENT; NULL when out of memory. */
static gc_snap_pool *record_pool(gc_verify_snapshot *s, gc_pool *p, unsigned cls,
                                 gc_header *free_head, gc_header *frontier) {
  if (s->pool_count == s->pool_capacity) {
    size_t capacity = s->pool_capacity ? 2 * s->pool_capacity : 64;
    gc_snap_pool *more = realloc(s->pool_marks, capacity * sizeof *more);
    if (more == NULL) return NULL;
    s->pool_marks = more;
    s->pool_capacity = capacity;
  }
  uint32_t slots = gc_slots_of_class((gc_sizeclass)cls);
  if (s->states_count + slots > s->states_capacity) {
    size_t capacity = s->states_capacity ? 2 * s->states_capacity : 16384;
    while (capacity < s->states_count + slots) capacity *= 2;
    uint32_t *more = realloc(s->states, capacity * sizeof *more);
    if (more == NULL) return NULL;
    s->states = more;
    s->states_capacity = capacity;
  }
  gc_header *first = gc_pool_first_slot(p);
  /* Slots below the frontier, a slot it cuts (a corrupt frontier) included. */
  size_t whsize = gc_wsize_of_class[cls];
  uint32_t below =
      frontier > first ? (uint32_t)(((size_t)(frontier - first) + whsize - 1) / whsize) : 0;
  if (below > slots) below = slots;
  memset(&s->states[s->states_count], 0, below * sizeof *s->states);
  gc_snap_pool *m = &s->pool_marks[s->pool_count];
  *m = (gc_snap_pool){.pool = p,
                      .first = first,
                      .slot_whsize = (uint32_t)whsize,
                      .slot_reciprocal = (uint32_t)((((uint64_t)1) << 32) / whsize + 1),
                      .slots = slots,
                      .initialised = below,
                      .states = s->states_count,
                      .free_checked = free_head,
                      .free_end = frontier,
                      .frontier_checked = frontier};
  if (gc_poolmap_put(&s->pools, (uintptr_t)p, s->pool_count) == 0) return NULL;
  s->states_count += slots;
  s->pool_count++;
  return m;
}

/* Every block allocated now, PRESENT: each pool's slots below its frontier with a header that
 * fits (free slots have none), and the large blocks, as the heap index lists them. */
static int record_blocks(gc_verify_snapshot *s, gc_heapindex *ix) {
  for (size_t i = 0; i < ix->pool_count; i++) {
    unsigned cls = (unsigned)ix->pool_list[i].word;
    if (cls >= GC_NUM_SIZECLASSES) continue; /* a corrupt class: where its slots are is unknown */
    gc_pool *p = (gc_pool *)ix->pool_list[i].key;
    gc_header *first = gc_pool_first_slot(p);
    size_t whsize = gc_wsize_of_class[cls];
    gc_header *end = first + (size_t)gc_slots_of_class((gc_sizeclass)cls) * whsize;
    gc_header *frontier = p->frontier; /* a corrupt one is kept inside the pool's slots */
    gc_header *limit = frontier < first ? first : frontier > end ? end : frontier;
    gc_snap_pool *m = record_pool(s, p, cls, p->free_list, limit);
    if (m == NULL) return 0;
    uint32_t *state = &s->states[m->states];
    for (gc_header *hp = first; hp < limit; hp += whsize, state++) {
      gc_heapindex_block b = {gc_val_hp(hp), *hp, whsize};
      if (header_fits(&b)) *state = GC_SNAP_PRESENT;
    }
  }
  for (size_t i = 0; i < ix->large_count; i++) {
    gc_header *hp = gc_large_hp((gc_large *)(uintptr_t)ix->large_list[i].word);
    gc_heapindex_block b = {gc_val_hp(hp), *hp, SIZE_MAX};
    if (header_fits(&b) && !gc_addrmap_put(&s->larges, b.v, GC_SNAP_PRESENT)) return 0;
  }
  return 1;
}

int gc_verify_snapshot_take(gc_verify_snapshot *s, gc_heap *heap, gc_heapindex *ix) {
  s->taken = 1;
  s->heap = heap;
  s->cycle = heap->cycles;
  s->reached_count = 0;
  s->pool_count = 0;
  s->states_count = 0;
  int ok = gc_poolmap_reset(&s->pools) && gc_addrmap_reset(&s->larges, 0) && ix->complete &&
           record_blocks(s, ix);
  snap_walk w = {.s = s, .sp = 0, .out_of_memory = !ok};
  if (ok) gc_verify_visit_roots(heap, ix, visit_slot, visit_word, &w);
  /* A pinned block is live because it is pinned, not because a root reaches it. */
  for (size_t i = 0; ok && i < heap->pinned.count; i++) {
    reach(&w, (gc_value)heap->pinned.items[i], GC_SNAP_PINNED, 0, 0);
    drain(&w);
  }
  if (ok) follow_ephemerons(&w);
  if (ok) follow_weakly(&w);
  free(w.ephe);
  s->complete = !w.out_of_memory;
  return s->complete;
}

int gc_verify_snapshot_current(const gc_verify_snapshot *s, const gc_heap *heap) {
  return s != NULL && s->taken && s->heap == heap && s->complete && s->cycle == heap->cycles;
}

gc_snap_state gc_verify_snapshot_state(gc_verify_snapshot *s, gc_value v) {
  uint32_t word = state_word(s, v);
  return word >= GC_SNAP_REACHED ? GC_SNAP_REACHED : (gc_snap_state)word;
}

const gc_snap_block *gc_verify_snapshot_reached(gc_verify_snapshot *s, gc_value v) {
  uint32_t word = state_word(s, v);
  return word >= GC_SNAP_REACHED ? &s->reached[word - GC_SNAP_REACHED] : NULL;
}

int gc_verify_snapshot_present(gc_verify_snapshot *s, gc_value v) {
  uint32_t word = state_word(s, v);
  return word == GC_SNAP_PRESENT || word == GC_SNAP_WEAK || word >= GC_SNAP_REACHED;
}

int gc_verify_snapshot_may_keep(gc_verify_snapshot *s, gc_value v) {
  return state_word(s, v) != GC_SNAP_PRESENT;
}

int gc_verify_snapshot_allows_unrooted(gc_verify_snapshot *s, const gc_heap *heap, gc_value v) {
  if (!heap->trace.incremental) return 0;
  if (!gc_verify_snapshot_current(s, heap)) return 1;
  return gc_verify_snapshot_may_keep(s, v);
}

void gc_verify_snapshot_set_born_reported(gc_verify_snapshot *s, gc_value v) {
  /* Out of memory in the large map: reported again at the next look, no worse. */
  if (gc_is_block(v)) (void)set_state_word(s, v, GC_SNAP_BORN_REPORTED);
}

gc_snap_pool *gc_verify_snapshot_pool(gc_verify_snapshot *s, gc_pool *p) {
  uint64_t i;
  if (gc_poolmap_get(&s->pools, (uintptr_t)p, &i)) return &s->pool_marks[i];
  /* New since mark start (a fresh pool): no slot of it was allocated then. */
  return record_pool(s, p, p->size_class, NULL, gc_pool_first_slot(p));
}

void gc_verify_snapshot_free(gc_verify_snapshot *s) {
  gc_poolmap_free(&s->pools);
  gc_addrmap_free(&s->larges);
  free(s->states);
  free(s->reached);
  free(s->stack);
  free(s->pool_marks);
  memset(s, 0, sizeof *s);
}
