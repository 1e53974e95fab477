/* The heap index and the owner iterator. */
#include "invariants/heapindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- Owners -------------------------------------------------------------------------------- */

/* "domain <id>" without snprintf: the owners are listed at every hook point, the names read
 * only by reports. */
static void domain_name(char *buf, unsigned id) {
  static const char prefix[] = "domain ";
  memcpy(buf, prefix, sizeof prefix - 1);
  size_t n = 1;
  for (unsigned rest = id / 10; rest != 0; rest /= 10) n++;
  char *p = buf + sizeof prefix - 1;
  p[n] = '\0';
  do {
    p[--n] = (char)('0' + id % 10);
    id /= 10;
  } while (n > 0);
}

/* Every field is assigned (no memset: owners are listed at every hook point). */
static void owner_of_domain(gc_domain *d, gc_verify_owner *out) {
  domain_name(out->name, d->id);
  out->domain = d;
  out->stats = &d->stats;
  out->pool_lists[GC_VERIFY_AVAIL] = d->avail;
  out->pool_lists[GC_VERIFY_FULL] = d->full;
  out->pool_lists[GC_VERIFY_UNSWEPT_AVAIL] = d->unswept_avail;
  out->pool_lists[GC_VERIFY_UNSWEPT_FULL] = d->unswept_full;
  out->large_lists[GC_VERIFY_SWEPT_LARGE] = &d->swept_large;
  out->large_lists[GC_VERIFY_UNSWEPT_LARGE] = &d->unswept_large;
  out->sweeping = d->sweeping;
}

/* INV-ORPHAN-1: orphans were swept before they were orphaned; they have no unswept lists. */
static void owner_of_orphans(gc_heap *heap, gc_verify_owner *out) {
  memcpy(out->name, "orphans", sizeof "orphans");
  out->domain = NULL; /* an orphaned pool has no owner */
  out->stats = &heap->orphans.stats;
  out->pool_lists[GC_VERIFY_AVAIL] = heap->orphans.avail;
  out->pool_lists[GC_VERIFY_FULL] = heap->orphans.full;
  out->pool_lists[GC_VERIFY_UNSWEPT_AVAIL] = NULL;
  out->pool_lists[GC_VERIFY_UNSWEPT_FULL] = NULL;
  out->large_lists[GC_VERIFY_SWEPT_LARGE] = &heap->orphans.large;
  out->large_lists[GC_VERIFY_UNSWEPT_LARGE] = NULL;
  out->sweeping = 0;
}

static const char *const pool_list_names[GC_VERIFY_POOL_LISTS] = {"avail", "full", "unswept_avail",
                                                                  "unswept_full"};
static const char *const large_list_names[GC_VERIFY_LARGE_LISTS] = {"swept_large", "unswept_large"};

int gc_verify_owner_next(gc_heap *heap, size_t *cursor, gc_verify_owner *out) {
  /* The passes run with the world stopped (or on one domain), so the list is stable. */
  size_t domains = gc_atomic_load_relaxed(&heap->domain_count);
  if (*cursor < domains) {
    owner_of_domain(heap->domains[*cursor], out);
  } else if (*cursor == domains) {
    owner_of_orphans(heap, out);
  } else {
    return 0;
  }
  (*cursor)++;
  for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) out->pool_list_names[l] = pool_list_names[l];
  for (int l = 0; l < GC_VERIFY_LARGE_LISTS; l++) out->large_list_names[l] = large_list_names[l];
  return 1;
}

/* Not instrumented at all: called for every list of every owner at every hook point, its reads
 * with an address check, an alignment and an overflow check and a coverage counter each cost
 * more than the rest of building the index. Nothing is lost: `heads` is an array of the owner's
 * structure (gc_verify_owner_next), which gc_verify_owner_next has just read, instrumented, for
 * the owner's other fields; so a freed or wild owner is reported there, before this runs. */
