/* The set of blocks a walk has met; see seenset.h. */
#include "invariants/seenset.h"

#include <stdlib.h>
#include <string.h>

/* Make room for `count` items of `size` bytes in *buf (capacity *capacity items), growing to at
 * least twice the old room so a growing heap reallocates rarely; the items added are zeroed.
 * 0 when out of memory or beyond `max_bytes` (0: no bound); *buf is then unchanged. */
static int ensure(void **buf, size_t *capacity, size_t count, size_t size, size_t max_bytes) {
  if (count <= *capacity) return 1;
  size_t want = *capacity * 2 > count ? *capacity * 2 : count;
  if (max_bytes != 0 && want * size > max_bytes) want = count;
  if (max_bytes != 0 && want * size > max_bytes) return 0;
  char *more = realloc(*buf, want * size);
  if (more == NULL) return 0;
  memset(more + *capacity * size, 0, (want - *capacity) * size);
  *buf = more;
  *capacity = want;
  return 1;
}

int gc_seenset_reset(gc_seenset *s, const gc_heapindex *ix) {
  /* Zero what the last walk set (INV-SEEN-1), in the memory it set it in. */
  for (size_t i = 0; i < s->dirty_count; i++) s->pool_bits[s->dirty[i]] = 0;
  s->dirty_count = 0;
  /* A new stamp; when they wrap, every stamp is forgotten the slow way. */
  if (++s->stamp == 0) {
    if (s->large_capacity > 0)
      memset(s->large_stamps, 0, s->large_capacity * sizeof *s->large_stamps);
    s->stamp = 1;
  }
  /* Each table is bounded by the whole of max_bytes: a test bounds the one it aims at. The list
   * has room for every word of bits, so it never overflows (INV-SEEN-1). */
  return ensure((void **)&s->pool_bits, &s->pool_capacity, ix->pool_count, GC_SEENSET_POOL_BYTES,
                s->max_bytes) &&
         ensure((void **)&s->dirty, &s->dirty_capacity, ix->pool_count,
                GC_SEENSET_POOL_WORDS * sizeof *s->dirty, s->max_bytes) &&
         ensure((void **)&s->large_stamps, &s->large_capacity, ix->large_count,
                sizeof *s->large_stamps, s->max_bytes);
}

void gc_seenset_free(gc_seenset *s) {
  free(s->pool_bits);
  free(s->dirty);
  free(s->large_stamps);
  memset(s, 0, sizeof *s);
}

int gc_seenset_has_block(const gc_seenset *s, gc_heapindex *ix, gc_value v) {
  gc_header *hp = gc_hp_val(v);
  unsigned c;
  size_t ordinal;
  if (gc_heapindex_pool_at(ix, (uintptr_t)hp, &c, &ordinal) != NULL) {
    size_t word = ((uintptr_t)hp & (GC_POOL_BSIZE - 1)) / GC_WORD_BSIZE;
    return (int)((s->pool_bits[ordinal * GC_SEENSET_POOL_WORDS + word / 64] >> (word % 64)) & 1);
  }
  return gc_heapindex_large(ix, v, &ordinal) != NULL && s->large_stamps[ordinal] == s->stamp;
}
