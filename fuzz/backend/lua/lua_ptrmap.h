/* The Lua backend's map from addresses to 64-bit values: its index of live allocations, its
 * finalizer tokens, its ended coroutines, and the deep check's table of listed objects. */
#ifndef FUZZ_BACKEND_LUA_LUA_PTRMAP_H
#define FUZZ_BACKEND_LUA_LUA_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

/* Open addressing, linear probing, deletion by backward shift (no tombstones); key 0 is never
 * stored. Its memory is the C library's, never Lua's: the backend's bookkeeping is not part of
 * the heap it measures. */
typedef struct luab_ptrmap {
  uintptr_t *keys;
  uint64_t *values;
  size_t capacity; /* a power of two, or 0 */
  size_t count;
} luab_ptrmap;

void luab_ptrmap_free(luab_ptrmap *m);
/* 0 when the map could not grow (out of memory). */
int luab_ptrmap_put(luab_ptrmap *m, uintptr_t key, uint64_t value);
/* 1 and *value when present. */
int luab_ptrmap_get(const luab_ptrmap *m, uintptr_t key, uint64_t *value);
/* 1 when it was present. */
int luab_ptrmap_del(luab_ptrmap *m, uintptr_t key);

#endif /* FUZZ_BACKEND_LUA_LUA_PTRMAP_H */
