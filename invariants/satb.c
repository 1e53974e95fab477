/* The satb pass: marking held to its snapshot (INV-BARRIER-1, gc/heap.h), the idea of
 * SpiderMonkey's pre-barrier verifier.
 *
 * Incremental marking promises the state of the heap when it began, not when it ends: whatever
 * the mutators cut meanwhile, every block reachable at the start is MARKED at the end (the roots
 * darkened in the first stop, the deletion barrier darkening what gc_store overwrites), and every
 * block allocated meanwhile is born MARKED. A store that bypasses the barrier, a root set not
 * darkened, a block born white: each leaves a block that the mutator may still reach through a
 * path the marker never saw, and that the sweep will free. Checkmark cannot see most of them, as
 * the roots may not reach the block by mark-done; only a record of the start can.
 *
 *   mark-start  the verifier records the heap (snapshot.h): the blocks allocated, the blocks the
 *               roots reach with the edge that first led to each, each pool's frontier and
 *               free-list head. Nothing else to do here.
 *   mark-slice  the world runs: only the domain whose slice ended is looked at, and only what it
 *               allocated since its last look (slots from the recorded free-list head up to the
 *               current one, slots from the recorded frontier up to the current one, its large
 *               blocks): each non-free one must be MARKED or NOT_MARKABLE (satb.born-white).
 *               Cost: O(its pools + large blocks + slots allocated since).
 *   mark-done   every recorded reachable block still allocated must be MARKED or NOT_MARKABLE
 *               (satb.unmarked), reported with its recorded path and, when an edge of that path
 *               no longer holds what it held, the edge overwritten since; only the top of a missed
 *               subtree is reported. Every block not allocated at the start must be MARKED or
 *               NOT_MARKABLE (satb.born-white). Cost: every header read once, in address order,
 *               plus one lookup in the record per block that is not black.
 *
 * With stop-the-world marking nothing happens between the start and the end but the mark, so both
 * hold trivially: the pass still runs (a mark that missed a block is then satb.unmarked too). A
 * direct call (gc_verify_pass_now) checks what mark-done checks when the verifier's record is of
 * the cycle whose marking just ended (a hook at mark-done), and nothing otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "invariants/pass.h"
#include "invariants/snapshot.h"

/* MARKED or NOT_MARKABLE: what every block the snapshot covers must be when marking ends. */
static int black(const gc_heap *heap, gc_header hd) {
  gc_header colour = gc_hd_colour(hd);
  return colour == heap->colours.marked || colour == GC_NOT_MARKABLE;
}

/* ---- Born black at a slice's end ------------------------------------------------------------ */

/* The header at hp, read as a marker of another domain may be colouring it. */
static gc_header peek_header(const gc_header *hp) { return __atomic_load_n(hp, __ATOMIC_RELAXED); }

static size_t born_white_at_slice(const gc_verify_run *run, gc_verify_snapshot *s, gc_value v,
                                  gc_header hd, const char *where) {
  size_t found = 0;
  gc_verify_report *r = gc_verify_violation(
      run, &found, GC_VK_SATB_BORN_WHITE,
      "a block allocated while marking is %s at the end of a mark slice of domain %u: it must be "
      "born MARKED (INV-BARRIER-1 (a)), or the marker, which never scans it, leaves its "
      "referents to the sweep",
      gc_colour_name(run->heap, gc_hd_colour(hd)), run->domain->id);
  if (r != NULL) {
    r->block = v;
    r->has_header = 1;
    r->header = hd;
    gc_verify_report_header(r, run->heap, hd);
    gc_verify_report_where(r, "%s", where);
    gc_verify_report_path(r, "allocated since mark start (not in the snapshot)", NULL, 0);
  }
  /* Once: not again at a later slice, nor at mark-done. */
  gc_verify_snapshot_set_born_reported(s, v);
  return found;
}

