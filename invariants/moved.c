/* The moved pass: a compaction (gc/compact.c) against what it had to keep. It runs twice in a
 * compaction's stop: at GC_HOOK_COMPACT_START it only records (gc_verify_moved_record, pass.h),
 * from the heap's tables and its own heap index, never from the compactor's choices; at
 * GC_HOOK_COMPACTED it checks:
 *   - moved.stale-reference (INV-COMPACT-1): no global root, frame slot, scanner's slot,
 *     finalizer record or queue entry, running finalizer's block, ephemeron list head, and no
 *     scanned field, weak slot or link word of any block names a slot holding a forwarding
 *     header, or an address in a pool owned at the start that no owner holds now (given back);
 *   - moved.forwarding-left (INV-COMPACT-1): no slot of an owned pool holds a forwarding header
 *     (nor does a large block): a forwarding header lives only in pools given back;
 *   - moved.pinned-moved (INV-COMPACT-2): every block recorded as having to stay (pinned, named
 *     by a conservative word under gc.h's rule, its finalizer running) is still a block start
 *     of an owned pool or a large block, with the header it had (colour aside);
 *   - moved.not-compacted (INV-COMPACT-3): per owner and size class, pools <= max(K, ceil(L /
 *     S)), K the pools holding a recorded block that stayed, L the live blocks, S the class's
 *     slots a pool.
 * Called directly (or at COMPACTED with no record of the start), it checks what needs no
 * record: forwarding headers left and references to them.
 *
 * Cost: the start records O(pools + pinned + range words); the end reads every slot below the
 * frontiers and every large block once (a header each, the fields of scanned blocks), one index
 * lookup per block pointer met, and O(pools log pools) for the record's lookups.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/pool.h"
#include "invariants/pass.h"
#include "invariants/verify.h"

typedef struct movedcheck {
  const gc_verify_run *run;
  gc_heap *heap;
  gc_heapindex *ix;
  const gc_verify_moved_record *rec; /* NULL: no record of this compaction's start */
  size_t found;
  const char *slot_where; /* describes the root slot being visited (scanners), for reports */
} movedcheck;

#define violation(mc, kind, ...) gc_verify_violation((mc)->run, &(mc)->found, (kind), __VA_ARGS__)

/* ---- The record ------------------------------------------------------------------------------ */

static int by_word(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return (x > y) - (x < y);
}

static int push_pool(gc_verify_moved_record *m, uintptr_t p) {
  if (m->pool_count == m->pool_capacity) {
    size_t capacity = m->pool_capacity ? m->pool_capacity * 2 : 64;
    uintptr_t *pools = realloc(m->pools, capacity * sizeof *pools);
    if (pools == NULL) return 0;
    m->pools = pools;
    m->pool_capacity = capacity;
  }
  m->pools[m->pool_count++] = p;
  return 1;
}

static int push_fixed(gc_verify_moved_record *m, gc_verify_fixed f) {
  if (m->fixed_count == m->fixed_capacity) {
    size_t capacity = m->fixed_capacity ? m->fixed_capacity * 2 : 16;
    gc_verify_fixed *fixed = realloc(m->fixed, capacity * sizeof *fixed);
    if (fixed == NULL) return 0;
    m->fixed = fixed;
    m->fixed_capacity = capacity;
  }
  m->fixed[m->fixed_count++] = f;
  return 1;
}

static int note_fixed(gc_verify_moved_record *m, gc_heapindex *ix, gc_value v, const char *why) {
  gc_header hd;
  if (!gc_heapindex_read_header(ix, v, &hd) || hd == 0) return 1; /* the other passes' finding */
  return push_fixed(m, (gc_verify_fixed){v, hd, why});
}

