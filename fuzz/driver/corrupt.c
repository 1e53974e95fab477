/* The corrupt op (see corrupt.h): plant one violation, check that its pass reports it, repair it
 * exactly, check that the pass is quiet again.
 *
 * Each corruption is modelled on a breaking test in invariants/ (named above each plant) and
 * reaches into the collector's and the model's internals as those tests do; unlike them it runs
 * in the middle of a fuzz program, so every write goes through an undo log and the repair writes
 * the old bytes back. */
#include "fuzz/driver/corrupt.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/header.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "gc/workbuf.h"
#include "invariants/heapindex.h"   /* gc_verify_owner_next: every owner and its lists */
#include "invariants/model_graph.h" /* the model's view, which the model's corruptions change */
#include "invariants/verify.h"

/* ---- The undo log -------------------------------------------------------------------------- */

/* Every location a corruption writes, and every location its pass's check may write (a model
 * check notes what it reported), with the bytes it held before; the repair copies them back,
 * newest first, so it is exact by construction. The sizes fit the largest corruption (a model
 * pending record and a few words) with room to spare. */
enum { UNDO_ENTRIES = 8, UNDO_BSIZE = 512 };

typedef struct undo_log {
  struct {
    void *addr;
    size_t bsize;
    size_t at; /* offset of the saved bytes in `saved` */
  } entries[UNDO_ENTRIES];
  size_t count;
  size_t used_bsize;
  unsigned char saved[UNDO_BSIZE];
} undo_log;

/* Remember the bytes at addr, to be restored by undo. */
static void keep(undo_log *u, void *addr, size_t bsize) {
  if (u->count == UNDO_ENTRIES || u->used_bsize + bsize > UNDO_BSIZE) {
    /* A corruption of this file writes more than the log holds: a bug here, whatever the input. */
    fprintf(stderr, "fuzz/driver/corrupt.c: the undo log is too small\n");
    abort();
  }
  u->entries[u->count].addr = addr;
  u->entries[u->count].bsize = bsize;
  u->entries[u->count].at = u->used_bsize;
  memcpy(u->saved + u->used_bsize, addr, bsize);
  u->used_bsize += bsize;
  u->count++;
}

/* lvalue = value, remembering what it was. */
#define POKE(u, lvalue, value) (keep((u), &(lvalue), sizeof(lvalue)), (lvalue) = (value))

static void undo(undo_log *u) {
  while (u->count > 0) {
    u->count--;
    memcpy(u->entries[u->count].addr, u->saved + u->entries[u->count].at,
           u->entries[u->count].bsize);
  }
  u->used_bsize = 0;
}

/* ---- One corruption ------------------------------------------------------------------------ */

/* Where the victim block lives: its owner (a domain or the orphans) and the list link that holds
 * its pool or large block, for the corruptions of pools, lists and statistics. */
typedef struct place {
  gc_verify_owner owner;
  gc_pool *pool; /* the pool holding the victim, or NULL for a large block */
  gc_large *large;
  int list;      /* GC_VERIFY_AVAIL.. for the pool, GC_VERIFY_SWEPT_LARGE.. for the large block */
  gc_pool **pool_link; /* the link that points at the pool on its list */
  gc_large **large_link;
} place;

struct corruption {
  driver *d;
  gc_heap *heap;
  fuzz_corruption which;
  int slot, n;      /* the op's operands */
  gc_value victim;  /* the block in the slot, or 0 */
  gc_model_id obj;  /* its model object, or GC_MODEL_NONE */
  gc_mobj *o;       /* that object's record, when the corruption needs one */
  place at;         /* where the victim lives, when it is a block */
  undo_log undo;
  int fired;        /* a checkmark corruption's collection reached mark-done */
};
typedef struct corruption corruption;

/* The pass a corruption is checked by, called directly. The model's checks at the swept point
 * (freed, finalized, live count) have no effect between ops only once the last sweep's check has
 * settled every object it doomed (see pass_ready). */
typedef enum corrupt_pass {
  ON_REACH,
  ON_SWEPT,
  ON_CHECKMARK,
  ON_MODEL_CYCLED,
  ON_MODEL_SWEPT,
} corrupt_pass;

/* What a corruption needs from its operands before it can apply. */
enum {
  NEED_BLOCK = 1u << 0,  /* a block in the slot (located: owner, pool or large block, list) */
  NEED_FIELD = 1u << 1,  /* ... a scanned one with a field N */
  NEED_POOL = 1u << 2,   /* ... in a pool */
  NEED_OBJECT = 1u << 3, /* ... whose model object is live and not reported dead already */
};

typedef struct corruption_row {
  corrupt_pass pass;
  gc_verify_kind kind;
  unsigned needs;
  /* Write the corruption (every write through c->undo); 1 when planted, 0 when it cannot apply
   * here (then nothing was written). */
  int (*plant)(corruption *c);
} corruption_row;

/* A word outside every pool and large block: what a wild pointer points at. Never written. */
static gc_value outside_heap[2];
static gc_value wild_pointer(void) { return (gc_value)&outside_heap[1]; }

/* A tag no block has: between the scanned tags and GC_TAG_RAW. */
enum { INVALID_TAG = GC_TAG_SCAN_MAX + 1 };
_Static_assert(INVALID_TAG < GC_TAG_RAW, "an invalid tag between the scanned ones and raw");

static gc_header *victim_hp(const corruption *c) { return gc_hp_val(c->victim); }

/* ---- Blocks: headers and fields (reach_test, swept_test, checkmark_test, model_test) -------- */

static int set_header(corruption *c, gc_header hd) {
  POKE(&c->undo, *victim_hp(c), hd);
  return 1;
}

