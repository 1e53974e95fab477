/* The Lua backend's finalizers (lua_heap.h): the __gc of every armed block, fin_set and
 * fin_clear. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

/* The rare events of a finalizer that just ran (lua_census.c): by a step or a full collection,
 * whether it allocated, and whether its block is left in a cell other than SELF (the driver
 * resurrected it: `fin sS sK`, `self`; a resurrection into a field is not seen). */
static void count_finalizer(fuzz_bheap *h, lua_State *L, int cells, const GCObject *o) {
  h->rare[LUAB_RARE_FIN_RUN]++;
  if (!h->in_full) h->rare[LUAB_RARE_FIN_IN_STEP]++;
  if (h->fin_allocated) h->rare[LUAB_RARE_FIN_ALLOCATED]++;
  for (size_t c = 0; c < h->cells; c++) {
    lua_rawgeti(L, cells, (lua_Integer)c + 1);
    int here = luab_top_object(L) == o;
    lua_pop(L, 1);
    if (here) {
      h->rare[LUAB_RARE_FIN_RESURRECTED]++;
      break;
    }
  }
}

/* The __gc of every armed block. It disarms the block's marker (so a _FIN marker always means
 * "armed and not yet run": lua.finalizer-lost), shows the block in the SELF cell for the
 * driver's callback, and empties the cell after. */
int luab_run_finalizer(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  fuzz_bheap *h = ud;
  if (h->closing) return 0; /* destroy: finalizers still set do not run */
  lua_settop(L, 1);
  const GCObject *o = luab_top_object(L);
  uint64_t token;
  if (o == NULL || !luab_ptrmap_get(&h->tokens, (uintptr_t)o, &token)) {
    luab_pend(h, "finalizer-unknown", "__gc ran on %p, which no fin_set armed", (const void *)o);
    return 0;
  }
  luab_ptrmap_del(&h->tokens, (uintptr_t)o);
  luab_mt kind = luab_top_kind(h);
  if (kind != LUAB_MT_COUNT) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + luab_disarmed(kind));
    lua_setmetatable(L, 1);
  }
  size_t self = h->cells;
  int cells = luab_push_cell(L, self);
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  luab_set_cell(L, cells, self);
  /* The body's calls run on the thread Lua runs the finalizer on (the domain whose step or
   * collection called it), on top of the __gc frame. */
  lua_State *outer = h->L;
  h->L = L;
  h->fin_depth++;
  h->fin_runs++;
  h->fin_allocated = 0;
  if (h->cfg.events.finalize != NULL) h->cfg.events.finalize(h->cfg.events.user, token);
  h->fin_depth--;
  h->L = outer;
  count_finalizer(h, L, cells, o);
  luab_empty_cell(L, cells, self);
  return 0;
}

static int op_fin_set(lua_State *L) {
  luab_args *a = luab_args_of(L);
  luab_push_cell(L, a->a);
  luab_mt kind = luab_top_kind(a->h);
  if (kind == LUAB_MT_COUNT) return 0;
  if (!luab_ptrmap_put(&a->h->tokens, (uintptr_t)luab_top_object(L), a->u)) return 0;
  int was_in_finobj = tofinalize(luab_top_object(L)) != 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + luab_armed(kind));
  lua_setmetatable(L, -2); /* __gc present: luaC_checkfinalizer moves it to finobj */
  if (!was_in_finobj && tofinalize(luab_top_object(L))) a->h->fin_moves++;
  if (a->h->fin_depth > 0) a->h->rare[LUAB_RARE_FIN_SET_IN_FIN]++;
  a->result = 1;
  fuzz_finding f[4];
  luab_view v = luab_view_of(a->h);
  size_t n = luab_check_separated(&v, luab_top_object(L), f, 4);
  for (size_t i = 0; i < n && i < 4; i++) luab_pend(a->h, "gen-lists", "%s", f[i].message);
  return 0;
}

int luab_fin_set(fuzz_bheap *h, size_t cell, uint64_t token) {
  luab_args a = {.a = cell, .u = token};
  return luab_protect(h, op_fin_set, "fin_set", &a, 0) && a.result;
}

static int op_fin_clear(lua_State *L) {
  luab_args *a = luab_args_of(L);
  luab_push_cell(L, a->a);
  luab_mt kind = luab_top_kind(a->h);
  if (kind == LUAB_MT_COUNT) return 0;
  a->result = kind == luab_armed(kind);
  luab_ptrmap_del(&a->h->tokens, (uintptr_t)luab_top_object(L));
  if (a->result) {
    /* No __gc in the new metatable: Lua still separates the block once, then calls nothing. */
    lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + luab_disarmed(kind));
    lua_setmetatable(L, -2);
  }
  return 0;
}

int luab_fin_clear(fuzz_bheap *h, size_t cell) {
  luab_args a = {.a = cell};
  return luab_protect(h, op_fin_clear, "fin_clear", &a, 0) && a.result;
}
