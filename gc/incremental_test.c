/* Incremental marking's mutation rules (INV-BARRIER-1 in heap.h), seen from outside: a test
 * starts a cycle with GC_COLLECT_START, mutates the heap while the cycle marks, finishes the
 * cycle, and then counts what the cycle kept and what the next one frees.
 *
 * Every test runs in every mode of MODES. With marking=stw, GC_COLLECT_START is a whole cycle,
 * so the same mutations come right after it; the promises checked are the ones both modes make:
 *   - the cycle keeps every block reachable when it started (unlinked since or not) and every
 *     block allocated since, with its contents;
 *   - it frees every block that was unreachable when it started (the garbage fx_settle makes);
 *   - the next whole cycle frees exactly what is unreachable by then (the floating garbage).
 * Between the end of the cycle and its sweep, `doomed` reads a block's colour: the cycle found
 * it unreachable. One test (incremental only) stores without the barrier and shows that check
 * failing, so the others' passing means something.
 *
 * One thread runs every domain here, one at a time: the others wait in blocking sections, so a
 * stop of the world never waits for them. Pacing is off, so only the tests start cycles. */
#include <string.h>

#include "gc/check.h"
#include "gc/heap.h"

enum { ID = 0, NEXT = 1, NODE_WSIZE = 3 };
enum { ROOTS = 6, BALLAST = 20000, GARBAGE = 40, MAGIC = 0x5ee };

/* The ballast (a long list in root[0]) keeps marking busy for hundreds of slices at markslice=16,
 * so everything a test does after GC_COLLECT_START happens while the cycle marks (mid_mark
 * checks it). markstack=4 also sends the barrier's and the shade's pushes into overflow. */
static const char *const MODES[] = {
    "marking=stw,percent=off",
    "marking=incremental,markslice=16,percent=off",
    "marking=incremental,markslice=1,markstack=4,percent=off",
};
enum { MODE_COUNT = sizeof MODES / sizeof MODES[0] };

static gc_value root[ROOTS]; /* global roots */

typedef struct fx {
  gc_heap *h;
  gc_domain *d;
  int incremental;
  gc_value garbage[GARBAGE]; /* unreachable when the cycle starts: not roots */
  size_t reachable;          /* blocks reachable when the cycle started */
  uint64_t cycles;           /* completed cycles before it */
} fx;

/* ---- Blocks ---------------------------------------------------------------------------------- */

static gc_value node(gc_domain *d, intptr_t id) {
  gc_value v = gc_alloc(d, NODE_WSIZE, GC_TAG_SCAN);
  CHECK(v != 0);
  if (v != 0) GC_FIELD(v, ID) = gc_val_int(id * 4096 + MAGIC); /* initialising */
  return v;
}

static int node_is(gc_value v, intptr_t id) {
  return v != 0 && GC_FIELD(v, ID) == gc_val_int(id * 4096 + MAGIC);
}

/* n nodes id, id+1, ... linked through NEXT; the head is returned, kept in a frame meanwhile. */
static gc_value chain(gc_domain *d, intptr_t id, int n) {
  gc_value head = 0;
  gc_frame f;
  gc_frame_push(d, &f, &head, 1);
  for (int i = n - 1; i >= 0; i--) {
    gc_value v = node(d, id + i);
    GC_FIELD(v, NEXT) = head; /* initialising: v is this domain's, no safepoint since */
    head = v;
  }
  gc_frame_pop(d, &f);
  return head;
}

/* The nodes of a chain hold ids id, id+1, ... and it has n of them. */
static int chain_is(gc_value v, intptr_t id, int n) {
  for (int i = 0; i < n; i++, v = GC_FIELD(v, NEXT)) {
    if (!node_is(v, id + i)) return 0;
  }
  return v == 0;
}

static size_t live(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s.pool_live_blocks + s.large_blocks;
}

static uint64_t cycles(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s.cycles;
}

/* After a cycle's colours rotated and before its sweep reached the block: the cycle found it
 * unreachable. */
static int doomed(fx *f, gc_value v) {
  return gc_hd_colour(gc_atomic_load_word(gc_hp_val(v))) == f->h->colours.garbage;
}

/* ---- The fixture ------------------------------------------------------------------------------ */