static int set_colour(corruption *c, gc_header colour) {
  return set_header(c, gc_hd_with_colour(*victim_hp(c), colour));
}

static int set_field(corruption *c, gc_value value) {
  POKE(&c->undo, GC_FIELD(c->victim, c->n), value);
  return 1;
}

/* reach_test zero_header: a reachable block freed. */
static int plant_zero_header(corruption *c) { return set_header(c, 0); }

/* reach_test oversized_header, swept_test block_with_invalid_tag. */
static int plant_invalid_tag(corruption *c) {
  return set_header(c, (*victim_hp(c) & ~GC_HD_TAG_MASK) | INVALID_TAG);
}

/* A size that does not fit where the block is: one word more than its pool slot (reach_test
 * oversized_header, swept_test block_overlaps_next_slot), or, for a large block, a size a pool
 * slot would hold. */
static int plant_oversized(corruption *c) {
  gc_header hd = *victim_hp(c);
  size_t wsize = c->at.pool != NULL ? gc_wsize_of_class[c->at.pool->size_class] : 1;
  return set_header(c, gc_hd_make(wsize, gc_hd_colour(hd), gc_hd_tag(hd)));
}

/* The collector's root enumeration, which reach walks from, reads the fields of a pinned block and
 * of a block with a finalizer set as far as their headers say: it would read an oversized one
 * past the block, where the pass under test never looks. Those blocks are left alone. */
static int fields_are_roots(const corruption *c) {
  if (gc_hd_colour(*victim_hp(c)) == GC_NOT_MARKABLE) return 1;
  const gc_finalizer_vec *fins = &c->heap->finalizers;
  for (size_t i = 0; i < fins->count; i++) {
    if (fins->items[i].block == c->victim) return 1;
  }
  return 0;
}

static int plant_oversized_unrooted(corruption *c) {
  return !fields_are_roots(c) && plant_oversized(c);
}

static int plant_garbage(corruption *c) { return set_colour(c, c->heap->colours.garbage); }
static int plant_marked(corruption *c) { return set_colour(c, c->heap->colours.marked); }
/* checkmark_test: a block the marker missed (planted at mark-done, where it is MARKED). */
static int plant_unmarked(corruption *c) { return set_colour(c, c->heap->colours.unmarked); }

/* reach_test foreign_pointer, checkmark_test pointer_to_nowhere. */
static int plant_wild_field(corruption *c) { return set_field(c, wild_pointer()); }

/* A pointer into a pool the heap keeps free: outside every pool in use all the same. */
static int plant_free_pool_field(corruption *c) {
  gc_pool *p = c->heap->free_pools;
  return p != NULL && set_field(c, gc_val_hp(gc_pool_first_slot(p)));
}

/* reach_test interior_pointer_into_slot / _into_large: one word into the victim itself. */
static int plant_interior_field(corruption *c) {
  return set_field(c, c->victim + sizeof(gc_value));
}

/* The very start of the victim's pool: its header. */
static int plant_pool_start_field(corruption *c) { return set_field(c, (gc_value)c->at.pool); }

/* The slot at the pool's frontier, never handed out. */
static int plant_unused_slot_field(corruption *c) {
  gc_pool *p = c->at.pool;
  return p->frontier < p->end && set_field(c, gc_val_hp(p->frontier));
}

/* The words after the pool's last whole slot (classes whose slots do not tile the pool). */
static int plant_wastage_field(corruption *c) {
  gc_pool *p = c->at.pool;
  return gc_wastage_of_class[p->size_class] > 0 && set_field(c, gc_val_hp(p->end));
}

/* ---- Pools, lists and statistics (swept_test) ---------------------------------------------- */

/* The running statistic N (mod 9) off: each count one too high, a maximum below its value, or
 * the heap limit's byte count (swept_test statistic_off_by_one). */
static int plant_statistic(corruption *c) {
  static const size_t counts[] = {
      offsetof(gc_heap_stats, pool_words),      offsetof(gc_heap_stats, pool_live_words),
      offsetof(gc_heap_stats, pool_live_blocks), offsetof(gc_heap_stats, pool_frag_words),
      offsetof(gc_heap_stats, large_words),      offsetof(gc_heap_stats, large_blocks),
  };
  enum { COUNTS = sizeof counts / sizeof counts[0] };
  gc_heap_stats *s = c->at.owner.stats;
  int k = c->n % (COUNTS + 3);
  if (k < COUNTS) {
    size_t *count = (size_t *)((char *)s + counts[k]);
    POKE(&c->undo, *count, *count + 1);
  } else if (k == COUNTS) {
    if (s->pool_words == 0) return 0;
    POKE(&c->undo, s->pool_max_words, s->pool_words - 1);
  } else if (k == COUNTS + 1) {
    if (s->large_words == 0) return 0;
    POKE(&c->undo, s->large_max_words, s->large_words - 1);
  } else {
    POKE(&c->undo, c->heap->used_bytes, c->heap->used_bytes + sizeof(gc_value));
  }
  return 1;
}

/* Take the victim's pool off its list and push it on list `to` of its class and owner. */
static int move_pool(corruption *c, int to) {
  gc_pool *p = c->at.pool;
  gc_pool **head = &c->at.owner.pool_lists[to][p->size_class];
  POKE(&c->undo, *c->at.pool_link, p->next);
  POKE(&c->undo, p->next, *head);
  POKE(&c->undo, *head, p);
  return 1;
}

/* swept_test unswept_pool_left: a pool (or large block) of a domain back on an unswept list
 * after sweeping finished. The orphans have no unswept lists. */