GC_VERIFY_NOT_INSTRUMENTED uint32_t gc_verify_pool_classes(gc_pool *const *heads) {
  uint32_t bits = 0;
  unsigned c = 0;
#if defined(__SSE2__)
  /* Most lists of most owners are empty at any point: one OR over the heads says so for a
   * quarter of the instructions of the bit per class below. */
  __m128i any = _mm_setzero_si128();
  for (unsigned k = 0; k + 2 <= GC_NUM_SIZECLASSES; k += 2) {
    any = _mm_or_si128(any, _mm_loadu_si128((const __m128i *)&heads[k]));
  }
  int none = _mm_movemask_epi8(_mm_cmpeq_epi8(any, _mm_setzero_si128())) == 0xFFFF;
  for (unsigned k = GC_NUM_SIZECLASSES & ~1u; k < GC_NUM_SIZECLASSES; k++) {
    none &= heads[k] == NULL;
  }
  if (none) return 0;
  /* Two heads a step (it runs some twenty times per hook point): a head is NULL when both
   * 32-bit halves of its lane are zero; movemask takes each lane's top bit. */
  const __m128i zero = _mm_setzero_si128();
  for (; c + 2 <= GC_NUM_SIZECLASSES; c += 2) {
    __m128i halves = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)&heads[c]), zero);
    __m128i null = _mm_and_si128(halves, _mm_shuffle_epi32(halves, _MM_SHUFFLE(2, 3, 0, 1)));
    bits |= (uint32_t)(~_mm_movemask_pd(_mm_castsi128_pd(null)) & 3) << c;
  }
#endif
  for (; c < GC_NUM_SIZECLASSES; c++) bits |= (uint32_t)(heads[c] != NULL) << c;
  return bits;
}

/* ---- Building ------------------------------------------------------------------------------ */

/* Append (key, value) to a dense list, growing it; 0 when out of memory. */
static int list_append(gc_addrmap_entry **list, size_t *count, size_t *capacity, uintptr_t key,
                       uint64_t value) {
  if (*count == *capacity) {
    size_t more = *capacity ? 2 * *capacity : 16;
    gc_addrmap_entry *grown = realloc(*list, more * sizeof *grown);
    if (grown == NULL) return 0;
    *list = grown;
    *capacity = more;
  }
  (*list)[(*count)++] = (gc_addrmap_entry){key, value};
  return 1;
}

int gc_heapindex_build(gc_heapindex *ix, gc_heap *heap) {
  ix->pool_count = 0; /* the lists' buffers are kept */
  ix->large_count = 0;
  ix->sorted_count = 0; /* its buffer is kept */
  ix->sorted_built = 0;
  ix->heap = heap;
  ix->complete = 1;
  /* The maps keep their buckets (they grow while adding when a heap outgrows them). */
  if (!gc_poolmap_reset(&ix->pools) || !gc_addrmap_reset(&ix->larges, 0)) {
    ix->complete = 0;
  }
  size_t cursor = 0;
  gc_verify_owner o;
  while (gc_verify_owner_next(heap, &cursor, &o)) {
    for (int l = 0; l < GC_VERIFY_POOL_LISTS; l++) {
      if (o.pool_lists[l] == NULL) continue;
      for (uint32_t bits = gc_verify_pool_classes(o.pool_lists[l]); bits != 0; bits &= bits - 1) {
        gc_sizeclass c = (gc_sizeclass)__builtin_ctz(bits);
        /* A pool seen twice means a cycle or a pool on two lists (the swept pass reports it);
         * stopping there keeps the walk finite. */
        for (gc_pool *p = o.pool_lists[l][c]; p != NULL; p = p->next) {
          unsigned cls = p->size_class < GC_NUM_SIZECLASSES ? p->size_class : GC_NUM_SIZECLASSES;
          int added = gc_poolmap_add(&ix->pools, (uintptr_t)p,
                                     cls | (uint64_t)ix->pool_count << GC_HEAPINDEX_CLASS_BITS);
          if (added > 0 && !list_append(&ix->pool_list, &ix->pool_count, &ix->pool_list_capacity,
                                        (uintptr_t)p, cls)) {
            gc_poolmap_remove(&ix->pools, (uintptr_t)p); /* INV-HINDEX-1 */
            added = -1;
          }
          if (added < 0) ix->complete = 0;
          if (added <= 0) break;
        }
      }
    }
    for (int l = 0; l < GC_VERIFY_LARGE_LISTS; l++) {
      if (o.large_lists[l] == NULL) continue;
      for (gc_large *a = *o.large_lists[l]; a != NULL; a = a->next) {
        gc_value v = gc_val_hp(gc_large_hp(a));
        int added = gc_addrmap_add(&ix->larges, v, ix->large_count);
        if (added > 0 && !list_append(&ix->large_list, &ix->large_count, &ix->large_list_capacity,
                                      v, (uint64_t)(uintptr_t)a)) {
          gc_addrmap_remove(&ix->larges, v); /* INV-HINDEX-1 */
          added = -1;
        }
        if (added < 0) ix->complete = 0;
        if (added <= 0) break;
      }
    }
  }
  return ix->complete;
}

