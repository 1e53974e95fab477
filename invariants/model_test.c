/* The model oracle: a heap driven through the model passes every cycle; each change made behind
 * the model's back (or a collector that frees too much, too little, or finalizes twice) is
 * reported as exactly its kind. */
#include <string.h>

#include "invariants/breaking.h"
#include "invariants/model.h"

/* root 0 -> A (3 fields): [0] B, [1] 5, [2] C
 * B (2 fields): [0] R
 * C: custom, 2 data words
 * R: raw, 3 words
 * root 1 -> L (large, 200 fields): [7] B */
typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_model *m;
  gc_verifier *v;
  breaking_hook hook;
  gc_model_id a, b, c, r, l;
} fixture;

static void fixture_build(fixture *f, const char *params) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params != NULL ? params : "verify=model");
  f->d = gc_main_domain(f->h);
  breaking_hook_set(f->h, &f->hook, GC_HOOK_SWEPT, NULL, NULL);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  f->m = gc_model_create(f->h, 8);
  gc_verify_set_model(f->v, f->m);
  gc_model *m = f->m;
  f->a = gc_model_alloc(m, f->d, 3, GC_TAG_SCAN);
  gc_model_root_set(m, 0, f->a);
  f->b = gc_model_alloc(m, f->d, 2, GC_TAG_SCAN);
  CHECK(gc_model_store_ptr(m, f->a, 0, f->b));
  CHECK(gc_model_store_imm(m, f->a, 1, 5));
  f->c = gc_model_alloc_custom(m, f->d, 2);
  CHECK(gc_model_store_ptr(m, f->a, 2, f->c));
  CHECK(gc_model_store_raw(m, f->c, 2, 0xabcdef));
  f->r = gc_model_alloc(m, f->d, 3, GC_TAG_RAW);
  CHECK(gc_model_store_raw(m, f->r, 1, 12345));
  CHECK(gc_model_store_ptr(m, f->b, 0, f->r));
  f->l = gc_model_alloc(m, f->d, 200, GC_TAG_SCAN);
  gc_model_root_set(m, 1, f->l);
  CHECK(gc_model_store_ptr(m, f->l, 7, f->b));
  /* Garbage the model knows about: allocated, never rooted. */
  for (int i = 0; i < 200; i++) gc_model_alloc(m, f->d, 1 + i % 6, GC_TAG_SCAN);
  gc_collect(f->d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f->v));
}

static void fixture_free(fixture *f) {
  gc_model_destroy(f->m);
  gc_verify_uninstall(f->v);
  gc_heap_destroy(f->h);
}

static void collect_expect(fixture *f, gc_verify_kind kind) {
  gc_collect(f->d, GC_COLLECT_FULL);
  CHECK_ONLY_KIND(gc_verify_reports_of(f->v), kind);
}

/* ---- A clean heap, and misuse -------------------------------------------------------------- */

static void clean_heap_passes(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  CHECK_EQ_U(gc_model_block_count(m), 5);
  CHECK_EQ_U(gc_model_reachable_count(m), 5);
  /* Drop the custom block: freed, finalized once. Lazy sweeping, several cycles. */
  gc_value c_val = gc_model_value(m, f.c);
  CHECK(gc_model_store_null(m, f.a, 2));
  for (int i = 0; i < 5; i++) {
    gc_collect(f.d, GC_COLLECT_MAJOR);
    for (int k = 0; k < 300; k++) gc_model_alloc(m, f.d, 1 + k % 9, GC_TAG_SCAN);
  }
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_model_id_of(m, c_val) != f.c || !gc_model_is_live(m, f.c)); /* released */
  CHECK_EQ_U(gc_model_block_count(m), 4);
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.pool_live_blocks + s.large_blocks, 4);
  CHECK(gc_verify_runs(f.v, GC_VERIFY_MODEL) >= 3 * 7);
  /* Pinning and a root bound to a frame slot. */
  gc_value slot[1] = {0};
  gc_frame frame;
  gc_frame_push(f.d, &frame, slot, 1);
  CHECK(gc_model_root_bind(m, 2, &slot[0]));
  gc_model_id x = gc_model_alloc(m, f.d, 2, GC_TAG_SCAN);
  CHECK(gc_model_root_set(m, 2, x));
  gc_model_id pinned = gc_model_alloc(m, f.d, 1, GC_TAG_SCAN);
  CHECK(gc_model_pin(m, pinned));
  CHECK(gc_model_store_ptr(m, pinned, 0, x));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_model_unpin(m, pinned));
  CHECK(gc_model_root_bind(m, 2, NULL));
  gc_frame_pop(f.d, &frame);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_model_is_live(m, x));
  CHECK(!gc_model_is_live(m, pinned)); /* unpinned and unreachable: freed */
  fixture_free(&f);
}

