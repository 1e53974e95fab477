/* The space pass: a swept heap keeps no pool without a block and no slack below a frontier, and a
 * full collection leaves no free pool mapped; each deliberate breaking of that (a pool emptied and
 * kept, a free slot left under the frontier, free pools left after a full collection) is reported
 * as exactly its kind. */
#include <string.h>

#include "invariants/breaking.h"
#include "invariants/pass.h"

typedef breaking_holder fixture;

enum { HOLD = BREAKING_HOLD };

/* Scanned blocks of six classes; the heap is swept by a full collection, the space pass only. */
static gc_value holder_block(gc_domain *d, size_t i) { return gc_alloc(d, 1 + i % 6, GC_TAG_SCAN); }

static void fixture_build(fixture *f, const char *params) {
  breaking_holder_build(f, params != NULL ? params : "verify=space,mintrigger=8192,keep=8",
                        holder_block);
  gc_collect(f->d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f->v));
}

static void fixture_free(fixture *f) { breaking_holder_free(f); }

static void space_expect(fixture *f, gc_verify_kind kind) {
  breaking_expect_only(f->v, GC_VERIFY_SPACE, kind);
}

static void space_clean(fixture *f) { breaking_expect_clean(f->v, GC_VERIFY_SPACE); }

/* A pool of d's avail or full list with at least `blocks` blocks. */
static gc_pool *pool_with(gc_pool *const *lists, size_t blocks) {
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    for (gc_pool *p = lists[c]; p != NULL; p = p->next) {
      size_t slot = gc_wsize_of_class[c], n = 0;
      for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier; hp += slot) n += *hp != 0;
      if (n >= blocks) return p;
    }
  }
  return NULL;
}

/* The pool's state, to put back: its first `SAVED` slots' headers, frontier and free list. */
enum { SAVED = 512 };
typedef struct pool_saved {
  gc_pool *p;
  gc_header *frontier, *free_list;
  gc_header headers[SAVED];
} pool_saved;

static void pool_save(pool_saved *s, gc_pool *p) {
  s->p = p;
  s->frontier = p->frontier;
  s->free_list = p->free_list;
  size_t slot = gc_wsize_of_class[p->size_class], i = 0;
  for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier && i < SAVED; hp += slot)
    s->headers[i++] = *hp;
}

static void pool_restore(const pool_saved *s) {
  gc_pool *p = s->p;
  p->frontier = s->frontier;
  p->free_list = s->free_list;
  size_t slot = gc_wsize_of_class[p->size_class], i = 0;
  for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier && i < SAVED; hp += slot)
    *hp = s->headers[i++];
}

/* The broken pool reported as exactly `kind`; then, put back as `saved` had it, reported by
 * nothing: the breaking and nothing else made the report. */
static void expect_then_repair(fixture *f, const pool_saved *saved, gc_verify_kind kind) {
  space_expect(f, kind);
  pool_restore(saved);
  space_clean(f);
}

/* Every block of p freed (headers zeroed) and kept on its list. */
static void pool_empty(gc_pool *p) {
  size_t slot = gc_wsize_of_class[p->size_class];
  for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier; hp += slot) *hp = 0;
}

/* ---- Clean heaps ---------------------------------------------------------------------------- */

static void clean_heap_passes(void) {
  fixture f;
  fixture_build(&f, NULL);
  space_clean(&f);
  for (int i = 0; i < 6; i++) {
    for (size_t k = 0; k < 3000; k++) {
      gc_value v = gc_alloc(f.d, 1 + k % 40, GC_TAG_SCAN);
      if (k % 7 == 0) GC_FIELD(f.holder, (k * 13 + (size_t)i) % HOLD) = v;
    }
    gc_collect(f.d, i % 3 == 0   ? GC_COLLECT_FULL
                    : i % 3 == 1 ? GC_COLLECT_MAJOR
                                 : GC_COLLECT_SLICE);
  }
  CHECK(gc_verify_runs(f.v, GC_VERIFY_SPACE) >= 3);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

/* A full collection after the live set shrank: every emptied pool goes back to the OS, and the
 * pools left are at most one per live block of their class (INV-SPACE-1, INV-SPACE-2). */
static void full_collection_gives_pools_back(void) {
  fixture f;
  fixture_build(&f, NULL);
  for (size_t i = 0; i < HOLD; i += 2) GC_FIELD(f.holder, i) = 0;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.free_pools, 0);
  CHECK_EQ_U(s.os_pool_bytes, (uint64_t)s.pool_words * sizeof(gc_value));
  CHECK(s.pool_words / GC_POOL_WSIZE <= s.pool_live_blocks);
  fixture_free(&f);
}

