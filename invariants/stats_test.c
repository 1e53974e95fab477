/* The stats pass: a heap's public statistics pass, through cycles, domains that terminate and
 * finalizers; each deliberate corruption of a figure gc_get_stats reports, of what it is summed
 * or counted from, or of the pause ring is reported as exactly its kind. */
#include <string.h>

#include "invariants/breaking.h"
#include "invariants/pass.h"

/* A heap with the stats pass only, small and large blocks kept by a holder, some garbage, and a
 * few cycles behind it, so the verifier has a sweep end recorded. */
typedef breaking_holder fixture;

enum { HOLD = BREAKING_HOLD };

/* Small blocks, and every 101st a large one. */
static gc_value holder_block(gc_domain *d, size_t i) {
  return i % 101 == 0 ? gc_alloc(d, 200, GC_TAG_RAW) : gc_alloc(d, 1 + i % 9, 0);
}

static void fixture_build(fixture *f, const char *params) {
  breaking_holder_build(f, params != NULL ? params : "verify=stats,mintrigger=8192", holder_block);
  gc_collect(f->d, GC_COLLECT_FULL);
  gc_collect(f->d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f->v));
}

static void fixture_free(fixture *f) { breaking_holder_free(f); }

static void stats_expect(fixture *f, gc_verify_kind kind) {
  breaking_expect_only(f->v, GC_VERIFY_STATS, kind);
}

static void stats_clean(fixture *f) { breaking_expect_clean(f->v, GC_VERIFY_STATS); }

/* A second domain that allocates `n` blocks (kept by the holder from `at` on, every other one)
 * and terminates: its pools become orphans. */
static void domain_that_terminates(fixture *f, size_t at, size_t n) {
  gc_domain *other = gc_domain_create(f->h);
  CHECK(other != NULL);
  breaking_switch_domain(f->d, other);
  for (size_t i = 0; i < n; i++) {
    gc_value v = gc_alloc(other, 1 + i % 5, GC_TAG_SCAN);
    if (i % 2 == 0 && at + i / 2 < HOLD) GC_FIELD(f->holder, at + i / 2) = v;
  }
  gc_enter_blocking(other);
  gc_leave_blocking(f->d);
  CHECK(gc_domain_terminate(other) == GC_OK);
}

/* ---- Clean heaps ---------------------------------------------------------------------------- */

static void clean_heap_passes(void) {
  fixture f;
  fixture_build(&f, NULL);
  stats_clean(&f);
  for (int i = 0; i < 5; i++) {
    for (size_t k = 0; k < 2000; k++) gc_alloc(f.d, 1 + k % 30, GC_TAG_SCAN);
    gc_collect(f.d, i % 2 ? GC_COLLECT_MAJOR : GC_COLLECT_FULL);
  }
  CHECK(gc_verify_runs(f.v, GC_VERIFY_STATS) >= 7);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  stats_clean(&f);
  fixture_free(&f);
}

/* A domain that grew its own pools and large blocks and terminated leaves the heap's maxima
 * where they were: adoption merges its pools into the adopter's and its own maximum goes, so a
 * maximum summed over the owners would fall (INV-STATS-2: the heap keeps its own). */
static void terminated_domains_maximum_stays(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_domain *other = gc_domain_create(f.h);
  breaking_switch_domain(f.d, other);
  for (size_t i = 0; i < 20000; i++) gc_alloc(other, i % 40 == 0 ? 300 : 1 + i % 20, 0);
  gc_collect(other, GC_COLLECT_FULL); /* all garbage: its pools go, its maximum stays */
  gc_enter_blocking(other);
  gc_leave_blocking(f.d);
  CHECK(gc_domain_terminate(other) == GC_OK);
  gc_collect(f.d, GC_COLLECT_MAJOR); /* adopts the orphans */
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  stats_clean(&f);
  fixture_free(&f);
}

static int finalized;
static void count_finalizer(gc_heap *h, gc_value block, void *user) {
  (void)h, (void)block, (void)user;
  finalized++;
}

