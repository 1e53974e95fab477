/* The checkmark pass: after a clean mark (also with a 4-entry mark stack, which overflows into
 * re-darkening) it finds nothing; when a hook unmarks a reachable block right after marking (what
 * a marker bug looks like), it reports that block and the block pointing at it; when a hook marks
 * a block no root reaches (what a marker that keeps too much looks like), it reports the block
 * and why the collector may have reached it. */
#include <string.h>

#include "gc/mark.h"
#include "gc/poolset.h"
#include "invariants/breaking.h"

/* Rooted graph: global root -> a; a.0 = b, a.2 = big (large); b.0 = c; big.5 = c; a frame slot
 * holds local[0]; a pinned block p holds x in its field 0; a scanner root holds s; a conservative
 * range holds a pointer into the middle of k; fz has a finalizer and points to y. */
typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_value root;
  gc_value a, b, c, big, p, x, s, k, fz, y;
  uintptr_t cons[2];
  gc_value local[1];
  gc_frame frame;
  gc_verifier *v;
  breaking_hook hook;
} fixture;

static void scan_s(gc_visit_fn visit, void *ctx, void *user) { visit(ctx, (gc_value *)user); }
static void ignore_finalizer(gc_heap *heap, gc_value block, void *user) {}

static void fixture_build(fixture *f, const char *params) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  gc_root_register(f->h, &f->root);
  gc_frame_push(f->d, &f->frame, f->local, 1);
  gc_root_scanner_add(f->h, scan_s, &f->s);
  f->a = f->root = gc_alloc(f->d, 3, GC_TAG_SCAN);
  f->b = gc_alloc(f->d, 2, GC_TAG_SCAN);
  f->c = gc_alloc(f->d, 1, GC_TAG_RAW);
  f->big = gc_alloc(f->d, 300, GC_TAG_SCAN);
  GC_FIELD(f->a, 0) = f->b;
  GC_FIELD(f->a, 2) = f->big;
  GC_FIELD(f->b, 0) = f->c;
  GC_FIELD(f->big, 5) = f->c;
  f->local[0] = gc_alloc(f->d, 4, GC_TAG_SCAN);
  f->p = gc_alloc(f->d, 2, GC_TAG_SCAN);
  f->x = gc_alloc(f->d, 5, GC_TAG_SCAN);
  GC_FIELD(f->p, 0) = f->x;
  gc_pin(f->h, f->p);
  f->s = gc_alloc(f->d, 6, GC_TAG_SCAN);
  f->k = gc_alloc(f->d, 3, GC_TAG_SCAN);
  f->cons[1] = (uintptr_t)f->k + 2 * sizeof(gc_value); /* an interior pointer: fine here */
  gc_conservative_add(f->h, f->cons, sizeof f->cons);
  f->fz = gc_alloc(f->d, 2, GC_TAG_SCAN);
  f->y = gc_alloc(f->d, 2, GC_TAG_SCAN);
  GC_FIELD(f->fz, 1) = f->y;
  gc_finalizer_set(f->h, f->fz, ignore_finalizer, NULL);
  for (int i = 0; i < 300; i++) gc_alloc(f->d, 1 + i % 4, GC_TAG_SCAN); /* garbage */
  gc_collect(f->d, GC_COLLECT_FULL);
  breaking_hook_set(f->h, &f->hook, GC_HOOK_MARK_DONE, NULL, NULL);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
}

static void fixture_free(fixture *f) {
  gc_verify_uninstall(f->v);
  gc_frame_pop(f->d, &f->frame);
  gc_root_scanner_remove(f->h, scan_s, &f->s);
  gc_conservative_remove(f->h, f->cons);
  gc_root_unregister(f->h, &f->root);
  gc_heap_destroy(f->h);
}

/* The block to unmark, passed to the hook. */
static gc_value victim;
static void unmark_victim(gc_heap *h, void *arg) { set_colour(victim, h->colours.unmarked); }

/* Run `fn(arg)` right after the next mark; check checkmark reported only `kind`, once, on `block`
 * (0: any), and return the report (valid until fixture_free). */
