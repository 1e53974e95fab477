/* The passes with several domains: every domain's pools and the orphans' are owners (heapindex.h).
 * One thread runs two domains in turn, the idle one always in a blocking section, so collections
 * from either find the world stoppable without a second thread. */
#include <string.h>

#include "invariants/breaking.h"

enum { ROOTS = 32 };

typedef struct fixture {
  gc_heap *h;
  gc_domain *main, *other;
  gc_value roots[ROOTS];
  gc_verifier *v;
} fixture;

static void fixture_build(fixture *f) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap("verify=reach+swept+checkmark+perf,mintrigger=4096");
  f->main = gc_main_domain(f->h);
  for (int i = 0; i < ROOTS; i++) gc_root_register(f->h, &f->roots[i]);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  f->other = gc_domain_create(f->h); /* created in a blocking section */
  CHECK(f->other != NULL);
}

static void fixture_free(fixture *f) {
  gc_verify_uninstall(f->v);
  for (int i = 0; i < ROOTS; i++) gc_root_unregister(f->h, &f->roots[i]);
  gc_heap_destroy(f->h);
}

/* Run `d` for a while: lists of small blocks and a large one, hung on random roots, with
 * pointers into what the other domain allocated. */
static void run_on(fixture *f, gc_domain *d, unsigned *seed, int rounds) {
  for (int i = 0; i < rounds; i++) {
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = *seed >> 8;
    gc_value v = r % 50 == 0 ? gc_alloc(d, 200, GC_TAG_SCAN) : gc_alloc(d, 1 + r % 7, GC_TAG_SCAN);
    CHECK(v != 0);
    if (v == 0) return;
    GC_FIELD(v, 0) = f->roots[r % ROOTS]; /* the previous list, or another domain's block */
    f->roots[(r >> 5) % ROOTS] = v;
    if (r % 997 == 0) gc_collect(d, GC_COLLECT_FULL);
  }
}

static void two_domains_and_orphans_pass(void) {
  fixture f;
  fixture_build(&f);
  unsigned seed = 7;
  for (int turn = 0; turn < 6; turn++) {
    run_on(&f, f.main, &seed, 3000);
    breaking_switch_domain(f.main, f.other);
    run_on(&f, f.other, &seed, 3000);
    gc_collect(f.other, turn % 2 ? GC_COLLECT_FULL : GC_COLLECT_MAJOR);
    breaking_switch_domain(f.other, f.main);
  }
  gc_collect(f.main, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  CHECK(gc_verify_runs(f.v, GC_VERIFY_SWEPT) >= 6);

  /* The other domain terminates: its pools become orphans, still checked by swept. */
  breaking_switch_domain(f.main, f.other);
  CHECK(gc_domain_terminate(f.other) == GC_OK);
  gc_leave_blocking(f.main);
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_swept(f.h, &out), 0);
  CHECK_EQ_U(gc_verify_reach(f.h, &out), 0);
  CHECK_NO_REPORT(&out);
  CHECK(f.h->orphans.stats.pool_words > 0);

  /* Breaking the orphans' statistics is reported against them. */
  f.h->orphans.stats.pool_live_blocks++;
  gc_verify_swept(f.h, &out);
  CHECK_ONLY_KIND(&out, GC_VK_SWEPT_STAT_MISMATCH);
  if (out.count > 0) CHECK(strstr(out.items[0].where, "orphans") != NULL);
  f.h->orphans.stats.pool_live_blocks--;
  gc_verify_reports_free(&out);

  /* Adopted by the next cycle; everything still checks out. */
  run_on(&f, f.main, &seed, 2000);
  gc_collect(f.main, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(f.v));
  fixture_free(&f);
}

int main(void) {
  RUN(two_domains_and_orphans_pass);
  CHECK_MAIN_END();
}
