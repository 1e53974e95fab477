/* The checkmark pass (debug mark rescan), run right after marking (GC_HOOK_MARK_DONE), before
 * the colours cycle. It compares the collector's marks with a mark of its own, both ways.
 *
 * A second, simple, single-threaded mark from the roots as the verifier enumerates them itself
 * (rootset.h: the API's root sets read with the verifier's own loops), with its own mark
 * set (the address map of walk.c) instead of header colours, so it cannot be fooled by the state
 * the collector's marker left behind. Every block it reaches must be MARKED or NOT_MARKABLE
 * (INV-MARK-1 at its end: the stack is empty and no pool is flagged for re-darkening, so every
 * reachable block has been marked). A block that is not is reported as checkmark.unmarked
 * ("found unmarked block") with the block that points at it, its referrer, and the whole path
 * from the root. A reachable pointer that is no block at all is checkmark.bad-pointer (reach
 * names those precisely after the cycle).
 *
 * The other way (INV-MARK-2): every MARKED block must be one that mark reached, and every
 * NOT_MARKABLE block must be pinned; a block the collector kept without a root is
 * checkmark.over-retained, with why the collector reached it when that can be known (see
 * "Over-retention" below). The same count of colours is a second reader of the collector's own
 * count (INV-MARKCOUNT-1): the blocks and words the mark says it marked, which the pacer takes
 * for the live heap, must be the MARKED blocks and their words (checkmark.mark-count).
 *
 * Before the walk it checks that marking is really over, so that a marker still at work when the
 * leader declared the end (an off-by-one in termination) is named as such, not found later as the
 * damage it does (checkmark.mark-unfinished): every domain's marker has handed its work buffer back
 * and holds no prefetched pointer (INV-WB-1 at the end of a mark), and, while the world is stopped,
 * every follower waits at the barrier the leader passed (arrived == participants - 1). Whether the
 * buffers themselves are all back on the empty list is the swept pass's check (swept.workbuf-lost).
 *
 * Cost: O(reachable blocks + fields) with one address-map insert per edge (see walk.h), plus, for
 * over-retention, one header read per slot used below each pool's frontier and per large block
 * (no lookup: counts are compared) and two resolutions per conservative word; the searches that
 * explain a finding (O(heap blocks + fields), a lookup each) run only when something is wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/blockindex.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/platform.h"
#include "gc/pool.h"
#include "invariants/pass.h"
#include "invariants/snapshot.h"
#include "invariants/verify.h"
#include "invariants/walk.h"

/* The followers wrote their markers' state before arriving at the barrier, and the leader read
 * `arrived` with acquire to pass it: this thread sees their final state. */
static size_t check_marking_over(const gc_verify_run *run) {
  gc_heap *heap = run->heap;
  size_t found = 0;
  for (size_t i = 0; i < heap->domain_count; i++) {
    const gc_marker *m = &heap->domains[i]->marker;
    if (m->buf == NULL && m->prefetch_count == 0) continue;
    char where[48];
    snprintf(where, sizeof where, "domain %u's marker", heap->domains[i]->id);
    found += gc_verify_state_violation(
        run, GC_VK_CHECKMARK_MARK_UNFINISHED, where,
        "marking is declared over, but domain %u's marker still holds %s "
        "and %u prefetched pointer(s): it has not finished marking",
        heap->domains[i]->id, m->buf != NULL ? "a work buffer" : "no work buffer",
        m->prefetch_count);
  }
  if (gc_atomic_peek(&heap->stw_requested)) {
    size_t arrived = gc_atomic_peek(&heap->barrier.arrived);
    if (arrived + 1 != heap->participants) {
      found += gc_verify_state_violation(
          run, GC_VK_CHECKMARK_MARK_UNFINISHED, "the mark barrier",
          "marking is declared over with %zu of the %zu following markers "
          "at the barrier: the others may still be marking",
          arrived, heap->participants - 1);
    }
  }
  return found;
}

