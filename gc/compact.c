/* Compaction (compact.h). The invariants are INV-COMPACT-1..3 in heap.h.
 *
 * One domain moves everything, the leader of the stop, while the others wait at the stop's
 * barrier. A first version on purpose: the moves are a copy per live block of the evacuated
 * pools, but forwarding reads every field of every live block of the heap, and splitting that
 * walk between the parked domains would need the pools handed out (as the sweep's lists) and
 * each domain's destination slots kept apart (as its own free lists are), for a gain that the
 * measurements of a later benchmark have to show first.
 *
 * Per owner (each domain, after the leader adopted the orphans) and size class:
 *   1. count each pool's blocks; a pool holding a block that must not move (INV-COMPACT-2:
 *      pinned, named by a conservative word, its finalizer running) is kept;
 *   2. evacuate the sparsest of the others while the pools left still have a slot for every
 *      block of the class (INV-COMPACT-3);
 *   3. move each block of an evacuated pool into a free slot of a kept one (the free list's
 *      head first, so it stays ascending, then the frontier, which so stays right above a
 *      block: INV-POOL-1, INV-SPACE-1), leaving a forwarding header and the new address in the
 *      old slot.
 * Then every reference is forwarded (INV-COMPACT-1) and the evacuated pools, and every free
 * pool, go back to the OS or the pool cache.
 */
#include "gc/compact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/conservative.h"
#include "gc/large.h"
#include "gc/mark.h"
#include "gc/orphan.h"
#include "gc/pool.h"
#include "gc/poolset.h"

/* ---- Pools that keep their blocks ------------------------------------------------------------ */

typedef struct pool_vec {
  gc_pool **items;
  size_t count, capacity;
  int failed; /* a push found no memory: the vector is incomplete */
} pool_vec;

static void pool_vec_push(pool_vec *v, gc_pool *p) {
  if (v->failed) return;
  if (v->count == v->capacity) {
    size_t capacity = v->capacity ? v->capacity * 2 : 64;
    gc_pool **items = realloc(v->items, capacity * sizeof *items);
    if (items == NULL) {
      v->failed = 1;
      return;
    }
    v->items = items;
    v->capacity = capacity;
  }
  v->items[v->count++] = p;
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (gc_pool *const *)a, y = (uintptr_t) * (gc_pool *const *)b;
  return (x > y) - (x < y);
}

/* One pool of the class being compacted. */
typedef struct pool_use {
  gc_pool *pool;
  size_t live;   /* blocks in it */
  int immovable; /* holds a block of INV-COMPACT-2 */
  int evacuate;
} pool_use;

/* Sparsest first; by address among equals, so a heap compacts the same way on every run. */
static int by_live(const void *a, const void *b) {
  const pool_use *x = a, *y = b;
  if (x->live != y->live) return x->live < y->live ? -1 : 1;
  return by_address(&x->pool, &y->pool);
}

typedef struct compactor {
  gc_heap *heap;
  pool_vec immovable; /* sorted: pools holding a block that must not move */
  pool_use *uses;     /* scratch for one class */
  size_t uses_capacity;
  gc_pool *evacuated; /* every pool evacuated, linked through `next`, given back at the end */
  size_t pools, blocks, words;
  int record; /* a hook is installed: the moves are kept for it (INV-COMPACT-4) */
} compactor;

/* The pool of the small block v, or NULL for a large block. */
static gc_pool *pool_of_block(gc_heap *heap, gc_value v) {
  gc_pool *p = gc_pool_of_hp(gc_hp_val(v));
  return gc_pool_set_contains(heap, p) ? p : NULL;
}

static void note_immovable(compactor *c, gc_value v) {
  if (!gc_is_block(v)) return;
  gc_pool *p = pool_of_block(c->heap, v);
  if (p != NULL) pool_vec_push(&c->immovable, p);
}

static void note_conservative(void *ctx, gc_value block, const uintptr_t *where) {
  (void)where;
  note_immovable(ctx, block);
}

