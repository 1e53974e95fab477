/* The deep check of Lua 5.4's collector, the walk, and the backend's view of blocks.
 *
 * The check re-derives Lua's invariants from scratch, in the spirit of Lua's own
 * lua_checkmemory (ltests.c, which Debian's source does not ship): it walks every object list
 * (allgc, finobj, tobefnz, fixedgc), the gray lists, the string table and the roots, and checks
 * each object's header and every reference it holds against the rules lgc.h and lstate.h state.
 * It dereferences a pointer only when the allocation index vouches for it (lua_check.h), so a
 * broken heap is a finding, not a crash. Each rule is a finding kind:
 *
 *   lua.list            an object list holds a pointer to no live object, an object twice (a
 *                       cycle), or an object of a type the list cannot hold
 *   lua.object-size     an object's allocation is not the size its header says
 *   lua.table-shape     a table's array or hash part is not the allocation its sizes say
 *   lua.thread-shape    a thread's stack is not the allocation its sizes say
 *   lua.bad-tag         a value's type tag is no Lua type
 *   lua.tag-mismatch    a value's tag disagrees with the object it points to
 *   lua.dangling        a live object points to memory that is no object in any list
 *   lua.dead-reachable  a live object points to a dead one (other white) during the sweep
 *   lua.dead-object     a dead object where no sweep is pending (outside the sweep phases, or
 *                       in the part of a list already swept)
 *   lua.bad-colour      an impossible colour: both whites, white and black, not the current
 *                       white where everything must be (pause, swpend, callfin, swept part),
 *                       or an object waiting for its finalizer left white while marking
 *   lua.black-to-white  incremental mode, marking (keepinvariant): a black object points to a
 *                       white one through a strong reference
 *   lua.old-to-young    generational mode: a black old object points to a young one (OLD to
 *                       NEW or SURVIVAL; OLD1 or TOUCHED2 to NEW) without being touched
 *   lua.bad-age         an age out of range, a non-NEW age in incremental mode, an object
 *                       younger than its place in the generational lists, a TOUCHED object
 *                       out of the gray lists, an OLD1 object before firstold1
 *   lua.gray-list       a gray list holds an unknown, non-gray or duplicated object, or a gray
 *                       object is in no gray list (open upvalues and fixed strings excepted)
 *   lua.fixed           a fixedgc object that is not a gray, old short string
 *   lua.finobj-bit      FINALIZEDBIT set outside finobj/tobefnz, or clear inside them
 *   lua.gen-lists       survival/old1/reallyold/firstold1 (or the finobj ones) not positions
 *                       in their list in order, or (but firstold1) set in incremental mode
 *   lua.sweep           the sweep position is not in the list being swept
 *   lua.string-table    the string table holds a non-string, an unlisted object, a string in
 *                       the wrong bucket, or a count that is not nuse
 *   lua.root            a root (main thread, registry, metatables, tag-method names) missing,
 *                       or white while marking
 *   lua.gc-state        the collector's own state is out of range or left mid-operation
 *                       (gcstopem, gcemergency, GCSTPGC outside a finalizer)
 *   lua.totalbytes      gettotalbytes(g) is not the allocator's count of live bytes
 *   lua.identity        a block's identity slots are not integers
 *   lua.block-shape     a block's array or hash part changed shape (INV-LUAB-1)
 *   lua.finalizer-lost  a block armed with __gc (a _FIN marker) that Lua does not hold for
 *                       finalization: its finalizer would never run
 *   lua.cell            a cell holds something that is no block
 *   lua.thread-colour   a thread black while incremental marking runs (traversethread leaves a
 *                       thread gray on grayagain until the atomic phase: threads have no
 *                       barriers), or an OLD thread not gray in generational mode (each young
 *                       collection must traverse its stack again)
 *   lua.domain          INV-LUAB-3: a domain's coroutine is not the thread its anchor slot
 *                       holds, not a live thread in allgc, or the running domain's thread is
 *                       not the one the ops run on
 *   lua.domain-stack    between ops, a domain's stack holds values or frames (a block kept
 *                       alive by a stack the model does not know)
 *   lua.thread-kept     a coroutine ended before the last whole cycle is still not freed
 *
 * Cost: one pass over the lists and one over every reference, each lookup a hash probe.
 */
#include "fuzz/backend/lua/lua_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfunc.h"
#include "lgc.h"
#include "lobject.h"
#include "lstate.h"
#include "lstring.h"
#include "ltable.h"
#include "ltm.h"

/* ---- The pointer map ------------------------------------------------------------------------ */

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

/* A thread's lua_State sits LUA_EXTRASPACE bytes into its allocation (lstate.c's LX; the main
 * thread likewise inside the state's first allocation, LG). Mirrors, for the offsets. */
typedef struct mirror_lx {
  lu_byte extra[LUA_EXTRASPACE];
  lua_State l;
} mirror_lx;

typedef struct mirror_lg {
  mirror_lx l;
  global_State g;
} mirror_lg;

