/* The bdwgc backend's blocks: allocation, identity, fields and raw words, cells, conservative
 * ranges, and the introspection the registry gives (walk, live_bytes).
 *
 * Layout. A scanned block starts with its fields, so whatever bdwgc leaves in a fresh object's
 * first words (a free-list link it failed to clear) reads back as a field the driver never
 * stored; its identity follows, found through the registry, which knows every block's size:
 *   scan, N fields  GC_MALLOC((N + 2) words)         fields 0..N-1, id, check
 *   raw, N words    GC_MALLOC_ATOMIC((N + 2) words)  id, check, payload 0..N-1 (zeroed here)
 *   weak ref        GC_MALLOC_ATOMIC(3 words)         id, check, the hidden target (the link)
 * A field is NULL (empty), an odd word 2V+1 (the integer V: never an aligned block's address,
 * though bdwgc with interior pointers may keep a block alive through one; it is conservative),
 * or the address of a block.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

/* ---- Blocks ---------------------------------------------------------------------------------- */

/* An op that may allocate gets the pause_steps budget for any stopped mark it triggers. */
void bdwgc_op_begin(fuzz_bheap *h) { bdwgc_steps_left = h->auto_steps ? h->auto_steps : SIZE_MAX; }

/* The end of an op that allocated: a collection the allocation triggered may have queued
 * finalizers, and they run now, before the driver's next op can make their blocks reachable
 * again (a range word aimed at a dead block's address revives it), not at the next
 * run_finalizers; and never inside bdwgc, in the middle of the backend's own bookkeeping. They
 * run before the op's own effect on the cells, as the driver's model has it: a finalizer that
 * resurrects into the destination cell is then overwritten by the new block. */
void bdwgc_op_end(void) {
  bdwgc_steps_left = SIZE_MAX;
  if (GC_should_invoke_finalizers()) GC_invoke_finalizers();
}

/* A root slot for the block an allocating op is making until it lands in its cell (past
 * INFLIGHT_MAX nested ops, the outer block is kept by the C stack alone, conservatively). */
size_t bdwgc_inflight_enter(fuzz_bheap *h) { return h->cfg.cells + 1 + h->depth++ % INFLIGHT_MAX; }

void bdwgc_inflight_leave(fuzz_bheap *h, size_t slot) {
  h->cells[slot] = NULL;
  h->depth--;
}

int bdwgc_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  if (fields > MAX_FIELDS) fields = MAX_FIELDS;
  size_t words = fields + IDENT_WORDS;
  bdwgc_op_begin(h);
  void *p = shape == FUZZ_SHAPE_RAW ? GC_MALLOC_ATOMIC(words * sizeof(uintptr_t))
                                    : GC_MALLOC(words * sizeof(uintptr_t));
  bdwgc_steps_left = SIZE_MAX;
  size_t slot = bdwgc_inflight_enter(h);
  int ok = p != NULL;
  if (!ok) h->rare[BDWGC_RARE_ALLOC_FAILED]++;
  if (ok) {
    if (shape == FUZZ_SHAPE_RAW) memset(p, 0, words * sizeof(uintptr_t)); /* atomic: not cleared */
    h->cells[slot] = p; /* a root before the registry allocates (and may collect) */
    ok = bdwgc_reg_add(h, p, (uint32_t)words, shape == FUZZ_SHAPE_RAW ? SHAPE_RAW : SHAPE_SCAN);
  }
  bdwgc_op_end();
  h->cells[dst] = ok ? p : NULL;
  bdwgc_inflight_leave(h, slot);
  return ok;
}

/* Where the identity of the block at p lies: after the fields of a scanned block, first in the
 * others. A block the registry does not know (it cannot be in a cell) gives NULL. */
static uintptr_t *ident_of(fuzz_bheap *h, uintptr_t *p) {
  block_entry *e = bdwgc_reg_find(&h->reg, p);
  if (e == NULL) return NULL;
  return e->shape == SHAPE_SCAN ? p + e->words - IDENT_WORDS : p;
}

void bdwgc_set_ident(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check) {
  uintptr_t *p = bdwgc_block(h, cell), *ident = p != NULL ? ident_of(h, p) : NULL;
  if (ident == NULL) return;
  ident[0] = id;
  ident[1] = check;
}

