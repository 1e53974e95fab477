/* Zeal (gc.h, GC_ZEALS) and the limits that were constants (rechecks, markbuf, slicecap): each
 * mode makes its rare path run every time it can (counted by the rare events, GC_EVENTS), each
 * limit reaches its corners, the heap keeps every live block meanwhile, and the parameters refuse
 * what they cannot mean. */
#include <stdio.h>
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/list_fixture.h"

static void parameters(void) {
  gc_config cfg;
  char err[200];
  gc_config_default(&cfg);
  CHECK_EQ_U(cfg.mark_rechecks, 8);
  CHECK_EQ_U(cfg.zeal, 0);
  CHECK(gc_config_parse(&cfg, "zeal=slice+overflow,rechecks=0", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.zeal, GC_ZEAL_SLICE | GC_ZEAL_OVERFLOW);
  CHECK_EQ_U(cfg.mark_rechecks, 0);
  CHECK(gc_config_parse(&cfg, "zeal=none", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.zeal, 0);
  CHECK(gc_config_parse(&cfg, "zeal=slice+cycle+overflow+recheck+store", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.zeal,
             GC_ZEAL_SLICE | GC_ZEAL_CYCLE | GC_ZEAL_OVERFLOW | GC_ZEAL_RECHECK | GC_ZEAL_STORE);
  const char *bad[] = {"zeal=slice+often", "zeal=",         "zeal=+slice",
                       "zeal=slice+",      "rechecks=1001", "rechecks=x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    gc_config before = cfg;
    CHECK(gc_config_parse(&cfg, bad[i], err, sizeof err) == GC_ERR_PARAM);
    CHECK(memcmp(&before, &cfg, sizeof cfg) == 0); /* unchanged */
    char key[16];
    snprintf(key, sizeof key, "%.*s", (int)(strchr(bad[i], '=') - bad[i] + 1), bad[i]);
    CHECK(strstr(err, key) != NULL);
  }
}

static void slice_at_every_allocation(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=incremental,percent=off,zeal=slice,markslice=1");
  list_fixture_grow(&f, 300);
  gc_collect(f.d, GC_COLLECT_START);
  uint64_t slices = list_fixture_event(&f, GC_EVENT_MARK_SLICE),
           cycles = list_fixture_event(&f, GC_EVENT_CYCLE);
  list_fixture_grow(&f, 50);
  /* Each allocation ran a slice of one word while the cycle marked: 300 blocks take more. */
  CHECK(list_fixture_event(&f, GC_EVENT_MARK_SLICE) - slices >= 50);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_CYCLE), cycles);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 350);
  list_fixture_close(&f);
}

/* Zeal store: every store while the cycle marks runs one slice first, and none ends the mark,
 * even with every block marked: termination waits for a safepoint (a slice, an allocation). */
static void slice_at_every_store(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=incremental,percent=off,zeal=store,markslice=1");
  list_fixture_grow(&f, 300);
  gc_value wide = gc_alloc(f.d, 4, GC_TAG_SCAN);
  gc_store(f.d, f.root, 1, wide); /* marking is off: no slice */
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_SLICE), 0);
  gc_collect(f.d, GC_COLLECT_START);
  uint64_t slices = list_fixture_event(&f, GC_EVENT_MARK_SLICE),
           cycles = list_fixture_event(&f, GC_EVENT_CYCLE);
  for (int i = 0; i < 1000; i++) gc_store(f.d, wide, (size_t)(i % 4), gc_val_int(i));
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_SLICE) - slices, 1000);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_CYCLE), cycles);
  CHECK(__atomic_load_n(&((gc_domain_head *)f.d)->marking, __ATOMIC_RELAXED) != 0);
  /* A slice at a safepoint finds the mark done and ends it. */
  for (int i = 0; i < 10 && list_fixture_event(&f, GC_EVENT_CYCLE) == cycles; i++) {
    gc_collect(f.d, GC_COLLECT_SLICE);
  }
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_CYCLE), cycles + 1);
  CHECK_EQ_U(GC_FIELD(wide, 3), gc_val_int(999));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 301);
  list_fixture_close(&f);
}

/* Zeal domains: across cycles whose boundaries alternate (marking begins, marking ends), the
 * phantom spawns, blocks and terminates in both phases, and the list keeps every block. */
static void domains_at_every_boundary(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=incremental,percent=off,zeal=domains");
  list_fixture_grow(&f, 100);
  for (int i = 0; i < 20; i++) {
    gc_collect(f.d, GC_COLLECT_START);
    list_fixture_grow(&f, 1); /* the first allocation while marking: the phantom acts */
    gc_collect(f.d, GC_COLLECT_MAJOR);
    list_fixture_grow(&f, 1); /* the first while sweeping */
  }
  static const gc_event acts[] = {GC_EVENT_SPAWN_MARKING,     GC_EVENT_SPAWN_SWEEPING,
                                  GC_EVENT_TERMINATE_MARKING, GC_EVENT_TERMINATE_SWEEPING,
                                  GC_EVENT_BLOCK_MARKING,     GC_EVENT_BLOCK_SWEEPING};
  for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
    CHECK(list_fixture_event(&f, acts[k]) >= 2);
  }
  /* 40 boundaries, a life of five: eight phantoms, each spawned once and terminated once. */
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_SPAWN_MARKING) +
                 list_fixture_event(&f, GC_EVENT_SPAWN_SWEEPING) +
                 list_fixture_event(&f, GC_EVENT_SPAWN_IDLE),
             8);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 140);
  list_fixture_close(&f);
}

/* Zeal finalizer: each finalizer is followed by a cycle from inside the loop (after it returned),
 * which finds the rest of the queue still queued; every finalizer still runs exactly once. */
