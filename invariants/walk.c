/* The walk from the roots (see walk.h), and the description of roots for reports.
 *
 * Two modes, one traversal. Without paths (the first run, every time), the blocks met are the
 * seen set's bits (seenset.h) and nothing else is written per block. With paths (a second run,
 * only after the first met a violation), the address map also records, for each block met, how it
 * was first reached: the val of the block whose field pointed at it (even), or
 * (root ordinal << 1) | 1 for a block held by the ordinal-th root, in the order
 * gc_verify_visit_roots (rootset.h) enumerates them (odd, so the two never collide). That one word
 * per block is the whole path: a report follows it back to the root and finds each field index by
 * looking for the child in its referrer's fields.
 *
 * The first run stops at its first violation and the second walks again from the start: the heap
 * has not changed and the traversal is the same (same roots in the same order, same prefetch ring,
 * same checks), so the second meets exactly the blocks and violations a single recording walk
 * would, in the same order, and its reports are the pass's. A correct heap, the case every cycle
 * of a fuzzing run is, pays for the bits only. A pass called directly (not at a hook point) walks
 * with paths at once: it is mostly asked about a heap broken on purpose.
 */
#include "invariants/walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants/rootset.h"
#include "invariants/values.h"

/* A pointer found but not yet examined, and how it was found (the map value it will get). */
typedef struct pending {
  gc_value v;
  uint64_t referrer;
} pending;

/* Pointers in flight between finding and examining. Examining one costs two cache misses (its
 * address-map bucket and its header); both are prefetched when the pointer is found and used
 * PREFETCH_DEPTH pointers later, as the marker does with its headers. */
enum { PREFETCH_DEPTH = 32 };

typedef struct walk {
  const gc_verify_run *run;
  const gc_walk_rules *rules;
  gc_heapindex *ix; /* in the scratch memory */
  gc_verify_scratch *s;
  size_t sp;
  size_t root_ordinal;
  size_t found;
  size_t of_colour[4]; /* blocks that passed every check, by colour */
  int out_of_memory;
  gc_value *ephe; /* the ephemerons reached, for their rounds (walk_ephemerons) */
  size_t ephe_count, ephe_capacity;
  /* 1: record each block's referrer in s->seen, and report violations with their paths. 0: only
   * the seen set; the first violation stops the walk (`violated`) for a run with paths. */
  int record_paths;
  int violated;
  pending fifo[PREFETCH_DEPTH]; /* in flight: the fifo_count slots before fifo_head (the rest are
                                 * not read, nor cleared before a walk) */
  unsigned fifo_head, fifo_count;
} walk;

/* ---- Reports ------------------------------------------------------------------------------- */

/* The path from the root to `v`, through the referrers recorded in the map. */
static void report_path(walk *w, gc_verify_report *r, gc_value v) {
  /* Most paths are short: their steps are collected on the stack, and only a longer one moves
   * to the heap (gc_verify_report_path keeps a copy either way). */
  enum { ON_STACK = 16 };
  gc_verify_step on_stack[ON_STACK];
  size_t capacity = ON_STACK, count = 0;
  gc_verify_step *steps = on_stack;
  uint64_t ref = 0;
  size_t bound = w->s->seen.count + 1; /* each step goes to an older block: no more than this */
  while (gc_addrmap_get(&w->s->seen, v, &ref) && (ref & 1) == 0 && bound-- > 0) {
    gc_value parent = (gc_value)ref;
    gc_header hd = gc_hd_val(parent); /* the parent was scanned, so it passed every check */
    size_t field = 0, wsize = gc_hd_wsize(hd);
    while (field < wsize && gc_fields(parent)[field] != v) field++;
    if (count == capacity) {
      gc_verify_step *more =
          realloc(steps == on_stack ? NULL : steps, 2 * capacity * sizeof *steps);
      if (more == NULL) break;
      if (steps == on_stack) memcpy(more, on_stack, sizeof on_stack);
      steps = more;
      capacity *= 2;
    }
    steps[count++] = (gc_verify_step){parent, field, hd, gc_verify_colour_of(w->run->heap, hd)};
    v = parent;
  }
  for (size_t i = 0; i < count / 2; i++) { /* collected bad-block first: reverse */
    gc_verify_step t = steps[i];
    steps[i] = steps[count - 1 - i];
    steps[count - 1 - i] = t;
  }
  char origin[160];
  if (ref & 1) {
    gc_verify_describe_root(w->run->heap, w->ix, (size_t)(ref >> 1), origin, sizeof origin);
  } else {
    snprintf(origin, sizeof origin, "(path lost)");
  }
  gc_verify_report_path(r, origin, steps, count);
  if (steps != on_stack) free(steps);
}