static const gc_verify_report *break_and_check(fixture *f, breaking_fn fn, void *arg,
                                               gc_verify_kind kind, gc_value block) {
  f->hook.fn = fn;
  f->hook.arg = arg;
  f->hook.armed = 1;
  gc_collect(f->d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f->hook.fired, 1);
  const gc_verify_reports *r = gc_verify_reports_of(f->v);
  CHECK_ONLY_KIND(r, kind);
  if (r->count == 0) return NULL;
  CHECK_EQ_U(r->count, 1);
  CHECK(block == 0 || r->items[0].block == block);
  CHECK(strcmp(r->items[0].point, "mark-done") == 0);
  return &r->items[0];
}

/* Unmark `block` right after the next mark: reported as missed by the marker. */
static const gc_verify_report *unmark_and_check(fixture *f, gc_value block) {
  victim = block;
  const gc_verify_report *r =
      break_and_check(f, unmark_victim, NULL, GC_VK_CHECKMARK_UNMARKED, block);
  if (r != NULL) CHECK(strstr(r->what, "found unmarked block") != NULL);
  return r;
}

static void clean_marks_pass(const char *params) {
  fixture f;
  fixture_build(&f, params);
  /* A long list and a wide array: with a 4-entry stack both overflow into re-darkening. */
  gc_value list = 0;
  for (int i = 0; i < 20000; i++) {
    gc_value cell = gc_alloc(f.d, 2, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = list;
    list = cell;
    f.local[0] = list;
  }
  for (int i = 0; i < 300; i++) GC_FIELD(f.big, i) = gc_alloc(f.d, 1 + i % 3, GC_TAG_SCAN);
  for (int c = 0; c < 3; c++) gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(gc_verify_runs(f.v, GC_VERIFY_CHECKMARK), 3);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

static void clean_mark_passes(void) { clean_marks_pass("verify=checkmark"); }
static void clean_mark_with_tiny_stack_passes(void) {
  clean_marks_pass("verify=checkmark,markstack=4");
}

/* The root's own block left unmarked: the referrer is the root. */
static void root_block_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.a);
  if (r != NULL) {
    CHECK_EQ_U(r->path_len, 0);
    CHECK(strstr(r->origin, "global root #0") != NULL);
  }
  fixture_free(&f);
}

/* A child of a marked block left unmarked: reported with its referrer. */
static void child_of_marked_block_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.b);
  if (r != NULL) {
    CHECK_EQ_U(r->path_len, 1);
    CHECK(r->path_len == 1 && r->path[0].block == f.a && r->path[0].field == 0);
    CHECK(r->node_count >= 2); /* the neighbourhood: b and its referrer a (and c) */
    gc_verify_reports_print(gc_verify_reports_of(f.v), stderr); /* quoted in the README */
  }
  fixture_free(&f);
}

static void large_block_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.big);
  if (r != NULL) CHECK(strstr(r->where, "large block") != NULL);
  fixture_free(&f);
}

/* Blocks held by each other kind of root: a frame slot, a pinned block's field, a scanner. */
static void frame_root_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.local[0]);
  if (r != NULL) CHECK(strstr(r->origin, "local root frame 0") != NULL);
  fixture_free(&f);
}

static void pinned_field_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.x);
  if (r != NULL) CHECK(strstr(r->origin, "pinned block") != NULL);
  fixture_free(&f);
}

static void scanner_root_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.s);
  if (r != NULL) CHECK(strstr(r->origin, "scanner") != NULL);
  fixture_free(&f);
}

static void conservative_root_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = unmark_and_check(&f, f.k);
  if (r != NULL) CHECK(strstr(r->origin, "conservative range word") != NULL);
  fixture_free(&f);
}

/* The collector's own resolution of conservative words misses k: its pool is taken out of the
 * collector's pool set (as a pool-set or block-index bug would), so the marker does not resolve
 * the range word into k and leaves it unmarked. The walk resolves the word itself, from the
 * pass's heap index, and reports k; sharing the collector's resolution it saw nothing. */
static void conservative_word_the_collector_missed(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_pool *pool = gc_pool_of_hp(gc_hp_val(f.k));
  gc_pool_set_remove(f.h, pool);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK(gc_pool_set_insert(f.h, pool));
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  CHECK_ONLY_KIND(r, GC_VK_CHECKMARK_UNMARKED);
  if (r->count > 0) {
    CHECK(r->items[0].block == f.k);
    CHECK(strstr(r->items[0].origin, "conservative range word") != NULL);
  }
  fixture_free(&f);
}

