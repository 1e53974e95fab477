/* Marking with a 4-entry mark stack: overflow falls back to re-darkening pools and large blocks,
 * and the result must equal marking with a roomy stack. And the benchmarks' undo of a mark. */
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/mark.h"

static gc_heap *heap_with_mark_stack(size_t entries) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.mark_stack_entries = entries;
  return gc_heap_create(&cfg);
}

/* A list whose link is field 0, so each cell has a field left to scan after its link. */
static void long_list(size_t stack_entries) {
  enum { LEN = 100000 };
  gc_heap *h = heap_with_mark_stack(stack_entries);
  gc_domain *d = gc_main_domain(h);
  static gc_value head;
  head = 0;
  gc_root_register(h, &head);
  for (intptr_t i = LEN - 1; i >= 0; i--) {
    gc_value cell = gc_alloc(d, 2, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = head;
    GC_FIELD(cell, 1) = gc_val_int(i);
    head = cell;
  }
  for (int c = 0; c < 3; c++) gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, LEN);
  intptr_t i = 0;
  for (gc_value v = head; v != 0; v = GC_FIELD(v, 0), i++) CHECK(GC_FIELD(v, 1) == gc_val_int(i));
  CHECK_EQ_U(i, LEN);
  gc_root_unregister(h, &head);
  gc_heap_destroy(h);
}

static void long_list_tiny_stack(void) { long_list(4); }

/* One large block with 10,000 children, each holding a grandchild. */
static void wide_array_tiny_stack(void) {
  enum { WIDTH = 10000 };
  gc_heap *h = heap_with_mark_stack(4);
  gc_domain *d = gc_main_domain(h);
  static gc_value array;
  array = gc_alloc(d, WIDTH, GC_TAG_SCAN);
  gc_root_register(h, &array);
  for (size_t i = 0; i < WIDTH; i++) {
    gc_value child = gc_alloc(d, 2, GC_TAG_SCAN);
    GC_FIELD(child, 0) = gc_val_int((intptr_t)i); /* initialising: no safepoint since */
    gc_store(d, array, i, child);
    gc_store(d, child, 1, gc_alloc(d, 1, GC_TAG_RAW));
    GC_FIELD(GC_FIELD(child, 1), 0) = i;
  }
  for (int c = 0; c < 3; c++) gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 2 * WIDTH);
  CHECK_EQ_U(s.large_blocks, 1);
  CHECK(s.mark_overflows > 0);
  for (size_t i = 0; i < WIDTH; i++) {
    gc_value child = GC_FIELD(array, i);
    CHECK(GC_FIELD(child, 0) == gc_val_int((intptr_t)i));
    CHECK(GC_FIELD(GC_FIELD(child, 1), 0) == i);
  }
  gc_root_unregister(h, &array);
  gc_heap_destroy(h);
}

static gc_value make_tree(gc_domain *d, int depth) {
  gc_value node[2] = {0, 0};
  gc_frame f;
  gc_frame_push(d, &f, node, 2);
  if (depth > 0) {
    node[0] = make_tree(d, depth - 1);
    node[1] = make_tree(d, depth - 1);
  }
  gc_value v = gc_alloc(d, 3, GC_TAG_SCAN);
  GC_FIELD(v, 0) = node[0];
  GC_FIELD(v, 1) = node[1];
  GC_FIELD(v, 2) = gc_val_int(depth);
  gc_frame_pop(d, &f);
  return v;
}

static long tree_check(gc_value v, int depth) {
  if (v == 0 || GC_FIELD(v, 2) != gc_val_int(depth)) return -1000000;
  if (depth == 0) return 1;
  return 1 + tree_check(GC_FIELD(v, 0), depth - 1) + tree_check(GC_FIELD(v, 1), depth - 1);
}

/* A deep, branching graph overflows a tiny stack over and over. */
static void deep_tree_tiny_stack(void) {
  gc_heap *h = heap_with_mark_stack(4);
  gc_domain *d = gc_main_domain(h);
  static gc_value tree;
  tree = 0;
  gc_root_register(h, &tree);
  tree = make_tree(d, 14);
  for (int i = 0; i < 20000; i++) gc_alloc(d, 3, GC_TAG_SCAN); /* garbage between */
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, (1u << 15) - 1);
  CHECK_EQ_U(tree_check(tree, 14), (1u << 15) - 1);
  CHECK(s.mark_overflows > 0);
  gc_root_unregister(h, &tree);
  gc_heap_destroy(h);
}

static void roomy_stack_does_not_overflow(void) {
  gc_heap *h = heap_with_mark_stack(1 << 16);
  gc_domain *d = gc_main_domain(h);
  static gc_value tree;
  tree = 0;
  gc_root_register(h, &tree);
  tree = make_tree(d, 14);
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.mark_overflows, 0);
  CHECK_EQ_U(s.pool_live_blocks, (1u << 15) - 1);
  gc_root_unregister(h, &tree);
  gc_heap_destroy(h);
}

/* The benchmarks' entry point: a mark that reached every block is undone exactly (every block
 * UNMARKED, the next mark does the same work); one that left a block unmarked is refused. */
static void undo_of_a_full_mark(void) {
  gc_heap *h = heap_with_mark_stack(1024);
  gc_domain *d = gc_main_domain(h);
  static gc_value root;
  gc_root_register(h, &root);
  root = gc_alloc(d, 3, GC_TAG_SCAN);
  for (int i = 0; i < 3; i++) {
    gc_store(d, root, (size_t)i, gc_alloc(d, 1 + (size_t)i * 200, GC_TAG_RAW));
  }
  gc_value pinned = gc_alloc(d, 2, GC_TAG_SCAN);
  CHECK(gc_pin(h, pinned) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL); /* swept: every block is live */
  for (int round = 0; round < 3; round++) {
    gc_mark_heap(h);
    CHECK_EQ_U(gc_mark_marked_blocks(h), 4);
    CHECK_EQ_U(gc_mark_domain_marked_blocks(d), 4);
    CHECK(gc_mark_undo_full(h) == 1);
    for (int i = 0; i < 3; i++) {
      CHECK(gc_colour_name(h, gc_hd_val(GC_FIELD(root, i)) & GC_HD_COLOUR_MASK)[0] == 'U');
    }
  }
  gc_store(d, root, 2, 0); /* now unreachable: the next mark leaves it UNMARKED */
  gc_mark_heap(h);
  CHECK_EQ_U(gc_mark_marked_blocks(h), 3);
  const char *before = gc_colour_name(h, gc_hd_val(root) & GC_HD_COLOUR_MASK);
  CHECK(gc_mark_undo_full(h) == 0);
  CHECK(strcmp(gc_colour_name(h, gc_hd_val(root) & GC_HD_COLOUR_MASK), before) == 0);
  CHECK(gc_unpin(h, pinned) == GC_OK);
  gc_root_unregister(h, &root);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(long_list_tiny_stack);
  RUN(wide_array_tiny_stack);
  RUN(deep_tree_tiny_stack);
  RUN(roomy_stack_does_not_overflow);
  RUN(undo_of_a_full_mark);
  CHECK_MAIN_END();
}
