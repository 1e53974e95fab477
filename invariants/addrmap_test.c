/* The address map against a plain array, on the key shapes the passes produce: runs of slot
 * addresses in one pool, pools far apart, and keys whose home buckets collide; with growth,
 * deletion (backward shift) and reset. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc/check.h"
#include "invariants/addrmap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static void basic(void) {
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, 0));
  uint64_t v = 0;
  CHECK(!gc_addrmap_get(&m, 0x1000, &v));
  CHECK_EQ_U(gc_addrmap_add(&m, 0x1000, 7), 1);
  CHECK_EQ_U(gc_addrmap_add(&m, 0x1000, 8), 0); /* present: unchanged */
  CHECK(gc_addrmap_get(&m, 0x1000, &v) && v == 7);
  CHECK(gc_addrmap_put(&m, 0x1000, 9));
  CHECK(gc_addrmap_get(&m, 0x1000, &v) && v == 9);
  CHECK_EQ_U(gc_addrmap_add(&m, 0, 1), (unsigned long long)-1); /* 0 marks empty buckets */
  CHECK(!gc_addrmap_has(&m, 0));
  CHECK(gc_addrmap_remove(&m, 0x1000));
  CHECK(!gc_addrmap_remove(&m, 0x1000));
  CHECK(!gc_addrmap_has(&m, 0x1000));
  CHECK_EQ_U(m.count, 0);
  gc_addrmap_free(&m);
}

/* Keys of one pool, one slot size apart: they must fill consecutive buckets (the hash keeps the
 * offset inside the pool) and all be found. */
static void one_pool_run(void) {
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, 4096));
  uintptr_t pool = (uintptr_t)0x7f0000000000ull;
  for (uintptr_t k = 0; k < 2000; k++) CHECK_EQ_U(gc_addrmap_add(&m, pool + 40 + 16 * k, k), 1);
  /* Every key within one window of 4096 buckets (a pool's words), possibly wrapped around. */
  size_t first = SIZE_MAX, span = 0;
  for (size_t i = 0; i <= m.mask; i++) {
    if (m.buckets[i].key == pool + 40) first = i;
  }
  for (size_t i = 0; i <= m.mask; i++) {
    if (m.buckets[i].key != 0 && ((i - first) & m.mask) > span) span = (i - first) & m.mask;
  }
  CHECK(first != SIZE_MAX && span < 4096);
  for (uintptr_t k = 0; k < 2000; k++) {
    uint64_t v;
    CHECK(gc_addrmap_get(&m, pool + 40 + 16 * k, &v) && v == k);
  }
  gc_addrmap_free(&m);
}

/* Random operations against a reference array of (key, value, present). */
static void against_reference(int key_shape) {
  enum { KEYS = 3000, OPS = 60000 };
  uintptr_t *keys = malloc(KEYS * sizeof *keys);
  uint64_t *vals = calloc(KEYS, sizeof *vals);
  char *present = calloc(KEYS, 1);
  for (size_t i = 0; i < KEYS; i++) {
    switch (key_shape) {
      case 0: keys[i] = ((rng() & 0xffffffffffull) | 8) & ~(uintptr_t)7; break; /* anywhere */
      case 1: keys[i] = 0x500000000000ull + 8 * (i + 1); break;                 /* one run */
      default: /* same offset in many pools: every pool's window starts the same way */
        keys[i] = 0x600000000000ull + (uintptr_t)(i % 64) * 32768 + 8 * (1 + i / 64);
        break;
    }
    for (size_t j = 0; j < i; j++) {
      if (keys[j] == keys[i]) keys[i] += 8 * KEYS * 64; /* keep them distinct */
    }
  }
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, key_shape == 0 ? 0 : 100)); /* small: growth is exercised */
  size_t count = 0;
  for (size_t op = 0; op < OPS; op++) {
    size_t i = rng() % KEYS;
    uint64_t v;
    switch (rng() % 4) {
      case 0: {
        int added = gc_addrmap_add(&m, keys[i], op);
        CHECK_EQ_U(added, present[i] ? 0 : 1);
        if (!present[i]) vals[i] = op, present[i] = 1, count++;
        break;
      }
      case 1:
        CHECK(gc_addrmap_put(&m, keys[i], op));
        if (!present[i]) count++;
        vals[i] = op;
        present[i] = 1;
        break;
      case 2:
        CHECK_EQ_U(gc_addrmap_remove(&m, keys[i]), present[i]);
        if (present[i]) count--;
        present[i] = 0;
        break;
      default:
        CHECK_EQ_U(gc_addrmap_get(&m, keys[i], &v), present[i]);
        if (present[i]) CHECK_EQ_U(v, vals[i]);
        break;
    }
    CHECK_EQ_U(m.count, count);
    CHECK((m.count + 0) * 2 <= m.mask + 1); /* INV-AMAP-1 */
  }
  for (size_t i = 0; i < KEYS; i++) {
    uint64_t v;
    CHECK_EQ_U(gc_addrmap_get(&m, keys[i], &v), present[i]);
    if (present[i]) CHECK_EQ_U(v, vals[i]);
  }
  /* Reset keeps the buckets and forgets every key. */
  size_t buckets = m.mask + 1;
  CHECK(gc_addrmap_reset(&m, 10));
  CHECK_EQ_U(m.mask + 1, buckets);
  CHECK_EQ_U(m.count, 0);
  for (size_t i = 0; i < KEYS; i++) CHECK(!gc_addrmap_has(&m, keys[i]));
  CHECK(gc_addrmap_reset(&m, buckets)); /* larger than before: reallocated */
  CHECK(m.mask + 1 >= 2 * buckets);
  gc_addrmap_free(&m);
  free(keys);
  free(vals);
  free(present);
}