/* ---- Over-retention ---------------------------------------------------------------------------
 *
 * After the walk, its address map holds every block the roots reach under gc.h's rule. Every
 * MARKED block of the heap must be among them (INV-MARK-2). Counting is enough to know: the walk
 * counts the MARKED blocks it reached, a pass over the heap counts the MARKED blocks there (each
 * one the walk reached is one of them), and only when the heap has more is each block looked up.
 * Likewise the NOT_MARKABLE blocks are counted against the pinned list.
 *
 * Why the collector kept a block, when it can be known, is searched for only then:
 *   - a conservative word that the collector's own resolution (gc_block_containing, the very call
 *     its marker made on the same words this mark) takes for a pointer into the block while gc.h's
 *     rule ignores it: a free slot, the padding after a block, an unused slot above a pool's
 *     frontier. Every word is resolved both ways at every run, since such a block need not be in
 *     the heap pass at all (a stale header above the frontier that got marked);
 *   - the MARKED blocks the roots do not reach that point at it: only the top of such a chain is
 *     reported (with how many it holds), once, as the unmarked side reports a missed subtree;
 *     blocks held only by a cycle of them are reported once per cycle, with the cycle as path;
 *   - a block the walk reached but did not scan (reported already, say UNMARKED) that points at
 *     it: then it is reachable after all, and not reported.
 * Nothing found means the marker marked it from a root the API's tables no longer hold (a root
 * unregistered, a frame popped, a range removed, a block unpinned, a finalizer cleared) or from
 * nowhere.
 */

/* The one place a MARKED block the roots do not reach is allowed: floating garbage of an
 * incremental cycle (INV-MARK-2's snapshot clause, INV-BARRIER-1). Marking preserves the heap as
 * it was when it began, so a block reachable then, or allocated since (born MARKED), may be
 * MARKED at its end though the mutators dropped it meanwhile; the next cycle frees it. So may a
 * block reachable then only weakly, which a read during the mark shades (gc.h, ephemerons). What
 * was reachable and what was allocated then is the verifier's record of the mark start
 * (snapshot.h), taken for incremental cycles whenever this pass is on. A cycle marked in one stop
 * allows nothing: nothing runs between its start and its end. An incremental cycle without a
 * record of its start (the verifier installed, or the pass turned on, while it marked) cannot
 * tell floating garbage from over-retention, and allows every MARKED block rather than guess. */
static int marked_without_root_allowed(const gc_verify_run *run, gc_value v, gc_header hd) {
  /* A free slot's zero header made MARKED was never allocated, then or since. */
  if (gc_hd_wsize(hd) == 0) return 0;
  return gc_verify_snapshot_allows_unrooted(run->snapshot, run->heap, v);
}

/* Its fields can be read: a scanned block with a header that fits where it is. */
static int fields_readable(const gc_heapindex_block *b) {
  size_t whsize = gc_hd_whsize(b->hd);
  return b->hd != 0 && gc_tag_is_scanned(gc_hd_tag(b->hd)) && gc_hd_wsize(b->hd) > 0 &&
         whsize <= b->max_whsize && (b->max_whsize != SIZE_MAX || whsize > GC_SIZECLASS_MAX_WHSIZE);
}

/* The header of the block at v when reading it is safe: v's header lies in a pool or is a large
 * block the index knows (the collector may name a slot above a frontier, or a free one). */
static int header_at(gc_heapindex *ix, gc_value v, gc_header *hd) {
  unsigned c;
  if (gc_heapindex_pool(ix, (uintptr_t)gc_hp_val(v), &c) == NULL &&
      !gc_addrmap_has(&ix->larges, v)) {
    return 0;
  }
  *hd = *gc_hp_val(v);
  return 1;
}

/* A block kept without a root. */
typedef struct kept {
  gc_value v;
  gc_header hd;
  gc_value referrer; /* a kept block whose field `field` points at it, or 0 */
  size_t field;
  const uintptr_t *word; /* a conservative word the collector takes for a pointer into it */
  uintptr_t word_value;
  unsigned char readable; /* its fields can be read (it was met by the heap pass) */
  unsigned char flags;    /* enum kept_flag */
} kept;

