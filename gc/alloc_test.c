/* Allocation: every size class, large sizes, zeroed fields, misuse, freeing and slot reuse. */
#include <string.h>

#include "gc/check.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"

static gc_heap *new_heap(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  return gc_heap_create(&cfg);
}

static void every_size_class(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  gc_value keep[GC_SIZECLASS_MAX_WHSIZE + 1] = {0};
  gc_frame f;
  gc_frame_push(d, &f, keep, GC_SIZECLASS_MAX_WHSIZE + 1);
  for (size_t whsize = 2; whsize <= GC_SIZECLASS_MAX_WHSIZE; whsize++) {
    size_t wsize = whsize - 1;
    gc_value v = gc_alloc(d, wsize, (unsigned)(whsize % 2 ? GC_TAG_RAW : whsize % 200));
    CHECK(v != 0);
    CHECK_EQ_U(gc_wsize(v), wsize);
    gc_pool *p = gc_pool_of_hp(gc_hp_val(v));
    CHECK_EQ_U(p->size_class, gc_class_of_whsize[whsize]);
    CHECK(gc_wsize_of_class[p->size_class] >= whsize);
    CHECK(p->size_class == 0 || gc_wsize_of_class[p->size_class - 1] < whsize);
    for (size_t i = 0; i < wsize; i++) CHECK_EQ_U(GC_FIELD(v, i), 0);
    for (size_t i = 0; i < wsize; i++) GC_FIELD(v, i) = gc_val_int((intptr_t)(whsize * 1000 + i));
    keep[whsize] = v;
  }
  gc_collect(d, GC_COLLECT_FULL);
  for (size_t whsize = 2; whsize <= GC_SIZECLASS_MAX_WHSIZE; whsize++) {
    for (size_t i = 0; i < whsize - 1; i++) {
      CHECK_EQ_U(GC_FIELD(keep[whsize], i), gc_val_int((intptr_t)(whsize * 1000 + i)));
    }
  }
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, GC_SIZECLASS_MAX_WHSIZE - 1);
  CHECK_EQ_U(s.large_blocks, 0);
  gc_frame_pop(d, &f);
  gc_heap_destroy(h);
}

static void large_sizes(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  static const size_t sizes[] = {GC_SIZECLASS_MAX_WHSIZE, 129, 1000, 4096, 100000, 1 << 20};
  enum { N = sizeof sizes / sizeof sizes[0] };
  gc_value keep[N] = {0};
  gc_frame f;
  gc_frame_push(d, &f, keep, N);
  size_t expect_words = 0;
  for (size_t i = 0; i < N; i++) {
    keep[i] = gc_alloc(d, sizes[i], GC_TAG_SCAN);
    CHECK(keep[i] != 0);
    CHECK_EQ_U(gc_wsize(keep[i]), sizes[i]);
    CHECK_EQ_U(GC_FIELD(keep[i], sizes[i] - 1), 0);
    GC_FIELD(keep[i], sizes[i] - 1) = gc_val_int(7);
    expect_words += sizes[i] + 1 + GC_LARGE_HEADER_WSIZE;
  }
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.large_blocks, N);
  CHECK_EQ_U(s.large_words, expect_words);
  for (size_t i = 0; i < N; i++) CHECK_EQ_U(GC_FIELD(keep[i], sizes[i] - 1), gc_val_int(7));
  keep[2] = 0; /* drop one: the next full collection frees it */
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.large_blocks, N - 1);
  CHECK_EQ_U(s.large_words, expect_words - (1000 + 1 + GC_LARGE_HEADER_WSIZE));
  gc_frame_pop(d, &f);
  gc_heap_destroy(h);
}

static void misuse_is_reported(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  CHECK(gc_alloc(d, 0, GC_TAG_SCAN) == 0);
  CHECK(gc_last_error(h) == GC_ERR_ZERO_SIZE);
  CHECK(strstr(gc_last_error_message(h), "wsize 0") != NULL);
  CHECK(gc_alloc(d, GC_MAX_WSIZE + 1, GC_TAG_SCAN) == 0);
  CHECK(gc_last_error(h) == GC_ERR_TOO_LARGE);
  CHECK(gc_alloc(d, 3, 251) == 0);
  CHECK(gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_alloc(d, 3, GC_TAG_CUSTOM) == 0);
  CHECK(gc_last_error(h) == GC_ERR_BAD_TAG);
  CHECK(gc_pin(h, gc_val_int(3)) == GC_ERR_NOT_BLOCK);
  gc_clear_error(h);
  CHECK(gc_last_error(h) == GC_OK);
  CHECK(strcmp(gc_last_error_message(h), "") == 0);
  /* The heap is still fine. */
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.alloc_blocks, 0);
  CHECK(gc_alloc(d, 3, GC_TAG_SCAN) != 0);
  gc_heap_destroy(h);
}

static void unreachable_blocks_are_freed_and_slots_reused(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  gc_value anchor = gc_alloc(d, 2, GC_TAG_SCAN); /* keeps the pool from being released */
  CHECK(gc_root_register(h, &anchor) == GC_OK);
  gc_value dead = gc_alloc(d, 2, GC_TAG_SCAN);
  CHECK(gc_pool_of_hp(gc_hp_val(dead)) == gc_pool_of_hp(gc_hp_val(anchor)));
  for (int i = 0; i < 10000; i++) CHECK(gc_alloc(d, 5, GC_TAG_SCAN) != 0);
  gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 1);
  CHECK_EQ_U(s.pool_live_words, 3);
  CHECK(s.freed_blocks >= 10001);
  CHECK_EQ_U(s.alloc_blocks - s.freed_blocks, 1);
  /* The freed slot right after the anchor is the first free slot of its pool again. */
  gc_value again = gc_alloc(d, 2, GC_TAG_SCAN);
  CHECK(again == dead);
  CHECK_EQ_U(GC_FIELD(again, 0), 0);
  CHECK_EQ_U(GC_FIELD(again, 1), 0);
  gc_root_unregister(h, &anchor);
  gc_heap_destroy(h);
}

static void pinned_blocks_survive_unrooted(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  gc_value pinned = gc_alloc(d, 1, GC_TAG_SCAN);
  CHECK(gc_pin(h, pinned) == GC_OK);
  gc_store(d, pinned, 0, gc_alloc(d, 2, GC_TAG_RAW)); /* kept alive through the pinned block */
  GC_FIELD(GC_FIELD(pinned, 0), 1) = 42;
  for (int i = 0; i < 5; i++) gc_collect(d, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 2);
  CHECK_EQ_U(GC_FIELD(GC_FIELD(pinned, 0), 1), 42);
  CHECK(gc_unpin(h, pinned) == GC_OK);
  CHECK(gc_unpin(h, pinned) == GC_ERR_NOT_BLOCK);
  gc_collect(d, GC_COLLECT_FULL);
  gc_get_stats(h, &s);
  CHECK_EQ_U(s.pool_live_blocks, 0);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(every_size_class);
  RUN(large_sizes);
  RUN(misuse_is_reported);
  RUN(unreachable_blocks_are_freed_and_slots_reused);
  RUN(pinned_blocks_survive_unrooted);
  CHECK_MAIN_END();
}