void gc_heapindex_free(gc_heapindex *ix) {
  gc_poolmap_free(&ix->pools);
  gc_addrmap_free(&ix->larges);
  free(ix->sorted_larges);
  free(ix->pool_list);
  free(ix->large_list);
  memset(ix, 0, sizeof *ix);
}

/* ---- Lookups ------------------------------------------------------------------------------- */

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (gc_large *const *)a, y = (uintptr_t) * (gc_large *const *)b;
  return x < y ? -1 : x > y;
}

/* Only the diagnosis of a bad pointer needs large blocks by address; correct heaps never get
 * here, so the sort is paid only when something is already wrong. */
static void build_sorted_larges(gc_heapindex *ix) {
  ix->sorted_built = 1;
  ix->sorted_count = 0;
  if (ix->sorted_capacity < ix->large_count + 1) {
    gc_large **more = realloc(ix->sorted_larges, (ix->large_count + 1) * sizeof *more);
    if (more == NULL) return; /* the diagnosis says "outside" rather than "inside a large block" */
    ix->sorted_larges = more;
    ix->sorted_capacity = ix->large_count + 1;
  }
  for (size_t i = 0; i < ix->large_count; i++) {
    ix->sorted_larges[ix->sorted_count++] = (gc_large *)(uintptr_t)ix->large_list[i].word;
  }
  qsort(ix->sorted_larges, ix->sorted_count, sizeof *ix->sorted_larges, by_address);
}

/* The large block whose memory (gc_large header, block header and fields) contains addr. */
static gc_large *large_containing(gc_heapindex *ix, uintptr_t addr) {
  if (!ix->sorted_built) build_sorted_larges(ix);
  size_t lo = 0, hi = ix->sorted_count;
  while (lo < hi) { /* first block starting after addr */
    size_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)ix->sorted_larges[mid] <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return NULL;
  gc_large *a = ix->sorted_larges[lo - 1];
  uintptr_t end = (uintptr_t)gc_large_hp(a) + gc_bsize_wsize(gc_hd_whsize(*gc_large_hp(a)));
  return addr < end ? a : NULL;
}

gc_loc gc_heapindex_locate_start(gc_heapindex *ix, gc_value v) {
  gc_loc loc = {.kind = GC_LOC_OUTSIDE,
                .pool = NULL,
                .size_class = 0,
                .slot = 0,
                .large = NULL,
                .large_val = 0};
  gc_header *hp = gc_hp_val(v);
  unsigned c;
  gc_pool *p = gc_heapindex_pool(ix, (uintptr_t)hp, &c);
  if (p != NULL) {
    loc.pool = p;
    loc.size_class = c;
    loc.kind = GC_LOC_POOL_INTERIOR;
    if (c >= GC_NUM_SIZECLASSES) return loc;
    gc_header *first = gc_pool_first_slot(p);
    size_t slot_whsize = gc_wsize_of_class[c];
    if (hp >= first && hp < p->frontier && (size_t)(hp - first) % slot_whsize == 0) {
      loc.kind = GC_LOC_SLOT;
      loc.slot = (size_t)(hp - first) / slot_whsize;
    }
    return loc;
  }
  size_t ordinal;
  gc_large *a = gc_heapindex_large(ix, v, &ordinal);
  if (a != NULL) {
    loc.kind = GC_LOC_LARGE;
    loc.large = a;
    return loc;
  }
  loc.kind = GC_LOC_OUTSIDE;
  return loc;
}