enum kept_flag {
  KEPT_REACHED = 1u << 0, /* reachable after all, through a block the walk did not scan */
  KEPT_COVERED = 1u << 1, /* reported, or held by a reported block */
};

typedef struct over {
  const gc_verify_run *run;
  gc_heapindex *ix;
  const gc_seenset *seen; /* the walk's: every block the roots reach */
  gc_header marked;
  gc_verify_over_memory *mem; /* where items and stack live between runs (the scratch) */
  kept *items;
  size_t count, capacity;
  gc_addrmap *index; /* items[i].v -> i */
  size_t *stack;     /* for the searches: each item is pushed once at most */
  int out_of_memory;
} over;

/* Take the scratch memory's buffers; 0 when out of memory. */
static int over_begin(over *o, gc_verify_over_memory *mem) {
  o->mem = mem;
  o->items = mem->items;
  o->capacity = mem->items_capacity;
  o->index = &mem->index;
  return gc_addrmap_reset(o->index, 0);
}

/* The buffers back to the scratch memory (grown, perhaps). */
static void over_end(over *o) {
  o->mem->items = o->items;
  o->mem->items_capacity = o->capacity;
}

/* Room on the stack for every item; 0 when out of memory. */
static int reserve_stack(over *o) {
  gc_verify_over_memory *mem = o->mem;
  if (mem->stack_capacity < o->count) {
    size_t *more = realloc(mem->stack, o->count * sizeof *more);
    if (more == NULL) return 0;
    mem->stack = more;
    mem->stack_capacity = o->count;
  }
  o->stack = mem->stack;
  return 1;
}

/* The item of v, added if new; SIZE_MAX when out of memory. */
static size_t add_kept(over *o, gc_value v, gc_header hd) {
  uint64_t i;
  if (gc_addrmap_get(o->index, v, &i)) return (size_t)i;
  if (o->count == o->capacity) {
    size_t capacity = o->capacity ? 2 * o->capacity : 16;
    kept *more = realloc(o->items, capacity * sizeof *more);
    if (more == NULL) {
      o->out_of_memory = 1;
      return SIZE_MAX;
    }
    o->items = more;
    o->capacity = capacity;
  }
  if (gc_addrmap_add(o->index, v, o->count) < 0) {
    o->out_of_memory = 1;
    return SIZE_MAX;
  }
  o->items[o->count] = (kept){.v = v, .hd = hd};
  return o->count++;
}

static size_t item_of(const over *o, gc_value v) {
  uint64_t i;
  return gc_is_block(v) && gc_addrmap_get(o->index, v, &i) ? (size_t)i : SIZE_MAX;
}

/* Conservative words the collector resolves to a MARKED block the walk did not reach, where
 * gc.h's rule (the index's resolution) names no block or another. */
static void words_the_rule_ignores(over *o) {
  gc_heap *heap = o->run->heap;
  for (size_t i = 0; i < heap->range_count; i++) {
    const gc_range *r = &heap->ranges[i];
    for (size_t k = 0; k < r->wsize; k++) {
      uintptr_t word;
      __builtin_memcpy(&word, &r->start[k], sizeof word); /* raw memory, as rootset.c reads it */
      gc_value theirs = gc_block_containing(heap, word);
      if (theirs == 0 || theirs == gc_heapindex_containing(o->ix, word)) continue;
      gc_header hd;
      if (!header_at(o->ix, theirs, &hd) || hd == 0 || gc_hd_colour(hd) != o->marked ||
          gc_seenset_has_block(o->seen, o->ix, theirs) ||
          marked_without_root_allowed(o->run, theirs, hd)) {
        continue;
      }
      size_t at = add_kept(o, theirs, hd);
      if (at != SIZE_MAX && o->items[at].word == NULL) {
        o->items[at].word = &r->start[k];
        o->items[at].word_value = word;
      }
    }
  }
}

