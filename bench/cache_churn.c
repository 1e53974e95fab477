/* cache: a steady cache under churn, the shape of a server's in-memory cache.
 *
 * With n the argument (at least CACHE_CHURN_MIN): a table of 2^n slots, in two halves (PARTS), each
 * a long-lived block of 2^(n-1) references; one root block holds the two. Every slot holds an
 * entry: a scanned block (value, payload, key, hits) whose value is a chain of 1 to 3 small
 * scanned blocks (next, an integer) and whose payload is a raw block of 16 to 40 bytes, all
 * derived from the key. There are two keys a slot (key = slot + 2^n * bit: the slot of a key is
 * its low n bits), so the cache holds half of them.
 *   - Warm-up: slot s gets an entry for key s.
 *   - Then REQUESTS_PER_SLOT * 2^n requests. Each picks a random key. A hit (the key's slot holds
 *     it): the entry's hits field is incremented in place and its payload read. A miss: a new
 *     entry is built and stored into the slot (a store into the long-lived table), and the old
 *     entry is evicted (garbage; malloc frees it). The table is direct-mapped: the entry evicted
 *     is the one in the new key's slot, a random one since keys are random. Every request also
 *     builds a short temporary list (TEMP_LEN small blocks), sums it and drops it.
 * The live size is constant after warm-up and allocation never stops: what a non-generational
 * collector pays is marking the whole table again at every cycle while the garbage comes at a
 * steady rate.
 *
 * Deterministic: each half has its own splitmix64 stream (fixed seeds) and serves its own
 * requests, half of them, which touch only its own slots. Checks at the end: every entry is the
 * entry of its key (chain length and values, payload bytes) and sits in its key's slot, every
 * temporary list summed as built, and the printed hit count and checksum of the table (keys,
 * hits, values and payload bytes, slot by slot) are the same on every backend.
 *
 * With threads == 2: the root block and the two halves are allocated by the main thread; then
 * thread k (the main one is 0, the other started with bk_thread_start) fills half k and serves
 * its requests. Each thread stores only into its own half. With threads == 1 the main thread
 * fills both halves, then serves the requests of the two halves alternately: each half sees the
 * same requests in the same order as on two threads, so the table, its checksum and the printed
 * lines are the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  PARTS = 2,
  REQUESTS_PER_SLOT = 8,
  TEMP_LEN = 4,
  /* entry: bk_alloc(ENTRY_REFS, ENTRY_INTS) */
  ENTRY_VALUE = 0,   /* the value chain's first block */
  ENTRY_PAYLOAD = 1, /* the raw payload */
  ENTRY_REFS = 2,
  ENTRY_KEY = 2,
  ENTRY_HITS = 3,
  ENTRY_INTS = 2,
  /* a value chain's block and a temporary list's: bk_alloc(1, 1) */
  LINK_NEXT = 0,
  LINK_VALUE = 1,
  MAX_CHAIN = 3,
  MAX_PAYLOAD = 40,
};

/* What an entry for `key` holds, all from one hash of the key. */
typedef struct entry_shape {
  int chain;            /* value chain blocks, 1 to MAX_CHAIN */
  size_t payload_bytes; /* 16 to MAX_PAYLOAD */
  uint64_t hash;
} entry_shape;

static entry_shape shape_of(intptr_t key) {
  uint64_t h = bench_mix64((uint64_t)key);
  return (entry_shape){1 + (int)(h % MAX_CHAIN), 16 + 8 * ((h >> 8) % 4), h};
}

/* The i-th value of the chain (an integer a gcfuzz immediate holds). */
static intptr_t chain_value(const entry_shape *s, int i) {
  return (intptr_t)((s->hash >> 16) & 0xffffffffff) + i;
}

static uint8_t payload_byte(const entry_shape *s, size_t i) {
  return (uint8_t)((s->hash >> (8 * (i % 8))) ^ i);
}

/* A new entry for `key`: payload, then the chain from its last block, then the entry. */
static bk_ref entry_make(intptr_t key) {
  entry_shape s = shape_of(key);
  BK_FRAME(parts, 2); /* 0: the payload, 1: the chain so far */
  parts[0] = bk_alloc_raw(s.payload_bytes);
  uint8_t *bytes = bk_raw(parts[0]); /* rooted and never moved: stays valid */
  for (size_t i = 0; i < s.payload_bytes; i++) bytes[i] = payload_byte(&s, i);
  for (int i = s.chain - 1; i >= 0; i--) {
    bk_ref link = bk_alloc(1, 1);
    bk_set_new(link, LINK_NEXT, parts[1]); /* the newest block, no allocation since */
    bk_set_int(link, LINK_VALUE, chain_value(&s, i));
    parts[1] = link;
  }
  bk_ref entry = bk_alloc(ENTRY_REFS, ENTRY_INTS);
  bk_set_new(entry, ENTRY_VALUE, parts[1]);
  bk_set_new(entry, ENTRY_PAYLOAD, parts[0]);
  bk_set_int(entry, ENTRY_KEY, key);
  BK_FRAME_END(parts);
  return entry;
}

