/* The perf pass: clean marks, sweeps and paced cycles (a 4-entry mark stack included) report
 * nothing, the overflow bound is exact (four rooted blocks fit a 4-entry stack, five overflow
 * it), and each break of the collector's work (a pacer that was not reset, a lost work buffer, a
 * pool or large block swept twice) or of its counters is reported as exactly its kind. */
#include <string.h>

#include "gc/cycle.h"
#include "gc/workbuf.h"
#include "invariants/breaking.h"

typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_value root;
  gc_value wide; /* NULL, or a large block whose every field is a block (make_wide) */
  gc_verifier *v;
  breaking_hook hook;
} fixture;

/* A rooted list of `cells` two-field cells, each holding a raw block: under a 4-entry stack its
 * mark overflows and re-darkens. */
static void fixture_build(fixture *f, const char *params, int cells) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  breaking_hook_set(f->h, &f->hook, GC_HOOK_MARK_DONE, NULL, NULL);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  gc_root_register(f->h, &f->root);
  gc_root_register(f->h, &f->wide);
  for (int i = 0; i < cells; i++) {
    gc_value cell = gc_alloc(f->d, 2, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = f->root;
    f->root = cell; /* rooted before the next allocation, which may collect */
    gc_value raw = gc_alloc(f->d, 3, GC_TAG_RAW);
    GC_FIELD(cell, 1) = raw;
  }
  for (int i = 0; i < 200; i++) gc_alloc(f->d, 1 + i % 5, GC_TAG_SCAN); /* garbage */
}

static void fixture_free(fixture *f) {
  gc_verify_uninstall(f->v);
  gc_root_unregister(f->h, &f->root);
  gc_root_unregister(f->h, &f->wide);
  gc_heap_destroy(f->h);
}

/* A block of `n` fields, each a scanned block of one field: scanning it pushes n entries at
 * once, more than a small mark stack holds. */
static void make_wide(fixture *f, size_t n) {
  f->wide = gc_alloc(f->d, n, GC_TAG_SCAN);
  for (size_t i = 0; i < n; i++) {
    gc_value child = gc_alloc(f->d, 1, GC_TAG_SCAN);
    GC_FIELD(f->wide, i) = child;
  }
}

/* Run `fn` at `point` of the next cycle, before the passes. */
static void arm(fixture *f, gc_hook_point point, breaking_fn fn) {
  f->hook.point = point;
  f->hook.fn = fn;
  f->hook.armed = 1;
}

static const gc_verify_reports *reports(fixture *f) { return gc_verify_reports_of(f->v); }

/* Exactly one report, of `kind`, whose text says `needle`. */
static void check_one(fixture *f, gc_verify_kind kind, const char *needle) {
  const gc_verify_reports *r = reports(f);
  CHECK_ONLY_KIND(r, kind);
  CHECK_EQ_U(r->count, 1);
  if (r->count > 0 && strstr(r->items[0].what, needle) == NULL) {
    fprintf(stderr, "  expected \"%s\" in: %s\n", needle, r->items[0].what);
    CHECK(0);
  }
}

/* A major collection on a fresh fixture of `cells` cells with `params`, `fn` run at its
 * mark-done point: exactly one report, of `kind`, saying `needle`. */
static void planted_at_mark_done(const char *params, int cells, breaking_fn fn, gc_verify_kind kind,
                                 const char *needle) {
  fixture f;
  fixture_build(&f, params, cells);
  arm(&f, GC_HOOK_MARK_DONE, fn);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  check_one(&f, kind, needle);
  fixture_free(&f);
}

/* ---- Clean runs ---------------------------------------------------------------------------- */

static void clean_cycles_pass(const char *params) {
  fixture f;
  fixture_build(&f, params, 3000);
  for (int c = 0; c < 3; c++) gc_collect(f.d, GC_COLLECT_FULL);
  /* Paced cycles and lazy sweeping: allocate well past the trigger. */
  for (int i = 0; i < 60000; i++) gc_alloc(f.d, 1 + i % 9, GC_TAG_SCAN);
  CHECK(gc_verify_runs(f.v, GC_VERIFY_PERF) >= 6);
  CHECK(f.h->cycles >= 4);
  CHECK_NO_REPORT(reports(&f));
  CHECK_EQ_U(gc_verify_perf(f.h, NULL), 0);
  fixture_free(&f);
}