/* ---- space.empty-pool ----------------------------------------------------------------------- */

/* A pool on an avail list whose blocks all died, kept as it was (frontier and all). */
static void emptied_pool_kept(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = pool_with(f.d->avail, 2);
  CHECK(p != NULL);
  if (p == NULL) return;
  pool_saved saved;
  pool_save(&saved, p);
  pool_empty(p);
  expect_then_repair(&f, &saved, GC_VK_SPACE_EMPTY_POOL);
  fixture_free(&f);
}

/* A pool swept to nothing, its frontier back at its first slot, kept on its list instead of
 * given back (what sweeping without release leaves). */
static void reset_pool_kept(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = pool_with(f.d->full, 1);
  if (p == NULL) p = pool_with(f.d->avail, 1);
  CHECK(p != NULL);
  if (p == NULL) return;
  pool_saved saved;
  pool_save(&saved, p);
  pool_empty(p);
  p->frontier = gc_pool_first_slot(p);
  p->free_list = NULL;
  expect_then_repair(&f, &saved, GC_VK_SPACE_EMPTY_POOL);
  fixture_free(&f);
}

/* An orphan pool that holds nothing: a domain terminated with a pool it emptied. */
static void empty_orphan_pool(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_domain *other = gc_domain_create(f.h);
  breaking_switch_domain(f.d, other);
  for (size_t i = 0; i < 500; i++) GC_FIELD(f.holder, i) = gc_alloc(other, 3, GC_TAG_SCAN);
  gc_enter_blocking(other);
  gc_leave_blocking(f.d);
  CHECK(gc_domain_terminate(other) == GC_OK);
  space_clean(&f);
  gc_pool *p = pool_with(f.h->orphans.avail, 1);
  if (p == NULL) p = pool_with(f.h->orphans.full, 1);
  CHECK(p != NULL);
  if (p == NULL) return;
  pool_saved saved;
  pool_save(&saved, p);
  pool_empty(p);
  expect_then_repair(&f, &saved, GC_VK_SPACE_EMPTY_POOL);
  fixture_free(&f);
}

/* ---- space.frontier-slack ------------------------------------------------------------------- */

/* The last block below the frontier freed, its slot left on the free list: the frontier should
 * have come down over it. */
static void free_slot_below_frontier(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = pool_with(f.d->avail, 3);
  CHECK(p != NULL);
  if (p == NULL) return;
  pool_saved saved;
  pool_save(&saved, p);
  size_t slot = gc_wsize_of_class[p->size_class];
  gc_header *top = p->frontier - slot;
  *top = 0; /* on no list: the pass looks at the frontier only */
  expect_then_repair(&f, &saved, GC_VK_SPACE_FRONTIER_SLACK);
  fixture_free(&f);
}

/* The frontier one slot too high over a free slot (a sweep that put the free tail on the free
 * list instead of behind the frontier). */
static void frontier_above_free_tail(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = pool_with(f.d->avail, 2);
  CHECK(p != NULL);
  if (p == NULL) return;
  size_t slot = gc_wsize_of_class[p->size_class];
  CHECK(p->frontier < p->end);
  pool_saved saved;
  pool_save(&saved, p);
  p->frontier[0] = 0; /* an unused slot, as a swept free slot would be */
  p->frontier += slot;
  expect_then_repair(&f, &saved, GC_VK_SPACE_FRONTIER_SLACK);
  fixture_free(&f);
}