static void take_record(const gc_verify_run *run, gc_heapindex *ix) {
  gc_verify_moved_record *m = &run->scratch->moved;
  gc_heap *heap = run->heap;
  m->taken = 0;
  m->pool_count = m->fixed_count = 0;
  int ok = 1;
  for (size_t i = 0; ok && i < ix->pool_count; i++) ok = push_pool(m, ix->pool_list[i].key);
  if (ok && m->pool_count > 1) qsort(m->pools, m->pool_count, sizeof *m->pools, by_word);
  for (size_t i = 0; ok && i < heap->pinned.count; i++) {
    ok = note_fixed(m, ix, (gc_value)heap->pinned.items[i], "pinned");
  }
  for (size_t i = 0; ok && i < heap->range_count; i++) {
    const gc_range *r = &heap->ranges[i];
    for (size_t k = 0; ok && k < r->wsize; k++) {
      uintptr_t word;
      __builtin_memcpy(&word, &r->start[k], sizeof word); /* the embedder's raw memory */
      gc_value block = gc_heapindex_containing(ix, word);
      if (block != 0) ok = note_fixed(m, ix, block, "named by a conservative word");
    }
  }
  if (ok && gc_is_block(heap->fin_running)) {
    ok = note_fixed(m, ix, heap->fin_running, "its finalizer running");
  }
  if (!ok) {
    fprintf(stderr,
            "gcfuzz verify: out of memory in the moved pass; this compaction is "
            "checked without its start\n");
    return;
  }
  m->heap = heap;
  m->compactions = heap->compact.count + 1; /* once it has run */
  m->bound = 1;
  m->taken = 1;
}

static int recorded_pool(const gc_verify_moved_record *m, uintptr_t base) {
  if (m->pool_count == 0) return 0;
  return bsearch(&base, m->pools, m->pool_count, sizeof *m->pools, by_word) != NULL;
}

/* ---- References ------------------------------------------------------------------------------ */

/* Why the block pointer v is stale, or NULL. */
static const char *stale(movedcheck *mc, gc_value v) {
  if (!gc_is_block(v)) return NULL;
  unsigned cls;
  if (gc_heapindex_pool(mc->ix, v, &cls) == NULL) {
    uintptr_t base = v & ~(uintptr_t)(GC_POOL_BSIZE - 1);
    if (mc->rec != NULL && recorded_pool(mc->rec, base)) {
      return "a block of a pool owned when the compaction began and given back since";
    }
    return NULL; /* a large block, or no block: the reach pass's */
  }
  gc_loc loc = gc_heapindex_locate_start(mc->ix, v);
  if (loc.kind == GC_LOC_SLOT && gc_hd_val(v) == GC_HD_FORWARD) {
    return "a slot holding a forwarding header: the old place of a moved block";
  }
  return NULL;
}

