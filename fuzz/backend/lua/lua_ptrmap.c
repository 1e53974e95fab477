/* The backend's map from addresses to 64-bit values (lua_ptrmap.h). */
#include "fuzz/backend/lua/lua_ptrmap.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uintptr_t key, size_t mask) {
  uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h ^ (h >> 29)) & mask;
}

static int ptrmap_grow(luab_ptrmap *m) {
  size_t cap = m->capacity ? m->capacity * 2 : 64;
  uintptr_t *keys = calloc(cap, sizeof *keys);
  uint64_t *values = calloc(cap, sizeof *values);
  if (keys == NULL || values == NULL) {
    free(keys);
    free(values);
    return 0;
  }
  for (size_t i = 0; i < m->capacity; i++) {
    if (m->keys[i] == 0) continue;
    size_t s = slot_of(m->keys[i], cap - 1);
    while (keys[s] != 0) s = (s + 1) & (cap - 1);
    keys[s] = m->keys[i];
    values[s] = m->values[i];
  }
  free(m->keys);
  free(m->values);
  m->keys = keys;
  m->values = values;
  m->capacity = cap;
  return 1;
}

void luab_ptrmap_free(luab_ptrmap *m) {
  free(m->keys);
  free(m->values);
  memset(m, 0, sizeof *m);
}

int luab_ptrmap_put(luab_ptrmap *m, uintptr_t key, uint64_t value) {
  if ((m->count + 1) * 2 > m->capacity && !ptrmap_grow(m)) return 0;
  size_t mask = m->capacity - 1, s = slot_of(key, mask);
  while (m->keys[s] != 0 && m->keys[s] != key) s = (s + 1) & mask;
  if (m->keys[s] == 0) m->count++;
  m->keys[s] = key;
  m->values[s] = value;
  return 1;
}

int luab_ptrmap_get(const luab_ptrmap *m, uintptr_t key, uint64_t *value) {
  if (m->capacity == 0) return 0;
  size_t mask = m->capacity - 1, s = slot_of(key, mask);
  for (; m->keys[s] != 0; s = (s + 1) & mask) {
    if (m->keys[s] == key) {
      if (value != NULL) *value = m->values[s];
      return 1;
    }
  }
  return 0;
}

int luab_ptrmap_del(luab_ptrmap *m, uintptr_t key) {
  if (m->capacity == 0) return 0;
  size_t mask = m->capacity - 1, s = slot_of(key, mask);
  while (m->keys[s] != key) {
    if (m->keys[s] == 0) return 0;
    s = (s + 1) & mask;
  }
  /* Backward shift: pull later entries of the run into the hole when their home allows it. */
  for (size_t next = (s + 1) & mask; m->keys[next] != 0; next = (next + 1) & mask) {
    size_t home = slot_of(m->keys[next], mask);
    if (((next - home) & mask) >= ((next - s) & mask)) {
      m->keys[s] = m->keys[next];
      m->values[s] = m->values[next];
      s = next;
    }
  }
  m->keys[s] = 0;
  m->count--;
  return 1;
}