/* Where a word the rule ignores points, relative to the block the collector resolved it to. */
static const char *word_place(gc_heapindex *ix, const kept *k) {
  gc_header *hp = gc_hp_val(k->v);
  unsigned c;
  gc_pool *p = gc_heapindex_pool(ix, (uintptr_t)hp, &c);
  if (p == NULL) {
    return k->word_value < (uintptr_t)hp ? "the large block's bookkeeping"
                                         : "past the large block's end";
  }
  if (hp >= p->frontier) return "an unused slot above the pool's frontier";
  if (gc_hd_wsize(k->hd) == 0) return "a free slot";
  if (k->word_value >= (uintptr_t)(hp + gc_hd_whsize(k->hd))) return "the padding past its end";
  return "where the rule finds no block";
}

/* Give `from` and every kept block under it (through the fields of readable ones) the flag;
 * returns how many got it besides `from`. Each item is pushed once at most. */
static size_t flood(over *o, size_t from, unsigned flag) {
  size_t sp = 0, flagged = 0;
  o->items[from].flags |= (unsigned char)flag;
  o->stack[sp++] = from;
  while (sp > 0) {
    const kept *k = &o->items[o->stack[--sp]];
    if (!k->readable) continue;
    for (size_t f = 0; f < gc_hd_wsize(k->hd); f++) {
      size_t j = item_of(o, gc_fields(k->v)[f]);
      if (j == SIZE_MAX || (o->items[j].flags & flag)) continue;
      o->items[j].flags |= (unsigned char)flag;
      flagged++;
      o->stack[sp++] = j;
    }
  }
  return flagged;
}

static gc_verify_report *report_kept(over *o, const kept *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), cold));

static gc_verify_report *report_kept(over *o, const kept *k, const char *fmt, ...) {
  gc_verify_report *r = gc_verify_report_new(o->run, GC_VK_CHECKMARK_OVER_RETAINED);
  if (r == NULL) return NULL;
  gc_verify_report_block(r, o->ix, k->v);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
  return r;
}

/* "; it is a free slot ...; it holds 3 more such block(s)", what reports add as they apply. */
static const char *notes(const kept *k, size_t holds, char *buf, size_t bsize) {
  int used = snprintf(
      buf, bsize, "%s",
      gc_hd_wsize(k->hd) == 0 ? "; it is a free slot whose zero header was made MARKED" : "");
  if (holds > 0 && used >= 0 && (size_t)used < bsize) {
    snprintf(buf + used, bsize - (size_t)used, "; it holds %zu more such block(s)", holds);
  }
  return buf;
}

/* The top of a chain of kept blocks (no kept block points at it), and what it holds. */
static size_t report_top(over *o, const kept *k, size_t holds) {
  char more[112];
  gc_verify_report *r = report_kept(
      o, k,
      "a MARKED block the roots do not reach (INV-MARK-2): the collector kept it without a root "
      "under gc.h's rule%s%s",
      notes(k, holds, more, sizeof more),
      k->word != NULL ? ""
                      : "; nothing leads to it: marked from a root the API's tables no longer "
                        "hold, or from nowhere");
  if (r == NULL) return 1;
  char origin[sizeof r->origin];
  if (k->word != NULL) {
    snprintf(origin, sizeof origin,
             "conservative word at %p = %#llx, taken by gc_block_containing, ignored by gc.h's "
             "rule (%s)",
             (const void *)k->word, (unsigned long long)k->word_value, word_place(o->ix, k));
  } else {
    snprintf(origin, sizeof origin, "no root: none the verifier enumerates reaches it");
  }
  gc_verify_report_path(r, origin, NULL, 0);
  gc_verify_report_neighbourhood(r, o->ix);
  return 1;
}

/* A kept block held only by a cycle of kept blocks: the path is the chain of referrers back to
 * where it repeats. */
