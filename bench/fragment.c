/* fragment: a long-lived set whose members die at random and are replaced by fewer ones of
 * other sizes, with explicit full collections between: the workload that leaves every size
 * class's pools sparse, for which a compacting collector gives memory back and the others do
 * not (ci/bench runs it on gcfuzz with and without compact=N).
 *
 * With n the argument (clamped up to MIN_N; above MAX_N is a usage error):
 *   - the set: 2^n slots, a directory block of 2^n / CHUNK chunks of CHUNK slots each (so the
 *     slots are small blocks too, not one large block), held by a root frame;
 *   - built up: every slot gets a member, a block of 2, 4, 8, 16, 32 or 64 words (its class
 *     picked at random), integer fields only: the member's id, then values derived from it;
 *   - ROUNDS rounds, each: every member dies with probability 1/2 (its slot is emptied, malloc
 *     frees it); then a third of the slots emptied this round, at random, get a new member of
 *     another class; then an explicit full collection (bk_collect_full); then every member is
 *     checked (its id and values) and summed.
 * After the last round the heap's figures are recorded (bench_record_heap: the backend's mapped
 * and live bytes, and the program's own data bytes): bench/main.c prints them on its BENCH line.
 *
 * Deterministic: fixed-seed splitmix64 (bench_splitmix64), so each round's member count, words
 * and checksum are the same on every backend, and are printed. Checks: every member's fields.
 *
 * Blocks may move (gcfuzz with compact=N: bk_collect_full compacts): no reference is held in a C
 * variable across bk_collect_full; the directory is read again from the root frame each time.
 *
 * One thread only: the set shared between threads would need a lock the backend interface does
 * not have. threads > 1 (the `_2` programs' default) is a usage error (exit 2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/backend.h"
#include "bench/bench.h"

enum {
  MIN_N = 8,
  MAX_N = 24,
  CHUNK = 64, /* slots per chunk: a small block on every backend */
  ROUNDS = 4,
  CLASSES = 6,
  EMPTY = 0xff, /* a slot's class when it holds no member */
  MEMBER_ID = 0,
};

static const int class_words[CLASSES] = {2, 4, 8, 16, 32, 64};

/* Field i (>= 1) of member `id`: 47 bits, so that it is an integer on every backend. */
static intptr_t member_value(uint64_t id, int i) {
  return (intptr_t)(bench_mix64((id << 7) + (uint64_t)i) >> 17);
}

typedef struct set {
  bk_ref *roots; /* [0] the directory: the run's root frame */
  long slots;
  unsigned char *cls; /* by slot: its member's class, EMPTY */
  uint64_t next_id, rng;
  long members, words, failures;
} set;

#define DIR(s) ((s)->roots[0])

static bk_ref chunk_of(set *s, long slot) { return bk_get(DIR(s), (size_t)(slot / CHUNK)); }

/* A new member of class c in slot `slot` (empty). The chunk is reachable from the directory, so
 * it needs no root across the allocation (which never moves a block). */
static void member_add(set *s, long slot, int c) {
  uint64_t id = s->next_id++;
  int w = class_words[c];
  bk_ref m = bk_alloc(0, (size_t)w);
  bk_set_int(m, MEMBER_ID, (intptr_t)id);
  for (int i = 1; i < w; i++) bk_set_int(m, (size_t)i, member_value(id, i));
  bk_set(chunk_of(s, slot), (size_t)(slot % CHUNK), m);
  s->cls[slot] = (unsigned char)c;
  s->members++;
  s->words += w;
}

static void member_drop(set *s, long slot) {
  bk_ref chunk = chunk_of(s, slot);
  if (BK_EXPLICIT_FREE) bk_free(bk_get(chunk, (size_t)(slot % CHUNK)));
  bk_set(chunk, (size_t)(slot % CHUNK), BK_NULL);
  s->words -= class_words[s->cls[slot]];
  s->members--;
}