static void clean_cycles_with_roomy_stack_pass(void) {
  clean_cycles_pass("verify=perf,mintrigger=4096,percent=50");
}

static void clean_cycles_with_tiny_stack_pass(void) {
  clean_cycles_pass("verify=all,mintrigger=4096,percent=50,markstack=4,sweep=64");
}

/* The bound of INV-OVERFLOW-1 is exact with one marker: a 4-entry stack (2 buffers of 2) holds
 * the four blocks the roots reach at once, and the fifth overflows it. One marker is the stw
 * mode's (incremental marking counts the shade marker too): marking=stw. */
static void overflow_bound_is_exact(int blocks) {
  gc_heap *h = breaking_heap("marking=stw,verify=perf,markstack=4");
  gc_domain *d = gc_main_domain(h);
  gc_value slots[5] = {0};
  gc_frame frame;
  gc_frame_push(d, &frame, slots, 5);
  for (int i = 0; i < blocks; i++) slots[i] = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_verifier *v = gc_verify_install(h, GC_VERIFY_COLLECT);
  gc_collect(d, GC_COLLECT_FULL);
  const gc_cycle_work *w = &h->cycle_work;
  CHECK_EQ_U(h->work.buf_count * h->work.buf_entries, 4);
  CHECK_EQ_U(w->mark.scan_blocks_marked, (size_t)blocks);
  CHECK_EQ_U(w->mark.overflows, blocks > 4 ? 1 : 0);
  CHECK_EQ_U(w->markers, 1);
  CHECK_NO_REPORT(gc_verify_reports_of(v));
  gc_verify_uninstall(v);
  gc_frame_pop(d, &frame);
  gc_heap_destroy(h);
}

static void four_blocks_fit_a_four_entry_stack(void) { overflow_bound_is_exact(4); }
static void five_blocks_overflow_a_four_entry_stack(void) { overflow_bound_is_exact(5); }

/* ---- perf.unpaced-cycle -------------------------------------------------------------------- */

/* The pacer forgets to reset its count when the colours rotate (what a trigger never reset
 * looks like): the next allocation slow path starts a paced cycle at once. */
static void keep_pacer_count(gc_heap *h, void *arg) {
  gc_atomic_store(&h->alloc_words_since_cycle, gc_param_load(&h->trigger_words));
}

static void pacer_not_reset(void) {
  fixture f;
  fixture_build(&f, "verify=perf,mintrigger=100000", 10);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(reports(&f));
  arm(&f, GC_HOOK_CYCLED, keep_pacer_count);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_NO_REPORT(reports(&f)); /* forced: any count is fine */
  uint64_t cycles = f.h->cycles;
  for (int i = 0; i < 2000 && f.h->cycles == cycles; i++) gc_alloc(f.d, 200, GC_TAG_RAW);
  CHECK_EQ_U(f.h->cycles, cycles + 1);
  CHECK_EQ_U(f.h->cycle_work.reason, GC_CYCLE_PACED);
  check_one(&f, GC_VK_PERF_UNPACED_CYCLE, "below the trigger 100000");
  fixture_free(&f);
}

/* A real paced cycle, its recorded decision then changed at mark-done. */
static void raise_trigger(gc_heap *h, void *arg) {
  gc_cycle_work *w = &h->cycle_work;
  w->trigger_words = (size_t)(w->reported_at_start - w->reported_at_reset) + 1;
}
static void raise_min_trigger(gc_heap *h, void *arg) {
  gc_cycle_work *w = &h->cycle_work;
  w->min_trigger_words = (size_t)(w->reported_at_start - w->reported_at_reset) + 1;
}
static void pacing_off(gc_heap *h, void *arg) { h->cycle_work.gc_percent = GC_PERCENT_OFF; }