/* Resetting bumps an epoch; after 65535 resets the epoch wraps and the buckets are cleared, so a
 * key from long ago never comes back. */
static void epochs_wrap(void) {
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, 8));
  size_t buckets = m.mask + 1;
  for (uintptr_t r = 1; r <= 140000; r++) {
    uintptr_t key = 0x100000 + 8 * (r % 5);
    CHECK(!gc_addrmap_has(&m, key + 8 * 5)); /* never inserted */
    CHECK_EQ_U(gc_addrmap_add(&m, key, r), 1);
    uint64_t v;
    CHECK(gc_addrmap_get(&m, key, &v) && v == r);
    CHECK(gc_addrmap_reset(&m, 8));
    CHECK(!gc_addrmap_has(&m, key));
    if (check_failures > 10) break;
  }
  CHECK_EQ_U(m.mask + 1, buckets);
  CHECK_EQ_U(gc_addrmap_add(&m, 8, GC_ADDRMAP_VALUE_MAX + 1), (unsigned long long)-1);
  CHECK_EQ_U(gc_addrmap_add(&m, 8, GC_ADDRMAP_VALUE_MAX), 1);
  gc_addrmap_free(&m);
}

static void random_keys(void) { against_reference(0); }
static void sequential_keys(void) { against_reference(1); }
static void colliding_pools(void) { against_reference(2); }

/* The bucket limit (tests' stand-in for a failed allocation): growing past it fails with -1 and
 * leaves the map holding what it held; a reset that needs more buckets fails too; the limit
 * stays across resets; lifted, the map grows again. */
static void bucket_limit_fails_like_out_of_memory(void) {
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, 0));
  m.max_buckets = 16;
  uintptr_t key = 0x10000;
  for (int i = 0; i < 8; i++) CHECK_EQ_U(gc_addrmap_add(&m, key + 16 * (uintptr_t)i, 1), 1);
  CHECK_EQ_U(gc_addrmap_add(&m, key + 16 * 8, 1), (unsigned long long)-1);
  CHECK(!gc_addrmap_put(&m, key + 16 * 8, 1));
  CHECK_EQ_U(m.count, 8);
  for (int i = 0; i < 8; i++) CHECK(gc_addrmap_has(&m, key + 16 * (uintptr_t)i));
  CHECK(!gc_addrmap_reset(&m, 100));
  CHECK_EQ_U(m.max_buckets, 16);
  CHECK(gc_addrmap_reset(&m, 0));
  CHECK_EQ_U(m.max_buckets, 16);
  m.max_buckets = 0;
  for (int i = 0; i < 100; i++) CHECK_EQ_U(gc_addrmap_add(&m, key + 16 * (uintptr_t)i, 1), 1);
  gc_addrmap_free(&m);
}

/* A map reused after a large use keeps its buckets while they are within a factor of what the use
 * just ended needed, and shrinks back once a small use follows: it does not stay as large as the
 * largest use it ever saw. */
static void shrinks_after_a_large_use(void) {
  gc_addrmap m;
  CHECK(gc_addrmap_init(&m, 0));
  for (uintptr_t i = 1; i <= 10000; i++) CHECK_EQ_U(gc_addrmap_add(&m, 0x100000 + 8 * i, i), 1);
  size_t large = m.mask + 1;
  CHECK(large >= 2 * 10000);
  CHECK(gc_addrmap_reset(&m, 0)); /* the use just ended held 10,000 keys: kept */
  CHECK_EQ_U(m.mask + 1, large);
  for (uintptr_t i = 1; i <= 3; i++) CHECK_EQ_U(gc_addrmap_add(&m, 0x100000 + 8 * i, i), 1);
  CHECK(gc_addrmap_reset(&m, 0)); /* three keys: far below, so the buckets shrink */
  CHECK(m.mask + 1 <= 16);
  CHECK_EQ_U(m.count, 0);
  for (uintptr_t i = 1; i <= 3; i++) CHECK(!gc_addrmap_has(&m, 0x100000 + 8 * i));
  CHECK_EQ_U(gc_addrmap_add(&m, 0x200000, 7), 1);
  uint64_t v;
  CHECK(gc_addrmap_get(&m, 0x200000, &v) && v == 7);
  gc_addrmap_free(&m);
}

int main(void) {
  RUN(basic);
  RUN(shrinks_after_a_large_use);
  RUN(one_pool_run);
  RUN(epochs_wrap);
  RUN(random_keys);
  RUN(sequential_keys);
  RUN(colliding_pools);
  RUN(bucket_limit_fails_like_out_of_memory);
  CHECK_MAIN_END();
}