static size_t alloc_bytes(const luab_view *v, const void *p) {
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

/* The allocation an object's header says it has (threads apart). */
static size_t object_bytes(const GCObject *o) {
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

/* What the check learns of each listed object: where it is, and what it may be trusted for. */
enum {
  LIST_ALLGC = 1,
  LIST_FINOBJ = 2,
  LIST_TOBEFNZ = 3,
  LIST_FIXED = 4,
  LIST_MASK = 7,
  INFO_SWEPT = 1 << 3,  /* in the part of its list the current sweep has passed */
  INFO_GRAY = 1 << 4,   /* met on a gray list */
  INFO_BROKEN = 1 << 5, /* its size or parts are wrong: its contents are not read */
  INFO_POS_SHIFT = 8,   /* its position in its list */
};

typedef struct checker {
  const luab_view *v;
  global_State *g;
  fuzz_finding *out;
  size_t max, count;
  luab_ptrmap objs; /* every listed object -> INFO_* */
  size_t len[LIST_FIXED + 1];
  int inc, keep, sweeping, gray_rules;
} checker;

static void report(checker *c, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(checker *c, const char *what, const char *fmt, ...) {
  if (c->count < c->max) {
    fuzz_finding *f = &c->out[c->count];
    va_list ap;
    va_start(ap, fmt);
    fuzz_finding_set(f, "lua", what, fmt, ap);
    va_end(ap);
  }
  c->count++;
}

static const char *type_name(int tt) {
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

static const char *colour_name(const checker *c, const GCObject *o) {
  if (isblack(o)) return iswhite(o) ? "white+black" : "black";
  if (!iswhite(o)) return "gray";
  if ((o->marked & WHITEBITS) == WHITEBITS) return "both whites";
  return isdead(c->g, o) ? "dead (other white)" : "white";
}

/* Can o be read as an object at all: the main thread, a thread at its place in an allocation,
 * or an allocation big enough for its type's fixed part. */
static int readable(const checker *c, const GCObject *o) {
  if (o == NULL) return 0;
  if (o == obj2gco(c->g->mainthread)) return 1;
  size_t bytes = alloc_bytes(c->v, o);
  if (bytes >= sizeof(GCObject)) return min_bytes(o->tt) != 0 && bytes >= min_bytes(o->tt);
  bytes = alloc_bytes(c->v, (const char *)o - offsetof(mirror_lx, l));
  return bytes == sizeof(mirror_lx) && o->tt == LUA_VTHREAD;
}

static int info_of(const checker *c, const GCObject *o, uint64_t *info) {
  return o != NULL && luab_ptrmap_get(&c->objs, (uintptr_t)o, info);
}

static void set_info(checker *c, const GCObject *o, uint64_t info) {
  luab_ptrmap_put(&c->objs, (uintptr_t)o, info);
}

/* ---- The lists ------------------------------------------------------------------------------ */

static const char *list_name(int list) {
  switch (list) {
    case LIST_ALLGC: return "allgc";
    case LIST_FINOBJ: return "finobj";
    case LIST_TOBEFNZ: return "tobefnz";
    default: return "fixedgc";
  }
}

/* How far the current incremental sweep has gone through a list: 0 not at all, 1 up to the
 * sweep position (sweepgc), 2 wholly. */
static int sweep_list_state(const checker *c, int list) {
  static const int order[] = {0, GCSswpallgc, GCSswpfinobj, GCSswptobefnz, 0};
  if (!c->inc) return 0;
  if (c->g->gcstate == GCSswpend || c->g->gcstate == GCScallfin || c->g->gcstate == GCSpause)
    return 2; /* all swept */
  if (!c->sweeping || list == LIST_FIXED) return 0;
  if (c->g->gcstate > order[list]) return 2;
  if (c->g->gcstate == order[list]) return 1; /* partly: up to sweepgc */
  return 0;
}

static void walk_list(checker *c, GCObject **head, int list) {
  int sweep = sweep_list_state(c, list);
  int swept = sweep != 0; /* before the sweep position, if there is one */
  int met_position = sweep != 1 || c->g->sweepgc == NULL;
  size_t pos = 0;
  GCObject **p = head;
  for (; *p != NULL; p = &(*p)->next, pos++) {
    if (sweep == 1 && p == c->g->sweepgc) {
      swept = 0;
      met_position = 1;
    }
    GCObject *o = *p;
    uint64_t info;
    if (!readable(c, o)) {
      report(c, "list", "%s[%zu] = %p is no live object", list_name(list), pos, (void *)o);
      break;
    }
    if (info_of(c, o, &info)) {
      report(c, "list", "%s[%zu] = %p (%s) is already in %s: a cycle or two lists", list_name(list),
             pos, (void *)o, type_name(o->tt), list_name((int)(info & LIST_MASK)));
      break;
    }
    set_info(c, o, (uint64_t)list | (swept ? INFO_SWEPT : 0) | ((uint64_t)pos << INFO_POS_SHIFT));
  }
  if (sweep == 1 && p == c->g->sweepgc) met_position = 1; /* an empty list's head */
  c->len[list] = pos;
  if (!met_position)
    report(c, "sweep", "state %d sweeps %s but its position %p is not in it", c->g->gcstate,
           list_name(list), (void *)c->g->sweepgc);
}

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
static void check_ref(checker *c, const GCObject *src, site at, const GCObject *dst, int expect_tt,
                      int weak) {
  char buf[64];
  uint64_t info;
  if (!readable(c, dst) || !info_of(c, dst, &info)) {
    report(c, "dangling", "%s %p: %s points to %p, no object in any list", type_name(src->tt),
           (void *)src, site_text(at, buf, sizeof buf), (void *)dst);
    return;
  }
  if (expect_tt >= 0 && dst->tt != expect_tt) {
    report(c, "tag-mismatch", "%s %p: %s is tagged %s but points to a %s", type_name(src->tt),
           (void *)src, site_text(at, buf, sizeof buf), type_name(expect_tt), type_name(dst->tt));
    return;
  }
  /* Garbage may point to garbage; and a dead object outside the sweep is lua.dead-object. */
  if (isdead(c->g, src) || (isdead(c->g, dst) && !c->sweeping)) return;
  if (isdead(c->g, dst)) {
    report(c, "dead-reachable", "%s %p (%s): %s points to a dead %s %p", type_name(src->tt),
           (void *)src, colour_name(c, src), site_text(at, buf, sizeof buf), type_name(dst->tt),
           (void *)dst);
    return;
  }
  if (weak || !has_barriers(src) || !isblack(src)) return;
  if (c->inc) {
    if (c->keep && iswhite(dst))
      report(c, "black-to-white", "black %s %p: %s points to white %s %p (state %d)",
             type_name(src->tt), (void *)src, site_text(at, buf, sizeof buf), type_name(dst->tt),
             (void *)dst, c->g->gcstate);
    return;
  }
  int from = getage(src), to = getage(dst);
  if ((from == G_OLD && !isold(dst)) || ((from == G_OLD1 || from == G_TOUCHED2) && to == G_NEW))
    report(c, "old-to-young", "black %s %p of age %d: %s points to %s %p of age %d",
           type_name(src->tt), (void *)src, from, site_text(at, buf, sizeof buf),
           type_name(dst->tt), (void *)dst, to);
}

static void check_value(checker *c, const GCObject *src, site at, const TValue *tv, int weak) {
  if (!valid_tag(rawtt(tv), 0)) {
    char buf[64];
    report(c, "bad-tag", "%s %p: %s has tag 0x%x", type_name(src->tt), (void *)src,
           site_text(at, buf, sizeof buf), rawtt(tv));
    return;
  }
  if (iscollectable(tv)) check_ref(c, src, at, gcvalue(tv), ttypetag(tv), weak);
}

static int table_parts_ok(checker *c, const Table *h, int quiet);

/* The weakness of a table, read from its metatable's __mode without calling into Lua. */
static void table_mode(checker *c, const Table *h, int *weakkey, int *weakvalue) {
  *weakkey = *weakvalue = 0;
  const Table *mt = h->metatable;
  uint64_t info;
  if (mt == NULL || !info_of(c, obj2gco(mt), &info) || (info & INFO_BROKEN) ||
      obj2gco(mt)->tt != LUA_VTABLE || !table_parts_ok(c, mt, 1) || isdummy(mt))
    return;
  const TString *mode_key = c->g->tmname[TM_MODE];
  for (size_t i = 0; i < sizenode(mt); i++) {
    const Node *n = gnode(mt, i);
    if (keytt(n) != ctb(LUA_VSHRSTR) || gckey(n) != obj2gco(mode_key)) continue;
    const TValue *val = gval(n);
    if (!ttisstring(val) || !readable(c, gcvalue(val))) return;
    const TString *s = tsvalue(val);
    size_t len = s->tt == LUA_VSHRSTR ? s->shrlen : s->u.lnglen;
    *weakkey = memchr(getstr(s), 'k', len) != NULL;
    *weakvalue = memchr(getstr(s), 'v', len) != NULL;
    return;
  }
}

static int table_parts_ok(checker *c, const Table *h, int quiet) {
  unsigned asize = luab_table_asize(h);
  if (asize > 0 && alloc_bytes(c->v, h->array) != asize * sizeof(TValue)) {
    if (!quiet)
      report(c, "table-shape", "table %p: array of %u slots is an allocation of %zu bytes",
             (void *)h, asize, alloc_bytes(c->v, h->array));
    return 0;
  }
  if (isdummy(h)) {
    if (h->lsizenode != 0) {
      if (!quiet)
        report(c, "table-shape", "table %p: dummy hash part with lsizenode %d", (void *)h,
               h->lsizenode);
      return 0;
    }
    return 1;
  }
  size_t nsize = sizenode(h);
  if (h->lsizenode >= 8 * sizeof(int) - 2 || alloc_bytes(c->v, h->node) != nsize * sizeof(Node) ||
      h->lastfree < h->node || h->lastfree > h->node + nsize) {
    if (!quiet)
      report(c, "table-shape", "table %p: hash part of %zu nodes does not match its allocation",
             (void *)h, nsize);
    return 0;
  }
  return 1;
}

static void check_table(checker *c, const GCObject *o) {
  const Table *h = gco2t(o);
  int weakkey, weakvalue;
  if (!table_parts_ok(c, h, 0)) {
    uint64_t info;
    if (info_of(c, o, &info)) set_info(c, o, info | INFO_BROKEN);
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
      report(c, "bad-tag", "table %p: key of node %zu has tag 0x%x", (void *)h, i, keytt(n));
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

static void check_thread(checker *c, const GCObject *o) {
  const lua_State *th = gco2th(o);
  if (th->stack == NULL) return; /* not built yet */
  size_t slots = (size_t)(th->stack_last - th->stack) + EXTRA_STACK;
  if (alloc_bytes(c->v, th->stack) != slots * sizeof(StackValue) || th->top < th->stack ||
      th->top > th->stack_last + EXTRA_STACK) {
    report(c, "thread-shape", "thread %p: stack of %zu slots (top %td) is no such allocation",
           (void *)th, slots, th->top - th->stack);
    return;
  }
  for (StkId s = th->stack; s < th->top; s++) {
    check_value(c, o, (site){"stack[%ld]", (long)(s - th->stack)}, s2v(s), 0);
  }
  size_t n = 0;
  for (const UpVal *uv = th->openupval; uv != NULL && n < (1u << 20); uv = uv->u.open.next, n++) {
    check_ref(c, o, SITE("an open upvalue"), obj2gco(uv), LUA_VUPVAL, 0);
    uint64_t info;
    if (!info_of(c, obj2gco(uv), &info)) break;
  }
}

static void check_contents(checker *c, const GCObject *o) {
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
      if (f->sizek > 0 && alloc_bytes(c->v, f->k) >= (size_t)f->sizek * sizeof(TValue)) {
        for (int i = 0; i < f->sizek; i++) {
          check_value(c, o, (site){"constant %ld", (long)i}, &f->k[i], 0);
        }
      }
      if (f->sizep > 0 && alloc_bytes(c->v, f->p) >= (size_t)f->sizep * sizeof(Proto *)) {
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

/* Threads have no write barriers: a store to a stack is never seen by the collector. So Lua
 * keeps them gray: traversethread links a thread to grayagain in the propagate phase (to be
 * traversed again in the atomic one), and an old thread there in every phase, so each young
 * collection re-traverses its stack (sweep2old and correctgraylist keep old threads gray). */
static void check_thread_colour(checker *c, const GCObject *o, const char *ln) {
  if (c->inc && c->keep && isblack(o))
    report(c, "thread-colour", "thread %p in %s is black in state %d, before the atomic phase",
           (void *)o, ln, c->g->gcstate);
  else if (!c->inc && getage(o) == G_OLD && !isgray(o))
    report(c, "thread-colour", "old thread %p in %s is %s, not gray (on grayagain)", (void *)o, ln,
           colour_name(c, o));
}

/* The header of one listed object: its size, colour, age and finalization bit. */
static void check_header(checker *c, const GCObject *o, uint64_t info) {
  int list = (int)(info & LIST_MASK);
  int in_fin = list == LIST_FINOBJ || list == LIST_TOBEFNZ;
  const char *ln = list_name(list);
  size_t want = o->tt == LUA_VTHREAD ? sizeof(mirror_lx) : object_bytes(o);
  const void *start =
      o->tt == LUA_VTHREAD ? (const void *)((const char *)o - offsetof(mirror_lx, l)) : o;
  if (o != obj2gco(c->g->mainthread) && alloc_bytes(c->v, start) != want) {
    report(c, "object-size", "%s %p in %s: %zu bytes by its header, an allocation of %zu",
           type_name(o->tt), (void *)o, ln, want, alloc_bytes(c->v, start));
    set_info(c, o, info | INFO_BROKEN);
  }
  if (list == LIST_FIXED) {
    if (o->tt != LUA_VSHRSTR || !isgray(o) || getage(o) != G_OLD)
      report(c, "fixed", "%s %p in fixedgc is %s of age %d (a gray old short string expected)",
             type_name(o->tt), (void *)o, colour_name(c, o), getage(o));
    return;
  }
  if (in_fin != (tofinalize(o) != 0))
    report(c, "finobj-bit", "%s %p in %s has FINALIZEDBIT %s", type_name(o->tt), (void *)o, ln,
           tofinalize(o) ? "set" : "clear");
  if (in_fin && o->tt != LUA_VTABLE && o->tt != LUA_VUSERDATA)
    report(c, "list", "a %s %p in %s: only tables and userdata have finalizers", type_name(o->tt),
           (void *)o, ln);
  if ((o->marked & WHITEBITS) == WHITEBITS || (iswhite(o) && isblack(o))) {
    report(c, "bad-colour", "%s %p in %s has marked 0x%02x: %s", type_name(o->tt), (void *)o, ln,
           o->marked, colour_name(c, o));
    return;
  }
  /* Colours. */
  if (c->inc) {
    int all_swept = info & INFO_SWEPT;
    if (isdead(c->g, o) && (c->keep || all_swept))
      report(c, "dead-object", "%s %p in %s is dead (other white) in state %d, %s",
             type_name(o->tt), (void *)o, ln, c->g->gcstate,
             c->keep ? "after the sweep" : "in the part already swept");
    else if (all_swept && !iswhite(o))
      report(c, "bad-colour", "%s %p in %s is %s in state %d where everything is swept white",
             type_name(o->tt), (void *)o, ln, colour_name(c, o), c->g->gcstate);
    if (c->keep && list == LIST_TOBEFNZ && iswhite(o))
      report(c, "bad-colour", "%s %p waits for its finalizer but is white while marking",
             type_name(o->tt), (void *)o);
  } else if (isdead(c->g, o)) {
    report(c, "dead-object", "%s %p in %s is dead (other white) in generational mode",
           type_name(o->tt), (void *)o, ln);
  }
  if (o->tt == LUA_VTHREAD) check_thread_colour(c, o, ln);
  /* Ages. */
  int age = getage(o);
  if (c->inc && age != G_NEW)
    report(c, "bad-age", "%s %p in %s has age %d in incremental mode", type_name(o->tt), (void *)o,
           ln, age);
  if (!c->inc && age > G_TOUCHED2)
    report(c, "bad-age", "%s %p in %s has no age (%d)", type_name(o->tt), (void *)o, ln, age);
  if (!c->inc && (age == G_TOUCHED1 || age == G_TOUCHED2) && !(info & INFO_GRAY))
    report(c, "bad-age", "%s %p in %s is TOUCHED%d but in no gray list", type_name(o->tt),
           (void *)o, ln, age == G_TOUCHED1 ? 1 : 2);
  if (!c->inc && age == G_TOUCHED1 && !isgray(o))
    report(c, "bad-age", "%s %p in %s is TOUCHED1 but %s", type_name(o->tt), (void *)o, ln,
           colour_name(c, o));
  /* Gray objects wait in a gray list (lgc.h), but open upvalues. */
  if (c->gray_rules && isgray(o) && !(info & INFO_GRAY) &&
      !(o->tt == LUA_VUPVAL && upisopen(gco2upv(o))))
    report(c, "gray-list", "gray %s %p in %s is in no gray list", type_name(o->tt), (void *)o, ln);
}

/* ---- The gray lists ------------------------------------------------------------------------- */

static GCObject **gclist_of(GCObject *o) {
  switch (o->tt) {
    case LUA_VTABLE: return &gco2t(o)->gclist;
    case LUA_VLCL: return &gco2lcl(o)->gclist;
    case LUA_VCCL: return &gco2ccl(o)->gclist;
    case LUA_VTHREAD: return &gco2th(o)->gclist;
    case LUA_VPROTO: return &gco2p(o)->gclist;
    case LUA_VUSERDATA: return gco2u(o)->nuvalue > 0 ? &gco2u(o)->gclist : NULL;
    default: return NULL;
  }
}

static void walk_gray(checker *c, GCObject *head, const char *name, int touched2_ok) {
  size_t pos = 0;
  for (GCObject *o = head; o != NULL; pos++) {
    uint64_t info;
    if (!info_of(c, o, &info) || (info & INFO_BROKEN)) {
      report(c, "gray-list", "%s[%zu] = %p is no listed object", name, pos, (void *)o);
      return;
    }
    if (info & INFO_GRAY) {
      report(c, "gray-list", "%s[%zu]: %s %p is on a gray list twice", name, pos, type_name(o->tt),
             (void *)o);
      return;
    }
    GCObject **next = gclist_of(o);
    if (next == NULL) {
      report(c, "gray-list", "%s[%zu]: a %s %p cannot be on a gray list", name, pos,
             type_name(o->tt), (void *)o);
      return;
    }
    set_info(c, o, info | INFO_GRAY);
    if (!isgray(o) && !(touched2_ok && isblack(o) && getage(o) == G_TOUCHED2))
      report(c, "gray-list", "%s[%zu]: %s %p is %s (age %d)", name, pos, type_name(o->tt),
             (void *)o, colour_name(c, o), getage(o));
    o = *next;
  }
}

/* ---- Generational positions ----------------------------------------------------------------- */

static size_t position_in(checker *c, GCObject *p, int list, const char *name) {
  uint64_t info;
  if (p == NULL) return c->len[list];
  if (!info_of(c, p, &info) || (int)(info & LIST_MASK) != list) {
    report(c, "gen-lists", "%s = %p is not in %s", name, (void *)p, list_name(list));
    return SIZE_MAX;
  }
  return (size_t)(info >> INFO_POS_SHIFT);
}

/* The three boundaries of one list: young | survival | old1 | really old. */
static void check_generations(checker *c, GCObject *head, int list, GCObject *sur, GCObject *old1,
                              GCObject *rold, const char *names[3]) {
  size_t b[3] = {position_in(c, sur, list, names[0]), position_in(c, old1, list, names[1]),
                 position_in(c, rold, list, names[2])};
  if (b[0] == SIZE_MAX || b[1] == SIZE_MAX || b[2] == SIZE_MAX) return;
  if (!(b[0] <= b[1] && b[1] <= b[2])) {
    report(c, "gen-lists", "%s at %zu, %s at %zu, %s at %zu: out of order", names[0], b[0],
           names[1], b[1], names[2], b[2]);
    return;
  }
  size_t pos = 0;
  for (GCObject *o = head; o != NULL && pos < c->len[list]; o = o->next, pos++) {
    int age = getage(o);
    const char *bad = NULL;
    if (pos >= b[2] && age != G_OLD && age != G_TOUCHED1 && age != G_TOUCHED2)
      bad = names[2];
    else if (pos >= b[1] && pos < b[2] && (age == G_NEW || age == G_SURVIVAL || age == G_OLD0))
      bad = names[1];
    else if (pos >= b[0] && pos < b[1] && age == G_NEW)
      bad = names[0];
    if (bad != NULL)
      report(c, "bad-age", "%s %p at %s[%zu] (past %s) has age %d, younger than its place",
             type_name(o->tt), (void *)o, list_name(list), pos, bad, age);
  }
}

static void check_gen_lists(checker *c) {
  global_State *g = c->g;
  if (c->inc) {
    /* Not firstold1: enterinc leaves it as it was, and nothing reads it before atomic2gen
     * sets it again. */
    if (g->survival || g->old1 || g->reallyold || g->finobjsur || g->finobjold1 || g->finobjrold)
      report(c, "gen-lists",
             "generational positions set in incremental mode: survival %p old1 %p reallyold %p "
             "finobjsur %p finobjold1 %p finobjrold %p",
             (void *)g->survival, (void *)g->old1, (void *)g->reallyold, (void *)g->finobjsur,
             (void *)g->finobjold1, (void *)g->finobjrold);
    return;
  }
  static const char *all_names[3] = {"survival", "old1", "reallyold"};
  static const char *fin_names[3] = {"finobjsur", "finobjold1", "finobjrold"};
  check_generations(c, g->allgc, LIST_ALLGC, g->survival, g->old1, g->reallyold, all_names);
  check_generations(c, g->finobj, LIST_FINOBJ, g->finobjsur, g->finobjold1, g->finobjrold,
                    fin_names);
  size_t first = position_in(c, g->firstold1, LIST_ALLGC, "firstold1");
  if (first == SIZE_MAX) return;
  size_t pos = 0;
  for (GCObject *o = g->allgc; o != NULL && pos < first; o = o->next, pos++) {
    if (getage(o) == G_OLD1)
      report(c, "bad-age", "%s %p at allgc[%zu] is OLD1 but firstold1 is at %zu", type_name(o->tt),
             (void *)o, pos, first);
  }
}

/* ---- Strings, roots, blocks ----------------------------------------------------------------- */

static void check_strings(checker *c) {
  const stringtable *tb = &c->g->strt;
  if (tb->size <= 0 || !ispow2(tb->size) ||
      alloc_bytes(c->v, tb->hash) != (size_t)tb->size * sizeof(TString *)) {
    report(c, "string-table", "string table of size %d is no such allocation", tb->size);
    return;
  }
  int n = 0;
  for (int i = 0; i < tb->size; i++) {
    for (const TString *ts = tb->hash[i]; ts != NULL; ts = ts->u.hnext, n++) {
      uint64_t info;
      if (!info_of(c, obj2gco(ts), &info) || ts->tt != LUA_VSHRSTR) {
        report(c, "string-table", "bucket %d holds %p, no listed short string", i, (void *)ts);
        break;
      }
      if ((int)(ts->hash & (unsigned)(tb->size - 1)) != i)
        report(c, "string-table", "string %p of hash 0x%x is in bucket %d of %d", (void *)ts,
               ts->hash, i, tb->size);
      if (n > tb->nuse) break;
    }
  }
  if (n != tb->nuse)
    report(c, "string-table", "the string table holds %d strings but counts %d", n, tb->nuse);
}

/* marked: restartcollection marks it, and nothing unmarks it before the sweep. */
static void check_root(checker *c, const GCObject *o, int tt, int list, int marked,
                       const char *name) {
  uint64_t info;
  if (!info_of(c, o, &info) || o->tt != tt || (list && (int)(info & LIST_MASK) != list)) {
    report(c, "root", "%s %p is no listed %s", name, (void *)o, type_name(tt));
    return;
  }
  if (marked && c->inc && c->keep && iswhite(o))
    report(c, "root", "%s is white in state %d (marked when the cycle starts)", name,
           c->g->gcstate);
}

static void check_roots(checker *c) {
  global_State *g = c->g;
  check_root(c, obj2gco(g->mainthread), LUA_VTHREAD, LIST_ALLGC, 1, "the main thread");
  if (!ttistable(&g->l_registry))
    report(c, "root", "the registry is no table");
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
      if (!info_of(c, s, &info) || novariant(s->tt) != LUA_TSTRING || isdead(g, s))
        report(c, "root", "the API string cache holds %p, no live string", (void *)s);
    }
  }
}

static void check_block(checker *c, const GCObject *o, luab_mt kind, uint64_t info) {
  uint64_t id, check;
  if (!luab_block_ident(o, &id, &check))
    report(c, "identity", "block %s %p: its identity slots are not integers", type_name(o->tt),
           (void *)o);
  if (o->tt == LUA_VTABLE) {
    const Table *h = gco2t(o);
    unsigned asize = luab_table_asize(h);
    int ephe = kind == LUAB_MT_EPHE || kind == LUAB_MT_EPHE_FIN;
    int weak = kind == LUAB_MT_WEAK || kind == LUAB_MT_WEAK_FIN;
    if (asize < 2 || (weak && asize != 3) || (ephe && asize != 2) ||
        (ephe ? sizenode(h) != 1 || isdummy(h) : !isdummy(h)))
      report(c, "block-shape", "block table %p (marker %d): array of %u, hash of %d", (void *)h,
             kind, asize, isdummy(h) ? 0 : (int)sizenode(h));
  } else if (kind != LUAB_MT_BLOCK && kind != LUAB_MT_BLOCK_FIN) {
    report(c, "block-shape", "userdata %p has a table block's marker %d", (void *)o, kind);
  }
  int armed = kind == LUAB_MT_BLOCK_FIN || kind == LUAB_MT_WEAK_FIN || kind == LUAB_MT_EPHE_FIN;
  if (armed && !tofinalize(o) && !c->v->in_finalizer)
    report(c, "finalizer-lost",
           "block %s %p has __gc but Lua does not hold it for finalization "
           "(it is in %s)",
           type_name(o->tt), (void *)o, list_name((int)(info & LIST_MASK)));
}

static void check_cells(checker *c) {
  const GCObject *o = c->v->cells;
  uint64_t info;
  if (!info_of(c, o, &info) || o->tt != LUA_VTABLE || (info & INFO_BROKEN)) {
    report(c, "cell", "the cells table %p is no listed table", (void *)o);
    return;
  }
  const Table *h = gco2t(o);
  unsigned n = luab_table_asize(h);
  for (unsigned i = 0; i < n; i++) {
    const TValue *tv = &h->array[i];
    if (ttisnil(tv)) continue;
    if (!iscollectable(tv) || !info_of(c, gcvalue(tv), &info) ||
        luab_block_mt(c->v, gcvalue(tv)) == LUAB_MT_COUNT)
      report(c, "cell", "cell %u holds a value of tag 0x%x that is no block", i, rawtt(tv));
  }
}

/* ---- Domains ---------------------------------------------------------------------------- */

/* Between ops a thread holds its base frame only: the function slot, nothing above. */
static int stack_empty(const lua_State *th) {
  return th->ci == &th->base_ci && th->top == th->stack + 1;
}

static void check_domains(checker *c) {
  const luab_view *v = c->v;
  if (v->domains[0] != c->g->mainthread)
    report(c, "domain", "domain 0 is %p, not the main thread %p", (void *)v->domains[0],
           (void *)c->g->mainthread);
  if (v->running >= LUAB_DOMAINS || v->domains[v->running] == NULL ||
      (v->domains[v->running] != v->L && !v->in_finalizer))
    report(c, "domain", "the ops run on %p, not on domain %u's thread", (void *)v->L, v->running);
  const GCObject *t = v->domains_table;
  uint64_t info;
  if (!info_of(c, t, &info) || t->tt != LUA_VTABLE || (info & INFO_BROKEN) ||
      luab_table_asize(t) < LUAB_DOMAINS) {
    report(c, "domain", "the domains' anchor table %p is no listed table of %d slots", (void *)t,
           LUAB_DOMAINS);
    return;
  }
  const TValue *slot = gco2t(t)->array;
  for (unsigned d = 0; d < LUAB_DOMAINS; d++) {
    const lua_State *th = v->domains[d];
    if (d > 0 &&
        (th == NULL ? !ttisnil(&slot[d]) : !ttisthread(&slot[d]) || thvalue(&slot[d]) != th)) {
      report(c, "domain", "domain %u is %p but its anchor slot holds a value of tag 0x%x", d,
             (void *)th, rawtt(&slot[d]));
      continue;
    }
    if (th == NULL) continue;
    const GCObject *o = obj2gco(th);
    if (!info_of(c, o, &info) || o->tt != LUA_VTHREAD || (info & LIST_MASK) != LIST_ALLGC ||
        isdead(c->g, o)) {
      report(c, "domain", "domain %u's thread %p is no live thread in allgc", d, (void *)th);
      continue;
    }
    if (!v->mid_op && !v->in_finalizer && !stack_empty(th))
      report(c, "domain-stack", "between ops, domain %u's thread %p holds %td stack slots%s", d,
             (void *)th, th->top - th->stack - 1, th->ci == &th->base_ci ? "" : " and frames");
  }
  /* An ended coroutine leaves `ended` when the allocator frees it. */
  for (size_t i = 0; i < v->ended->capacity; i++) {
    if (v->ended->keys[i] == 0 || v->ended->values[i] >= v->cycles) continue;
    report(c, "thread-kept",
           "coroutine %p ended before whole cycle %llu, and the %llu since have not freed it",
           (void *)((const char *)v->ended->keys[i] + offsetof(mirror_lx, l)),
           (unsigned long long)v->ended->values[i] + 1,
           (unsigned long long)(v->cycles - v->ended->values[i]));
  }
}

/* ---- The check ------------------------------------------------------------------------------ */

static void check_state(checker *c) {
  global_State *g = c->g;
  if (g->gcstate > GCSpause || g->gckind > KGC_GEN ||
      (g->currentwhite != bitmask(WHITE0BIT) && g->currentwhite != bitmask(WHITE1BIT)))
    report(c, "gc-state", "gcstate %d, gckind %d, currentwhite 0x%x", g->gcstate, g->gckind,
           g->currentwhite);
  if (g->gckind == KGC_GEN && g->gcstate != GCSpropagate)
    report(c, "gc-state", "generational mode between collections in state %d", g->gcstate);
  if (g->gcstopem || g->gcemergency)
    report(c, "gc-state", "a collection left gcstopem %d, gcemergency %d", g->gcstopem,
           g->gcemergency);
  if ((g->gcstp & GCSTPGC) && !c->v->in_finalizer)
    report(c, "gc-state", "GCSTPGC set outside a finalizer (gcstp 0x%x)", g->gcstp);
  if (gettotalbytes(g) != c->v->live_bytes)
    report(c, "totalbytes", "Lua counts %zu bytes (totalbytes %td + GCdebt %td), the allocator %zu",
           (size_t)gettotalbytes(g), (ptrdiff_t)g->totalbytes, (ptrdiff_t)g->GCdebt,
           c->v->live_bytes);
  if (!c->inc && (g->weak || g->allweak || g->ephemeron))
    report(c, "gray-list", "weak, allweak or ephemeron list left set in generational mode");
}

size_t luab_check(const luab_view *v, fuzz_finding *out, size_t max) {
  checker c = {.v = v, .g = G(v->L), .out = out, .max = max};
  global_State *g = c.g;
  c.inc = g->gckind == KGC_INC;
  c.keep = keepinvariant(g);
  c.sweeping = issweepphase(g);
  c.gray_rules = c.inc ? c.keep : 1;
  check_state(&c);
  walk_list(&c, &g->allgc, LIST_ALLGC);
  walk_list(&c, &g->finobj, LIST_FINOBJ);
  walk_list(&c, &g->tobefnz, LIST_TOBEFNZ);
  walk_list(&c, &g->fixedgc, LIST_FIXED);
  if (c.gray_rules) {
    walk_gray(&c, g->gray, "gray", 0);
    walk_gray(&c, g->grayagain, "grayagain", !c.inc);
    walk_gray(&c, g->weak, "weak", 0);
    walk_gray(&c, g->allweak, "allweak", 0);
    walk_gray(&c, g->ephemeron, "ephemeron", 0);
  }
  for (size_t i = 0; i < c.objs.capacity; i++) {
    if (c.objs.keys[i] == 0) continue;
    const GCObject *o = (const GCObject *)c.objs.keys[i];
    check_header(&c, o, c.objs.values[i]);
  }
  /* Contents after every header: a broken object's references are not followed. */
  for (size_t i = 0; i < c.objs.capacity; i++) {
    if (c.objs.keys[i] == 0 || (c.objs.values[i] & INFO_BROKEN)) continue;
    const GCObject *o = (const GCObject *)c.objs.keys[i];
    check_contents(&c, o);
    luab_mt kind = luab_block_mt(v, o);
    if (kind != LUAB_MT_COUNT) check_block(&c, o, kind, c.objs.values[i]);
  }
  check_gen_lists(&c);
  check_strings(&c);
  check_roots(&c);
  check_cells(&c);
  check_domains(&c);
  luab_ptrmap_free(&c.objs);
  return c.count;
}

/* ---- The walk ------------------------------------------------------------------------------- */

size_t luab_walk(const luab_view *v, void (*visit)(void *user, uint64_t id, uint64_t check),
                 void *user) {
  checker c = {.v = v, .g = G(v->L)};
  GCObject *lists[] = {c.g->allgc, c.g->finobj, c.g->tobefnz};
  size_t unreadable = 0, seen = 0;
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (GCObject *o = lists[l]; o != NULL; o = o->next) {
      if (!readable(&c, o) || ++seen > v->allocs->count + 1) {
        unreadable++; /* a broken list: what follows cannot be read */
        break;
      }
      luab_mt kind = luab_block_mt(v, o);
      if (kind == LUAB_MT_COUNT) continue;
      uint64_t id, check;
      if (o->tt == LUA_VTABLE && !table_parts_ok(&c, gco2t(o), 1))
        unreadable++;
      else if (luab_block_ident(o, &id, &check))
        visit(user, id, check);
      else
        unreadable++;
    }
  }
  return unreadable;
}