/* y is reachable only through fz, which nothing points to: the fixture's collection queued fz's
 * finalizer (fz survived it) and ran it. With a finalizer set again, the next mark reaches y
 * through fz's fields, queues fz again and marks it; the checkmark walk reaches fz as a queued
 * finalizer's block, and y through it. */
static void finalizer_root_unmarked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_finalizer_set(f.h, f.fz, ignore_finalizer, NULL);
  const gc_verify_report *r = unmark_and_check(&f, f.y);
  if (r != NULL) {
    CHECK(strstr(r->origin, "finalizer") != NULL);
    CHECK(r->path_len == 1 && r->path[0].block == f.fz);
  }
  fixture_free(&f);
}

/* A marker that stopped early leaves a whole list unmarked: one report, for its first cell. */
static gc_value list_head;
static void unmark_list(gc_heap *h, void *arg) {
  for (gc_value v = list_head; v != 0; v = GC_FIELD(v, 0)) set_colour(v, h->colours.unmarked);
}

static void unmarked_subtree_reported_once(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  list_head = 0;
  for (int i = 0; i < 100; i++) {
    gc_value cell = gc_alloc(f.d, 1, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = list_head;
    list_head = cell;
  }
  GC_FIELD(f.b, 1) = list_head;
  break_and_check(&f, unmark_list, NULL, GC_VK_CHECKMARK_UNMARKED, list_head);
  fixture_free(&f);
}

/* A reachable field turned into a pointer to nowhere, right after marking. */
static gc_value nowhere[2];
static void scribble(gc_heap *h, void *arg) {
  GC_FIELD(*(gc_value *)arg, 1) = (gc_value)&nowhere[0];
}

static void pointer_to_nowhere(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  f.hook.fn = scribble;
  f.hook.arg = &f.b;
  f.hook.armed = 1;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_CHECKMARK_BAD_POINTER);
  GC_FIELD(f.b, 1) = 0;
  fixture_free(&f);
}

/* Marking declared over while a marker is still at work (mutant 09's bug): the marker check
 * names it before any block is left unmarked. First a marker that has not handed its work buffer
 * back, then a follower that never arrived at the mark barrier. */
static void hold_a_buffer(gc_heap *h, void *arg) { h->main_domain->marker.buf = h->work.empty; }
static void one_more_participant(gc_heap *h, void *arg) { h->participants++; }

/* `fn` at the next mark-done point; exactly one checkmark.mark-unfinished, saying `what` about
 * `where`. */
static void expect_mark_unfinished(breaking_fn fn, const char *what, const char *where) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  f.hook.fn = fn;
  f.hook.armed = 1;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  f.d->marker.buf = NULL; /* a held buffer given back before anything marks again */
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  CHECK_ONLY_KIND(r, GC_VK_CHECKMARK_MARK_UNFINISHED);
  CHECK_EQ_U(r->count, 1);
  if (r->count > 0) {
    CHECK(strstr(r->items[0].what, what) != NULL);
    CHECK(strstr(r->items[0].where, where) != NULL);
  }
  fixture_free(&f); /* participants: set afresh by the next stop of the world */
}

static void marker_still_holds_a_buffer(void) {
  expect_mark_unfinished(hold_a_buffer, "still holds a work buffer", "domain 0's marker");
}

static void follower_missing_at_the_barrier(void) {
  expect_mark_unfinished(one_more_participant, "0 of the 1 following markers", "the mark barrier");
}

/* Called directly after a mark outside any collection (no world stopped), the pass checks the
 * markers but not the barrier, which no one waits at. */
static void direct_call_after_a_mark(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_mark_heap(f.h);
  f.h->participants = 3; /* stale from some earlier stop: not read outside one */
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_checkmark(f.h, &out), 0);
  f.h->main_domain->marker.buf = f.h->work.empty;
  CHECK_EQ_U(gc_verify_checkmark(f.h, &out), 1);
  CHECK_ONLY_KIND(&out, GC_VK_CHECKMARK_MARK_UNFINISHED);
  f.h->main_domain->marker.buf = NULL;
  gc_verify_reports_free(&out);
  f.h->participants = 1;
  gc_collect(f.d, GC_COLLECT_FULL); /* the colours back to a collector's own */
  fixture_free(&f);
}

