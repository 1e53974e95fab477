/* The swept pass: a swept heap passes; each deliberate corruption of the pools, free lists, large
 * blocks or statistics is reported as exactly its kind. */
#include <string.h>

#include "gc/poolset.h"
#include "gc/workbuf.h"
#include "invariants/breaking.h"
#include "invariants/pass.h"

/* A heap with holes: a large holder block keeps every other block of several size classes, a
 * large block, and custom blocks alive; class 0 is allocated densely so some pools are full. */
typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_value holder;
} fixture;

enum { HOLD = 6000 };

static void fixture_build(fixture *f, const char *params) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  gc_root_register(f->h, &f->holder);
  f->holder = gc_alloc(f->d, HOLD, GC_TAG_SCAN);
  for (size_t i = 0; i < HOLD; i++) {
    size_t wsize = i < 3000 ? 1 : 1 + i % 7;
    gc_value v = i % 97 == 0 ? gc_alloc(f->d, 150, GC_TAG_RAW) : gc_alloc(f->d, wsize, GC_TAG_SCAN);
    if (i < 3000 || i % 2 == 0) GC_FIELD(f->holder, i) = v; /* the rest is garbage */
  }
  gc_collect(f->d, GC_COLLECT_FULL);
}

static void fixture_free(fixture *f) {
  gc_root_unregister(f->h, &f->holder);
  gc_heap_destroy(f->h);
}

static size_t free_count(gc_pool *p) {
  size_t n = 0;
  for (gc_header *e = p->free_list; e != NULL; e = (gc_header *)e[1]) n++;
  return n;
}

/* An avail pool with at least `entries` free slots. */
static gc_pool *avail_pool(fixture *f, size_t entries) {
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    for (gc_pool *p = f->d->avail[c]; p != NULL; p = p->next) {
      if (free_count(p) >= entries) return p;
    }
  }
  return NULL;
}

static gc_pool *full_pool(fixture *f) {
  for (gc_sizeclass c = 0; c < GC_NUM_SIZECLASSES; c++) {
    if (f->d->full[c] != NULL) return f->d->full[c];
  }
  return NULL;
}

/* A live block in a pool (not the holder, which is large). */
static gc_value pool_block(fixture *f, size_t i) { return GC_FIELD(f->holder, i); }

/* Unlink p from *list; returns 1 if it was there. */
static int unlink_pool(gc_pool **list, gc_pool *p) {
  for (gc_pool **at = list; *at != NULL; at = &(*at)->next) {
    if (*at == p) {
      *at = p->next;
      p->next = NULL;
      return 1;
    }
  }
  return 0;
}

static void push_pool(gc_pool **list, gc_pool *p) {
  p->next = *list;
  *list = p;
}

/* Run swept directly and check it reported only `kind`. */
static void swept_expect(fixture *f, gc_verify_kind kind) {
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  size_t n = gc_verify_swept(f->h, &out);
  CHECK_ONLY_KIND(&out, kind);
  CHECK_EQ_U(n, out.count);
  gc_verify_reports_free(&out);
}

static void swept_clean(fixture *f) {
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_swept(f->h, &out), 0);
  CHECK_NO_REPORT(&out);
  gc_verify_reports_free(&out);
}

/* ---- The tests ----------------------------------------------------------------------------- */

static void clean_heap_passes(void) {
  fixture f;
  fixture_build(&f, NULL);
  CHECK(full_pool(&f) != NULL);
  CHECK(avail_pool(&f, 4) != NULL);
  swept_clean(&f);
  fixture_free(&f);
}

/* INV-STATS-1, each statistic in turn off by one. */
static void statistic_off_by_one(void) {
  fixture f;
  fixture_build(&f, NULL);
  size_t *fields[] = {&f.d->stats.pool_words,       &f.d->stats.pool_live_words,
                      &f.d->stats.pool_live_blocks, &f.d->stats.pool_frag_words,
                      &f.d->stats.large_words,      &f.d->stats.large_blocks};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    (*fields[i])++;
    swept_expect(&f, GC_VK_SWEPT_STAT_MISMATCH);
    (*fields[i])--;
  }
  f.d->stats.large_max_words = f.d->stats.large_words - 1; /* a maximum below its value */
  swept_expect(&f, GC_VK_SWEPT_STAT_MISMATCH);
  f.d->stats.large_max_words = f.d->stats.large_words;
  swept_clean(&f);
  fixture_free(&f);
}

