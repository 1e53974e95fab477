/* The deep check's references (lua_check.h): every value a listed object holds (tables, userdata,
 * closures, upvalues, prototypes, thread stacks) against its tag, its target's place in the lists
 * and the colour rules; then the string table, the roots, and the backend's blocks and cells. The
 * rules and their kinds are listed in lua_check.c. */
#include "fuzz/backend/lua/lua_check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- One object ----------------------------------------------------------------------------- */

static int valid_tag(int tag, int in_key) {
  switch (tag) {
    case LUA_VNIL:
    case LUA_VEMPTY:
    case LUA_VABSTKEY:
    case LUA_VFALSE:
    case LUA_VTRUE:
    case LUA_VNUMINT:
    case LUA_VNUMFLT:
    case LUA_VLIGHTUSERDATA:
    case LUA_VLCF: return 1;
    case ctb(LUA_VSHRSTR):
    case ctb(LUA_VLNGSTR):
    case ctb(LUA_VTABLE):
    case ctb(LUA_VUSERDATA):
    case ctb(LUA_VLCL):
    case ctb(LUA_VCCL):
    case ctb(LUA_VTHREAD): return 1;
    case LUA_TDEADKEY: return in_key;
    default: return 0;
  }
}

/* Does the colour invariant bind this object's references? Threads have no barriers and open
 * upvalues are gray by design (lgc.c); everything else does. */
static int has_barriers(const GCObject *o) {
  if (o->tt == LUA_VTHREAD) return 0;
  if (o->tt == LUA_VUPVAL) return !upisopen(gco2upv(o));
  return 1;
}

/* Where in its source a reference was found: a format with at most one number, put into words
 * only when a report needs them (the check meets every reference of the heap after every op). */
typedef struct site {
  const char *what;
  long i;
} site;
#define SITE(text) ((site){(text), 0})

static const char *site_text(site at, char *buf, size_t len) {
  snprintf(buf, len, at.what, at.i);
  return buf;
}

/* One reference src -> dst (found at `at`); `weak` when the collector may clear it. */
static void check_ref(luab_checker *c, const GCObject *src, site at, const GCObject *dst,
                      int expect_tt, int weak) {
  char buf[64];
  uint64_t info;
  if (!luab_ck_readable(c, dst) || !luab_ck_info_of(c, dst, &info)) {
    luab_ck_report(c, "dangling", "%s %p: %s points to %p, no object in any list",
                   luab_ck_type_name(src->tt), (void *)src, site_text(at, buf, sizeof buf),
                   (void *)dst);
    return;
  }
  if (expect_tt >= 0 && dst->tt != expect_tt) {
    luab_ck_report(c, "tag-mismatch", "%s %p: %s is tagged %s but points to a %s",
                   luab_ck_type_name(src->tt), (void *)src, site_text(at, buf, sizeof buf),
                   luab_ck_type_name(expect_tt), luab_ck_type_name(dst->tt));
    return;
  }
  /* Garbage may point to garbage; and a dead object outside the sweep is lua.dead-object. */
  if (isdead(c->g, src) || (isdead(c->g, dst) && !c->sweeping)) return;
  if (isdead(c->g, dst)) {
    luab_ck_report(c, "dead-reachable", "%s %p (%s): %s points to a dead %s %p",
                   luab_ck_type_name(src->tt), (void *)src, luab_ck_colour_name(c, src),
                   site_text(at, buf, sizeof buf), luab_ck_type_name(dst->tt), (void *)dst);
    return;
  }
  if (weak || !has_barriers(src) || !isblack(src)) return;
  if (c->inc) {
    if (c->keep && iswhite(dst))
      luab_ck_report(c, "black-to-white", "black %s %p: %s points to white %s %p (state %d)",
                     luab_ck_type_name(src->tt), (void *)src, site_text(at, buf, sizeof buf),
                     luab_ck_type_name(dst->tt), (void *)dst, c->g->gcstate);
    return;
  }
  int from = getage(src), to = getage(dst);
  if ((from == G_OLD && !isold(dst)) || ((from == G_OLD1 || from == G_TOUCHED2) && to == G_NEW))
    luab_ck_report(c, "old-to-young", "black %s %p of age %d: %s points to %s %p of age %d",
                   luab_ck_type_name(src->tt), (void *)src, from, site_text(at, buf, sizeof buf),
                   luab_ck_type_name(dst->tt), (void *)dst, to);
}

static void check_value(luab_checker *c, const GCObject *src, site at, const TValue *tv, int weak) {
  if (!valid_tag(rawtt(tv), 0)) {
    char buf[64];
    luab_ck_report(c, "bad-tag", "%s %p: %s has tag 0x%x", luab_ck_type_name(src->tt), (void *)src,
                   site_text(at, buf, sizeof buf), rawtt(tv));
    return;
  }
  if (iscollectable(tv)) check_ref(c, src, at, gcvalue(tv), ttypetag(tv), weak);
}

