/* Conservative roots: interior pointers keep blocks alive; words outside the heap, into free
 * slots, pool headers, wastage and slot padding keep nothing alive. */
#include <string.h>

#include "gc/blockindex.h"
#include "gc/check.h"
#include "gc/large.h"
#include "gc/pool.h"

static gc_heap *new_heap(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  return gc_heap_create(&cfg);
}

static size_t live_blocks(gc_heap *h) {
  gc_stats s;
  gc_get_stats(h, &s);
  return s.pool_live_blocks + s.large_blocks;
}

static void resolution_of_every_kind_of_word(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  gc_value small = gc_alloc(d, 2, GC_TAG_SCAN);  /* whsize 3: its class leaves 1 word of wastage */
  gc_value padded = gc_alloc(d, 16, GC_TAG_RAW); /* whsize 17 in an 18-word slot: 1 word padding */
  gc_value large = gc_alloc(d, 1000, GC_TAG_RAW);
  gc_header *hp = gc_hp_val(small);
  gc_pool *p = gc_pool_of_hp(hp);
  CHECK(gc_block_containing(h, (uintptr_t)hp) == small);         /* its header */
  CHECK(gc_block_containing(h, (uintptr_t)small) == small);      /* its first field */
  CHECK(gc_block_containing(h, (uintptr_t)small + 13) == small); /* an unaligned interior */
  CHECK(gc_block_containing(h, (uintptr_t)(hp + 3)) == 0);       /* next slot: unused */
  CHECK(gc_block_containing(h, (uintptr_t)p) == 0);              /* the pool header */
  CHECK(gc_wastage_of_class[p->size_class] == 1);
  CHECK(gc_block_containing(h, (uintptr_t)p + GC_POOL_BSIZE - 8) == 0); /* the wastage word */
  gc_header *php = gc_hp_val(padded);
  CHECK(gc_block_containing(h, (uintptr_t)(php + 16)) == padded); /* its last field */
  CHECK(gc_block_containing(h, (uintptr_t)(php + 17)) == 0);      /* the slot's padding */
  CHECK(gc_block_containing(h, (uintptr_t)large + 999 * 8) == large);
  CHECK(gc_block_containing(h, (uintptr_t)large + 1000 * 8) == 0); /* one past its end */
  CHECK(gc_block_containing(h, (uintptr_t)gc_large_of_hp(gc_hp_val(large))) ==
        0);                                          /* large header */
  CHECK(gc_block_containing(h, (uintptr_t)&h) == 0); /* the C stack */
  CHECK(gc_block_containing(h, 12345) == 0);
  CHECK(gc_block_containing(h, 0) == 0);
  gc_heap_destroy(h);
}

static void interior_pointers_keep_blocks_alive(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  enum { N = 300 };
  static uintptr_t range[N + 4];
  memset(range, 0, sizeof range);
  CHECK(gc_conservative_add(h, range, sizeof range) == GC_OK);
  for (int i = 0; i < N; i++) {
    size_t wsize = 1 + (size_t)i % 200; /* small and large */
    gc_value v = gc_alloc(d, wsize, GC_TAG_SCAN);
    GC_FIELD(v, wsize - 1) = gc_val_int(i);
    if (i % 3 == 0) range[i] = (uintptr_t)v + (wsize - 1) * 8 + 3; /* inside the last field */
    if (i % 3 == 1) range[i] = (uintptr_t)gc_hp_val(v);            /* the header */
  }
  /* Words that must keep nothing alive. */
  range[N] = 1;
  range[N + 1] = (uintptr_t)&range;
  range[N + 2] = ~(uintptr_t)0;
  for (int c = 0; c < 3; c++) gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 200);
  for (int i = 0; i < N; i++) {
    if (i % 3 == 2) continue;
    size_t wsize = 1 + (size_t)i % 200;
    gc_value v = gc_block_containing(h, range[i]);
    CHECK(v != 0 && GC_FIELD(v, wsize - 1) == gc_val_int(i));
  }
  /* A block referenced from a live block that a conservative word holds survives too. */
  gc_value parent = gc_alloc(d, 1, GC_TAG_SCAN);
  range[N + 3] = (uintptr_t)parent;
  gc_store(d, parent, 0, gc_alloc(d, 300, GC_TAG_RAW));
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 202);
  /* Forgetting the range frees everything. */
  CHECK(gc_conservative_remove(h, range) == GC_OK);
  CHECK(gc_conservative_remove(h, range) == GC_ERR_UNKNOWN_RANGE);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 0);
  gc_heap_destroy(h);
}

static void stale_words_resurrect_nothing(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  gc_value anchor = gc_alloc(d, 2, GC_TAG_SCAN); /* keeps the pool in use */
  gc_root_register(h, &anchor);
  gc_value dead = gc_alloc(d, 2, GC_TAG_SCAN);
  gc_value dead_large = gc_alloc(d, 500, GC_TAG_SCAN);
  gc_collect(d, GC_COLLECT_FULL); /* both freed: dead's slot is free, dead_large is gone */
  uintptr_t range[2] = {(uintptr_t)dead, (uintptr_t)dead_large};
  gc_conservative_add(h, range, sizeof range);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 1);
  gc_conservative_remove(h, range);
  gc_root_unregister(h, &anchor);
  gc_heap_destroy(h);
}

static void unaligned_range_reads_whole_words_only(void) {
  gc_heap *h = new_heap();
  gc_domain *d = gc_main_domain(h);
  static uintptr_t words[3];
  words[1] = (uintptr_t)gc_alloc(d, 2, GC_TAG_SCAN);
  /* [words+1 byte, words+2 words): only words[1] is whole and aligned. */
  CHECK(gc_conservative_add(h, (char *)words + 1, 2 * sizeof(uintptr_t) - 1) == GC_OK);
  gc_collect(d, GC_COLLECT_FULL);
  CHECK_EQ_U(live_blocks(h), 1);
  CHECK(gc_conservative_add(h, (char *)words + 1, 8) == GC_ERR_DUP_ROOT);
  gc_conservative_remove(h, (char *)words + 1);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(resolution_of_every_kind_of_word);
  RUN(interior_pointers_keep_blocks_alive);
  RUN(stale_words_resurrect_nothing);
  RUN(unaligned_range_reads_whole_words_only);
  CHECK_MAIN_END();
}
