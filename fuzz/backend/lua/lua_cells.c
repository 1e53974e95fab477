/* The Lua backend's blocks and cells (lua_heap.h): allocation, identities, scanned fields, raw
 * words, copies and clears. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

/* The array size of the scanned block on top of the stack, or 0 when it is none. */
static unsigned top_scan_slots(fuzz_bheap *h) {
  luab_mt kind = luab_top_kind(h);
  if (lua_type(h->L, -1) != LUA_TTABLE || luab_disarmed(kind) != LUAB_MT_BLOCK) return 0;
  return luab_table_asize(luab_top_object(h->L));
}

static int op_alloc(lua_State *L) {
  luab_args *a = luab_args_of(L);
  size_t dst = a->a, fields = a->c;
  int cells = luab_push_cell(L, dst);
  luab_empty_cell(L, cells, dst); /* empty on failure */
  luab_arm_failures(a);
  if (a->b == FUZZ_SHAPE_SCAN) {
    lua_createtable(L, (int)(fields + IDENT_WORDS), 0);
    lua_pushinteger(L, 0); /* identity slots are integers from the start (lua.identity) */
    lua_rawseti(L, -2, (lua_Integer)fields + 1);
    lua_pushinteger(L, 0);
    lua_rawseti(L, -2, (lua_Integer)fields + 2);
  } else {
    size_t bytes = (fields + IDENT_WORDS) * WORD_BYTES;
    memset(lua_newuserdatauv(L, bytes, 0), 0, bytes);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + LUAB_MT_BLOCK);
  lua_setmetatable(L, -2);
  luab_set_cell(L, cells, dst);
  a->result = 1;
  return 0;
}

int luab_block_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  luab_args a = {.a = dst, .b = shape, .c = fields};
  return luab_protect(h, op_alloc, "alloc", &a, 1) && a.result;
}

static int op_set_ident(lua_State *L) {
  luab_args *a = luab_args_of(L);
  luab_push_cell(L, a->a);
  if (lua_type(L, -1) == LUA_TTABLE) {
    unsigned n = luab_table_asize(luab_top_object(L));
    if (n < IDENT_WORDS) return 0;
    lua_pushinteger(L, (lua_Integer)a->u);
    lua_rawseti(L, -2, (lua_Integer)n - 1);
    lua_pushinteger(L, (lua_Integer)a->w);
    lua_rawseti(L, -2, (lua_Integer)n);
  } else if (lua_type(L, -1) == LUA_TUSERDATA && lua_rawlen(L, -1) >= IDENT_WORDS * WORD_BYTES) {
    char *mem = lua_touserdata(L, -1);
    memcpy(mem, &a->u, WORD_BYTES);
    memcpy(mem + WORD_BYTES, &a->w, WORD_BYTES);
  }
  return 0;
}

void luab_ident_set(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check) {
  luab_args a = {.a = cell, .u = id, .w = check};
  luab_protect(h, op_set_ident, "set_ident", &a, 0);
}

int luab_ident_get(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check) {
  lua_State *L = h->L;
  luab_push_cell(L, cell);
  const GCObject *o = luab_top_object(L);
  int full = o != NULL;
  if (full && !luab_block_ident(o, id, check)) *id = *check = 0; /* reads back as no model's */
  lua_pop(L, 2);
  return full;
}

static int op_store(lua_State *L) {
  luab_args *a = luab_args_of(L);
  int cells = luab_push_cell(L, a->a);
  unsigned slots = top_scan_slots(a->h);
  if (slots < IDENT_WORDS || a->c >= slots - IDENT_WORDS) return 0;
  if (a->is_int)
    lua_pushinteger(L, a->value);
  else
    lua_rawgeti(L, cells, (lua_Integer)a->b + 1);
  lua_rawseti(L, -2, (lua_Integer)a->c + 1); /* raw set: luaC_barrierback */
  return 0;
}

void luab_field_store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  luab_args a = {.a = obj, .b = src, .c = field};
  luab_protect(h, op_store, "store", &a, 0);
}

void luab_field_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  luab_args a = {.a = obj, .c = field, .is_int = 1, .value = value};
  luab_protect(h, op_store, "store", &a, 0);
}

/* Puts the value on top into cell dst when it is a block (returns 1), else empties dst. */
int luab_take_block(fuzz_bheap *h, int cells, size_t dst) {
  if (luab_top_kind(h) != LUAB_MT_COUNT) {
    luab_set_cell(h->L, cells, dst);
    return 1;
  }
  lua_pop(h->L, 1);
  luab_empty_cell(h->L, cells, dst);
  return 0;
}

/* Loads, copies and clears of cells need no protection: they read tables and write the cells
 * table's array slots, which exist from the start (lua_createtable sized them), so nothing
 * allocates and nothing can raise. Unprotected, a load costs a few table reads instead of a
 * lua_pcall (the oracle loads every field of the reachable graph after each major collection). */
static void load_field(fuzz_bheap *h, luab_args *a) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  int cells = luab_push_cell(L, a->b);
  unsigned slots = top_scan_slots(h);
  a->result = FUZZ_FIELD_EMPTY;
  if (slots < IDENT_WORDS || a->c >= slots - IDENT_WORDS) {
    luab_empty_cell(L, cells, a->a);
  } else {
    lua_rawgeti(L, -1, (lua_Integer)a->c + 1);
    if (lua_isinteger(L, -1)) {
      a->result = FUZZ_FIELD_INT;
      a->value = lua_tointeger(L, -1);
      lua_pop(L, 1);
      luab_empty_cell(L, cells, a->a);
    } else if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      luab_empty_cell(L, cells, a->a);
    } else {
      a->result = luab_take_block(h, cells, a->a) ? FUZZ_FIELD_BLOCK : FUZZ_FIELD_OTHER;
    }
  }
  lua_settop(L, top);
}

fuzz_field_kind luab_field_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field,
                                int64_t *value) {
  luab_args a = {.h = h, .a = dst, .b = obj, .c = field};
  load_field(h, &a);
  if (a.result == FUZZ_FIELD_INT) *value = a.value;
  return (fuzz_field_kind)a.result;
}

/* Raw words: plain memory of the userdata, no call that can raise. */
static uint64_t *raw_word(fuzz_bheap *h, size_t obj, size_t word) {
  lua_State *L = h->L;
  luab_push_cell(L, obj);
  uint64_t *p = NULL;
  size_t at = (IDENT_WORDS + word) * WORD_BYTES;
  if (lua_type(L, -1) == LUA_TUSERDATA && lua_rawlen(L, -1) >= at + WORD_BYTES)
    p = (uint64_t *)((char *)lua_touserdata(L, -1) + at);
  lua_pop(L, 2);
  return p;
}

void luab_word_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  uint64_t *p = raw_word(h, obj, word);
  if (p != NULL) memcpy(p, &value, sizeof value);
}

uint64_t luab_word_read(fuzz_bheap *h, size_t obj, size_t word) {
  uint64_t value = 0, *p = raw_word(h, obj, word);
  if (p != NULL) memcpy(&value, p, sizeof value);
  return value;
}

void luab_cell_copy(fuzz_bheap *h, size_t dst, size_t src) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  int cells = luab_push_cell(L, src);
  luab_set_cell(L, cells, dst);
  lua_settop(L, top);
}

void luab_cell_clear(fuzz_bheap *h, size_t cell) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_CELLS);
  luab_empty_cell(L, lua_absindex(L, -1), cell);
  lua_settop(L, top);
}
