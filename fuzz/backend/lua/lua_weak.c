/* The Lua backend's weak references and ephemerons (lua_heap.h): tables with __mode "v" and
 * "k". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

static int op_weak_new(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->b); /* the target, held on the stack from here */
  /* dst's old block is dropped before the allocation (a finalizer may run then and read the
   * cell), unless dst is the target: the driver's model does the same. */
  if (a->a != a->b) luab_empty_cell(L, cells, a->a);
  luab_arm_failures(a);
  lua_createtable(L, 1 + IDENT_WORDS, 0);
  lua_rotate(L, -2, 1); /* table, target */
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 2);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 3);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + LUAB_MT_WEAK);
  lua_setmetatable(L, -2);
  luab_set_cell(L, cells, a->a);
  a->result = 1;
  return 0;
}

int luab_weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  luab_args a = {.a = dst, .b = target};
  if (luab_protect(h, op_weak_new, "weak_new", &a, 1) && a.result) return 1;
  luab_cell_clear(h, dst); /* refused: dst empty */
  return 0;
}

static int op_weak_get(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->b);
  if (lua_type(L, -1) != LUA_TTABLE || luab_disarmed(luab_top_kind(a->h)) != LUAB_MT_WEAK) {
    luab_empty_cell(L, cells, a->a);
    return 0;
  }
  lua_rawgeti(L, -1, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    luab_empty_cell(L, cells, a->a);
    return 0;
  }
  a->result = luab_take_block(a->h, cells, a->a);
  if (!a->result) luab_pend(a->h, "weak-slot", "weak reference in cell %zu holds no block", a->b);
  return 0;
}

int luab_weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  luab_args a = {.a = dst, .b = weak};
  return luab_protect(h, op_weak_get, "weak_get", &a, 0) && a.result;
}

static int op_ephe_new(lua_State *L) {
  luab_args *a = luab_args_of(L);
  /* Key and datum are read before anything allocates (a finalizer may run then). */
  int cells = luab_push_cell(L, a->b);
  int key = lua_gettop(L);
  lua_rawgeti(L, cells, (lua_Integer)a->c + 1);
  int datum = lua_gettop(L);
  if (lua_isnil(L, datum)) {
    /* An empty datum: false keeps the entry (and so "the key lives") visible. */
    lua_pushboolean(L, 0);
    lua_replace(L, datum);
  }
  if (a->a != a->b && a->a != a->c) luab_empty_cell(L, cells, a->a); /* as in op_weak_new */
  luab_arm_failures(a);
  lua_createtable(L, IDENT_WORDS, 1);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 2);
  if (!lua_isnil(L, key)) {
    lua_pushvalue(L, key);
    lua_pushvalue(L, datum);
    lua_rawset(L, -3); /* the one hash node createtable made: no allocation */
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + LUAB_MT_EPHE);
  lua_setmetatable(L, -2);
  luab_set_cell(L, cells, a->a);
  a->result = 1;
  return 0;
}

int luab_ephe_new(fuzz_bheap *h, size_t dst, size_t key, size_t datum) {
  luab_args a = {.a = dst, .b = key, .c = datum};
  if (luab_protect(h, op_ephe_new, "ephe_new", &a, 1) && a.result) return 1;
  luab_cell_clear(h, dst); /* refused: dst empty */
  return 0;
}

static int op_ephe_get(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->b);
  int ephe = lua_gettop(L);
  if (lua_type(L, -1) != LUA_TTABLE || luab_disarmed(luab_top_kind(a->h)) != LUAB_MT_EPHE) {
    luab_empty_cell(L, cells, a->a);
    return 0;
  }
  /* The one entry whose key is not an integer (the identity slots are). */
  lua_pushnil(L);
  while (lua_next(L, ephe) != 0) {
    if (lua_isinteger(L, -2)) {
      lua_pop(L, 1);
      continue;
    }
    a->result = 1;
    if (lua_isboolean(L, -1)) {
      lua_pop(L, 1);
      luab_empty_cell(L, cells, a->a);
    } else if (!luab_take_block(a->h, cells, a->a)) {
      luab_pend(a->h, "weak-slot", "ephemeron in cell %zu holds a datum that is no block", a->b);
    }
    return 0;
  }
  luab_empty_cell(L, cells, a->a);
  return 0;
}

int luab_ephe_get(fuzz_bheap *h, size_t dst, size_t ephe) {
  luab_args a = {.a = dst, .b = ephe};
  return luab_protect(h, op_ephe_get, "ephe_get", &a, 0) && a.result;
}

/* Sets (FUZZ_CAP_WEAK_SET): rawset on the weak table, whose back barrier (luaC_barrierback) makes
 * the table gray again while Lua marks. Neither allocates: a weak reference's slot is in the
 * array part, and an ephemeron's one hash node is emptied before the new entry takes it. */
static int op_weak_set(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->a);
  if (lua_type(L, -1) != LUA_TTABLE || luab_disarmed(luab_top_kind(a->h)) != LUAB_MT_WEAK) return 0;
  lua_rawgeti(L, cells, (lua_Integer)a->b + 1); /* the target, or nil */
  int none = lua_isnil(L, -1);
  lua_rawseti(L, -2, 1);
  /* Emptied here, not cleared by the collector (lua_census.c); a target set is clearable again. */
  const void *weak = lua_topointer(L, -1);
  if (none)
    luab_ptrmap_put(&a->h->weak_empty, (uintptr_t)weak, 1);
  else
    luab_ptrmap_del(&a->h->weak_empty, (uintptr_t)weak);
  return 0;
}

void luab_weak_set(fuzz_bheap *h, size_t weak, size_t target) {
  luab_args a = {.a = weak, .b = target};
  luab_protect(h, op_weak_set, "weak_set", &a, 0);
}

static int op_ephe_set(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->a);
  int ephe = lua_gettop(L);
  if (lua_type(L, -1) != LUA_TTABLE || luab_disarmed(luab_top_kind(a->h)) != LUAB_MT_EPHE) return 0;
  /* The old entry goes: the one whose key is not an integer (an entry Lua cleared is skipped). */
  lua_pushnil(L);
  while (lua_next(L, ephe) != 0) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1)) continue;
    lua_pushnil(L);
    lua_rawset(L, ephe);
    break;
  }
  lua_settop(L, ephe);
  /* A key without a datum is no entry: its gets answer empty, as the model's. */
  lua_rawgeti(L, cells, (lua_Integer)a->b + 1);
  lua_rawgeti(L, cells, (lua_Integer)a->c + 1);
  if (!lua_isnil(L, -2) && !lua_isnil(L, -1)) lua_rawset(L, ephe);
  return 0;
}

void luab_ephe_set(fuzz_bheap *h, size_t ephe, size_t key, size_t datum) {
  luab_args a = {.a = ephe, .b = key, .c = datum};
  luab_protect(h, op_ephe_set, "ephe_set", &a, 0);
}