/* INV-COMPACT-2: the pools that keep every block. 0 without the memory to list them. */
static int find_immovable(compactor *c) {
  gc_heap *heap = c->heap;
  for (size_t i = 0; i < heap->pinned.count; i++)
    note_immovable(c, (gc_value)heap->pinned.items[i]);
  gc_conservative_visit(heap, note_conservative, c);
  note_immovable(c, heap->fin_running); /* the running finalizer holds it in a C variable */
  if (c->immovable.failed) return 0;
  if (c->immovable.count > 1) {
    qsort(c->immovable.items, c->immovable.count, sizeof(gc_pool *), by_address);
  }
  return 1;
}

static int is_immovable(const compactor *c, gc_pool *p) {
  if (c->immovable.count == 0) return 0; /* no array at all */
  return bsearch(&p, c->immovable.items, c->immovable.count, sizeof(gc_pool *), by_address) != NULL;
}

/* ---- Moving ---------------------------------------------------------------------------------- */

static size_t count_blocks(gc_pool *p) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  size_t n = 0;
  for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
    n += slot[0] != 0;
  }
  return n;
}

/* A free slot of p: its free list's head (the list stays ascending), else the frontier's slot
 * (the frontier then sits right above the block put there). NULL when p is full. */
static gc_header *take_slot(gc_pool *p) {
  gc_header *slot = p->free_list;
  if (slot != NULL) {
    p->free_list = (gc_header *)slot[1];
    return slot;
  }
  if (p->frontier < p->end) {
    slot = p->frontier;
    p->frontier += gc_wsize_of_class[p->size_class];
    return slot;
  }
  return NULL;
}

/* Move every block of the evacuated pool p into the kept pools uses[0..n) (from the fullest,
 * the last), leaving forwarding headers (INV-COMPACT-1). `*to` is the kept pool being filled. */
static void evacuate_pool(compactor *c, gc_pool *p, pool_use *uses, size_t *to) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  p->flags |= GC_POOL_EVACUATED;
  for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
    gc_header hd = slot[0];
    if (hd == 0) continue;
    gc_header *into = NULL;
    while (*to > 0) {
      if (!uses[*to - 1].evacuate && (into = take_slot(uses[*to - 1].pool)) != NULL) break;
      (*to)--;
    }
    if (into == NULL) {
      /* The choice left a slot for every block: a pool's free slots are not what INV-POOL-1
       * says (a broken heap), and a half-evacuated pool cannot be undone. */
      fprintf(stderr, "gcfuzz: compaction found no free slot for a block of class %u\n",
              p->size_class);
      abort();
    }
    size_t whsize = gc_hd_whsize(hd);
    memcpy(into, slot, whsize * sizeof(gc_header));
    slot[0] = GC_HD_FORWARD;
    slot[1] = (gc_header)gc_val_hp(into);
    /* INV-COMPACT-4: room for every move of the class was reserved before the first. */
    if (c->record) {
      gc_heap *heap = c->heap;
      heap->compact.forwarded[heap->compact.forwarded_count++] =
          (gc_compact_move){gc_val_hp(slot), gc_val_hp(into)};
    }
    c->blocks++;
    c->words += whsize;
  }
}

/* Room in the heap's table of moves (INV-COMPACT-4) for `more` entries; 0 without memory. */
static int reserve_moves(gc_heap *heap, size_t more) {
  size_t need = heap->compact.forwarded_count + more;
  if (need <= heap->compact.forwarded_capacity) return 1;
  size_t capacity = heap->compact.forwarded_capacity ? heap->compact.forwarded_capacity : 64;
  while (capacity < need) capacity *= 2;
  gc_compact_move *items = realloc(heap->compact.forwarded, capacity * sizeof *items);
  if (items == NULL) return 0;
  heap->compact.forwarded = items;
  heap->compact.forwarded_capacity = capacity;
  return 1;
}

/* Compact d's pools of class cls: choose, move, relist; the evacuated pools leave d's lists and
 * statistics and wait on c->evacuated. 0 without memory (nothing done). */
