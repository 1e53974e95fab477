/* weak-memo: a weak-keyed memo table under churn, the shape of a WeakMap or ephemeron cache in a
 * language runtime (a memoized property of objects the program holds for a while).
 *
 * With n the argument (clamped up to MIN_N; above MAX_N is a usage error):
 *   - the table: a block of 2^n buckets, each a list of cells [entry, next]; an entry is a
 *     weak-keyed pair (bk_ephe_alloc: an ephemeron on gcfuzz, a disappearing link on bdwgc)
 *     whose key is a key object and whose datum is the memoized value of that key, tagged
 *     with the key's id (the hash a real table keeps beside its entries);
 *   - the live keys: a window of 2^n keys (a block held by a root), overwritten round-robin, so
 *     a key lives for 2^n key creations and then only the table refers to it, weakly;
 *   - KEYS_PER_SLOT * 2^n keys are created in turn; after each, LOOKUPS_PER_KEY lookups of keys
 *     picked at random in the window. A lookup walks its bucket's list, and where an entry's
 *     tag is the key's id it reads the entry's key (a weak get) and compares it with the key:
 *     on a hit it reads the datum, on a miss it computes the value (allocates it) and inserts
 *     an entry;
 *   - every 2^n / SWEEPS_PER_WINDOW key creations, a sweep of the whole table unlinks the
 *     entries whose key reads empty (a weak get returning nothing) and checks the others.
 * A key is [id, expected value]; a datum is [tree, value]: a complete binary tree of depth 1
 * to 3 (by the id) whose nodes hold values derived from the id, and their sum, the memoized
 * value. A datum never refers to its key (bdwgc's entries hold the datum strongly, so a datum
 * that reached its key would keep it alive for ever: backend.h), so every backend computes the
 * same thing.
 *
 * Deterministic: the keys looked up come from a fixed-seed splitmix64, so the counts of hits and
 * misses and the checksum (the sum of the values every lookup returned) are the same on every
 * backend, and are printed; how many dead entries a sweep found still there depends on when
 * the collector ran (and, for bdwgc, on stale words its conservative scan took for keys), so it
 * is printed on stderr only with BENCH_VERBOSE. Checks: every lookup's value is the key's
 * expected one (a datum lost or mixed up), and at each sweep the entries whose key is still in
 * the window are exactly the live keys looked up so far (an entry cleared while its key lived),
 * each datum's tree summing to its value (a node freed or reused).
 *
 * malloc (BK_EXPLICIT_FREE): the program knows when a key leaves the window, so it finds the
 * key's entry, frees the datum, empties the entry (bk_ephe_clear) and frees the key at once;
 * the next sweep unlinks the empty entry and frees it and its cell: the floor.
 *
 * One thread only: a table shared between threads needs a lock the backend interface does not
 * have, and a table per thread would be two benchmarks side by side. threads > 1 (the `_2`
 * programs' default) is a usage error (exit 2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  MIN_N = 4,
  MAX_N = 22,
  KEYS_PER_SLOT = 16,    /* keys created: KEYS_PER_SLOT * window */
  LOOKUPS_PER_KEY = 8,   /* lookups after each key creation */
  SWEEPS_PER_WINDOW = 4, /* table sweeps per window's worth of key creations */
  KEY_ID = 0,            /* a key: two integers, no reference */
  KEY_EXPECT = 1,
  KEY_INTS = 2,
  DATUM_TREE = 0, /* a datum: the tree, then the value */
  DATUM_VALUE = 1,
  NODE_LEFT = 0, /* a tree node: two children, then its value */
  NODE_RIGHT = 1,
  NODE_VALUE = 2,
  CELL_ENTRY = 0, /* a bucket's list cell */
  CELL_NEXT = 1,
  MAX_TREE_DEPTH = 3,
};

/* splitmix64 (Steele, Lea, Flood): the generator and, its finalizer alone, the hash. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint64_t next_random(uint64_t *state) { return mix64(*state += 0x9e3779b97f4a7c15ULL); }

/* A node's value: 48 bits, so that a sum of a tree's fits any backend's integer field. */
static intptr_t node_value(long id, long node) {
  return (intptr_t)(mix64(((uint64_t)id << 4) + (uint64_t)node) >> 16);
}
static int tree_depth_of(long id) { return 1 + (int)(mix64((uint64_t)id ^ 0x5bd1e995) % 3); }
static long tree_nodes(int depth) { return (2L << depth) - 1; }

/* The memoized value of key `id`, without the tree: the sum of its nodes' values. */
static intptr_t expected_value(long id) {
  intptr_t sum = 0;
  for (long i = 0; i < tree_nodes(tree_depth_of(id)); i++) sum += node_value(id, i);
  return sum;
}

/* A tree of `depth`, children first; nodes numbered in the order they are made. */
static bk_ref tree_make(long id, int depth, long *node) {
  if (depth < 0) return BK_NULL;
  BK_FRAME(kids, 2);
  kids[0] = tree_make(id, depth - 1, node);
  kids[1] = tree_make(id, depth - 1, node);
  bk_ref t = bk_alloc(2, 1);
  bk_set_new(t, NODE_LEFT, kids[0]);
  bk_set_new(t, NODE_RIGHT, kids[1]);
  BK_FRAME_END(kids);
  bk_set_int(t, NODE_VALUE, node_value(id, (*node)++));
  return t;
}

