/* The satb pass: a clean incremental run (stores, drops, pins, finalizers, allocation and slices
 * mid-mark, several cycles, every pass on) reports nothing; each way of breaking the snapshot is
 * reported as exactly its kind: a store that bypasses the barrier, a root left white at the start,
 * a block lost before mark-done (in both modes) are satb.unmarked, with the recorded path and the
 * edge overwritten since; a block allocated mid-mark and left UNMARKED (small, large, from a
 * free-list slot, seen at a slice or only at mark-done) is satb.born-white. */
#include <string.h>

#include "invariants/breaking.h"

typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_verifier *v;
  breaking_hook hook;
  gc_value root; /* global root -> a; a.0 = b; b.0 = c */
  gc_value a, b, c;
  gc_value local[1];
  gc_frame frame;
} fixture;

static void fixture_build(fixture *f, const char *params) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  gc_root_register(f->h, &f->root);
  gc_frame_push(f->d, &f->frame, f->local, 1);
  f->a = f->root = gc_alloc(f->d, 3, GC_TAG_SCAN);
  f->b = gc_alloc(f->d, 2, GC_TAG_SCAN);
  f->c = gc_alloc(f->d, 2, GC_TAG_SCAN);
  GC_FIELD(f->a, 0) = f->b;
  GC_FIELD(f->b, 0) = f->c;
  for (int i = 0; i < 200; i++) gc_alloc(f->d, 1 + i % 4, GC_TAG_SCAN); /* garbage */
  breaking_hook_set(f->h, &f->hook, GC_HOOK_MARK_DONE, NULL, NULL);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  gc_collect(f->d, GC_COLLECT_FULL); /* the garbage's slots on the free lists */
  CHECK_NO_REPORT(gc_verify_reports_of(f->v));
}

static void fixture_free(fixture *f) {
  gc_verify_uninstall(f->v);
  gc_frame_pop(f->d, &f->frame);
  gc_root_unregister(f->h, &f->root);
  gc_heap_destroy(f->h);
}

static int marking(gc_heap *h) { return gc_atomic_peek(&h->marking) != 0; }

/* Slices on d until the cycle's marking is over. */
static void finish_marking(gc_domain *d) {
  for (int i = 0; i < 100000 && marking(d->heap); i++) gc_collect(d, GC_COLLECT_SLICE);
  CHECK(!marking(d->heap));
}

static const char *const incremental = "marking=incremental,markslice=1,verify=satb";

/* Exactly one report, of `kind`, on `block`, at `point`; returns it (valid until fixture_free). */
static const gc_verify_report *only_one(fixture *f, gc_verify_kind kind, gc_value block,
                                        const char *point) {
  const gc_verify_reports *r = gc_verify_reports_of(f->v);
  CHECK_ONLY_KIND(r, kind);
  if (r->count == 0) return NULL;
  CHECK_EQ_U(r->count, 1);
  CHECK(r->items[0].block == block);
  CHECK(strcmp(r->items[0].point, point) == 0);
  if (strcmp(r->items[0].point, point) != 0) gc_verify_reports_print(r, stderr);
  return &r->items[0];
}

/* ---- Clean runs ---------------------------------------------------------------------------- */

static void ignore_finalizer(gc_heap *heap, gc_value block, void *user) {}