static void paced_cycle_with(breaking_fn fn, const char *needle) {
  fixture f;
  fixture_build(&f, "verify=perf,mintrigger=4096", 10);
  gc_collect(f.d, GC_COLLECT_FULL);
  arm(&f, GC_HOOK_MARK_DONE, fn);
  uint64_t cycles = f.h->cycles;
  for (int i = 0; i < 20000 && f.h->cycles == cycles; i++) gc_alloc(f.d, 3, GC_TAG_SCAN);
  CHECK_EQ_U(f.hook.fired, 1);
  CHECK_EQ_U(f.h->cycle_work.reason, GC_CYCLE_PACED);
  check_one(&f, GC_VK_PERF_UNPACED_CYCLE, needle);
  fixture_free(&f);
}

static void paced_start_below_the_trigger(void) {
  paced_cycle_with(raise_trigger, "below the trigger");
}
static void paced_start_below_min_trigger(void) {
  paced_cycle_with(raise_min_trigger, "below the trigger 4096 (min_trigger_words");
}
static void paced_start_with_pacing_off(void) { paced_cycle_with(pacing_off, "with pacing off"); }

/* ---- perf.needless-overflow ---------------------------------------------------------------- */

/* Every work buffer but one lost from the empty list before the mark (as a marker that never
 * puts a buffer back): the 2000 children of a wide block then overflow a stack whose arena says
 * it has room for 65536. */
static gc_workbuf *lost_buffers;
static size_t lost_carved, lost_count;
static void lose_buffers(fixture *f) {
  gc_mark_work *w = &f->h->work;
  lost_buffers = w->empty->next;
  lost_carved = w->carved;
  lost_count = w->empty_count;
  w->empty->next = NULL;
  w->empty_count = 1;
  w->carved = w->buf_count; /* and none left to carve */
}
static void find_buffers(fixture *f) {
  gc_mark_work *w = &f->h->work;
  w->empty->next = lost_buffers;
  w->empty_count = lost_count;
  w->carved = lost_carved;
}

static void lost_work_buffers_overflow(void) {
  fixture f;
  fixture_build(&f, "verify=perf,markstack=65536", 10);
  make_wide(&f, 2000);
  gc_collect(f.d, GC_COLLECT_FULL); /* shapes the buffers */
  CHECK_NO_REPORT(reports(&f));
  CHECK(f.h->work.buf_count > 1);
  lose_buffers(&f);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  find_buffers(&f);
  CHECK(f.h->cycle_work.mark.overflows > 0);
  check_one(&f, GC_VK_PERF_NEEDLESS_OVERFLOW, "markstack=65536");
  fixture_free(&f);
}

/* A refused push, recovered by a re-darkening pass that the marker and the statistics count:
 * what INV-OVERFLOWCOUNT-1 says a refusal comes with, so only the overflow bound can object. */
static void fake_refused_push(gc_heap *h) {
  gc_mark_counts *c = &h->cycle_work.mark;
  c->overflows++;
  if (c->redarken_passes == 0) {
    c->redarken_passes = 1;
    h->mark_overflows++;
  }
}
static void fake_overflow(gc_heap *h, void *arg) { fake_refused_push(h); }

/* `n` handoffs more (n may be negative to take them back), seen alike by the lists, their
 * givers and the statistics (INV-HANDOFFCOUNT-1), so only the handoff rules can object. */
static void fake_handoffs(gc_heap *h, int n) {
  h->cycle_work.handoffs += (uint64_t)(int64_t)n;
  h->cycle_work.mark.handoffs += (size_t)(ptrdiff_t)n;
  h->work.handoffs += (uint64_t)(int64_t)n;
}

static void overflow_of_a_small_mark(void) {
  planted_at_mark_done("verify=perf", 10, fake_overflow, GC_VK_PERF_NEEDLESS_OVERFLOW,
                       "which fit in it");
}

/* Two markers and a handoff: the floor is (B - 2 + 1 - 1)E + 1. At the floor an overflow is a
 * violation, one block above it is not. */