static void misuse_changes_nothing(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  CHECK(!gc_model_store_raw(m, f.a, 0, 1));     /* raw word into a scanned block */
  CHECK(!gc_model_store_imm(m, f.r, 0, 1));     /* immediate into a raw block */
  CHECK(!gc_model_store_raw(m, f.c, 1, 1));     /* the custom block's model word */
  CHECK(!gc_model_store_ptr(m, f.a, 3, f.b));   /* field out of range */
  CHECK(!gc_model_store_ptr(m, f.a, 0, 12345)); /* no such object */
  CHECK(!gc_model_root_set(m, 8, f.a));         /* no such root */
  gc_model_id dropped = gc_model_alloc(m, f.d, 1, GC_TAG_SCAN);
  gc_collect(f.d, GC_COLLECT_FULL); /* unreachable: freed, id released */
  CHECK(!gc_model_is_live(m, dropped));
  CHECK(!gc_model_store_imm(m, dropped, 0, 1));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* ---- Breaking ------------------------------------------------------------------------------ */

/* A field changed behind the model's back. */
static void field_changed_behind_the_model(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(gc_model_value(f.m, f.a), 1) = gc_val_int(6);
  collect_expect(&f, GC_VK_MODEL_CONTENTS);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) {
    CHECK(r->items[0].block == gc_model_value(f.m, f.a));
    CHECK(strstr(r->items[0].what, "field 1") != NULL);
    CHECK(strstr(r->items[0].origin, "model root 0") != NULL);
  }
  GC_FIELD(gc_model_value(f.m, f.a), 1) = gc_val_int(5);
  fixture_free(&f);
}

/* A raw word changed: raw contents are compared too. */
static void raw_word_changed(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(gc_model_value(f.m, f.r), 1) = 54321;
  collect_expect(&f, GC_VK_MODEL_CONTENTS);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK_EQ_U(r->items[0].path_len, 2); /* root 0 -> A -> B -> R */
  fixture_free(&f);
}

/* A pointer field of a large scanned block (compared as a whole against its image first) changed
 * behind the model's back to another live block: the field is named. */
static void large_block_pointer_changed(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(gc_model_value(f.m, f.l), 150) = gc_model_value(f.m, f.a);
  collect_expect(&f, GC_VK_MODEL_CONTENTS);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) {
    CHECK(r->items[0].block == gc_model_value(f.m, f.l));
    CHECK(strstr(r->items[0].what, "field 150") != NULL);
  }
  GC_FIELD(gc_model_value(f.m, f.l), 150) = 0;
  gc_verify_clear(f.v);
  /* And the pointer the model stored, overwritten by a collector that "moved" it. */
  GC_FIELD(gc_model_value(f.m, f.l), 7) = gc_model_value(f.m, f.a);
  collect_expect(&f, GC_VK_MODEL_CONTENTS);
  r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].what, "field 7") != NULL);
  GC_FIELD(gc_model_value(f.m, f.l), 7) = gc_model_value(f.m, f.b);
  gc_verify_clear(f.v);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* An unreachable block kept alive by a root the model does not know. */
static void hidden_root_keeps_block_alive(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model_id d = gc_model_alloc(f.m, f.d, 1, GC_TAG_SCAN);
  static gc_value hidden;
  hidden = gc_model_value(f.m, d);
  gc_root_register(f.h, &hidden);
  collect_expect(&f, GC_VK_MODEL_NOT_FREED);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK(r->items[0].block == hidden);
  gc_root_unregister(f.h, &hidden);
  gc_verify_clear(f.v);
  gc_collect(f.d, GC_COLLECT_FULL); /* the hidden root gone, the block is freed */
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* A finalizer that runs twice on the same freed block (the second call made at GC_HOOK_SWEPT,
 * just before the model's check). */
static gc_model *twice_model;
static gc_value twice_block;
static void finalize_again(gc_heap *h, void *arg) {
  gc_model_note_finalized(twice_model, twice_block);
}

static void finalizer_run_twice(void) {
  fixture f;
  fixture_build(&f, NULL);
  twice_model = f.m;
  twice_block = gc_model_value(f.m, f.c);
  CHECK(gc_model_store_null(f.m, f.a, 2));
  f.hook.fn = finalize_again;
  f.hook.armed = 1;
  collect_expect(&f, GC_VK_MODEL_FINALIZER_COUNT);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].what, "ran 2 times") != NULL);
  fixture_free(&f);
}

/* A finalizer run on a block that is still alive. */
static void finalizer_on_live_block(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model_note_finalized(f.m, gc_model_value(f.m, f.c));
  collect_expect(&f, GC_VK_MODEL_FINALIZER_COUNT);
  fixture_free(&f);
}

/* The collector frees a block the model reaches: B is unmarked right after marking, so the
 * rotation makes it GARBAGE and the sweep frees it. */
static gc_value unmark_me;
static void unmark(gc_heap *h, void *arg) { set_colour(unmark_me, h->colours.unmarked); }

static void reachable_block_freed(void) {
  fixture f;
  fixture_build(&f, NULL);
  unmark_me = gc_model_value(f.m, f.b);
  f.hook.point = GC_HOOK_MARK_DONE;
  f.hook.fn = unmark;
  f.hook.armed = 1;
  collect_expect(&f, GC_VK_MODEL_DEAD);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  CHECK_EQ_U(r->count, 1); /* reported once, at "cycled"; not again at "swept" */
  if (r->count > 0) {
    CHECK(r->items[0].block == unmark_me);
    CHECK(strcmp(r->items[0].point, "cycled") == 0);
    CHECK(strstr(r->items[0].what, "GARBAGE") != NULL);
  }
  fixture_free(&f);
}