/* Several incremental cycles with everything the mutator may do mid-mark, every pass on. */
static void clean_incremental_run_reports_nothing(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,markslice=16,verify=all");
  gc_value keep = gc_alloc(f.d, 64, GC_TAG_SCAN);
  GC_FIELD(f.a, 2) = keep;
  for (int i = 0; i < 64; i++) {
    gc_value n = gc_alloc(f.d, 1 + i % 5, GC_TAG_SCAN);
    gc_store(f.d, keep, (size_t)i, n);
    if (i > 0) gc_store(f.d, n, 0, GC_FIELD(keep, i - 1));
  }
  for (int cycle = 0; cycle < 6; cycle++) {
    gc_collect(f.d, GC_COLLECT_START);
    CHECK(marking(f.h));
    for (int i = 0; i < 64; i++) {
      gc_value n = gc_alloc(f.d, 1 + (i + cycle) % 5, GC_TAG_SCAN);
      if (i % 3 == 0) gc_store(f.d, keep, (size_t)i, n);      /* drop the old one: darkened */
      if (i % 3 == 1) gc_store(f.d, n, 0, GC_FIELD(keep, i)); /* an old block into a new one */
      if (i % 7 == 0) gc_collect(f.d, GC_COLLECT_SLICE);
    }
    gc_value big = gc_alloc(f.d, 400, GC_TAG_SCAN);
    gc_store(f.d, keep, 63, big);
    gc_value pinned = GC_FIELD(keep, 5);
    gc_pin(f.h, pinned);
    gc_finalizer_set(f.h, GC_FIELD(keep, 7), ignore_finalizer, NULL);
    gc_store(f.d, keep, 7, 0); /* its block unreachable: queued at the end, kept this cycle */
    gc_collect(f.d, GC_COLLECT_SLICE);
    gc_unpin(f.h, pinned);
    f.local[0] = gc_alloc(f.d, 2, GC_TAG_SCAN);
    gc_store(f.d, f.b, 0, 0); /* c drops: floating garbage */
    gc_store(f.d, f.b, 0, f.c);
    finish_marking(f.d);
    gc_run_finalizers(f.d);
  }
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_verify_runs(f.v, GC_VERIFY_SATB) > 0);
  fixture_free(&f);
}

/* The stw mode: the pass runs, and finds nothing. */
static void clean_stw_cycles_report_nothing(void) {
  fixture f;
  fixture_build(&f, "marking=stw,verify=all");
  uint64_t before = gc_verify_runs(f.v, GC_VERIFY_SATB);
  for (int i = 0; i < 3; i++) gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK_EQ_U(gc_verify_runs(f.v, GC_VERIFY_SATB) - before, 6); /* mark-start, mark-done */
  fixture_free(&f);
}

/* ---- satb.unmarked ------------------------------------------------------------------------- */

/* a is darkened at the start (a root's block), b not yet: a plain GC_FIELD cuts the only path to
 * b, and no barrier darkens it. */
static void store_bypassing_the_barrier(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  GC_FIELD(f.a, 0) = 0;
  finish_marking(f.d);
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_UNMARKED, f.b, "mark-done");
  if (r != NULL) {
    CHECK(strstr(r->what, "field 0 of") != NULL);
    CHECK(strstr(r->what, "without darkening") != NULL);
    CHECK(strstr(r->origin, "global root") != NULL);
    CHECK_EQ_U(r->path_len, 1);
    if (r->path_len == 1) CHECK(r->path[0].block == f.a);
    gc_verify_reports_print(gc_verify_reports_of(f.v), stderr); /* quoted in the README */
  }
  fixture_free(&f);
}

/* The same through gc_store: the barrier darkens b, nothing to report. */
static void store_through_the_barrier_is_clean(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  gc_store(f.d, f.a, 0, 0);
  finish_marking(f.d);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* The path starts at a local root frame: x -> y, cut at x.0. */
static void path_from_a_frame_cut(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_value x = gc_alloc(f.d, 2, GC_TAG_SCAN), y = gc_alloc(f.d, 2, GC_TAG_SCAN);
  GC_FIELD(x, 0) = y;
  f.local[0] = x;
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_verify_clear(f.v);
  gc_collect(f.d, GC_COLLECT_START);
  GC_FIELD(x, 0) = 0;
  finish_marking(f.d);
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_UNMARKED, y, "mark-done");
  if (r != NULL) CHECK(strstr(r->origin, "local root frame") != NULL);
  fixture_free(&f);
}

/* A root's block not darkened at the start (its mark cleared right after): every edge of its
 * path still holds, and it is reported alone, its children being marked from the buffer. */
static void root_not_darkened(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  set_colour(f.a, f.h->colours.unmarked);
  finish_marking(f.d);
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_UNMARKED, f.a, "mark-done");
  if (r != NULL) CHECK(strstr(r->what, "every edge of its recorded path still holds") != NULL);
  fixture_free(&f);
}

static gc_value victim;
static void unmark_victim(gc_heap *h, void *arg) { set_colour(victim, h->colours.unmarked); }

/* A block reachable at the start, dropped through the barrier (darkened), then lost before
 * mark-done: only the snapshot still knows it was live. */
