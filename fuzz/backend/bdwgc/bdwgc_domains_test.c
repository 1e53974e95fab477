/* The bdwgc backend's domains (threads made by GC_pthread_create), driven through the table: ops
 * on several threads, incremental steps and full collections started from them, blocks made on
 * one thread and reached from another, finalizers that allocate while they run on a domain's
 * thread, and domains ended while what they allocated stays reachable. Each in a stop-the-world
 * heap and then in an incremental one, where a cycle left mid-mark by one thread is finished by
 * another.
 *
 * Each check also holds for the single-threaded backend; what the threads add is that bdwgc must
 * see every thread's allocations (thread-local free lists), stop the parked threads for each
 * collection, keep the barrier's dirty bits whichever thread stored, and hand an ended thread's
 * free lists back without losing or repeating an object. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/bdwgc/bdwgc_test.h"
#include "gc.h"

enum { SELF = CELLS, DOMAINS = 4 };

/* The driver's side of the finalizer callback: which thread ran each, and what its body made. */
typedef struct dom_driver {
  fuzz_bheap *h;
  size_t ran;
  uint64_t ids[64];
  pthread_t threads[64];
  bool allocate; /* the body allocates, stores, reads back, sets a finalizer, makes a weak ref */
  size_t made;   /* blocks the bodies made and kept (chained from cell 12) */
  size_t body_failures;
  size_t order_cell;    /* 0, or a cell whose finalizer each body clears and then sets */
  size_t order_cleared; /* how many of those clears found a finalizer set */
} dom_driver;

/* A finalizer body that uses every call a body may: its block is in SELF. The blocks it makes
 * are chained from cell 12 through field 0 (cell 12 is never touched by the tests otherwise);
 * cells 13 and 14 are its scratch. */
static void on_finalize(void *user, uint64_t token) {
  dom_driver *d = user;
  fuzz_bheap *h = d->h;
  if (d->ran < 64) {
    d->ids[d->ran] = id_of(h, SELF);
    d->threads[d->ran] = pthread_self();
  }
  d->ran++;
  if (d->order_cell != 0) {
    d->order_cleared += (size_t)B->fin_clear(h, d->order_cell);
    if (B->fin_set(h, d->order_cell, token + 1000) != 1) d->body_failures++;
  }
  if (!d->allocate) return;
  uint64_t id = 0x70000000 + token;
  if (B->alloc(h, 13, FUZZ_SHAPE_SCAN, 3) != 1) {
    d->body_failures++;
    return;
  }
  B->set_ident(h, 13, id, ~id);
  B->store(h, 13, 0, 12); /* the chain so far */
  B->store(h, 13, 1, SELF);
  B->store_int(h, 13, 2, (int64_t)token);
  B->copy(h, 12, 13);
  int64_t v = 0;
  if (B->load(h, 14, 12, 2, &v) != FUZZ_FIELD_INT || v != (int64_t)token) d->body_failures++;
  if (B->alloc(h, 14, FUZZ_SHAPE_RAW, 4) != 1) d->body_failures++;
  B->set_ident(h, 14, id + 1, ~(id + 1));
  B->raw_write(h, 14, 3, token);
  if (B->raw_read(h, 14, 3) != token || id_of(h, 14) != id + 1) d->body_failures++;
  if (B->weak_new(h, 14, 13) != 1) d->body_failures++;
  B->set_ident(h, 14, id + 2, ~(id + 2));
  if (B->weak_get(h, 14, 14) != 1 || id_of(h, 14) != id) d->body_failures++;
  if (B->fin_set(h, 14, token + 1) != 1 || B->fin_clear(h, 14) != 1) d->body_failures++;
  B->clear(h, 13);
  B->clear(h, 14);
  d->made++;
}

static fuzz_bheap *make_dom(dom_driver *d, const char *params) {
  memset(d, 0, sizeof *d);
  fuzz_backend_config cfg = {.cells = CELLS, .params = params, .out = stderr};
  cfg.events.user = d;
  cfg.events.finalize = on_finalize;
  d->h = B->create(&cfg);
  return d->h;
}

