/* Roots: blocks reachable from each kind of root survive 100 cycles with their contents; dropping
 * the root frees them; misuse of the root API is reported and changes nothing. */
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"

enum { LIST_LEN = 100, CYCLES = 100 };

/* A list of LIST_LEN cells (value, next), values start..start+LIST_LEN-1. */
static gc_value make_list(gc_domain *d, intptr_t start) {
  gc_value head = 0;
  gc_frame f;
  gc_frame_push(d, &f, &head, 1);
  for (intptr_t i = LIST_LEN - 1; i >= 0; i--) {
    gc_value cell = gc_alloc(d, 2, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = gc_val_int(start + i);
    GC_FIELD(cell, 1) = head;
    head = cell;
  }
  gc_frame_pop(d, &f);
  return head;
}

static int list_intact(gc_value head, intptr_t start) {
  for (intptr_t i = 0; i < LIST_LEN; i++, head = GC_FIELD(head, 1)) {
    if (head == 0 || GC_FIELD(head, 0) != gc_val_int(start + i)) return 0;
  }
  return head == 0;
}

static void churn(gc_domain *d) {
  for (int i = 0; i < 200; i++) gc_alloc(d, 1 + (size_t)i % 20, GC_TAG_SCAN);
}

static gc_value scanned_root;
static void scan_one(gc_visit_fn visit, void *ctx, void *user) {
  (void)user;
  visit(ctx, &scanned_root);
}

static void every_root_kind_survives_100_cycles(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  static gc_value global;
  global = make_list(d, 0);
  CHECK(gc_root_register(h, &global) == GC_OK);
  gc_value local = 0;
  gc_frame f;
  gc_frame_push(d, &f, &local, 1);
  local = make_list(d, 1000);
  scanned_root = make_list(d, 2000);
  CHECK(gc_root_scanner_add(h, scan_one, NULL) == GC_OK);
  gc_value pinned = gc_alloc(d, 1, GC_TAG_SCAN);
  CHECK(gc_pin(h, pinned) == GC_OK);
  gc_store(d, pinned, 0, make_list(d, 3000));

  for (int c = 0; c < CYCLES; c++) {
    churn(d);
    gc_collect(d, c % 2 ? GC_COLLECT_MAJOR : GC_COLLECT_FULL);
  }
  CHECK(list_intact(global, 0));
  CHECK(list_intact(local, 1000));
  CHECK(list_intact(scanned_root, 2000));
  CHECK(list_intact(GC_FIELD(pinned, 0), 3000));
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK(s.cycles >= CYCLES);
  CHECK_EQ_U(s.pool_live_blocks, 4 * LIST_LEN + 1);

  /* Drop each root in turn: its list is freed. */
  CHECK(gc_root_unregister(h, &global) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 3 * LIST_LEN + 1);
  CHECK(gc_frame_pop(d, &f) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 2 * LIST_LEN + 1);
  CHECK(gc_root_scanner_remove(h, scan_one, NULL) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, LIST_LEN + 1);
  CHECK(gc_unpin(h, pinned) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 0);
  gc_heap_destroy(h);
}

static void root_misuse_is_reported(void) {
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  gc_value a = 0, b = 0;
  CHECK(gc_root_unregister(h, &a) == GC_ERR_UNKNOWN_ROOT);
  CHECK(strstr(gc_last_error_message(h), "is not a root") != NULL);
  CHECK(gc_root_register(h, &a) == GC_OK);
  CHECK(gc_root_register(h, &a) == GC_ERR_DUP_ROOT);
  CHECK(gc_root_unregister(h, &a) == GC_OK);
  CHECK(gc_root_unregister(h, &a) == GC_ERR_UNKNOWN_ROOT);
  CHECK(gc_root_scanner_remove(h, scan_one, &a) == GC_ERR_UNKNOWN_ROOT);

  /* Popping the outer frame first is refused and leaves both frames in place. */
  gc_frame outer, inner;
  gc_frame_push(d, &outer, &a, 1);
  gc_frame_push(d, &inner, &b, 1);
  a = gc_alloc(d, 1, GC_TAG_SCAN);
  b = gc_alloc(d, 1, GC_TAG_SCAN);
  CHECK(gc_frame_pop(d, &outer) == GC_ERR_FRAME_ORDER);
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 2);
  CHECK(gc_frame_pop(d, &inner) == GC_OK);
  CHECK(gc_frame_pop(d, &outer) == GC_OK);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(every_root_kind_survives_100_cycles);
  RUN(root_misuse_is_reported);
  CHECK_MAIN_END();
}
