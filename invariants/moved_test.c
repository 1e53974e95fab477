/* The moved pass: a compaction as it should be is clean, and each kind is reported alone when a
 * test breaks the heap at the compaction's end the way a broken compactor would (a reference not
 * forwarded, a forwarding header left, a block that had to stay moved, a class not compacted). */
#include <string.h>

#include "gc/check.h"
#include "gc/compact.h"
#include "gc/pool.h"
#include "gc/sizeclass.h"
#include "invariants/breaking.h"

/* A hook that runs `start` at GC_HOOK_COMPACT_START and `done` at GC_HOOK_COMPACTED, before the
 * verifier's passes (install it first: gc_verify_install chains it). */
typedef struct moved_fixture moved_fixture;
typedef void (*moved_fn)(moved_fixture *f);

enum { N = 10 };

struct moved_fixture {
  gc_heap *h;
  gc_domain *d;
  gc_verifier *v;
  moved_fn start, done;
  gc_value keep[N]; /* one survivor per sparse pool of one class, in a frame */
  gc_value old[N];  /* where they were before the compaction */
  gc_value holder;  /* a global root: a block with a field per survivor */
  gc_value stale;   /* a second global root, for the tests */
  gc_value extra;   /* a third, for what a test needs */
  gc_frame frame;
  gc_pool *hidden[2]; /* not_compacted: pools hidden from the compactor */
  gc_sizeclass hidden_class;
};

static void hook(gc_heap *heap, gc_hook_point point, void *user) {
  (void)heap;
  moved_fixture *f = user;
  if (point == GC_HOOK_COMPACT_START && f->start != NULL) f->start(f);
  if (point == GC_HOOK_COMPACTED && f->done != NULL) f->done(f);
}

static void open_fixture(moved_fixture *f) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap("marking=stw,verify=moved");
  f->d = gc_main_domain(f->h);
  gc_set_hook(f->h, hook, f);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  gc_frame_push(f->d, &f->frame, f->keep, N);
  gc_root_register(f->h, &f->holder);
  gc_root_register(f->h, &f->stale);
  gc_root_register(f->h, &f->extra);
  f->holder = gc_alloc(f->d, N, GC_TAG_SCAN);
  size_t per_pool = gc_slots_of_class(gc_class_of_whsize[3]);
  for (size_t i = 0; i < N * per_pool; i++) {
    gc_value b = gc_alloc(f->d, 2, GC_TAG_SCAN);
    GC_FIELD(b, 0) = gc_val_int((intptr_t)i);
    if (i % per_pool == per_pool / 2) f->keep[i / per_pool] = b;
  }
  for (int i = 0; i < N; i++) GC_FIELD(f->holder, i) = f->keep[i];
  gc_collect(f->d, GC_COLLECT_FULL);
  memcpy(f->old, f->keep, sizeof f->old);
}

/* The compaction, and exactly `kind` reported (GC_VK_COUNT: nothing). */
static void compact_expect(moved_fixture *f, gc_verify_kind kind) {
  gc_verify_clear(f->v);
  CHECK(gc_compact(f->d) == GC_OK);
  const gc_verify_reports *r = gc_verify_reports_of(f->v);
  if (kind == GC_VK_COUNT) {
    CHECK_NO_REPORT(r);
  } else {
    CHECK_ONLY_KIND(r, kind);
  }
}

static void close_fixture(moved_fixture *f) {
  gc_verify_uninstall(f->v);
  gc_frame_pop(f->d, &f->frame);
  gc_root_unregister(f->h, &f->holder);
  gc_root_unregister(f->h, &f->stale);
  gc_root_unregister(f->h, &f->extra);
  gc_heap_destroy(f->h);
}

/* The first survivor the compaction moved (keep[] is forwarded by then), or -1. */
static int moved_one(moved_fixture *f) {
  for (int i = 0; i < N; i++) {
    if (f->keep[i] != f->old[i]) return i;
  }
  return -1;
}

/* ---- Clean ----------------------------------------------------------------------------------- */

static void compaction_is_clean(void) {
  moved_fixture f;
  open_fixture(&f);
  gc_pin(f.h, f.keep[3]);
  compact_expect(&f, GC_VK_COUNT);
  CHECK(moved_one(&f) >= 0);
  CHECK(f.keep[3] == f.old[3]);
  CHECK_EQ_U(gc_verify_runs(f.v, GC_VERIFY_MOVED), 2);
  breaking_expect_clean(f.v, GC_VERIFY_MOVED); /* directly, after it */
  gc_unpin(f.h, f.keep[3]);
  close_fixture(&f);
}

/* ---- moved.stale-reference: a reference not forwarded ---------------------------------------- */