static int compact_class(compactor *c, gc_domain *d, gc_sizeclass cls) {
  size_t n = 0;
  for (gc_pool *p = d->avail[cls]; p != NULL; p = p->next) n++;
  for (gc_pool *p = d->full[cls]; p != NULL; p = p->next) n++;
  if (n < 2) return 1;
  if (n > c->uses_capacity) {
    pool_use *uses = realloc(c->uses, n * sizeof *uses);
    if (uses == NULL) return 0;
    c->uses = uses;
    c->uses_capacity = n;
  }
  pool_use *uses = c->uses;
  size_t live = 0, i = 0;
  gc_pool *lists[2] = {d->avail[cls], d->full[cls]};
  for (int l = 0; l < 2; l++) {
    for (gc_pool *p = lists[l]; p != NULL; p = p->next, i++) {
      uses[i] = (pool_use){p, count_blocks(p), is_immovable(c, p), 0};
      live += uses[i].live;
    }
  }
  qsort(uses, n, sizeof *uses, by_live);

  /* INV-COMPACT-3: evacuate the sparsest movable pools while the others have a slot for every
   * block ((kept - 1) * S >= live: every pool of the class has S slots). */
  const size_t slots = gc_slots_of_class(cls);
  size_t kept = n, evacuated = 0;
  for (i = 0; i < n && kept > 1 && (kept - 1) * slots >= live; i++) {
    if (uses[i].immovable) continue;
    uses[i].evacuate = 1;
    kept--;
    evacuated++;
  }
  if (evacuated == 0) return 1;

  /* INV-COMPACT-4: an entry per block about to move, reserved now, or the class stays as it
   * is (nothing moved yet). */
  size_t moving = 0;
  for (i = 0; i < n; i++) moving += uses[i].evacuate ? uses[i].live : 0;
  if (c->record && !reserve_moves(c->heap, moving)) return 0;

  size_t to = n;
  for (i = 0; i < n; i++) {
    if (uses[i].evacuate) evacuate_pool(c, uses[i].pool, uses, &to);
  }

  /* Relist: the kept pools by whether they are full now (INV-POOL-2), fullest first. */
  gc_heap_stats *s = &d->stats;
  d->avail[cls] = d->full[cls] = NULL;
  for (i = 0; i < n; i++) {
    gc_pool *p = uses[i].pool;
    if (uses[i].evacuate) {
      s->pool_words -= GC_POOL_WSIZE;
      s->pool_frag_words -= GC_POOL_HEADER_WSIZE + gc_wastage_of_class[cls];
      gc_heap_account_bytes(c->heap, -(intptr_t)GC_POOL_BSIZE);
      p->next = c->evacuated;
      c->evacuated = p;
      c->pools++;
      continue;
    }
    gc_pool **dest = gc_pool_is_full(p) ? &d->full[cls] : &d->avail[cls];
    p->next = *dest;
    *dest = p;
  }
  return 1;
}

/* ---- Forwarding ------------------------------------------------------------------------------ */

gc_value gc_compact_forward(gc_heap *heap, gc_value v) {
  (void)heap;
  if (!gc_is_block(v)) return v;
  /* Every reference the walk meets names a live block (every sweep is done) or a slot this
   * compaction evacuated, and only compaction writes GC_HD_FORWARD, into the slots it empties:
   * the header alone says which. One read, where a pool-set lookup per reference made the
   * forwarding walk 62 % of the stop. */
  gc_header *hp = gc_hp_val(v);
  if (hp[0] != GC_HD_FORWARD) return v;
  return (gc_value)hp[1];
}

static int by_from(const void *a, const void *b) {
  uintptr_t x = ((const gc_compact_move *)a)->from, y = ((const gc_compact_move *)b)->from;
  return (x > y) - (x < y);
}

gc_value gc_compact_forwarded(const gc_heap *heap, gc_value old) {
  size_t lo = 0, hi = heap->compact.forwarded_count;
  const gc_compact_move *moves = heap->compact.forwarded;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (moves[mid].from == old) return moves[mid].to;
    if (moves[mid].from < old) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return old;
}

