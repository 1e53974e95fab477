/* The swept pass (swept-pool accounting), run when every domain finished sweeping
 * (GC_HOOK_SWEPT); also callable directly whenever no collection is running.
 *
 * For every owner (each domain, and the orphans: see heapindex.h) it walks
 * every pool and large block on the owner's lists, recounts them, and checks:
 *   - INV-STATS-1: the owner's running statistics equal the recount (pool words, live words,
 *     live blocks, fragmentation words, large words, large blocks), and the maxima are not below
 *     the current values: swept.stat-mismatch;
 *   - INV-POOL-2: each pool on exactly one list, owned by this owner, of the list's size class
 *     (swept.bad-pool); the unswept lists empty once sweeping is done (swept.unswept-left); full
 *     pools without a free slot (swept.full-pool-has-free-slot), avail pools with one
 *     (swept.avail-pool-full);
 *   - INV-POOL-1: every free-list entry is inside its own pool (swept.freelist-foreign), at a slot
 *     start (swept.freelist-misaligned), with a zero header (swept.freelist-live), the list has no
 *     cycle (swept.freelist-cycle, a visited bit per slot) and ascends (swept.freelist-order), and
 *     holds every zero-header slot (swept.freelist-count); every block fits its slot
 *     (swept.tiling) and has a valid tag (swept.bad-header);
 *   - INV-POOL-3 / the size-class table: header + slots * slot size + wastage == GC_POOL_WSIZE
 *     for the pool's class (swept.tiling);
 *   - INV-COL-1: no block is GARBAGE after sweeping (swept.garbage-left), and none is MARKED
 *     outside marking (swept.bad-colour);
 *   - INV-LARGE-1: each large block on one list, with a header larger than any pool slot;
 *   - the heap's pool accounting: mapped pools == owned pools + free pools, every free pool
 *     unowned (swept.pool-count, swept.bad-pool); the heap limit's used_bytes equals the bytes of
 *     every owner's pools and large blocks (swept.stat-mismatch);
 *   - INV-INDEX-1: the collector's pool set (which resolves conservative words) holds exactly the
 *     owned pools (swept.pool-set).
 *
 * Cost: O(slots of every pool + large blocks): one header read per slot, one step per free-list
 * entry, a 256-byte visited bitmap per pool on the stack, and an address-map insert per pool and
 * large block to catch lists that share or loop.
 */
#include <stdio.h>
#include <string.h>

#include "gc/large.h"
#include "gc/pool.h"
#include "gc/poolset.h"
#include "gc/workbuf.h"
#include "invariants/pass.h"
#include "invariants/verify.h"

typedef struct sweptcheck {
  const gc_verify_run *run;
  gc_heap *heap;
  gc_addrmap *seen; /* pools and large blocks met so far: a second meeting is a shared list */
  size_t found;
  size_t owned_pools;
  size_t owned_words;  /* recounted pool and large words of every owner */
  int recount_partial; /* a pool could not be walked: this owner's recount is not comparable */
  int out_of_memory;   /* `seen` could not grow: the pass stops, what is left is unchecked */
} sweptcheck;

/* Count a violation; returns the report to fill, or NULL when it is only counted. */
#define violation(sc, kind, ...) gc_verify_violation((sc)->run, &(sc)->found, (kind), __VA_ARGS__)

/* The block or free slot at hp of pool p, with its header, into r. */
static void about_slot(sweptcheck *sc, gc_verify_report *r, const gc_verify_owner *o, int list,
                       gc_pool *p, gc_header *hp) {
  if (r == NULL) return;
  size_t slot_whsize = gc_wsize_of_class[p->size_class];
  r->block = gc_val_hp(hp);
  gc_verify_report_header(r, sc->heap, *hp);
  gc_verify_report_where(r, "pool %p class %u (%zu-word slots), slot %zu, on %s's %s list",
                         (void *)p, p->size_class, slot_whsize,
                         (size_t)(hp - gc_pool_first_slot(p)) / slot_whsize, o->name,
                         o->pool_list_names[list]);
}

static void about_pool(gc_verify_report *r, const gc_verify_owner *o, int list, gc_pool *p) {
  if (r == NULL) return;
  gc_verify_report_where(r, "pool %p (class %u) on %s's %s list", (void *)p, p->size_class, o->name,
                         o->pool_list_names[list]);
}