gc_value gc_heapindex_containing(gc_heapindex *ix, uintptr_t word) {
  if (word < GC_POOL_BSIZE) return 0; /* nothing lives in the first pool-sized unit (page 0) */
  unsigned c;
  gc_pool *p = gc_heapindex_pool(ix, word, &c);
  if (p != NULL) {
    if (c >= GC_NUM_SIZECLASSES) return 0;
    gc_header *first = gc_pool_first_slot(p);
    if (word < (uintptr_t)first || word >= (uintptr_t)p->frontier) return 0;
    size_t slot_whsize = gc_wsize_of_class[c];
    gc_header *slot = first + (word - (uintptr_t)first) / gc_bsize_wsize(slot_whsize) * slot_whsize;
    gc_header hd = *slot;
    /* A header with no size is no block (every block has a field, INV-HD-1): a free slot whose
     * zero header something painted, ignored as a free slot is. */
    if (gc_hd_wsize(hd) == 0 || word >= (uintptr_t)(slot + gc_hd_whsize(hd))) return 0;
    return gc_val_hp(slot);
  }
  gc_large *a = large_containing(ix, word);
  if (a == NULL || word < (uintptr_t)gc_large_hp(a))
    return 0; /* in its bookkeeping, not the block */
  return gc_val_hp(gc_large_hp(a));
}

gc_loc gc_heapindex_locate(gc_heapindex *ix, gc_value v) {
  gc_loc loc = gc_heapindex_locate_start(ix, v);
  if (loc.kind != GC_LOC_OUTSIDE) return loc;
  /* Slow path: only bad pointers (and blocks already freed) get here. */
  unsigned c;
  gc_pool *p;
  if ((p = gc_heapindex_pool(ix, v, &c)) != NULL) { /* v at a pool's very start */
    loc.kind = GC_LOC_POOL_INTERIOR;
    loc.pool = p;
    loc.size_class = c;
    return loc;
  }
  gc_large *in = large_containing(ix, v);
  if (in != NULL) {
    loc.kind = GC_LOC_LARGE_INTERIOR;
    loc.large = in;
    loc.large_val = gc_val_hp(gc_large_hp(in));
    return loc;
  }
  loc.kind = GC_LOC_OUTSIDE;
  return loc;
}

int gc_heapindex_read_header(gc_heapindex *ix, gc_value v, gc_header *hd) {
  if (!gc_is_block(v)) return 0;
  gc_loc loc = gc_heapindex_locate_start(ix, v);
  if (loc.kind != GC_LOC_SLOT && loc.kind != GC_LOC_LARGE) return 0;
  *hd = gc_hd_val(v);
  return 1;
}

/* Is p on the heap's list of free pools? (Those are mapped, so walking the list is safe.) */
static int on_free_pool_list(gc_heap *heap, uintptr_t base) {
  size_t bound = heap->free_pool_count + 1;
  for (gc_pool *p = heap->free_pools; p != NULL && bound-- > 0; p = p->next) {
    if ((uintptr_t)p == base) return 1;
  }
  return 0;
}

void gc_heapindex_describe(gc_heapindex *ix, gc_value v, char *buf, size_t buf_len) {
  gc_loc loc = gc_heapindex_locate(ix, v);
  gc_header *hp = gc_hp_val(v);
  switch (loc.kind) {
    case GC_LOC_SLOT:
      snprintf(buf, buf_len, "pool %p class %u (%u-word slots), slot %zu", (void *)loc.pool,
               loc.size_class, (unsigned)gc_wsize_of_class[loc.size_class], loc.slot);
      return;
    case GC_LOC_POOL_INTERIOR:
      if (loc.size_class >= GC_NUM_SIZECLASSES) {
        snprintf(buf, buf_len, "pool %p with a corrupt size class", (void *)loc.pool);
        return;
      } else {
        gc_header *first = gc_pool_first_slot(loc.pool);
        size_t slot_whsize = gc_wsize_of_class[loc.size_class];
        gc_header *end = first + (size_t)gc_slots_of_class(loc.size_class) * slot_whsize;
        const char *part = hp < first                 ? "the pool header"
                           : hp >= end                ? "the pool's end wastage"
                           : hp >= loc.pool->frontier ? "an unused slot above the pool's frontier"
                                                      : NULL;
        if (part != NULL) {
          snprintf(buf, buf_len, "pool %p class %u: inside %s", (void *)loc.pool, loc.size_class,
                   part);
        } else {
          size_t word = (size_t)(hp - first);
          snprintf(buf, buf_len,
                   "pool %p class %u (%zu-word slots): word %zu of slot %zu, not a slot start",
                   (void *)loc.pool, loc.size_class, slot_whsize, word % slot_whsize,
                   word / slot_whsize);
        }
      }
      return;
    case GC_LOC_LARGE:
      snprintf(buf, buf_len, "large block (gc_large %p)", (void *)loc.large);
      return;
    case GC_LOC_LARGE_INTERIOR:
      snprintf(buf, buf_len, "inside large block %p at byte %zu, not its start",
               (void *)loc.large_val, (size_t)(v - loc.large_val));
      return;
    case GC_LOC_OUTSIDE: {
      uintptr_t base = v & ~(uintptr_t)(GC_POOL_BSIZE - 1);
      if (on_free_pool_list(ix->heap, base)) {
        snprintf(buf, buf_len, "inside pool %p, which is on the heap's free pool list (no owner)",
                 (void *)base);
      } else {
        snprintf(buf, buf_len, "outside every pool and large block in use");
      }
      return;
    }
  }
  snprintf(buf, buf_len, "?");
}