/* The weakness of a table, read from its metatable's __mode without calling into Lua. */
static void table_mode(luab_checker *c, const Table *h, int *weakkey, int *weakvalue) {
  *weakkey = *weakvalue = 0;
  const Table *mt = h->metatable;
  uint64_t info;
  if (mt == NULL || !luab_ck_info_of(c, obj2gco(mt), &info) || (info & INFO_BROKEN) ||
      obj2gco(mt)->tt != LUA_VTABLE || !luab_ck_table_parts_ok(c, mt, 1) || isdummy(mt))
    return;
  const TString *mode_key = c->g->tmname[TM_MODE];
  for (size_t i = 0; i < sizenode(mt); i++) {
    const Node *n = gnode(mt, i);
    if (keytt(n) != ctb(LUA_VSHRSTR) || gckey(n) != obj2gco(mode_key)) continue;
    const TValue *val = gval(n);
    if (!ttisstring(val) || !luab_ck_readable(c, gcvalue(val))) return;
    const TString *s = tsvalue(val);
    size_t len = s->tt == LUA_VSHRSTR ? s->shrlen : s->u.lnglen;
    *weakkey = memchr(getstr(s), 'k', len) != NULL;
    *weakvalue = memchr(getstr(s), 'v', len) != NULL;
    return;
  }
}

int luab_ck_table_parts_ok(luab_checker *c, const Table *h, int quiet) {
  unsigned asize = luab_table_asize(h);
  if (asize > 0 && luab_ck_alloc_bytes(c->v, h->array) != asize * sizeof(TValue)) {
    if (!quiet)
      luab_ck_report(c, "table-shape", "table %p: array of %u slots is an allocation of %zu bytes",
                     (void *)h, asize, luab_ck_alloc_bytes(c->v, h->array));
    return 0;
  }
  if (isdummy(h)) {
    if (h->lsizenode != 0) {
      if (!quiet)
        luab_ck_report(c, "table-shape", "table %p: dummy hash part with lsizenode %d", (void *)h,
                       h->lsizenode);
      return 0;
    }
    return 1;
  }
  size_t nsize = sizenode(h);
  if (h->lsizenode >= 8 * sizeof(int) - 2 ||
      luab_ck_alloc_bytes(c->v, h->node) != nsize * sizeof(Node) || h->lastfree < h->node ||
      h->lastfree > h->node + nsize) {
    if (!quiet)
      luab_ck_report(c, "table-shape",
                     "table %p: hash part of %zu nodes does not match its allocation", (void *)h,
                     nsize);
    return 0;
  }
  return 1;
}

static void check_table(luab_checker *c, const GCObject *o) {
  const Table *h = gco2t(o);
  int weakkey, weakvalue;
  if (!luab_ck_table_parts_ok(c, h, 0)) {
    uint64_t info;
    if (luab_ck_info_of(c, o, &info)) luab_ck_set_info(c, o, info | INFO_BROKEN);
    return;
  }
  if (h->metatable != NULL)
    check_ref(c, o, SITE("its metatable"), obj2gco(h->metatable), LUA_VTABLE, 0);
  table_mode(c, h, &weakkey, &weakvalue);
  unsigned asize = luab_table_asize(h);
  for (unsigned i = 0; i < asize; i++) {
    check_value(c, o, (site){"array[%ld]", (long)i + 1}, &h->array[i], weakvalue);
  }
  if (isdummy(h)) return;
  for (size_t i = 0; i < sizenode(h); i++) {
    const Node *n = gnode(h, i);
    if (!valid_tag(keytt(n), 1)) {
      luab_ck_report(c, "bad-tag", "table %p: key of node %zu has tag 0x%x", (void *)h, i,
                     keytt(n));
      continue;
    }
    /* A key whose value is empty is garbage to the table (lgc.c's clearkey makes it a dead key
     * at the next traversal): only where it points is checked, not its colour. */
    int empty = isempty(gval(n));
    if (keyiscollectable(n)) {
      check_ref(c, o, (site){"key of node %ld", (long)i}, gckey(n), withvariant(keytt(n)),
                weakkey || empty);
    }
    check_value(c, o, (site){"value of node %ld", (long)i}, gval(n), weakvalue);
  }
}

