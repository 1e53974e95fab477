/* The corruption catalogue (see corrupt.h): what each corruption writes, and the undo log.
 *
 * Each corruption is modelled on a breaking test in invariants/ (named above each plant) and
 * reaches into the collector's and the model's internals as those tests do; unlike them it runs
 * in the middle of a program, so every write goes through an undo log and the undo writes the
 * old bytes back. */
#include "invariants/corrupt.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/cycle.h"
#include "gc/header.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "gc/workbuf.h"

/* ---- The undo log -------------------------------------------------------------------------- */

/* Remember the bytes at addr, to be restored by gc_corruption_undo. */
static void keep(gc_corrupt_undo *u, void *addr, size_t bsize) {
  if (u->count == GC_CORRUPT_UNDO_ENTRIES || u->used_bsize + bsize > GC_CORRUPT_UNDO_BSIZE) {
    /* A corruption of this file writes more than the log holds: a bug here, whatever the input. */
    fprintf(stderr, "invariants/corrupt.c: the undo log is too small\n");
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

void gc_corruption_undo(gc_corruption *c) {
  gc_corrupt_undo *u = &c->undo;
  while (u->count > 0) {
    u->count--;
    memcpy(u->entries[u->count].addr, u->saved + u->entries[u->count].at,
           u->entries[u->count].bsize);
  }
  u->used_bsize = 0;
}

/* ---- One corruption ------------------------------------------------------------------------ */

/* What a corruption needs from its operands before it can apply. */
enum {
  NEED_BLOCK = 1u << 0,  /* a block in the slot (located: owner, pool or large block, list) */
  NEED_FIELD = 1u << 1,  /* ... a scanned one with a field N */
  NEED_POOL = 1u << 2,   /* ... in a pool */
  NEED_OBJECT = 1u << 3, /* ... whose model object is live and not reported dead already */
};

typedef struct corruption_row {
  gc_verify_kind kind;
  const char *variant; /* "" when the kind alone names it */
  /* The hook point its pass (the kind's) is run as: MARK_DONE (checkmark, planted at a
   * collection's own mark-done point), or the model's check at CYCLED or SWEPT; reach and swept,
   * called directly, run the same at any point, and their rows name where their kinds are. */
  gc_hook_point at;
  unsigned needs;
  /* Write the corruption (every write through c->undo); 1 when planted, 0 when it cannot apply
   * here (then nothing was written). */
  int (*plant)(gc_corruption *c);
} corruption_row;

/* A word outside every pool and large block: what a wild pointer points at. Never written. */
static gc_value outside_heap[2];
static gc_value wild_pointer(void) { return (gc_value)&outside_heap[1]; }

/* A tag no block has: between the scanned tags and GC_TAG_RAW. */
enum { INVALID_TAG = GC_TAG_SCAN_MAX + 1 };
_Static_assert(INVALID_TAG < GC_TAG_RAW, "an invalid tag between the scanned ones and raw");

static gc_header *victim_hp(const gc_corruption *c) { return gc_hp_val(c->victim); }

/* ---- Blocks: headers and fields (reach_test, swept_test, checkmark_test, model_test) -------- */

static int set_header(gc_corruption *c, gc_header hd) {
  POKE(&c->undo, *victim_hp(c), hd);
  return 1;
}

static int set_colour(gc_corruption *c, gc_header colour) {
  return set_header(c, gc_hd_with_colour(*victim_hp(c), colour));
}

static int set_field(gc_corruption *c, gc_value value) {
  POKE(&c->undo, GC_FIELD(c->victim, c->n), value);
  return 1;
}

/* reach_test zero_header: a reachable block freed. */
static int plant_zero_header(gc_corruption *c) { return set_header(c, 0); }

/* reach_test oversized_header, swept_test block_with_invalid_tag. */
static int plant_invalid_tag(gc_corruption *c) {
  return set_header(c, (*victim_hp(c) & ~GC_HD_TAG_MASK) | INVALID_TAG);
}

/* A size that does not fit where the block is: one word more than its pool slot (reach_test
 * oversized_header, swept_test block_overlaps_next_slot), or, for a large block, a size a pool
 * slot would hold. */
static int plant_oversized(gc_corruption *c) {
  gc_header hd = *victim_hp(c);
  size_t wsize = c->at.pool != NULL ? gc_wsize_of_class[c->at.pool->size_class] : 1;
  return set_header(c, gc_hd_make(wsize, gc_hd_colour(hd), gc_hd_tag(hd)));
}

/* The collector's root enumeration, which reach walks from, reads the fields of a pinned block and
 * of a block with a finalizer set as far as their headers say: it would read an oversized one
 * past the block, where the pass under test never looks. Those blocks are left alone. */
static int fields_are_roots(const gc_corruption *c) {
  if (gc_hd_colour(*victim_hp(c)) == GC_NOT_MARKABLE) return 1;
  const gc_finalizer_vec *fins = &c->heap->finalizers;
  for (size_t i = 0; i < fins->count; i++) {
    if (fins->items[i].block == c->victim) return 1;
  }
  return 0;
}

static int plant_oversized_unrooted(gc_corruption *c) {
  return !fields_are_roots(c) && plant_oversized(c);
}

static int plant_garbage(gc_corruption *c) { return set_colour(c, c->heap->colours.garbage); }
static int plant_marked(gc_corruption *c) { return set_colour(c, c->heap->colours.marked); }
/* checkmark_test: a block the marker missed (planted at mark-done, where it is MARKED). */
static int plant_unmarked(gc_corruption *c) { return set_colour(c, c->heap->colours.unmarked); }

/* satb_test (every satb.unmarked test): a block the verifier's walk reached at mark start,
 * UNMARKED when marking ends. One allocated since is no such block (made UNMARKED, it is born
 * white): the corruption cannot apply to it. */
static int plant_snapshot_unmarked(gc_corruption *c) {
  return gc_verify_reached_at_mark_start(c->verifier, c->victim) && plant_unmarked(c);
}

/* reach_test foreign_pointer, checkmark_test pointer_to_nowhere. */
static int plant_wild_field(gc_corruption *c) { return set_field(c, wild_pointer()); }

/* A pointer into a pool the heap keeps free: outside every pool in use all the same. */
static int plant_free_pool_field(gc_corruption *c) {
  gc_pool *p = c->heap->free_pools;
  return p != NULL && set_field(c, gc_val_hp(gc_pool_first_slot(p)));
}

/* reach_test interior_pointer_into_slot / _into_large: one word into the victim itself. */
static int plant_interior_field(gc_corruption *c) {
  return set_field(c, c->victim + sizeof(gc_value));
}

/* The very start of the victim's pool: its header. */
static int plant_pool_start_field(gc_corruption *c) { return set_field(c, (gc_value)c->at.pool); }

/* The slot at the pool's frontier, never handed out. */
static int plant_unused_slot_field(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  return p->frontier < p->end && set_field(c, gc_val_hp(p->frontier));
}

/* The words after the pool's last whole slot (classes whose slots do not tile the pool). */
static int plant_wastage_field(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  return gc_wastage_of_class[p->size_class] > 0 && set_field(c, gc_val_hp(p->end));
}

/* ---- Pools, lists and statistics (swept_test) ---------------------------------------------- */

/* The running statistic N (mod 9) off: each count one too high, a maximum below its value, or
 * the heap limit's byte count (swept_test statistic_off_by_one). */
static int plant_statistic(gc_corruption *c) {
  static const size_t counts[] = {
      offsetof(gc_heap_stats, pool_words),       offsetof(gc_heap_stats, pool_live_words),
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
static int move_pool(gc_corruption *c, int to) {
  gc_pool *p = c->at.pool;
  gc_pool **head = &c->at.owner.pool_lists[to][p->size_class];
  POKE(&c->undo, *c->at.pool_link, p->next);
  POKE(&c->undo, p->next, *head);
  POKE(&c->undo, *head, p);
  return 1;
}

/* swept_test unswept_pool_left: a pool (or large block) of a domain back on an unswept list
 * after sweeping finished. The orphans have no unswept lists. */
static int plant_unswept(gc_corruption *c) {
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
static int plant_sweeping(gc_corruption *c) {
  gc_domain *dom = c->at.owner.domain;
  if (dom == NULL) return 0;
  POKE(&c->undo, dom->sweeping, 1);
  return 1;
}

/* swept_test pool_with_wrong_owner. */
static int plant_wrong_owner(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  POKE(&c->undo, p->owner, p->owner != NULL ? NULL : c->dom);
  return 1;
}

/* swept_test pool_on_two_lists: the pool also linked at the end of its owner's other list of its
 * class (avail <-> full). */
static int plant_two_lists(gc_corruption *c) {
  int other = c->at.list == GC_VERIFY_AVAIL  ? GC_VERIFY_FULL
              : c->at.list == GC_VERIFY_FULL ? GC_VERIFY_AVAIL
                                             : -1;
  if (other < 0) return 0;
  gc_pool **tail = &c->at.owner.pool_lists[other][c->at.pool->size_class];
  while (*tail != NULL) tail = &(*tail)->next;
  POKE(&c->undo, *tail, c->at.pool);
  return 1;
}

/* swept_test mapped_pool_count. */
static int plant_pool_count(gc_corruption *c) {
  POKE(&c->undo, c->heap->mapped_pool_count, c->heap->mapped_pool_count + 1);
  return 1;
}

/* swept_test pool_missing_from_pool_set: what gc_pool_set_remove does (the key marked deleted,
 * one fewer), done here so that the repair puts back the very same key and count (removing and
 * inserting again may rehash). */
static int plant_pool_set(gc_corruption *c) {
  gc_pool_set *set = &c->heap->pool_set;
  const uintptr_t deleted = 1; /* gc_pool_set (heap.h): 0 empty, 1 deleted */
  /* Every slot is looked at, wherever the key is: where a pool's address hashes to must not
   * decide how many times this loop runs (its edges are the fuzz targets' coverage). */
  size_t at = set->capacity;
  for (size_t i = 0; i < set->capacity; i++) {
    if (set->keys[i] == (uintptr_t)c->at.pool) at = i;
  }
  if (at == set->capacity) return 0;
  POKE(&c->undo, set->keys[at], deleted);
  POKE(&c->undo, set->count, set->count - 1);
  return 1;
}

/* swept_test frontier_out_of_place. */
static int plant_frontier(gc_corruption *c) {
  POKE(&c->undo, c->at.pool->frontier, c->at.pool->frontier - 1);
  return 1;
}

/* satb_test born_white_seen_at_mark_done: the slot at its pool's frontier taken since mark start
 * (the frontier bumped past it), its header UNMARKED: a block born white. */
static int plant_born_white(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  if (p->size_class >= GC_NUM_SIZECLASSES || p->frontier >= p->end) return 0;
  size_t whsize = gc_wsize_of_class[p->size_class];
  gc_header *hp = p->frontier;
  POKE(&c->undo, *hp, gc_hd_make(whsize - 1, c->heap->colours.unmarked, GC_TAG_RAW));
  POKE(&c->undo, p->frontier, hp + whsize);
  return 1;
}

/* swept_test work_buffer_lost. */
static int plant_workbuf(gc_corruption *c) {
  gc_mark_work *w = &c->heap->work;
  if (w->empty == NULL) return 0;
  POKE(&c->undo, w->empty, w->empty->next);
  return 1;
}

/* checkmark_test marker_still_holds_a_buffer: the running domain's marker has not handed its
 * work buffer back when marking is declared over (the buffer stays on the empty list too: only
 * the marker is looked at). */
static int plant_marker_busy(gc_corruption *c) {
  gc_mark_work *w = &c->heap->work;
  gc_marker *m = &c->dom->marker;
  if (w->empty == NULL || m->buf != NULL) return 0;
  POKE(&c->undo, m->buf, w->empty);
  return 1;
}

/* checkmark_test follower_missing_at_the_barrier: one participant more than arrived at the mark
 * barrier, as when the leader stops waiting one follower early. */
static int plant_follower_missing(gc_corruption *c) {
  POKE(&c->undo, c->heap->participants, c->heap->participants + 1);
  return 1;
}

/* ---- Work counters (perf_test) ------------------------------------------------------------ */

/* perf_test paced_start_below_the_trigger: the last cycle, as the pacer's decision recorded it,
 * was paced with a trigger one word above what the domains reported to it since the reset. */
static int plant_unpaced(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  POKE(&c->undo, w->reason, GC_CYCLE_PACED);
  if (w->gc_percent == GC_PERCENT_OFF) POKE(&c->undo, w->gc_percent, 100);
  POKE(&c->undo, w->trigger_words, (size_t)(w->reported_at_start - w->reported_at_reset) + 1);
  return 1;
}

/* perf_test paced_start_with_pacing_off. */
static int plant_unpaced_off(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  POKE(&c->undo, w->reason, GC_CYCLE_PACED);
  POKE(&c->undo, w->gc_percent, GC_PERCENT_OFF);
  return 1;
}

/* perf_test overflow_of_a_small_mark: a refused push in a mark that marked no scanned block. */
static int plant_needless_overflow(gc_corruption *c) {
  /* A mark under zeal overflow may overflow at any count (INV-OVERFLOW-1): nothing to plant. */
  if (c->heap->cycle_work.overflow_zeal) return 0;
  gc_mark_counts *m = &c->heap->cycle_work.mark;
  POKE(&c->undo, m->overflows, m->overflows + 1);
  POKE(&c->undo, m->scan_blocks_marked, 0);
  if (m->redarken_passes == 0) { /* and recovered, as INV-OVERFLOWCOUNT-1 says it would be */
    POKE(&c->undo, m->redarken_passes, 1);
    POKE(&c->undo, c->heap->mark_overflows, c->heap->mark_overflows + 1);
  }
  return 1;
}

/* perf_test fields_scanned_above_the_bound: one field more than every marked block scanned once
 * per pass (and every word born MARKED once per re-darkening pass). */
static int plant_mark_work(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  uint64_t bound = gc_mark_fields_bound(w);
  if (bound >= SIZE_MAX) return 0;
  POKE(&c->undo, w->mark.fields_scanned, (size_t)bound + 1);
  return 1;
}

/* perf_test unflagged_pool_redarkened. */
static int plant_mark_work_redarken(gc_corruption *c) {
  gc_mark_counts *m = &c->heap->cycle_work.mark;
  POKE(&c->undo, m->redarkened, m->flagged + 1);
  return 1;
}

/* perf_test handoff_with_one_marker. */
static int plant_lone_handoff(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  POKE(&c->undo, w->markers, 1);
  POKE(&c->undo, w->handoffs, w->handoffs + 1);
  /* Seen by its giver and in the statistics, as INV-HANDOFFCOUNT-1 says it would be. */
  POKE(&c->undo, w->mark.handoffs, w->mark.handoffs + 1);
  POKE(&c->undo, c->heap->work.handoffs, c->heap->work.handoffs + 1);
  return 1;
}

/* perf_test rechecks_past_the_limit: one recheck more than the largest limit a stop saw. */
static int plant_recheck_limit(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  POKE(&c->undo, w->rechecks, w->recheck_limit + 1);
  return 1;
}

/* perf_test an_id_no_marker_counts: a domain id handed out during the last incremental mark
 * that no marker counts; no-op after a stop-the-world mark, which the rule does not cover. */
static int plant_markers(gc_corruption *c) {
  gc_cycle_work *w = &c->heap->cycle_work;
  if (!w->incremental) return 0;
  POKE(&c->undo, w->domain_id_at_end, w->domain_id_at_end + 1);
  return 1;
}

/* The verifier's record of the last mark start, if it fits the last mark (pass.h): the stats
 * witnesses compare against it, so a planted count it does not cover would go unseen. */
static const gc_verify_mark_record *fitting_record(gc_corruption *c) {
  const gc_verify_mark_record *rec = gc_verify_mark_record_of(c->verifier);
  return gc_verify_mark_record_fits(rec, c->heap, 0) ? rec : NULL;
}

/* perf_test overflow_pass_without_refusal: one re-darkening pass more than the refused pushes
 * (the heap's count, gc_stats.mark_overflows, and the marker's alike). */
static int plant_overflow_count(gc_corruption *c) {
  const gc_verify_mark_record *rec = fitting_record(c);
  if (rec == NULL) return 0;
  gc_mark_counts *m = &c->heap->cycle_work.mark;
  POKE(&c->undo, m->redarken_passes, m->overflows + 1);
  POKE(&c->undo, c->heap->mark_overflows, rec->mark_overflows + m->overflows + 1);
  return 1;
}

/* perf_test split_the_giver_never_saw: a handoff the givers did not see split. */
static int plant_handoff_count(gc_corruption *c) {
  gc_mark_counts *m = &c->heap->cycle_work.mark;
  POKE(&c->undo, m->handoffs, m->handoffs + 1);
  return 1;
}

/* perf_test slice_counted_twice: the running domain's slice count one high, as a slice counted
 * without its hook. */
static int plant_slice_count(gc_corruption *c) {
  if (fitting_record(c) == NULL) return 0;
  POKE(&c->undo, c->dom->mark_slices, c->dom->mark_slices + 1);
  return 1;
}

/* perf_test pool_swept_twice / large_block_swept_twice: the running domain's sweep examined one
 * slot (one large block) more than it began with. */
static int plant_sweep_work(gc_corruption *c) {
  POKE(&c->undo, c->dom->sweep_slots_swept, c->dom->sweep_slots_due + 1);
  return 1;
}
static int plant_sweep_work_large(gc_corruption *c) {
  POKE(&c->undo, c->dom->sweep_large_swept, c->dom->sweep_large_due + 1);
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
static gc_header *chosen_entry(gc_corruption *c) {
  size_t n = free_entries(c->at.pool);
  return n == 0 ? NULL : free_entry(c->at.pool, (size_t)c->n % n);
}

/* Make the link to free-list entry k point at `to` instead. */
static void relink(gc_corruption *c, size_t k, gc_header *to) {
  if (k == 0) {
    POKE(&c->undo, c->at.pool->free_list, to);
  } else {
    gc_header *before = free_entry(c->at.pool, k - 1);
    POKE(&c->undo, before[1], (gc_header)to);
  }
}

/* swept_test freelist_link_into_another_pool (here: outside every pool). */
static int plant_freelist_foreign(gc_corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)gc_hp_val(wild_pointer()));
  return 1;
}

static int plant_freelist_misaligned(gc_corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)(e + 1));
  return 1;
}

/* swept_test freelist_entry_holds_a_block (the statistics left as they are: they are reported
 * too, which is allowed). */
static int plant_freelist_live(gc_corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[0], gc_hd_make(1, c->heap->colours.unmarked, GC_TAG_RAW));
  return 1;
}

/* swept_test freelist_cycle: the entry links back to the first. */
static int plant_freelist_cycle(gc_corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL) return 0;
  POKE(&c->undo, e[1], (gc_header)c->at.pool->free_list);
  return 1;
}