static int plant_unswept(corruption *c) {
  if (c->at.owner.domain == NULL) return 0;
  if (c->at.pool == NULL) {
    if (c->at.list != GC_VERIFY_SWEPT_LARGE) return 0;
    gc_large *a = c->at.large;
    gc_large **head = c->at.owner.large_lists[GC_VERIFY_UNSWEPT_LARGE];
    POKE(&c->undo, *c->at.large_link, a->next);
    POKE(&c->undo, a->next, *head);
    POKE(&c->undo, *head, a);
    return 1;
  }
  if (c->at.list == GC_VERIFY_AVAIL) return move_pool(c, GC_VERIFY_UNSWEPT_AVAIL);
  if (c->at.list == GC_VERIFY_FULL) return move_pool(c, GC_VERIFY_UNSWEPT_FULL);
  return 0;
}

/* The victim's domain says it has not finished sweeping. */
static int plant_sweeping(corruption *c) {
  gc_domain *dom = c->at.owner.domain;
  if (dom == NULL) return 0;
  POKE(&c->undo, dom->sweeping, 1);
  return 1;
}

/* swept_test pool_with_wrong_owner. */
static int plant_wrong_owner(corruption *c) {
  gc_pool *p = c->at.pool;
  POKE(&c->undo, p->owner, p->owner != NULL ? NULL : me()->dom);
  return 1;
}

/* swept_test pool_on_two_lists: the pool also linked at the end of its owner's other list of its
 * class (avail <-> full). */
static int plant_two_lists(corruption *c) {
  int other = c->at.list == GC_VERIFY_AVAIL ? GC_VERIFY_FULL
              : c->at.list == GC_VERIFY_FULL ? GC_VERIFY_AVAIL
                                             : -1;
  if (other < 0) return 0;
  gc_pool **tail = &c->at.owner.pool_lists[other][c->at.pool->size_class];
  while (*tail != NULL) tail = &(*tail)->next;
  POKE(&c->undo, *tail, c->at.pool);
  return 1;
}

/* swept_test mapped_pool_count. */
static int plant_pool_count(corruption *c) {
  POKE(&c->undo, c->heap->mapped_pool_count, c->heap->mapped_pool_count + 1);
  return 1;
}

/* swept_test pool_missing_from_pool_set: what gc_pool_set_remove does (the key marked deleted,
 * one fewer), done here so that the repair puts back the very same key and count (removing and
 * inserting again may rehash). */
static int plant_pool_set(corruption *c) {
  gc_pool_set *set = &c->heap->pool_set;
  const uintptr_t deleted = 1; /* gc_pool_set (heap.h): 0 empty, 1 deleted */
  for (size_t i = 0; i < set->capacity; i++) {
    if (set->keys[i] != (uintptr_t)c->at.pool) continue;
    POKE(&c->undo, set->keys[i], deleted);
    POKE(&c->undo, set->count, set->count - 1);
    return 1;
  }
  return 0;
}

/* swept_test frontier_out_of_place. */
static int plant_frontier(corruption *c) {
  POKE(&c->undo, c->at.pool->frontier, c->at.pool->frontier - 1);
  return 1;
}

/* swept_test work_buffer_lost. */
static int plant_workbuf(corruption *c) {
  gc_mark_work *w = &c->heap->work;
  if (w->empty == NULL) return 0;
  POKE(&c->undo, w->empty, w->empty->next);
  return 1;
}

/* checkmark_test marker_still_holds_a_buffer: the running domain's marker has not handed its
 * work buffer back when marking is declared over (the buffer stays on the empty list too: only
 * the marker is looked at). */
static int plant_marker_busy(corruption *c) {
  gc_mark_work *w = &c->heap->work;
  gc_marker *m = &me()->dom->marker;
  if (w->empty == NULL || m->buf != NULL) return 0;
  POKE(&c->undo, m->buf, w->empty);
  return 1;
}

/* checkmark_test follower_missing_at_the_barrier: one participant more than arrived at the mark
 * barrier, as when the leader stops waiting one follower early. */
static int plant_follower_missing(corruption *c) {
  POKE(&c->undo, c->heap->participants, c->heap->participants + 1);
  return 1;
}

/* Free-list entry k of pool p (entries are linked through their word 1), or NULL. */
static gc_header *free_entry(gc_pool *p, size_t k) {
  gc_header *e = p->free_list;
  for (size_t i = 0; e != NULL && i < k; i++) e = (gc_header *)e[1];
  return e;
}

static size_t free_entries(gc_pool *p) {
  size_t n = 0;
  for (gc_header *e = p->free_list; e != NULL; e = (gc_header *)e[1]) n++;
  return n;
}

/* The entry N (mod the number of entries) of the victim's pool's free list, or NULL. */
static gc_header *chosen_entry(corruption *c) {
  size_t n = free_entries(c->at.pool);
  return n == 0 ? NULL : free_entry(c->at.pool, (size_t)c->n % n);
}

/* Make the link to free-list entry k point at `to` instead. */
static void relink(corruption *c, size_t k, gc_header *to) {
  if (k == 0) {
    POKE(&c->undo, c->at.pool->free_list, to);
  } else {
    gc_header *before = free_entry(c->at.pool, k - 1);
    POKE(&c->undo, before[1], (gc_header)to);
  }
}

/* swept_test freelist_link_into_another_pool (here: outside every pool). */
static int plant_freelist_foreign(corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)gc_hp_val(wild_pointer()));
  return 1;
}

static int plant_freelist_misaligned(corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)(e + 1));
  return 1;
}

/* swept_test freelist_entry_holds_a_block (the statistics left as they are: they are reported
 * too, which is allowed). */