static size_t report_cycle(over *o, size_t at, size_t holds) {
  const kept *k = &o->items[at];
  char more[112];
  gc_verify_report *r = report_kept(o, k,
                                    "a MARKED block the roots do not reach (INV-MARK-2): only a "
                                    "cycle of such blocks points at it%s",
                                    notes(k, holds, more, sizeof more));
  if (r == NULL) return 1;
  enum { MAX_STEPS = 64 }; /* the last referrers before the block: enough to see the cycle */
  gc_verify_step steps[MAX_STEPS];
  size_t n = 0;
  for (size_t i = at; n < MAX_STEPS;) {
    size_t up = item_of(o, o->items[i].referrer);
    if (up == SIZE_MAX || up == at) break;
    int again = 0;
    for (size_t s = 0; s < n; s++) again |= steps[s].block == o->items[up].v;
    if (again) break;
    const kept *p = &o->items[up];
    steps[n++] =
        (gc_verify_step){p->v, o->items[i].field, p->hd, gc_verify_colour_of(o->run->heap, p->hd)};
    i = up;
  }
  for (size_t s = 0; s < n / 2; s++) { /* collected from the block upwards: reverse */
    gc_verify_step t = steps[s];
    steps[s] = steps[n - 1 - s];
    steps[n - 1 - s] = t;
  }
  gc_verify_report_path(r, "a cycle of MARKED blocks the roots do not reach", steps, n);
  gc_verify_report_neighbourhood(r, o->ix);
  return 1;
}

/* The MARKED blocks the walk did not reach: found, explained, reported. */
static size_t kept_marked(over *o) {
  gc_heapindex_cursor c;
  gc_heapindex_block b;
  gc_heapindex_cursor_start(&c, o->ix);
  while (gc_heapindex_next_block(&c, &b)) {
    if (b.hd == 0 || gc_hd_colour(b.hd) != o->marked || gc_seenset_has_block(o->seen, o->ix, b.v) ||
        marked_without_root_allowed(o->run, b.v, b.hd)) {
      continue;
    }
    size_t at = add_kept(o, b.v, b.hd);
    if (at != SIZE_MAX) o->items[at].readable = (unsigned char)fields_readable(&b);
  }
  if (o->count == 0) return 0; /* what differed was reported by the walk already */
  if (!reserve_stack(o)) o->out_of_memory = 1;
  if (o->out_of_memory) return 0;
  /* Who points at each: a kept block (its referrer), or a block the walk reached without
   * scanning it (a reached MARKED one was scanned, so its children were reached too). */
  gc_heapindex_cursor_start(&c, o->ix);
  while (gc_heapindex_next_block(&c, &b)) {
    if (!fields_readable(&b)) continue;
    size_t self = SIZE_MAX;
    if (gc_hd_colour(b.hd) == o->marked) {
      self = item_of(o, b.v);
      if (self == SIZE_MAX) continue;
    } else if (!gc_seenset_has_block(o->seen, o->ix, b.v)) {
      continue;
    }
    for (size_t f = 0; f < gc_hd_wsize(b.hd); f++) {
      size_t j = item_of(o, gc_fields(b.v)[f]);
      if (j == SIZE_MAX || j == self) continue;
      if (self == SIZE_MAX) {
        o->items[j].flags |= KEPT_REACHED;
      } else if (o->items[j].referrer == 0) {
        o->items[j].referrer = b.v;
        o->items[j].field = f;
      }
    }
  }
  for (size_t i = 0; i < o->count; i++) {
    if (o->items[i].flags & KEPT_REACHED) flood(o, i, KEPT_REACHED);
  }
  /* Reached ones stay out of what follows: a kept block's referrer is kept and not reached. */
  for (size_t i = 0; i < o->count; i++) {
    if (o->items[i].flags & KEPT_REACHED) o->items[i].flags |= KEPT_COVERED;
  }
  size_t found = 0;
  for (size_t i = 0; i < o->count; i++) {
    if ((o->items[i].flags & KEPT_COVERED) || o->items[i].referrer != 0) continue;
    found += report_top(o, &o->items[i], flood(o, i, KEPT_COVERED));
  }
  for (size_t i = 0; i < o->count; i++) {
    if (o->items[i].flags & KEPT_COVERED) continue;
    found += report_cycle(o, i, flood(o, i, KEPT_COVERED));
  }
  return found;
}