static void fx_open(fx *f, const char *mode) {
  memset(f, 0, sizeof *f);
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, mode, err, sizeof err) == GC_OK);
  f->h = gc_heap_create(&cfg);
  f->d = gc_main_domain(f->h);
  f->incremental = cfg.marking == GC_MARKING_INCREMENTAL;
  memset(root, 0, sizeof root);
  for (int i = 0; i < ROOTS; i++) gc_root_register(f->h, &root[i]);
  root[0] = chain(f->d, 1000000, BALLAST);
}

/* A swept heap of reachable blocks only, then garbage that the next cycle must free. */
static void fx_settle(fx *f) {
  gc_collect(f->d, GC_COLLECT_FULL);
  f->reachable = live(f->h);
  for (int i = 0; i < GARBAGE; i++) f->garbage[i] = node(f->d, 500000 + i);
}

static void fx_start(fx *f) {
  f->cycles = cycles(f->h);
  gc_collect(f->d, GC_COLLECT_START);
  CHECK(!f->incremental || gc_atomic_load_relaxed(&f->d->head.marking));
}

/* The mutations so far happened while the cycle marked (with incremental marking). */
#define MID_MARK(f, dom) CHECK(!(f)->incremental || gc_atomic_load_relaxed(&(dom)->head.marking))

/* Finish the cycle by slices on the main domain (with marking=stw it is over already). */
static void fx_end_cycle(fx *f) {
  for (long i = 0; i < 10000000 && cycles(f->h) == f->cycles; i++) {
    gc_collect(f->d, GC_COLLECT_SLICE);
  }
  CHECK_EQ_U(cycles(f->h), f->cycles + 1);
  CHECK(!gc_atomic_load_relaxed(&f->d->head.marking));
}

/* Finish the main domain's sweep (pacing is off: slices only sweep); the live blocks. */
static size_t fx_sweep(fx *f) {
  while (f->d->sweeping) gc_collect(f->d, GC_COLLECT_SLICE);
  return live(f->h);
}

static size_t fx_full(fx *f) {
  gc_collect(f->d, GC_COLLECT_FULL);
  return live(f->h);
}

static void fx_close(fx *f) {
  CHECK(chain_is(root[0], 1000000, BALLAST));
  for (int i = 0; i < ROOTS; i++) gc_root_unregister(f->h, &root[i]);
  gc_heap_destroy(f->h);
}

/* ---- Heap stores ------------------------------------------------------------------------------ */

/* A -> B -> C; mid-mark B is unlinked from A and linked from X, a block allocated mid-mark (born
 * MARKED, so never scanned this cycle): only the barrier's darkening of B keeps B and C. */
static void relinked_block_survives(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_value b[1] = {GC_FIELD(root[1], NEXT)};
  gc_frame fr;
  gc_frame_push(f.d, &fr, b, 1);
  gc_store(f.d, root[1], NEXT, 0);
  root[2] = node(f.d, 10);
  gc_store(f.d, root[2], NEXT, b[0]);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, b[0]) && !doomed(&f, GC_FIELD(b[0], NEXT)));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1);
  CHECK_EQ_U(fx_full(&f), f.reachable + 1);
  CHECK(chain_is(root[1], 1, 1) && node_is(root[2], 10) && chain_is(GC_FIELD(root[2], NEXT), 2, 2));
  gc_frame_pop(f.d, &fr);
  fx_close(&f);
}

/* The same, with GC_FIELD instead of gc_store (no barrier): the cycle loses B and C although a
 * frame and X hold B. The check the other tests rely on (doomed) sees it. The dangling
 * references are cleared before the sweep frees B, so nothing reads freed memory. */
static void unbarriered_store_loses_the_block(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_value b[1] = {GC_FIELD(root[1], NEXT)};
  gc_frame fr;
  gc_frame_push(f.d, &fr, b, 1);
  GC_FIELD(root[1], NEXT) = 0; /* wrong on purpose */
  root[2] = node(f.d, 10);
  GC_FIELD(root[2], NEXT) = b[0]; /* wrong on purpose: X is no longer initialising */
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(doomed(&f, b[0]) && doomed(&f, GC_FIELD(b[0], NEXT)));
  GC_FIELD(root[2], NEXT) = 0;
  b[0] = 0;
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1 - 2);
  gc_frame_pop(f.d, &fr);
  fx_close(&f);
}

