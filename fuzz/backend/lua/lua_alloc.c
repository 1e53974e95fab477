/* The Lua backend's allocator (lua_heap.h): every allocation Lua makes, counted and indexed, and
 * the injected failures of fail_after. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

static int inject_failure(fuzz_bheap *h, const void *ptr, size_t osize, size_t nsize) {
  if (h->retry_armed) {
    h->retry_armed = 0;
    if (ptr == h->retry_ptr && osize == h->retry_osize && nsize == h->retry_nsize) return 1;
  }
  if (!h->failable || h->fail_countdown == 0 || h->L == NULL || (G(h->L)->gcstp & GCSTPGC))
    return 0;
  if (--h->fail_countdown > 0) return 0;
  h->fail_fired = 1;
  h->rare[LUAB_RARE_ALLOC_FAILED]++;
  h->retry_armed = 1;
  h->retry_ptr = ptr;
  h->retry_osize = osize;
  h->retry_nsize = nsize;
  return 1;
}

void *luab_allocate(void *ud, void *ptr, size_t osize, size_t nsize) {
  fuzz_bheap *h = ud;
  size_t old = 0;
  if (ptr != NULL) {
    uint64_t have;
    if (!luab_ptrmap_get(&h->allocs, (uintptr_t)ptr, &have)) {
      luab_pend(h, "alloc", "Lua %s %p (%zu bytes, it says), which is no live allocation",
                nsize ? "reallocates" : "frees", ptr, osize);
      return NULL;
    }
    if (have != osize)
      luab_pend(h, "alloc", "Lua %s %p as %zu bytes; it has %zu", nsize ? "reallocates" : "frees",
                ptr, osize, (size_t)have);
    old = (size_t)have;
  }
  if (nsize == 0) {
    if (ptr != NULL) {
      luab_ptrmap_del(&h->allocs, (uintptr_t)ptr);
      if (h->ended.count > 0) luab_ptrmap_del(&h->ended, (uintptr_t)ptr); /* a coroutine freed */
      if (h->weak_empty.count > 0) luab_ptrmap_del(&h->weak_empty, (uintptr_t)ptr);
      h->live_bytes -= old;
      free(ptr);
    }
    return NULL;
  }
  if (nsize > old && inject_failure(h, ptr, osize, nsize)) return NULL;
  if (h->fin_depth > 0) h->fin_allocated = 1;
  void *p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  if (ptr != NULL) luab_ptrmap_del(&h->allocs, (uintptr_t)ptr);
  if (!luab_ptrmap_put(&h->allocs, (uintptr_t)p, nsize)) {
    fprintf(stderr, "lua backend: out of memory for the allocation index\n");
    abort();
  }
  h->live_bytes = h->live_bytes - old + nsize;
  return p;
}

void luab_fail_after(fuzz_bheap *h, unsigned n) {
  h->fail_countdown = n;
  h->retry_armed = 0;
}