/* INV-POOL-1: a free-list link into another pool. */
static void freelist_link_into_another_pool(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 2);
  gc_pool *q = gc_pool_of_hp((gc_header *)pool_block(&f, 0) - 1);
  if (q == p) q = gc_pool_of_hp((gc_header *)pool_block(&f, 4000) - 1);
  CHECK(p != NULL && q != p);
  gc_header *e = p->free_list;
  gc_header saved = e[1];
  e[1] = (gc_header)gc_pool_first_slot(q);
  swept_expect(&f, GC_VK_SWEPT_FREELIST_FOREIGN);
  e[1] = saved;
  swept_clean(&f);
  fixture_free(&f);
}

static void freelist_cycle(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 3);
  gc_header *e1 = p->free_list, *e2 = (gc_header *)e1[1];
  gc_header saved = e2[1];
  e2[1] = (gc_header)e1;
  swept_expect(&f, GC_VK_SWEPT_FREELIST_CYCLE);
  e2[1] = saved;
  fixture_free(&f);
}

static void freelist_misaligned(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 3);
  gc_header *e1 = p->free_list;
  gc_header saved = e1[1];
  e1[1] = (gc_header)(e1 + 1); /* inside the pool, one word into a slot */
  swept_expect(&f, GC_VK_SWEPT_FREELIST_MISALIGNED);
  e1[1] = saved;
  fixture_free(&f);
}

/* A free slot dropped from the list: it can never be allocated again. */
static void freelist_missing_slot(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 3);
  gc_header *e1 = p->free_list, *e2 = (gc_header *)e1[1];
  e1[1] = e2[1];
  swept_expect(&f, GC_VK_SWEPT_FREELIST_COUNT);
  e1[1] = (gc_header)e2;
  fixture_free(&f);
}

static void freelist_out_of_order(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 4);
  gc_header *e1 = p->free_list, *e2 = (gc_header *)e1[1], *e3 = (gc_header *)e2[1];
  gc_header e4 = e3[1];
  e1[1] = (gc_header)e3; /* e1 -> e3 -> e2 -> e4 */
  e3[1] = (gc_header)e2;
  e2[1] = e4;
  swept_expect(&f, GC_VK_SWEPT_FREELIST_ORDER);
  e1[1] = (gc_header)e2;
  e2[1] = (gc_header)e3;
  e3[1] = e4;
  swept_clean(&f);
  fixture_free(&f);
}

/* A block on the free list (its statistics kept consistent, so only the list is wrong). */
static void freelist_entry_holds_a_block(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 2);
  gc_header *e = p->free_list;
  size_t slot_whsize = gc_wsize_of_class[p->size_class];
  e[0] = gc_hd_make(1, f.h->colours.unmarked, GC_TAG_RAW);
  f.d->stats.pool_live_blocks++;
  f.d->stats.pool_live_words += 2;
  f.d->stats.pool_frag_words += slot_whsize - 2;
  swept_expect(&f, GC_VK_SWEPT_FREELIST_LIVE);
  e[0] = 0;
  f.d->stats.pool_live_blocks--;
  f.d->stats.pool_live_words -= 2;
  f.d->stats.pool_frag_words -= slot_whsize - 2;
  swept_clean(&f);
  fixture_free(&f);
}

/* INV-COL-1: sweeping finished but a GARBAGE block is still there, in a pool or large. */
static void garbage_left_after_sweeping(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_value v = pool_block(&f, 10);
  set_colour(v, f.h->colours.garbage);
  swept_expect(&f, GC_VK_SWEPT_GARBAGE_LEFT);
  set_colour(v, f.h->colours.unmarked);
  set_colour(f.holder, f.h->colours.garbage);
  swept_expect(&f, GC_VK_SWEPT_GARBAGE_LEFT);
  set_colour(f.holder, f.h->colours.unmarked);
  swept_clean(&f);
  fixture_free(&f);
}

static void marked_outside_marking(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_value v = pool_block(&f, 4002);
  set_colour(v, f.h->colours.marked);
  swept_expect(&f, GC_VK_SWEPT_BAD_COLOUR);
  set_colour(v, f.h->colours.unmarked);
  fixture_free(&f);
}

/* INV-POOL-2: a pool with free slots on the full list, and a full pool on the avail list. */
static void full_pool_with_free_slot(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  gc_sizeclass c = p->size_class;
  CHECK(unlink_pool(&f.d->avail[c], p));
  push_pool(&f.d->full[c], p);
  swept_expect(&f, GC_VK_SWEPT_FULL_POOL_HAS_FREE_SLOT);
  CHECK(unlink_pool(&f.d->full[c], p));
  push_pool(&f.d->avail[c], p);
  swept_clean(&f);
  fixture_free(&f);
}