/* Every member checked; the sum of their fields. */
static uint64_t set_check(set *s) {
  uint64_t sum = 0;
  for (long slot = 0; slot < s->slots; slot++) {
    bk_ref m = bk_get(chunk_of(s, slot), (size_t)(slot % CHUNK));
    if (s->cls[slot] == EMPTY) {
      if (m != BK_NULL) s->failures++;
      continue;
    }
    if (m == BK_NULL) {
      s->failures++;
      continue;
    }
    uint64_t id = (uint64_t)bk_get_int(m, MEMBER_ID);
    sum += id;
    for (int i = 1; i < class_words[s->cls[slot]]; i++) {
      intptr_t v = bk_get_int(m, (size_t)i);
      if (v != member_value(id, i)) s->failures++;
      sum += (uint64_t)v;
    }
  }
  return sum;
}

/* malloc: everything left is given back (LeakSanitizer watches the smoke test). */
static void set_drop(set *s) {
  if (!BK_EXPLICIT_FREE) return;
  for (long slot = 0; slot < s->slots; slot++)
    if (s->cls[slot] != EMPTY) member_drop(s, slot);
  for (long k = 0; k < s->slots / CHUNK; k++) bk_free(bk_get(DIR(s), (size_t)k));
  bk_free(DIR(s));
}

int fragment_run(int n, int threads, FILE *out) {
  if (threads != 1)
    bench_die("fragment",
              "%d threads: fragment runs on one thread only (its set would need a lock shared "
              "by the threads, which the backend interface does not have)",
              threads);
  if (n > MAX_N) bench_die("fragment", "size %d: at most %d (2^n slots)", n, MAX_N);
  if (n < MIN_N) n = MIN_N;

  set s = {0};
  s.slots = 1L << n;
  s.rng = 0x452821e638d01377ULL; /* fixed seed: the same set on every backend */
  s.cls = malloc((size_t)s.slots);
  long *emptied = malloc((size_t)s.slots * sizeof *emptied);
  if (s.cls == NULL || emptied == NULL) bench_die("fragment", "out of memory");
  long chunks = s.slots / CHUNK;

  bk_init();
  BK_FRAME(roots, 1);
  s.roots = roots;
  roots[0] = bk_alloc((size_t)chunks, 0);
  for (long k = 0; k < chunks; k++) {
    bk_ref chunk = bk_alloc(CHUNK, 0);
    bk_set(DIR(&s), (size_t)k, chunk);
  }
  for (long slot = 0; slot < s.slots; slot++)
    member_add(&s, slot, (int)(bench_splitmix64(&s.rng) % CLASSES));
  fprintf(out, "fragment %d: %ld slots, %ld members, %ld words\n", n, s.slots, s.members, s.words);

  for (int round = 1; round <= ROUNDS; round++) {
    long dead = 0, born = 0;
    for (long slot = 0; slot < s.slots; slot++) {
      if (s.cls[slot] == EMPTY || bench_splitmix64(&s.rng) % 2 != 0) continue;
      member_drop(&s, slot);
      emptied[dead++] = slot;
    }
    for (long k = 0; k < dead; k++) {
      uint64_t r = bench_splitmix64(&s.rng);
      long slot = emptied[k];
      int old = s.cls[slot];
      s.cls[slot] = EMPTY;
      if (r % 3 != 0) continue;
      member_add(&s, slot, (int)((old + 1 + (r >> 8) % (CLASSES - 1)) % CLASSES));
      born++;
    }
    bk_collect_full(); /* may move blocks (gcfuzz, compact=N): nothing held across it */
    uint64_t sum = set_check(&s);
    fprintf(out, "round %d: %ld died, %ld born, %ld members, %ld words\t checksum: %016llx\n",
            round, dead, born, s.members, s.words, (unsigned long long)sum);
  }

  double mapped, live;
  bk_heap_figures(&mapped, &live);
  double data = (double)(s.words + s.slots + chunks) * 8.0; /* members, chunks, directory */
  bench_record_heap(mapped, live, data);
  if (getenv("BENCH_VERBOSE") != NULL)
    fprintf(stderr, "fragment (%s): mapped %.2f MiB, live %.2f MiB, data %.2f MiB\n", BK_NAME,
            mapped / 1048576.0, live / 1048576.0, data / 1048576.0);

  int failures = (int)s.failures;
  set_drop(&s);
  BK_FRAME_END(roots);
  bk_fini();
  free(s.cls);
  free(emptied);
  if (failures != 0) fprintf(stderr, "fragment (%s): %d checks FAILED\n", BK_NAME, failures);
  return failures != 0;
}