/* Count and report a violation on block v; returns 0 so checks can `return violation(...)`. */
static int violation(walk *w, gc_verify_kind kind, gc_value v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noinline, cold));

static int violation(walk *w, gc_verify_kind kind, gc_value v, const char *fmt, ...) {
  if (!w->record_paths) { /* no path to report it with: walk again with paths */
    w->violated = 1;
    return 0;
  }
  w->found++;
  gc_verify_report *r = gc_verify_report_new(w->run, kind);
  if (r == NULL) return 0;
  gc_verify_report_block(r, w->ix, v);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
  report_path(w, r, v);
  gc_verify_report_neighbourhood(r, w->ix);
  return 0;
}

/* ---- The walk ------------------------------------------------------------------------------ */

static void push(walk *w, gc_value v) {
  gc_verify_scratch *s = w->s;
  if (!gc_verify_values_push(&s->stack, &w->sp, &s->stack_capacity, 1024, v)) {
    w->out_of_memory = 1;
  }
}

static void note_ephemeron(walk *w, gc_value e) {
  if (!gc_verify_values_push(&w->ephe, &w->ephe_count, &w->ephe_capacity, 64, e)) {
    w->out_of_memory = 1;
  }
}

/* A pointer that is not a block start (INV-POOL-1: blocks start at slot boundaries). */
static int bad_location(walk *w, gc_value v) {
  gc_loc loc = gc_heapindex_locate(w->ix, v);
  if (loc.kind == GC_LOC_OUTSIDE) {
    return violation(w, w->rules->foreign, v,
                     "a reachable pointer points outside every pool and large block in use");
  }
  return violation(w, w->rules->interior, v,
                   "a reachable pointer points inside a pool or large block but not at a block "
                   "(INV-POOL-1: blocks start at slot boundaries)");
}

/* Check the block v, first met just now, and push it if its fields are to be walked: `p` the
 * pool (class `c`) of which v is a slot start (examine checked that), or NULL for a large block
 * of the index. Returns 0 after reporting a violation. */
static inline int check(walk *w, gc_value v, gc_pool *p, unsigned c) {
  gc_header *hp = gc_hp_val(v);
  size_t max_whsize = p != NULL ? gc_wsize_of_class[c] : SIZE_MAX; /* a slot start: examine */
  gc_header hd = *hp;
  if (hd == 0) {
    return violation(w, w->rules->zero_header, v,
                     "a reachable slot has a zero header: it is free (INV-HD-1), so the block "
                     "that was there has been freed while still reachable");
  }
  size_t whsize = gc_hd_whsize(hd);
  if (!gc_tag_is_valid(gc_hd_tag(hd)) || whsize > max_whsize || gc_hd_wsize(hd) == 0 ||
      (p == NULL && whsize <= GC_SIZECLASS_MAX_WHSIZE)) {
    return violation(w, w->rules->bad_header, v,
                     "a reachable block has an impossible header: invalid tag, no size, or a "
                     "size that does not fit its %s (INV-POOL-1)",
                     p != NULL ? "slot" : "large block");
  }
  gc_header colour = gc_hd_colour(hd);
  if (!((w->rules->allowed_colours >> (colour >> GC_HD_COLOUR_SHIFT)) & 1u)) {
    return violation(w, w->rules->bad_colour, v, "a reachable block is %s; it must be %s",
                     gc_colour_name(w->run->heap, colour), w->rules->expected);
  }
  w->of_colour[colour >> GC_HD_COLOUR_SHIFT]++;
  if (gc_hd_tag(hd) == GC_TAG_EPHEMERON && gc_hd_wsize(hd) >= GC_EPHE_DATA) note_ephemeron(w, v);
  /* NOT_MARKABLE blocks are not scanned by the marker either: a pinned block's fields are root
   * slots of their own (rootset.h), which is how this walk reaches them. */
  if (gc_tag_is_scanned(gc_hd_tag(hd)) && colour != GC_NOT_MARKABLE) push(w, v);
  return 1;
}