/* Unlinked mid-mark and not relinked: floating garbage, kept by this cycle, freed by the next. */
static void unlinked_block_floats_one_cycle(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_value b = GC_FIELD(root[1], NEXT);
  gc_store(f.d, root[1], NEXT, 0);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, b) && !doomed(&f, GC_FIELD(b, NEXT)));
  CHECK_EQ_U(fx_sweep(&f), f.reachable);
  CHECK_EQ_U(fx_full(&f), f.reachable - 2);
  CHECK(chain_is(root[1], 1, 1));
  fx_close(&f);
}

/* Blocks allocated mid-mark, small and large, linked or not: all survive the cycle; the next
 * one frees those never linked. */
static void blocks_allocated_mid_mark_survive(const char *mode) {
  enum { LINKED = 100, LARGE_WSIZE = 300 };
  fx f;
  fx_open(&f, mode);
  fx_settle(&f);
  fx_start(&f);
  for (int i = 0; i < LINKED; i++) {
    gc_value v = node(f.d, 100 + i);
    GC_FIELD(v, NEXT) = root[1]; /* initialising */
    root[1] = v;
    if (i % 3 == 0) node(f.d, 300 + i); /* never linked */
  }
  root[2] = gc_alloc(f.d, LARGE_WSIZE, GC_TAG_SCAN);
  gc_store(f.d, root[2], LARGE_WSIZE - 1, root[1]);
  gc_alloc(f.d, LARGE_WSIZE, GC_TAG_SCAN); /* large, never linked */
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK_EQ_U(fx_sweep(&f), f.reachable + LINKED + (LINKED + 2) / 3 + 2);
  CHECK_EQ_U(fx_full(&f), f.reachable + LINKED + 1);
  for (int i = LINKED - 1; i >= 0; i--) {
    CHECK(node_is(root[1], 100 + i));
    root[1] = GC_FIELD(root[1], NEXT);
  }
  fx_close(&f);
}

/* GC_COLLECT_START while a cycle marks does nothing; GC_COLLECT_MAJOR finishes the cycle under
 * way and then runs a whole one, which frees what the first left floating. */
static void major_finishes_the_cycle_under_way(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_store(f.d, root[1], NEXT, 0);
  node(f.d, 10); /* born MARKED, never linked */
  gc_collect(f.d, GC_COLLECT_START);
  MID_MARK(&f, f.d);
  /* stw: each START was a whole cycle; incremental: the second START did nothing. */
  CHECK_EQ_U(cycles(f.h), f.cycles + (f.incremental ? 0 : 2));
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(cycles(f.h), f.cycles + (f.incremental ? 2 : 3));
  CHECK_EQ_U(fx_sweep(&f), f.reachable - 2);
  CHECK(chain_is(root[1], 1, 1));
  fx_close(&f);
}

/* ---- Roots ------------------------------------------------------------------------------------ */

/* A frame popped mid-mark leaves its blocks floating; a frame pushed mid-mark holds a block
 * loaded from the heap and one allocated since. */
static void frames_pushed_and_popped_mid_mark(const char *mode) {
  fx f;
  fx_open(&f, mode);
  gc_value a[1] = {0};
  gc_frame outer;
  gc_frame_push(f.d, &outer, a, 1);
  a[0] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_value held[2] = {GC_FIELD(a[0], NEXT), 0};
  gc_value a_block = a[0];
  CHECK(gc_frame_pop(f.d, &outer) == GC_OK); /* A: floating */
  gc_frame inner;
  gc_frame_push(f.d, &inner, held, 2);
  gc_store(f.d, held[0], NEXT, 0); /* C: floating */
  held[1] = node(f.d, 50);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, a_block) && !doomed(&f, held[0]));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1);
  CHECK_EQ_U(fx_full(&f), f.reachable + 1 - 2);
  CHECK(chain_is(held[0], 2, 1) && node_is(held[1], 50));
  gc_frame_pop(f.d, &inner);
  fx_close(&f);
}