/* Finalizers set, queued and run, an allocation failure, mark overflows, a domain that
 * terminates: still clean. */
static void finalizers_failures_and_domains_pass(void) {
  fixture f;
  fixture_build(&f, "verify=stats,mintrigger=8192,markstack=4");
  finalized = 0;
  for (size_t i = 1; i < 40; i += 3) {
    CHECK(gc_finalizer_set(f.h, GC_FIELD(f.holder, i), count_finalizer, NULL) == GC_OK);
    if (i % 2) GC_FIELD(f.holder, i) = 0;
  }
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK(finalized > 0);
  domain_that_terminates(&f, 1000, 3000);
  CHECK(gc_set_params(f.h, "failafter=1") == GC_OK);
  CHECK(gc_alloc(f.d, 3, GC_TAG_SCAN) == 0);
  gc_clear_error(f.h);
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.alloc_failures, 1);
  CHECK(s.mark_overflows > 0);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  stats_clean(&f);
  fixture_free(&f);
}

/* ---- stats.sum ------------------------------------------------------------------------------ */

/* A domain's pool_words one pool too high: the summed figure is no longer the pools mapped and
 * not free (the swept pass, off here, would say which owner). */
static void pool_words_off_the_owned(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.d->stats.pool_words += GC_POOL_WSIZE;
  stats_expect(&f, GC_VK_STATS_SUM);
  f.d->stats.pool_words -= GC_POOL_WSIZE;
  stats_clean(&f);
  fixture_free(&f);
}

/* The orphans' pool words one pool short, as a summing that lost an orphan pool would be. */
static void orphan_pool_words_short(void) {
  fixture f;
  fixture_build(&f, NULL);
  domain_that_terminates(&f, 1, 2000);
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK(s.orphan_pool_words > 0);
  stats_clean(&f);
  f.h->orphans.stats.pool_words -= GC_POOL_WSIZE;
  stats_expect(&f, GC_VK_STATS_SUM);
  f.h->orphans.stats.pool_words += GC_POOL_WSIZE;
  stats_clean(&f);
  fixture_free(&f);
}

/* The heap's large word count (the large maximum's basis) drifts from the large blocks. */
static void heap_large_words_drift(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->large_words += 1;
  stats_expect(&f, GC_VK_STATS_SUM);
  f.h->large_words -= 1;
  stats_clean(&f);
  fixture_free(&f);
}

/* Through the verifier's hook at a sweep end, as the fuzz targets run it. */
static void bump_pool_words(gc_heap *h, void *arg) {
  (void)arg;
  h->main_domain->stats.pool_words += GC_POOL_WSIZE;
}

static void sum_through_the_hook(void) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.h = breaking_heap("verify=stats");
  f.d = gc_main_domain(f.h);
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, bump_pool_words, NULL);
  f.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  for (int i = 0; i < 100; i++) gc_alloc(f.d, 4, GC_TAG_SCAN);
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(b.fired, 1);
  const gc_verify_reports *r = gc_verify_reports_of(f.v);
  CHECK_ONLY_KIND(r, GC_VK_STATS_SUM);
  if (r->count > 0) CHECK(strcmp(r->items[0].point, "swept") == 0);
  f.d->stats.pool_words -= GC_POOL_WSIZE;
  gc_verify_uninstall(f.v);
  gc_heap_destroy(f.h);
}

/* A pool mapped that no owner holds and the free list lacks: pool_words is no longer the pools
 * mapped and not free. */
static void mapped_pool_no_owner(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->mapped_pool_count++;
  stats_expect(&f, GC_VK_STATS_SUM);
  f.h->mapped_pool_count--;
  stats_clean(&f);
  fixture_free(&f);
}

/* ---- stats.recount -------------------------------------------------------------------------- */