static intptr_t tree_sum(bk_ref t) {
  if (t == BK_NULL) return 0;
  return bk_get_int(t, NODE_VALUE) + tree_sum(bk_get(t, NODE_LEFT)) +
         tree_sum(bk_get(t, NODE_RIGHT));
}

static void tree_drop(bk_ref t) {
  if (!BK_EXPLICIT_FREE || t == BK_NULL) return;
  tree_drop(bk_get(t, NODE_LEFT));
  tree_drop(bk_get(t, NODE_RIGHT));
  bk_free(t);
}

/* The computation the table memoizes: the key's tree and its sum. */
static bk_ref datum_make(long id) {
  BK_FRAME(f, 1);
  long node = 0;
  intptr_t sum = 0;
  f[0] = tree_make(id, tree_depth_of(id), &node);
  sum = tree_sum(f[0]);
  bk_ref d = bk_alloc(1, 1);
  bk_set_new(d, DATUM_TREE, f[0]);
  BK_FRAME_END(f);
  bk_set_int(d, DATUM_VALUE, sum);
  return d;
}

static void datum_drop(bk_ref d) {
  if (!BK_EXPLICIT_FREE || d == BK_NULL) return;
  tree_drop(bk_get(d, DATUM_TREE));
  bk_free(d);
}

typedef struct memo {
  bk_ref *roots; /* [0] the table, [1] the window: the run's root frame */
  long buckets, window;
  long created;           /* keys created so far; key id i sits in window slot i % window */
  long with_entry;        /* keys in the window that have an entry (were looked up) */
  unsigned char *entered; /* by window slot: its key has an entry */
  long lookups, hits, misses;
  uint64_t checksum, expected; /* sums of the values returned and of the keys' own */
  long sweeps, dropped, stale_max, failures;
} memo;

#define TABLE(m)  ((m)->roots[0])
#define WINDOW(m) ((m)->roots[1])

static long bucket_of(const memo *m, long id) {
  return (long)(mix64((uint64_t)id) & (uint64_t)(m->buckets - 1));
}

/* The entry whose key is `key` (id `id`), or BK_NULL. A weak get only where the tag matches. */
static bk_ref entry_find(memo *m, bk_ref key, long id) {
  for (bk_ref c = bk_get(TABLE(m), bucket_of(m, id)); c != BK_NULL; c = bk_get(c, CELL_NEXT)) {
    bk_ref e = bk_get(c, CELL_ENTRY);
    if (bk_ephe_tag(e) == id && bk_ephe_key(e) == key) return e;
  }
  return BK_NULL;
}

/* Looks up the key in window slot `slot`: its memoized value, computed and inserted on a miss. */
static void lookup(memo *m, long slot) {
  bk_ref key = bk_get(WINDOW(m), slot); /* reachable from the window: no root needed */
  long id = (long)bk_get_int(key, KEY_ID);
  intptr_t value;
  m->lookups++;
  bk_ref e = entry_find(m, key, id);
  if (e != BK_NULL) {
    m->hits++;
    value = bk_get_int(bk_ephe_datum(e), DATUM_VALUE);
  } else {
    m->misses++;
    BK_FRAME(f, 2);
    f[0] = datum_make(id);
    value = bk_get_int(f[0], DATUM_VALUE);
    f[1] = bk_ephe_alloc(key, f[0], id);
    bk_ref cell = bk_alloc(2, 0);
    long b = bucket_of(m, id);
    bk_set_new(cell, CELL_ENTRY, f[1]);
    bk_set_new(cell, CELL_NEXT, bk_get(TABLE(m), b));
    BK_FRAME_END(f);
    bk_set(TABLE(m), b, cell);
    m->entered[slot] = 1;
    m->with_entry++;
  }
  m->checksum += (uint64_t)value;
  m->expected += (uint64_t)bk_get_int(key, KEY_EXPECT);
}

/* A new key in the next window slot. The key it replaces is dropped: on the collectors the
 * window's reference is just overwritten; malloc frees the key, its datum, and empties its
 * entry (the sweep unlinks it). */
static void key_create(memo *m) {
  long id = m->created++;
  long slot = id % m->window;
  if (m->entered[slot]) {
    m->entered[slot] = 0;
    m->with_entry--;
    if (BK_EXPLICIT_FREE) {
      bk_ref old = bk_get(WINDOW(m), slot);
      bk_ref e = entry_find(m, old, (long)bk_get_int(old, KEY_ID));
      if (e == BK_NULL) bench_die("weak-memo", "a dropped key's entry is missing");
      datum_drop(bk_ephe_datum(e));
      bk_ephe_clear(e);
    }
  }
  if (BK_EXPLICIT_FREE) bk_free(bk_get(WINDOW(m), slot));
  bk_ref key = bk_alloc(0, KEY_INTS);
  bk_set_int(key, KEY_ID, id);
  bk_set_int(key, KEY_EXPECT, expected_value(id));
  bk_set(WINDOW(m), slot, key);
}