/* Global roots registered and unregistered mid-mark. */
static void global_roots_mid_mark(const char *mode) {
  static gc_value g1, g2, g3;
  fx f;
  fx_open(&f, mode);
  g1 = chain(f.d, 1, 3);
  CHECK(gc_root_register(f.h, &g1) == GC_OK);
  fx_settle(&f);
  fx_start(&f);
  g2 = GC_FIELD(g1, NEXT);
  CHECK(gc_root_register(f.h, &g2) == GC_OK);
  CHECK(gc_root_unregister(f.h, &g1) == GC_OK); /* A: floating */
  g3 = node(f.d, 60);
  CHECK(gc_root_register(f.h, &g3) == GC_OK);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, g1));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1);
  g1 = 0;
  CHECK_EQ_U(fx_full(&f), f.reachable + 1 - 1);
  CHECK(chain_is(g2, 2, 2) && node_is(g3, 60));
  CHECK(gc_root_unregister(f.h, &g2) == GC_OK && gc_root_unregister(f.h, &g3) == GC_OK);
  fx_close(&f);
}

/* Conservative words change without a barrier: a block only a word held at the start floats
 * when the word is cleared; one moved to another word, one whose root was cleared after a word
 * took it, and one allocated mid-mark that only a word holds, all stay. With incremental marking
 * the stop that ends the cycle scans the ranges again, so a word written mid-mark into a block
 * that was garbage at the start keeps it too (with marking=stw that block was freed already). */
static void conservative_words_written_mid_mark(const char *mode) {
  static uintptr_t range[8];
  memset(range, 0, sizeof range);
  fx f;
  fx_open(&f, mode);
  CHECK(gc_conservative_add(f.h, range, sizeof range) == GC_OK);
  gc_value moved = node(f.d, 1), dropped = node(f.d, 2);
  range[0] = (uintptr_t)moved + 2 * sizeof(gc_value) + 3; /* inside its last field */
  range[1] = (uintptr_t)dropped;
  root[1] = node(f.d, 3);
  gc_value rooted = root[1];
  fx_settle(&f);
  fx_start(&f);
  range[2] = range[0];
  range[0] = 0;
  range[1] = 0;                             /* dropped: floating */
  range[3] = (uintptr_t)gc_hp_val(root[1]); /* the header counts as inside */
  root[1] = 0;
  gc_value born = node(f.d, 4);
  range[4] = (uintptr_t)born + 8;
  gc_value revived = f.garbage[0];
  if (f.incremental) range[5] = (uintptr_t)revived;
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, moved) && !doomed(&f, dropped) && !doomed(&f, rooted) && !doomed(&f, born));
  if (f.incremental) CHECK(!doomed(&f, revived) && node_is(revived, 500000));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1 + (size_t)f.incremental);
  range[5] = 0;
  CHECK_EQ_U(fx_full(&f), f.reachable + 1 - 1);
  CHECK(node_is(moved, 1) && node_is(rooted, 3) && node_is(born, 4));
  CHECK(gc_conservative_remove(f.h, range) == GC_OK);
  fx_close(&f);
}

/* ---- Pins ------------------------------------------------------------------------------------- */

/* Pinned mid-mark and unrooted: the pin keeps it and, through its fields, its child. Pinned
 * before and unpinned mid-mark: floating. Allocated, pinned and given a child mid-mark: kept.
 * Pinned and unpinned mid-mark: as if never pinned. */
static void pins_mid_mark(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 2);
  gc_value unpinned = chain(f.d, 3, 2);
  CHECK(gc_pin(f.h, unpinned) == GC_OK);
  root[2] = chain(f.d, 5, 1);
  fx_settle(&f);
  fx_start(&f);
  gc_value pinned = root[1];
  CHECK(gc_pin(f.h, pinned) == GC_OK);
  root[1] = 0;
  CHECK(gc_unpin(f.h, unpinned) == GC_OK);
  gc_value born = node(f.d, 80);
  CHECK(gc_pin(f.h, born) == GC_OK);
  gc_store(f.d, born, NEXT, node(f.d, 81));
  gc_value brief = node(f.d, 82);
  CHECK(gc_pin(f.h, brief) == GC_OK && gc_unpin(f.h, brief) == GC_OK);
  CHECK(gc_pin(f.h, root[2]) == GC_OK && gc_unpin(f.h, root[2]) == GC_OK);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, pinned) && !doomed(&f, GC_FIELD(pinned, NEXT)));
  CHECK(!doomed(&f, unpinned) && !doomed(&f, GC_FIELD(unpinned, NEXT)));
  CHECK(!doomed(&f, brief) && !doomed(&f, root[2]));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 3);
  CHECK_EQ_U(fx_full(&f), f.reachable + 3 - 3);
  CHECK(chain_is(pinned, 1, 2) && chain_is(root[2], 5, 1));
  CHECK(node_is(born, 80) && node_is(GC_FIELD(born, NEXT), 81));
  CHECK(gc_unpin(f.h, pinned) == GC_OK && gc_unpin(f.h, born) == GC_OK);
  CHECK_EQ_U(fx_full(&f), f.reachable - 4);
  fx_close(&f);
}