static void avail_pool_without_free_slot(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = full_pool(&f);
  CHECK(p != NULL);
  gc_sizeclass c = p->size_class;
  CHECK(unlink_pool(&f.d->full[c], p));
  push_pool(&f.d->avail[c], p);
  swept_expect(&f, GC_VK_SWEPT_AVAIL_POOL_FULL);
  CHECK(unlink_pool(&f.d->avail[c], p));
  push_pool(&f.d->full[c], p);
  fixture_free(&f);
}

/* A frontier off a slot boundary, and one past the pool's last slot. */
static void frontier_out_of_place(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  CHECK(p != NULL);
  gc_header *saved = p->frontier;
  p->frontier = saved - 1;
  swept_expect(&f, GC_VK_SWEPT_BAD_FRONTIER);
  p->frontier = p->end + gc_wsize_of_class[p->size_class];
  swept_expect(&f, GC_VK_SWEPT_BAD_FRONTIER);
  p->frontier = saved;
  fixture_free(&f);
}

/* A work buffer dropped from the empty list, as a list push that never moves its head does. */
static void work_buffer_lost(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_mark_work *w = &f.h->work;
  gc_workbuf *lost = w->empty;
  CHECK(lost != NULL);
  w->empty = lost->next;
  swept_expect(&f, GC_VK_SWEPT_WORKBUF_LOST);
  w->empty = lost;
  /* One left on the full list after a mark: also not where INV-WB-1 says. */
  w->empty = lost->next;
  w->empty_count--;
  lost->next = NULL;
  w->full = lost;
  swept_expect(&f, GC_VK_SWEPT_WORKBUF_LOST);
  w->full = NULL;
  lost->next = w->empty;
  w->empty = lost;
  w->empty_count++;
  fixture_free(&f);
}

static void unswept_pool_left(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  gc_sizeclass c = p->size_class;
  CHECK(unlink_pool(&f.d->avail[c], p));
  push_pool(&f.d->unswept_avail[c], p);
  swept_expect(&f, GC_VK_SWEPT_UNSWEPT_LEFT);
  CHECK(unlink_pool(&f.d->unswept_avail[c], p));
  push_pool(&f.d->avail[c], p);
  fixture_free(&f);
}

/* The same pool on two lists: p stays on its avail list and is also linked at the end of the
 * full list of its class (the walk meets it a second time there). */
static void pool_on_two_lists(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  gc_pool **tail = &f.d->full[p->size_class];
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = p;
  swept_expect(&f, GC_VK_SWEPT_BAD_POOL);
  *tail = NULL;
  swept_clean(&f);
  fixture_free(&f);
}

static void pool_with_wrong_owner(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  p->owner = NULL;
  swept_expect(&f, GC_VK_SWEPT_BAD_POOL);
  p->owner = f.d;
  fixture_free(&f);
}

static void mapped_pool_count(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->mapped_pool_count++;
  swept_expect(&f, GC_VK_SWEPT_POOL_COUNT);
  f.h->mapped_pool_count--;
  fixture_free(&f);
}

/* A block whose tag is neither scanned, raw nor custom. */
static void block_with_invalid_tag(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_value v = pool_block(&f, 7);
  gc_header *hp = (gc_header *)v - 1;
  gc_header saved = *hp;
  *hp = (saved & ~GC_HD_TAG_MASK) | 251;
  swept_expect(&f, GC_VK_SWEPT_BAD_HEADER);
  *hp = saved;
  fixture_free(&f);
}

/* INV-INDEX-1: an owned pool missing from the collector's pool set. */
static void pool_missing_from_pool_set(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_pool *p = avail_pool(&f, 1);
  gc_pool_set_remove(f.h, p);
  swept_expect(&f, GC_VK_SWEPT_POOL_SET);
  CHECK(gc_pool_set_insert(f.h, p));
  swept_clean(&f);
  fixture_free(&f);
}

/* A header bigger than its slot, with the statistics adjusted so that only the tiling is wrong:
 * the block would overlap the next slot. */
static void block_overlaps_next_slot(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_value v = pool_block(&f, 3); /* wsize 1 in a 2-word slot */
  gc_header *hp = (gc_header *)v - 1;
  gc_header saved = *hp;
  *hp = gc_hd_make(5, gc_hd_colour(saved), GC_TAG_SCAN);
  f.d->stats.pool_live_words += 4;
  swept_expect(&f, GC_VK_SWEPT_TILING);
  *hp = saved;
  f.d->stats.pool_live_words -= 4;
  swept_clean(&f);
  fixture_free(&f);
}