/* ---- One pool ------------------------------------------------------------------------------ */

/* Recount the blocks of p into *s and check each slot; returns the number of zero-header slots. */
static size_t check_slots(sweptcheck *sc, const gc_verify_owner *o, int list, gc_pool *p,
                          gc_heap_stats *s) {
  const gc_colours *col = &sc->heap->colours;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  gc_header *end = p->frontier; /* checked by check_pool: slots above it are unused */
  size_t zero = 0;
  for (gc_header *hp = first; hp < end; hp += slot_whsize) {
    gc_header hd = *hp;
    if (hd == 0) {
      zero++;
      continue;
    }
    size_t whsize = gc_hd_whsize(hd);
    s->pool_live_blocks++;
    s->pool_live_words += whsize;
    if (whsize <= slot_whsize) {
      s->pool_frag_words += slot_whsize - whsize;
    } else {
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_TILING,
                           "a block of whsize %zu in a %zu-word slot overlaps the next slot "
                           "(INV-POOL-1)",
                           whsize, slot_whsize),
                 o, list, p, hp);
    }
    if (!gc_tag_is_valid(gc_hd_tag(hd))) {
      about_slot(
          sc,
          violation(sc, GC_VK_SWEPT_BAD_HEADER, "a block has the invalid tag %u", gc_hd_tag(hd)), o,
          list, p, hp);
    }
    gc_header colour = gc_hd_colour(hd);
    if (colour == col->garbage) {
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_GARBAGE_LEFT,
                           "a GARBAGE block is still in its slot after sweeping finished "
                           "(INV-COL-1)"),
                 o, list, p, hp);
    } else if (colour == col->marked) {
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_BAD_COLOUR,
                           "a MARKED block outside marking: no block may have that colour "
                           "between cycles (INV-COL-1)"),
                 o, list, p, hp);
    }
  }
  return zero;
}

/* Walk p's free list. Returns the number of valid entries, or SIZE_MAX when the list is broken
 * (a foreign, misaligned or repeated entry: the walk stops there and the count means nothing). */
static size_t check_free_list(sweptcheck *sc, const gc_verify_owner *o, int list, gc_pool *p) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  const size_t slots = gc_slots_of_class(p->size_class);
  gc_header *first = gc_pool_first_slot(p);
  uint64_t visited[(GC_POOL_WSIZE / 2 + 63) / 64]; /* a bit per slot; slots >= 2 words */
  memset(visited, 0, (slots + 63) / 64 * sizeof visited[0]);
  size_t entries = 0;
  int order_reported = 0;
  gc_header *prev = NULL;
  for (gc_header *e = p->free_list; e != NULL; e = (gc_header *)e[1]) {
    if (gc_pool_of_hp(e) != p) {
      gc_verify_report *r = violation(sc, GC_VK_SWEPT_FREELIST_FOREIGN,
                                      "free-list entry %p (after %zu entries) is outside its pool "
                                      "(INV-POOL-1)",
                                      (void *)e, entries);
      about_pool(r, o, list, p);
      if (r != NULL) r->block = gc_val_hp(e);
      return SIZE_MAX;
    }
    size_t word = (size_t)(e - first);
    if (e < first || e >= p->frontier || word % slot_whsize != 0) {
      gc_verify_report *r = violation(sc, GC_VK_SWEPT_FREELIST_MISALIGNED,
                                      "free-list entry %p (after %zu entries) is not at the start "
                                      "of a slot below the pool's frontier %p (INV-POOL-1)",
                                      (void *)e, entries, (void *)p->frontier);
      about_pool(r, o, list, p);
      if (r != NULL) r->block = gc_val_hp(e);
      return SIZE_MAX;
    }
    size_t slot = word / slot_whsize;
    if (visited[slot / 64] & (1ull << (slot % 64))) {
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_FREELIST_CYCLE,
                           "the free list comes back to slot %zu after %zu entries "
                           "(INV-POOL-1: no cycle)",
                           slot, entries),
                 o, list, p, e);
      return SIZE_MAX;
    }
    visited[slot / 64] |= 1ull << (slot % 64);
    if (prev != NULL && e < prev && !order_reported) {
      order_reported = 1;
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_FREELIST_ORDER,
                           "free-list entry after %zu entries is below its predecessor %p "
                           "(INV-POOL-1: ascending order)",
                           entries, (void *)prev),
                 o, list, p, e);
    }
    if (*e != 0) {
      about_slot(sc,
                 violation(sc, GC_VK_SWEPT_FREELIST_LIVE,
                           "a free-list entry holds a block (non-zero header): allocation "
                           "would overwrite it (INV-POOL-1)"),
                 o, list, p, e);
    } else {
      entries++;
    }
    prev = e;
  }
  return entries;
}