/* Pinned mid-mark with the mark stack full (markstack=4 and six roots fill it when the cycle
 * starts): the block pinned is not scanned through a work buffer, and once NOT_MARKABLE no
 * re-darkening pass scans it either; what it points to must still be marked. */
static void pin_mid_mark_with_the_mark_stack_full(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  for (int i = 2; i < ROOTS; i++) root[i] = node(f.d, 10 + i);
  fx_settle(&f);
  fx_start(&f);
  gc_value pinned = GC_FIELD(root[1], NEXT);
  CHECK(gc_pin(f.h, pinned) == GC_OK);
  gc_store(f.d, root[1], NEXT, 0); /* the child is reachable only through the pinned block */
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, GC_FIELD(pinned, NEXT)));
  CHECK_EQ_U(fx_sweep(&f), f.reachable);
  CHECK_EQ_U(fx_full(&f), f.reachable);
  CHECK(chain_is(pinned, 2, 2));
  CHECK(gc_unpin(f.h, pinned) == GC_OK);
  CHECK_EQ_U(fx_full(&f), f.reachable - 2);
  fx_close(&f);
}

/* ---- Finalizers ------------------------------------------------------------------------------- */

static int fin_runs[1024];
static void note_run(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)user;
  fin_runs[(gc_int_val(GC_FIELD(block, ID)) >> 12) % 1024]++;
}

/* Set mid-mark on a block then unlinked: it floats this cycle, is queued by the next (its child
 * kept meanwhile) and freed by the one after. Cleared mid-mark: never runs. Set on a block born
 * mid-mark and never linked: runs after the next cycle. Set before the start on garbage: queued
 * by this cycle, so it runs when the cycle ends. */
static void finalizers_mid_mark(const char *mode) {
  memset(fin_runs, 0, sizeof fin_runs);
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 2);
  root[2] = chain(f.d, 3, 2);
  CHECK(gc_finalizer_set(f.h, root[2], note_run, NULL) == GC_OK);
  fx_settle(&f);
  CHECK(gc_finalizer_set(f.h, f.garbage[1], note_run, NULL) == GC_OK);
  fx_start(&f);
  CHECK(gc_finalizer_set(f.h, root[1], note_run, NULL) == GC_OK);
  root[1] = 0;
  CHECK(gc_finalizer_clear(f.h, root[2]) == GC_OK);
  root[2] = 0;
  gc_value born = node(f.d, 90);
  CHECK(gc_finalizer_set(f.h, born, note_run, NULL) == GC_OK);
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(fin_runs[1] == 0 && fin_runs[3] == 0 && fin_runs[90] == 0);
  CHECK_EQ_U(fin_runs[500001 % 1024], 1);
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1 + 1); /* born; the garbage block, queued */
  /* Freed: the block whose finalizer was cleared, its child, and the garbage block, its
   * finalizer run. Queued: root[1]'s old block (its child kept) and born. */
  CHECK_EQ_U(fx_full(&f), f.reachable + 2 - 3);
  CHECK(fin_runs[1] == 1 && fin_runs[3] == 0 && fin_runs[90] == 1);
  CHECK_EQ_U(fx_full(&f), f.reachable - 4);
  CHECK(fin_runs[1] == 1 && fin_runs[3] == 0 && fin_runs[90] == 1);
  CHECK_EQ_U(fin_runs[500001 % 1024], 1);
  fx_close(&f);
}