/* swept_test freelist_out_of_order: entries k and k + 1 swapped. */
static int plant_freelist_order(gc_corruption *c) {
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
static int plant_freelist_count(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  size_t n = free_entries(p);
  if (n == 0 || (n == 1 && p->frontier == p->end)) return 0;
  size_t k = (size_t)c->n % n;
  relink(c, k, (gc_header *)free_entry(p, k)[1]);
  return 1;
}

/* swept_test full_pool_with_free_slot / avail_pool_without_free_slot. */
static int plant_full_with_free_slot(gc_corruption *c) {
  return c->at.list == GC_VERIFY_AVAIL && move_pool(c, GC_VERIFY_FULL);
}
static int plant_avail_full(gc_corruption *c) {
  return c->at.list == GC_VERIFY_FULL && move_pool(c, GC_VERIFY_AVAIL);
}

/* ---- The public statistics (stats_test) ---------------------------------------------------- */

/* stats_test pool_words_off_the_owned: the victim's owner says a pool more than it holds. */
static int plant_stats_sum(gc_corruption *c) {
  gc_heap_stats *s = c->at.owner.stats;
  POKE(&c->undo, s->pool_words, s->pool_words + GC_POOL_WSIZE);
  return 1;
}

/* stats_test heap_large_words_drift. */
static int plant_stats_sum_large(gc_corruption *c) {
  POKE(&c->undo, c->heap->large_words, c->heap->large_words + 1);
  return 1;
}

/* stats_test mapped_pool_no_owner: a pool mapped that no owner holds and the free list lacks. */
static int plant_stats_mapped(gc_corruption *c) {
  POKE(&c->undo, c->heap->mapped_pool_count, c->heap->mapped_pool_count + 1);
  return 1;
}
/* stats_test free_pool_count_off. */
static int plant_stats_free_count(gc_corruption *c) {
  POKE(&c->undo, c->heap->free_pool_count, c->heap->free_pool_count + 1);
  return 1;
}

/* stats_test allocated_block_uncounted: the running domain counted a block it never made. */
static int plant_stats_balance(gc_corruption *c) {
  POKE(&c->undo, c->dom->alloc_blocks, c->dom->alloc_blocks + 1);
  return 1;
}

/* stats_test cycles_jump: two cycles since the last sweep end, one of them never reported. Only
 * once the verifier has a sweep end to compare with: the current cycle's was reported. */
static int plant_stats_counter(gc_corruption *c) {
  if (c->heap->cycles == 0 || !c->heap->swept_reported) return 0;
  POKE(&c->undo, c->heap->cycles, c->heap->cycles + 2);
  return 1;
}

/* stats_test pool_maximum_below_pool_words: the heap's pool maximum lost, while pools are owned
 * (so it is below pool_words, with or without a sweep end to compare with). */
static int plant_stats_maximum(gc_corruption *c) {
  if (c->heap->mapped_pool_count == c->heap->free_pool_count) return 0;
  POKE(&c->undo, c->heap->pool_max_words, 0);
  return 1;
}

/* stats_test last_pause_not_the_newest. */
static int plant_stats_pauses(gc_corruption *c) {
  POKE(&c->undo, c->heap->last_pause_ns, c->heap->last_pause_ns + 1);
  return 1;
}

/* ---- Space (space_test) --------------------------------------------------------------------- */

/* space_test reset_pool_kept: the victim's pool swept to nothing and kept on its list. */
static int plant_space_empty_pool(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  POKE(&c->undo, p->frontier, gc_pool_first_slot(p));
  POKE(&c->undo, p->free_list, NULL);
  return 1;
}

/* space_test free_slot_below_frontier: the block right below the victim's pool's frontier freed
 * in place, when another block stays below it (else the pool would be empty instead). */
static int plant_space_frontier_slack(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  size_t slot = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  if (p->frontier - first < 2 * (ptrdiff_t)slot) return 0;
  gc_header *top = p->frontier - slot;
  for (gc_header *hp = first; hp < top; hp += slot) {
    if (*hp == 0) continue;
    POKE(&c->undo, *top, 0);
    return 1;
  }
  return 0;
}

/* space_test free_pools_left_at_full_end: the pass told it sees a full collection's end while
 * free pools wait (between full collections they may); or a pool mapped that nothing holds. */
static int plant_space_free_pools(gc_corruption *c) {
  if (c->heap->free_pools == NULL) return 0;
  POKE(&c->undo, c->heap->full_release, 1);
  return 1;
}
static int plant_space_mapped(gc_corruption *c) {
  POKE(&c->undo, c->heap->full_release, 1);
  POKE(&c->undo, c->heap->mapped_pool_count, c->heap->mapped_pool_count + 1);
  return 1;
}

/* space_test orphan_passed_over: a fresh pool of the victim's class recorded as taken by a
 * domain that had seen the orphaning of the victim's pool, waiting on the orphans' avail list. */
static int plant_space_orphan(gc_corruption *c) {
  gc_orphans *o = &c->heap->orphans;
  gc_sizeclass k = c->at.pool->size_class;
  if (c->at.owner.domain != NULL || c->at.list != GC_VERIFY_AVAIL) return 0;
  POKE(&c->undo, o->fresh_seen[k], o->avail_since[k]);
  return 1;
}
/* ---- Over-retention (checkmark_test), planted at mark-done ---------------------------------- */

/* Whether the block at hp is one to make MARKED: UNMARKED at mark-done, so no root reaches it
 * (a finalizable one was queued and marked), and not floating garbage checkmark allows (an
 * incremental cycle may keep what was reached at its start only weakly). */
static int unmarked_unallowed(gc_corruption *c, gc_header *hp) {
  return *hp != 0 && gc_hd_colour(*hp) == c->heap->colours.unmarked &&
         !gc_verify_allows_unrooted(c->verifier, gc_val_hp(hp));
}

/* The N-th (mod their number) such block of the victim's pool, or NULL. */
static gc_header *unmarked_block(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  size_t n = 0;
  for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier; hp += slot_whsize) {
    n += unmarked_unallowed(c, hp);
  }
  if (n == 0) return NULL;
  size_t k = (size_t)c->n % n;
  for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier; hp += slot_whsize) {
    if (!unmarked_unallowed(c, hp)) continue;
    if (k == 0) return hp;
    k--;
  }
  return NULL;
}