/* ---- Every block ---------------------------------------------------------------------------- */

void gc_heapindex_cursor_start(gc_heapindex_cursor *c, gc_heapindex *ix) {
  memset(c, 0, sizeof *c);
  c->ix = ix;
}

int gc_heapindex_next_block(gc_heapindex_cursor *c, gc_heapindex_block *b) {
  for (;;) {
    if (c->slot < c->limit) {
      gc_header *hp = c->slot;
      c->slot += c->slot_whsize;
      *b = (gc_heapindex_block){gc_val_hp(hp), *hp, c->slot_whsize};
      return 1;
    }
    if (c->next == (c->larges ? c->ix->large_count : c->ix->pool_count)) {
      if (c->larges) return 0;
      c->larges = 1;
      c->next = 0;
      continue;
    }
    const gc_addrmap_entry *e =
        c->larges ? &c->ix->large_list[c->next++] : &c->ix->pool_list[c->next++];
    uint64_t value = e->word;
    if (c->larges) {
      gc_header *hp = gc_large_hp((gc_large *)(uintptr_t)value);
      *b = (gc_heapindex_block){gc_val_hp(hp), *hp, SIZE_MAX};
      return 1;
    }
    unsigned cls = (unsigned)value;
    if (cls >= GC_NUM_SIZECLASSES) continue; /* a corrupt class: where its slots are is unknown */
    gc_pool *p = (gc_pool *)e->key;
    gc_header *first = gc_pool_first_slot(p);
    gc_header *end = first + (size_t)gc_slots_of_class(cls) * gc_wsize_of_class[cls];
    gc_header *frontier = p->frontier; /* a corrupt one is kept inside the pool's slots */
    c->slot = first;
    c->slot_whsize = gc_wsize_of_class[cls];
    c->limit = frontier < first ? first : frontier > end ? end : frontier;
  }
}

/* 1 for a block pointer (gc_is_block), 0 for anything else, as one compare: a block pointer is
 * even and not 0, and rotated right by one bit an odd word has its top bit set while 0 stays 0,
 * so the block pointers are exactly the words whose rotation minus one is below 2^63 - 1 (0 wraps
 * to the top). A macro: clang inlines no function into one whose sanitizer attributes differ. */
#define BLOCK_BIT(word) \
  ((uint64_t)((((word) >> 1) | ((word) << 63)) - 1 < UINT64_C(0x7fffffffffffffff)))

GC_VERIFY_NOT_INSTRUMENTED uint64_t gc_verify_block_fields(const gc_value *fields, size_t n) {
  /* The bits shifted in from the last field down; four fields at a time once n % 4 are done, and
   * four zero fields (a fuzzed heap's large blocks are mostly zeros) cost one test. Against the
   * iterator it replaced, called once per pointer field (a microbenchmark, clang -O2): 0.4 of
   * the time on mostly zero fields, 0.35 on 4-field blocks of mostly pointers. */
  uint64_t mask = 0;
  size_t i = n;
  while (i % 4 != 0) {
    i--;
    mask = mask * 2 + BLOCK_BIT(fields[i]);
  }
  while (i > 0) {
    i -= 4;
    if ((fields[i] | fields[i + 1] | fields[i + 2] | fields[i + 3]) == 0) {
      mask <<= 4;
      continue;
    }
    for (size_t k = 4; k-- > 0;) mask = mask * 2 + BLOCK_BIT(fields[i + k]);
  }
  return mask;
}