/* Seen at a sweep end through the hook: the top block of a pool is freed right before the pass. */
static void free_top_slot(gc_heap *h, void *arg) {
  (void)arg;
  gc_pool *p = pool_with(h->main_domain->avail, 3);
  if (p == NULL) p = pool_with(h->main_domain->full, 3);
  if (p != NULL) p->frontier[-(ptrdiff_t)gc_wsize_of_class[p->size_class]] = 0;
}

static void frontier_slack_at_the_hook(void) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.h = breaking_heap("verify=space");
  f.d = gc_main_domain(f.h);
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, free_top_slot, NULL);
  f.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  gc_value keep[64];
  gc_frame frame;
  gc_frame_push(f.d, &frame, keep, 64);
  for (int i = 0; i < 64; i++) keep[i] = gc_alloc(f.d, 2, GC_TAG_SCAN);
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  gc_collect(f.d, GC_COLLECT_MAJOR); /* the first one's sweep ends here */
  CHECK_EQ_U(b.fired, 1);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_SPACE_FRONTIER_SLACK);
  gc_frame_pop(f.d, &frame);
  gc_verify_uninstall(f.v);
  gc_heap_destroy(f.h);
}

/* ---- space.free-pools ----------------------------------------------------------------------- */

/* A full collection whose end finds a free pool still counted (the list given back, the count
 * not): seen at the hook. */
static void count_a_free_pool(gc_heap *h, void *arg) {
  (void)arg;
  h->free_pool_count++;
}

static void free_pool_counted_after_full(void) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.h = breaking_heap("verify=space");
  f.d = gc_main_domain(f.h);
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, count_a_free_pool, NULL);
  f.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  for (int i = 0; i < 5000; i++) gc_alloc(f.d, 3, GC_TAG_SCAN);
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(b.fired, 1);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_SPACE_FREE_POOLS);
  f.h->free_pool_count--;
  gc_verify_uninstall(f.v);
  gc_heap_destroy(f.h);
}

/* Free pools left mapped when a full collection ends (what keeping `keep` of them would leave):
 * the pools a lazy sweep released, looked at as a full collection's end. */
static void free_pools_left_at_full_end(void) {
  fixture f;
  fixture_build(&f, NULL);
  for (size_t i = 0; i < HOLD; i++) GC_FIELD(f.holder, i) = 0;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  while (f.d->sweeping) gc_collect(f.d, GC_COLLECT_SLICE);
  CHECK(f.h->free_pools != NULL);
  space_clean(&f); /* between full collections free pools are allowed */
  f.h->full_release = 1;
  space_expect(&f, GC_VK_SPACE_FREE_POOLS);
  f.h->full_release = 0;
  space_clean(&f);
  fixture_free(&f);
}

/* A pool mapped that no owner and no free list holds, at a full collection's end. */
static void mapped_pool_unaccounted_after_full(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->mapped_pool_count++;
  f.h->full_release = 1;
  space_expect(&f, GC_VK_SPACE_FREE_POOLS);
  f.h->full_release = 0;
  f.h->mapped_pool_count--;
  space_clean(&f);
  fixture_free(&f);
}

/* ---- space.orphan-passed-over --------------------------------------------------------------- */

/* A second domain that allocates blocks of 3 fields, keeps every one (some pools end with free
 * slots) and terminates: its pools wait on the orphans' lists. Returns a class with an orphan
 * pool on the avail list, or GC_NUM_SIZECLASSES. */
static gc_sizeclass leave_orphans(fixture *f) {
  gc_domain *other = gc_domain_create(f->h);
  breaking_switch_domain(f->d, other);
  for (size_t i = 0; i < 700; i++) GC_FIELD(f->holder, i) = gc_alloc(other, 3, GC_TAG_SCAN);
  gc_enter_blocking(other);
  gc_leave_blocking(f->d);
  CHECK(gc_domain_terminate(other) == GC_OK);
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    if (f->h->orphans.avail[c] != NULL) return c;
  }
  return GC_NUM_SIZECLASSES;
}