static void overflow_bound_with_handoffs(void) {
  fixture f;
  fixture_build(&f, "marking=stw,verify=perf,markstack=4096", 10);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(reports(&f));
  gc_cycle_work *w = &f.h->cycle_work;
  gc_cycle_work saved = *w;
  uint64_t saved_handoffs = f.h->work.handoffs, saved_overflows = f.h->mark_overflows;
  size_t b = f.h->work.buf_count, e = f.h->work.buf_entries;
  CHECK(b >= 4);
  w->markers = 2;
  fake_handoffs(f.h, 1);
  fake_refused_push(f.h);
  w->mark.scan_blocks_marked = (b - 2) * e + 1 + 1;
  CHECK_EQ_U(gc_verify_perf(f.h, NULL), 0);
  w->mark.scan_blocks_marked = (b - 2) * e + 1;
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_perf(f.h, &out), 1);
  CHECK_ONLY_KIND(&out, GC_VK_PERF_NEEDLESS_OVERFLOW);
  gc_verify_reports_free(&out);
  *w = saved;
  f.h->work.handoffs = saved_handoffs;
  f.h->mark_overflows = saved_overflows;
  fixture_free(&f);
}

/* ---- perf.mark-work ------------------------------------------------------------------------ */

static void one_field_too_many(gc_heap *h, void *arg) {
  gc_mark_counts *c = &h->cycle_work.mark;
  c->fields_scanned = c->scan_fields_marked * (1 + c->redarken_passes) + 1;
}
static void unflagged_redarkened(gc_heap *h, void *arg) {
  gc_mark_counts *c = &h->cycle_work.mark;
  c->redarkened = c->flagged + 1;
}
/* A mark that overflowed and re-darkened, its passes not counted: its rescans exceed one scan. */
static void passes_uncounted(gc_heap *h, void *arg) {
  gc_mark_counts *c = &h->cycle_work.mark;
  CHECK(c->redarken_passes > 0 && c->fields_scanned > c->scan_fields_marked);
  /* The refusals and the statistics' passes go with them, so INV-OVERFLOWCOUNT-1 still holds:
   * only the work bound is left to see the scans the passes made. */
  h->mark_overflows -= c->redarken_passes;
  c->overflows = 0;
  c->redarken_passes = 0;
}

static void mark_work_with(const char *params, breaking_fn fn, const char *needle) {
  fixture f;
  fixture_build(&f, params, 3000);
  make_wide(&f, 1000);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(reports(&f));
  arm(&f, GC_HOOK_MARK_DONE, fn);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f.hook.fired, 1);
  check_one(&f, GC_VK_PERF_MARK_WORK, needle);
  fixture_free(&f);
}

static void fields_scanned_above_the_bound(void) {
  mark_work_with("verify=perf", one_field_too_many, "times 1 + 0 re-darkening");
}
static void unflagged_pool_redarkened(void) {
  mark_work_with("verify=perf,markstack=4", unflagged_redarkened, "no overflow asked for");
}
static void redarken_passes_not_counted(void) {
  mark_work_with("verify=perf,markstack=4", passes_uncounted, "times 1 + 0 re-darkening");
}

/* ---- perf.recheck-limit -------------------------------------------------------------------- */

/* An incremental mark under zeal recheck spends exactly its `rechecks`: the counts say so, and one
 * recheck more than the limit is the kind. */
static void rechecks_past_the_limit(gc_heap *h, void *arg) {
  h->cycle_work.rechecks = h->cycle_work.recheck_limit + 1;
}

static void rechecks_spent_to_the_limit_pass(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,zeal=recheck,rechecks=3,verify=perf", 200);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(reports(&f)->count, 0);
  CHECK_EQ_U(f.h->cycle_work.rechecks, 3);
  CHECK_EQ_U(f.h->cycle_work.recheck_limit, 3);
  fixture_free(&f);
}

static void one_recheck_past_the_limit(void) {
  planted_at_mark_done("marking=incremental,zeal=recheck,rechecks=3,verify=perf", 200,
                       rechecks_past_the_limit, GC_VK_PERF_RECHECK_LIMIT,
                       "resumed after 4 termination stops, but its limit "
                       "allowed 3");
}

/* rechecks=0: the first termination that finds work must finish the mark; called directly
 * after the cycle, the counters are still there. */
