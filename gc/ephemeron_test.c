/* Ephemerons and weak references (gc.h): what a datum keeps and what it does not, chains and
 * cycles of keys, weak references cleared, gets during incremental marking, the order with
 * finalizers, a domain that terminates holding ephemerons, and the misuses refused. Each test
 * runs in both marking modes where the mode matters. */
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"

static const char *const modes[] = {"marking=stw", "marking=incremental"};

static gc_heap *heap_with(const char *params) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  if (gc_config_parse(&cfg, params, err, sizeof err) != GC_OK) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  return gc_heap_create(&cfg);
}

/* A one-field block holding the immediate n. */
static gc_value leaf(gc_domain *d, intptr_t n) {
  gc_value v = gc_alloc(d, 1, GC_TAG_SCAN);
  GC_FIELD(v, 0) = gc_val_int(n);
  return v;
}

static int holds(gc_value v, intptr_t n) { return v != 0 && GC_FIELD(v, 0) == gc_val_int(n); }

static gc_stats stats_of(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s;
}

/* Roots the tests share: registered per heap, emptied after. */
enum { ROOTS = 8 };
static gc_value root[ROOTS];

static void roots_on(gc_heap *h) {
  memset(root, 0, sizeof root);
  for (int i = 0; i < ROOTS; i++) gc_root_register(h, &root[i]);
}

static void done(gc_heap *h) {
  for (int i = 0; i < ROOTS; i++) gc_root_unregister(h, &root[i]);
  gc_heap_destroy(h);
}

/* ---- Semantics ------------------------------------------------------------------------------ */

static void datum_lives_while_key_lives(void) {
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 1); /* the key */
    root[1] = leaf(d, 2); /* the datum, rooted only across the allocation */
    root[2] = gc_ephemeron_alloc(d, root[0], root[1], 1);
    gc_value datum = root[1];
    root[1] = 0;
    CHECK_EQ_U(gc_tag(root[2]), GC_TAG_EPHEMERON);
    CHECK_EQ_U(gc_wsize(root[2]), GC_EPHE_DATA + 1);
    for (int i = 0; i < 3; i++) gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_key(d, root[2]) == root[0]);
    CHECK(gc_ephemeron_datum(d, root[2]) == datum && holds(datum, 2));
    CHECK_EQ_U(stats_of(h).ephemerons, 1);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 3);
    root[0] = 0; /* the key dies: the datum with it */
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_key(d, root[2]) == 0);
    CHECK(gc_ephemeron_datum(d, root[2]) == 0);
    gc_stats s = stats_of(h);
    CHECK_EQ_U(s.pool_live_blocks, 1);
    CHECK(s.weak_cleared >= 1);
    CHECK(s.ephe_data >= 3); /* each cycle marked the datum through its key */
    done(h);
  }
}

/* A datum that points at its own key keeps nothing alive: the key is reached only by others. */
static void datum_does_not_keep_its_key(void) {
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 1);
    root[1] = gc_alloc(d, 1, GC_TAG_SCAN);
    GC_FIELD(root[1], 0) = root[0]; /* datum -> key */
    root[2] = gc_ephemeron_alloc(d, root[0], root[1], 0);
    root[0] = root[1] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_datum(d, root[2]) == 0);
    CHECK(gc_ephemeron_key(d, root[2]) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 1);
    done(h);
  }
}

/* Keys reached only through other ephemerons' data: a chain lives from a rooted key, and takes
 * a round per link; a cycle of ephemerons, each keyed by the other's datum, keeps nothing. */
