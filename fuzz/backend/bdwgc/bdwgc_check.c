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
  if (GC_size(p) < bytes) {
    report(c, "size", "GC_size(%p) is %zu bytes, below the %zu requested (reached from %s)", p,
           GC_size(p), bytes, c->where);
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
      void *base = GC_base((void *)h->ranges[r][i]);
      if (base != NULL && bdwgc_live_block(h, (uintptr_t)base)) reach_all(&c, (uintptr_t)base);
    }
  }
  free(c.stack);
  return c.count;
}