/* checkmark_test unreachable_block_marked: a block of the victim's pool that no root reaches,
 * MARKED as by a marker that kept it. */
static int plant_over_retained(gc_corruption *c) {
  gc_header *hp = unmarked_block(c);
  if (hp == NULL) return 0;
  POKE(&c->undo, *hp, gc_hd_with_colour(*hp, c->heap->colours.marked));
  return 1;
}

/* checkmark_test free_slot_marked_through_a_word: free-list entry N of the victim's pool, its
 * zero header made MARKED (only where MARKED is not colour 0, which would leave it 0). */
static int plant_over_retained_free_slot(gc_corruption *c) {
  gc_header *e = chosen_entry(c);
  if (e == NULL || c->heap->colours.marked == 0) return 0;
  POKE(&c->undo, e[0], c->heap->colours.marked);
  return 1;
}

/* checkmark_test not_markable_block_not_pinned: the victim, MARKED, painted NOT_MARKABLE
 * without a pin (a pinned block is NOT_MARKABLE already). */
static int plant_over_retained_unpinned(gc_corruption *c) {
  if (gc_hd_colour(*victim_hp(c)) != c->heap->colours.marked) return 0;
  return set_colour(c, GC_NOT_MARKABLE);
}

/* checkmark_test marked_count_off_by_one: the mark says it marked one block more than it
 * coloured. */