/* The entry is dead (evicted, or the run is over): malloc gets its blocks back. */
static void entry_drop(bk_ref entry) {
  if (!BK_EXPLICIT_FREE || entry == BK_NULL) return;
  bk_ref link = bk_get(entry, ENTRY_VALUE);
  while (link != BK_NULL) {
    bk_ref next = bk_get(link, LINK_NEXT);
    bk_free(link);
    link = next;
  }
  bk_free(bk_get(entry, ENTRY_PAYLOAD));
  bk_free(entry);
}

/* The payload's bytes, summed: what a hit reads. */
static uint64_t payload_sum(bk_ref entry, size_t nbytes) {
  const uint8_t *bytes = bk_raw(bk_get(entry, ENTRY_PAYLOAD));
  uint64_t sum = 0;
  for (size_t i = 0; i < nbytes; i++) sum += bytes[i];
  return sum;
}

/* A request's short-lived garbage: a list of TEMP_LEN blocks built, summed and dropped. Returns
 * 1 if the sum is not what was stored. */
static int temp_list(intptr_t key) {
  BK_FRAME(list, 1);
  for (int i = 0; i < TEMP_LEN; i++) {
    bk_ref link = bk_alloc(1, 1);
    bk_set_new(link, LINK_NEXT, list[0]);
    bk_set_int(link, LINK_VALUE, key + i);
    list[0] = link;
  }
  intptr_t sum = 0;
  for (bk_ref link = list[0]; link != BK_NULL; link = bk_get(link, LINK_NEXT))
    sum += bk_get_int(link, LINK_VALUE);
  if (BK_EXPLICIT_FREE) {
    for (bk_ref link = list[0]; link != BK_NULL;) {
      bk_ref next = bk_get(link, LINK_NEXT);
      bk_free(link);
      link = next;
    }
  }
  BK_FRAME_END(list);
  return sum != TEMP_LEN * key + TEMP_LEN * (TEMP_LEN - 1) / 2;
}

/* One half of the table and the requests it serves. */
typedef struct part {
  bk_ref table;    /* the half: reachable from the root block, so valid without a root */
  int index;       /* 0 or 1 */
  int n;           /* the table has 2^n slots */
  long slots;      /* 2^(n-1), this half's */
  long requests;   /* this half's share */
  uint64_t stream; /* splitmix64 state */
  long hits, misses;
  uint64_t read;  /* payload bytes read by hits, summed */
  long bad_temps; /* temporary lists that summed wrong */
} part;

/* Slot s of the half: an entry for key (index * slots + s), the warm-up. */
static void part_fill(part *p) {
  for (long s = 0; s < p->slots; s++) {
    bk_ref entry = entry_make(p->index * p->slots + s);
    bk_set(p->table, (size_t)s, entry); /* the table is old: a barrier store */
  }
}

static void part_request(part *p) {
  uint64_t r = bench_splitmix64(&p->stream);
  long s = (long)(r & (uint64_t)(p->slots - 1));
  intptr_t key = (p->index * p->slots + s) + ((intptr_t)((r >> 32) & 1) << p->n);
  bk_ref entry = bk_get(p->table, (size_t)s);
  if (bk_get_int(entry, ENTRY_KEY) == key) {
    p->hits++;
    bk_set_int(entry, ENTRY_HITS, bk_get_int(entry, ENTRY_HITS) + 1);
    p->read += payload_sum(entry, shape_of(key).payload_bytes);
  } else {
    p->misses++;
    bk_ref fresh = entry_make(key);
    bk_set(p->table, (size_t)s, fresh);
    entry_drop(entry);
  }
  p->bad_temps += temp_list(key);
}

static void part_run(void *arg) {
  part *p = arg;
  part_fill(p);
  for (long i = 0; i < p->requests; i++) part_request(p);
}