/* hp is the start of a slot below the frontier of pool p of class c (INV-POOL-1). */
static inline int slot_start(const gc_pool *p, unsigned c, const gc_header *hp) {
  if (c >= GC_NUM_SIZECLASSES) return 0;
  const gc_header *first = gc_pool_first_slot((gc_pool *)p);
  if (hp < first || hp >= p->frontier) return 0;
  /* A pool's words fit 32 bits: the narrower division is the cheaper one. */
  return (uint32_t)(hp - first) % (uint32_t)gc_wsize_of_class[c] == 0;
}

/* The first time v is met: add it to the seen set (and, with paths, record how it was reached),
 * and check it. With paths the address map decides what is new, as it also holds the pointers
 * that are no block start (a foreign pointer met twice is reported once); without, such a
 * pointer is a violation, which stops the walk anyway. So only a block start takes a bit. */
static inline void examine(walk *w, gc_value v, uint64_t referrer) {
  if (w->record_paths) {
    int added = gc_addrmap_add(&w->s->seen, v, referrer);
    if (added < 0) w->out_of_memory = 1;
    if (added <= 0) return;
  }
  gc_header *hp = gc_hp_val(v);
  unsigned c;
  size_t ordinal;
  gc_pool *p = gc_heapindex_pool_at(w->ix, (uintptr_t)hp, &c, &ordinal);
  if (p != NULL) {
    if (!slot_start(p, c, hp)) {
      bad_location(w, v);
    } else if (gc_seenset_add_in_pool(&w->s->reached, ordinal, hp) || w->record_paths) {
      check(w, v, p, c);
    }
    return;
  }
  if (gc_heapindex_large(w->ix, v, &ordinal) != NULL) {
    if (gc_seenset_add_large(&w->s->reached, ordinal) || w->record_paths) check(w, v, NULL, 0);
    return;
  }
  bad_location(w, v);
}

/* The walk stops: out of memory, or a violation met without paths. */
static inline int stopped(const walk *w) { return w->out_of_memory | w->violated; }

/* v was found (in a field of referrer, or a root): prefetch, and examine the oldest in flight.
 * Two cache lines of the block: its header, and the line after it, which holds the fields of a
 * small block that straddles a line boundary (read when the block is scanned). Prefetching a wild
 * pointer is harmless: a prefetch never faults. */
static inline void consider(walk *w, gc_value v, uint64_t referrer) {
  if (w->record_paths) gc_addrmap_prefetch(&w->s->seen, v);
  __builtin_prefetch(gc_hp_val(v));
  __builtin_prefetch((const char *)gc_hp_val(v) + 64);
  /* The fifo_count entries in flight are the slots just before the head; the slot at the head
   * is the oldest of them when all are in flight, else free. */
  unsigned i = w->fifo_head;
  w->fifo_head = (i + 1) % PREFETCH_DEPTH;
  if (w->fifo_count == PREFETCH_DEPTH) {
    pending oldest = w->fifo[i];
    w->fifo[i] = (pending){v, referrer};
    examine(w, oldest.v, oldest.referrer);
  } else {
    w->fifo[i] = (pending){v, referrer};
    w->fifo_count++;
  }
}

/* Examine everything in flight, oldest first; returns 1 if there was anything. The entries in
 * flight are always the fifo_count slots just before fifo_head (consider fills the slot at the
 * head, which is free unless all are in flight), so only those are visited: a walk of a small
 * heap flushes after almost every root, and must not pay for the whole ring each time. */