static void dropped_block_lost(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  gc_store(f.d, f.b, 0, 0);
  victim = f.c;
  f.hook.fn = unmark_victim;
  f.hook.armed = 1;
  finish_marking(f.d);
  CHECK_EQ_U(f.hook.fired, 1);
  only_one(&f, GC_VK_SATB_UNMARKED, f.c, "mark-done");
  fixture_free(&f);
}

/* In the stw mode the pass runs too: a block the mark missed is satb.unmarked there. */
static void stw_mark_missed_a_block(void) {
  fixture f;
  fixture_build(&f, "marking=stw,verify=satb");
  victim = f.b;
  f.hook.fn = unmark_victim;
  f.hook.armed = 1;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f.hook.fired, 1);
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_UNMARKED, f.b, "mark-done");
  if (r != NULL) CHECK(strstr(r->what, "every edge of its recorded path still holds") != NULL);
  fixture_free(&f);
}

/* ---- satb.born-white ----------------------------------------------------------------------- */

/* A block allocated mid-mark repainted UNMARKED: the next slice's end on its domain sees it. */
static void born_white_seen_at_a_slice(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  gc_value n = gc_alloc(f.d, 3, GC_TAG_SCAN);
  CHECK_EQ_U(colour_of(n), f.h->colours.marked);
  set_colour(n, f.h->colours.unmarked);
  f.local[0] = n; /* held by a root, which no one scans again this cycle */
  gc_collect(f.d, GC_COLLECT_SLICE);
  CHECK_EQ_U(gc_verify_reports_of(f.v)->count, 1);
  finish_marking(f.d); /* reported once: not again at mark-done */
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_BORN_WHITE, n, "mark-slice");
  if (r != NULL) CHECK(strstr(r->where, "domain 0") != NULL);
  fixture_free(&f);
}

static void large_born_white_seen_at_a_slice(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  gc_value n = gc_alloc(f.d, 500, GC_TAG_SCAN);
  set_colour(n, f.h->colours.unmarked);
  finish_marking(f.d);
  const gc_verify_report *r = only_one(&f, GC_VK_SATB_BORN_WHITE, n, "mark-slice");
  if (r != NULL) CHECK(strstr(r->where, "large block") != NULL);
  fixture_free(&f);
}

/* The slot comes from the free list the last sweep left (below the pool's frontier). */
static void free_slot_born_white_seen_at_a_slice(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  gc_value n = gc_alloc(f.d, 1, GC_TAG_SCAN); /* the fixture's garbage freed slots of 2 words */
  gc_pool *p = gc_pool_of_hp(gc_hp_val(n));
  CHECK(gc_hp_val(n) < p->frontier);
  set_colour(n, f.h->colours.unmarked);
  finish_marking(f.d);
  only_one(&f, GC_VK_SATB_BORN_WHITE, n, "mark-slice");
  fixture_free(&f);
}

/* Repainted after the last slice looked: only mark-done's pass over the heap sees it. */
static void born_white_seen_at_mark_done(void) {
  fixture f;
  fixture_build(&f, incremental);
  gc_collect(f.d, GC_COLLECT_START);
  victim = gc_alloc(f.d, 2, GC_TAG_SCAN);
  f.hook.fn = unmark_victim;
  f.hook.armed = 1;
  finish_marking(f.d);
  CHECK_EQ_U(f.hook.fired, 1);
  only_one(&f, GC_VK_SATB_BORN_WHITE, victim, "mark-done");
  fixture_free(&f);
}

int main(void) {
  RUN(clean_incremental_run_reports_nothing);
  RUN(clean_stw_cycles_report_nothing);
  RUN(store_bypassing_the_barrier);
  RUN(store_through_the_barrier_is_clean);
  RUN(path_from_a_frame_cut);
  RUN(root_not_darkened);
  RUN(dropped_block_lost);
  RUN(stw_mark_missed_a_block);
  RUN(born_white_seen_at_a_slice);
  RUN(large_born_white_seen_at_a_slice);
  RUN(free_slot_born_white_seen_at_a_slice);
  RUN(born_white_seen_at_mark_done);
  CHECK_MAIN_END();
}
