/* The bdwgc backend's deep check (kinds bdwgc.*): the blocks the driver reaches, against the
 * registry and bdwgc's own view of its objects, and the findings noticed at allocation.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

/* ---- The deep check -------------------------------------------------------------------------- */

/* From the cells and the conservative ranges through every scanned field: every block the driver
 * can reach must be one this heap allocated (bdwgc.dangling), that bdwgc still holds by its own
 * verdict (bdwgc.freed-reachable: a completed cycle found it unreachable), and that bdwgc sees as
 * an object starting where the block starts (bdwgc.base) of at least its requested size
 * (bdwgc.size). Cost: the reachable blocks and their fields, a registry lookup each. */
typedef struct check_run {
  fuzz_bheap *h;
  fuzz_finding *out;
  size_t max, count;
  char where[64];    /* the root the bdwgc_current chain started from: "cell 3", "range 1" */
  uintptr_t **stack; /* scanned blocks whose fields are still to visit */
  size_t depth, cap;
} check_run;

__attribute__((format(printf, 3, 4))) static void report(check_run *c, const char *what,
                                                         const char *fmt, ...) {
  if (c->count < c->max) {
    fuzz_finding *f = &c->out[c->count];
    va_list ap;
    va_start(ap, fmt);
    fuzz_finding_set(f, "bdwgc", what, fmt, ap);
    va_end(ap);
  }
  c->count++;
}

/* `word`, a cell's block or a scanned field's pointer, names a block the driver reaches. */
static void reach(check_run *c, uintptr_t word) {
  fuzz_bheap *h = c->h;
  void *p = (void *)word;
  block_entry *e = bdwgc_reg_find(&h->reg, p);
  if (e == NULL) {
    report(c, "dangling",
           "%p, reached from %s, is no block this heap allocated and holds: freed and reused, or "
           "a pointer into a block",
           p, c->where);
    return;
  }
  if (e->seen == h->epoch) return;
  e->seen = h->epoch;
  if (e->link == 0) {
    report(c, "freed-reachable",
           "block %p, reached from %s, had its long link cleared: a completed bdwgc cycle found a "
           "reachable block unreachable",
           p, c->where);
    return;
  }
  size_t bytes = (size_t)e->words * sizeof(uintptr_t);
  if (GC_base(p) != p) {
    report(c, "base", "GC_base(%p) is %p, not the block itself (reached from %s)", p, GC_base(p),
           c->where);
    return;
  }
  size_t size = 0;
  int kind = GC_get_kind_and_size(p, &size); /* size: GC_size(p) */
  if (size < bytes) {
    report(c, "size", "GC_size(%p) is %zu bytes, below the %zu requested (reached from %s)", p,
           size, bytes, c->where);
    return;
  }
  if (kind != bdwgc_kind_of(e->shape)) {
    report(c, "kind",
           "block %p (%s, reached from %s) lies in a heap block of bdwgc's object kind %d, not "
           "%d: bdwgc %s its words",
           p, e->shape == SHAPE_SCAN ? "scanned" : "pointer-free", c->where, kind,
           bdwgc_kind_of(e->shape), e->shape == SHAPE_SCAN ? "never scans" : "scans");
    return;
  }
  if (e->shape != SHAPE_SCAN) return;
  if (c->depth == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    uintptr_t **stack = realloc(c->stack, cap * sizeof *stack);
    if (stack == NULL) return; /* out of memory: check less, report nothing false */
    c->stack = stack;
    c->cap = cap;
  }
  c->stack[c->depth++] = (uintptr_t *)p;
}

static void reach_all(check_run *c, uintptr_t root) {
  reach(c, root);
  while (c->depth > 0) {
    uintptr_t *p = c->stack[--c->depth];
    size_t words = bdwgc_reg_find(&c->h->reg, p)->words;
    for (size_t f = 0; f + IDENT_WORDS < words; f++)
      if (p[f] != 0 && (p[f] & 1) == 0) reach(c, p[f]);
  }
}

/* A range word bdwgc's GC_base does not recognise: if it lies inside a block bdwgc holds, bdwgc
 * has lost track of one of its own block's pages (a large block's later pages are found through
 * forwarding counts in their headers), and the word keeps nothing alive. Cost: a pass over the
 * registry, for a nonzero word GC_base gives up on (random words, integers: few). */
static void unrecognised_word(check_run *c, uintptr_t word) {
  registry *r = &c->h->reg;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = bdwgc_reg_entry(r, i);
    if (e->key == 0 || e->link == 0) continue;
    uintptr_t p = (uintptr_t)GC_REVEAL_POINTER(e->key);
    if (word < p || word >= p + (size_t)e->words * sizeof(uintptr_t)) continue;
    report(c, "base",
           "GC_base(%p) is NULL, yet the word lies %zu bytes into block %p of %zu bytes (from %s): "
           "bdwgc does not know its own block's page, and the word keeps nothing alive",
           (void *)word, (size_t)(word - p), (void *)p, (size_t)e->words * sizeof(uintptr_t),
           c->where);
    return;
  }
}

size_t bdwgc_check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  check_run c = {.h = h, .out = out, .max = max};
  for (size_t i = 0; i < h->pending_count; i++) {
    if (c.count < max && i < PENDING_MAX) out[c.count] = h->pending[i];
    c.count++;
  }
  h->pending_count = 0;
  if (++h->epoch == 0) h->epoch = 1;
  for (size_t cell = 0; cell <= h->cfg.cells; cell++) {
    if (h->cells[cell] == NULL) continue;
    snprintf(c.where, sizeof c.where, "cell %zu", cell);
    reach_all(&c, (uintptr_t)h->cells[cell]);
  }
  /* A range word keeps alive whatever block it points into; a stale word aimed at a block that
   * died before it was written is the driver's business, so only blocks bdwgc holds are followed. */
  for (size_t r = 0; r < h->range_count; r++) {
    snprintf(c.where, sizeof c.where, "range %zu", r);
    for (size_t i = 0; i < h->range_words[r]; i++) {
      uintptr_t word = h->ranges[r][i];
      void *base = word != 0 ? GC_base((void *)word) : NULL;
      if (base != NULL && bdwgc_live_block(h, (uintptr_t)base)) reach_all(&c, (uintptr_t)base);
      if (base == NULL && word != 0) unrecognised_word(&c, word);
    }
  }
  free(c.stack);
  return c.count;
}