static void check_pool(sweptcheck *sc, const gc_verify_owner *o, int list, gc_sizeclass c,
                       gc_pool *p, gc_heap_stats *s) {
  if (((uintptr_t)p & (GC_POOL_BSIZE - 1)) != 0 || p->owner != o->domain || p->size_class != c) {
    gc_verify_report *r = violation(sc, GC_VK_SWEPT_BAD_POOL,
                                    "pool on the class-%u list: aligned %s, owner %p (expected "
                                    "%p), size class %u (INV-POOL-2)",
                                    c, ((uintptr_t)p & (GC_POOL_BSIZE - 1)) ? "no" : "yes",
                                    (void *)p->owner, (void *)o->domain, p->size_class);
    about_pool(r, o, list, p);
    if (((uintptr_t)p & (GC_POOL_BSIZE - 1)) != 0 || p->size_class >= GC_NUM_SIZECLASSES) return;
  }
  sc->owned_pools++;
  if (!gc_pool_set_contains(sc->heap, p)) {
    about_pool(violation(sc, GC_VK_SWEPT_POOL_SET,
                         "an owned pool is missing from the collector's pool set, so conservative "
                         "words into it are ignored (INV-INDEX-1)"),
               o, list, p);
  }
  gc_sizeclass pc = p->size_class;
  if (GC_POOL_HEADER_WSIZE + (size_t)gc_slots_of_class(pc) * gc_wsize_of_class[pc] +
          gc_wastage_of_class[pc] !=
      GC_POOL_WSIZE) {
    about_pool(violation(sc, GC_VK_SWEPT_TILING,
                         "class %u: header %d + %u slots * %u words + wastage %u != %d words", pc,
                         GC_POOL_HEADER_WSIZE, gc_slots_of_class(pc), gc_wsize_of_class[pc],
                         gc_wastage_of_class[pc], GC_POOL_WSIZE),
               o, list, p);
  }
  s->pool_words += GC_POOL_WSIZE;
  s->pool_frag_words += GC_POOL_HEADER_WSIZE + gc_wastage_of_class[pc];
  /* INV-POOL-1: the used slots end at the frontier, a slot boundary between the first slot and
   * the end of the last whole slot. Nothing below can be walked without it. */
  gc_header *first = gc_pool_first_slot(p);
  size_t slot_whsize = gc_wsize_of_class[pc];
  if (p->end != gc_pool_slots_end(p) || p->frontier < first || p->frontier > p->end ||
      (size_t)(p->frontier - first) % slot_whsize != 0) {
    about_pool(violation(sc, GC_VK_SWEPT_BAD_FRONTIER,
                         "frontier %p, end %p: the frontier must be a slot start from %p to %p, "
                         "the end %p (INV-POOL-1)",
                         (void *)p->frontier, (void *)p->end, (void *)first,
                         (void *)gc_pool_slots_end(p), (void *)gc_pool_slots_end(p)),
               o, list, p);
    sc->recount_partial = 1; /* its blocks are not counted: the statistics cannot be compared */
    return;
  }
  size_t zero = check_slots(sc, o, list, p, s);
  size_t entries = check_free_list(sc, o, list, p);

  if (list == GC_VERIFY_FULL || list == GC_VERIFY_UNSWEPT_FULL) {
    if (p->free_list != NULL || zero > 0 || p->frontier != p->end) {
      about_pool(violation(sc, GC_VK_SWEPT_FULL_POOL_HAS_FREE_SLOT,
                           "a pool on a full list has %zu free slot(s), %s free list and %zu "
                           "unused slot(s) above its frontier (INV-POOL-2)",
                           zero, p->free_list ? "a non-empty" : "an empty",
                           (size_t)(p->end - p->frontier) / slot_whsize),
                 o, list, p);
    }
    return; /* the count is meaningless for a pool that should have none */
  }
  if (p->free_list == NULL && p->frontier == p->end) {
    about_pool(violation(sc, GC_VK_SWEPT_AVAIL_POOL_FULL,
                         "a pool on an avail list has an empty free list and no unused slot "
                         "(%zu zero-header slots) (INV-POOL-2)",
                         zero),
               o, list, p);
    return;
  }
  if (entries != SIZE_MAX && entries != zero) {
    about_pool(violation(sc, GC_VK_SWEPT_FREELIST_COUNT,
                         "%zu slots have a zero header but the free list holds %zu of them "
                         "(INV-POOL-1: the free list holds exactly the free slots)",
                         zero, entries),
               o, list, p);
  }
}