/* ---- Domains ---------------------------------------------------------------------------------- */

/* This thread stops running `from` and runs `to`. */
static void switch_to(gc_domain *from, gc_domain *to) {
  gc_enter_blocking(from);
  gc_leave_blocking(to);
}

/* A domain spawned mid-mark joins the cycle: its stores darken (the relink of
 * relinked_block_survives, on it) and it marks slices. */
static void domain_spawned_mid_mark(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  fx_settle(&f);
  fx_start(&f);
  gc_domain *e = gc_domain_spawn(f.d);
  CHECK(e != NULL);
  switch_to(f.d, e);
  MID_MARK(&f, e);
  gc_value b[1] = {GC_FIELD(root[1], NEXT)};
  gc_frame fr;
  gc_frame_push(e, &fr, b, 1);
  gc_store(e, root[1], NEXT, 0);
  root[2] = node(e, 10);
  gc_store(e, root[2], NEXT, b[0]);
  for (int i = 0; i < 3; i++) gc_collect(e, GC_COLLECT_SLICE);
  MID_MARK(&f, e);
  gc_frame_pop(e, &fr);
  switch_to(e, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, b[0]) && !doomed(&f, GC_FIELD(b[0], NEXT)));
  switch_to(f.d, e);
  CHECK(gc_domain_terminate(e) == GC_OK);
  gc_leave_blocking(f.d);
  CHECK_EQ_U(fx_full(&f), f.reachable + 1);
  CHECK(chain_is(root[1], 1, 1) && node_is(root[2], 10) && chain_is(GC_FIELD(root[2], NEXT), 2, 2));
  fx_close(&f);
}

/* A domain that darkened a block (grey in its own buffer) and allocated mid-mark terminates
 * before marking ends: its grey work and its blocks, now orphans, are not lost. Afterwards the
 * main domain allocates from the orphaned pools while the cycle still marks. */
static void domain_terminated_mid_mark(const char *mode) {
  enum { LOOSE = 50, ADOPTED = 300 };
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  gc_domain *e = gc_domain_spawn(f.d);
  switch_to(f.d, e);
  root[3] = chain(e, 2000, 200); /* in e's pools, orphaned when it terminates */
  switch_to(e, f.d);
  fx_settle(&f);
  switch_to(f.d, e);
  for (int i = 0; i < LOOSE; i++) node(e, 3000 + i); /* garbage at the start, in e's pools */
  switch_to(e, f.d);
  fx_start(&f);
  switch_to(f.d, e);
  MID_MARK(&f, e);
  gc_value b = GC_FIELD(root[1], NEXT);
  gc_store(e, root[1], NEXT, 0);
  root[2] = node(e, 10);
  gc_store(e, root[2], NEXT, b);
  for (int i = 0; i < LOOSE; i++) node(e, 4000 + i); /* born MARKED, never linked */
  CHECK(gc_domain_terminate(e) == GC_OK);
  gc_leave_blocking(f.d);
  for (int i = 0; i < ADOPTED; i++) {
    gc_value v = node(f.d, 5000 + i);
    GC_FIELD(v, NEXT) = root[4]; /* initialising */
    root[4] = v;
  }
  MID_MARK(&f, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, b) && !doomed(&f, GC_FIELD(b, NEXT)));
  CHECK_EQ_U(fx_sweep(&f), f.reachable + 1 + LOOSE + ADOPTED);
  CHECK_EQ_U(fx_full(&f), f.reachable + 1 + ADOPTED);
  gc_stats s;
  gc_get_stats(f.h, &s);
  CHECK_EQ_U(s.orphan_pool_words, 0);
  CHECK(chain_is(root[1], 1, 1) && node_is(root[2], 10) && chain_is(GC_FIELD(root[2], NEXT), 2, 2));
  CHECK(chain_is(root[3], 2000, 200));
  gc_value v = root[4];
  for (int i = ADOPTED - 1; i >= 0; i--, v = GC_FIELD(v, NEXT)) CHECK(node_is(v, 5000 + i));
  fx_close(&f);
}

/* A domain in a blocking section mid-mark: its frames (darkened when the cycle started) and the
 * work its barrier left grey are marked by the others, who end the cycle without it. */
