/* Running out of memory: a heap limit and injected failures make allocation return 0 after one
 * forced collection; the heap stays consistent and usable. */
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"

static void heap_limit_returns_null_then_recovers(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.heap_limit_bytes = 1 << 20;
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *d = gc_main_domain(h);
  static gc_value list;
  list = 0;
  gc_root_register(h, &list);
  size_t made = 0;
  for (;;) {
    gc_value cell = gc_alloc(d, 3, GC_TAG_SCAN);
    if (cell == 0) break;
    GC_FIELD(cell, 0) = list;
    GC_FIELD(cell, 1) = gc_val_int((intptr_t)made);
    list = cell;
    made++;
    if (made > 1000000) break; /* the limit was not enforced */
  }
  CHECK(made < 1000000);
  CHECK(made > 1000);
  CHECK(gc_last_error(h) == GC_ERR_NOMEM);
  CHECK(strstr(gc_last_error_message(h), "heap limit") != NULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.alloc_failures, 1);
  CHECK(s.cycles >= 1); /* the forced collection */
  CHECK((s.pool_words + s.large_words) * 8 <= (1 << 20));
  CHECK_EQ_U(s.pool_live_blocks, made);
  /* Every cell is intact. */
  size_t n = 0;
  for (gc_value v = list; v; v = GC_FIELD(v, 0)) {
    CHECK(GC_FIELD(v, 1) == gc_val_int((intptr_t)(made - 1 - n)));
    n++;
  }
  CHECK_EQ_U(n, made);
  /* A large block over the limit fails too; dropping the list makes room again. */
  CHECK(gc_alloc(d, 1 << 18, GC_TAG_RAW) == 0);
  list = 0;
  gc_value big = gc_alloc(d, 1 << 16, GC_TAG_RAW);
  CHECK(big != 0);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.alloc_failures, 2);
  gc_root_unregister(h, &list);
  gc_heap_destroy(h);
}

static void injected_failure_is_one_shot(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  static gc_value keep;
  keep = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_root_register(h, &keep);
  CHECK(gc_set_params(h, "failafter=10") == GC_OK);
  for (int i = 1; i < 10; i++) CHECK(gc_alloc(d, 2, GC_TAG_SCAN) != 0);
  gc_stats before;
  gc_get_stats(h, &before);
  CHECK(gc_alloc(d, 2, GC_TAG_SCAN) == 0);
  CHECK(gc_last_error(h) == GC_ERR_NOMEM);
  CHECK(strstr(gc_last_error_message(h), "injected") != NULL);
  gc_stats after;
  gc_get_stats(h, &after);
  CHECK_EQ_U(after.cycles, before.cycles + 1);
  CHECK_EQ_U(after.pool_live_blocks, 1); /* only the rooted block survived the forced cycle */
  CHECK(gc_alloc(d, 2, GC_TAG_SCAN) != 0);
  CHECK(gc_alloc(d, 2, GC_TAG_SCAN) != 0); /* one-shot: not again */
  gc_root_unregister(h, &keep);
  gc_heap_destroy(h);
}

/* Setting failafter arms a new countdown every time, whatever value it had. */
static void injected_failure_rearms(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  CHECK(gc_set_params(h, "failafter=2") == GC_OK);
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) != 0);
  CHECK(gc_set_params(h, "failafter=2") == GC_OK); /* same value, before it fired: from now */
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) != 0);
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) == 0);
  CHECK(gc_set_params(h, "failafter=1") == GC_OK);
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) == 0);
  CHECK(gc_set_params(h, "failafter=1") == GC_OK); /* same value, after it fired */
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) == 0);
  CHECK(gc_set_params(h, "sweep=100") == GC_OK); /* other keys leave the countdown alone */
  CHECK(gc_alloc(d, 1, GC_TAG_SCAN) != 0);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(injected_failure_rearms);
  RUN(heap_limit_returns_null_then_recovers);
  RUN(injected_failure_is_one_shot);
  CHECK_MAIN_END();
}