static void check_thread(luab_checker *c, const GCObject *o) {
  const lua_State *th = gco2th(o);
  if (th->stack == NULL) return; /* not built yet */
  size_t slots = (size_t)(th->stack_last - th->stack) + EXTRA_STACK;
  if (luab_ck_alloc_bytes(c->v, th->stack) != slots * sizeof(StackValue) || th->top < th->stack ||
      th->top > th->stack_last + EXTRA_STACK) {
    luab_ck_report(c, "thread-shape",
                   "thread %p: stack of %zu slots (top %td) is no such allocation", (void *)th,
                   slots, th->top - th->stack);
    return;
  }
  for (StkId s = th->stack; s < th->top; s++) {
    check_value(c, o, (site){"stack[%ld]", (long)(s - th->stack)}, s2v(s), 0);
  }
  size_t n = 0;
  for (const UpVal *uv = th->openupval; uv != NULL && n < (1u << 20); uv = uv->u.open.next, n++) {
    check_ref(c, o, SITE("an open upvalue"), obj2gco(uv), LUA_VUPVAL, 0);
    uint64_t info;
    if (!luab_ck_info_of(c, obj2gco(uv), &info)) break;
  }
}

void luab_ck_contents(luab_checker *c, const GCObject *o) {
  switch (o->tt) {
    case LUA_VTABLE: check_table(c, o); break;
    case LUA_VUSERDATA: {
      const Udata *u = gco2u(o);
      if (u->metatable != NULL)
        check_ref(c, o, SITE("its metatable"), obj2gco(u->metatable), LUA_VTABLE, 0);
      for (int i = 0; i < u->nuvalue; i++) {
        check_value(c, o, (site){"user value %ld", (long)i + 1}, &u->uv[i].uv, 0);
      }
      break;
    }
    case LUA_VCCL: {
      const CClosure *cl = gco2ccl(o);
      for (int i = 0; i < cl->nupvalues; i++) {
        check_value(c, o, (site){"upvalue %ld", (long)i + 1}, &cl->upvalue[i], 0);
      }
      break;
    }
    case LUA_VLCL: {
      const LClosure *cl = gco2lcl(o);
      if (cl->p != NULL) check_ref(c, o, SITE("its prototype"), obj2gco(cl->p), LUA_VPROTO, 0);
      for (int i = 0; i < cl->nupvalues; i++) {
        if (cl->upvals[i] != NULL)
          check_ref(c, o, (site){"upvalue %ld", (long)i + 1}, obj2gco(cl->upvals[i]), LUA_VUPVAL,
                    0);
      }
      break;
    }
    case LUA_VUPVAL: {
      const UpVal *uv = gco2upv(o);
      if (!upisopen(uv)) check_value(c, o, SITE("its value"), uv->v, 0);
      break;
    }
    case LUA_VPROTO: {
      const Proto *f = gco2p(o);
      if (f->source != NULL) check_ref(c, o, SITE("its source"), obj2gco(f->source), -1, 0);
      if (f->sizek > 0 && luab_ck_alloc_bytes(c->v, f->k) >= (size_t)f->sizek * sizeof(TValue)) {
        for (int i = 0; i < f->sizek; i++) {
          check_value(c, o, (site){"constant %ld", (long)i}, &f->k[i], 0);
        }
      }
      if (f->sizep > 0 && luab_ck_alloc_bytes(c->v, f->p) >= (size_t)f->sizep * sizeof(Proto *)) {
        for (int i = 0; i < f->sizep; i++) {
          if (f->p[i] != NULL)
            check_ref(c, o, (site){"nested prototype %ld", (long)i}, obj2gco(f->p[i]), LUA_VPROTO,
                      0);
        }
      }
      break;
    }
    case LUA_VTHREAD: check_thread(c, o); break;
    default: break; /* strings hold no references */
  }
}

/* ---- Strings, roots, blocks ----------------------------------------------------------------- */

void luab_ck_strings(luab_checker *c) {
  const stringtable *tb = &c->g->strt;
  if (tb->size <= 0 || !ispow2(tb->size) ||
      luab_ck_alloc_bytes(c->v, tb->hash) != (size_t)tb->size * sizeof(TString *)) {
    luab_ck_report(c, "string-table", "string table of size %d is no such allocation", tb->size);
    return;
  }
  int n = 0;
  for (int i = 0; i < tb->size; i++) {
    for (const TString *ts = tb->hash[i]; ts != NULL; ts = ts->u.hnext, n++) {
      uint64_t info;
      if (!luab_ck_info_of(c, obj2gco(ts), &info) || ts->tt != LUA_VSHRSTR) {
        luab_ck_report(c, "string-table", "bucket %d holds %p, no listed short string", i,
                       (void *)ts);
        break;
      }
      if ((int)(ts->hash & (unsigned)(tb->size - 1)) != i)
        luab_ck_report(c, "string-table", "string %p of hash 0x%x is in bucket %d of %d",
                       (void *)ts, ts->hash, i, tb->size);
      if (n > tb->nuse) break;
    }
  }
  if (n != tb->nuse)
    luab_ck_report(c, "string-table", "the string table holds %d strings but counts %d", n,
                   tb->nuse);
}