size_t gc_compact_moves(const gc_heap *heap, const gc_compact_move **moves) {
  *moves = heap->compact.forwarded;
  return heap->compact.forwarded_count;
}

static void forward_slot(void *ctx, gc_value *slot) {
  gc_value v = *slot, to = gc_compact_forward(ctx, v);
  if (to != v) *slot = to;
}

/* The references a block holds: every field of a scanned block; a weak block's link word and
 * weak slots (its raw words after them are the embedder's). */
static void forward_fields(gc_heap *heap, gc_header *hp) {
  gc_header hd = hp[0];
  unsigned tag = gc_hd_tag(hd);
  size_t n = gc_hd_wsize(hd);
  if (gc_tag_is_weak(tag)) {
    if (n > gc_tag_weak_words(tag)) n = gc_tag_weak_words(tag);
  } else if (!gc_tag_is_scanned(tag)) {
    return;
  }
  gc_value *fields = gc_fields(gc_val_hp(hp));
  for (size_t k = 0; k < n; k++) forward_slot(heap, &fields[k]);
}

static void forward_pool_list(gc_heap *heap, gc_pool *list) {
  for (gc_pool *p = list; p != NULL; p = p->next) {
    const size_t slot_whsize = gc_wsize_of_class[p->size_class];
    for (gc_header *slot = gc_pool_first_slot(p); slot < p->frontier; slot += slot_whsize) {
      if (slot[0] != 0) forward_fields(heap, slot);
    }
  }
}

static void forward_large_list(gc_heap *heap, gc_large *list) {
  for (gc_large *a = list; a != NULL; a = a->next) forward_fields(heap, gc_large_hp(a));
}

/* INV-COMPACT-1: every reference the collector knows, while the evacuated pools still hold their
 * forwarding headers. */
static void forward_everything(gc_heap *heap) {
  /* The finalizer records first: gc_roots_visit reads their blocks' headers. */
  for (size_t i = 0; i < heap->finalizers.count; i++) {
    forward_slot(heap, &heap->finalizers.items[i].block);
  }
  gc_roots_visit(heap, forward_slot, heap); /* globals, pinned fields, finalizers, scanners,
                                             * every domain's frames */
  forward_slot(heap, &heap->orphans.ephe.head);
  for (gc_sizeclass cls = 0; cls < GC_NUM_SIZECLASSES; cls++) {
    forward_pool_list(heap, heap->orphans.avail[cls]);
    forward_pool_list(heap, heap->orphans.full[cls]);
  }
  forward_large_list(heap, heap->orphans.large);
  for (size_t i = 0; i < heap->domain_count; i++) {
    gc_domain *d = heap->domains[i];
    forward_slot(heap, &d->ephe.head);
    for (gc_sizeclass cls = 0; cls < GC_NUM_SIZECLASSES; cls++) {
      forward_pool_list(heap, d->avail[cls]);
      forward_pool_list(heap, d->full[cls]);
      forward_pool_list(heap, d->unswept_avail[cls]);
      forward_pool_list(heap, d->unswept_full[cls]);
    }
    forward_large_list(heap, d->swept_large);
    forward_large_list(heap, d->unswept_large);
  }
}

/* ---- The compaction -------------------------------------------------------------------------- */

/* Add the slots and blocks of the pools on `list` to *slots and *live; their count to *pools. */
static void tally(gc_pool *list, size_t *pools, size_t *slots, size_t *live) {
  for (gc_pool *p = list; p != NULL; p = p->next) {
    (*pools)++;
    *slots += gc_slots_of_class(p->size_class);
    *live += count_blocks(p);
  }
}

/* Free slots over the share, and a class of some owner in more pools than its blocks need (a
 * pool a compaction could give back, blocks that must stay aside): one sparse pool alone is
 * not worth a stop. */