static void a_recheck_with_none_allowed(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,zeal=recheck,rechecks=0,verify=perf", 50);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f.h->cycle_work.rechecks, 0);
  f.h->cycle_work.rechecks = 1;
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_perf(f.h, &out), 1);
  CHECK_ONLY_KIND(&out, GC_VK_PERF_RECHECK_LIMIT);
  CHECK(out.count == 1 && strstr(out.items[0].what, "its limit allowed 0") != NULL);
  gc_verify_reports_free(&out);
  f.h->cycle_work.rechecks = 0;
  fixture_free(&f);
}

/* ---- perf.markers -------------------------------------------------------------------------- */

/* Two domains made while an incremental cycle marks join it: at its end it counts the main
 * domain, the shade marker and those two. Planted: one marker fewer (a join not counted), or a
 * domain id handed out that no marker counts. */
static void markers_one_short(gc_heap *h, void *arg) { h->cycle_work.markers--; }
static void an_id_more(gc_heap *h, void *arg) { h->cycle_work.domain_id_at_end++; }

static void mark_with_two_domains_made_mid_mark(fixture *f) {
  gc_collect(f->d, GC_COLLECT_START);
  gc_domain *made[2] = {gc_domain_create(f->h), gc_domain_create(f->h)}; /* born blocking */
  gc_collect(f->d, GC_COLLECT_MAJOR); /* finishes this mark (markers 4), then a whole cycle */
  gc_enter_blocking(f->d);
  for (int i = 0; i < 2; i++) {
    gc_leave_blocking(made[i]);
    CHECK(gc_domain_terminate(made[i]) == GC_OK);
  }
  gc_leave_blocking(f->d);
}

static size_t markers_seen;
static void note_markers(gc_heap *h, void *arg) {
  if (markers_seen == 0) markers_seen = h->cycle_work.markers;
}

static void domains_made_mid_mark_are_markers(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=perf", 200);
  markers_seen = 0;
  arm(&f, GC_HOOK_MARK_DONE, note_markers);
  mark_with_two_domains_made_mid_mark(&f);
  CHECK_EQ_U(markers_seen, 4);
  CHECK_EQ_U(reports(&f)->count, 0);
  fixture_free(&f);
}

static void a_join_not_counted(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=perf", 200);
  arm(&f, GC_HOOK_MARK_DONE, markers_one_short);
  mark_with_two_domains_made_mid_mark(&f);
  check_one(&f, GC_VK_PERF_MARKERS, "counted 3 markers, but 1 domains began it, 2 were made");
  fixture_free(&f);
}

static void an_id_no_marker_counts(void) {
  planted_at_mark_done("marking=incremental,verify=perf", 200, an_id_more, GC_VK_PERF_MARKERS,
                       "counted 2 markers, but 1 domains began it, 1 were made");
}

/* ---- perf.lone-handoff --------------------------------------------------------------------- */

/* Handoffs belong to the stw mode's parallel mark (incremental slices hand nothing off, and count
 * the shade marker among the markers): these tests say marking=stw. */

static void one_handoff(gc_heap *h, void *arg) { fake_handoffs(h, 1); }

static void handoff_with_one_marker(void) {
  planted_at_mark_done("marking=stw,verify=perf", 3000, one_handoff, GC_VK_PERF_LONE_HANDOFF,
                       "1 work buffer(s) split for an idle marker in a mark "
                       "with 1 marker(s)");
}

/* Called directly after the cycle: the mark's counters are still there. */
static void handoffs_seen_after_the_cycle(void) {
  fixture f;
  fixture_build(&f, "marking=stw,verify=perf", 10);
  gc_collect(f.d, GC_COLLECT_FULL);
  fake_handoffs(f.h, 3);
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_perf(f.h, &out), 1);
  CHECK_ONLY_KIND(&out, GC_VK_PERF_LONE_HANDOFF);
  CHECK(out.count == 1 && strcmp(out.items[0].point, "direct") == 0);
  gc_verify_reports_free(&out);
  fake_handoffs(f.h, -3);
  fixture_free(&f);
}

/* Two domains, the second in a blocking section: the leader marks alone (its frames are the
 * leader's to mark), so a handoff is one too many; with two markers it would be fine. */