/* The table's checksum, slot by slot; counts the entries that are not their key's. */
static uint64_t table_checksum(bk_ref root, int n, long *bad) {
  long half = 1L << (n - 1);
  uint64_t sum = 0;
  for (int k = 0; k < PARTS; k++) {
    bk_ref table = bk_get(root, (size_t)k);
    for (long s = 0; s < half; s++) {
      bk_ref entry = bk_get(table, (size_t)s);
      intptr_t key = bk_get_int(entry, ENTRY_KEY);
      entry_shape shape = shape_of(key);
      int ok = (key & ((1L << n) - 1)) == k * half + s;
      int i = 0;
      for (bk_ref link = bk_get(entry, ENTRY_VALUE); link != BK_NULL;
           link = bk_get(link, LINK_NEXT), i++) {
        ok &= i < shape.chain && bk_get_int(link, LINK_VALUE) == chain_value(&shape, i);
        if (!ok) break;
      }
      ok &= i == shape.chain;
      const uint8_t *bytes = bk_raw(bk_get(entry, ENTRY_PAYLOAD));
      for (size_t b = 0; ok && b < shape.payload_bytes; b++)
        ok &= bytes[b] == payload_byte(&shape, b);
      *bad += !ok;
      sum = bench_mix64(sum ^ (uint64_t)key) + (uint64_t)bk_get_int(entry, ENTRY_HITS);
      if (ok) sum += payload_sum(entry, shape.payload_bytes);
    }
  }
  return sum;
}

static void table_drop(bk_ref root, int n) {
  if (!BK_EXPLICIT_FREE) return;
  for (int k = 0; k < PARTS; k++) {
    bk_ref table = bk_get(root, (size_t)k);
    for (long s = 0; s < 1L << (n - 1); s++) entry_drop(bk_get(table, (size_t)s));
    bk_free(table);
  }
  bk_free(root);
}

int cache_churn_run(int n, int threads, FILE *out) {
  if (threads < 1 || threads > PARTS || threads > BENCH_THREADS) {
    bench_die("cache", "%d threads: this program runs 1 to %d", threads,
              BENCH_THREADS < PARTS ? BENCH_THREADS : PARTS);
  }
  if (n < CACHE_CHURN_MIN) n = CACHE_CHURN_MIN;
  long slots = 1L << n;
  long requests = REQUESTS_PER_SLOT * slots;

  bk_init();
  BK_FRAME(root, 1);
  root[0] = bk_alloc(PARTS, 0);
  for (int k = 0; k < PARTS; k++) {
    bk_ref table = bk_alloc((size_t)slots / PARTS, 0);
    bk_set(root[0], (size_t)k, table); /* an allocation since root[0]'s: a barrier store */
  }

  part parts[PARTS];
  for (int k = 0; k < PARTS; k++) {
    parts[k] = (part){.table = bk_get(root[0], (size_t)k),
                      .index = k,
                      .n = n,
                      .slots = slots / PARTS,
                      .requests = requests / PARTS,
                      .stream = UINT64_C(0x5eed0000) + (uint64_t)k};
  }
  if (threads == 1) {
    for (int k = 0; k < PARTS; k++) part_fill(&parts[k]);
    for (long i = 0; i < requests / PARTS; i++)
      for (int k = 0; k < PARTS; k++) part_request(&parts[k]);
  } else {
    bk_thread other;
    bk_thread_start(&other, part_run, &parts[1]);
    part_run(&parts[0]);
    bk_thread_join(&other);
  }

  long hits = 0, misses = 0, bad_temps = 0, bad_entries = 0;
  uint64_t read = 0;
  for (int k = 0; k < PARTS; k++) {
    hits += parts[k].hits;
    misses += parts[k].misses;
    read += parts[k].read;
    bad_temps += parts[k].bad_temps;
  }
  uint64_t checksum = table_checksum(root[0], n, &bad_entries);
  fprintf(out, "cache of 2^%d slots, %ld requests: %ld hits, %ld misses, %llu bytes read\n", n,
          requests, hits, misses, (unsigned long long)read);
  fprintf(out, "table checksum: %016llx\n", (unsigned long long)checksum);
  int failures = 0;
  if (bad_entries != 0) {
    fprintf(stderr, "cache (%s): %ld entries are not their key's\n", BK_NAME, bad_entries);
    failures++;
  }
  if (bad_temps != 0) {
    fprintf(stderr, "cache (%s): %ld temporary lists summed wrong\n", BK_NAME, bad_temps);
    failures++;
  }
  if (hits + misses != requests) {
    fprintf(stderr, "cache (%s): %ld requests served, expected %ld\n", BK_NAME, hits + misses,
            requests);
    failures++;
  }

  table_drop(root[0], n);
  BK_FRAME_END(root);
  bk_fini();
  if (failures != 0) fprintf(stderr, "cache (%s): %d checks FAILED\n", BK_NAME, failures);
  return failures != 0;
}