static int by_value(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* The NOT_MARKABLE blocks that are not pinned. */
static size_t kept_not_pinned(over *o) {
  const gc_ptr_vec *pinned = &o->run->heap->pinned;
  void **sorted = NULL;
  if (pinned->count > 0) {
    sorted = malloc(pinned->count * sizeof *sorted);
    if (sorted == NULL) return 0;
    memcpy(sorted, pinned->items, pinned->count * sizeof *sorted);
    qsort(sorted, pinned->count, sizeof *sorted, by_value);
  }
  size_t found = 0;
  gc_heapindex_cursor c;
  gc_heapindex_block b;
  gc_heapindex_cursor_start(&c, o->ix);
  while (gc_heapindex_next_block(&c, &b)) {
    if (b.hd == 0 || gc_hd_colour(b.hd) != GC_NOT_MARKABLE) continue;
    void *key = (void *)b.v;
    if (sorted != NULL && bsearch(&key, sorted, pinned->count, sizeof *sorted, by_value)) continue;
    found++;
    kept k = {.v = b.v, .hd = b.hd};
    gc_verify_report *r =
        report_kept(o, &k,
                    "a NOT_MARKABLE block that is not pinned (INV-MARK-2): no cycle frees it and "
                    "no marker scans it, so what it points to may be freed under it; the roots "
                    "%s it",
                    gc_seenset_has_block(o->seen, o->ix, b.v) ? "reach" : "do not reach");
    if (r == NULL) continue;
    char origin[sizeof r->origin];
    snprintf(origin, sizeof origin, "not on the heap's pinned list (%zu block(s))", pinned->count);
    gc_verify_report_path(r, origin, NULL, 0);
    gc_verify_report_neighbourhood(r, o->ix);
  }
  free(sorted);
  return found;
}

/* Of the headers at slot, slot + whsize, ... below limit: how many are `marked` and how many
 * NOT_MARKABLE (free slots, header 0, are neither). Not instrumented at all: it reads every slot
 * of every pool at every mark-done, the over-retention count's whole cost, and an address check
 * per slot doubled it. Nothing is lost: the slots are those of a pool the heap index holds, below
 * its frontier (next_block clamps a corrupt one into the pool), and the swept pass reads each of
 * these headers, instrumented, at every sweep end. (The colour mask spelled out: clang inlines no
 * function into one whose sanitizer attributes differ.) */
GC_VERIFY_NOT_INSTRUMENTED static void count_colours(const gc_header *slot, const gc_header *limit,
                                                     size_t whsize, gc_header marked,
                                                     size_t *marked_count, size_t *marked_words,
                                                     size_t *not_markable_count) {
  size_t m = 0, mw = 0, n = 0;
  for (; slot < limit; slot += whsize) {
    gc_header colour = *slot & GC_HD_COLOUR_MASK;
    int is_marked = *slot != 0 && colour == marked;
    m += is_marked;
    mw += is_marked ? gc_hd_whsize(*slot) : 0;
    n += *slot != 0 && colour == GC_NOT_MARKABLE;
  }
  *marked_count += m;
  *marked_words += mw;
  *not_markable_count += n;
}

/* INV-MARKCOUNT-1: the collector's count of what this mark coloured, against the colours. */
static size_t check_mark_count(const gc_verify_run *run, size_t marked, size_t marked_words) {
  const gc_heap *heap = run->heap;
  if (marked == heap->marked_blocks && marked_words == heap->marked_words) return 0;
  const gc_cycle_work *w = &heap->cycle_work;
  return gc_verify_state_violation(
      run, GC_VK_CHECKMARK_MARK_COUNT, "the mark's counts (heap->marked_blocks, marked_words)",
      "the mark counted %zu blocks and %zu words marked, but %zu blocks of %zu words are MARKED "
      "(%llu of them born MARKED, %zu pinned apart; the pacer takes the words for the live "
      "heap) (INV-MARKCOUNT-1)",
      heap->marked_blocks, heap->marked_words, marked, marked_words,
      (unsigned long long)w->born_marked_blocks, heap->pinned.count);
}

/* After the walk, in its scratch memory; `found` is what the pass reported so far. The count of
 * colours is compared with the collector's own only when no block was found wrongly coloured:
 * a block left unmarked or kept without a root also puts the counts out, and is named better. */
static size_t check_over_retention(const gc_verify_run *run, const gc_walk_seen *seen,
                                   size_t found) {
  over o;
  memset(&o, 0, sizeof o);
  o.run = run;
  o.ix = &run->scratch->index;
  o.seen = &run->scratch->reached;
  o.marked = run->heap->colours.marked;
  if (!over_begin(&o, &run->scratch->over)) o.out_of_memory = 1;
  size_t marked = 0, marked_words = 0, not_markable = 0;
  gc_heapindex_cursor c;
  gc_heapindex_block b;
  gc_heapindex_cursor_start(&c, o.ix);
  /* Every block next_block yields: a pool's slots counted in one call when the cursor enters
   * the pool (it yields the first, the rest follow), a large block by itself. */
  while (gc_heapindex_next_block(&c, &b)) {
    if (!c.larges) {
      count_colours(gc_hp_val(b.v), c.limit, c.slot_whsize, o.marked, &marked, &marked_words,
                    &not_markable);
      c.slot = c.limit; /* the pool is counted */
      continue;
    }
    if (b.hd == 0) continue;
    marked += gc_hd_colour(b.hd) == o.marked;
    marked_words += gc_hd_colour(b.hd) == o.marked ? gc_hd_whsize(b.hd) : 0;
    not_markable += gc_hd_colour(b.hd) == GC_NOT_MARKABLE;
  }
  words_the_rule_ignores(&o);
  if (o.count > 0 || marked != seen->blocks_of_colour[o.marked >> GC_HD_COLOUR_SHIFT]) {
    found += kept_marked(&o);
  }
  if (not_markable != run->heap->pinned.count) found += kept_not_pinned(&o);
  if (found == 0) found += check_mark_count(run, marked, marked_words);
  if (o.out_of_memory) {
    fprintf(stderr,
            "gcfuzz verify: out of memory in the checkmark pass's over-retention search; it "
            "checked part of the heap only\n");
  }
  over_end(&o);
  return found;
}

/* ---- The pass ------------------------------------------------------------------------------ */

size_t gc_verify_checkmark_run(const gc_verify_run *run) {
  gc_verify_run r = *run;
  gc_verify_scratch own; /* the walk's map outlives the walk: over-retention reads it */
  if (r.scratch == NULL) {
    memset(&own, 0, sizeof own);
    r.scratch = &own;
  }
  gc_walk_rules rules = {
      .allowed_colours = (1u << (run->heap->colours.marked >> GC_HD_COLOUR_SHIFT)) |
                         (1u << (GC_NOT_MARKABLE >> GC_HD_COLOUR_SHIFT)),
      .expected =
          "MARKED (or NOT_MARKABLE) once marking is done: found unmarked block, "
          "missed by the marker although its referrer reaches it",
      .foreign = GC_VK_CHECKMARK_BAD_POINTER,
      .interior = GC_VK_CHECKMARK_BAD_POINTER,
      .zero_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_header = GC_VK_CHECKMARK_BAD_POINTER,
      .bad_colour = GC_VK_CHECKMARK_UNMARKED,
  };
  rules.key_colours = rules.allowed_colours;
  gc_walk_seen seen;
  size_t found = check_marking_over(&r) + gc_walk_run(&r, &rules, &seen);
  if (seen.complete) found = check_over_retention(&r, &seen, found);
  if (r.scratch == &own) gc_verify_scratch_free(&own);
  return found;
}

size_t gc_verify_checkmark(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_checkmark_run(&run);
}