/* The slots of pool p from `from` up to `to`: the non-free ones allocated since mark start
 * (`check_present`: some of them may have been there at the start) must be black. */
static size_t check_slots(const gc_verify_run *run, gc_verify_snapshot *s, gc_pool *p,
                          gc_header *from, gc_header *to, int check_present) {
  size_t found = 0, whsize = gc_wsize_of_class[p->size_class];
  gc_header *first = gc_pool_first_slot(p);
  for (gc_header *hp = from; hp < to; hp += whsize) {
    gc_header hd = peek_header(hp);
    if (hd == 0 || black(run->heap, hd)) continue;
    gc_value v = gc_val_hp(hp);
    gc_snap_state state = gc_verify_snapshot_state(s, v);
    if (state != GC_SNAP_ABSENT && (check_present || state == GC_SNAP_BORN_REPORTED)) continue;
    char where[96];
    snprintf(where, sizeof where, "pool %p class %u (%zu-word slots), slot %zu, of domain %u",
             (void *)p, (unsigned)p->size_class, whsize, (size_t)(hp - first) / whsize,
             run->domain->id);
    found += born_white_at_slice(run, s, v, hd, where);
  }
  return found;
}

static size_t check_pool_since(const gc_verify_run *run, gc_verify_snapshot *s, gc_pool *p) {
  if (p->size_class >= GC_NUM_SIZECLASSES) return 0; /* corrupt: the swept pass names it */
  gc_snap_pool *m = gc_verify_snapshot_pool(s, p);
  if (m == NULL) return 0;
  size_t found = 0;
  if (m->free_checked != NULL) {
    /* Popped from the start's free list since the last look: up to its head now. */
    gc_header *head = p->free_list != NULL ? p->free_list : m->free_end;
    if (head > m->free_end) head = m->free_end;
    found += check_slots(run, s, p, m->free_checked, head, 1);
    m->free_checked = head;
  }
  found += check_slots(run, s, p, m->frontier_checked, p->frontier, 0);
  m->frontier_checked = p->frontier;
  return found;
}

static size_t check_domain_since(const gc_verify_run *run, gc_verify_snapshot *s) {
  gc_domain *d = run->domain;
  size_t found = 0;
  gc_pool **lists[] = {d->avail, d->full, d->unswept_avail, d->unswept_full};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (size_t c = 0; c < GC_NUM_SIZECLASSES; c++) {
      for (gc_pool *p = lists[l][c]; p != NULL; p = p->next) found += check_pool_since(run, s, p);
    }
  }
  gc_large *larges[] = {d->swept_large, d->unswept_large};
  for (size_t l = 0; l < 2; l++) {
    for (gc_large *a = larges[l]; a != NULL; a = a->next) {
      gc_header hd = peek_header(gc_large_hp(a));
      gc_value v = gc_val_hp(gc_large_hp(a));
      if (hd == 0 || black(run->heap, hd) || gc_verify_snapshot_state(s, v) != GC_SNAP_ABSENT) {
        continue;
      }
      char where[64];
      snprintf(where, sizeof where, "large block %p, of domain %u", (void *)a, d->id);
      found += born_white_at_slice(run, s, v, hd, where);
    }
  }
  return found;
}

/* ---- Mark done ----------------------------------------------------------------------------- */

/* The recorded path to b, root first, as report steps with the headers of now; and in `cut`, the
 * first edge of it that no longer holds what it held at mark start (or "" if none). */