static void blocking_section_mid_mark(const char *mode) {
  fx f;
  fx_open(&f, mode);
  root[1] = chain(f.d, 1, 3);
  gc_domain *e = gc_domain_spawn(f.d);
  switch_to(f.d, e);
  gc_value held[2] = {0, 0};
  gc_frame fr;
  gc_frame_push(e, &fr, held, 2);
  held[0] = chain(e, 30, 2);
  switch_to(e, f.d);
  fx_settle(&f);
  fx_start(&f);
  switch_to(f.d, e);
  held[1] = GC_FIELD(root[1], NEXT);
  gc_store(e, root[1], NEXT, 0); /* B: grey in e's buffer until e blocks */
  MID_MARK(&f, e);
  switch_to(e, f.d);
  fx_end_cycle(&f);
  CHECK(!doomed(&f, held[0]) && !doomed(&f, GC_FIELD(held[0], NEXT)));
  CHECK(!doomed(&f, held[1]) && !doomed(&f, GC_FIELD(held[1], NEXT)));
  CHECK_EQ_U(fx_full(&f), f.reachable);
  CHECK(chain_is(held[0], 30, 2) && chain_is(held[1], 2, 2) && chain_is(root[1], 1, 1));
  switch_to(f.d, e);
  gc_frame_pop(e, &fr);
  CHECK(gc_domain_terminate(e) == GC_OK);
  gc_leave_blocking(f.d);
  CHECK_EQ_U(fx_full(&f), f.reachable - 4);
  fx_close(&f);
}

/* ---- Counters --------------------------------------------------------------------------------- */

/* Slices and stops are counted: a finished incremental cycle ran slices and stopped the world at
 * least twice (start and end); a stop-the-world cycle stopped it once and ran no slice. */
static void slices_and_pauses_counted(const char *mode) {
  fx f;
  fx_open(&f, mode);
  fx_settle(&f);
  gc_stats before, after;
  gc_get_stats(f.h, &before);
  fx_start(&f);
  fx_end_cycle(&f);
  gc_get_stats(f.h, &after);
  if (f.incremental) {
    CHECK(after.mark_slices > before.mark_slices);
    CHECK(after.pauses >= before.pauses + 2);
  } else {
    CHECK_EQ_U(after.mark_slices, before.mark_slices);
    CHECK_EQ_U(after.pauses, before.pauses + 1);
  }
  fx_close(&f);
}

#define RUN_MODES(test)                                                                   \
  do {                                                                                    \
    for (int mode_ = 0; mode_ < MODE_COUNT; mode_++) {                                    \
      int before_ = check_failures;                                                       \
      test(MODES[mode_]);                                                                 \
      fprintf(stderr, "%s %s (%s)\n", check_failures == before_ ? "ok  " : "FAIL", #test, \
              MODES[mode_]);                                                              \
    }                                                                                     \
  } while (0)

int main(void) {
  RUN_MODES(relinked_block_survives);
  RUN_MODES(unlinked_block_floats_one_cycle);
  RUN_MODES(blocks_allocated_mid_mark_survive);
  RUN_MODES(major_finishes_the_cycle_under_way);
  RUN_MODES(frames_pushed_and_popped_mid_mark);
  RUN_MODES(global_roots_mid_mark);
  RUN_MODES(conservative_words_written_mid_mark);
  RUN_MODES(pins_mid_mark);
  RUN_MODES(pin_mid_mark_with_the_mark_stack_full);
  RUN_MODES(finalizers_mid_mark);
  RUN_MODES(domain_spawned_mid_mark);
  RUN_MODES(domain_terminated_mid_mark);
  RUN_MODES(blocking_section_mid_mark);
  RUN_MODES(slices_and_pauses_counted);
  /* Only incremental marking has a barrier whose absence shows, and with a roomy mark stack: an
   * overflow's re-darkening scans every MARKED block of a flagged pool, born MARKED ones too, and
   * may find the block the missing barrier lost. */
  int before = check_failures;
  unbarriered_store_loses_the_block(MODES[1]);
  fprintf(stderr, "%s unbarriered_store_loses_the_block (%s)\n",
          check_failures == before ? "ok  " : "FAIL", MODES[1]);
  CHECK_MAIN_END();
}