/* ---- One owner ----------------------------------------------------------------------------- */

static void check_large(sweptcheck *sc, const gc_verify_owner *o, int list, gc_large *a,
                        gc_heap_stats *s) {
  gc_header *hp = gc_large_hp(a);
  gc_header hd = *hp;
  size_t whsize = gc_hd_whsize(hd);
  s->large_blocks++;
  s->large_words += whsize + GC_LARGE_HEADER_WSIZE;
  gc_verify_report *r = NULL;
  if (hd == 0 || !gc_tag_is_valid(gc_hd_tag(hd)) || whsize <= GC_SIZECLASS_MAX_WHSIZE) {
    r = violation(sc, GC_VK_SWEPT_BAD_HEADER,
                  "a large block's header is zero, has an invalid tag, or a whsize that fits a "
                  "pool slot (INV-LARGE-1)");
  } else if (gc_hd_colour(hd) == sc->heap->colours.garbage) {
    r = violation(sc, GC_VK_SWEPT_GARBAGE_LEFT,
                  "a GARBAGE large block is still on a list after sweeping finished "
                  "(INV-COL-1)");
  } else if (gc_hd_colour(hd) == sc->heap->colours.marked) {
    r = violation(sc, GC_VK_SWEPT_BAD_COLOUR, "a MARKED large block outside marking (INV-COL-1)");
  }
  if (r == NULL) return;
  r->block = gc_val_hp(hp);
  gc_verify_report_header(r, sc->heap, hd);
  gc_verify_report_where(r, "large block (gc_large %p) on %s's %s list", (void *)a, o->name,
                         o->large_list_names[list]);
}

static void compare(sweptcheck *sc, const gc_verify_owner *o, const char *name, size_t running,
                    size_t recount) {
  if (running == recount) return;
  gc_verify_report *r =
      violation(sc, GC_VK_SWEPT_STAT_MISMATCH,
                "%s: running statistic %zu, recount %zu (INV-STATS-1)", name, running, recount);
  if (r != NULL) gc_verify_report_where(r, "%s's statistics", o->name);
}

static void at_least(sweptcheck *sc, const gc_verify_owner *o, const char *name, size_t max,
                     const char *of, size_t value) {
  if (max >= value) return;
  gc_verify_report *r =
      violation(sc, GC_VK_SWEPT_STAT_MISMATCH,
                "%s %zu is below %s %zu: a maximum below the current value", name, max, of, value);
  if (r != NULL) gc_verify_report_where(r, "%s's statistics", o->name);
}