static int flush(walk *w) {
  unsigned n = w->fifo_count;
  if (n == 0) return 0;
  w->fifo_count = 0;
  unsigned i = (w->fifo_head + PREFETCH_DEPTH - n) % PREFETCH_DEPTH;
  for (unsigned k = 0; k < n; k++, i = (i + 1) % PREFETCH_DEPTH) {
    pending p = w->fifo[i];
    examine(w, p.v, p.referrer); /* never calls consider: the ring does not move meanwhile */
  }
  return 1;
}

/* Until the stack and the FIFO are both empty. */
static void drain(walk *w) {
  do {
    while (w->sp > 0 && !stopped(w)) {
      gc_value v = w->s->stack[--w->sp]; /* push may move the stack: index it afresh */
      size_t wsize = gc_hd_wsize(gc_hd_val(v));
      const gc_value *fields = gc_fields(v);
      for (size_t base = 0; base < wsize; base += GC_VERIFY_FIELDS_PER_MASK) {
        size_t n =
            wsize - base < GC_VERIFY_FIELDS_PER_MASK ? wsize - base : GC_VERIFY_FIELDS_PER_MASK;
        for (uint64_t m = gc_verify_block_fields(fields + base, n); m != 0; m &= m - 1) {
          consider(w, fields[base + (size_t)__builtin_ctzll(m)], (uint64_t)v);
        }
      }
    }
  } while (flush(w) && !stopped(w));
}

/* An ephemeron's key is alive by other means when the walk reached it, or it is pinned (a pinned
 * block lives without a root), or it is an immediate. */
/* Whether this walk met v already: with paths every block met is in the map (a bad one too);
 * without, a bad one stops the walk, so the seen set is enough. */
static int met(walk *w, gc_value v) {
  return w->record_paths ? gc_addrmap_has(&w->s->seen, v)
                         : gc_seenset_has_block(&w->s->reached, w->ix, v);
}

static int key_alive(walk *w, gc_value key) {
  if (key == 0) return 0;
  if (!gc_is_block(key) || met(w, key)) return 1;
  gc_header hd;
  if (w->rules->key_colours != 0 && gc_heapindex_read_header(w->ix, key, &hd) &&
      ((w->rules->key_colours >> (gc_hd_colour(hd) >> GC_HD_COLOUR_SHIFT)) & 1u)) {
    return 1;
  }
  const gc_ptr_vec *pinned = &w->run->heap->pinned;
  for (size_t i = 0; i < pinned->count; i++) {
    if ((gc_value)pinned->items[i] == key) return 1;
  }
  return 0;
}

/* Ephemerons (gc.h): a datum is reachable only once its key is, by another path. Rounds over
 * the ephemerons reached until one reaches nothing more (INV-EPHE-1's fixpoint, derived again):
 * a datum found here is reached from its ephemeron (field GC_EPHE_DATUM, as report paths show
 * it), and nothing is reached through a key. */
static void walk_ephemerons(walk *w) {
  /* A pinned ephemeron lives without a root: its datum follows its key like any other's. */
  const gc_ptr_vec *pinned = &w->run->heap->pinned;
  for (size_t i = 0; i < pinned->count && !w->out_of_memory; i++) {
    gc_value v = (gc_value)pinned->items[i];
    gc_header hd;
    if (gc_heapindex_read_header(w->ix, v, &hd) && gc_hd_tag(hd) == GC_TAG_EPHEMERON &&
        gc_hd_wsize(hd) >= GC_EPHE_DATA) {
      note_ephemeron(w, v);
    }
  }
  int progress;
  do {
    progress = 0;
    for (size_t i = 0; i < w->ephe_count && !w->out_of_memory && !stopped(w); i++) {
      gc_value e = w->ephe[i];
      gc_value datum = gc_fields(e)[GC_EPHE_DATUM];
      if (!gc_is_block(datum) || met(w, datum)) continue;
      if (!key_alive(w, gc_fields(e)[GC_EPHE_KEY])) continue;
      consider(w, datum, (uint64_t)e);
      drain(w);
      progress = 1; /* a datum not met before is met now */
    }
  } while (progress && !w->out_of_memory && !stopped(w));
}