static void check_ref(movedcheck *mc, gc_value v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_ref(movedcheck *mc, gc_value v, const char *fmt, ...) {
  const char *why = stale(mc, v);
  if (why == NULL) return;
  char where[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(where, sizeof where, fmt, ap);
  va_end(ap);
  gc_verify_report *r = violation(mc, GC_VK_MOVED_STALE_REFERENCE,
                                  "%s names %#llx, %s: compaction forwards every reference before "
                                  "it gives the evacuated pools back (INV-COMPACT-1)",
                                  where, (unsigned long long)v, why);
  if (r == NULL) return;
  gc_verify_report_block(r, mc->ix, v);
  gc_verify_report_where(r, "%s", where);
}

static void visit_scanner_slot(void *ctx, gc_value *slot) {
  movedcheck *mc = ctx;
  check_ref(mc, *slot, "%s slot %p", mc->slot_where, (void *)slot);
}

static void check_roots(movedcheck *mc) {
  gc_heap *heap = mc->heap;
  for (size_t i = 0; i < heap->global_roots.count; i++) {
    gc_value *slot = heap->global_roots.items[i];
    check_ref(mc, *slot, "global root #%zu (slot %p)", i, (void *)slot);
  }
  for (size_t d = 0; d < heap->domain_count; d++) {
    size_t depth = 0;
    for (gc_frame *f = heap->domains[d]->head.frames; f != NULL; f = f->prev, depth++) {
      for (size_t i = 0; i < f->count; i++) {
        check_ref(mc, f->slots[i], "domain %u local root frame %zu (0 = innermost), slot %zu",
                  heap->domains[d]->id, depth, i);
      }
    }
    check_ref(mc, heap->domains[d]->ephe.head, "domain %u's ephemeron list head",
              heap->domains[d]->id);
  }
  check_ref(mc, heap->orphans.ephe.head, "the orphans' ephemeron list head");
  for (size_t i = 0; i < heap->scanner_count; i++) {
    mc->slot_where = "an embedder scanner's";
    heap->scanners[i].fn(visit_scanner_slot, mc, heap->scanners[i].user);
  }
  for (size_t i = 0; i < heap->finalizers.count; i++) {
    check_ref(mc, heap->finalizers.items[i].block, "finalizer record %zu (its block)", i);
  }
  for (size_t i = heap->finq_head; i < heap->finq.count; i++) {
    check_ref(mc, heap->finq.items[i].block, "finalizer queue entry %zu", i - heap->finq_head);
  }
  /* With a record, a pinned entry or the running finalizer's block that is stale is a block
   * that had to stay and moved: moved.pinned-moved says so, once. */
  if (mc->rec != NULL) return;
  check_ref(mc, heap->fin_running, "the running finalizer's block");
  for (size_t i = 0; i < heap->pinned.count; i++) {
    check_ref(mc, (gc_value)heap->pinned.items[i], "pinned entry %zu", i);
  }
}

/* Every block: forwarding headers left, and the references each holds. */
static void check_blocks(movedcheck *mc) {
  gc_heapindex_cursor cur;
  gc_heapindex_cursor_start(&cur, mc->ix);
  gc_heapindex_block b;
  while (gc_heapindex_next_block(&cur, &b)) {
    if (b.hd == 0) continue;
    if (b.hd == GC_HD_FORWARD) {
      gc_verify_report *r =
          violation(mc, GC_VK_MOVED_FORWARDING_LEFT,
                    "a forwarding header (to %#llx) in a pool an owner holds: only the pools a "
                    "compaction evacuates hold one, and it gives them back (INV-COMPACT-1)",
                    (unsigned long long)gc_fields(b.v)[0]);
      if (r != NULL) gc_verify_report_block(r, mc->ix, b.v);
      continue;
    }
    unsigned tag = gc_hd_tag(b.hd);
    size_t n = gc_hd_wsize(b.hd);
    if (b.max_whsize != SIZE_MAX && n + 1 > b.max_whsize) continue; /* the swept pass's */
    if (gc_tag_is_weak(tag)) {
      if (n > gc_tag_weak_words(tag)) n = gc_tag_weak_words(tag);
    } else if (!gc_tag_is_scanned(tag)) {
      continue;
    }
    for (size_t k = 0; k < n; k++) {
      check_ref(mc, gc_fields(b.v)[k], "field %zu of %#llx", k, (unsigned long long)b.v);
    }
  }
}

/* ---- What had to stay, and the bound ---------------------------------------------------------- */

static int fixed_in_place(movedcheck *mc, const gc_verify_fixed *f) {
  gc_header hd;
  if (!gc_heapindex_read_header(mc->ix, f->v, &hd) || hd == 0 || hd == GC_HD_FORWARD) return 0;
  return gc_hd_wsize(hd) == gc_hd_wsize(f->hd) && gc_hd_tag(hd) == gc_hd_tag(f->hd);
}

static void check_fixed(movedcheck *mc) {
  for (size_t i = 0; i < mc->rec->fixed_count; i++) {
    const gc_verify_fixed *f = &mc->rec->fixed[i];
    if (fixed_in_place(mc, f)) continue;
    gc_header now = 0;
    int readable = gc_heapindex_read_header(mc->ix, f->v, &now);
    char was[80];
    gc_hd_describe(f->hd, was, sizeof was);
    gc_verify_report *r = violation(
        mc, GC_VK_MOVED_PINNED_MOVED,
        "a block %s (header %s when the compaction began) is no longer there: %s; a block that "
        "must stay never moves (INV-COMPACT-2)",
        f->why, was,
        !readable              ? "its address is in no pool an owner holds"
        : now == GC_HD_FORWARD ? "its slot holds a forwarding header"
        : now == 0             ? "its slot is free"
                               : "its slot holds another block");
    if (r == NULL) continue;
    gc_verify_report_block(r, mc->ix, f->v);
  }
}

/* The pools (ascending) holding a recorded block still in place. */
static uintptr_t *fixed_pools(movedcheck *mc, size_t *count) {
  uintptr_t *pools = malloc((mc->rec->fixed_count + 1) * sizeof *pools);
  if (pools == NULL) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < mc->rec->fixed_count; i++) {
    unsigned cls;
    gc_value v = mc->rec->fixed[i].v;
    gc_pool *p = gc_heapindex_pool(mc->ix, v, &cls);
    if (p != NULL && fixed_in_place(mc, &mc->rec->fixed[i])) pools[n++] = (uintptr_t)p;
  }
  if (n > 1) qsort(pools, n, sizeof *pools, by_word);
  *count = n;
  return pools;
}

/* The blocks below p's frontier, or SIZE_MAX when the frontier is out of place (swept's). */
static size_t blocks_of(gc_pool *p) {
  const size_t slot_whsize = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  if (p->frontier < first || p->frontier > gc_pool_slots_end(p) ||
      (size_t)(p->frontier - first) % slot_whsize != 0) {
    return SIZE_MAX;
  }
  size_t n = 0;
  for (gc_header *hp = first; hp < p->frontier; hp += slot_whsize) {
    n += *hp != 0 && *hp != GC_HD_FORWARD;
  }
  return n;
}

static void check_bound(movedcheck *mc) {
  size_t nfixed = 0;
  uintptr_t *fixed = fixed_pools(mc, &nfixed);
  if (fixed == NULL) return;
  size_t cursor = 0, bound = mc->heap->mapped_pool_count + 1; /* a looping list: swept's */
  gc_verify_owner o;
  while (gc_verify_owner_next(mc->heap, &cursor, &o)) {
    for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
      size_t pools = 0, live = 0, kept = 0, steps = 0;
      int bad = 0;
      for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
        if (o.pool_lists[l] == NULL) continue;
        for (gc_pool *p = o.pool_lists[l][c]; p != NULL && steps < bound; p = p->next, steps++) {
          if (p->size_class != c) continue; /* swept.bad-pool */
          size_t n = blocks_of(p);
          if (n == SIZE_MAX) bad = 1;
          pools++;
          live += n == SIZE_MAX ? 0 : n;
          uintptr_t key = (uintptr_t)p;
          kept += bsearch(&key, fixed, nfixed, sizeof *fixed, by_word) != NULL;
        }
      }
      /* No block at all: pools holding none are space.empty-pool's finding, not this one. */
      if (bad || pools == 0 || live == 0) continue;
      size_t slots = gc_slots_of_class(c), need = (live + slots - 1) / slots;
      size_t limit = kept > need ? kept : need;
      if (pools <= limit) continue;
      gc_verify_report *r =
          violation(mc, GC_VK_MOVED_NOT_COMPACTED,
                    "class %u of %s holds %zu blocks in %zu pools after a compaction; %zu "
                    "pool(s) of %zu slots hold them, %zu pool(s) hold a block that had to stay: "
                    "at most %zu pools (INV-COMPACT-3)",
                    c, o.name, live, pools, need, slots, kept, limit);
      if (r != NULL) gc_verify_report_where(r, "%s's pools of class %u", o.name, c);
    }
  }
  free(fixed);
}