static void check_owner(sweptcheck *sc, const gc_verify_owner *o) {
  gc_heap_stats s;
  memset(&s, 0, sizeof s);
  if (o->sweeping) {
    gc_verify_report *r =
        violation(sc, GC_VK_SWEPT_UNSWEPT_LEFT, "%s has not finished sweeping this cycle", o->name);
    if (r != NULL) gc_verify_report_where(r, "%s", o->name);
  }
  for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
    if (o->pool_lists[l] == NULL) continue;
    int unswept = l == GC_VERIFY_UNSWEPT_AVAIL || l == GC_VERIFY_UNSWEPT_FULL;
    /* Only the classes whose list is not empty: an empty one has nothing to check (no pool, no
     * unswept pool left). */
    for (uint32_t bits = gc_verify_pool_classes(o->pool_lists[l]); bits != 0; bits &= bits - 1) {
      gc_sizeclass c = (gc_sizeclass)__builtin_ctz(bits);
      gc_pool *head = o->pool_lists[l][c];
      if (unswept && head != NULL && !o->sweeping) {
        about_pool(violation(sc, GC_VK_SWEPT_UNSWEPT_LEFT,
                             "the class-%u unswept list is not empty after sweeping finished", c),
                   o, l, head);
      }
      for (gc_pool *p = head; p != NULL; p = p->next) {
        int added = gc_addrmap_add(sc->seen, (uintptr_t)p, 0);
        if (added == 0) {
          about_pool(violation(sc, GC_VK_SWEPT_BAD_POOL,
                               "the pool is met a second time: it is on two lists, or its list "
                               "loops (INV-POOL-2)"),
                     o, l, p);
          break;
        }
        if (added < 0) {
          sc->out_of_memory = 1; /* better an unchecked tail than a false report */
          return;
        }
        check_pool(sc, o, l, c, p, &s);
      }
    }
  }
  for (int l = 0; l < GC_VERIFY_LARGE_LISTS; l++) {
    if (o->large_lists[l] == NULL) continue;
    gc_large *head = *o->large_lists[l];
    if (l == GC_VERIFY_UNSWEPT_LARGE && head != NULL && !o->sweeping) {
      gc_verify_report *r = violation(sc, GC_VK_SWEPT_UNSWEPT_LEFT,
                                      "the unswept large list is not empty after sweeping "
                                      "finished");
      if (r != NULL) gc_verify_report_where(r, "%s's unswept_large list", o->name);
    }
    for (gc_large *a = head; a != NULL; a = a->next) {
      int added = gc_addrmap_add(sc->seen, (uintptr_t)a, 0);
      if (added == 0) {
        gc_verify_report *r = violation(sc, GC_VK_SWEPT_BAD_HEADER,
                                        "large block met a second time: on two lists, or its "
                                        "list loops (INV-LARGE-1)");
        if (r != NULL) {
          gc_verify_report_where(r, "large block (gc_large %p) on %s's %s list", (void *)a, o->name,
                                 o->large_list_names[l]);
        }
        break;
      }
      if (added < 0) {
        sc->out_of_memory = 1;
        return;
      }
      check_large(sc, o, l, a, &s);
    }
  }
  sc->owned_words += s.pool_words + s.large_words;
  const gc_heap_stats *run = o->stats;
  if (sc->recount_partial) {
    sc->recount_partial = 0;
    return;
  }
  compare(sc, o, "pool_words", run->pool_words, s.pool_words);
  compare(sc, o, "pool_live_words", run->pool_live_words, s.pool_live_words);
  compare(sc, o, "pool_live_blocks", run->pool_live_blocks, s.pool_live_blocks);
  compare(sc, o, "pool_frag_words", run->pool_frag_words, s.pool_frag_words);
  compare(sc, o, "large_words", run->large_words, s.large_words);
  compare(sc, o, "large_blocks", run->large_blocks, s.large_blocks);
  at_least(sc, o, "pool_max_words", run->pool_max_words, "pool_words", run->pool_words);
  at_least(sc, o, "large_max_words", run->large_max_words, "large_words", run->large_words);
}

/* ---- The heap's free pools ----------------------------------------------------------------- */