static int plant_freelist_live(corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[0], gc_hd_make(1, c->heap->colours.unmarked, GC_TAG_RAW));
  return 1;
}

/* swept_test freelist_cycle: the entry links back to the first. */
static int plant_freelist_cycle(corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)c->at.pool->free_list);
  return 1;
}

/* swept_test freelist_out_of_order: entries k and k + 1 swapped. */
static int plant_freelist_order(corruption *c) {
  size_t n = free_entries(c->at.pool);
  if (n < 2) return 0;
  size_t k = (size_t)c->n % (n - 1);
  gc_header *a = free_entry(c->at.pool, k), *b = (gc_header *)a[1];
  relink(c, k, b);
  POKE(&c->undo, a[1], b[1]);
  POKE(&c->undo, b[1], (gc_header)a);
  return 1;
}

/* swept_test freelist_missing_slot: the entry unlinked. Not the last way into an avail pool: a
 * pool with neither a free slot nor an unused one is reported as avail-pool-full instead. */
static int plant_freelist_count(corruption *c) {
  gc_pool *p = c->at.pool;
  size_t n = free_entries(p);
  if (n == 0 || (n == 1 && p->frontier == p->end)) return 0;
  size_t k = (size_t)c->n % n;
  relink(c, k, (gc_header *)free_entry(p, k)[1]);
  return 1;
}

/* swept_test full_pool_with_free_slot / avail_pool_without_free_slot. */
static int plant_full_with_free_slot(corruption *c) {
  return c->at.list == GC_VERIFY_AVAIL && move_pool(c, GC_VERIFY_FULL);
}
static int plant_avail_full(corruption *c) {
  return c->at.list == GC_VERIFY_FULL && move_pool(c, GC_VERIFY_AVAIL);
}

/* ---- The model (model_test) ---------------------------------------------------------------- */

/* A check that finds the object dead marks it lost and never compares it again: the repair
 * clears that note with the rest. */
static void keep_lost_note(corruption *c) { keep(&c->undo, &c->o->lost, sizeof c->o->lost); }

/* The collector decided it was dead (GARBAGE), freed it (header 0), or gave its address to a
 * later allocation (the model's view): model_test reachable_block_freed. */
static int plant_model_garbage(corruption *c) {
  keep_lost_note(c);
  return plant_garbage(c);
}
static int plant_model_freed(corruption *c) {
  keep_lost_note(c);
  return plant_zero_header(c);
}
static int plant_model_reused(corruption *c) {
  keep_lost_note(c);
  POKE(&c->undo, c->o->reused, 1);
  return 1;
}

/* model_test field_changed_behind_the_model, raw_word_changed: field N holds another word (an
 * immediate for a pointer field, another immediate or raw word otherwise). */
static int plant_model_field(corruption *c) {
  if ((size_t)c->n >= gc_wsize(c->victim)) return 0;
  gc_value old = GC_FIELD(c->victim, c->n);
  return set_field(c, (old & 1u) ? old ^ 2u : gc_val_int(c->n));
}

/* The header's tag changed behind the model's back (bit 0: another constructor, or no tag). */
static int plant_model_tag(corruption *c) { return set_header(c, *victim_hp(c) ^ 1u); }

/* model_test hidden_root_keeps_block_alive, seen from the other side: the model's view says the
 * object was unreachable when the last mark ended, and its block is still there. The check
 * settles the doomed list itself and, having found a block not freed, stops trusting its images
 * (images_exact): that note is undone too. */
static int plant_model_doomed(corruption *c) {
  gc_model *m = c->d->model;
  if (m->doomed_capacity == 0) return 0;
  keep(&c->undo, &m->images_exact, sizeof m->images_exact);
  POKE(&c->undo, c->o->state, GC_MOBJ_DOOMED);
  POKE(&c->undo, m->doomed[0], c->obj);
  POKE(&c->undo, m->doomed_count, 1);
  return 1;
}

/* model_test finalizer_on_live_block: a finalize function ran on a live block (the check clears
 * the count it reports; the repair restores it). */
static int plant_model_finalized(corruption *c) {
  gc_model *m = c->d->model;
  keep(&c->undo, &c->o->finalized, sizeof c->o->finalized);
  keep(&c->undo, &m->finalized_notes, sizeof m->finalized_notes);
  gc_model_note_finalized(m, c->victim);
  return 1;
}

/* A finalizer noticed outside a check is remembered as pending and reported by the next check,
 * which empties the list again: the repair puts back the record's bytes too. */
static void keep_pending(corruption *c) {
  gc_model *m = c->d->model;
  keep(&c->undo, &m->pend_count, sizeof m->pend_count);
  keep(&c->undo, &m->pend[0], sizeof m->pend[0]);
}

/* A finalize function ran on a block the model never had. */
static int plant_model_unknown_finalized(corruption *c) {
  keep_pending(c);
  gc_model_note_finalized(c->d->model, wild_pointer());
  return 1;
}

/* A collector that runs a Go-style finalizer it never queued: the heap's own record is called
 * (model_test go_finalizer_run_twice, the other way round). */
static int plant_model_unqueued_finalizer(corruption *c) {
  if (c->o->fin != GC_MFIN_SET) return 0;
  gc_finalizer_vec *fins = &c->heap->finalizers;
  for (size_t i = 0; i < fins->count; i++) {
    if (fins->items[i].block != c->victim) continue;
    keep_pending(c);
    fins->items[i].fn(c->heap, c->victim, fins->items[i].user);
    return 1;
  }
  return 0;
}

