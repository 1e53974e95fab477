/* The space pass (what is mapped against what is live), run when every domain finished sweeping
 * (GC_HOOK_SWEPT); also callable directly whenever no collection is running.
 *
 * A non-moving heap cannot compact, so the bound on its pools is per pool, not per byte: a pool
 * a sweep left holding nothing is memory the heap keeps for no block. The collector's policy
 * (INV-SPACE-1, INV-SPACE-2 in gc/) gives the checks:
 *   - space.empty-pool: every pool an owner holds once its sweep is done holds at least one
 *     block (sweeping gives an emptied pool back; the one an allocation keeps receives its block
 *     at once). Hence, per size class, pools <= live blocks, and the pool words of a heap at most
 *     GC_POOL_WSIZE per live small block, whatever the fragmentation;
 *   - space.frontier-slack: the slot just below a swept pool's frontier holds a block (sweeping
 *     moves the frontier down over the free slots above the last block, and only an allocation
 *     moves it up, onto the block it makes), so the slots a pool has used end at its last block;
 *   - space.free-pools: when a full collection's sweep end is reported (heap->full_release) no
 *     free pool is left mapped: the free list is empty and the mapped pools are the owned ones;
 *   - space.orphan-passed-over: no orphan pool of class c with a free slot still waits that had
 *     been orphaned when a domain, looking for a pool of c, took a fresh one instead
 *     (INV-SPACE-3: avail_since[c] <= fresh_seen[c], the orphanings' numbers the collector
 *     records). The orphans are adopted at every cycle's start, so a pool passed over shows at
 *     the sweep end in between.
 * An owner still sweeping is not checked (its unswept pools hold last cycle's blocks).
 *
 * Cost: O(pools) list steps and one header read per pool, O(size classes) for the orphans (the slot below its frontier); a pool
 * that fails is read slot by slot, to say which kind it breaks. The free list is walked only at
 * a full collection's end, where it must be empty.
 */
#include <stdio.h>
#include <string.h>

#include "gc/pool.h"
#include "invariants/pass.h"
#include "invariants/verify.h"

typedef struct spacecheck {
  const gc_verify_run *run;
  gc_heap *heap;
  size_t found;
  size_t owned_pools; /* pools on the owners' lists */
} spacecheck;

#define violation(sc, kind, ...) gc_verify_violation((sc)->run, &(sc)->found, (kind), __VA_ARGS__)

static void about_pool(gc_verify_report *r, const gc_verify_owner *o, int list, gc_pool *p) {
  if (r == NULL) return;
  gc_verify_report_where(r, "pool %p (class %u, %u-word slots) on %s's %s list", (void *)p,
                         p->size_class, gc_wsize_of_class[p->size_class], o->name,
                         o->pool_list_names[list]);
}

/* INV-SPACE-1 for one pool. A pool whose frontier is out of place is the swept pass's
 * (swept.bad-frontier): nothing below it can be read safely. */
static void check_pool(spacecheck *sc, const gc_verify_owner *o, int list, gc_pool *p) {
  if (((uintptr_t)p & (GC_POOL_BSIZE - 1)) != 0 || p->size_class >= GC_NUM_SIZECLASSES) return;
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  if (p->frontier < first || p->frontier > gc_pool_slots_end(p) ||
      (size_t)(p->frontier - first) % slot_whsize != 0) {
    return;
  }
  if (p->frontier > first && p->frontier[-(ptrdiff_t)slot_whsize] != 0) return; /* the rule */
  size_t blocks = 0, used = (size_t)(p->frontier - first) / slot_whsize;
  for (gc_header *hp = first; hp < p->frontier; hp += slot_whsize) blocks += *hp != 0;
  if (blocks == 0) {
    about_pool(violation(sc, GC_VK_SPACE_EMPTY_POOL,
                         "a swept pool holds no block (%zu slots used, none live): an emptied "
                         "pool goes back to the heap's free pools (INV-SPACE-1)",
                         used),
               o, list, p);
    return;
  }
  about_pool(violation(sc, GC_VK_SPACE_FRONTIER_SLACK,
                       "the slot below the frontier (slot %zu) is free: a swept pool's frontier "
                       "sits right above its last block (%zu blocks in %zu used slots) "
                       "(INV-SPACE-1)",
                       used - 1, blocks, used),
             o, list, p);
}

static void check_owner(spacecheck *sc, const gc_verify_owner *o) {
  size_t bound = sc->heap->mapped_pool_count + 1; /* a list that loops: the swept pass's */
  for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
    if (o->pool_lists[l] == NULL) continue;
    for (uint32_t bits = gc_verify_pool_classes(o->pool_lists[l]); bits != 0; bits &= bits - 1) {
      gc_sizeclass c = (gc_sizeclass)__builtin_ctz(bits);
      for (gc_pool *p = o->pool_lists[l][c]; p != NULL && sc->owned_pools < bound; p = p->next) {
        sc->owned_pools++;
        if (!o->sweeping) check_pool(sc, o, l, p);
      }
    }
  }
}

/* INV-SPACE-2, at the end of a full collection. */
static void check_full_release(spacecheck *sc) {
  gc_heap *heap = sc->heap;
  size_t free_pools = 0;
  for (gc_pool *p = heap->free_pools; p != NULL && free_pools <= heap->mapped_pool_count;
       p = p->next) {
    free_pools++;
  }
  if (free_pools == 0 && heap->free_pool_count == 0 && heap->mapped_pool_count == sc->owned_pools) {
    return;
  }
  gc_verify_report *r =
      violation(sc, GC_VK_SPACE_FREE_POOLS,
                "a full collection ended with %zu free pools on the free list (its count says "
                "%zu) and %zu pools mapped for %zu owned: it gives every empty pool back "
                "(INV-SPACE-2)",
                free_pools, heap->free_pool_count, heap->mapped_pool_count, sc->owned_pools);
  if (r != NULL) gc_verify_report_where(r, "the heap's free pools, at a full collection's end");
}

/* INV-SPACE-3, for every class with an orphan pool waiting. */
static void check_orphans(spacecheck *sc) {
  gc_orphans *o = &sc->heap->orphans;
  for (uint32_t bits = gc_verify_pool_classes(o->avail); bits != 0; bits &= bits - 1) {
    gc_sizeclass c = (gc_sizeclass)__builtin_ctz(bits);
    if (o->avail_since[c] > o->fresh_seen[c]) continue;
    gc_verify_report *r =
        violation(sc, GC_VK_SPACE_ORPHAN_PASSED_OVER,
                  "an orphan pool of class %u waits since orphaning %llu, but a domain that had "
                  "seen orphaning %llu took a fresh pool of that class instead of adopting it "
                  "(INV-SPACE-3)",
                  c, (unsigned long long)o->avail_since[c], (unsigned long long)o->fresh_seen[c]);
    if (r != NULL) {
      gc_verify_report_where(r, "pool %p (class %u) on the orphans' avail list",
                             (void *)o->avail[c], c);
    }
  }
}

size_t gc_verify_space_run(const gc_verify_run *run) {
  spacecheck sc = {.run = run, .heap = run->heap};
  size_t cursor = 0;
  gc_verify_owner o;
  while (gc_verify_owner_next(run->heap, &cursor, &o)) check_owner(&sc, &o);
  if (run->heap->full_release) check_full_release(&sc);
  check_orphans(&sc);
  return sc.found;
}

size_t gc_verify_space(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_space_run(&run);
}