static size_t recorded_path(const gc_verify_run *run, gc_verify_snapshot *s, const gc_snap_block *b,
                            gc_verify_step *steps, size_t max, const gc_snap_block **root,
                            char *cut, size_t cut_len) {
  gc_heapindex *ix = &run->scratch->index;
  size_t n = 0;
  const gc_snap_block *at = b;
  /* Collected child first; each step goes to a block recorded earlier, so this ends. */
  while (at->via == GC_SNAP_FIELD) {
    const gc_snap_block *up = gc_verify_snapshot_reached(s, (gc_value)at->from);
    if (up == NULL) break;
    if (n < max) {
      gc_header hd = 0;
      gc_heapindex_read_header(ix, up->v, &hd);
      steps[n++] = (gc_verify_step){up->v, at->field, hd, gc_verify_colour_of(run->heap, hd)};
    }
    at = up;
  }
  *root = at;
  for (size_t i = 0; i < n / 2; i++) {
    gc_verify_step t = steps[i];
    steps[i] = steps[n - 1 - i];
    steps[n - 1 - i] = t;
  }
  cut[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    gc_value next = i + 1 < n ? steps[i + 1].block : b->v;
    gc_value now = gc_fields(steps[i].block)[steps[i].field];
    if (now != next) {
      snprintf(cut, cut_len,
               "; field %zu of %#llx held it%s at mark start and holds %#llx now: a store "
               "overwrote that edge without darkening what it held (INV-BARRIER-1 (b))",
               steps[i].field, (unsigned long long)steps[i].block, i + 1 < n ? "s path" : "",
               (unsigned long long)now);
      break;
    }
  }
  return n;
}

static void describe_origin(const gc_verify_run *run, const gc_snap_block *root, char *buf,
                            size_t len) {
  char slot[120];
  if (root->via == GC_SNAP_ROOT_SLOT) {
    gc_verify_describe_slot(run->heap, (gc_value *)root->from, slot, sizeof slot);
    snprintf(buf, len, "at mark start, %s", slot);
  } else if (root->via == GC_SNAP_ROOT_WORD) {
    snprintf(buf, len, "at mark start, conservative range word at %p", (void *)root->from);
  } else if (root->via == GC_SNAP_PINNED) {
    snprintf(buf, len, "at mark start, pinned");
  } else {
    snprintf(buf, len, "at mark start, (path lost)");
  }
}

static size_t report_unmarked(const gc_verify_run *run, gc_verify_snapshot *s,
                              const gc_snap_block *b, gc_header hd) {
  enum { MAX_STEPS = 64 };
  gc_verify_step steps[MAX_STEPS];
  const gc_snap_block *root;
  char cut[200];
  size_t n = recorded_path(run, s, b, steps, MAX_STEPS, &root, cut, sizeof cut);
  size_t found = 0;
  gc_verify_report *r = gc_verify_violation(
      run, &found, GC_VK_SATB_UNMARKED,
      "a block reachable when marking began is %s when it ends (INV-BARRIER-1 (c)): the sweep "
      "will free it%s",
      gc_colour_name(run->heap, gc_hd_colour(hd)),
      cut[0] != '\0' ? cut
                     : "; every edge of its recorded path still holds: a root or a grey "
                       "block the marker did not finish");
  if (r == NULL) return found;
  gc_verify_report_block(r, &run->scratch->index, b->v);
  char origin[sizeof r->origin];
  describe_origin(run, root, origin, sizeof origin);
  gc_verify_report_path(r, origin, steps, n);
  gc_verify_report_neighbourhood(r, &run->scratch->index);
  return found;
}

/* The first of the headers at slot, slot + whsize, ... below limit that is neither free (0) nor
 * `marked` nor NOT_MARKABLE, or limit. Not instrumented at all: it reads every slot of every pool
 * at every mark-done, the pass's whole cost on a correct heap, and an address check per slot
 * doubled it. Nothing is lost: the slots are those of a pool the heap index holds, below its
 * frontier (the cursor clamps a corrupt one into the pool), and the swept pass reads each of these
 * headers, instrumented, at every sweep end. (The colour mask spelled out: clang inlines no
 * function into one whose sanitizer attributes differ.) */
GC_VERIFY_NOT_INSTRUMENTED static const gc_header *next_white(const gc_header *slot,
                                                              const gc_header *limit, size_t whsize,
                                                              gc_header marked) {
  for (; slot < limit; slot += whsize) {
    gc_header colour = *slot & GC_HD_COLOUR_MASK;
    if (*slot != 0 && colour != marked && colour != GC_NOT_MARKABLE) return slot;
  }
  return limit;
}