static void walk_root(void *ctx, gc_value *slot) {
  walk *w = ctx;
  w->root_ordinal++;
  if (stopped(w)) return;
  gc_value v = *slot;
  if (!gc_is_block(v)) return;
  consider(w, v, ((uint64_t)w->root_ordinal << 1) | 1u);
  drain(w);
}

/* A conservative word resolved to a block: a root. Its ordinal continues after the slot roots'
 * (gc_verify_describe_root counts the same way). */
static void visit_conservative(void *ctx, gc_value block, const uintptr_t *where) {
  (void)where;
  walk_root(ctx, &block);
}

/* One walk from every root, with or without paths, from an empty seen set (and map). */
static void walk_from_roots(walk *w, int record_paths) {
  w->record_paths = record_paths;
  w->violated = 0;
  w->sp = 0;
  w->root_ordinal = 0;
  w->found = 0;
  memset(w->of_colour, 0, sizeof w->of_colour);
  w->fifo_head = 0;
  w->fifo_count = 0;
  if (!gc_seenset_reset(&w->s->reached, w->ix) ||
      (record_paths && !gc_addrmap_reset(&w->s->seen, 0))) {
    w->out_of_memory = 1; /* the map keeps its buckets, and grows if need be */
    return;
  }
  w->ephe_count = 0;
  /* The roots as the verifier enumerates them (rootset.h), not as the collector does. */
  gc_verify_visit_roots(w->run->heap, w->ix, walk_root, visit_conservative, w);
  if (!w->out_of_memory) walk_ephemerons(w);
}

size_t gc_walk_run(const gc_verify_run *run, const gc_walk_rules *rules, gc_walk_seen *seen) {
  gc_verify_scratch own;
  if (run->scratch == NULL) memset(&own, 0, sizeof own);
  walk w; /* the ring is read only where written (consider, flush); the rest is set below */
  w.run = run;
  w.rules = rules;
  w.s = run->scratch != NULL ? run->scratch : &own;
  w.ix = &w.s->index;
  w.out_of_memory = 0;
  w.ephe = w.s->ephe; /* its memory only: the count starts at 0 in each walk_from_roots */
  w.ephe_capacity = w.s->ephe_capacity;
  int index_ok = run->index_built && w.s == run->scratch ? run->index_complete
                                                         : gc_heapindex_build(w.ix, run->heap);
  if (!index_ok) {
    w.out_of_memory = 1;
  } else {
    /* At a hook point the heap is expected to be correct: without paths first. A pass called
     * directly is mostly asked about a heap broken on purpose (the tests, the fuzz driver's
     * corrupt op, which plants a corruption and checks that it is reported): with paths at once,
     * rather than a walk up to the violation and another from the start. */
    walk_from_roots(&w, !run->at_hook);
    if (w.violated && !w.out_of_memory) walk_from_roots(&w, 1); /* the reports, with paths */
  }
  w.s->ephe = w.ephe;
  w.s->ephe_capacity = w.ephe_capacity;
  if (w.out_of_memory) {
    /* The walk is incomplete: say so rather than pass a heap it did not see. */
    fprintf(stderr,
            "gcfuzz verify: out of memory during the %s walk; it checked part of the "
            "heap only\n",
            gc_verify_kind_pass(rules->bad_colour));
  }
  if (seen != NULL) {
    memcpy(seen->blocks_of_colour, w.of_colour, sizeof w.of_colour);
    seen->complete = !w.out_of_memory;
  }
  if (w.s == &own) gc_verify_scratch_free(&own);
  return w.found;
}

void gc_verify_scratch_free(gc_verify_scratch *s) {
  gc_addrmap_free(&s->seen);
  gc_addrmap_free(&s->listed);
  free(s->over.items);
  free(s->over.stack);
  gc_addrmap_free(&s->over.index);
  gc_seenset_free(&s->reached);
  gc_heapindex_free(&s->index);
  gc_verify_snapshot_free(&s->snapshot);
  free(s->moved.pools); /* the moved pass's record (pass.h) */
  free(s->moved.fixed);
  free(s->stack);
  free(s->ephe);
  memset(s, 0, sizeof *s);
}