/* model_test live_count_differs: the owner's live block count one too high. */
static int plant_model_live_count(corruption *c) {
  gc_heap_stats *s = c->at.owner.stats;
  if (c->at.pool != NULL) {
    POKE(&c->undo, s->pool_live_blocks, s->pool_live_blocks + 1);
  } else {
    POKE(&c->undo, s->large_blocks, s->large_blocks + 1);
  }
  return 1;
}

/* model_test root_slot_changed: slot sS holds what slot N (mod 16) holds, behind the model's
 * back; no-op when they hold the same. */
static int plant_model_root(corruption *c) {
  gc_value *slots = me()->slots;
  gc_value other = slots[c->n % FUZZ_SLOTS];
  if (other == slots[c->slot]) return 0;
  POKE(&c->undo, slots[c->slot], other);
  return 1;
}

/* ---- The table ----------------------------------------------------------------------------- */

#define ROW(which, pass, kind, needs, plant) \
  [FUZZ_CORRUPT_##which] = {pass, GC_VK_##kind, needs, plant}

static const corruption_row rows[FUZZ_CORRUPTION_COUNT] = {
    ROW(REACH_FOREIGN_POINTER, ON_REACH, REACH_FOREIGN_POINTER, NEED_FIELD, plant_wild_field),
    ROW(REACH_FOREIGN_FREE_POOL, ON_REACH, REACH_FOREIGN_POINTER, NEED_FIELD,
        plant_free_pool_field),
    ROW(REACH_INTERIOR_POINTER, ON_REACH, REACH_INTERIOR_POINTER, NEED_FIELD, plant_interior_field),
    ROW(REACH_INTERIOR_POOL_START, ON_REACH, REACH_INTERIOR_POINTER, NEED_FIELD | NEED_POOL,
        plant_pool_start_field),
    ROW(REACH_INTERIOR_UNUSED_SLOT, ON_REACH, REACH_INTERIOR_POINTER, NEED_FIELD | NEED_POOL,
        plant_unused_slot_field),
    ROW(REACH_INTERIOR_WASTAGE, ON_REACH, REACH_INTERIOR_POINTER, NEED_FIELD | NEED_POOL,
        plant_wastage_field),
    ROW(REACH_ZERO_HEADER, ON_REACH, REACH_ZERO_HEADER, NEED_BLOCK, plant_zero_header),
    ROW(REACH_BAD_HEADER, ON_REACH, REACH_BAD_HEADER, NEED_BLOCK, plant_invalid_tag),
    ROW(REACH_BAD_HEADER_OVERSIZED, ON_REACH, REACH_BAD_HEADER, NEED_BLOCK,
        plant_oversized_unrooted),
    ROW(REACH_BAD_COLOUR, ON_REACH, REACH_BAD_COLOUR, NEED_BLOCK, plant_garbage),
    ROW(REACH_BAD_COLOUR_MARKED, ON_REACH, REACH_BAD_COLOUR, NEED_BLOCK, plant_marked),
    ROW(SWEPT_STAT_MISMATCH, ON_SWEPT, SWEPT_STAT_MISMATCH, NEED_BLOCK, plant_statistic),
    ROW(SWEPT_UNSWEPT_LEFT, ON_SWEPT, SWEPT_UNSWEPT_LEFT, NEED_BLOCK, plant_unswept),
    ROW(SWEPT_UNSWEPT_SWEEPING, ON_SWEPT, SWEPT_UNSWEPT_LEFT, NEED_BLOCK, plant_sweeping),
    ROW(SWEPT_BAD_POOL, ON_SWEPT, SWEPT_BAD_POOL, NEED_POOL, plant_wrong_owner),
    ROW(SWEPT_BAD_POOL_TWO_LISTS, ON_SWEPT, SWEPT_BAD_POOL, NEED_POOL, plant_two_lists),
    ROW(SWEPT_POOL_COUNT, ON_SWEPT, SWEPT_POOL_COUNT, 0, plant_pool_count),
    ROW(SWEPT_POOL_SET, ON_SWEPT, SWEPT_POOL_SET, NEED_POOL, plant_pool_set),
    ROW(SWEPT_TILING, ON_SWEPT, SWEPT_TILING, NEED_POOL, plant_oversized),
    ROW(SWEPT_BAD_HEADER, ON_SWEPT, SWEPT_BAD_HEADER, NEED_BLOCK, plant_invalid_tag),
    ROW(SWEPT_GARBAGE_LEFT, ON_SWEPT, SWEPT_GARBAGE_LEFT, NEED_BLOCK, plant_garbage),
    ROW(SWEPT_BAD_COLOUR, ON_SWEPT, SWEPT_BAD_COLOUR, NEED_BLOCK, plant_marked),
    ROW(SWEPT_FREELIST_FOREIGN, ON_SWEPT, SWEPT_FREELIST_FOREIGN, NEED_POOL,
        plant_freelist_foreign),
    ROW(SWEPT_FREELIST_MISALIGNED, ON_SWEPT, SWEPT_FREELIST_MISALIGNED, NEED_POOL,
        plant_freelist_misaligned),
    ROW(SWEPT_FREELIST_LIVE, ON_SWEPT, SWEPT_FREELIST_LIVE, NEED_POOL, plant_freelist_live),
    ROW(SWEPT_FREELIST_CYCLE, ON_SWEPT, SWEPT_FREELIST_CYCLE, NEED_POOL, plant_freelist_cycle),
    ROW(SWEPT_FREELIST_ORDER, ON_SWEPT, SWEPT_FREELIST_ORDER, NEED_POOL, plant_freelist_order),
    ROW(SWEPT_FREELIST_COUNT, ON_SWEPT, SWEPT_FREELIST_COUNT, NEED_POOL, plant_freelist_count),
    ROW(SWEPT_FULL_POOL_HAS_FREE_SLOT, ON_SWEPT, SWEPT_FULL_POOL_HAS_FREE_SLOT, NEED_POOL,
        plant_full_with_free_slot),
    ROW(SWEPT_AVAIL_POOL_FULL, ON_SWEPT, SWEPT_AVAIL_POOL_FULL, NEED_POOL, plant_avail_full),
    ROW(SWEPT_BAD_FRONTIER, ON_SWEPT, SWEPT_BAD_FRONTIER, NEED_POOL, plant_frontier),
    ROW(SWEPT_WORKBUF_LOST, ON_SWEPT, SWEPT_WORKBUF_LOST, 0, plant_workbuf),
    ROW(CHECKMARK_UNMARKED, ON_CHECKMARK, CHECKMARK_UNMARKED, NEED_BLOCK, plant_unmarked),
    ROW(CHECKMARK_BAD_POINTER, ON_CHECKMARK, CHECKMARK_BAD_POINTER, NEED_FIELD, plant_wild_field),
    ROW(CHECKMARK_MARK_UNFINISHED, ON_CHECKMARK, CHECKMARK_MARK_UNFINISHED, 0, plant_marker_busy),
    ROW(CHECKMARK_MARK_UNFINISHED_BARRIER, ON_CHECKMARK, CHECKMARK_MARK_UNFINISHED, 0,
        plant_follower_missing),
    ROW(MODEL_DEAD, ON_MODEL_CYCLED, MODEL_DEAD, NEED_OBJECT, plant_model_garbage),
    ROW(MODEL_DEAD_FREE, ON_MODEL_CYCLED, MODEL_DEAD, NEED_OBJECT, plant_model_freed),
    ROW(MODEL_DEAD_REUSED, ON_MODEL_CYCLED, MODEL_DEAD, NEED_OBJECT, plant_model_reused),
    ROW(MODEL_CONTENTS, ON_MODEL_CYCLED, MODEL_CONTENTS, NEED_OBJECT, plant_model_field),
    ROW(MODEL_CONTENTS_HEADER, ON_MODEL_CYCLED, MODEL_CONTENTS, NEED_OBJECT, plant_model_tag),
    ROW(MODEL_NOT_FREED, ON_MODEL_SWEPT, MODEL_NOT_FREED, NEED_OBJECT, plant_model_doomed),
    ROW(MODEL_FINALIZER_COUNT, ON_MODEL_SWEPT, MODEL_FINALIZER_COUNT, NEED_OBJECT,
        plant_model_finalized),
    ROW(MODEL_FINALIZER_UNKNOWN, ON_MODEL_CYCLED, MODEL_FINALIZER_COUNT, 0,
        plant_model_unknown_finalized),
    ROW(MODEL_FINALIZER_UNQUEUED, ON_MODEL_CYCLED, MODEL_FINALIZER_COUNT, NEED_OBJECT,
        plant_model_unqueued_finalizer),
    ROW(MODEL_LIVE_COUNT, ON_MODEL_SWEPT, MODEL_LIVE_COUNT, NEED_BLOCK, plant_model_live_count),
    ROW(MODEL_ROOT, ON_MODEL_CYCLED, MODEL_ROOT, 0, plant_model_root),
};

#undef ROW

gc_verify_kind fuzz_corruption_kind(fuzz_corruption which) { return rows[which].kind; }

static const char *const pass_names[] = {
    [ON_REACH] = "reach",          [ON_SWEPT] = "swept",          [ON_CHECKMARK] = "checkmark",
    [ON_MODEL_CYCLED] = "model",   [ON_MODEL_SWEPT] = "model",
};

const char *fuzz_corruption_pass(fuzz_corruption which) { return pass_names[rows[which].pass]; }

/* ---- Can it apply ------------------------------------------------------------------------- */

/* The victim's owner, list and pool or large block, from the owners' lists (never by reading an
 * address that is not known to be a pool first). Returns 0 if no list holds it. */
static int locate(gc_heap *heap, gc_value v, place *at) {
  gc_header *hp = gc_hp_val(v);
  gc_large *large = gc_large_of_hp(hp); /* compared only: v may be a pool block */
  gc_pool *pool = gc_pool_of_hp(hp);    /* likewise: v may be a large block */
  size_t cursor = 0;
  gc_verify_owner o;
  while (gc_verify_owner_next(heap, &cursor, &o)) {
    for (int l = 0; l < GC_VERIFY_LARGE_LISTS; l++) {
      if (o.large_lists[l] == NULL) continue;
      for (gc_large **link = o.large_lists[l]; *link != NULL; link = &(*link)->next) {
        if (*link != large) continue;
        *at = (place){o, NULL, large, l, NULL, link};
        return 1;
      }
    }
    for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
      if (o.pool_lists[l] == NULL) continue;
      for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
        for (gc_pool **link = &o.pool_lists[l][c]; *link != NULL; link = &(*link)->next) {
          if (*link != pool) continue;
          *at = (place){o, pool, NULL, l, link, NULL};
          return 1;
        }
      }
    }
  }
  return 0;
}

