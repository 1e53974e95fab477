/* Destroying a heap gives every byte back: malloc'd memory (LeakSanitizer checks it under
 * --config=asan) and every pool mapped from the OS (checked here with mincore, which fails with
 * ENOMEM on an unmapped page). Two heaps side by side do not disturb each other. */
#include <errno.h>
#include <sys/mman.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/pool.h"
#include "gc/poolcache.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

enum { BLOCKS = 20000 };

static int is_mapped(void *page) {
  unsigned char vec;
  return mincore(page, 4096, &vec) == 0 || errno != ENOMEM;
}

static void fill(gc_domain *d, gc_value *keep, size_t n, gc_pool **pools) {
  for (size_t i = 0; i < n; i++) {
    gc_value v = gc_alloc(d, 1 + i % 100, GC_TAG_SCAN);
    pools[i] = gc_pool_of_hp(gc_hp_val(v));
    if (i % 2) keep[i / 2] = v;
  }
}

static void destroy_unmaps_every_pool(void) {
  static gc_pool *pools_a[BLOCKS], *pools_b[BLOCKS];
  static gc_value keep_a[BLOCKS / 2], keep_b[BLOCKS / 2];
  gc_heap *a = gc_heap_create(NULL);
  gc_heap *b = gc_heap_create(NULL);
  gc_frame fa, fb;
  gc_frame_push(gc_main_domain(a), &fa, keep_a, BLOCKS / 2);
  gc_frame_push(gc_main_domain(b), &fb, keep_b, BLOCKS / 2);
  fill(gc_main_domain(a), keep_a, BLOCKS, pools_a);
  fill(gc_main_domain(b), keep_b, BLOCKS, pools_b);
  gc_collect(gc_main_domain(a), GC_COLLECT_MAJOR);
  gc_value big = gc_alloc(gc_main_domain(a), 100000, GC_TAG_RAW);
  CHECK(big != 0);
  gc_heap_destroy(a);
  for (size_t i = 0; i < BLOCKS; i++) {
    if (is_mapped(pools_a[i])) {
      CHECK(!is_mapped(pools_a[i]));
      break;
    }
  }
  /* b is untouched by a's destruction. */
  gc_collect(gc_main_domain(b), GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(b, &s);
  CHECK_EQ_U(s.pool_live_blocks, BLOCKS / 2);
  gc_frame_pop(gc_main_domain(b), &fb);
  gc_heap_destroy(b);
  for (size_t i = 0; i < BLOCKS; i++) {
    if (is_mapped(pools_b[i])) {
      CHECK(!is_mapped(pools_b[i]));
      break;
    }
  }
}

static void many_heaps_leak_nothing(void) {
  for (int i = 0; i < 200; i++) {
    gc_heap *h = gc_heap_create(NULL);
    gc_domain *d = gc_main_domain(h);
    static gc_value root;
    root = gc_alloc(d, 300, GC_TAG_SCAN);
    gc_root_register(h, &root);
    for (int k = 0; k < 300; k++) {
      gc_store(d, root, (size_t)k, gc_alloc(d, 1 + (size_t)k % 130, GC_TAG_SCAN));
    }
    if (i % 2) gc_collect(d, GC_COLLECT_MAJOR);
    gc_heap_destroy(h);
  }
}

/* Heaps made one after another through a pool cache reuse the same pools; destroying the cache
 * unmaps them. */
static void pool_cache_carries_pools_between_heaps(void) {
  gc_pool_cache *cache = gc_pool_cache_create(64);
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.pool_cache = cache;
  static gc_pool *first_pools[2000];
  size_t n = 0;
  for (int round = 0; round < 3; round++) {
    gc_heap *h = gc_heap_create(&cfg);
    gc_domain *d = gc_main_domain(h);
    static gc_value keep;
    keep = 0;
    gc_root_register(h, &keep);
    int reused = 0;
    for (int i = 0; i < 2000; i++) {
      gc_value v = gc_alloc(d, 1 + (size_t)i % 40, GC_TAG_SCAN);
      GC_FIELD(v, 0) = keep;
      keep = v;
      gc_pool *p = gc_pool_of_hp(gc_hp_val(v));
      if (round == 0) first_pools[n++] = p;
      for (size_t k = 0; round > 0 && k < n && !reused; k++) reused = first_pools[k] == p;
    }
    if (round > 0) CHECK(reused);
    gc_collect(d, GC_COLLECT_FULL);
    gc_stats s;
    gc_get_stats(h, &s);
    CHECK_EQ_U(s.pool_live_blocks, 2000); /* nothing of the previous heap shows */
    gc_root_unregister(h, &keep);
    gc_heap_destroy(h);
    CHECK(gc_pool_cache_count(cache) > 0);
    CHECK(is_mapped(first_pools[0]) || round > 0);
  }
  gc_pool_cache_destroy(cache);
  int any_mapped = 0;
  for (size_t k = 0; k < n; k++) any_mapped |= is_mapped(first_pools[k]);
  CHECK(!any_mapped);
}

/* A heap made through a pool cache leaves its own structures there: the heap, its main domain,
 * its mark work arena (poolcache.h); the next heap gets them back as if from calloc. Its large
 * blocks and spawned domains are freed, never spares: a heap takes as many spares as it gives
 * back. */
static void spares_carry_between_heaps(void) {
  gc_pool_cache *cache = gc_pool_cache_create(64);
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.pool_cache = cache;
  enum { LARGE_FIELDS = 2000 };
  static gc_value keep;
  gc_heap *first = gc_heap_create(&cfg);
  gc_domain *d = gc_main_domain(first);
  gc_domain *spawned = gc_domain_spawn(d);
  CHECK(spawned != NULL);
  gc_root_register(first, &keep);
  keep = gc_alloc(d, LARGE_FIELDS, GC_TAG_RAW);
  for (size_t i = 0; i < LARGE_FIELDS; i++) GC_FIELD(keep, i) = 2 * i + 1;
  gc_value kept = keep;
  CHECK(kept != 0);
  gc_collect(d, GC_COLLECT_FULL);
  gc_root_unregister(first, &keep);
  uintptr_t first_addr = (uintptr_t)first, main_addr = (uintptr_t)d;
  gc_heap_destroy(first);
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_HEAP), 1);
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_DOMAIN), 1); /* the main one only */
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_ARENA), 1);
#ifdef TEST_ASAN
  /* A stale pointer into a spare still faults; one into a freed large block too. */
  CHECK(__asan_address_is_poisoned((void *)main_addr));
  CHECK(__asan_address_is_poisoned((void *)kept));
#endif

  gc_heap *second = gc_heap_create(&cfg);
  CHECK((uintptr_t)second == first_addr);
  CHECK((uintptr_t)gc_main_domain(second) == main_addr);
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_HEAP), 0);
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_DOMAIN), 0);
  CHECK_EQ_U(gc_spare_count(cache, GC_SPARE_ARENA), 0);
  gc_stats s;
  gc_get_stats(second, &s);
  CHECK_EQ_U(s.large_blocks, 0); /* nothing of the first heap shows */
  CHECK_EQ_U(s.cycles, 0);
  gc_heap_destroy(second);
  gc_pool_cache_destroy(cache);
}

int main(void) {
  RUN(pool_cache_carries_pools_between_heaps);
  RUN(spares_carry_between_heaps);
  RUN(destroy_unmaps_every_pool);
  RUN(many_heaps_leak_nothing);
  CHECK_MAIN_END();
}