/* The heap's live block count off by one at the end of the sweep. */
static void bump_live(gc_heap *h, void *arg) { h->main_domain->stats.pool_live_blocks++; }

static void live_count_differs(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.hook.fn = bump_live;
  f.hook.armed = 1;
  collect_expect(&f, GC_VK_MODEL_LIVE_COUNT);
  f.d->stats.pool_live_blocks--;
  fixture_free(&f);
}

/* A root slot changed behind the model's back (to another live block, so nothing dies). */
static void root_slot_changed(void) {
  fixture f;
  fixture_build(&f, NULL);
  static gc_value slot;
  gc_root_register(f.h, &slot);
  CHECK(gc_model_root_bind(f.m, 0, &slot));
  CHECK(gc_model_store_ptr(f.m, f.l, 8, f.a)); /* A stays reachable through L */
  slot = gc_model_value(f.m, f.l);
  collect_expect(&f, GC_VK_MODEL_ROOT);
  slot = gc_model_value(f.m, f.a);
  CHECK(gc_model_root_bind(f.m, 0, NULL));
  gc_root_unregister(f.h, &slot);
  fixture_free(&f);
}

/* Roots bound to consecutive words are compared a run at a time: one changed in the middle of a
 * run is still named. */
static void root_in_a_run_changed(void) {
  fixture f;
  fixture_build(&f, NULL);
  static gc_value slots[3];
  gc_frame frame;
  gc_frame_push(f.d, &frame, slots, 3);
  for (size_t i = 0; i < 3; i++) CHECK(gc_model_root_bind(f.m, 4 + i, &slots[i]));
  CHECK(gc_model_root_set(f.m, 4, f.a));
  CHECK(gc_model_root_set(f.m, 5, f.b));
  CHECK(gc_model_root_set(f.m, 6, f.l));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  slots[1] = gc_model_value(f.m, f.r); /* another live block: nothing dies */
  collect_expect(&f, GC_VK_MODEL_ROOT);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].what, "model root 5") != NULL);
  slots[1] = gc_model_value(f.m, f.b);
  for (size_t i = 0; i < 3; i++) CHECK(gc_model_root_bind(f.m, 4 + i, NULL));
  gc_frame_pop(f.d, &frame);
  fixture_free(&f);
}

/* A model detached from one heap and attached to the next (what the fuzz target does between
 * inputs) is a fresh model: ids from 0, no root, and it checks the new heap as strictly. With
 * gc_model_reattach its roots stay bound. */
static void model_reused_for_another_heap(void) {
  gc_heap *h1 = breaking_heap("verify=model");
  gc_verifier *v1 = gc_verify_install(h1, GC_VERIFY_COLLECT);
  gc_model *m = gc_model_create(h1, 4);
  gc_verify_set_model(v1, m);
  static gc_value slot[1];
  gc_root_register(h1, &slot[0]);
  CHECK(gc_model_root_bind(m, 1, &slot[0]));
  gc_model_id first = gc_model_alloc(m, gc_main_domain(h1), 4, GC_TAG_SCAN);
  CHECK_EQ_U(first, 0);
  CHECK(gc_model_root_set(m, 1, first));
  for (int i = 0; i < 50; i++) gc_model_alloc(m, gc_main_domain(h1), 1 + i % 7, GC_TAG_SCAN);
  gc_collect(gc_main_domain(h1), GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(v1));
  gc_model_detach(m);
  gc_root_unregister(h1, &slot[0]);
  gc_verify_uninstall(v1);
  gc_heap_destroy(h1);

  for (int round = 0; round < 2; round++) {
    gc_heap *h2 = breaking_heap("verify=model");
    gc_domain *d2 = gc_main_domain(h2);
    gc_verifier *v2 = gc_verify_install(h2, GC_VERIFY_COLLECT);
    gc_root_register(h2, &slot[0]);
    CHECK(round == 0 ? gc_model_attach(m, h2) : gc_model_reattach(m, h2));
    gc_verify_set_model(v2, m);
    CHECK_EQ_U(gc_model_block_count(m), 0);
    CHECK(gc_model_root_get(m, 1) == GC_MODEL_NONE);
    if (round == 0) CHECK(gc_model_root_bind(m, 1, &slot[0])); /* attach unbound it */
    CHECK(slot[0] == 0); /* an empty root (reattach cleared the slot, bind copied NULL) */
    gc_model_id x = gc_model_alloc(m, d2, 3, GC_TAG_SCAN);
    CHECK_EQ_U(x, 0);
    CHECK(gc_model_root_set(m, 1, x));
    CHECK(slot[0] == gc_model_value(m, x)); /* bound to the driver's slot */
    gc_model_id y = gc_model_alloc(m, d2, 2, GC_TAG_RAW);
    CHECK(gc_model_store_ptr(m, x, 0, y));
    gc_model_id z = gc_model_alloc(m, d2, 2, GC_TAG_SCAN);
    CHECK(gc_model_store_ptr(m, x, 0, z)); /* y unreachable */
    CHECK(gc_model_store_ptr(m, z, 0, x)); /* x <-> z */
    gc_collect(d2, GC_COLLECT_FULL);
    CHECK_NO_REPORT(gc_verify_reports_of(v2));
    CHECK_EQ_U(gc_model_block_count(m), 2); /* y freed */
    GC_FIELD(gc_model_value(m, z), 1) = gc_val_int(1);
    gc_collect(d2, GC_COLLECT_FULL);
    CHECK_ONLY_KIND(gc_verify_reports_of(v2), GC_VK_MODEL_CONTENTS);
    GC_FIELD(gc_model_value(m, z), 1) = 0;
    gc_verify_clear(v2);
    slot[0] = gc_model_value(m, z); /* x stays alive through z */
    gc_collect(d2, GC_COLLECT_FULL);
    CHECK_ONLY_KIND(gc_verify_reports_of(v2), GC_VK_MODEL_ROOT);
    slot[0] = gc_model_value(m, x);
    gc_model_detach(m);
    gc_root_unregister(h2, &slot[0]);
    gc_verify_uninstall(v2);
    gc_heap_destroy(h2);
  }
  gc_model_destroy(m);
}