int gc_compact_wanted(gc_heap *heap) {
  int percent = heap->cfg.compact_percent;
  if (percent == GC_PERCENT_OFF) return 0;
  size_t slots = 0, live = 0, spare = 0;
  for (size_t i = 0; i <= heap->domain_count; i++) {
    gc_pool **avail = i < heap->domain_count ? heap->domains[i]->avail : heap->orphans.avail;
    gc_pool **full = i < heap->domain_count ? heap->domains[i]->full : heap->orphans.full;
    for (gc_sizeclass cls = 0; cls < GC_NUM_SIZECLASSES; cls++) {
      size_t pools = 0, class_slots = 0, class_live = 0;
      tally(avail[cls], &pools, &class_slots, &class_live);
      tally(full[cls], &pools, &class_slots, &class_live);
      size_t per_pool = gc_slots_of_class(cls);
      size_t need = (class_live + per_pool - 1) / per_pool;
      spare += pools > need ? pools - need : 0;
      slots += class_slots;
      live += class_live;
    }
  }
  return spare > 0 && (slots - live) * 100 > (size_t)percent * slots;
}

static void trace_compaction(gc_heap *heap) {
  FILE *out = heap->cfg.trace_file ? heap->cfg.trace_file : stderr;
  fprintf(out,
          "gc compact %llu @%.3fs after cycle %llu: %zu pools evacuated, %zu blocks moved, "
          "%zu words moved, stop %.3f ms\n",
          (unsigned long long)heap->compact.count,
          (double)(gc_plat_now_ns() - heap->created_ns) / 1e9, (unsigned long long)heap->cycles,
          heap->compact.last_pools, heap->compact.last_blocks, heap->compact.last_words,
          (double)heap->compact.last_ns / 1e6);
}

int gc_compact_stopped(gc_domain *leader) {
  gc_heap *heap = leader->heap;
  gc_orphan_adopt_all(leader); /* their pools compact with the leader's (as a cycle adopts) */
  gc_heap_call_hook(heap, GC_HOOK_COMPACT_START);
  uint64_t start_ns = gc_plat_now_ns();
  compactor c = {.heap = heap, .record = heap->hook != NULL};
  int ok = find_immovable(&c);
  for (size_t i = 0; ok && i < heap->domain_count; i++) {
    for (gc_sizeclass cls = 0; ok && cls < GC_NUM_SIZECLASSES; cls++) {
      ok = compact_class(&c, heap->domains[i], cls);
    }
  }
  /* Out of memory midway leaves the classes done so far compacted, and their pools evacuated:
   * forwarding and release are needed either way. */
  forward_everything(heap);
  for (gc_pool *p = c.evacuated, *next; p != NULL; p = next) {
    next = p->next;
    p->flags = 0;
    gc_pool_release(heap, p);
  }
  gc_pool_unmap_free(heap);
  free(c.immovable.items);
  free(c.uses);

  heap->compact.count++;
  gc_event_note(heap, GC_EVENT_COMPACTION);
  heap->compact.moved_blocks += c.blocks;
  heap->compact.moved_words += c.words;
  heap->compact.released_pools += c.pools;
  heap->compact.last_pools = c.pools;
  heap->compact.last_blocks = c.blocks;
  heap->compact.last_words = c.words;
  heap->compact.last_ns = gc_plat_now_ns() - start_ns;
  heap->full_release = 1; /* every free pool went back (INV-SPACE-2 holds at the hook) */
  /* INV-COMPACT-4: the moves, sorted, for the hook only. */
  if (heap->compact.forwarded_count > 1) {
    qsort(heap->compact.forwarded, heap->compact.forwarded_count, sizeof(gc_compact_move), by_from);
  }
  gc_heap_call_hook(heap, GC_HOOK_COMPACTED);
  free(heap->compact.forwarded);
  heap->compact.forwarded = NULL;
  heap->compact.forwarded_count = heap->compact.forwarded_capacity = 0;
  heap->full_release = 0;
  if (heap->cfg.trace) trace_compaction(heap);
  return ok;
}