static int sweep_unfinished(gc_heap *heap) {
  size_t cursor = 0;
  gc_verify_owner o;
  while (gc_verify_owner_next(heap, &cursor, &o)) {
    if (o.sweeping) return 1;
  }
  return 0;
}

/* The pass can run now and see exactly the corruption: it is in the heap's verify mask (the
 * model's state is kept only by checks that run); reach, swept and model checks find every sweep
 * finished; and a model check finds nothing pending that belongs to the driver's own next check
 * (a violation noticed in an allocation, objects doomed by a mark whose sweep was not checked
 * yet, finalize notes not yet compared). Reach and the model's reachability need the sweep done
 * because a conservative word is a root: written after the last mark, it may point into a block
 * that mark found dead, GARBAGE until its pool is swept, which is no violation (the next mark
 * does not take it for a block). At the hook points no op ran since the mark, so the passes
 * never meet such a word there; between two ops they can, until the sweep ends. */
static int pass_ready(const corruption *c, corrupt_pass pass) {
  static const unsigned bits[] = {
      [ON_REACH] = GC_VERIFY_REACH, [ON_SWEPT] = GC_VERIFY_SWEPT,
      [ON_CHECKMARK] = GC_VERIFY_CHECKMARK, [ON_MODEL_CYCLED] = GC_VERIFY_MODEL,
      [ON_MODEL_SWEPT] = GC_VERIFY_MODEL,
  };
  if (!(gc_heap_config(c->heap)->verify & bits[pass])) return 0;
  const gc_model *m = c->d->model;
  switch (pass) {
    case ON_CHECKMARK: return 1; /* runs at its own collection's mark-done point */
    case ON_REACH:
    case ON_SWEPT: return !sweep_unfinished(c->heap);
    case ON_MODEL_CYCLED:
      return m->pend_count == 0 && m->pend_dropped == 0 && m->doomed_count == 0 &&
             !sweep_unfinished(c->heap);
    case ON_MODEL_SWEPT:
      return m->pend_count == 0 && m->pend_dropped == 0 && m->doomed_count == 0 &&
             m->finalized_notes == 0 && !sweep_unfinished(c->heap);
  }
  return 0;
}