/* A list of n blocks in cell `head` with ids first_id.., each allocated on the domain running
 * now, with garbage between (cells 1 and 2 are scratch). */
static void build_list_at(fuzz_bheap *h, size_t head, size_t n, uint64_t first_id) {
  CHECK(B->alloc(h, head, FUZZ_SHAPE_SCAN, 2) == 1);
  B->set_ident(h, head, first_id, ~first_id);
  B->copy(h, 1, head);
  for (size_t i = 1; i < n; i++) {
    CHECK(B->alloc(h, 2, FUZZ_SHAPE_SCAN, 2 + i % 5) == 1);
    B->set_ident(h, 2, first_id + i, ~(first_id + i));
    B->store(h, 1, 0, 2);
    B->copy(h, 1, 2);
    CHECK(B->alloc(h, 2, i % 2 ? FUZZ_SHAPE_SCAN : FUZZ_SHAPE_RAW, i % 40) == 1); /* garbage */
  }
  B->clear(h, 1);
  B->clear(h, 2);
}

/* How many of the list's blocks read back with their identity, in order (cell 1 scratch). */
static size_t verify_list_at(fuzz_bheap *h, size_t head, size_t n, uint64_t first_id) {
  size_t good = 0;
  B->copy(h, 1, head);
  for (size_t i = 0; i < n; i++) {
    if (id_of(h, 1) == first_id + i) good++;
    int64_t v = 0;
    if (i + 1 < n && B->load(h, 1, 1, 0, &v) != FUZZ_FIELD_BLOCK) break;
  }
  B->clear(h, 1);
  return good;
}

typedef struct seen {
  uint64_t lo, hi;
  size_t hits;
} seen;

static void count_ids(void *user, uint64_t id, uint64_t check) {
  seen *s = user;
  if (id >= s->lo && id < s->hi && check == ~id) s->hits++;
}

static size_t walk_range(fuzz_bheap *h, uint64_t lo, uint64_t hi) {
  seen s = {.lo = lo, .hi = hi};
  B->walk(h, count_ids, &s);
  return s.hits;
}

/* ---- Tests ---------------------------------------------------------------------------------- */

static void test_spawn_on_end(const char *mode) {
  dom_driver d;
  fuzz_bheap *h = make_dom(&d, mode);
  CHECK(h != NULL && (B->caps & FUZZ_CAP_DOMAINS) != 0);
  CHECK(B->domain_spawn(h, 0) == 0); /* always there */
  CHECK(B->domain_spawn(h, DOMAINS) == 0);
  for (unsigned dom = 1; dom < DOMAINS; dom++) CHECK(B->domain_spawn(h, dom) == 1);
  CHECK(B->domain_spawn(h, 2) == 0); /* exists already */
  /* Each domain builds a list, then steps and collections from every domain in turn. */
  for (unsigned dom = 0; dom < DOMAINS; dom++) {
    B->domain_on(h, dom);
    build_list_at(h, 4 + dom, 200, 1000 * (dom + 1));
  }
  static const fuzz_collect_kind kinds[] = {FUZZ_COLLECT_START, FUZZ_COLLECT_SLICE,
                                            FUZZ_COLLECT_SLICE, FUZZ_COLLECT_MAJOR,
                                            FUZZ_COLLECT_FULL};
  for (unsigned round = 0; round < 10; round++) {
    B->domain_on(h, (round * 3) % DOMAINS);
    B->collect(h, kinds[round % 5], round * 7);
    build_list_at(h, 8, 50, 9000); /* garbage once replaced, allocated mid-cycle */
    CHECK(clean_check(h) == 0);
    for (unsigned dom = 0; dom < DOMAINS; dom++)
      CHECK(verify_list_at(h, 4 + dom, 200, 1000 * (dom + 1)) == 200);
  }
  for (unsigned dom = 1; dom < DOMAINS; dom++) B->domain_end(h, dom);
  B->domain_end(h, 1); /* ended already: nothing */
  B->collect(h, FUZZ_COLLECT_FULL, 0);
  CHECK(clean_check(h) == 0);
  for (unsigned dom = 0; dom < DOMAINS; dom++)
    CHECK(verify_list_at(h, 4 + dom, 200, 1000 * (dom + 1)) == 200);
  CHECK(B->domain_spawn(h, 1) == 1); /* again, after its end */
  B->domain_on(h, 1);
  build_list_at(h, 9, 20, 20000);
  B->destroy(h); /* ends domain 1 */
}

