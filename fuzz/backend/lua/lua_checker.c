/* The deep check's vocabulary (lua_check_internal.h): what the check files read a Lua object
 * with (its block kind and identity, its allocation, its bytes, its type, colour and list names,
 * the per-object notes) and how they report. lua_check.c, lua_check_lists.c and
 * lua_check_values.c all stand on it; it calls none of them. */
#include "fuzz/backend/lua/lua_check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Blocks --------------------------------------------------------------------------------- */

unsigned luab_table_asize(const void *table) {
  const Table *t = table;
  unsigned size = t->alimit;
  if (isrealasize(t) || ispow2(size)) return size;
  /* alimit is a hint below the real size: the real size is the next power of two. */
  size |= size >> 1;
  size |= size >> 2;
  size |= size >> 4;
  size |= size >> 8;
  size |= size >> 16;
  return size + 1;
}

luab_mt luab_block_mt(const luab_view *v, const void *gco) {
  const GCObject *o = gco;
  const void *mt;
  if (o->tt == LUA_VTABLE)
    mt = gco2t(o)->metatable;
  else if (o->tt == LUA_VUSERDATA)
    mt = gco2u(o)->metatable;
  else
    return LUAB_MT_COUNT;
  if (mt == NULL) return LUAB_MT_COUNT;
  for (int i = 0; i < LUAB_MT_COUNT; i++) {
    if (v->mt[i] == mt) return (luab_mt)i;
  }
  return LUAB_MT_COUNT;
}

int luab_block_ident(const void *gco, uint64_t *id, uint64_t *check) {
  const GCObject *o = gco;
  if (o->tt == LUA_VTABLE) {
    const Table *t = gco2t(o);
    unsigned n = luab_table_asize(t);
    if (n < 2 || t->array == NULL) return 0;
    const TValue *a = &t->array[n - 2], *b = &t->array[n - 1];
    if (!ttisinteger(a) || !ttisinteger(b)) return 0;
    *id = (uint64_t)ivalue(a);
    *check = (uint64_t)ivalue(b);
    return 1;
  }
  if (o->tt == LUA_VUSERDATA) {
    const Udata *u = gco2u(o);
    if (u->nuvalue != 0 || u->len < 2 * sizeof(uint64_t)) return 0;
    const char *mem = getudatamem(u);
    memcpy(id, mem, sizeof *id);
    memcpy(check, mem + sizeof *id, sizeof *check);
    return 1;
  }
  return 0;
}

/* ---- Safe access: the allocation index ------------------------------------------------------- */

size_t luab_ck_alloc_bytes(const luab_view *v, const void *p) {
  uint64_t bytes;
  if (p == NULL || !luab_ptrmap_get(v->allocs, (uintptr_t)p, &bytes)) return 0;
  return (size_t)bytes;
}

/* The smallest allocation an object of type tt can be, to read its size fields. */
static size_t min_bytes(int tt) {
  switch (tt) {
    case LUA_VSHRSTR:
    case LUA_VLNGSTR: return offsetof(TString, contents) + 1;
    case LUA_VTABLE: return sizeof(Table);
    case LUA_VUSERDATA: return udatamemoffset(0);
    case LUA_VLCL: return offsetof(LClosure, upvals);
    case LUA_VCCL: return offsetof(CClosure, upvalue);
    case LUA_VPROTO: return sizeof(Proto);
    case LUA_VUPVAL: return sizeof(UpVal);
    default: return 0; /* threads are handled apart; anything else is no type */
  }
}

size_t luab_ck_object_bytes(const GCObject *o) {
  switch (o->tt) {
    case LUA_VSHRSTR: return sizelstring(gco2ts(o)->shrlen);
    case LUA_VLNGSTR: return sizelstring(gco2ts(o)->u.lnglen);
    case LUA_VTABLE: return sizeof(Table);
    case LUA_VUSERDATA: return sizeudata(gco2u(o)->nuvalue, gco2u(o)->len);
    case LUA_VLCL: return (size_t)sizeLclosure(gco2lcl(o)->nupvalues);
    case LUA_VCCL: return (size_t)sizeCclosure(gco2ccl(o)->nupvalues);
    case LUA_VPROTO: return sizeof(Proto);
    case LUA_VUPVAL: return sizeof(UpVal);
    default: return 0;
  }
}

/* ---- The checker ---------------------------------------------------------------------------- */

void luab_ck_report(luab_checker *c, const char *what, const char *fmt, ...) {
  if (c->count < c->max) {
    fuzz_finding *f = &c->out[c->count];
    va_list ap;
    va_start(ap, fmt);
    fuzz_finding_set(f, "lua", what, fmt, ap);
    va_end(ap);
  }
  c->count++;
}

const char *luab_ck_type_name(int tt) {
  switch (tt) {
    case LUA_VSHRSTR: return "short string";
    case LUA_VLNGSTR: return "long string";
    case LUA_VTABLE: return "table";
    case LUA_VUSERDATA: return "userdata";
    case LUA_VLCL: return "Lua closure";
    case LUA_VCCL: return "C closure";
    case LUA_VPROTO: return "prototype";
    case LUA_VUPVAL: return "upvalue";
    case LUA_VTHREAD: return "thread";
    default: return "no type";
  }
}

const char *luab_ck_colour_name(const luab_checker *c, const GCObject *o) {
  if (isblack(o)) return iswhite(o) ? "white+black" : "black";
  if (!iswhite(o)) return "gray";
  if ((o->marked & WHITEBITS) == WHITEBITS) return "both whites";
  return isdead(c->g, o) ? "dead (other white)" : "white";
}

/* Can o be read as an object at all: the main thread, a thread at its place in an allocation,
 * or an allocation big enough for its type's fixed part. */
int luab_ck_readable(const luab_checker *c, const GCObject *o) {
  if (o == NULL) return 0;
  if (o == obj2gco(c->g->mainthread)) return 1;
  size_t bytes = luab_ck_alloc_bytes(c->v, o);
  if (bytes >= sizeof(GCObject)) return min_bytes(o->tt) != 0 && bytes >= min_bytes(o->tt);
  bytes = luab_ck_alloc_bytes(c->v, (const char *)o - offsetof(mirror_lx, l));
  return bytes == sizeof(mirror_lx) && o->tt == LUA_VTHREAD;
}

int luab_ck_info_of(const luab_checker *c, const GCObject *o, uint64_t *info) {
  return o != NULL && luab_ptrmap_get(&c->objs, (uintptr_t)o, info);
}

void luab_ck_set_info(luab_checker *c, const GCObject *o, uint64_t info) {
  luab_ptrmap_put(&c->objs, (uintptr_t)o, info);
}

/* ---- The lists ------------------------------------------------------------------------------ */

const char *luab_ck_list_name(int list) {
  switch (list) {
    case LIST_ALLGC: return "allgc";
    case LIST_FINOBJ: return "finobj";
    case LIST_TOBEFNZ: return "tobefnz";
    default: return "fixedgc";
  }
}