static void check_free_pools(sweptcheck *sc) {
  gc_heap *heap = sc->heap;
  size_t count = 0;
  for (gc_pool *p = heap->free_pools; p != NULL; p = p->next) {
    int added = gc_addrmap_add(sc->seen, (uintptr_t)p, 0);
    if (added < 0) {
      sc->out_of_memory = 1; /* the counts below would compare a partial recount */
      return;
    }
    if (added == 0) {
      gc_verify_report *r = violation(sc, GC_VK_SWEPT_BAD_POOL,
                                      "a pool on the heap's free pool list is also owned, or the "
                                      "free list loops");
      if (r != NULL) gc_verify_report_where(r, "free pool %p", (void *)p);
      break;
    }
    count++;
    if (p->owner != NULL) {
      gc_verify_report *r = violation(sc, GC_VK_SWEPT_BAD_POOL,
                                      "a free pool still names an owner (%p)", (void *)p->owner);
      if (r != NULL) gc_verify_report_where(r, "free pool %p", (void *)p);
    }
  }
  if (heap->pool_set.count != sc->owned_pools) {
    gc_verify_report *r = violation(sc, GC_VK_SWEPT_POOL_SET,
                                    "the collector's pool set holds %zu pools; the owners' lists "
                                    "hold %zu (INV-INDEX-1)",
                                    heap->pool_set.count, sc->owned_pools);
    if (r != NULL) gc_verify_report_where(r, "the heap's pool set");
  }
  if (count != heap->free_pool_count || heap->mapped_pool_count != sc->owned_pools + count) {
    gc_verify_report *r =
        violation(sc, GC_VK_SWEPT_POOL_COUNT,
                  "mapped pools %zu, owned %zu, free %zu (free_pool_count "
                  "says %zu): mapped must equal owned + free",
                  heap->mapped_pool_count, sc->owned_pools, count, heap->free_pool_count);
    if (r != NULL) gc_verify_report_where(r, "the heap's pool accounting");
  }
}

/* The heap-limit accounting: the bytes of every owned pool and large block. */
static void check_used_bytes(sweptcheck *sc, size_t owned_words) {
  size_t used = gc_heap_used_bytes(sc->heap);
  if (used == gc_bsize_wsize(owned_words)) return;
  gc_verify_report *r = violation(sc, GC_VK_SWEPT_STAT_MISMATCH,
                                  "used_bytes: running %zu, recount %zu (pool and large words of "
                                  "every owner, in bytes)",
                                  used, gc_bsize_wsize(owned_words));
  if (r != NULL) gc_verify_report_where(r, "the heap's limit accounting");
}

/* INV-WB-1 (gc/heap.h): between marks every work buffer is back on the empty list. A buffer that a
 * marker dropped, or a list operation that lost one, shows here as a count short of the arena's;
 * lost buffers shrink the mark stack until marking overflows on every push. Cost: one walk of the
 * empty list, bounded by the number of buffers. */
static void check_work_buffers(sweptcheck *sc) {
  gc_mark_work *w = &sc->heap->work;
  size_t count = 0;
  for (gc_workbuf *b = w->empty; b != NULL && count <= w->buf_count; b = b->next) count++;
  if (w->carved <= w->buf_count && count == w->carved && w->empty_count == count && w->full == NULL)
    return;
  gc_verify_report *r = violation(
      sc, GC_VK_SWEPT_WORKBUF_LOST,
      "work buffers: %zu carved from the arena (of %zu), %zu on the empty list (its "
      "count says %zu), full list %s: every buffer must be back on "
      "the empty list between marks (INV-WB-1)",
      w->carved, w->buf_count, count, w->empty_count, w->full == NULL ? "empty" : "not empty");
  if (r != NULL) gc_verify_report_where(r, "the heap's mark work buffers");
}

size_t gc_verify_swept_run(const gc_verify_run *run) {
  sweptcheck sc;
  memset(&sc, 0, sizeof sc);
  sc.run = run;
  sc.heap = run->heap;
  gc_verify_scratch own;
  if (run->scratch == NULL) memset(&own, 0, sizeof own);
  gc_verify_scratch *scratch = run->scratch != NULL ? run->scratch : &own;
  sc.seen = &scratch->seen;
  /* It keeps its buckets, and grows if need be. Out of memory, here or while growing, the pass
   * stops where it is, as the walk does (walk.c): every comparison after that point would hold
   * the heap against a partial recount. */
  sc.out_of_memory = !gc_addrmap_reset(sc.seen, 0);
  size_t cursor = 0;
  gc_verify_owner o;
  while (!sc.out_of_memory && gc_verify_owner_next(run->heap, &cursor, &o)) check_owner(&sc, &o);
  if (!sc.out_of_memory) check_free_pools(&sc);
  if (!sc.out_of_memory) check_used_bytes(&sc, sc.owned_words);
  check_work_buffers(&sc); /* reads no map */
  if (sc.out_of_memory) {
    fprintf(stderr,
            "gcfuzz verify: out of memory during the swept pass; it checked part of the "
            "heap only\n");
  }
  if (scratch == &own) gc_verify_scratch_free(&own);
  return sc.found;
}

size_t gc_verify_swept(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_swept_run(&run);
}