static void root_not_forwarded_done(moved_fixture *f) {
  int i = moved_one(f);
  CHECK(i >= 0);
  if (i >= 0) f->stale = f->old[i]; /* a global root the compactor skipped */
}
static void root_not_forwarded(void) {
  moved_fixture f;
  open_fixture(&f);
  f.done = root_not_forwarded_done;
  compact_expect(&f, GC_VK_MOVED_STALE_REFERENCE);
  f.stale = 0;
  close_fixture(&f);
}

static void field_not_forwarded_done(moved_fixture *f) {
  int i = moved_one(f);
  if (i >= 0) GC_FIELD(f->holder, i) = f->old[i]; /* a block's field the compactor skipped */
}
static void field_not_forwarded(void) {
  moved_fixture f;
  open_fixture(&f);
  f.done = field_not_forwarded_done;
  compact_expect(&f, GC_VK_MOVED_STALE_REFERENCE);
  for (int i = 0; i < N; i++) GC_FIELD(f.holder, i) = f.keep[i];
  close_fixture(&f);
}

static void frame_slot_not_forwarded_done(moved_fixture *f) {
  int i = moved_one(f);
  if (i >= 0) f->keep[i] = f->old[i]; /* a domain's frame the compactor skipped */
}
static void frame_slot_not_forwarded(void) {
  moved_fixture f;
  open_fixture(&f);
  f.done = frame_slot_not_forwarded_done;
  compact_expect(&f, GC_VK_MOVED_STALE_REFERENCE);
  for (int i = 0; i < N; i++) f.keep[i] = GC_FIELD(f.holder, i);
  close_fixture(&f);
}

static void weak_slot_not_forwarded_done(moved_fixture *f) {
  int i = moved_one(f);
  if (i >= 0) GC_FIELD(f->extra, GC_WEAK_TARGET) = f->old[i]; /* a weak slot skipped */
}
static void weak_slot_not_forwarded(void) {
  moved_fixture f;
  open_fixture(&f);
  f.extra = gc_weak_alloc(f.d, f.keep[0], 0);
  f.done = weak_slot_not_forwarded_done;
  compact_expect(&f, GC_VK_MOVED_STALE_REFERENCE);
  GC_FIELD(f.extra, GC_WEAK_TARGET) = 0;
  close_fixture(&f);
}

/* ---- moved.forwarding-left: a forwarding header in a pool an owner holds --------------------- */

static void forwarding_in_free_slot_done(moved_fixture *f) {
  gc_pool *p = gc_pool_of_hp(gc_hp_val(f->keep[0]));
  CHECK(p->free_list != NULL);
  if (p->free_list != NULL) p->free_list[0] = GC_HD_FORWARD;
}
static void forwarding_in_free_slot(void) {
  moved_fixture f;
  open_fixture(&f);
  f.done = forwarding_in_free_slot_done;
  compact_expect(&f, GC_VK_MOVED_FORWARDING_LEFT);
  gc_pool_of_hp(gc_hp_val(f.keep[0]))->free_list[0] = 0;
  close_fixture(&f);
}

/* A block nothing refers to (allocated after the last mark, so the sweep keeps it), its slot
 * left with a forwarding header as if it had moved and its pool stayed. */
static gc_value unreferenced;
static void forwarding_in_kept_block_done(moved_fixture *f) {
  (void)f;
  gc_hp_val(unreferenced)[0] = GC_HD_FORWARD;
}
static void forwarding_in_kept_block(void) {
  moved_fixture f;
  open_fixture(&f);
  unreferenced = gc_alloc(f.d, 7, GC_TAG_RAW); /* a class with one pool: it stays */
  f.done = forwarding_in_kept_block_done;
  compact_expect(&f, GC_VK_MOVED_FORWARDING_LEFT);
  gc_hp_val(unreferenced)[0] = gc_hd_make(7, f.h->colours.unmarked, GC_TAG_RAW);
  close_fixture(&f);
}

static void forwarding_in_large_block(void) {
  moved_fixture f;
  open_fixture(&f);
  unreferenced = gc_alloc(f.d, 300, GC_TAG_RAW);
  f.done = forwarding_in_kept_block_done;
  compact_expect(&f, GC_VK_MOVED_FORWARDING_LEFT);
  gc_hp_val(unreferenced)[0] = gc_hd_make(300, f.h->colours.unmarked, GC_TAG_RAW);
  close_fixture(&f);
}

/* ---- moved.pinned-moved: a block that had to stay is gone from its place -------------------- */

static gc_header saved_header;
static void pinned_slot_emptied_done(moved_fixture *f) {
  saved_header = gc_hp_val(f->keep[0])[0];
  gc_hp_val(f->keep[0])[0] = 0; /* moved out, its slot freed */
}
static void restore_keep0(moved_fixture *f) { gc_hp_val(f->keep[0])[0] = saved_header; }