/* A free pool more counted than listed. */
static void free_pool_count_off(void) {
  fixture f;
  fixture_build(&f, "verify=stats,mintrigger=8192,keep=8");
  for (size_t k = 0; k < 4000; k++) gc_alloc(f.d, 6, GC_TAG_SCAN);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  gc_collect(f.d, GC_COLLECT_SLICE); /* the world need not stop: sweep on */
  while (f.d->sweeping) gc_collect(f.d, GC_COLLECT_SLICE);
  CHECK(f.h->free_pool_count > 0);
  stats_clean(&f);
  f.h->free_pool_count++;
  stats_expect(&f, GC_VK_STATS_RECOUNT);
  f.h->free_pool_count--;
  stats_clean(&f);
  fixture_free(&f);
}

/* The free pool count one short of the list. */
static void free_pool_count_short(void) {
  fixture f;
  fixture_build(&f, "verify=stats,mintrigger=8192,keep=8");
  for (size_t k = 0; k < 4000; k++) gc_alloc(f.d, 6, GC_TAG_SCAN);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  while (f.d->sweeping) gc_collect(f.d, GC_COLLECT_SLICE);
  CHECK(f.h->free_pool_count > 0);
  f.h->free_pool_count--;
  stats_expect(&f, GC_VK_STATS_RECOUNT);
  f.h->free_pool_count++;
  stats_clean(&f);
  fixture_free(&f);
}

/* The finalizer queue's head past its records: gc_get_stats's unrun count wraps around. */
static void finalizer_queue_head_past_its_records(void) {
  fixture f;
  fixture_build(&f, NULL);
  size_t saved = f.h->finq_head;
  f.h->finq_head = f.h->finq.count + 1;
  stats_expect(&f, GC_VK_STATS_RECOUNT);
  f.h->finq_head = saved;
  stats_clean(&f);
  fixture_free(&f);
}

/* ---- stats.balance -------------------------------------------------------------------------- */

static void allocated_block_uncounted(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.d->alloc_blocks++;
  stats_expect(&f, GC_VK_STATS_BALANCE);
  f.d->alloc_blocks--;
  stats_clean(&f);
  fixture_free(&f);
}

static void freed_words_overcounted(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.d->freed_words += 3;
  stats_expect(&f, GC_VK_STATS_BALANCE);
  f.d->freed_words -= 3;
  stats_clean(&f);
  fixture_free(&f);
}

/* A terminated domain's counters retired short: allocated minus freed no longer the live. */
static void retired_counter_short(void) {
  fixture f;
  fixture_build(&f, NULL);
  domain_that_terminates(&f, 1, 500);
  CHECK(f.h->retired.alloc_blocks > 0);
  stats_clean(&f);
  f.h->retired.alloc_blocks--;
  stats_expect(&f, GC_VK_STATS_BALANCE);
  f.h->retired.alloc_blocks++;
  stats_clean(&f);
  fixture_free(&f);
}

/* ---- stats.counter -------------------------------------------------------------------------- */

/* Two cycles more than the last sweep end saw: one sweep end was never reported. */
static void cycles_jump(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->cycles += 2;
  stats_expect(&f, GC_VK_STATS_COUNTER);
  f.h->cycles -= 2;
  stats_clean(&f);
  fixture_free(&f);
}

/* The failure counter goes back below what the last sweep end saw. */
static void failures_decrease(void) {
  fixture f;
  fixture_build(&f, NULL);
  CHECK(gc_set_params(f.h, "failafter=1") == GC_OK);
  CHECK(gc_alloc(f.d, 3, GC_TAG_SCAN) == 0);
  gc_clear_error(f.h);
  gc_collect(f.d, GC_COLLECT_FULL); /* a sweep end that sees the failure */
  stats_clean(&f);
  f.h->alloc_failures = 0;
  stats_expect(&f, GC_VK_STATS_COUNTER);
  f.h->alloc_failures = 1;
  stats_clean(&f);
  fixture_free(&f);
}

/* A cycle counted twice at one sweep end, seen at the hook (it must grow by exactly one). */
static void bump_cycles(gc_heap *h, void *arg) {
  (void)arg;
  h->cycles++;
}