/* ---- Go-style finalizers ------------------------------------------------------------------- */

/* F (finalizer set) -> X. Dropped, F is queued and survives one cycle with X; its finalizer runs
 * once; the next cycle frees both. */
typedef struct fin_fixture {
  fixture f;
  gc_model_id fobj, x;
  gc_value fval;
} fin_fixture;

static void fin_build(fin_fixture *ff) {
  fixture_build(&ff->f, NULL);
  gc_model *m = ff->f.m;
  ff->fobj = gc_model_alloc(m, ff->f.d, 2, GC_TAG_SCAN);
  ff->x = gc_model_alloc(m, ff->f.d, 1, GC_TAG_RAW);
  CHECK(gc_model_store_ptr(m, ff->fobj, 0, ff->x));
  CHECK(gc_model_root_set(m, 3, ff->fobj));
  CHECK(gc_model_finalizer_set(m, ff->fobj));
  ff->fval = gc_model_value(m, ff->fobj);
  gc_collect(ff->f.d, GC_COLLECT_FULL);
  CHECK(gc_model_root_clear(m, 3)); /* unreachable from now on */
}

static void finalizer_queued_then_freed(void) {
  fin_fixture ff;
  fin_build(&ff);
  gc_model *m = ff.f.m;
  CHECK(!gc_model_finalizer_set(m, 9999));
  gc_collect(ff.f.d, GC_COLLECT_FULL); /* queued, survives, finalizer runs */
  gc_stats s;
  gc_get_stats(ff.f.h, &s);
  CHECK_EQ_U(s.finalizers_run, 1);
  CHECK(gc_model_is_live(m, ff.fobj) && gc_model_is_live(m, ff.x));
  CHECK(!gc_model_finalizer_clear(m, ff.fobj)); /* ran: nothing to clear */
  gc_collect(ff.f.d, GC_COLLECT_FULL);          /* now freed */
  CHECK(!gc_model_is_live(m, ff.fobj) || gc_model_value(m, ff.fobj) != ff.fval);
  CHECK_EQ_U(gc_model_block_count(m), 5);
  CHECK_NO_REPORT(gc_verify_reports_of(ff.f.v));
  /* Set and cleared again: an ordinary object, freed by the first cycle. */
  gc_model_id y = gc_model_alloc(m, ff.f.d, 1, GC_TAG_SCAN);
  CHECK(gc_model_finalizer_set(m, y));
  CHECK(gc_model_finalizer_clear(m, y));
  gc_collect(ff.f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(gc_model_block_count(m), 5);
  CHECK_NO_REPORT(gc_verify_reports_of(ff.f.v));
  fixture_free(&ff.f);
}

/* The collector runs one queued finalizer a second time (its record duplicated in the queue). */
static void go_finalizer_run_twice(void) {
  fin_fixture ff;
  fin_build(&ff);
  gc_heap *h = ff.f.h;
  gc_finalizer record = {0};
  for (size_t i = 0; i < h->finalizers.count; i++) {
    if (h->finalizers.items[i].block == ff.fval) record = h->finalizers.items[i];
  }
  CHECK(record.block == ff.fval);
  gc_collect(ff.f.d, GC_COLLECT_FULL); /* queued and run once */
  CHECK_NO_REPORT(gc_verify_reports_of(ff.f.v));
  h->finq.items[0] = record; /* the queue ran empty: put the record back */
  h->finq.count = 1;
  h->finq_head = 0;
  gc_run_finalizers(ff.f.d);
  collect_expect(&ff.f, GC_VK_MODEL_FINALIZER_COUNT);
  const gc_verify_reports *r = gc_verify_reports_of(ff.f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].what, "already run") != NULL);
  fixture_free(&ff.f);
}