int bdwgc_get_ident(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check) {
  uintptr_t *p = bdwgc_block(h, cell);
  if (p == NULL) return 0;
  uintptr_t *ident = ident_of(h, p);
  *id = ident != NULL ? ident[0] : 0;
  *check = ident != NULL ? ident[1] : 0;
  return 1;
}

/* Every pointer store goes through bdwgc's write barrier: in manual-VDB incremental mode the
 * dirty bit it sets is how a marked object gets rescanned; otherwise it is a plain store. */
void bdwgc_store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  uintptr_t *p = bdwgc_block(h, obj);
  if (p == NULL) return;
  GC_ptr_store_and_dirty(&p[field], h->cells[src]);
}

/* No barrier: an odd word is not a reference bdwgc must see. */
void bdwgc_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  uintptr_t *p = bdwgc_block(h, obj);
  if (p == NULL) return;
  p[field] = (uintptr_t)value * 2 + 1;
}

/* A block the registry holds and bdwgc has not given up on. */
bool bdwgc_live_block(fuzz_bheap *h, uintptr_t word) {
  block_entry *e = bdwgc_reg_find(&h->reg, (const void *)word);
  return e != NULL && e->link != 0;
}

fuzz_field_kind bdwgc_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field, int64_t *value) {
  uintptr_t *p = bdwgc_block(h, obj);
  uintptr_t w = p != NULL ? p[field] : 0;
  if (w != 0 && (w & 1) == 0 && bdwgc_live_block(h, w)) {
    h->cells[dst] = (void *)w;
    return FUZZ_FIELD_BLOCK;
  }
  h->cells[dst] = NULL;
  if (w == 0) return FUZZ_FIELD_EMPTY;
  if (w & 1) {
    *value = (int64_t)(w >> 1);
    return FUZZ_FIELD_INT;
  }
  return FUZZ_FIELD_OTHER;
}

void bdwgc_raw_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  uintptr_t *p = bdwgc_block(h, obj);
  if (p != NULL) p[IDENT_WORDS + word] = value;
}

uint64_t bdwgc_raw_read(fuzz_bheap *h, size_t obj, size_t word) {
  uintptr_t *p = bdwgc_block(h, obj);
  return p != NULL ? p[IDENT_WORDS + word] : 0;
}

void bdwgc_copy(fuzz_bheap *h, size_t dst, size_t src) { h->cells[dst] = h->cells[src]; }
void bdwgc_clear(fuzz_bheap *h, size_t cell) { h->cells[cell] = NULL; }

/* ---- Conservative ranges --------------------------------------------------------------------- */

int bdwgc_range_add(fuzz_bheap *h, uintptr_t *words, size_t count) {
  if (h->range_count == MAX_RANGES || words == NULL) return 0;
  if (count == 0) return 1;
  GC_add_roots(words, words + count);
  h->ranges[h->range_count] = words;
  h->range_words[h->range_count++] = count;
  return 1;
}

int bdwgc_address(fuzz_bheap *h, size_t cell, uintptr_t *start, size_t *bsize) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  *start = (uintptr_t)GC_base(p);
  *bsize = GC_size(p);
  return 1;
}

/* ---- Introspection --------------------------------------------------------------------------- */

/* Every block whose long link bdwgc has not cleared: reachable, or unreachable but not yet
 * found so by a completed cycle. All carry an identity. */
size_t bdwgc_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                  void *user) {
  registry *r = &h->reg;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = bdwgc_reg_entry(r, i);
    if (e->key == 0 || e->link == 0) continue;
    const uintptr_t *p = GC_REVEAL_POINTER(e->key);
    const uintptr_t *ident = e->shape == SHAPE_SCAN ? p + e->words - IDENT_WORDS : p;
    visit(user, ident[0], ident[1]);
  }
  return 0;
}

/* The bytes of the blocks bdwgc still holds by its own verdict (their links), at its own object
 * sizes (GC_size: the request plus bdwgc's rounding and interior-pointer byte). */
size_t bdwgc_live_bytes(fuzz_bheap *h) {
  registry *r = &h->reg;
  size_t bytes = 0;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = bdwgc_reg_entry(r, i);
    if (e->key != 0 && e->link != 0) bytes += GC_size(GC_REVEAL_POINTER(e->key));
  }
  return bytes;
}