static void handoff_while_the_other_domain_blocks(void) {
  fixture f;
  fixture_build(&f, "marking=stw,verify=perf", 10);
  gc_domain *other = gc_domain_create(f.h); /* born in a blocking section */
  CHECK(other != NULL);
  arm(&f, GC_HOOK_MARK_DONE, one_handoff);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(f.h->cycle_work.markers, 1);
  check_one(&f, GC_VK_PERF_LONE_HANDOFF, "with 1 marker(s)");
  f.h->cycle_work.markers = 2;
  CHECK_EQ_U(gc_verify_perf(f.h, NULL), 0);
  gc_leave_blocking(other);
  gc_domain_terminate(other);
  fixture_free(&f);
}

/* ---- perf.overflow-count ------------------------------------------------------------------- */

/* A 4-entry stack overflows a mark of 3000 cells: refusals, passes and the statistics agree,
 * under zeal overflow too, in both modes. Planted: a pass with no refusal; refusals lost (as a
 * terminating domain's marker that kept them); a pass the statistics missed. */
static void clean_overflowing_marks_pass(void) {
  const char *params[] = {"marking=stw,verify=perf,markstack=4",
                          "marking=incremental,verify=perf,markstack=4",
                          "marking=incremental,verify=perf,zeal=overflow",
                          "marking=stw,verify=perf,zeal=overflow+slice"};
  for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
    fixture f;
    fixture_build(&f, params[i], 300); /* zeal overflow re-darkens per link: kept small for MSan */
    make_wide(&f, 100);
    gc_collect(f.d, GC_COLLECT_MAJOR);
    gc_collect(f.d, GC_COLLECT_FULL);
    CHECK(f.h->cycle_work.mark.overflows > 0 && f.h->cycle_work.mark.redarken_passes > 0);
    CHECK_NO_REPORT(reports(&f));
    fixture_free(&f);
  }
}

static void a_pass_without_refusal(gc_heap *h, void *arg) {
  gc_mark_counts *c = &h->cycle_work.mark;
  CHECK_EQ_U(c->overflows, 0);
  c->redarken_passes++;
  h->mark_overflows++;
}
static void refusals_lost(gc_heap *h, void *arg) {
  CHECK(h->cycle_work.mark.overflows > 0);
  h->cycle_work.mark.overflows = 0;
}
static void stats_pass_missed(gc_heap *h, void *arg) {
  CHECK(h->mark_overflows > 0);
  h->mark_overflows--;
}

static void overflow_pass_without_refusal(void) {
  planted_at_mark_done("verify=perf", 10, a_pass_without_refusal, GC_VK_PERF_OVERFLOW_COUNT,
                       "counted 1 overflow pass(es) (re-darkening) while its markers refused 0");
}
/* A wide block under a 4-entry stack: its mark overflows. */
static void planted_in_an_overflowing_mark(const char *params, breaking_fn fn, const char *needle) {
  fixture f;
  fixture_build(&f, params, 10);
  make_wide(&f, 100);
  arm(&f, GC_HOOK_MARK_DONE, fn);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  check_one(&f, GC_VK_PERF_OVERFLOW_COUNT, needle);
  fixture_free(&f);
}
static void overflow_refusals_lost(void) {
  planted_in_an_overflowing_mark("marking=stw,verify=perf,markstack=4", refusals_lost,
                                 "while its markers refused 0 push(es)");
}
static void overflow_pass_not_in_the_stats(void) {
  planted_in_an_overflowing_mark("marking=incremental,verify=perf,markstack=4", stats_pass_missed,
                                 "gc_stats.mark_overflows went from");
}

/* ---- perf.handoff-count -------------------------------------------------------------------- */

static void giver_saw_one_more(gc_heap *h, void *arg) { h->cycle_work.mark.handoffs++; }
static void stats_handoff_more(gc_heap *h, void *arg) { h->work.handoffs++; }