/* The collector loses its queue: the finalizer never runs. */
static void drop_queue(gc_heap *h, void *arg) { h->finq.count = h->finq_head = 0; }

static void go_finalizer_never_run(void) {
  fin_fixture ff;
  fin_build(&ff);
  ff.f.hook.point = GC_HOOK_CYCLED;
  ff.f.hook.fn = drop_queue;
  ff.f.hook.armed = 1;
  gc_collect(ff.f.d, GC_COLLECT_FULL); /* queued, then lost */
  CHECK_NO_REPORT(gc_verify_reports_of(ff.f.v));
  collect_expect(&ff.f, GC_VK_MODEL_FINALIZER_COUNT); /* reported at the next mark */
  const gc_verify_reports *r = gc_verify_reports_of(ff.f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].what, "has not run") != NULL);
  fixture_free(&ff.f);
}

/* The collector loses the record of a set finalizer: the block is freed at once instead of
 * surviving its first unreachable cycle. */
static void drop_records(gc_heap *h, void *arg) { h->finalizers.count = 0; }

static void finalizer_record_lost(void) {
  fin_fixture ff;
  fin_build(&ff);
  gc_heap *h = ff.f.h;
  drop_records(h, NULL);
  collect_expect(&ff.f, GC_VK_MODEL_DEAD);
  const gc_verify_reports *r = gc_verify_reports_of(ff.f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].origin, "finalizer queued") != NULL);
  fixture_free(&ff.f);
}

/* ---- Conservative ranges and resurrecting finalizers ---------------------------------------- */

/* Words into a header, an interior byte, a last byte and a large block keep their blocks alive;
 * one past the end of a block (into its slot's wastage) and a small integer keep nothing. */
static uintptr_t cwords[6];

static void conservative_words_keep_what_they_fall_in(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  CHECK(gc_model_range_add(m, cwords, 6));
  gc_model_id w = gc_model_alloc(m, f.d, 16, GC_TAG_SCAN); /* 17 words in an 18-word slot */
  gc_model_id x = gc_model_alloc(m, f.d, 3, GC_TAG_RAW);
  gc_model_id y = gc_model_alloc(m, f.d, 4, GC_TAG_SCAN);
  CHECK(gc_model_store_ptr(m, y, 3, x));
  gc_model_range_store(m, 0, 0, gc_model_value(m, f.r) - sizeof(gc_value));         /* header */
  gc_model_range_store(m, 0, 1, gc_model_value(m, y) + 3);                          /* interior */
  gc_model_range_store(m, 0, 2, gc_model_value(m, f.c) + 3 * sizeof(gc_value) - 1); /* last byte */
  gc_model_range_store(m, 0, 3, gc_model_value(m, f.l) + 800);
  gc_model_range_store(m, 0, 4, gc_model_value(m, w) + 16 * sizeof(gc_value)); /* one past */
  gc_model_range_store(m, 0, 5, 255);
  gc_model_root_clear(m, 0);
  gc_model_root_clear(m, 1);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  /* R, C and L through their words, B through L's field 7, Y and X through Y's word; A (whose
   * root was cleared) and W are freed. */
  CHECK_EQ_U(gc_model_reachable_count(m), 6);
  CHECK(gc_model_is_live(m, f.l) && gc_model_is_live(m, x) && !gc_model_is_live(m, w) &&
        !gc_model_is_live(m, f.a));
  for (size_t i = 0; i < 6; i++) gc_model_range_store(m, 0, i, 0);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK_EQ_U(gc_model_reachable_count(m), 0);
  fixture_free(&f);
}

/* The collector stops seeing a range the model resolves: the block only it held is freed while
 * the model still reaches it. */
static void conservative_range_lost_by_the_collector(void) {
  fixture f;
  fixture_build(&f, NULL);
  CHECK(gc_model_range_add(f.m, cwords, 1));
  gc_model_range_store(f.m, 0, 0, gc_model_value(f.m, f.b) + 8);
  CHECK(gc_model_store_null(f.m, f.a, 0));
  CHECK(gc_model_store_null(f.m, f.l, 7));
  gc_conservative_remove(f.h, cwords); /* behind the model's back */
  collect_expect(&f, GC_VK_MODEL_DEAD);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) {
    CHECK(r->items[0].block == gc_model_value(f.m, f.b));
    CHECK(strstr(r->items[0].origin, "conservative range word") != NULL);
  }
  gc_conservative_add(f.h, cwords, sizeof cwords[0]); /* so detaching finds it */
  fixture_free(&f);
}

/* A conservative word the model does not know (the range registered with the heap only) keeps a
 * block the model says is garbage. */
static void conservative_word_unknown_to_the_model(void) {
  fixture f;
  fixture_build(&f, NULL);
  static uintptr_t hidden[1];
  hidden[0] = gc_model_value(f.m, f.b) + 8;
  gc_conservative_add(f.h, hidden, sizeof hidden);
  CHECK(gc_model_store_null(f.m, f.a, 0));
  CHECK(gc_model_store_null(f.m, f.l, 7));
  collect_expect(&f, GC_VK_MODEL_NOT_FREED);
  gc_conservative_remove(f.h, hidden);
  fixture_free(&f);
}