/* ---- Over-retention: blocks MARKED (or NOT_MARKABLE) that no root reaches ------------------ */

/* A hook that marks every block of a NULL-terminated list, as a marker that kept them would. */
static void mark_blocks(gc_heap *h, void *arg) {
  for (gc_value *v = arg; *v != 0; v++) set_colour(*v, h->colours.marked);
}

/* `fn(arg)` right after the next mark: only checkmark.over-retained, once, on `block`. */
static const gc_verify_report *expect_over_retained(fixture *f, breaking_fn fn, void *arg,
                                                    gc_value block) {
  return break_and_check(f, fn, arg, GC_VK_CHECKMARK_OVER_RETAINED, block);
}

/* A block nothing points to, MARKED: no root, no word, no referrer explains it. */
static void unreachable_block_marked(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_value blocks[] = {gc_alloc(f.d, 2, GC_TAG_SCAN), 0};
  const gc_verify_report *r = expect_over_retained(&f, mark_blocks, blocks, blocks[0]);
  if (r != NULL) {
    CHECK(strstr(r->what, "MARKED block the roots do not reach") != NULL);
    CHECK(strstr(r->what, "holds") == NULL);
    CHECK(strstr(r->what, "nothing leads to it") != NULL);
    CHECK(strstr(r->origin, "no root") != NULL);
    gc_verify_reports_print(gc_verify_reports_of(f.v), stderr); /* quoted in the README */
  }
  fixture_free(&f);
}

/* Incremental marking keeps the heap as it was when it began: blocks reachable then and dropped
 * mid-mark (through the barrier), and a block allocated mid-mark and dropped, are MARKED at
 * mark-done with no root: floating garbage, not over-retention. */
static void floating_garbage_is_not_over_retained(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,markslice=1,verify=checkmark");
  gc_collect(f.d, GC_COLLECT_START);
  gc_value n = gc_alloc(f.d, 2, GC_TAG_SCAN);
  gc_store(f.d, f.a, 1, n);
  gc_store(f.d, f.a, 1, 0);
  gc_store(f.d, f.a, 0, 0); /* b: reachable at the start */
  f.local[0] = 0;           /* a frame root's block: reachable at the start */
  for (int i = 0; i < 100000 && gc_atomic_peek(&f.h->marking); i++) {
    gc_collect(f.d, GC_COLLECT_SLICE);
  }
  CHECK(gc_atomic_peek(&f.h->marking) == 0);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* The snapshot rule is no blanket: in an incremental cycle a block that was already garbage when
 * marking began and is MARKED at its end is over-retained, as in the stw mode. */
static void garbage_at_mark_start_marked_in_an_incremental_cycle(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=checkmark");
  gc_value blocks[] = {gc_alloc(f.d, 2, GC_TAG_SCAN), 0};
  const gc_verify_report *r = expect_over_retained(&f, mark_blocks, blocks, blocks[0]);
  if (r != NULL) CHECK(strstr(r->what, "nothing leads to it") != NULL);
  fixture_free(&f);
}

/* A global root unregistered, and its block and the block it points to still marked, as by a
 * marker that scanned a stale copy of the root set: one report, for the top block. */
static void root_kept_after_unregister(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_value extra = gc_alloc(f.d, 2, GC_TAG_SCAN);
  GC_FIELD(extra, 0) = gc_alloc(f.d, 1, GC_TAG_SCAN);
  CHECK(gc_root_register(f.h, &extra) == GC_OK);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_root_unregister(f.h, &extra) == GC_OK);
  gc_value blocks[] = {GC_FIELD(extra, 0), extra, 0};
  const gc_verify_report *r = expect_over_retained(&f, mark_blocks, blocks, extra);
  if (r != NULL) {
    CHECK(strstr(r->what, "holds 1 more") != NULL);
    CHECK_EQ_U(r->path_len, 0);
  }
  fixture_free(&f);
}