static void cycle_counted_twice_at_the_hook(void) {
  fixture f;
  memset(&f, 0, sizeof f);
  f.h = breaking_heap("verify=stats");
  f.d = gc_main_domain(f.h);
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_SWEPT, bump_cycles, NULL);
  f.v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_ONLY_KIND(gc_verify_reports_of(f.v), GC_VK_STATS_COUNTER);
  gc_verify_uninstall(f.v);
  gc_heap_destroy(f.h);
}

/* ---- stats.maximum -------------------------------------------------------------------------- */

static void pool_maximum_below_pool_words(void) {
  fixture f;
  fixture_build(&f, NULL);
  size_t saved = f.h->pool_max_words;
  f.h->pool_max_words = f.d->stats.pool_words - 1;
  stats_expect(&f, GC_VK_STATS_MAXIMUM);
  f.h->pool_max_words = saved;
  stats_clean(&f);
  fixture_free(&f);
}

/* A domain's own large maximum above the heap's: the heap's was taken over too little. */
static void domain_maximum_above_the_heaps(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.d->stats.large_max_words = f.h->large_max_words + 1;
  stats_expect(&f, GC_VK_STATS_MAXIMUM);
  f.d->stats.large_max_words = f.h->large_max_words;
  stats_clean(&f);
  fixture_free(&f);
}

/* The heap's large maximum fell below what the last sweep end reported (still above now). */
static void maximum_decreases(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(f.holder, 101) = 0; /* a large block to free: the maximum stays above */
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK(s.large_max_words > s.large_words);
  uintptr_t saved = f.h->large_max_words;
  f.h->large_max_words = s.large_max_words - 1;
  f.d->stats.large_max_words = s.large_words; /* no domain's own maximum above it */
  stats_expect(&f, GC_VK_STATS_MAXIMUM);
  f.h->large_max_words = saved;
  stats_clean(&f);
  fixture_free(&f);
}

/* ---- stats.pauses --------------------------------------------------------------------------- */

static void last_pause_not_the_newest(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->last_pause_ns++;
  stats_expect(&f, GC_VK_STATS_PAUSES);
  f.h->last_pause_ns--;
  stats_clean(&f);
  fixture_free(&f);
}

/* The ring's write position one off: the history's newest is some other pause. */
static void ring_position_off(void) {
  fixture f;
  fixture_build(&f, NULL);
  uint64_t odd = f.h->max_pause_ns + 1; /* a pause no cycle took, and the largest */
  f.h->pause_ns[f.h->pause_next] = odd;
  f.h->pause_next = (f.h->pause_next + 1) % GC_PAUSE_HISTORY;
  f.h->max_pause_ns = odd;
  stats_expect(&f, GC_VK_STATS_PAUSES);
  fixture_free(&f);
}

/* The maximum pause is not the largest pause of a history that never wrapped. */
static void max_pause_above_every_pause(void) {
  fixture f;
  fixture_build(&f, NULL);
  f.h->max_pause_ns += 1000;
  stats_expect(&f, GC_VK_STATS_PAUSES);
  f.h->max_pause_ns -= 1000;
  stats_clean(&f);
  fixture_free(&f);
}

int main(void) {
  RUN(clean_heap_passes);
  RUN(terminated_domains_maximum_stays);
  RUN(finalizers_failures_and_domains_pass);
  RUN(pool_words_off_the_owned);
  RUN(orphan_pool_words_short);
  RUN(heap_large_words_drift);
  RUN(sum_through_the_hook);
  RUN(free_pool_count_off);
  RUN(free_pool_count_short);
  RUN(finalizer_queue_head_past_its_records);
  RUN(mapped_pool_no_owner);
  RUN(allocated_block_uncounted);
  RUN(freed_words_overcounted);
  RUN(retired_counter_short);
  RUN(cycles_jump);
  RUN(failures_decrease);
  RUN(cycle_counted_twice_at_the_hook);
  RUN(pool_maximum_below_pool_words);
  RUN(domain_maximum_above_the_heaps);
  RUN(maximum_decreases);
  RUN(last_pause_not_the_newest);
  RUN(ring_position_off);
  RUN(max_pause_above_every_pause);
  CHECK_MAIN_END();
}