static void chains_and_cycles(void) {
  enum { LINKS = 40 };
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 0);                      /* K0, rooted */
    root[1] = gc_alloc(d, LINKS, GC_TAG_SCAN); /* the ephemerons, strongly held */
    root[2] = root[0];                         /* the key of the next link */
    for (intptr_t i = 1; i <= LINKS; i++) {
      root[3] = leaf(d, i);
      /* Newest first on the list: made in chain order, a round finds the links backwards. */
      gc_value e = gc_ephemeron_alloc(d, root[2], root[3], 0);
      gc_store(d, root[1], (size_t)(i - 1), e);
      root[2] = root[3];
    }
    root[2] = root[3] = 0;
    uint64_t rounds_before = stats_of(h).ephe_rounds;
    gc_collect(d, GC_COLLECT_FULL);
    int all = 1;
    for (intptr_t i = 1; i <= LINKS; i++) {
      all &= holds(gc_ephemeron_datum(d, GC_FIELD(root[1], i - 1)), i);
    }
    CHECK(all);
    CHECK(stats_of(h).ephe_rounds - rounds_before >= 2);
    root[0] = 0; /* the first key dies: the whole chain with it */
    gc_collect(d, GC_COLLECT_FULL);
    int none = 1;
    for (intptr_t i = 1; i <= LINKS; i++)
      none &= gc_ephemeron_datum(d, GC_FIELD(root[1], i - 1)) == 0;
    CHECK(none);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 1 + LINKS);
    /* A cycle: A keys B, B keys A, nothing else holds either. */
    root[4] = leaf(d, 100);
    root[5] = leaf(d, 101);
    root[6] = gc_ephemeron_alloc(d, root[4], root[5], 0);
    root[7] = gc_ephemeron_alloc(d, root[5], root[4], 0);
    root[4] = root[5] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_datum(d, root[6]) == 0 && gc_ephemeron_datum(d, root[7]) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 1 + LINKS + 2);
    done(h);
  }
}

/* An immediate key never dies; an empty one keeps nothing. */
static void immediate_and_empty_keys(void) {
  gc_heap *h = heap_with("marking=stw");
  gc_domain *d = gc_main_domain(h);
  roots_on(h);
  root[0] = leaf(d, 5);
  root[1] = gc_ephemeron_alloc(d, gc_val_int(3), root[0], 0);
  root[2] = gc_ephemeron_alloc(d, 0, root[0], 0);
  root[0] = 0;
  gc_collect(d, GC_COLLECT_FULL);
  CHECK(holds(gc_ephemeron_datum(d, root[1]), 5));
  CHECK(gc_ephemeron_datum(d, root[2]) == 0); /* no key: none, whatever the datum slot holds */
  CHECK_EQ_U(stats_of(h).pool_live_blocks, 3);
  done(h);
}

static void weak_cleared_when_target_dies(void) {
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 9);
    root[1] = gc_weak_alloc(d, root[0], 2);
    CHECK_EQ_U(gc_tag(root[1]), GC_TAG_WEAK);
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_weak_get(d, root[1]) == root[0] && holds(root[0], 9));
    root[0] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_weak_get(d, root[1]) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 1);
    CHECK_EQ_U(stats_of(h).weak_refs, 1);
    root[1] = 0; /* the weak reference itself dies: off its list */
    gc_collect(d, GC_COLLECT_FULL);
    CHECK_EQ_U(stats_of(h).weak_refs, 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 0);
    done(h);
  }
}

/* Slices until the cycle marking now has rotated its colours. */
static void finish_cycle(gc_heap *h, gc_domain *d) {
  uint64_t cycles = stats_of(h).cycles;
  while (stats_of(h).cycles == cycles) gc_collect(d, GC_COLLECT_SLICE);
}

/* A weak get during marking hands the mutator a block nothing else held when marking began: it
 * must be shaded, or the cycle clears the slot and frees the block the mutator now roots. */