/* Through the hook, with lazy sweeping in small slices: the pass runs once per cycle, when the
 * last slice finishes; the corruption is made at that point, before the pass. */
static void bump_live_blocks(gc_heap *h, void *arg) { h->main_domain->stats.pool_live_blocks++; }

static void through_the_hook(void) {
  fixture f;
  fixture_build(&f, "verify=swept,sweep=64");
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, bump_live_blocks, NULL);
  gc_verifier *v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  for (int round = 0; round < 3; round++) {
    gc_collect(f.d, GC_COLLECT_MAJOR);
    for (int i = 0; i < 100000 && f.d->sweeping; i++) {
      gc_alloc(f.d, 1 + i % 9, GC_TAG_SCAN);
      if (i % 4 == 0) gc_collect(f.d, GC_COLLECT_SLICE);
    }
    CHECK(!f.d->sweeping);
  }
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_SWEPT), 3);
  CHECK_NO_REPORT(gc_verify_reports_of(v));
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_ONLY_KIND(gc_verify_reports_of(v), GC_VK_SWEPT_STAT_MISMATCH);
  const gc_verify_reports *r = gc_verify_reports_of(v);
  if (r->count > 0) {
    CHECK(strcmp(r->items[0].point, "swept") == 0);
    CHECK(strstr(r->items[0].what, "pool_live_blocks") != NULL);
  }
  f.d->stats.pool_live_blocks--;
  gc_verify_uninstall(v);
  fixture_free(&f);
}

typedef struct limited_run {
  gc_verifier *v;
  gc_verify_reports out;
  size_t found;
} limited_run;

static void run_swept_now(void *arg) {
  limited_run *l = arg;
  l->found = gc_verify_pass_now(l->v, GC_VERIFY_SWEPT, &l->out);
}

/* Out of memory for the map of pools met (its buckets cannot grow past 16, so it holds 8 of the
 * heap's many pools): the pass says it checked part of the heap only, and reports nothing it did
 * not see, no statistic against a partial recount in particular. With memory back, the same
 * scratch checks the whole heap again, and a real mismatch is still found. */
static void out_of_memory_reports_nothing_false(void) {
  fixture f;
  fixture_build(&f, "verify=none");
  limited_run l;
  l.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  gc_verify_scratch *scratch = gc_verify_scratch_create();
  CHECK(l.v != NULL && scratch != NULL);
  gc_verify_use_scratch(l.v, scratch);
  gc_verify_reports_init(&l.out);
  scratch->seen.max_buckets = 16;
  const char *said = breaking_stderr_of(run_swept_now, &l);
  CHECK_EQ_U(l.found, 0);
  CHECK_NO_REPORT(&l.out);
  CHECK(strstr(said, "gcfuzz verify: out of memory during the swept pass") != NULL);
  fprintf(stderr, "  %s", said);

  scratch->seen.max_buckets = 0;
  said = breaking_stderr_of(run_swept_now, &l);
  CHECK_EQ_U(l.found, 0);
  CHECK(strstr(said, "out of memory") == NULL);
  f.d->stats.pool_live_blocks++;
  run_swept_now(&l);
  CHECK_ONLY_KIND(&l.out, GC_VK_SWEPT_STAT_MISMATCH);
  f.d->stats.pool_live_blocks--;

  gc_verify_reports_free(&l.out);
  gc_verify_uninstall(l.v);
  gc_verify_scratch_destroy(scratch);
  fixture_free(&f);
}

int main(void) {
  RUN(clean_heap_passes);
  RUN(statistic_off_by_one);
  RUN(freelist_link_into_another_pool);
  RUN(freelist_cycle);
  RUN(freelist_misaligned);
  RUN(freelist_missing_slot);
  RUN(freelist_out_of_order);
  RUN(freelist_entry_holds_a_block);
  RUN(garbage_left_after_sweeping);
  RUN(marked_outside_marking);
  RUN(full_pool_with_free_slot);
  RUN(avail_pool_without_free_slot);
  RUN(unswept_pool_left);
  RUN(work_buffer_lost);
  RUN(frontier_out_of_place);
  RUN(pool_on_two_lists);
  RUN(pool_with_wrong_owner);
  RUN(mapped_pool_count);
  RUN(block_with_invalid_tag);
  RUN(pool_missing_from_pool_set);
  RUN(block_overlaps_next_slot);
  RUN(through_the_hook);
  RUN(out_of_memory_reports_nothing_false);
  CHECK_MAIN_END();
}
