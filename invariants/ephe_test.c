/* The ephe pass: quiet on heaps whose ephemerons and weak references keep their rules, in both
 * marking modes and with a domain gone; and each of its kinds reported, alone, by three heaps
 * broken on purpose. The walks' ephemeron rule (checkmark over a datum kept or lost) is here
 * too. */
#include "invariants/breaking.h"

/* Roots the tests share, registered per heap. */
enum { ROOTS = 6 };
static gc_value root[ROOTS];

typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_verifier *v;
  breaking_hook hook;
} fixture;

static gc_value leaf(gc_domain *d, intptr_t n) {
  gc_value v = gc_alloc(d, 1, GC_TAG_SCAN);
  GC_FIELD(v, 0) = gc_val_int(n);
  return v;
}

/* A heap running `params` (its verify mask names the passes the hooks run), with its hook set
 * before the verifier so a breaking runs before the passes look; roots 0..ROOTS-1: root[0] a
 * key, root[1] an ephemeron keyed by it (its datum held by nothing else), root[2] a weak
 * reference to the key, root[3] another block. */
static void build(fixture *f, const char *params) {
  memset(root, 0, sizeof root);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  breaking_hook_set(f->h, &f->hook, GC_HOOK_MARK_DONE, NULL, NULL);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  for (int i = 0; i < ROOTS; i++) gc_root_register(f->h, &root[i]);
  root[0] = leaf(f->d, 1);
  root[3] = leaf(f->d, 2);
  root[1] = gc_ephemeron_alloc(f->d, root[0], root[3], 1);
  root[3] = leaf(f->d, 3);
  root[2] = gc_weak_alloc(f->d, root[0], 1);
}

static void unbuild(fixture *f) {
  for (int i = 0; i < ROOTS; i++) gc_root_unregister(f->h, &root[i]);
  gc_verify_uninstall(f->v);
  gc_heap_destroy(f->h);
}

static gc_value datum_of(gc_value e) { return GC_FIELD(e, GC_EPHE_DATUM); }

/* Break at the next mark-done point, collect, and expect only `kind` from the passes there. */
static void break_at_mark_done(fixture *f, breaking_fn fn, void *arg, gc_verify_kind kind) {
  f->hook.fn = fn;
  f->hook.arg = arg;
  f->hook.armed = 1;
  gc_collect(f->d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f->hook.fired, 1);
  CHECK_ONLY_KIND(gc_verify_reports_of(f->v), kind);
}

/* ---- Quiet on a heap that keeps the rules --------------------------------------------------- */

static void quiet_in_both_modes(void) {
  static const char *const params[] = {"verify=all,marking=stw",
                                       "verify=all,marking=incremental,markslice=1"};
  for (int m = 0; m < 2; m++) {
    fixture f;
    build(&f, params[m]);
    gc_collect(f.d, GC_COLLECT_FULL);
    root[4] = gc_ephemeron_alloc(f.d, root[1], root[3], 0); /* keyed by an ephemeron */
    gc_collect(f.d, GC_COLLECT_START);
    root[5] = gc_weak_get(f.d, root[2]);
    gc_ephemeron_set_datum(f.d, root[1], root[5]);
    gc_collect(f.d, GC_COLLECT_FULL);
    root[0] = root[5] = 0; /* the key dies: everything through it is cleared */
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK(gc_weak_get(f.d, root[2]) == 0 && gc_ephemeron_datum(f.d, root[1]) == 0);
    CHECK(gc_ephemeron_datum(f.d, root[4]) == root[3]);
    CHECK_NO_REPORT(gc_verify_reports_of(f.v));
    breaking_expect_clean(f.v, GC_VERIFY_EPHE);
    unbuild(&f);
  }
}

/* ---- ephe.datum-unmarked -------------------------------------------------------------------- */

static void repaint_unmarked(gc_heap *heap, void *arg) {
  set_colour(*(gc_value *)arg, heap->colours.unmarked);
}

/* The datum of an ephemeron whose key is rooted, left UNMARKED. */
static void datum_unmarked_rooted_key(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  gc_value datum = datum_of(root[1]);
  break_at_mark_done(&f, repaint_unmarked, &datum, GC_VK_EPHE_DATUM_UNMARKED);
  unbuild(&f);
}

/* An immediate key never dies: its datum must be MARKED. */
static void datum_unmarked_immediate_key(void) {
  fixture f;
  build(&f, "verify=ephe,marking=incremental");
  root[4] = leaf(f.d, 4);
  root[5] = gc_ephemeron_alloc(f.d, gc_val_int(7), root[4], 0);
  root[4] = 0;
  gc_value datum = datum_of(root[5]);
  break_at_mark_done(&f, repaint_unmarked, &datum, GC_VK_EPHE_DATUM_UNMARKED);
  unbuild(&f);
}

/* A key reached only through another ephemeron's datum: the second datum left UNMARKED (a
 * fixpoint that stops after one round). */
static void datum_unmarked_second_round(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  root[4] = leaf(f.d, 4);
  root[5] = gc_ephemeron_alloc(f.d, datum_of(root[1]), root[4], 0);
  root[4] = 0;
  gc_value datum = datum_of(root[5]);
  break_at_mark_done(&f, repaint_unmarked, &datum, GC_VK_EPHE_DATUM_UNMARKED);
  unbuild(&f);
}

/* ---- ephe.uncleaned ------------------------------------------------------------------------- */

typedef struct refill {
  gc_value block;
  size_t field;
  gc_value value;
} refill;