/* A block that is not black at mark-done: one that the walk reached at the start is
 * satb.unmarked, the top of a missed subtree only (its recorded referrer black or gone); one not
 * allocated at the start is satb.born-white; one allocated but not reached then is garbage. */
static size_t check_white(const gc_verify_run *run, gc_verify_snapshot *s, gc_value v,
                          gc_header hd) {
  gc_heapindex *ix = &run->scratch->index;
  const gc_snap_block *reached = gc_verify_snapshot_reached(s, v);
  if (reached != NULL) {
    gc_header up;
    if (reached->via == GC_SNAP_FIELD &&
        gc_heapindex_read_header(ix, (gc_value)reached->from, &up) && up != 0 &&
        !black(run->heap, up)) {
      return 0; /* under a block reported (or itself under one) */
    }
    return report_unmarked(run, s, reached, hd);
  }
  if (gc_verify_snapshot_state(s, v) != GC_SNAP_ABSENT) return 0; /* garbage at the start */
  size_t found = 0;
  gc_verify_report *r = gc_verify_violation(
      run, &found, GC_VK_SATB_BORN_WHITE,
      "a block allocated while marking is %s when marking ends: it must be born MARKED "
      "(INV-BARRIER-1 (a)); the sweep will free it, and what it points to, under the mutator",
      gc_colour_name(run->heap, gc_hd_colour(hd)));
  if (r == NULL) return found;
  gc_verify_report_block(r, ix, v);
  gc_verify_report_path(r, "allocated since mark start (not in the snapshot)", NULL, 0);
  gc_verify_report_neighbourhood(r, ix);
  return found;
}

/* One pass over the heap in address order, reading headers: a black block is what marking
 * promises, whatever the record says of it. Only the others (the garbage, normally) are looked up
 * in the record (check_white), so the pass costs about a read of every header in order. */
static size_t check_done(const gc_verify_run *run, gc_verify_snapshot *s) {
  gc_heapindex *ix = &run->scratch->index;
  gc_header marked = run->heap->colours.marked;
  size_t found = 0;
  gc_heapindex_cursor c;
  gc_heapindex_block b;
  gc_heapindex_cursor_start(&c, ix);
  while (gc_heapindex_next_block(&c, &b)) {
    if (c.larges) {
      if (b.hd != 0 && !black(run->heap, b.hd)) found += check_white(run, s, b.v, b.hd);
      continue;
    }
    /* A pool: the cursor gave its first slot; the rest in one loop, the white ones one by one. */
    for (const gc_header *hp = next_white(gc_hp_val(b.v), c.limit, c.slot_whsize, marked);
         hp < c.limit; hp = next_white(hp + c.slot_whsize, c.limit, c.slot_whsize, marked)) {
      found += check_white(run, s, gc_val_hp((gc_header *)hp), *hp);
    }
    c.slot = c.limit; /* the pool is checked */
  }
  return found;
}

/* ---- The pass ------------------------------------------------------------------------------ */

size_t gc_verify_satb_run(const gc_verify_run *run) {
  gc_verify_snapshot *s = run->snapshot;
  if (!gc_verify_snapshot_current(s, run->heap)) return 0; /* no record of this cycle's start */
  if (run->domain != NULL) return check_domain_since(run, s);
  /* Mark-done, or a direct call once marking is over and before the colours rotate (a breaking
   * test's or the corrupt op's hook at mark-done). */
  int direct = !run->at_hook;
  if (direct ? gc_atomic_peek(&run->heap->marking) != 0 : run->hook != GC_HOOK_MARK_DONE) return 0;
  if (run->scratch == NULL) return 0;
  if (!run->index_built && !gc_heapindex_build(&run->scratch->index, run->heap)) return 0;
  return check_done(run, s);
}