/* A domain that needs a pool of the orphans' class adopts theirs: nothing taken fresh. */
static void orphan_adopted_first(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_sizeclass c = leave_orphans(&f);
  CHECK(c < GC_NUM_SIZECLASSES);
  if (c == GC_NUM_SIZECLASSES) return;
  gc_pool *orphan = f.h->orphans.avail[c];
  while (f.d->avail[c] != NULL) gc_alloc(f.d, 3, GC_TAG_SCAN); /* use up its own pools */
  gc_alloc(f.d, 3, GC_TAG_SCAN);
  CHECK(orphan->owner == f.d);
  CHECK(f.h->orphans.fresh_seen[c] < f.h->orphans.avail_since[c] || f.h->orphans.avail[c] == NULL);
  space_clean(&f);
  fixture_free(&f);
}

/* The record of a fresh pool taken by a domain that had seen the orphans' arrival. */
static void fresh_pool_recorded_after_orphaning(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_sizeclass c = leave_orphans(&f);
  CHECK(c < GC_NUM_SIZECLASSES);
  if (c == GC_NUM_SIZECLASSES) return;
  space_clean(&f);
  uint64_t saved = f.h->orphans.fresh_seen[c];
  f.h->orphans.fresh_seen[c] = f.h->orphans.avail_since[c];
  space_expect(&f, GC_VK_SPACE_ORPHAN_PASSED_OVER);
  f.h->orphans.fresh_seen[c] = saved;
  space_clean(&f);
  fixture_free(&f);
}

/* A domain that takes a fresh pool of the class without looking at the orphans at all (what an
 * allocation path that forgot gc_orphan_adopt_pool does), then gives it back. */
static void fresh_pool_taken_without_looking(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_sizeclass c = leave_orphans(&f);
  CHECK(c < GC_NUM_SIZECLASSES);
  if (c == GC_NUM_SIZECLASSES) return;
  gc_pool *p = gc_pool_acquire(f.h, c, UINT64_MAX);
  CHECK(p != NULL);
  if (p != NULL) gc_pool_release(f.h, p);
  space_expect(&f, GC_VK_SPACE_ORPHAN_PASSED_OVER);
  fixture_free(&f);
}

/* Seen at a sweep end: a domain looked after the orphaning, missed the pool, and took a fresh
 * one (a look at the wrong list). */
static void take_fresh_after_looking(gc_heap *h, void *arg) {
  gc_sizeclass c = *(gc_sizeclass *)arg;
  gc_pool *p = gc_pool_acquire(h, c, h->orphans.serial);
  if (p != NULL) gc_pool_release(h, p);
}

static void passed_over_at_the_hook(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_verify_uninstall(f.v);
  breaking_hook b;
  gc_sizeclass c = GC_NUM_SIZECLASSES;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, take_fresh_after_looking, &c);
  f.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  gc_collect(f.d, GC_COLLECT_MAJOR); /* a cycle whose sweep ends after the orphaning */
  c = leave_orphans(&f);
  CHECK(c < GC_NUM_SIZECLASSES);
  if (c == GC_NUM_SIZECLASSES) return;
  b.armed = 1;
  while (f.d->sweeping) gc_collect(f.d, GC_COLLECT_SLICE);
  CHECK_EQ_U(b.fired, 1);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_SPACE_ORPHAN_PASSED_OVER);
  fixture_free(&f);
}

int main(void) {
  RUN(clean_heap_passes);
  RUN(full_collection_gives_pools_back);
  RUN(emptied_pool_kept);
  RUN(reset_pool_kept);
  RUN(empty_orphan_pool);
  RUN(free_slot_below_frontier);
  RUN(frontier_above_free_tail);
  RUN(frontier_slack_at_the_hook);
  RUN(free_pool_counted_after_full);
  RUN(free_pools_left_at_full_end);
  RUN(mapped_pool_unaccounted_after_full);
  RUN(orphan_adopted_first);
  RUN(fresh_pool_recorded_after_orphaning);
  RUN(fresh_pool_taken_without_looking);
  RUN(passed_over_at_the_hook);
  CHECK_MAIN_END();
}