static int finalized;
static void count_finalizer(gc_heap *h, gc_value block, void *user) {
  (void)h, (void)block, (void)user;
  finalized++;
}

static void collect_after_every_finalizer(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=stw,percent=off,zeal=finalizer");
  for (int i = 0; i < 5; i++) {
    gc_value b = gc_alloc(f.d, 2, GC_TAG_SCAN);
    CHECK(gc_finalizer_set(f.h, b, count_finalizer, NULL) == GC_OK);
  }
  finalized = 0;
  uint64_t cycles = list_fixture_event(&f, GC_EVENT_CYCLE);
  gc_collect(f.d, GC_COLLECT_FULL); /* runs the queue on its way out */
  gc_run_finalizers(f.d);
  CHECK_EQ_U(finalized, 5);
  /* The zeal's cycles run after each finalizer returned: none inside one. */
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_FIN_COLLECTED), 0);
  /* The full collection's cycle, then one after each finalizer. */
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_CYCLE) - cycles, 1 + 5);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 0);
  CHECK_EQ_U(finalized, 5);
  list_fixture_close(&f);
}

static void cycle_at_every_allocation(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=stw,percent=off,zeal=cycle");
  uint64_t cycles = list_fixture_event(&f, GC_EVENT_CYCLE);
  list_fixture_grow(&f, 40);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_CYCLE) - cycles, 40);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 40);
  list_fixture_close(&f);
}

static void overflow_at_every_push(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=stw,percent=off,zeal=overflow");
  list_fixture_grow(&f, 500);
  gc_alloc(f.d, 3, GC_TAG_SCAN); /* garbage */
  gc_collect(f.d, GC_COLLECT_FULL);
  /* The list's head is the first push: every block is marked by re-darkening, a pass a link. */
  CHECK(list_fixture_event(&f, GC_EVENT_MARK_OVERFLOW) >= 500);
  CHECK(list_fixture_event(&f, GC_EVENT_MARK_REDARKEN) >= 2);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 500);
  /* Off again: the next mark pushes. */
  CHECK(gc_set_params(f.h, "zeal=none") == GC_OK);
  uint64_t overflows = list_fixture_event(&f, GC_EVENT_MARK_OVERFLOW);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_OVERFLOW), overflows);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 500);
  list_fixture_close(&f);
}

static void recheck_until_the_limit(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=incremental,percent=off,zeal=recheck,rechecks=3");
  list_fixture_grow(&f, 200);
  for (int i = 0; i < 4; i++) gc_collect(f.d, GC_COLLECT_MAJOR);
  uint64_t cycles = list_fixture_event(&f, GC_EVENT_CYCLE);
  CHECK(cycles >= 4);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_RECHECK), 3 * cycles);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_RECHECK_LIMIT), cycles);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 200);
  /* No rechecks at all: every termination that finds work finishes the mark at once. */
  CHECK(gc_set_params(f.h, "rechecks=0") == GC_OK);
  uint64_t rechecks = list_fixture_event(&f, GC_EVENT_MARK_RECHECK);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_RECHECK), rechecks);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_RECHECK_LIMIT), cycles + 1);
  list_fixture_close(&f);
}

/* One-entry work buffers: every second push takes a buffer from the lists. */
static void one_entry_buffers(void) {
  list_fixture f;
  list_fixture_open(&f, "marking=stw,percent=off,markbuf=1");
  list_fixture_grow(&f, 300);
  gc_value wide = gc_alloc(f.d, 64, GC_TAG_SCAN);
  gc_store(f.d, f.root, 1, wide); /* reachable before the leaves' allocations */
  for (int i = 0; i < 64; i++) gc_store(f.d, wide, (size_t)i, gc_alloc(f.d, 1, GC_TAG_SCAN));
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(list_fixture_live_blocks(&f), 300 + 1 + 64);
  CHECK_EQ_U(list_fixture_event(&f, GC_EVENT_MARK_OVERFLOW),
             0); /* a million one-entry buffers: room enough */
  list_fixture_close(&f);
}

/* The slice cap: owed mark work is paid in more, smaller slices when the cap is low. */
static uint64_t slices_with_cap(const char *cap) {
  char params[128];
  snprintf(params, sizeof params, "marking=incremental,percent=off,markslice=8,slicecap=%s", cap);
  list_fixture f;
  list_fixture_open(&f, params);
  list_fixture_grow(&f, 2000);
  gc_collect(f.d, GC_COLLECT_START);
  uint64_t before = list_fixture_event(&f, GC_EVENT_MARK_SLICE);
  /* Allocation owes mark work; each assist pays at most slicecap * markslice of it. */
  while (list_fixture_event(&f, GC_EVENT_CYCLE) == 0 &&
         list_fixture_event(&f, GC_EVENT_MARK_SLICE) - before < 5000) {
    gc_alloc(f.d, 100, GC_TAG_RAW);
  }
  uint64_t slices = list_fixture_event(&f, GC_EVENT_MARK_SLICE) - before;
  CHECK_EQ_U(list_fixture_live_blocks(&f) >= 2000, 1);
  list_fixture_close(&f);
  return slices;
}

static void slice_cap(void) {
  uint64_t low = slices_with_cap("1"), high = slices_with_cap("1024");
  CHECK(low > high);
}

int main(void) {
  RUN(parameters);
  RUN(slice_at_every_allocation);
  RUN(slice_at_every_store);
  RUN(domains_at_every_boundary);
  RUN(collect_after_every_finalizer);
  RUN(cycle_at_every_allocation);
  RUN(overflow_at_every_push);
  RUN(recheck_until_the_limit);
  RUN(one_entry_buffers);
  RUN(slice_cap);
  CHECK_MAIN_END();
}