/* Put back into a slot what the clean phase emptied (or name a dead block). */
static void refill_slot(gc_heap *heap, void *arg) {
  (void)heap;
  refill *r = arg;
  GC_FIELD(r->block, r->field) = r->value;
}

/* A weak slot whose target died, not cleared. */
static void uncleaned_weak(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  refill r = {root[2], GC_WEAK_TARGET, root[3]};
  root[3] = 0; /* dead at the next mark */
  break_at_mark_done(&f, refill_slot, &r, GC_VK_EPHE_UNCLEANED);
  unbuild(&f);
}

/* An ephemeron whose key died, its key left in place. */
static void uncleaned_key(void) {
  fixture f;
  build(&f, "verify=ephe,marking=incremental");
  refill r = {root[1], GC_EPHE_KEY, root[0]};
  root[0] = 0;
  root[2] = 0; /* the weak reference to the key too: this breaking is the ephemeron's alone */
  break_at_mark_done(&f, refill_slot, &r, GC_VK_EPHE_UNCLEANED);
  unbuild(&f);
}

/* An ephemeron without a key whose datum is dead, the datum left in place. */
static void uncleaned_keyless_datum(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  root[4] = gc_ephemeron_alloc(f.d, 0, root[3], 0);
  refill r = {root[4], GC_EPHE_DATUM, root[3]};
  root[3] = 0;
  break_at_mark_done(&f, refill_slot, &r, GC_VK_EPHE_UNCLEANED);
  unbuild(&f);
}

/* ---- ephe.dangling -------------------------------------------------------------------------- */

/* A slot naming a swept (free) slot: what a clean phase that ran after the sweep leaves. */
static void dangling_freed_slot(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  gc_value dead = root[3];
  root[3] = 0;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(gc_hd_val(dead), 0); /* freed, its slot not reused yet */
  GC_FIELD(root[2], GC_WEAK_TARGET) = dead;
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_DANGLING);
  unbuild(&f);
}

/* A key pointing inside a block, not at its start. */
static void dangling_interior_key(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  gc_collect(f.d, GC_COLLECT_FULL);
  root[4] = gc_alloc(f.d, 4, GC_TAG_SCAN);
  GC_FIELD(root[1], GC_EPHE_KEY) = root[4] + 2 * sizeof(gc_value);
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_DANGLING);
  unbuild(&f);
}

/* A datum pointing outside the heap. */
static gc_value outside[2];

static void dangling_outside_datum(void) {
  fixture f;
  build(&f, "verify=ephe,marking=incremental");
  gc_collect(f.d, GC_COLLECT_FULL);
  GC_FIELD(root[1], GC_EPHE_DATUM) = (gc_value)&outside[1];
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_DANGLING);
  unbuild(&f);
}

/* ---- ephe.unlisted -------------------------------------------------------------------------- */

/* A live weak reference taken off its list (counts kept right): the clean phase would miss it. */
static void unlisted_dropped(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_ephe_list *l = &f.d->ephe;
  CHECK(l->head == root[2]); /* newest first */
  l->head = GC_FIELD(root[2], GC_WEAK_LINK);
  l->weak_refs--;
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_UNLISTED);
  unbuild(&f);
}

/* A list whose count is wrong. */
static void unlisted_count(void) {
  fixture f;
  build(&f, "verify=ephe,marking=incremental");
  gc_collect(f.d, GC_COLLECT_FULL);
  f.d->ephe.ephemerons++;
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_UNLISTED);
  unbuild(&f);
}

/* A link to a block that is no ephemeron (and the entries after it off the list). */
static void unlisted_bad_link(void) {
  fixture f;
  build(&f, "verify=ephe,marking=stw");
  gc_collect(f.d, GC_COLLECT_FULL);
  GC_FIELD(root[2], GC_WEAK_LINK) = root[3];
  breaking_expect_only(f.v, GC_VERIFY_EPHE, GC_VK_EPHE_UNLISTED);
  unbuild(&f);
}

/* ---- The walks' ephemeron rule -------------------------------------------------------------- */

/* A datum marked though its key is dead is kept without a root: checkmark.over-retained. */
static void mark_marked(gc_heap *heap, void *arg) {
  set_colour(*(gc_value *)arg, heap->colours.marked);
}

static void checkmark_over_retained_datum(void) {
  fixture f;
  build(&f, "verify=checkmark,marking=stw");
  gc_value datum = datum_of(root[1]);
  root[0] = root[2] = 0; /* the key dies: the datum is garbage, unless marked anyway */
  break_at_mark_done(&f, mark_marked, &datum, GC_VK_CHECKMARK_OVER_RETAINED);
  unbuild(&f);
}

/* A datum left UNMARKED while its key lives is reachable: checkmark.unmarked. */
static void checkmark_datum_lost(void) {
  fixture f;
  build(&f, "verify=checkmark,marking=stw");
  gc_value datum = datum_of(root[1]);
  break_at_mark_done(&f, repaint_unmarked, &datum, GC_VK_CHECKMARK_UNMARKED);
  unbuild(&f);
}

int main(void) {
  RUN(quiet_in_both_modes);
  RUN(datum_unmarked_rooted_key);
  RUN(datum_unmarked_immediate_key);
  RUN(datum_unmarked_second_round);
  RUN(uncleaned_weak);
  RUN(uncleaned_key);
  RUN(uncleaned_keyless_datum);
  RUN(dangling_freed_slot);
  RUN(dangling_interior_key);
  RUN(dangling_outside_datum);
  RUN(unlisted_dropped);
  RUN(unlisted_count);
  RUN(unlisted_bad_link);
  RUN(checkmark_over_retained_datum);
  RUN(checkmark_datum_lost);
  CHECK_MAIN_END();
}