/* Resolve the operands and check what the corruption needs; 1 when it can be planted now. */
static int prepare(corruption *c) {
  const corruption_row *row = &rows[c->which];
  if (!pass_ready(c, row->pass)) return 0;
  c->victim = me()->slots[c->slot];
  c->obj = gc_is_block(c->victim) ? gc_model_id_of(c->d->model, c->victim) : GC_MODEL_NONE;
  c->o = NULL;
  unsigned needs = row->needs;
  if (needs == 0) return 1;
  if (!gc_is_block(c->victim) || !locate(c->heap, c->victim, &c->at)) return 0;
  if ((needs & NEED_POOL) && c->at.pool == NULL) return 0;
  if ((needs & NEED_FIELD) &&
      (!gc_tag_is_scanned(gc_tag(c->victim)) || (size_t)c->n >= gc_wsize(c->victim))) {
    return 0;
  }
  if (needs & NEED_OBJECT) {
    c->o = gc_model_live_obj(c->d->model, c->obj);
    if (c->o == NULL || c->o->lost || c->o->val != c->victim) return 0;
  }
  return 1;
}

/* ---- Plant, check, repair, check ----------------------------------------------------------- */

/* The pass in the driver's verifier's memory: a corrupt op allocates nothing for its three runs. */
static size_t run_pass(corruption *c, gc_verify_reports *out) {
  gc_verifier *v = c->d->verifier;
  switch (rows[c->which].pass) {
    case ON_REACH: return gc_verify_pass_now(v, GC_VERIFY_REACH, out);
    case ON_SWEPT: return gc_verify_pass_now(v, GC_VERIFY_SWEPT, out);
    case ON_CHECKMARK: return gc_verify_pass_now(v, GC_VERIFY_CHECKMARK, out);
    case ON_MODEL_CYCLED: return gc_model_check(c->d->model, GC_HOOK_CYCLED, out);
    case ON_MODEL_SWEPT: return gc_model_check(c->d->model, GC_HOOK_SWEPT, out);
  }
  return 0;
}

/* The report code on real reports, under the build's sanitizers: every report printed, the first
 * one drawn as Graphviz; the text is thrown away. Once a program, for the first corruption its
 * pass reported: printing cost more than the rest of the op (a third of the graph target's time
 * went to corrupt ops), and which corruption comes first is the fuzzer's choice like any other. */
static void format_reports(const gc_verify_reports *r) {
  char *text = NULL;
  size_t bsize = 0;
  FILE *f = open_memstream(&text, &bsize);
  if (f == NULL) return;
  gc_verify_reports_print(r, f);
  if (r->count > 0) gc_verify_report_print_dot(&r->items[0], f);
  fclose(f);
  free(text);
}

/* "nothing" or "3 report(s): swept.stat-mismatch, swept.tiling, ...", for violation messages. */
static void summarize(const gc_verify_reports *r, char *buf, size_t bsize) {
  size_t total = r->count + r->dropped;
  if (total == 0) {
    snprintf(buf, bsize, "nothing");
    return;
  }
  int used = snprintf(buf, bsize, "%zu report(s):", total);
  for (size_t i = 0; i < r->count && i < 4 && used > 0 && (size_t)used < bsize; i++) {
    used += snprintf(buf + used, bsize - (size_t)used, "%s %s", i ? "," : "",
                     gc_verify_kind_name(r->items[i].kind));
  }
  if (r->count > 4 && used > 0 && (size_t)used < bsize) {
    snprintf(buf + used, bsize - (size_t)used, ", ...");
  }
}

/* "corrupt reach.zero-header s3 2 on block 0x... (8 bytes at 0x...: 0x900 -> 0x0)": the op and
 * its first write, read right after planting. */