static void split_the_giver_never_saw(void) {
  planted_at_mark_done("marking=stw,verify=perf", 10, giver_saw_one_more, GC_VK_PERF_HANDOFF_COUNT,
                       "the work lists split 0 buffer(s) for other markers in this mark, but the "
                       "giving markers saw 1");
}
static void handoff_only_in_the_stats(void) {
  planted_at_mark_done("marking=incremental,verify=perf", 10, stats_handoff_more,
                       GC_VK_PERF_HANDOFF_COUNT, "gc_stats.handoffs went from");
}
/* Called directly after the cycle, as the corruption catalogue does. */
static void giver_count_seen_after_the_cycle(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=perf", 10);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(reports(&f));
  f.h->cycle_work.mark.handoffs += 2;
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_perf(f.h, &out), 1);
  CHECK_ONLY_KIND(&out, GC_VK_PERF_HANDOFF_COUNT);
  gc_verify_reports_free(&out);
  f.h->cycle_work.mark.handoffs -= 2;
  CHECK_EQ_U(gc_verify_perf(f.h, NULL), 0);
  fixture_free(&f);
}

/* ---- perf.slice-count ---------------------------------------------------------------------- */

/* An incremental mark with slices on the main domain and on a domain made mid-mark, which
 * slices and terminates before the mark ends: its slices are the retired ones'. */
static void mark_with_a_slicing_domain_that_leaves(fixture *f) {
  gc_collect(f->d, GC_COLLECT_START);
  gc_collect(f->d, GC_COLLECT_SLICE);
  gc_domain *o = gc_domain_create(f->h); /* born blocking */
  CHECK(o != NULL);
  gc_enter_blocking(f->d);
  gc_leave_blocking(o);
  gc_collect(o, GC_COLLECT_SLICE);
  CHECK(o->mark_slices > 0);
  CHECK(gc_domain_terminate(o) == GC_OK);
  gc_leave_blocking(f->d);
  gc_collect(f->d, GC_COLLECT_MAJOR); /* finishes this mark, then a whole cycle */
}

static void a_slice_counted_twice(gc_heap *h, void *arg) { gc_main_domain(h)->mark_slices++; }
static void traced_slice_more(gc_heap *h, void *arg) { h->cycle_slices++; }
static void retired_slice_lost(gc_heap *h, void *arg) {
  CHECK(h->retired.mark_slices > 0);
  if (h->retired.mark_slices > 0) h->retired.mark_slices--;
}

static void slices_of_a_leaving_domain_are_counted(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=perf,markslice=16", 3000);
  mark_with_a_slicing_domain_that_leaves(&f);
  CHECK(f.h->retired.mark_slices > 0);
  CHECK_NO_REPORT(reports(&f));
  fixture_free(&f);
}
static void slice_counted_twice(void) {
  planted_at_mark_done("marking=incremental,verify=perf,markslice=16", 3000, a_slice_counted_twice,
                       GC_VK_PERF_SLICE_COUNT, "gc_stats.mark_slices went from");
}
static void slice_traced_twice(void) {
  planted_at_mark_done("marking=incremental,verify=perf,markslice=16", 3000, traced_slice_more,
                       GC_VK_PERF_SLICE_COUNT, "slice(s) for its trace line");
}
static void leaving_domain_slices_lost(void) {
  fixture f;
  fixture_build(&f, "marking=incremental,verify=perf,markslice=16", 3000);
  arm(&f, GC_HOOK_MARK_DONE, retired_slice_lost);
  mark_with_a_slicing_domain_that_leaves(&f);
  check_one(&f, GC_VK_PERF_SLICE_COUNT, "gc_stats.mark_slices went from");
  fixture_free(&f);
}

/* ---- perf.sweep-work ----------------------------------------------------------------------- */

/* Lazily sweeping: a pool already swept this cycle put back on its unswept list (the heap stays
 * right: a second sweep of it frees nothing and rebuilds the same free list). */
static void sweep_again(fixture *f, int large) {
  gc_domain *d = f->d;
  if (large) {
    gc_large *a = d->swept_large;
    CHECK(a != NULL);
    if (a == NULL) return;
    d->swept_large = a->next;
    a->next = d->unswept_large;
    d->unswept_large = a;
    return;
  }
  /* Of the class being swept, so the sweep meets it again before it moves on. */
  gc_sizeclass c = d->next_to_sweep;
  gc_pool **from = d->avail[c] != NULL ? &d->avail[c] : &d->full[c];
  gc_pool **to = d->avail[c] != NULL ? &d->unswept_avail[c] : &d->unswept_full[c];
  gc_pool *p = *from;
  CHECK(p != NULL);
  if (p == NULL) return;
  *from = p->next;
  p->next = *to;
  *to = p;
}

