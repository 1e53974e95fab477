/* The set of blocks a walk has met; see seenset.h. */
#include "invariants/seenset.h"

#include <stdlib.h>
#include <string.h>

#include "gc/pool.h"

/* Make room for `count` items of `size` bytes in *buf (capacity *capacity items), growing to at
 * least twice the old room so a growing heap reallocates rarely. 0 when out of memory or beyond
 * `max_bytes` (0: no bound); *buf is then unchanged. */
static int ensure(void **buf, size_t *capacity, size_t count, size_t size, size_t max_bytes) {
  if (count <= *capacity) return 1;
  size_t want = *capacity * 2 > count ? *capacity * 2 : count;
  if (max_bytes != 0 && want * size > max_bytes) want = count;
  if (max_bytes != 0 && want * size > max_bytes) return 0;
  void *more = realloc(*buf, want * size);
  if (more == NULL) return 0;
  *buf = more;
  *capacity = want;
  return 1;
}

int gc_seenset_reset(gc_seenset *s, const gc_heapindex *ix) {
  /* Each table is bounded by the whole of max_bytes: a test bounds the one it aims at. */
  if (!ensure((void **)&s->pool_bits, &s->pool_capacity, ix->pool_count, GC_SEENSET_POOL_BYTES,
              s->max_bytes) ||
      !ensure((void **)&s->larges, &s->large_capacity, ix->large_count, 1, s->max_bytes)) {
    return 0;
  }
  for (size_t i = 0; i < ix->pool_count; i++) { /* INV-SEEN-1: up to each frontier */
    uintptr_t pool = ix->pool_list[i].key;
    uintptr_t frontier = (uintptr_t)((const gc_pool *)pool)->frontier;
    size_t words = frontier <= pool                   ? 0
                   : frontier - pool >= GC_POOL_BSIZE ? GC_POOL_WSIZE
                                                      : (frontier - pool) / GC_WORD_BSIZE;
    memset(&s->pool_bits[i * GC_SEENSET_POOL_WORDS], 0, (words + 63) / 64 * sizeof(uint64_t));
  }
  if (ix->large_count > 0) memset(s->larges, 0, ix->large_count);
  return 1;
}

void gc_seenset_free(gc_seenset *s) {
  free(s->pool_bits);
  free(s->larges);
  memset(s, 0, sizeof *s);
}

int gc_seenset_has_block(const gc_seenset *s, gc_heapindex *ix, gc_value v) {
  gc_header *hp = gc_hp_val(v);
  unsigned c;
  size_t ordinal;
  gc_pool *p = gc_heapindex_pool_at(ix, (uintptr_t)hp, &c, &ordinal);
  if (p != NULL) {
    if (hp < gc_pool_first_slot(p) || hp >= p->frontier) return 0; /* INV-SEEN-1 */
    size_t word = ((uintptr_t)hp & (GC_POOL_BSIZE - 1)) / GC_WORD_BSIZE;
    return (int)((s->pool_bits[ordinal * GC_SEENSET_POOL_WORDS + word / 64] >> (word % 64)) & 1);
  }
  return gc_heapindex_large(ix, v, &ordinal) != NULL && s->larges[ordinal];
}