/* A list of 100 cells nothing points to, all MARKED: one report, for its head. */
static void over_retained_list_reported_once(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  static gc_value cells[101];
  gc_value list = 0;
  for (int i = 0; i < 100; i++) {
    gc_value cell = gc_alloc(f.d, 1, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = list;
    cells[i] = list = cell;
  }
  cells[100] = 0;
  const gc_verify_report *r = expect_over_retained(&f, mark_blocks, cells, list);
  if (r != NULL) CHECK(strstr(r->what, "holds 99 more") != NULL);
  fixture_free(&f);
}

/* Two blocks that point at each other and nothing else at them, both MARKED: one report, whose
 * path is the other block of the cycle. */
static void over_retained_cycle(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  gc_value x = gc_alloc(f.d, 1, GC_TAG_SCAN), y = gc_alloc(f.d, 1, GC_TAG_SCAN);
  GC_FIELD(x, 0) = y;
  GC_FIELD(y, 0) = x;
  gc_value blocks[] = {x, y, 0};
  const gc_verify_report *k = expect_over_retained(&f, mark_blocks, blocks, 0); /* x or y */
  if (k != NULL) {
    CHECK(k->block == x || k->block == y);
    CHECK(strstr(k->origin, "cycle") != NULL);
    CHECK(k->path_len == 1 && k->path[0].block == (k->block == x ? y : x));
    CHECK(strstr(k->what, "holds 1 more") != NULL);
  }
  fixture_free(&f);
}

/* A free slot, its zero header made MARKED, and a conservative word pointing at it:
 * the collector's resolution takes the word for a pointer into the slot (its header is no longer
 * 0), gc.h's rule does not (a header with no size is no block), and the report names the word. */
static gc_header *free_slot;
static void mark_free_slot(gc_heap *h, void *arg) { *free_slot = h->colours.marked; }

static void free_slot_marked_through_a_word(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  /* A slot freed between two live ones: below its pool's frontier, on its free list. */
  GC_FIELD(f.a, 1) = gc_alloc(f.d, 2, GC_TAG_SCAN);
  gc_value gone = gc_alloc(f.d, 2, GC_TAG_SCAN);
  GC_FIELD(GC_FIELD(f.a, 1), 0) = gc_alloc(f.d, 2, GC_TAG_SCAN);
  CHECK(gc_pool_of_hp(gc_hp_val(gone)) == gc_pool_of_hp(gc_hp_val(GC_FIELD(f.a, 1))));
  /* A zero header has colour bits 0: a marker marks such a slot in the cycles whose UNMARKED is
   * colour 0 (MARKED, what it becomes, is not then). */
  do {
    gc_collect(f.d, GC_COLLECT_FULL);
  } while (f.h->colours.unmarked != 0);
  free_slot = gc_hp_val(gone);
  CHECK(*free_slot == 0);
  f.cons[0] = (uintptr_t)free_slot;
  const gc_verify_report *r = expect_over_retained(&f, mark_free_slot, NULL, gc_val_hp(free_slot));
  if (r != NULL) {
    CHECK(strstr(r->what, "free slot whose zero header was made MARKED") != NULL);
    CHECK(strstr(r->origin, "conservative word") != NULL);
    CHECK(strstr(r->origin, "(a free slot)") != NULL);
  }
  *free_slot = 0; /* free again before its pool is swept */
  f.cons[0] = 0;
  fixture_free(&f);
}

/* A reachable block painted NOT_MARKABLE without being pinned: never freed, never scanned. */
static void paint_not_markable(gc_heap *h, void *arg) {
  set_colour(*(gc_value *)arg, GC_NOT_MARKABLE);
}

static void not_markable_block_not_pinned(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r = expect_over_retained(&f, paint_not_markable, &f.b, f.b);
  if (r != NULL) {
    CHECK(strstr(r->what, "NOT_MARKABLE block that is not pinned") != NULL);
    CHECK(strstr(r->what, "the roots reach it") != NULL);
    CHECK(strstr(r->origin, "pinned list (1 block(s))") != NULL);
  }
  set_colour(f.b, f.h->colours.unmarked); /* live again, as after a clean mark */
  fixture_free(&f);
}

/* ---- INV-MARKCOUNT-1: the mark's own count against the colours ---- */

static void count_one_block_more(gc_heap *h, void *arg) { h->marked_blocks++; }
static void count_words_less(gc_heap *h, void *arg) { h->marked_words -= 3; }

/* The mark says it marked one block more than are MARKED (what a lost decrement or a block
 * counted by two markers looks like): one checkmark.mark-count, naming both counts. */
static void marked_count_off_by_one(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  size_t marked = 0;
  const gc_verify_report *r =
      break_and_check(&f, count_one_block_more, NULL, GC_VK_CHECKMARK_MARK_COUNT, 0);
  if (r != NULL) {
    marked = f.h->marked_blocks - 1;
    char want[96];
    snprintf(want, sizeof want, "counted %zu blocks", marked + 1);
    CHECK(strstr(r->what, want) != NULL);
    snprintf(want, sizeof want, "but %zu blocks", marked);
    CHECK(strstr(r->what, want) != NULL);
  }
  fixture_free(&f);
}

/* The blocks agree but the words do not (a block counted with another's size). */
static void marked_words_short(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  const gc_verify_report *r =
      break_and_check(&f, count_words_less, NULL, GC_VK_CHECKMARK_MARK_COUNT, 0);
  if (r != NULL) CHECK(strstr(r->what, "INV-MARKCOUNT-1") != NULL);
  fixture_free(&f);
}

/* A block unmarked after the mark puts the counts out too, but is reported as what it is: the
 * count is compared only when no block was found wrongly coloured. */
static void unmarked_block_is_not_a_count(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark");
  unmark_and_check(&f, f.b);
  fixture_free(&f);
}

/* Pins and unpins while an incremental cycle marks, of blocks MARKED (by a slice or at birth)
 * and not yet: a pinned block leaves the count, an unpinned one joins it, and the count at the
 * end is the colours' (no report over several cycles). */
static void pins_mid_mark_keep_the_count(void) {
  fixture f;
  fixture_build(&f, "verify=checkmark,marking=incremental,markslice=8");
  for (int cycle = 0; cycle < 4; cycle++) {
    gc_collect(f.d, GC_COLLECT_START);
    gc_value born = gc_alloc(f.d, 3, GC_TAG_SCAN); /* born MARKED */
    gc_store(f.d, f.a, 1, born);
    gc_pin(f.h, born);
    gc_unpin(f.h, f.p); /* pinned since before the cycle: MARKED now */
    gc_collect(f.d, GC_COLLECT_SLICE);
    gc_pin(f.h, f.b); /* MARKED by now, or not yet */
    gc_pin(f.h, f.p);
    gc_collect(f.d, GC_COLLECT_SLICE);
    gc_unpin(f.h, f.b);
    gc_unpin(f.h, born);
    gc_collect(f.d, GC_COLLECT_MAJOR); /* finishes this cycle's mark, then a whole one */
    gc_store(f.d, f.a, 1, 0);
  }
  CHECK(gc_verify_runs(f.v, GC_VERIFY_CHECKMARK) >= 8);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

int main(void) {
  RUN(clean_mark_passes);
  RUN(clean_mark_with_tiny_stack_passes);
  RUN(root_block_unmarked);
  RUN(child_of_marked_block_unmarked);
  RUN(large_block_unmarked);
  RUN(frame_root_unmarked);
  RUN(pinned_field_unmarked);
  RUN(scanner_root_unmarked);
  RUN(conservative_root_unmarked);
  RUN(conservative_word_the_collector_missed);
  RUN(finalizer_root_unmarked);
  RUN(unmarked_subtree_reported_once);
  RUN(pointer_to_nowhere);
  RUN(marker_still_holds_a_buffer);
  RUN(follower_missing_at_the_barrier);
  RUN(direct_call_after_a_mark);
  RUN(unreachable_block_marked);
  RUN(floating_garbage_is_not_over_retained);
  RUN(garbage_at_mark_start_marked_in_an_incremental_cycle);
  RUN(root_kept_after_unregister);
  RUN(over_retained_list_reported_once);
  RUN(over_retained_cycle);
  RUN(free_slot_marked_through_a_word);
  RUN(not_markable_block_not_pinned);
  RUN(marked_count_off_by_one);
  RUN(marked_words_short);
  RUN(unmarked_block_is_not_a_count);
  RUN(pins_mid_mark_keep_the_count);
  CHECK_MAIN_END();
}