static void swept_twice(int large) {
  fixture f;
  fixture_build(&f, "verify=perf+swept,sweep=1", 3000);
  gc_value big = gc_alloc(f.d, 400, GC_TAG_RAW);
  GC_FIELD(f.root, 1) = big; /* two large blocks that survive */
  big = gc_alloc(f.d, 500, GC_TAG_RAW);
  GC_FIELD(GC_FIELD(f.root, 0), 1) = big;
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_collect(f.d, GC_COLLECT_MAJOR); /* lazily sweeping from here, one pool a slice */
  CHECK(f.d->sweeping);
  for (int i = 0; i < 3 && f.d->sweeping; i++) gc_collect(f.d, GC_COLLECT_SLICE);
  if (large) {
    while (f.d->sweep_large_swept == 0)
      gc_collect(f.d, GC_COLLECT_SLICE); /* the pools, one large */
  }
  CHECK(f.d->sweeping);
  sweep_again(&f, large);
  while (f.d->sweeping) gc_collect(f.d, GC_COLLECT_SLICE);
  check_one(&f, GC_VK_PERF_SWEEP_WORK, large ? "large blocks" : "slots below their frontiers");
  CHECK(f.d->sweep_slots_swept + f.d->sweep_large_swept >
        f.d->sweep_slots_due + f.d->sweep_large_due);
  fixture_free(&f);
}

static void pool_swept_twice(void) { swept_twice(0); }
static void large_block_swept_twice(void) { swept_twice(1); }

static void one_slot_too_many(gc_heap *h, void *arg) {
  gc_domain *d = gc_main_domain(h);
  d->sweep_slots_swept = d->sweep_slots_due + 1;
}

static void slot_count_faked(void) {
  fixture f;
  fixture_build(&f, "verify=perf", 3000);
  arm(&f, GC_HOOK_SWEPT, one_slot_too_many);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(f.hook.fired, 1);
  check_one(&f, GC_VK_PERF_SWEEP_WORK, "domain 0's sweep examined");
  CHECK(strcmp(reports(&f)->items[0].point, "swept") == 0);
  fixture_free(&f);
}

int main(void) {
  RUN(clean_cycles_with_roomy_stack_pass);
  RUN(clean_cycles_with_tiny_stack_pass);
  RUN(four_blocks_fit_a_four_entry_stack);
  RUN(five_blocks_overflow_a_four_entry_stack);
  RUN(pacer_not_reset);
  RUN(paced_start_below_the_trigger);
  RUN(paced_start_below_min_trigger);
  RUN(paced_start_with_pacing_off);
  RUN(lost_work_buffers_overflow);
  RUN(overflow_of_a_small_mark);
  RUN(overflow_bound_with_handoffs);
  RUN(fields_scanned_above_the_bound);
  RUN(unflagged_pool_redarkened);
  RUN(redarken_passes_not_counted);
  RUN(rechecks_spent_to_the_limit_pass);
  RUN(one_recheck_past_the_limit);
  RUN(domains_made_mid_mark_are_markers);
  RUN(a_join_not_counted);
  RUN(an_id_no_marker_counts);
  RUN(a_recheck_with_none_allowed);
  RUN(handoff_with_one_marker);
  RUN(handoffs_seen_after_the_cycle);
  RUN(handoff_while_the_other_domain_blocks);
  RUN(clean_overflowing_marks_pass);
  RUN(overflow_pass_without_refusal);
  RUN(overflow_refusals_lost);
  RUN(overflow_pass_not_in_the_stats);
  RUN(split_the_giver_never_saw);
  RUN(handoff_only_in_the_stats);
  RUN(giver_count_seen_after_the_cycle);
  RUN(slices_of_a_leaving_domain_are_counted);
  RUN(slice_counted_twice);
  RUN(slice_traced_twice);
  RUN(leaving_domain_slices_lost);
  RUN(pool_swept_twice);
  RUN(large_block_swept_twice);
  RUN(slot_count_faked);
  CHECK_MAIN_END();
}