/* A Go-style finalizer that stores its block back into a root: the block is queued, survives,
 * the finalizer runs once and roots it again, it stays alive with its referents, and once the
 * root lets go a later cycle frees it. */
static void reviving_finalizer(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  CHECK(gc_model_finalizer_set_reviving(m, f.b, 3));
  CHECK(!gc_model_finalizer_set_reviving(m, f.a, 99)); /* no such root: refused */
  CHECK(gc_model_store_null(m, f.a, 0));
  CHECK(gc_model_store_null(m, f.l, 7));
  gc_collect(f.d, GC_COLLECT_FULL); /* B queued, its finalizer puts B in root 3 */
  gc_run_finalizers(f.d);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_model_root_get(m, 3) == f.b);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_model_is_live(m, f.b) && gc_model_is_live(m, f.r));
  gc_model_root_clear(m, 3);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(!gc_model_is_live(m, f.b) && !gc_model_is_live(m, f.r));
  fixture_free(&f);
}

/* ---- Finalizers that run the driver's code (gc_model_finalizer_set_calling) ---------------- */

typedef struct calling {
  fixture *f;
  int calls;
  int forget_running; /* breakage: the collector forgets the block whose finalizer runs */
  gc_model_id seen[4];
} calling;

/* A finalizer body: allocate, store into its own block, collect (the other queued finalizer is
 * still queued then), re-arm itself the first time. */
static void calling_body(void *user, gc_model_id obj, uint64_t tag) {
  calling *c = user;
  gc_model *m = c->f->m;
  CHECK(gc_model_fin_running(m) == obj && tag == 7);
  if (c->calls < 4) c->seen[c->calls] = obj;
  c->calls++;
  gc_model_id n = gc_model_alloc(m, c->f->d, 2, GC_TAG_SCAN);
  CHECK(gc_model_store_ptr(m, obj, 1, n));
  if (c->forget_running) c->f->h->fin_running = 0;
  gc_collect(c->f->d, GC_COLLECT_FULL);
  if (c->calls == 1) CHECK(gc_model_finalizer_set_calling(m, obj, 7)); /* re-armed */
  CHECK_EQ_U(gc_run_finalizers(c->f->d), 0); /* from a finalizer: nothing */
}

/* Two blocks with calling finalizers, dropped: the first one's body collects while the second is
 * queued, both stay alive with what the bodies stored, and the re-armed one, queued by the
 * second's collection, runs again before the queue is done; later cycles free both. */
static void calling_finalizer_collects_and_rearms(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  calling c = {.f = &f};
  gc_model_set_fin_callback(m, calling_body, &c);
  gc_model_id p = gc_model_alloc(m, f.d, 2, GC_TAG_SCAN), q = gc_model_alloc(m, f.d, 2, 0);
  CHECK(gc_model_finalizer_set_calling(m, p, 7) && gc_model_finalizer_set_calling(m, q, 7));
  CHECK(gc_model_fin_running(m) == GC_MODEL_NONE);
  /* p and q queued. p's body re-arms p and collects (q still queued, p running: both roots);
   * q's body collects, which queues p again (no longer running), and p runs again in the same
   * gc_run_finalizers, after q. */
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK_EQ_U(c.calls, 3);
  CHECK(c.seen[0] == p && c.seen[1] == q && c.seen[2] == p);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(!gc_model_is_live(m, p) && !gc_model_is_live(m, q));
  fixture_free(&f);
}

/* The collector forgets the block whose finalizer runs (not a root any more): the collection the
 * body starts frees it under its finalizer, which the model, holding it a root, reports. */
static void running_block_freed_under_its_finalizer(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_model *m = f.m;
  calling c = {.f = &f, .forget_running = 1};
  gc_model_set_fin_callback(m, calling_body, &c);
  gc_model_id p = gc_model_alloc(m, f.d, 2, GC_TAG_SCAN);
  CHECK(gc_model_finalizer_set_calling(m, p, 7));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_MODEL_DEAD);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  if (r->count > 0) CHECK(strstr(r->items[0].origin, "its finalizer running") != NULL);
  fixture_free(&f);
}

/* ---- The phases of a cycle: the snapshot at mark start ------------------------------------- */

/* Each runs in both marking modes. With marking=incremental, GC_COLLECT_START returns with the
 * mark under way, so what the test does next lands mid-mark; with marking=stw it is a whole cycle
 * and the same mutations land after it. What each test checks holds in both: a cycle keeps what
 * was reachable when it began and what was born while it marked, and the next frees it. */
static const char *const phase_params[] = {"verify=model,marking=stw,percent=off",
                                           "verify=model,marking=incremental,percent=off"};

/* Mark slices until the cycle marking now (if any) has rotated its colours. */
static void finish_cycle(fixture *f) {
  gc_stats s0, s;
  gc_get_stats(f->h, &s0);
  for (int i = 0; i < 100000; i++) {
    gc_get_stats(f->h, &s);
    if (s.cycles != s0.cycles || !f->h->marking) return;
    gc_collect(f->d, GC_COLLECT_SLICE);
  }
  CHECK(!"the cycle never ended");
}