static void pinned_slot_emptied(void) {
  moved_fixture f;
  open_fixture(&f);
  gc_pin(f.h, f.keep[0]);
  f.done = pinned_slot_emptied_done;
  compact_expect(&f, GC_VK_MOVED_PINNED_MOVED);
  restore_keep0(&f);
  gc_unpin(f.h, f.keep[0]);
  close_fixture(&f);
}

static void pinned_slot_reused_done(moved_fixture *f) {
  saved_header = gc_hp_val(f->keep[0])[0];
  gc_hp_val(f->keep[0])[0] = gc_hd_make(1, f->h->colours.unmarked, GC_TAG_RAW); /* another */
}
static void pinned_slot_reused(void) {
  moved_fixture f;
  open_fixture(&f);
  gc_pin(f.h, f.keep[0]);
  f.done = pinned_slot_reused_done;
  compact_expect(&f, GC_VK_MOVED_PINNED_MOVED);
  restore_keep0(&f);
  gc_unpin(f.h, f.keep[0]);
  close_fixture(&f);
}

static void conservative_block_moved(void) {
  moved_fixture f;
  open_fixture(&f);
  uintptr_t range[1] = {(uintptr_t)f.keep[0] + 8}; /* an interior word */
  gc_conservative_add(f.h, range, sizeof range);
  f.done = pinned_slot_emptied_done;
  compact_expect(&f, GC_VK_MOVED_PINNED_MOVED);
  restore_keep0(&f);
  gc_conservative_remove(f.h, range);
  close_fixture(&f);
}

/* ---- moved.not-compacted: a class the compactor skipped -------------------------------------- */

/* Hide the class of the survivors from the compactor at its start, give it back at its end. */
static void hide_start(moved_fixture *f) {
  f->hidden_class = gc_pool_of_hp(gc_hp_val(f->keep[0]))->size_class;
  f->hidden[0] = f->d->avail[f->hidden_class];
  f->hidden[1] = f->d->full[f->hidden_class];
  f->d->avail[f->hidden_class] = f->d->full[f->hidden_class] = NULL;
}
static void hide_done(moved_fixture *f) {
  f->d->avail[f->hidden_class] = f->hidden[0];
  f->d->full[f->hidden_class] = f->hidden[1];
}

static void class_skipped(void) {
  moved_fixture f;
  open_fixture(&f);
  f.start = hide_start;
  f.done = hide_done;
  compact_expect(&f, GC_VK_MOVED_NOT_COMPACTED);
  CHECK(moved_one(&f) < 0);
  close_fixture(&f);
}

static void class_skipped_with_a_pin(void) {
  moved_fixture f;
  open_fixture(&f);
  gc_pin(f.h, f.keep[4]); /* one pool must stay: still N - 1 too many */
  f.start = hide_start;
  f.done = hide_done;
  compact_expect(&f, GC_VK_MOVED_NOT_COMPACTED);
  gc_unpin(f.h, f.keep[4]);
  close_fixture(&f);
}

/* Half the class compacted: the compactor stopped after evacuating a pool or two. */
static void class_half_compacted_start(moved_fixture *f) {
  hide_start(f);
  /* Give the compactor back the three sparsest... here, three pools: it compacts those only. */
  gc_pool *p = f->hidden[0];
  gc_pool *rest = p->next->next->next;
  p->next->next->next = NULL;
  f->d->avail[f->hidden_class] = p;
  f->hidden[0] = rest;
}
static void class_half_compacted_done(moved_fixture *f) {
  gc_pool **tail = &f->d->avail[f->hidden_class];
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = f->hidden[0];
}
static void class_half_compacted(void) {
  moved_fixture f;
  open_fixture(&f);
  f.start = class_half_compacted_start;
  f.done = class_half_compacted_done;
  compact_expect(&f, GC_VK_MOVED_NOT_COMPACTED);
  close_fixture(&f);
}

int main(void) {
  RUN(compaction_is_clean);
  RUN(root_not_forwarded);
  RUN(field_not_forwarded);
  RUN(frame_slot_not_forwarded);
  RUN(weak_slot_not_forwarded);
  RUN(forwarding_in_free_slot);
  RUN(forwarding_in_kept_block);
  RUN(forwarding_in_large_block);
  RUN(pinned_slot_emptied);
  RUN(pinned_slot_reused);
  RUN(conservative_block_moved);
  RUN(class_skipped);
  RUN(class_skipped_with_a_pin);
  RUN(class_half_compacted);
  CHECK_MAIN_END();
}