static void describe(const corruption *c, char *buf, size_t bsize) {
  int used = snprintf(buf, bsize, "`corrupt %s s%d %d` on block %#llx",
                      fuzz_corruption_names[c->which], c->slot, c->n,
                      (unsigned long long)c->victim);
  const undo_log *u = &c->undo;
  for (size_t i = 0; i < u->count && used > 0 && (size_t)used < bsize; i++) {
    if (u->entries[i].bsize != sizeof(uintptr_t) ||
        memcmp(u->entries[i].addr, u->saved + u->entries[i].at, sizeof(uintptr_t)) == 0) {
      continue; /* kept, not written (yet) */
    }
    uintptr_t before, now;
    memcpy(&before, u->saved + u->entries[i].at, sizeof before);
    memcpy(&now, u->entries[i].addr, sizeof now);
    snprintf(buf + used, bsize - (size_t)used, " (word at %p: %#llx -> %#llx)", u->entries[i].addr,
             (unsigned long long)before, (unsigned long long)now);
    return;
  }
}

/* With --trace: a corrupt op that could not apply says so (seeds are written to apply). */
static void trace_no_op(const corruption *c) {
  if (c->d->opt->trace == NULL) return;
  fprintf(c->d->opt->trace, "        [`corrupt %s s%d %d` cannot apply here: no-op]\n",
          fuzz_corruption_names[c->which], c->slot, c->n);
}

static void plant_check_repair(corruption *c) {
  driver *d = c->d;
  const corruption_row *row = &rows[c->which];
  gc_verify_reports found;
  gc_verify_reports_init(&found);
  char summary[160];
  /* The pass first runs on the heap as the program left it. A report now is no corruption of
   * this op's but the collector's own (between two cycles nothing else looks): it is reported
   * as that pass's violation, and nothing is planted, so that "missed" and "unrepaired" below
   * only ever describe the verifier and the repair. */
  run_pass(c, &found);
  d->res->pass_runs[PASS_DRIVER]++;
  if (found.count + found.dropped > 0) {
    char how[160];
    snprintf(how, sizeof how, "found by `corrupt %s s%d %d` before it planted anything",
             fuzz_corruption_names[c->which], c->slot, c->n);
    undo(&c->undo); /* only bytes kept for the check, none written */
    drv_report_passes(d, &found, how);
    gc_verify_reports_free(&found);
    return;
  }
  if (!row->plant(c)) {
    undo(&c->undo); /* only bytes kept for the check, none written */
    trace_no_op(c);
    return;
  }
  char planted[256];
  describe(c, planted, sizeof planted);
  fuzz_corrupt_sabotage sabotage = d->opt->corrupt_sabotage;
  if (sabotage == FUZZ_CORRUPT_UNDO_BEFORE_CHECK) undo(&c->undo);

  run_pass(c, &found);
  d->res->pass_runs[PASS_DRIVER]++;
  summarize(&found, summary, sizeof summary);
  if (d->opt->trace != NULL) {
    fprintf(d->opt->trace, "        [planted %s; %s found %s]\n", planted, pass_names[row->pass],
            summary);
  }
  if (gc_verify_reports_count_kind(&found, row->kind) == 0) {
    drv_violation(d, "driver.corruption-missed",
                  "planted %s; the %s pass, run directly, reported no %s but %s", planted,
                  pass_names[row->pass], gc_verify_kind_name(row->kind), summary);
    gc_verify_reports_print(&found, d->out);
  }
  if (!d->corrupt_printed && found.count > 0) {
    d->corrupt_printed = 1;
    format_reports(&found);
  }
  gc_verify_reports_clear(&found);

  if (sabotage != FUZZ_CORRUPT_CHECK_BEFORE_REPAIR) undo(&c->undo);
  run_pass(c, &found);
  if (sabotage == FUZZ_CORRUPT_CHECK_BEFORE_REPAIR) undo(&c->undo);
  d->res->pass_runs[PASS_DRIVER]++;
  if (found.count + found.dropped > 0) {
    summarize(&found, summary, sizeof summary);
    drv_violation(d, "driver.corruption-unrepaired",
                  "planted %s and repaired it; the %s pass, run again, still reported %s", planted,
                  pass_names[row->pass], summary);
    gc_verify_reports_print(&found, d->out);
  }
  gc_verify_reports_free(&found);
}

void drv_op_corrupt(driver *d, fuzz_corruption which, int slot, int n) {
  corruption c;
  memset(&c, 0, sizeof c);
  c.d = d;
  c.heap = d->heap;
  c.which = which;
  c.slot = slot;
  c.n = n;
  if (!prepare(&c)) {
    trace_no_op(&c);
    return;
  }
  if (rows[which].pass != ON_CHECKMARK) {
    plant_check_repair(&c);
    return;
  }
  /* Checkmark compares the collector's marks with its own, so it runs right after a mark: this
   * op's own major collection, planted at its mark-done point (drv_corrupt_mark_done). */
  d->corrupt_armed = &c;
  gc_collect(me()->dom, GC_COLLECT_MAJOR); /* what `collect major` runs */
  d->corrupt_armed = NULL;
  d->res->pass_runs[PASS_DRIVER]++;
  if (!c.fired) {
    drv_violation(d, "driver.corruption-missed",
                  "`corrupt %s s%d %d`: its major collection never reached the mark-done point",
                  fuzz_corruption_names[which], slot, n);
  }
}

void drv_corrupt_mark_done(driver *d) {
  corruption *c = d->corrupt_armed;
  d->corrupt_armed = NULL; /* once: a later cycle in the same op (none today) is ordinary */
  c->fired = 1;
  /* The collection may have moved pools between lists (finishing the last sweep): look again. */
  if (prepare(c)) {
    plant_check_repair(c);
  } else {
    trace_no_op(c);
  }
}