/* marked: restartcollection marks it, and nothing unmarks it before the sweep. */
static void check_root(luab_checker *c, const GCObject *o, int tt, int list, int marked,
                       const char *name) {
  uint64_t info;
  if (!luab_ck_info_of(c, o, &info) || o->tt != tt || (list && (int)(info & LIST_MASK) != list)) {
    luab_ck_report(c, "root", "%s %p is no listed %s", name, (void *)o, luab_ck_type_name(tt));
    return;
  }
  if (marked && c->inc && c->keep && iswhite(o))
    luab_ck_report(c, "root", "%s is white in state %d (marked when the cycle starts)", name,
                   c->g->gcstate);
}

void luab_ck_roots(luab_checker *c) {
  global_State *g = c->g;
  check_root(c, obj2gco(g->mainthread), LUA_VTHREAD, LIST_ALLGC, 1, "the main thread");
  if (!ttistable(&g->l_registry))
    luab_ck_report(c, "root", "the registry is no table");
  else
    check_root(c, gcvalue(&g->l_registry), LUA_VTABLE, 0, 1, "the registry");
  for (int i = 0; i < TM_N; i++)
    check_root(c, obj2gco(g->tmname[i]), LUA_VSHRSTR, LIST_FIXED, 0, "a tag-method name");
  check_root(c, obj2gco(g->memerrmsg), LUA_VSHRSTR, LIST_FIXED, 0, "the memory error message");
  for (int i = 0; i < LUA_NUMTAGS; i++) {
    /* lua_setmetatable sets these without a barrier (atomic re-marks them): any colour. */
    if (g->mt[i] != NULL)
      check_root(c, obj2gco(g->mt[i]), LUA_VTABLE, 0, 0, "a basic type's metatable");
  }
  for (int i = 0; i < STRCACHE_N; i++) {
    for (int j = 0; j < STRCACHE_M; j++) {
      uint64_t info;
      const GCObject *s = obj2gco(g->strcache[i][j]);
      if (!luab_ck_info_of(c, s, &info) || novariant(s->tt) != LUA_TSTRING || isdead(g, s))
        luab_ck_report(c, "root", "the API string cache holds %p, no live string", (void *)s);
    }
  }
}

void luab_ck_block(luab_checker *c, const GCObject *o, luab_mt kind, uint64_t info) {
  uint64_t id, check;
  if (!luab_block_ident(o, &id, &check))
    luab_ck_report(c, "identity", "block %s %p: its identity slots are not integers",
                   luab_ck_type_name(o->tt), (void *)o);
  if (o->tt == LUA_VTABLE) {
    const Table *h = gco2t(o);
    unsigned asize = luab_table_asize(h);
    int ephe = kind == LUAB_MT_EPHE || kind == LUAB_MT_EPHE_FIN;
    int weak = kind == LUAB_MT_WEAK || kind == LUAB_MT_WEAK_FIN;
    if (asize < 2 || (weak && asize != 3) || (ephe && asize != 2) ||
        (ephe ? sizenode(h) != 1 || isdummy(h) : !isdummy(h)))
      luab_ck_report(c, "block-shape", "block table %p (marker %d): array of %u, hash of %d",
                     (void *)h, kind, asize, isdummy(h) ? 0 : (int)sizenode(h));
  } else if (kind != LUAB_MT_BLOCK && kind != LUAB_MT_BLOCK_FIN) {
    luab_ck_report(c, "block-shape", "userdata %p has a table block's marker %d", (void *)o, kind);
  }
  int armed = kind == LUAB_MT_BLOCK_FIN || kind == LUAB_MT_WEAK_FIN || kind == LUAB_MT_EPHE_FIN;
  if (armed && !tofinalize(o) && !c->v->in_finalizer)
    luab_ck_report(c, "finalizer-lost",
                   "block %s %p has __gc but Lua does not hold it for finalization "
                   "(it is in %s)",
                   luab_ck_type_name(o->tt), (void *)o, luab_ck_list_name((int)(info & LIST_MASK)));
}

void luab_ck_cells(luab_checker *c) {
  const GCObject *o = c->v->cells;
  uint64_t info;
  if (!luab_ck_info_of(c, o, &info) || o->tt != LUA_VTABLE || (info & INFO_BROKEN)) {
    luab_ck_report(c, "cell", "the cells table %p is no listed table", (void *)o);
    return;
  }
  const Table *h = gco2t(o);
  unsigned n = luab_table_asize(h);
  for (unsigned i = 0; i < n; i++) {
    const TValue *tv = &h->array[i];
    if (ttisnil(tv)) continue;
    if (!iscollectable(tv) || !luab_ck_info_of(c, gcvalue(tv), &info) ||
        luab_block_mt(c->v, gcvalue(tv)) == LUAB_MT_COUNT)
      luab_ck_report(c, "cell", "cell %u holds a value of tag 0x%x that is no block", i, rawtt(tv));
  }
}