/* What the cycle just ended kept: its block survived the rotation and the model agrees. */
static int kept_by_last_cycle(const fixture *f, gc_model_id obj) {
  gc_value v = gc_model_value(f->m, obj);
  return gc_model_is_live(f->m, obj) && v != 0 && gc_hd_val(v) != 0 &&
         colour_of(v) != f->h->colours.garbage;
}

/* X reachable when marking begins, dropped mid-mark: floating garbage. This cycle keeps it (the
 * model does not require it freed, and counts it at the sweep end), the next frees it. */
static void dropped_mid_mark_kept_one_cycle(void) {
  for (int mode = 0; mode < 2; mode++) {
    fixture f;
    fixture_build(&f, phase_params[mode]);
    gc_model *m = f.m;
    gc_model_id x = gc_model_alloc(m, f.d, 2, GC_TAG_SCAN);
    CHECK(gc_model_store_ptr(m, x, 0, f.b));
    gc_model_root_set(m, 2, x);
    gc_collect(f.d, GC_COLLECT_START);
    CHECK(f.h->marking == (uintptr_t)mode); /* incremental: under way */
    gc_model_root_clear(m, 2);
    CHECK(gc_model_store_null(m, f.a, 0)); /* B now held by L only */
    finish_cycle(&f);
    CHECK(mode == 0 || !gc_model_is_live(m, x) || kept_by_last_cycle(&f, x));
    if (mode == 1) CHECK(kept_by_last_cycle(&f, x));
    gc_value xv = gc_model_value(m, x);
    gc_collect(f.d, GC_COLLECT_FULL); /* the sweep end of that cycle, then one more */
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    CHECK(!gc_model_is_live(m, x) && gc_model_id_of(m, xv) != x);
    CHECK(gc_model_is_live(m, f.b));
    fixture_free(&f);
  }
}

/* Y allocated while the cycle marks and never stored anywhere: born MARKED, kept by this cycle,
 * freed by the next. */
static void born_while_marking_kept_one_cycle(void) {
  for (int mode = 0; mode < 2; mode++) {
    fixture f;
    fixture_build(&f, phase_params[mode]);
    gc_collect(f.d, GC_COLLECT_START);
    gc_model_id y = gc_model_alloc(f.m, f.d, 3, GC_TAG_SCAN);
    gc_model_id big = gc_model_alloc(f.m, f.d, 300, GC_TAG_SCAN);
    CHECK(gc_model_store_ptr(f.m, big, 299, y));
    finish_cycle(&f);
    if (mode == 1) CHECK(kept_by_last_cycle(&f, y) && kept_by_last_cycle(&f, big));
    gc_collect(f.d, GC_COLLECT_MAJOR); /* settles the first cycle at its sweep end */
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    CHECK(!gc_model_is_live(f.m, y) && !gc_model_is_live(f.m, big));
    fixture_free(&f);
  }
}

/* Z unreachable when marking begins must be freed by this cycle's sweep, even if nothing happens
 * meanwhile: a collector that keeps it (marked at mark-done, as a barrier that shaded a block
 * the snapshot never held would) is model.not-freed. */
static gc_value keep_me;
static void mark_it(gc_heap *h, void *arg) { set_colour(keep_me, h->colours.marked); }

static void unreachable_at_mark_start_freed(void) {
  for (int mode = 0; mode < 2; mode++) {
    fixture f;
    fixture_build(&f, phase_params[mode]);
    gc_model_id z = gc_model_alloc(f.m, f.d, 2, GC_TAG_SCAN);
    gc_model_id w = gc_model_alloc(f.m, f.d, 2, GC_TAG_SCAN);
    gc_model_root_set(f.m, 3, w);
    keep_me = gc_model_value(f.m, z);
    f.hook.point = GC_HOOK_MARK_DONE;
    f.hook.fn = mark_it;
    f.hook.armed = 1;
    gc_collect(f.d, GC_COLLECT_START);
    gc_model_root_clear(f.m, 3); /* W: floating garbage (incremental), no report */
    finish_cycle(&f);
    gc_collect(f.d, GC_COLLECT_FULL);
    const gc_verify_reports *r = gc_verify_reports_of(f.v);
    CHECK_ONLY_KIND(r, GC_VK_MODEL_NOT_FREED);
    CHECK(r->count >= 1 && r->items[0].block == keep_me);
    CHECK(r->count >= 1 && strstr(r->items[0].what, "marking began") != NULL);
    fixture_free(&f);
  }
}

/* A block born while marking that the collector frees anyway (unmarked at mark-done, as a
 * collector that allocated it white would): the model kept it, so the sweep's live count is one
 * short. Incremental only: in the stw mode nothing is born while marking. */
