/* The Lua backend's domains (lua_heap.h): coroutines. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

/* Domain d > 0 is a coroutine (lua_newthread) anchored in the domains table from spawn to end.
 * It owns no cell: it changes which stack the ops' values pass through and which thread starts a
 * step, a collection or a finalizer, never what the model reaches. */

static int op_spawn(lua_State *L) {
  luab_args *a = luab_args_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  lua_State *co = lua_newthread(L); /* may step the collector, and so run finalizers */
  lua_rawseti(L, -2, (lua_Integer)a->a + 1);
  a->h->domains[a->a] = co;
  a->result = 1;
  return 0;
}

int luab_domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= LUAB_DOMAINS || h->domains[d] != NULL || h->fin_depth > 0) return 0;
  luab_args a = {.a = d};
  return luab_protect(h, op_spawn, "domain_spawn", &a, 0) && a.result;
}

void luab_domain_on(fuzz_bheap *h, unsigned d) {
  if (d >= LUAB_DOMAINS || h->domains[d] == NULL || h->fin_depth > 0) return;
  h->running = d;
  h->L = h->domains[d];
}

static int op_unanchor(lua_State *L) {
  luab_args *a = luab_args_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  lua_pushnil(L);
  lua_rawseti(L, -2, (lua_Integer)a->a + 1); /* an array slot: no allocation */
  return 0;
}

/* The coroutine is reset (its stack emptied and shrunk, lua_resetthread) and unanchored: the
 * next whole cycle frees it, which the deep check holds it to (lua.thread-kept). */
void luab_domain_end(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= LUAB_DOMAINS || h->domains[d] == NULL || h->fin_depth > 0) return;
  lua_State *co = h->domains[d];
  if (h->running == d) luab_domain_on(h, 0);
  lua_resetthread(co);
  h->domains[d] = NULL;
  if (!luab_ptrmap_put(&h->ended, (uintptr_t)lua_getextraspace(co), h->cycles)) {
    fprintf(stderr, "lua backend: out of memory for the ended coroutines\n");
    abort();
  }
  luab_args a = {.a = d};
  luab_protect(h, op_unanchor, "domain_end", &a, 0);
}