/* ---- Describing a root slot ---------------------------------------------------------------- */

typedef struct find_root {
  size_t want, seen;
  gc_value *slot;        /* the slot roots' ordinal-th, or */
  const uintptr_t *word; /* the conservative word's address, and */
  gc_value block;        /* the block it resolved to */
} find_root;

static void find_root_visit(void *ctx, gc_value *slot) {
  find_root *f = ctx;
  if (++f->seen == f->want) f->slot = slot;
}

static void find_conservative_visit(void *ctx, gc_value block, const uintptr_t *where) {
  find_root *f = ctx;
  if (++f->seen == f->want) {
    f->word = where;
    f->block = block;
  }
}

/* Which root set holds `slot`: each set the root enumeration draws from, in words. */
void gc_verify_describe_slot(gc_heap *heap, gc_value *slot, char *buf, size_t buf_len) {
  for (size_t i = 0; i < heap->global_roots.count; i++) {
    if (heap->global_roots.items[i] == (void *)slot) {
      snprintf(buf, buf_len, "global root #%zu (slot %p)", i, (void *)slot);
      return;
    }
  }
  size_t cursor = 0;
  gc_verify_owner o;
  while (gc_verify_owner_next(heap, &cursor, &o)) {
    if (o.domain == NULL) continue;
    size_t depth = 0;
    for (gc_frame *fr = o.domain->head.frames; fr != NULL; fr = fr->prev, depth++) {
      if (slot >= fr->slots && slot < fr->slots + fr->count) {
        snprintf(buf, buf_len, "%s local root frame %zu (0 = innermost), slot %zu", o.name, depth,
                 (size_t)(slot - fr->slots));
        return;
      }
    }
  }
  for (size_t i = 0; i < heap->pinned.count; i++) {
    gc_value v = (gc_value)heap->pinned.items[i];
    if (slot >= gc_fields(v) && slot < gc_fields(v) + gc_wsize(v)) {
      snprintf(buf, buf_len, "pinned block %#llx, field %zu", (unsigned long long)v,
               (size_t)(slot - gc_fields(v)));
      return;
    }
  }
  for (size_t i = 0; i < heap->finalizers.count; i++) {
    gc_value v = heap->finalizers.items[i].block;
    if (slot >= gc_fields(v) && slot < gc_fields(v) + gc_wsize(v)) {
      snprintf(buf, buf_len, "field %zu of block %#llx, which has a finalizer (INV-FIN-1)",
               (size_t)(slot - gc_fields(v)), (unsigned long long)v);
      return;
    }
  }
  for (size_t i = 0; i < heap->finq.count; i++) {
    if (slot == &heap->finq.items[i].block) {
      snprintf(buf, buf_len, "finalizer queue entry %zu (INV-FIN-1)", i);
      return;
    }
  }
  if (slot == &heap->fin_running) {
    snprintf(buf, buf_len, "the block whose finalizer is running (INV-FIN-1)");
    return;
  }
  snprintf(buf, buf_len, "root slot %p from an embedder's root scanner", (void *)slot);
}

void gc_verify_describe_root(gc_heap *heap, gc_heapindex *ix, size_t ordinal, char *buf,
                             size_t buf_len) {
  find_root f;
  memset(&f, 0, sizeof f);
  f.want = ordinal;
  gc_verify_visit_roots(heap, ix, find_root_visit, find_conservative_visit, &f);
  if (f.slot != NULL) {
    gc_verify_describe_slot(heap, f.slot, buf, buf_len);
    return;
  }
  if (f.word != NULL) {
    snprintf(buf, buf_len, "conservative range word at %p (value %#llx, in block %#llx)",
             (const void *)f.word, (unsigned long long)*f.word, (unsigned long long)f.block);
    return;
  }
  snprintf(buf, buf_len, "root #%zu (no longer enumerated)", ordinal);
}