/* Old blocks made on domain 1 take new blocks made on domain 2 while a cycle domain 3 started is
 * mid-mark: the barrier's dirty bits must reach the collector whichever thread stored. */
static void test_reach_across_threads(const char *mode) {
  dom_driver d;
  fuzz_bheap *h = make_dom(&d, mode);
  for (unsigned dom = 1; dom < DOMAINS; dom++) CHECK(B->domain_spawn(h, dom) == 1);
  B->domain_on(h, 1);
  build_list_at(h, 4, 300, 100000);
  for (int i = 0; i < 4; i++) { /* old large blocks, chained from cell 5 */
    CHECK(B->alloc(h, 6, FUZZ_SHAPE_SCAN, 1151) == 1);
    B->set_ident(h, 6, 200000 + (uint64_t)i, ~(200000 + (uint64_t)i));
    B->store(h, 6, 0, 5);
    B->copy(h, 5, 6);
  }
  B->clear(h, 6);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  B->domain_on(h, 3);
  B->collect(h, FUZZ_COLLECT_START, 0);
  for (uint64_t round = 0; round < 40; round++) {
    B->domain_on(h, 2);
    CHECK(B->alloc(h, 7, FUZZ_SHAPE_SCAN, 2) == 1);
    B->set_ident(h, 7, 300000 + round, ~(300000 + round));
    /* Into field 1 of list block `round` (made on 1) and the last field of large block round%4. */
    B->copy(h, 8, 4);
    int64_t v = 0;
    for (uint64_t k = 0; k < round; k++) B->load(h, 8, 8, 0, &v);
    B->store(h, 8, 1, 7);
    B->copy(h, 8, 5);
    for (uint64_t k = 0; k < round % 4; k++) B->load(h, 8, 8, 0, &v);
    B->store(h, 8, 1150, 7);
    B->clear(h, 7);
    B->clear(h, 8);
    B->domain_on(h, 1 + round % 3);
    B->collect(h, FUZZ_COLLECT_SLICE, (unsigned)(round % 3));
  }
  B->domain_on(h, 3);
  B->collect(h, FUZZ_COLLECT_MAJOR, 0);
  CHECK(clean_check(h) == 0);
  CHECK(verify_list_at(h, 4, 300, 100000) == 300);
  /* Every new block is named by its list block's field 1. */
  size_t good = 0;
  B->domain_on(h, 2);
  B->copy(h, 8, 4);
  for (uint64_t round = 0; round < 40; round++) {
    int64_t v = 0;
    if (B->load(h, 9, 8, 1, &v) == FUZZ_FIELD_BLOCK && id_of(h, 9) == 300000 + round) good++;
    B->load(h, 8, 8, 0, &v);
  }
  CHECK(good == 40);
  CHECK(walk_range(h, 200000, 200004) == 4);
  B->clear(h, 8);
  B->clear(h, 9);
  B->destroy(h);
}

/* A finalizer run by run_finalizers on domain 2 runs on domain 2's thread (not the creating one,
 * not domain 1's), and its body allocates, stores, reads, makes weak references and finalizers
 * there: those calls must run directly, not be handed to the thread that is running them. */
__attribute__((noinline)) static void drop_finalizable(fuzz_bheap *h, uint64_t first, int n) {
  for (int i = 0; i < n; i++) {
    CHECK(B->alloc(h, 10, FUZZ_SHAPE_SCAN, 6) == 1);
    B->set_ident(h, 10, first + (uint64_t)i, ~(first + (uint64_t)i));
    CHECK(B->fin_set(h, 10, first + (uint64_t)i) == 1);
  }
  B->clear(h, 10);
}

/* A call handed to the thread that is itself waiting for it never returns: say so, rather than
 * leave the test to its timeout. */