/* ---- The pass -------------------------------------------------------------------------------- */

size_t gc_verify_moved_run(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  gc_verify_scratch own = {0};
  gc_verify_scratch *s = run->scratch != NULL ? run->scratch : &own;
  gc_heapindex *ix = &s->index;
  int index_ok =
      run->index_built && s == run->scratch ? run->index_complete : gc_heapindex_build(ix, heap);
  if (!index_ok) {
    fprintf(stderr, "gcfuzz verify: out of memory in the moved pass; it checked nothing\n");
    if (s == &own) gc_verify_scratch_free(&own);
    return 0;
  }
  if (run->at_hook && run->hook == GC_HOOK_COMPACT_START) {
    take_record(run, ix);
    return 0;
  }
  movedcheck mc = {.run = run, .heap = heap, .ix = ix};
  gc_verify_moved_record *m = &s->moved;
  /* The record of this compaction's start: at its COMPACTED point, or called directly in the
   * verifier's memory right after it (or with a record the corruption catalogue planted). */
  if ((!run->at_hook || run->hook == GC_HOOK_COMPACTED) && run->scratch != NULL && m->taken &&
      m->heap == heap && heap->compact.count == m->compactions) {
    mc.rec = m;
  }
  check_roots(&mc);
  check_blocks(&mc);
  if (mc.rec != NULL) {
    check_fixed(&mc);
    if (mc.rec->bound) check_bound(&mc);
    if (run->at_hook) m->taken = 0;
  }
  if (s == &own) gc_verify_scratch_free(&own);
  return mc.found;
}

size_t gc_verify_moved(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_moved_run(&run);
}