static void weak_get_mid_mark_shades(void) {
  gc_heap *h = heap_with("marking=incremental,markslice=1");
  gc_domain *d = gc_main_domain(h);
  roots_on(h);
  root[0] = leaf(d, 11);
  root[1] = gc_weak_alloc(d, root[0], 0);
  root[0] = 0;
  gc_collect(d, GC_COLLECT_START);
  root[2] = gc_weak_get(d, root[1]); /* weak to strong, mid-mark */
  CHECK(holds(root[2], 11));
  finish_cycle(h, d);
  CHECK(gc_weak_get(d, root[1]) == root[2]);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK(gc_weak_get(d, root[1]) == root[2] && holds(root[2], 11));
  done(h);
}

/* The same for an ephemeron's datum, and a datum replaced mid-mark (the barrier darkens the old
 * one: the snapshot keeps it this cycle). */
static void ephemeron_mid_mark(void) {
  gc_heap *h = heap_with("marking=incremental,markslice=1");
  gc_domain *d = gc_main_domain(h);
  roots_on(h);
  root[0] = leaf(d, 1); /* key */
  root[1] = leaf(d, 2);
  root[2] = gc_ephemeron_alloc(d, root[0], root[1], 0);
  root[1] = 0;
  gc_collect(d, GC_COLLECT_START);
  root[3] = leaf(d, 3); /* born MARKED */
  gc_ephemeron_set_datum(d, root[2], root[3]);
  root[4] = gc_ephemeron_datum(d, root[2]);
  CHECK(root[4] == root[3]);
  finish_cycle(h, d);
  CHECK(holds(gc_ephemeron_datum(d, root[2]), 3));
  root[3] = root[4] = 0;
  gc_collect(d, GC_COLLECT_FULL);
  CHECK(holds(gc_ephemeron_datum(d, root[2]), 3)); /* kept through the key alone */
  CHECK_EQ_U(stats_of(h).pool_live_blocks, 3);
  done(h);
}

/* The order (gc.h): weak slots naming a dead block are cleared before its finalizer runs, and
 * resurrection does not bring them back; the ephemerons keyed by it keep their data for the
 * finalizer, and are cleared once the block dies again. */
static gc_value seen_weak, seen_datum;
static int finalized;

static void note_finalizer(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  gc_domain *d = user;
  finalized++;
  seen_weak = gc_weak_get(d, root[1]);
  seen_datum = gc_ephemeron_datum(d, root[2]);
  root[3] = block; /* resurrected */
}

static void cleared_before_finalizers(void) {
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 1);
    root[4] = leaf(d, 2);
    root[1] = gc_weak_alloc(d, root[0], 0);
    root[2] = gc_ephemeron_alloc(d, root[0], root[4], 0);
    root[4] = 0;
    CHECK(gc_finalizer_set(h, root[0], note_finalizer, d) == GC_OK);
    root[0] = 0;
    finalized = 0;
    seen_weak = seen_datum = 1;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK_EQ_U(finalized, 1);
    CHECK(seen_weak == 0 && holds(seen_datum, 2));
    CHECK(holds(root[3], 1)); /* alive again, its weak references still empty */
    CHECK(gc_weak_get(d, root[1]) == 0 && gc_ephemeron_key(d, root[2]) == root[3]);
    root[3] = 0; /* dead again, its finalizer run: the ephemeron is cleared */
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_key(d, root[2]) == 0 && gc_ephemeron_datum(d, root[2]) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 2);
    done(h);
  }
}

/* A domain that terminates, in both modes and once in the middle of an incremental mark, leaves
 * its ephemerons to the orphans: they keep working, and are cleared when their key dies. */