static int plant_mark_count(gc_corruption *c) {
  POKE(&c->undo, c->heap->marked_blocks, c->heap->marked_blocks + 1);
  return 1;
}

/* ---- The model (model_test) ---------------------------------------------------------------- */

/* A check that finds the object dead marks it lost and never compares it again: the repair
 * clears that note with the rest. */
static void keep_lost_note(gc_corruption *c) { keep(&c->undo, &c->o->lost, sizeof c->o->lost); }

/* The collector decided it was dead (GARBAGE), freed it (header 0), or gave its address to a
 * later allocation (the model's view): model_test reachable_block_freed. */
static int plant_model_garbage(gc_corruption *c) {
  keep_lost_note(c);
  return plant_garbage(c);
}
static int plant_model_freed(gc_corruption *c) {
  keep_lost_note(c);
  return plant_zero_header(c);
}
static int plant_model_reused(gc_corruption *c) {
  keep_lost_note(c);
  POKE(&c->undo, c->o->reused, 1);
  return 1;
}

/* model_test field_changed_behind_the_model, raw_word_changed: field N holds another word (an
 * immediate for a pointer field, another immediate or raw word otherwise). */
static int plant_model_field(gc_corruption *c) {
  if ((size_t)c->n >= gc_wsize(c->victim)) return 0;
  gc_value old = GC_FIELD(c->victim, c->n);
  return set_field(c, (old & 1u) ? old ^ 2u : gc_val_int(c->n));
}

