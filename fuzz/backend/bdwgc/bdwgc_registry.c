/* The bdwgc backend's registry: the blocks this heap allocated, each with a long link that bdwgc
 * clears when a completed cycle finds the block unreachable (INV-BDWGC-1, bdwgc_heap.h).
 *
 * bdwgc has no "allocated" bit an outsider can read: an unmarked object is either garbage
 * awaiting the lazy sweep, on a free list, or allocated since the last cycle. So the backend
 * keeps its own table of the blocks it allocated, and asks the collector's own verdict about each
 * through a long link (GC_register_long_link): bdwgc clears the link at the end of the cycle that
 * finds the block unreachable (after finalization marking, so a block kept for a finalizer still
 * counts as held), and hands out its memory only after that. The registry gives the walk (the
 * blocks whose link is set), live_bytes (their GC_size) and the deep check its strongest test: a
 * block the driver can reach whose link is cleared is a block bdwgc decided was garbage while it
 * was reachable (INV-BACKEND-1), found at the first check after the faulty cycle, before its
 * memory is reused. The links live in malloc'd chunks bdwgc never scans, hidden, and never move.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

/* Reported at once through events.finding when the driver takes findings outside check (the
 * block bdwgc handed out wrongly is about to be used: a sanitizer would stop at the symptom);
 * kept for the next check otherwise (the tests). */
void bdwgc_note(fuzz_bheap *h, const char *kind, const char *fmt, const void *p) {
  fuzz_finding now, *f = h->pending_count < PENDING_MAX ? &h->pending[h->pending_count] : &now;
  snprintf(f->kind, sizeof f->kind, "%s", kind);
  snprintf(f->message, sizeof f->message, fmt, p);
  if (h->cfg.events.finding != NULL) {
    h->cfg.events.finding(h->cfg.events.user, f);
    return;
  }
  h->pending_count++;
}

static size_t slot_of(const registry *r, GC_hidden_pointer key) {
  uint64_t x = (uint64_t)key * 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 20) & (r->slot_count - 1);
}

/* The entry of the block at p (whatever its link says), or NULL. */
block_entry *bdwgc_reg_find(registry *r, const void *p) {
  if (r->slot_count == 0) return NULL;
  GC_hidden_pointer key = GC_HIDE_POINTER(p);
  for (size_t s = slot_of(r, key);; s = (s + 1) & (r->slot_count - 1)) {
    if (r->slots[s] == 0) return NULL;
    block_entry *e = bdwgc_reg_entry(r, r->slots[s] - 1);
    if (e->key == key) return e;
  }
}

static void slot_insert(registry *r, uint32_t index) {
  GC_hidden_pointer key = bdwgc_reg_entry(r, index)->key;
  size_t s = slot_of(r, key);
  while (r->slots[s] != 0) s = (s + 1) & (r->slot_count - 1);
  r->slots[s] = index + 1;
}

/* Remove by backward shift, so lookups need no tombstones. */
static void slot_remove(registry *r, GC_hidden_pointer key) {
  size_t mask = r->slot_count - 1, s = slot_of(r, key);
  while (bdwgc_reg_entry(r, r->slots[s] - 1)->key != key) s = (s + 1) & mask;
  for (size_t next = (s + 1) & mask; r->slots[next] != 0; next = (next + 1) & mask) {
    size_t home = slot_of(r, bdwgc_reg_entry(r, r->slots[next] - 1)->key);
    /* The entry at next may move to the hole at s when its home is not in (s, next]. */
    bool between = s <= next ? (s < home && home <= next) : (s < home || home <= next);
    if (!between) {
      r->slots[s] = r->slots[next];
      s = next;
    }
  }
  r->slots[s] = 0;
  r->keys--;
}

static bool registry_grow_slots(registry *r) {
  size_t count = r->slot_count ? r->slot_count * 2 : 1024;
  uint32_t *old = r->slots;
  size_t old_count = r->slot_count;
  r->slots = calloc(count, sizeof *r->slots);
  if (r->slots == NULL) {
    r->slots = old;
    return false;
  }
  r->slot_count = count;
  for (size_t s = 0; s < old_count; s++)
    if (old[s] != 0) slot_insert(r, old[s] - 1);
  free(old);
  return true;
}