static void born_white_block_freed(void) {
  fixture f;
  fixture_build(&f, phase_params[1]);
  gc_collect(f.d, GC_COLLECT_START);
  gc_model_id y = gc_model_alloc(f.m, f.d, 3, GC_TAG_SCAN);
  unmark_me = gc_model_value(f.m, y);
  f.hook.point = GC_HOOK_MARK_DONE;
  f.hook.fn = unmark;
  f.hook.armed = 1;
  finish_cycle(&f);
  f.hook.armed = 0;
  collect_expect(&f, GC_VK_MODEL_LIVE_COUNT);
  fixture_free(&f);
}

/* A conservative word written mid-mark into a block unreachable at mark start: the termination
 * stop scans the ranges again and keeps it, and the model allows that. */
static uintptr_t phase_words[2];

static void conservative_word_mid_mark_rescues(void) {
  for (int mode = 0; mode < 2; mode++) {
    fixture f;
    fixture_build(&f, phase_params[mode]);
    memset(phase_words, 0, sizeof phase_words);
    CHECK(gc_model_range_add(f.m, phase_words, 2));
    gc_model_id v = gc_model_alloc(f.m, f.d, 4, GC_TAG_SCAN);
    gc_model_id child = gc_model_alloc(f.m, f.d, 1, GC_TAG_RAW);
    CHECK(gc_model_store_ptr(f.m, v, 2, child));
    /* (stw: the word is written before the cycle, which keeps V through it as well) */
    if (mode == 1) gc_collect(f.d, GC_COLLECT_START);
    gc_model_range_store(f.m, 0, 1, gc_model_value(f.m, v) + 5); /* interior */
    finish_cycle(&f);
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    CHECK(gc_model_is_live(f.m, v) && gc_model_is_live(f.m, child));
    gc_model_range_store(f.m, 0, 1, 0);
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    CHECK(!gc_model_is_live(f.m, v) && !gc_model_is_live(f.m, child));
    fixture_free(&f);
  }
}

/* Finalizers follow the snapshot: F1, unreachable when marking begins, is queued by this cycle;
 * F2, reachable then and dropped mid-mark, is kept (MARKED) and queued by the next. Each
 * finalizer counts its runs (tag 1: F1, tag 2: F2). */
static unsigned phase_fin_runs[3];
static void count_fin_run(void *user, gc_model_id obj, uint64_t tag) {
  (void)user;
  (void)obj;
  phase_fin_runs[tag]++;
}

static void finalizers_queued_by_the_snapshot(void) {
  for (int mode = 0; mode < 2; mode++) {
    fixture f;
    fixture_build(&f, phase_params[mode]);
    memset(phase_fin_runs, 0, sizeof phase_fin_runs);
    gc_model_set_fin_callback(f.m, count_fin_run, NULL);
    gc_model_id f1 = gc_model_alloc(f.m, f.d, 1, GC_TAG_SCAN);
    gc_model_id f2 = gc_model_alloc(f.m, f.d, 1, GC_TAG_SCAN);
    CHECK(gc_model_finalizer_set_calling(f.m, f1, 1) && gc_model_finalizer_set_calling(f.m, f2, 2));
    gc_model_root_set(f.m, 4, f2);
    gc_collect(f.d, GC_COLLECT_START);
    gc_model_root_clear(f.m, 4);
    finish_cycle(&f);
    gc_run_finalizers(f.d);
    CHECK(phase_fin_runs[1] == 1 && phase_fin_runs[2] == 0);
    gc_collect(f.d, GC_COLLECT_FULL);
    gc_run_finalizers(f.d);
    CHECK(phase_fin_runs[1] == 1 && phase_fin_runs[2] == 1);
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    CHECK(!gc_model_is_live(f.m, f1) && !gc_model_is_live(f.m, f2));
    fixture_free(&f);
  }
}

int main(void) {
  RUN(clean_heap_passes);
  RUN(misuse_changes_nothing);
  RUN(field_changed_behind_the_model);
  RUN(raw_word_changed);
  RUN(hidden_root_keeps_block_alive);
  RUN(finalizer_run_twice);
  RUN(finalizer_on_live_block);
  RUN(reachable_block_freed);
  RUN(live_count_differs);
  RUN(root_slot_changed);
  RUN(large_block_pointer_changed);
  RUN(root_in_a_run_changed);
  RUN(model_reused_for_another_heap);
  RUN(finalizer_queued_then_freed);
  RUN(go_finalizer_run_twice);
  RUN(go_finalizer_never_run);
  RUN(finalizer_record_lost);
  RUN(conservative_words_keep_what_they_fall_in);
  RUN(conservative_range_lost_by_the_collector);
  RUN(conservative_word_unknown_to_the_model);
  RUN(reviving_finalizer);
  RUN(calling_finalizer_collects_and_rearms);
  RUN(running_block_freed_under_its_finalizer);
  RUN(dropped_mid_mark_kept_one_cycle);
  RUN(born_while_marking_kept_one_cycle);
  RUN(unreachable_at_mark_start_freed);
  RUN(born_white_block_freed);
  RUN(conservative_word_mid_mark_rescues);
  RUN(finalizers_queued_by_the_snapshot);
  CHECK_MAIN_END();
}
