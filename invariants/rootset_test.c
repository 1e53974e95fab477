/* The verifier's root enumeration (rootset.h) against the collector's (gc_roots_visit, then
 * gc_conservative_visit): on a heap holding every kind of root, the two must name the same root
 * slots and resolve the same conservative words to the same blocks. The walks use only the first;
 * this test is where a root the collector's enumeration drops, or one it adds, shows up without
 * a marking bug to reveal it (gc/finalizer.c's INV-FIN-1 roots, a domain's frames, a range word). */
#include <stdlib.h>
#include <string.h>

#include "gc/conservative.h"
#include "gc/mark.h"
#include "invariants/breaking.h"
#include "invariants/rootset.h"

enum { MAX_ROOTS = 256 };

typedef struct root_list {
  uintptr_t slot[MAX_ROOTS];  /* a slot's address, or a conservative word's */
  uintptr_t block[MAX_ROOTS]; /* 0 for a slot, the resolved block for a word */
  size_t count;
} root_list;

static void add(root_list *l, const void *where, gc_value block) {
  if (l->count == MAX_ROOTS) abort();
  l->slot[l->count] = (uintptr_t)where;
  l->block[l->count] = block;
  l->count++;
}
static void on_slot(void *ctx, gc_value *slot) { add(ctx, slot, 0); }
static void on_word(void *ctx, gc_value block, const uintptr_t *where) { add(ctx, where, block); }

/* Sorted by (slot, block), so two enumerations in different orders compare equal. */
static int cmp_pair(const void *x, const void *y) {
  const uintptr_t *a = x, *b = y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1];
}
static void sort_list(const root_list *l, uintptr_t out[][2]) {
  for (size_t i = 0; i < l->count; i++) {
    out[i][0] = l->slot[i];
    out[i][1] = l->block[i];
  }
  qsort(out, l->count, sizeof out[0], cmp_pair);
}

static void scan_s(gc_visit_fn visit, void *ctx, void *user) { visit(ctx, (gc_value *)user); }
static void ignore_finalizer(gc_heap *heap, gc_value block, void *user) {}

static void same_roots_as_the_collector(void) {
  gc_heap *h = breaking_heap(NULL);
  gc_domain *d = gc_main_domain(h);
  gc_domain *d2 = gc_domain_create(h);
  static gc_value global, local[3], local2[2], scanned;
  gc_frame frame, frame2;
  gc_root_register(h, &global);
  gc_frame_push(d, &frame, local, 3);
  gc_frame_push(d2, &frame2, local2, 2);
  gc_root_scanner_add(h, scan_s, &scanned);
  global = gc_alloc(d, 2, GC_TAG_SCAN);
  local[0] = gc_alloc(d, 3, GC_TAG_SCAN);
  local2[1] = gc_alloc(d2, 1, GC_TAG_RAW);
  scanned = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_value pinned = gc_alloc(d, 4, GC_TAG_SCAN);
  GC_FIELD(pinned, 1) = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_pin(h, pinned);
  gc_value fin = gc_alloc(d, 3, GC_TAG_SCAN);
  GC_FIELD(fin, 2) = gc_alloc(d, 1, GC_TAG_SCAN);
  gc_finalizer_set(h, fin, ignore_finalizer, NULL);
  gc_value big = gc_alloc(d, 400, GC_TAG_SCAN);
  gc_value small = gc_alloc(d, 5, GC_TAG_SCAN);
  static uintptr_t range[6];
  range[0] = (uintptr_t)small + 2 * sizeof(gc_value); /* interior */
  range[1] = (uintptr_t)gc_hp_val(big);               /* a large block's header */
  range[2] = (uintptr_t)big + 100 * sizeof(gc_value); /* deep inside it */
  range[3] = 12345;                                   /* a number */
  range[4] = (uintptr_t)&global;                      /* outside the heap */
  gc_conservative_add(h, range, sizeof range);

  gc_heapindex ix;
  memset(&ix, 0, sizeof ix);
  CHECK(gc_heapindex_build(&ix, h));
  static root_list mine, theirs;
  memset(&mine, 0, sizeof mine);
  memset(&theirs, 0, sizeof theirs);
  gc_verify_visit_roots(h, &ix, on_slot, on_word, &mine);
  gc_roots_visit(h, on_slot, &theirs);
  gc_conservative_visit(h, on_word, &theirs);
  CHECK_EQ_U(mine.count, theirs.count);
  CHECK(mine.count >= 3 + 2 + 1 + 4 + 3 + 3); /* slots of every kind, and 3 words that resolve */
  static uintptr_t a[MAX_ROOTS][2], b[MAX_ROOTS][2];
  sort_list(&mine, a);
  sort_list(&theirs, b);
  if (mine.count == theirs.count) CHECK(memcmp(a, b, mine.count * sizeof a[0]) == 0);
  size_t words = 0;
  for (size_t i = 0; i < mine.count; i++) words += mine.block[i] != 0;
  CHECK_EQ_U(words, 3);

  gc_heapindex_free(&ix);
  gc_conservative_remove(h, range);
  gc_frame_pop(d2, &frame2);
  gc_frame_pop(d, &frame);
  gc_root_scanner_remove(h, scan_s, &scanned);
  gc_root_unregister(h, &global);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(same_roots_as_the_collector);
  CHECK_MAIN_END();
}