/* Entries whose link bdwgc cleared go back to the free list; nothing to do when no collection
 * has ended since the last sweep. */
static void registry_sweep(registry *r) {
  GC_word gc_no = GC_get_gc_no();
  if (gc_no == r->swept_gc_no) return;
  r->swept_gc_no = gc_no;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = bdwgc_reg_entry(r, i);
    if (e->key == 0 || e->link != 0) continue;
    slot_remove(r, e->key);
    e->key = 0;
    r->free[r->free_count++] = i;
  }
}

/* A fresh entry index (links not yet registered), or false when out of memory. */
static bool registry_take(registry *r, uint32_t *index) {
  if (r->free_count == 0) registry_sweep(r);
  if (r->free_count > 0) {
    *index = r->free[--r->free_count];
    return true;
  }
  if (r->entries % CHUNK_ENTRIES == 0) {
    size_t chunk = r->entries / CHUNK_ENTRIES;
    block_entry **chunks = realloc(r->chunks, (chunk + 1) * sizeof *chunks);
    if (chunks == NULL) return false;
    r->chunks = chunks;
    uint32_t *free_list = realloc(r->free, (chunk + 1) * CHUNK_ENTRIES * sizeof *free_list);
    if (free_list == NULL) return false;
    r->free = free_list;
    chunks[chunk] = calloc(CHUNK_ENTRIES, sizeof **chunks);
    if (chunks[chunk] == NULL) return false;
    r->chunk_count = chunk + 1;
  }
  *index = (uint32_t)r->entries++;
  return true;
}

/* Enter the block at p, just allocated, and register its long link. A block already in the
 * registry at p whose link bdwgc has not cleared is memory bdwgc handed out again while it still
 * held the old block: a finding. Returns false when out of memory (the block is not entered). */
bool bdwgc_reg_add(fuzz_bheap *h, void *p, uint32_t words, block_shape shape) {
  registry *r = &h->reg;
  block_entry *e = bdwgc_reg_find(r, p);
  if (e != NULL) {
    if (e->link != 0) {
      bdwgc_note(
          h, "bdwgc.reused-live",
          "bdwgc allocated %p again while the block there still had its long link: the collector "
          "never found the old block unreachable, yet reused its memory",
          p);
      GC_unregister_long_link((void **)&e->link);
    }
  } else {
    if ((r->keys + 1) * 2 > r->slot_count && !registry_grow_slots(r)) return false;
    uint32_t index;
    if (!registry_take(r, &index)) return false;
    e = bdwgc_reg_entry(r, index);
    e->key = GC_HIDE_POINTER(p);
    slot_insert(r, index);
    r->keys++;
  }
  if (GC_get_kind_and_size(p, NULL) != bdwgc_kind_of(shape))
    bdwgc_note(h, "bdwgc.kind",
               "bdwgc handed out %p from a free list of another object kind (scanned for "
               "pointer-free or the reverse): an object on the wrong kind's free list",
               p);
  e->words = words;
  e->shape = (uint8_t)shape;
  e->has_fin = 0;
  e->seen = 0;
  e->link = GC_HIDE_POINTER(p);
  int rc = GC_register_long_link((void **)&e->link, p);
  if (rc == GC_DUPLICATE) /* bdwgc re-aimed the registration it still had at p: keep it */
    bdwgc_note(
        h, "bdwgc.link-duplicate",
        "GC_register_long_link on the registry entry of %p said the link was already registered, "
        "after bdwgc had cleared it",
        p);
  if (rc == GC_SUCCESS || rc == GC_DUPLICATE) return true;
  e->link = 0; /* out of memory: not registered, swept with the dead */
  return false;
}

void bdwgc_reg_free(registry *r) {
  for (size_t c = 0; c < r->chunk_count; c++) free(r->chunks[c]);
  free(r->chunks);
  free(r->free);
  free(r->slots);
  memset(r, 0, sizeof *r);
}