/* The header's tag changed behind the model's back (bit 0: another constructor, or no tag). */
static int plant_model_tag(gc_corruption *c) { return set_header(c, *victim_hp(c) ^ 1u); }

/* model_test hidden_root_keeps_block_alive, seen from the other side: the model's view says the
 * object was unreachable when the last mark ended, and its block is still there. The check
 * settles the doomed list itself and, having found a block not freed, stops trusting its images
 * (images_exact): that note is undone too. */
static int plant_model_doomed(gc_corruption *c) {
  gc_model *m = c->model;
  if (m->doomed_capacity == 0) return 0;
  keep(&c->undo, &m->images_exact, sizeof m->images_exact);
  POKE(&c->undo, c->o->state, GC_MOBJ_DOOMED);
  POKE(&c->undo, m->doomed[0], c->obj);
  POKE(&c->undo, m->doomed_count, 1);
  return 1;
}

/* model_test finalizer_on_live_block: a finalize function ran on a live block (the check clears
 * the count it reports; the repair restores it). */
static int plant_model_finalized(gc_corruption *c) {
  gc_model *m = c->model;
  keep(&c->undo, &c->o->finalized, sizeof c->o->finalized);
  keep(&c->undo, &m->finalized_notes, sizeof m->finalized_notes);
  gc_model_note_finalized(m, c->victim);
  return 1;
}

/* A finalizer noticed outside a check is remembered as pending and reported by the next check,
 * which empties the list again: the repair puts back the record's bytes too. */
static void keep_pending(gc_corruption *c) {
  gc_model *m = c->model;
  keep(&c->undo, &m->pend_count, sizeof m->pend_count);
  keep(&c->undo, &m->pend[0], sizeof m->pend[0]);
}

/* A finalize function ran on a block the model never had. */
static int plant_model_unknown_finalized(gc_corruption *c) {
  keep_pending(c);
  gc_model_note_finalized(c->model, wild_pointer());
  return 1;
}

/* A collector that runs a Go-style finalizer it never queued: the heap's own record is called
 * (model_test go_finalizer_run_twice, the other way round). */