static void terminated_domain_keeps_ephemerons(void) {
  for (int m = 0; m < 3; m++) {
    gc_heap *h = heap_with(modes[m % 2]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    gc_domain *o = gc_domain_spawn(d);
    gc_enter_blocking(d);
    gc_leave_blocking(o);
    root[0] = leaf(o, 1);
    root[1] = leaf(o, 2);
    root[2] = gc_ephemeron_alloc(o, root[0], root[1], 0);
    root[3] = gc_weak_alloc(o, root[1], 0);
    root[1] = 0;
    gc_enter_blocking(o);
    gc_leave_blocking(d);
    if (m == 2) gc_collect(d, GC_COLLECT_START); /* o terminates mid-mark */
    gc_enter_blocking(d);
    gc_leave_blocking(o);
    CHECK(gc_domain_terminate(o) == GC_OK);
    gc_leave_blocking(d);
    CHECK_EQ_U(stats_of(h).ephemerons, 1);
    CHECK_EQ_U(stats_of(h).weak_refs, 1);
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(holds(gc_ephemeron_datum(d, root[2]), 2));
    CHECK(gc_weak_get(d, root[3]) == gc_ephemeron_datum(d, root[2]));
    root[0] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_ephemeron_datum(d, root[2]) == 0 && gc_weak_get(d, root[3]) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 2);
    done(h);
  }
}

static void misuse_refused(void) {
  gc_heap *h = heap_with("marking=stw");
  gc_domain *d = gc_main_domain(h);
  roots_on(h);
  CHECK(gc_alloc(d, 3, GC_TAG_EPHEMERON) == 0 && gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_alloc(d, 2, GC_TAG_WEAK) == 0 && gc_last_error(h) == GC_ERR_BAD_TAG);
  root[0] = leaf(d, 1);
  root[1] = gc_weak_alloc(d, root[0], 0);
  root[2] = gc_ephemeron_alloc(d, root[0], root[0], 0);
  CHECK(gc_weak_get(d, root[2]) == 0 && gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_ephemeron_datum(d, root[1]) == 0 && gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_ephemeron_key(d, root[0]) == 0 && gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_weak_get(d, gc_val_int(4)) == 0 && gc_last_error(h) == GC_ERR_NOT_BLOCK);
  gc_clear_error(h);
  gc_weak_set(d, root[2], root[0]); /* not a weak reference: nothing changes */
  CHECK(gc_last_error(h) == GC_ERR_BAD_TAG && gc_ephemeron_key(d, root[2]) == root[0]);
  CHECK(gc_weak_alloc(d, 0, GC_MAX_WSIZE) == 0 && gc_last_error(h) == GC_ERR_TOO_LARGE);
  done(h);
}

/* A pinned weak reference and a pinned ephemeron live without a root; their slots stay weak. */
static void pinned_stay_weak(void) {
  for (int m = 0; m < 2; m++) {
    gc_heap *h = heap_with(modes[m]);
    gc_domain *d = gc_main_domain(h);
    roots_on(h);
    root[0] = leaf(d, 1);
    root[1] = leaf(d, 2);
    gc_value w = gc_weak_alloc(d, root[0], 0);
    gc_value e = gc_ephemeron_alloc(d, root[0], root[1], 0);
    CHECK(gc_pin(h, w) == GC_OK && gc_pin(h, e) == GC_OK);
    root[1] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_weak_get(d, w) == root[0] && holds(gc_ephemeron_datum(d, e), 2));
    root[0] = 0;
    gc_collect(d, GC_COLLECT_FULL);
    CHECK(gc_weak_get(d, w) == 0 && gc_ephemeron_datum(d, e) == 0);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 2);
    CHECK(gc_unpin(h, w) == GC_OK && gc_unpin(h, e) == GC_OK);
    gc_collect(d, GC_COLLECT_FULL);
    CHECK_EQ_U(stats_of(h).pool_live_blocks, 0);
    done(h);
  }
}

int main(void) {
  RUN(datum_lives_while_key_lives);
  RUN(datum_does_not_keep_its_key);
  RUN(chains_and_cycles);
  RUN(immediate_and_empty_keys);
  RUN(weak_cleared_when_target_dies);
  RUN(weak_get_mid_mark_shades);
  RUN(ephemeron_mid_mark);
  RUN(cleared_before_finalizers);
  RUN(terminated_domain_keeps_ephemerons);
  RUN(pinned_stay_weak);
  RUN(misuse_refused);
  CHECK_MAIN_END();
}