static void on_hang(int sig) {
  (void)sig;
  static const char msg[] =
      "test_finalizer_allocates_on_domain: no progress in 20 s: a call from a finalizer's body "
      "was handed over to the thread running the body (a deadlock)\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

static void test_finalizer_allocates_on_domain(const char *mode) {
  dom_driver d;
  fuzz_bheap *h = make_dom(&d, mode);
  signal(SIGALRM, on_hang);
  alarm(20);
  CHECK(B->domain_spawn(h, 1) == 1);
  CHECK(B->domain_spawn(h, 2) == 1);
  d.allocate = true;
  B->domain_on(h, 1);
  drop_finalizable(h, 500, 16);
  B->domain_on(h, 2);
  size_t ran = 0;
  for (int round = 0; round < 6 && d.ran < 8; round++) {
    scrub_stack();
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    ran += B->run_finalizers(h);
  }
  CHECK(d.ran >= 8);              /* conservative: a few may stay */
  CHECK(ran > 0 && ran <= d.ran); /* the bodies' allocations may run some at their op's end */
  CHECK(d.body_failures == 0);
  CHECK(d.made == d.ran);
  pthread_t domain2 = d.threads[0];
  for (size_t i = 0; i < d.ran && i < 64; i++) {
    CHECK(!pthread_equal(d.threads[i], pthread_self()));
    CHECK(pthread_equal(d.threads[i], domain2));
    CHECK(d.ids[i] >= 500 && d.ids[i] < 516);
  }
  /* What the bodies made lives on, whichever domain collects, and after domain 2 ends. */
  B->domain_end(h, 2);
  B->domain_on(h, 1);
  for (int round = 0; round < 3; round++) {
    B->collect(h, round == 1 ? FUZZ_COLLECT_START : FUZZ_COLLECT_FULL, 0);
    CHECK(clean_check(h) == 0);
  }
  size_t chain = 0;
  B->copy(h, 13, 12);
  while (chain <= d.made && id_of(h, 13) >= 0x70000000 && id_of(h, 13) < 0x70000000 + 600) {
    int64_t v = 0;
    B->load(h, 15, 13, 1, &v); /* the finalized block the body kept */
    if (id_of(h, 15) < 500 || id_of(h, 15) >= 516) break;
    chain++;
    B->load(h, 13, 13, 0, &v);
  }
  if (chain != d.made) fprintf(stderr, "  chain of %zu bodies' blocks, %zu made\n", chain, d.made);
  CHECK(chain == d.made);
  B->clear(h, 13);
  B->clear(h, 15);
  B->destroy(h);
  alarm(0);
}

/* Finalizers queued together, run by run_finalizers one after another: each body clears, then
 * sets, the finalizer of the block in cell 11. While one body's fin_set runs, the others are
 * still in bdwgc's queue; they must run before its registration, not after (in the middle of the
 * call, where the driver's model has not yet applied it), so every body's clear finds none set:
 * the bodies' finalizer in cell 11 is cleared by the one that runs next only after the call that
 * set it returned. On domain 1, so the nested bodies run on its thread. */
static void test_queued_finalizers_before_fin_set(const char *mode) {
  dom_driver d;
  fuzz_bheap *h = make_dom(&d, mode);
  CHECK(B->alloc(h, 11, FUZZ_SHAPE_SCAN, 1) == 1);
  CHECK(B->domain_spawn(h, 1) == 1);
  B->domain_on(h, 1);
  d.order_cell = 11;
  for (int round = 0; round < 4 && d.ran < 2; round++) {
    drop_finalizable(h, 600 + 10 * (uint64_t)round, 6);
    scrub_stack();
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    B->run_finalizers(h);
    if (d.order_cleared != 0) break;
    B->fin_clear(h, 11); /* each round starts with none set */
  }
  CHECK(d.ran >= 2); /* two in one queue: one runs inside the other's fin_set */
  CHECK(d.order_cleared == 0);
  CHECK(d.body_failures == 0);
  d.order_cell = 0;
  B->destroy(h);
}

/* Domain 1 allocates (blocks of every small size class come from its thread-local free lists,
 * the rest of each list stays its own) and ends: its lists go back to bdwgc, and what it made
 * and the driver still reaches must survive every later cycle, the new allocations of other
 * threads (which may take the returned objects) included. */
static void test_end_keeps_blocks(const char *mode) {
  dom_driver d;
  fuzz_bheap *h = make_dom(&d, mode);
  for (int generation = 0; generation < 4; generation++) {
    unsigned dom = 1 + (unsigned)generation % 3;
    CHECK(B->domain_spawn(h, dom) == 1);
    B->domain_on(h, dom);
    uint64_t first = 400000 + 10000 * (uint64_t)generation;
    build_list_at(h, 4 + (size_t)generation, 500, first);
    if (generation % 2 == 1) B->collect(h, FUZZ_COLLECT_START, 3); /* ends mid-cycle */
    /* Past bdwgc's direct allocations of a size (DIRECT_GRANULES) a thread takes a block's worth
     * of objects at a time: leave lists of both kinds part used when the domain ends. */
    for (int i = 0; i < 150; i++) {
      CHECK(B->alloc(h, 2, FUZZ_SHAPE_SCAN, 1) == 1);
      CHECK(B->alloc(h, 2, FUZZ_SHAPE_RAW, 1) == 1);
    }
    B->clear(h, 2);
    B->domain_end(h, dom);
    unsigned other = 1 + (unsigned)(generation + 1) % 3; /* 0 on even generations */
    if (generation % 2 == 1) CHECK(B->domain_spawn(h, other) == 1);
    B->domain_on(h, generation % 2 == 1 ? other : 0);
    /* Made from the objects domain dom gave back (a fresh thread's first lists come from the
     * global ones), then collected: they must be what their kind says (scanned or not). */
    build_list_at(h, 9, 500, 900000);
    B->clear(h, 10);
    uint64_t chain =
        950000 + 1000 * (uint64_t)generation; /* ids of its own: the last one's may linger */
    for (int i = 149; i >= 0; i--) {          /* a list from the end: cell 10 holds id `chain` */
      CHECK(B->alloc(h, 3, FUZZ_SHAPE_SCAN, 1) == 1);
      B->set_ident(h, 3, chain + (uint64_t)i, ~(chain + (uint64_t)i));
      B->store(h, 3, 0, 10);
      B->copy(h, 10, 3);
    }
    B->clear(h, 3);
    CHECK(clean_check(h) == 0); /* before a collection trips over a block of the wrong kind */
    B->collect(h, FUZZ_COLLECT_FULL, 0);
    CHECK(clean_check(h) == 0);
    CHECK(verify_list_at(h, 9, 500, 900000) == 500);
    CHECK(verify_list_at(h, 10, 150, chain) == 150);
    CHECK(walk_range(h, chain, chain + 150) == 150);
    B->clear(h, 10);
    for (int g = 0; g <= generation; g++)
      CHECK(verify_list_at(h, 4 + (size_t)g, 500, 400000 + 10000 * (uint64_t)g) == 500);
    CHECK(walk_range(h, first, first + 500) == 500);
    for (unsigned e = 1; e < DOMAINS; e++) B->domain_end(h, e);
  }
  B->destroy(h);
}

int main(void) {
  CHECK(strcmp(B->name, "bdwgc") == 0);
  /* Stop-the-world first: bdwgc cannot leave incremental mode. Only there do threads keep
   * free lists of many objects (with manual dirty bits, incremental mode hands a thread one
   * object at a time: GC_generic_malloc_many). */
  static const char *const modes[] = {"mode=stop", "mode=incremental"};
  for (size_t m = 0; m < 2; m++) {
    fprintf(stderr, "%s\n", modes[m]);
    RUN(test_spawn_on_end, modes[m]);
    RUN(test_reach_across_threads, modes[m]);
    RUN(test_finalizer_allocates_on_domain, modes[m]);
    RUN(test_end_keeps_blocks, modes[m]);
    RUN(test_queued_finalizers_before_fin_set, modes[m]);
  }
  return test_summary();
}