/* Unlinks the entries whose key reads empty; checks the rest: those whose key is in the window
 * must be exactly the live keys with an entry, each datum intact. Allocates nothing. */
static void sweep(memo *m) {
  long live = 0, stale = 0;
  m->sweeps++;
  for (long b = 0; b < m->buckets; b++) {
    bk_ref prev = BK_NULL;
    bk_ref c = bk_get(TABLE(m), b);
    while (c != BK_NULL) {
      bk_ref next = bk_get(c, CELL_NEXT);
      bk_ref e = bk_get(c, CELL_ENTRY);
      bk_ref key = bk_ephe_key(e);
      if (key == BK_NULL) {
        if (prev == BK_NULL)
          bk_set(TABLE(m), b, next);
        else
          bk_set(prev, CELL_NEXT, next);
        bk_free(e);
        bk_free(c);
        m->dropped++;
        c = next;
        continue;
      }
      long id = (long)bk_get_int(key, KEY_ID);
      if (id >= m->created - m->window) {
        live++;
        bk_ref d = bk_ephe_datum(e);
        if (d == BK_NULL || bk_get_int(d, DATUM_VALUE) != bk_get_int(key, KEY_EXPECT) ||
            tree_sum(bk_get(d, DATUM_TREE)) != bk_get_int(d, DATUM_VALUE))
          m->failures++;
      } else {
        stale++; /* dead to the program, not yet found dead by the collector */
      }
      prev = c;
      c = next;
    }
  }
  if (live != m->with_entry) m->failures++;
  if (stale > m->stale_max) m->stale_max = stale;
}

/* malloc: everything left is given back (LeakSanitizer watches the smoke test). */
static void memo_drop(memo *m) {
  if (!BK_EXPLICIT_FREE) return;
  for (long b = 0; b < m->buckets; b++) {
    bk_ref c = bk_get(TABLE(m), b);
    while (c != BK_NULL) {
      bk_ref next = bk_get(c, CELL_NEXT);
      bk_ref e = bk_get(c, CELL_ENTRY);
      datum_drop(bk_ephe_datum(e));
      bk_free(e);
      bk_free(c);
      c = next;
    }
  }
  for (long s = 0; s < m->window; s++) bk_free(bk_get(WINDOW(m), s));
  bk_free(TABLE(m));
  bk_free(WINDOW(m));
}

int weak_memo_run(int n, int threads, FILE *out) {
  if (threads != 1)
    bench_die("weak-memo",
              "%d threads: weak-memo runs on one thread only (its table would need a lock "
              "shared by the threads, which the backend interface does not have)",
              threads);
  if (n > MAX_N) bench_die("weak-memo", "size %d: at most %d (2^n buckets and keys)", n, MAX_N);
  if (n < MIN_N) n = MIN_N;

  memo m = {0};
  m.buckets = m.window = 1L << n;
  m.entered = calloc((size_t)m.window, 1);
  if (m.entered == NULL) bench_die("weak-memo", "out of memory");
  long keys = KEYS_PER_SLOT * m.window;
  long sweep_every = m.window / SWEEPS_PER_WINDOW;
  uint64_t rng = 0x243f6a8885a308d3ULL; /* fixed seed: the same lookups on every backend */

  bk_init();
  BK_FRAME(roots, 2);
  m.roots = roots;
  roots[0] = bk_alloc((size_t)m.buckets, 0);
  roots[1] = bk_alloc((size_t)m.window, 0);

  while (m.created < keys) {
    key_create(&m);
    long filled = m.created < m.window ? m.created : m.window;
    for (int i = 0; i < LOOKUPS_PER_KEY; i++)
      lookup(&m, (long)(next_random(&rng) % (uint64_t)filled));
    if (m.created % sweep_every == 0) sweep(&m);
  }

  fprintf(out, "weak-memo %d: %ld buckets, a window of %ld keys, %ld keys created\n", n, m.buckets,
          m.window, m.created);
  fprintf(out, "%ld lookups: %ld hits, %ld misses\t checksum: %016llx\n", m.lookups, m.hits,
          m.misses, (unsigned long long)m.checksum);
  fprintf(out, "%ld sweeps\t live entries: %ld\n", m.sweeps, m.with_entry);
  if (getenv("BENCH_VERBOSE") != NULL)
    fprintf(stderr,
            "weak-memo (%s): entries dropped by sweeps %ld, most dead entries a sweep still "
            "found %ld (when the collector ran)\n",
            BK_NAME, m.dropped, m.stale_max);
  int failures = (int)m.failures + (m.checksum != m.expected) + (m.hits + m.misses != m.lookups);

  memo_drop(&m);
  BK_FRAME_END(roots);
  bk_fini();
  free(m.entered);
  if (failures != 0) fprintf(stderr, "weak-memo (%s): %d checks FAILED\n", BK_NAME, failures);
  return failures != 0;
}