static int plant_model_unqueued_finalizer(gc_corruption *c) {
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
static int plant_model_live_count(gc_corruption *c) {
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
static int plant_model_root(gc_corruption *c) {
  gc_value *slots = c->slots;
  gc_value other = slots[(size_t)c->n % c->slot_count];
  if (other == slots[c->slot]) return 0;
  POKE(&c->undo, slots[c->slot], other);
  return 1;
}

/* ---- Ephemerons and weak references (ephe_test) ------------------------------------------- */

static gc_header colour_of_block(gc_value v) { return gc_hd_colour(gc_hd_val(v)); }

/* Repaint the block v, MARKED, UNMARKED (at mark-done: dead). */
static int unmark_block(gc_corruption *c, gc_value v) {
  gc_header *hp = gc_hp_val(v);
  if (gc_hd_colour(*hp) != c->heap->colours.marked) return 0;
  POKE(&c->undo, *hp, gc_hd_with_colour(*hp, c->heap->colours.unmarked));
  return 1;
}

/* ephe_test datum_unmarked_*: the datum of a live ephemeron whose key is alive, left UNMARKED
 * when marking ends (a fixpoint stopped short). */
static int plant_ephe_datum_unmarked(gc_corruption *c) {
  gc_value e = c->victim;
  if (gc_tag(e) != GC_TAG_EPHEMERON || colour_of_block(e) != c->heap->colours.marked) return 0;
  gc_value key = GC_FIELD(e, GC_EPHE_KEY), datum = GC_FIELD(e, GC_EPHE_DATUM);
  /* A datum that is its own key: unmarking it kills the key, and the pass rightly reads that as
   * a dead key left uncleaned (ephe.uncleaned), not as a datum lost under a live key. */
  if (key == 0 || !gc_is_block(datum) || key == datum) return 0;
  /* A datum that is an ephemeron or a weak reference itself: unmarked, it is a dead entry of
   * its owner's list, which the pass reports first (ephe.unlisted). */
  if (gc_tag_is_weak(gc_tag(datum))) return 0;
  if (gc_is_block(key) && colour_of_block(key) != c->heap->colours.marked &&
      colour_of_block(key) != GC_NOT_MARKABLE) {
    return 0;
  }
  return unmark_block(c, datum);
}

/* ephe_test uncleaned_*: a live weak reference's target, or a live ephemeron's key, UNMARKED
 * after the clean phase: the slot names a dead block. */
static int plant_ephe_uncleaned(gc_corruption *c) {
  gc_value v = c->victim;
  unsigned tag = gc_tag(v);
  if (!gc_tag_is_weak(tag) || colour_of_block(v) != c->heap->colours.marked) return 0;
  gc_value named = GC_FIELD(v, tag == GC_TAG_WEAK ? GC_WEAK_TARGET : GC_EPHE_KEY);
  /* As for a datum: a weak block unmarked is a dead list entry first (ephe.unlisted). */
  return gc_is_block(named) && !gc_tag_is_weak(gc_tag(named)) && unmark_block(c, named);
}

/* ephe_test dangling_outside_datum: a slot naming no block at all (here, memory outside the
 * heap). */
static int plant_ephe_dangling(gc_corruption *c) {
  unsigned tag = gc_tag(c->victim);
  if (!gc_tag_is_weak(tag)) return 0;
  POKE(&c->undo, GC_FIELD(c->victim, tag == GC_TAG_WEAK ? GC_WEAK_TARGET : GC_EPHE_DATUM),
       (gc_value)&c->written);
  return 1;
}

/* ephe_test unlisted_count: the running domain's list counts one weak reference more than its
 * chain holds. */
static int plant_ephe_unlisted(gc_corruption *c) {
  if (!gc_tag_is_weak(gc_tag(c->victim))) return 0;
  POKE(&c->undo, c->dom->ephe.weak_refs, c->dom->ephe.weak_refs + 1);
  return 1;
}

/* ---- A compaction (moved_test), planted as a record of its start ------------------------- */

/* A pool address no mapping holds (low memory), as the record of a compaction that gave it back. */
static const uintptr_t released_pool = (uintptr_t)GC_POOL_BSIZE * 3;

/* The verifier's record of a compaction's start, as if the last compaction had just run from
 * it: no pool, no block that had to stay, the bound checked or not; the plant adds the rest.
 * One write of the whole record (the undo log keeps few entries). */
static gc_verify_moved_record record_of(gc_corruption *c, int bound) {
  gc_verify_moved_record r = gc_verify_scratch_of(c->verifier)->moved;
  r.taken = 1;
  r.heap = c->heap;
  r.compactions = c->heap->compact.count;
  r.bound = bound;
  r.pool_count = 0;
  r.fixed_count = 0;
  return r;
}
static void plant_record(gc_corruption *c, gc_verify_moved_record r) {
  POKE(&c->undo, gc_verify_scratch_of(c->verifier)->moved, r);
}

/* moved_test root_not_forwarded: field N names a block of a pool the compaction gave back. */
static int plant_moved_stale(gc_corruption *c) {
  gc_verify_moved_record r = record_of(c, 0);
  r.pools = (uintptr_t *)&released_pool;
  r.pool_count = 1;
  plant_record(c, r);
  return set_field(c, released_pool + (GC_POOL_HEADER_WSIZE + 1) * sizeof(gc_value));
}

/* moved_test forwarding_in_free_slot: a forwarding header in a free slot of the victim's pool (or
 * the slot at its frontier, taken). */
static int plant_moved_forwarding(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  gc_header *slot = p->free_list;
  if (slot == NULL) {
    if (p->frontier >= p->end) return 0;
    slot = p->frontier;
    POKE(&c->undo, p->frontier, p->frontier + gc_wsize_of_class[p->size_class]);
  }
  POKE(&c->undo, slot[0], GC_HD_FORWARD);
  return 1;
}

/* moved_test pinned_block_moved: the victim recorded as pinned with another header than its own
 * (as if another block now sat where the pinned one was). */
static int plant_moved_pinned(gc_corruption *c) {
  gc_verify_moved_record r = record_of(c, 0);
  gc_header hd = *victim_hp(c);
  c->moved_fixed =
      (gc_verify_fixed){c->victim, gc_hd_make(gc_hd_wsize(hd) + 1, 0, gc_hd_tag(hd)), "pinned"};
  r.fixed = &c->moved_fixed;
  r.fixed_count = 1;
  plant_record(c, r);
  return 1;
}

/* moved_test class_skipped: a record of a compaction that just ran, while the victim's class
 * is in more pools than its blocks need (as a compactor that skipped it leaves it). */
static int plant_moved_not_compacted(gc_corruption *c) {
  gc_pool *p = c->at.pool;
  gc_sizeclass k = p->size_class;
  size_t pools = 0, live = 0;
  for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
    if (c->at.owner.pool_lists[l] == NULL) continue;
    for (gc_pool *q = c->at.owner.pool_lists[l][k]; q != NULL; q = q->next) {
      const size_t slot_whsize = gc_wsize_of_class[k];
      pools++;
      for (gc_header *hp = gc_pool_first_slot(q); hp < q->frontier; hp += slot_whsize) {
        live += *hp != 0;
      }
    }
  }
  size_t slots = gc_slots_of_class(k);
  if (pools <= (live + slots - 1) / slots) return 0;
  plant_record(c, record_of(c, 1));
  return 1;
}

/* ---- The table ----------------------------------------------------------------------------- */

/* X(KIND, "variant", AT, needs, plant): the kind (invariants/kinds.h) the corruption must produce,
 * whose pass checks it; the variant that tells it from the others of its kind; the hook point its
 * pass is run as (corruption_row.at); what it needs; and the function that writes it. */
#define GC_CORRUPTIONS(X)                                                                         \
  X(REACH_FOREIGN_POINTER, "", CYCLED, NEED_FIELD, plant_wild_field)                              \
  X(REACH_FOREIGN_POINTER, "free-pool", CYCLED, NEED_FIELD, plant_free_pool_field)                \
  X(REACH_INTERIOR_POINTER, "", CYCLED, NEED_FIELD, plant_interior_field)                         \
  X(REACH_INTERIOR_POINTER, "pool-start", CYCLED, NEED_FIELD | NEED_POOL, plant_pool_start_field) \
  X(REACH_INTERIOR_POINTER, "unused-slot", CYCLED, NEED_FIELD | NEED_POOL,                        \
    plant_unused_slot_field)                                                                      \
  X(REACH_INTERIOR_POINTER, "wastage", CYCLED, NEED_FIELD | NEED_POOL, plant_wastage_field)       \
  X(REACH_ZERO_HEADER, "", CYCLED, NEED_BLOCK, plant_zero_header)                                 \
  X(REACH_BAD_HEADER, "", CYCLED, NEED_BLOCK, plant_invalid_tag)                                  \
  X(REACH_BAD_HEADER, "oversized", CYCLED, NEED_BLOCK, plant_oversized_unrooted)                  \
  X(REACH_BAD_COLOUR, "", CYCLED, NEED_BLOCK, plant_garbage)                                      \
  X(REACH_BAD_COLOUR, "marked", CYCLED, NEED_BLOCK, plant_marked)                                 \
  X(SWEPT_STAT_MISMATCH, "", SWEPT, NEED_BLOCK, plant_statistic)                                  \
  X(SWEPT_UNSWEPT_LEFT, "", SWEPT, NEED_BLOCK, plant_unswept)                                     \
  X(SWEPT_UNSWEPT_LEFT, "sweeping", SWEPT, NEED_BLOCK, plant_sweeping)                            \
  X(SWEPT_BAD_POOL, "", SWEPT, NEED_POOL, plant_wrong_owner)                                      \
  X(SWEPT_BAD_POOL, "two-lists", SWEPT, NEED_POOL, plant_two_lists)                               \
  X(SWEPT_POOL_COUNT, "", SWEPT, 0, plant_pool_count)                                             \
  X(SWEPT_POOL_SET, "", SWEPT, NEED_POOL, plant_pool_set)                                         \
  X(SWEPT_TILING, "", SWEPT, NEED_POOL, plant_oversized)                                          \
  X(SWEPT_BAD_HEADER, "", SWEPT, NEED_BLOCK, plant_invalid_tag)                                   \
  X(SWEPT_GARBAGE_LEFT, "", SWEPT, NEED_BLOCK, plant_garbage)                                     \
  X(SWEPT_BAD_COLOUR, "", SWEPT, NEED_BLOCK, plant_marked)                                        \
  X(SWEPT_FREELIST_FOREIGN, "", SWEPT, NEED_POOL, plant_freelist_foreign)                         \
  X(SWEPT_FREELIST_MISALIGNED, "", SWEPT, NEED_POOL, plant_freelist_misaligned)                   \
  X(SWEPT_FREELIST_LIVE, "", SWEPT, NEED_POOL, plant_freelist_live)                               \
  X(SWEPT_FREELIST_CYCLE, "", SWEPT, NEED_POOL, plant_freelist_cycle)                             \
  X(SWEPT_FREELIST_ORDER, "", SWEPT, NEED_POOL, plant_freelist_order)                             \
  X(SWEPT_FREELIST_COUNT, "", SWEPT, NEED_POOL, plant_freelist_count)                             \
  X(SWEPT_FULL_POOL_HAS_FREE_SLOT, "", SWEPT, NEED_POOL, plant_full_with_free_slot)               \
  X(SWEPT_AVAIL_POOL_FULL, "", SWEPT, NEED_POOL, plant_avail_full)                                \
  X(SWEPT_BAD_FRONTIER, "", SWEPT, NEED_POOL, plant_frontier)                                     \
  X(SWEPT_WORKBUF_LOST, "", SWEPT, 0, plant_workbuf)                                              \
  X(CHECKMARK_UNMARKED, "", MARK_DONE, NEED_BLOCK, plant_unmarked)                                \
  X(CHECKMARK_BAD_POINTER, "", MARK_DONE, NEED_FIELD, plant_wild_field)                           \
  X(CHECKMARK_MARK_UNFINISHED, "", MARK_DONE, 0, plant_marker_busy)                               \
  X(CHECKMARK_MARK_UNFINISHED, "barrier", MARK_DONE, 0, plant_follower_missing)                   \
  X(CHECKMARK_OVER_RETAINED, "", MARK_DONE, NEED_POOL, plant_over_retained)                       \
  X(CHECKMARK_OVER_RETAINED, "free-slot", MARK_DONE, NEED_POOL, plant_over_retained_free_slot)    \
  X(CHECKMARK_OVER_RETAINED, "unpinned", MARK_DONE, NEED_BLOCK, plant_over_retained_unpinned)     \
  X(CHECKMARK_MARK_COUNT, "", MARK_DONE, 0, plant_mark_count)                                     \
  X(SATB_UNMARKED, "", MARK_DONE, NEED_BLOCK, plant_snapshot_unmarked)                            \
  X(SATB_BORN_WHITE, "", MARK_DONE, NEED_POOL, plant_born_white)                                  \
  X(MODEL_DEAD, "", CYCLED, NEED_OBJECT, plant_model_garbage)                                     \
  X(MODEL_DEAD, "free", CYCLED, NEED_OBJECT, plant_model_freed)                                   \
  X(MODEL_DEAD, "reused", CYCLED, NEED_OBJECT, plant_model_reused)                                \
  X(MODEL_CONTENTS, "", CYCLED, NEED_OBJECT, plant_model_field)                                   \
  X(MODEL_CONTENTS, "header", CYCLED, NEED_OBJECT, plant_model_tag)                               \
  X(MODEL_NOT_FREED, "", SWEPT, NEED_OBJECT, plant_model_doomed)                                  \
  X(MODEL_FINALIZER_COUNT, "", SWEPT, NEED_OBJECT, plant_model_finalized)                         \
  X(MODEL_FINALIZER_COUNT, "unknown-block", CYCLED, 0, plant_model_unknown_finalized)             \
  X(MODEL_FINALIZER_COUNT, "unqueued", CYCLED, NEED_OBJECT, plant_model_unqueued_finalizer)       \
  X(MODEL_LIVE_COUNT, "", SWEPT, NEED_BLOCK, plant_model_live_count)                              \
  X(MODEL_ROOT, "", CYCLED, 0, plant_model_root)                                                  \
  X(PERF_UNPACED_CYCLE, "", SWEPT, 0, plant_unpaced)                                              \
  X(PERF_UNPACED_CYCLE, "off", SWEPT, 0, plant_unpaced_off)                                       \
  X(PERF_NEEDLESS_OVERFLOW, "", SWEPT, 0, plant_needless_overflow)                                \
  X(PERF_MARK_WORK, "", SWEPT, 0, plant_mark_work)                                                \
  X(PERF_MARK_WORK, "redarken", SWEPT, 0, plant_mark_work_redarken)                               \
  X(PERF_LONE_HANDOFF, "", SWEPT, 0, plant_lone_handoff)                                          \
  X(PERF_RECHECK_LIMIT, "", SWEPT, 0, plant_recheck_limit)                                        \
  X(PERF_MARKERS, "", SWEPT, 0, plant_markers)                                                    \
  X(PERF_OVERFLOW_COUNT, "", SWEPT, 0, plant_overflow_count)                                      \
  X(PERF_HANDOFF_COUNT, "", SWEPT, 0, plant_handoff_count)                                        \
  X(PERF_SLICE_COUNT, "", SWEPT, 0, plant_slice_count)                                            \
  X(PERF_SWEEP_WORK, "", SWEPT, 0, plant_sweep_work)                                              \
  X(PERF_SWEEP_WORK, "large", SWEPT, 0, plant_sweep_work_large)                                   \
  X(STATS_SUM, "", SWEPT, NEED_BLOCK, plant_stats_sum)                                            \
  X(STATS_SUM, "large-words", SWEPT, 0, plant_stats_sum_large)                                    \
  X(STATS_SUM, "mapped", SWEPT, 0, plant_stats_mapped)                                            \
  X(STATS_RECOUNT, "", SWEPT, 0, plant_stats_free_count)                                          \
  X(STATS_BALANCE, "", SWEPT, 0, plant_stats_balance)                                             \
  X(STATS_COUNTER, "", SWEPT, 0, plant_stats_counter)                                             \
  X(STATS_MAXIMUM, "", SWEPT, 0, plant_stats_maximum)                                             \
  X(STATS_PAUSES, "", SWEPT, 0, plant_stats_pauses)                                               \
  X(SPACE_EMPTY_POOL, "", SWEPT, NEED_POOL, plant_space_empty_pool)                               \
  X(SPACE_FRONTIER_SLACK, "", SWEPT, NEED_POOL, plant_space_frontier_slack)                       \
  X(SPACE_FREE_POOLS, "", SWEPT, 0, plant_space_free_pools)                                       \
  X(SPACE_FREE_POOLS, "mapped", SWEPT, 0, plant_space_mapped)                                     \
  X(SPACE_ORPHAN_PASSED_OVER, "", SWEPT, NEED_POOL, plant_space_orphan)                           \
  X(EPHE_DATUM_UNMARKED, "", MARK_DONE, NEED_BLOCK, plant_ephe_datum_unmarked)                    \
  X(EPHE_UNCLEANED, "", MARK_DONE, NEED_BLOCK, plant_ephe_uncleaned)                              \
  X(EPHE_DANGLING, "", SWEPT, NEED_BLOCK, plant_ephe_dangling)                                    \
  X(EPHE_UNLISTED, "", SWEPT, NEED_BLOCK, plant_ephe_unlisted)                                    \
  X(MOVED_STALE_REFERENCE, "", COMPACTED, NEED_FIELD, plant_moved_stale)                          \
  X(MOVED_FORWARDING_LEFT, "", COMPACTED, NEED_POOL, plant_moved_forwarding)                      \
  X(MOVED_PINNED_MOVED, "", COMPACTED, NEED_BLOCK, plant_moved_pinned)                            \
  X(MOVED_NOT_COMPACTED, "", COMPACTED, NEED_POOL, plant_moved_not_compacted)

static const corruption_row rows[] = {
#define GC_CORRUPTION_ROW(kind, variant, at, needs, plant) \
  {GC_VK_##kind, variant, GC_HOOK_##at, needs, plant},
    GC_CORRUPTIONS(GC_CORRUPTION_ROW)
#undef GC_CORRUPTION_ROW
};

enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

size_t gc_corruption_count(void) { return ROW_COUNT; }

const char *gc_corruption_name(size_t which, char *buf, size_t bsize) {
  const corruption_row *r = &rows[which];
  snprintf(buf, bsize, "%s%s%s", gc_verify_kind_name(r->kind), r->variant[0] ? "/" : "",
           r->variant);
  return buf;
}

long gc_corruption_find(const char *name, size_t len) {
  for (size_t i = 0; i < ROW_COUNT; i++) {
    const char *kind = gc_verify_kind_name(rows[i].kind);
    size_t kind_len = strlen(kind), variant_len = strlen(rows[i].variant);
    if (len < kind_len || memcmp(name, kind, kind_len) != 0) continue;
    if (variant_len == 0 ? len == kind_len
                         : len == kind_len + 1 + variant_len && name[kind_len] == '/' &&
                               memcmp(name + kind_len + 1, rows[i].variant, variant_len) == 0) {
      return (long)i;
    }
  }
  return -1;
}

gc_verify_kind gc_corruption_kind(size_t which) { return rows[which].kind; }

const char *gc_corruption_pass(size_t which) { return gc_verify_kind_pass(rows[which].kind); }

gc_hook_point gc_corruption_point(size_t which) { return rows[which].at; }

int gc_corruption_at_mark_done(size_t which) { return rows[which].at == GC_HOOK_MARK_DONE; }

/* ---- Can it apply ------------------------------------------------------------------------- */

/* The victim's owner, list and pool or large block, from the owners' lists (never by reading an
 * address that is not known to be a pool first). Returns 0 if no list holds it. */
static int locate(gc_heap *heap, gc_value v, gc_corrupt_place *at) {
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
        *at = (gc_corrupt_place){o, NULL, large, l, NULL, link};
        return 1;
      }
    }
    for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
      if (o.pool_lists[l] == NULL) continue;
      for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
        for (gc_pool **link = &o.pool_lists[l][c]; *link != NULL; link = &(*link)->next) {
          if (*link != pool) continue;
          *at = (gc_corrupt_place){o, pool, NULL, l, link, NULL};
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
static int pass_ready(const gc_corruption *c, const corruption_row *row) {
  gc_verify_pass_id pass = gc_verify_kind_pass_id(row->kind);
  if (!(gc_heap_config(c->heap)->verify & gc_verify_pass_mask(pass))) return 0;
  if (pass == GC_VPASS_MODEL && c->model == NULL) return 0;
  if (row->at == GC_HOOK_MARK_DONE) return 1; /* runs at its own collection's mark-done point */
  if (sweep_unfinished(c->heap)) return 0;
  if (pass != GC_VPASS_MODEL) return 1;
  /* The model's checks at the swept point (freed, finalized, live count) have no effect between
   * ops only once the last sweep's check has settled every object it doomed. */
  const gc_model *m = c->model;
  if (m->pend_count != 0 || m->pend_dropped != 0 || m->doomed_count != 0) return 0;
  return row->at != GC_HOOK_SWEPT || m->finalized_notes == 0;
}

int gc_corruption_prepare(gc_corruption *c) {
  const corruption_row *row = &rows[c->which];
  if (!pass_ready(c, row)) return 0;
  c->victim = c->slots[c->slot];
  c->obj = gc_is_block(c->victim) && c->model != NULL ? gc_model_id_of(c->model, c->victim)
                                                      : GC_MODEL_NONE;
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
    if (c->model == NULL) return 0;
    c->o = gc_model_live_obj(c->model, c->obj);
    if (c->o == NULL || c->o->lost || c->o->val != c->victim) return 0;
  }
  return 1;
}

/* ---- Plant, check, undo -------------------------------------------------------------------- */

int gc_corruption_plant(gc_corruption *c) {
  c->written.addr = NULL;
  if (!rows[c->which].plant(c)) return 0;
  const gc_corrupt_undo *u = &c->undo;
  for (size_t i = 0; i < u->count; i++) {
    uintptr_t before, now;
    if (u->entries[i].bsize != sizeof before) continue;
    memcpy(&before, u->saved + u->entries[i].at, sizeof before);
    memcpy(&now, u->entries[i].addr, sizeof now);
    if (before == now) continue; /* kept, not written (yet) */
    c->written.addr = u->entries[i].addr;
    c->written.before = before;
    c->written.now = now;
    break;
  }
  return 1;
}

/* The pass in the verifier's memory: a corruption allocates nothing for its checks. */
size_t gc_corruption_check(gc_corruption *c, gc_verify_reports *out) {
  const corruption_row *row = &rows[c->which];
  gc_verify_pass_id pass = gc_verify_kind_pass_id(row->kind);
  /* The model's checks depend on the point; the verifier's passes, called directly, do not. */
  if (pass == GC_VPASS_MODEL) return gc_model_check(c->model, row->at, out);
  return gc_verify_pass_now(c->verifier, gc_verify_pass_mask(pass), out);
}

void gc_corruption_describe(const gc_corruption *c, char *buf, size_t bsize) {
  int used = snprintf(buf, bsize, "on block %#llx", (unsigned long long)c->victim);
  if (c->written.addr == NULL || used <= 0 || (size_t)used >= bsize) return;
  snprintf(buf + used, bsize - (size_t)used, " (word at %p: %#llx -> %#llx)", c->written.addr,
           (unsigned long long)c->written.before, (unsigned long long)c->written.now);
}
