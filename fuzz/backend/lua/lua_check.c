/* The deep check of Lua 5.4's collector (with lua_check_lists.c and lua_check_values.c), the
 * walk, and the backend's view of blocks.
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
 *   lua.mark-incomplete at the end of an incremental atomic phase (luab_check_atomic, inside
 *                       the collector), a weak table on a gray list holds an unmarked strong
 *                       part (an ephemeron's datum whose key is marked); the sweep would free it
 *   lua.gen-lists       (also) after fin_set, a generational position still names the object
 *                       luaC_checkfinalizer moved to finobj
 *
 * Cost: one pass over the lists and one over every reference, each lookup a hash probe.
 */
#include "fuzz/backend/lua/lua_check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Domains ---------------------------------------------------------------------------- */

/* Between ops a thread holds its base frame only: the function slot, nothing above. */
static int stack_empty(const lua_State *th) {
  return th->ci == &th->base_ci && th->top == th->stack + 1;
}

static void check_domains(luab_checker *c) {
  const luab_view *v = c->v;
  if (v->domains[0] != c->g->mainthread)
    luab_ck_report(c, "domain", "domain 0 is %p, not the main thread %p", (void *)v->domains[0],
                   (void *)c->g->mainthread);
  if (v->running >= LUAB_DOMAINS || v->domains[v->running] == NULL ||
      (v->domains[v->running] != v->L && !v->in_finalizer))
    luab_ck_report(c, "domain", "the ops run on %p, not on domain %u's thread", (void *)v->L,
                   v->running);
  const GCObject *t = v->domains_table;
  uint64_t info;
  if (!luab_ck_info_of(c, t, &info) || t->tt != LUA_VTABLE || (info & INFO_BROKEN) ||
      luab_table_asize(t) < LUAB_DOMAINS) {
    luab_ck_report(c, "domain", "the domains' anchor table %p is no listed table of %d slots",
                   (void *)t, LUAB_DOMAINS);
    return;
  }
  const TValue *slot = gco2t(t)->array;
  for (unsigned d = 0; d < LUAB_DOMAINS; d++) {
    const lua_State *th = v->domains[d];
    if (d > 0 &&
        (th == NULL ? !ttisnil(&slot[d]) : !ttisthread(&slot[d]) || thvalue(&slot[d]) != th)) {
      luab_ck_report(c, "domain", "domain %u is %p but its anchor slot holds a value of tag 0x%x",
                     d, (void *)th, rawtt(&slot[d]));
      continue;
    }
    if (th == NULL) continue;
    const GCObject *o = obj2gco(th);
    if (!luab_ck_info_of(c, o, &info) || o->tt != LUA_VTHREAD || (info & LIST_MASK) != LIST_ALLGC ||
        isdead(c->g, o)) {
      luab_ck_report(c, "domain", "domain %u's thread %p is no live thread in allgc", d,
                     (void *)th);
      continue;
    }
    if (!v->mid_op && !v->in_finalizer && !stack_empty(th))
      luab_ck_report(c, "domain-stack",
                     "between ops, domain %u's thread %p holds %td stack slots%s", d, (void *)th,
                     th->top - th->stack - 1, th->ci == &th->base_ci ? "" : " and frames");
  }
  /* An ended coroutine leaves `ended` when the allocator frees it. */
  for (size_t i = 0; i < v->ended->capacity; i++) {
    if (v->ended->keys[i] == 0 || v->ended->values[i] >= v->cycles) continue;
    luab_ck_report(
        c, "thread-kept",
        "coroutine %p ended before whole cycle %llu, and the %llu since have not freed it",
        (void *)((const char *)v->ended->keys[i] + offsetof(mirror_lx, l)),
        (unsigned long long)v->ended->values[i] + 1,
        (unsigned long long)(v->cycles - v->ended->values[i]));
  }
}

/* ---- At the end of the atomic phase ----------------------------------------------------- */

/* The strong parts of one weak table (a backend marker's __mode says which are weak). */
static void marked_parts(luab_checker *c, const Table *h, const char *list) {
  luab_mt kind = luab_block_mt(c->v, h);
  int weakkey = kind == LUAB_MT_EPHE || kind == LUAB_MT_EPHE_FIN;
  int weakvalue = kind == LUAB_MT_WEAK || kind == LUAB_MT_WEAK_FIN;
  if (!weakkey && !weakvalue) return; /* no marker of ours: its mode unknown here */
  unsigned asize = weakvalue ? 0 : luab_table_asize(h);
  for (unsigned i = 0; i < asize; i++) {
    const TValue *tv = &h->array[i];
    if (iscollectable(tv) && iswhite(gcvalue(tv)))
      luab_ck_report(c, "mark-incomplete", "table %p on %s: array[%u] is unmarked %s %p", (void *)h,
                     list, i + 1, luab_ck_type_name(gcvalue(tv)->tt), (void *)gcvalue(tv));
  }
  if (isdummy(h)) return;
  for (size_t i = 0; i < sizenode(h); i++) {
    const Node *n = gnode(h, i);
    if (isempty(gval(n))) continue;
    int key_marked = !keyiscollectable(n) || !iswhite(gckey(n));
    if (!weakkey && !key_marked)
      luab_ck_report(c, "mark-incomplete", "table %p on %s: the key of node %zu is unmarked",
                     (void *)h, list, i);
    if (!weakvalue && key_marked && iscollectable(gval(n)) && iswhite(gcvalue(gval(n))))
      luab_ck_report(c, "mark-incomplete",
                     "table %p on %s: node %zu's key is marked, its datum (%s %p) is not",
                     (void *)h, list, i, luab_ck_type_name(gcvalue(gval(n))->tt),
                     (void *)gcvalue(gval(n)));
  }
}

size_t luab_check_atomic(const luab_view *v, fuzz_finding *out, size_t max) {
  luab_checker c = {.v = v, .g = G(v->L), .out = out, .max = max};
  const struct {
    GCObject *head;
    const char *name;
  } lists[] = {{c.g->weak, "weak"}, {c.g->allweak, "allweak"}, {c.g->ephemeron, "ephemeron"}};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    size_t n = 0;
    for (GCObject *o = lists[l].head; o != NULL && o->tt == LUA_VTABLE; o = gco2t(o)->gclist) {
      if (++n > v->allocs->count) break; /* a cycle: the deep check's lua.gray-list */
      marked_parts(&c, gco2t(o), lists[l].name);
    }
  }
  return c.count;
}

/* ---- After fin_set ------------------------------------------------------------------------ */

size_t luab_check_separated(const luab_view *v, const void *gco, fuzz_finding *out, size_t max) {
  luab_checker c = {.v = v, .g = G(v->L), .out = out, .max = max};
  const GCObject *o = gco;
  const struct {
    const GCObject *p;
    const char *name;
  } pos[] = {{c.g->survival, "survival"},
             {c.g->old1, "old1"},
             {c.g->reallyold, "reallyold"},
             {c.g->firstold1, "firstold1"}};
  if (o == NULL || !tofinalize(o)) return 0; /* not moved (closing, or no __gc) */
  /* The positions mean something in generational mode only: enterinc empties three of them but
   * leaves firstold1 as it was, unread until atomic2gen sets it again on the way back. */
  if (c.g->gckind != KGC_GEN) return 0;
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
    if (pos[i].p == o)
      luab_ck_report(&c, "gen-lists",
                     "%s %p moved to finobj by fin_set, but %s still names it (a position in "
                     "allgc)",
                     luab_ck_type_name(o->tt), (void *)o, pos[i].name);
  }
  return c.count;
}

/* ---- The check ------------------------------------------------------------------------------ */

static void check_state(luab_checker *c) {
  global_State *g = c->g;
  if (g->gcstate > GCSpause || g->gckind > KGC_GEN ||
      (g->currentwhite != bitmask(WHITE0BIT) && g->currentwhite != bitmask(WHITE1BIT)))
    luab_ck_report(c, "gc-state", "gcstate %d, gckind %d, currentwhite 0x%x", g->gcstate, g->gckind,
                   g->currentwhite);
  if (g->gckind == KGC_GEN && g->gcstate != GCSpropagate)
    luab_ck_report(c, "gc-state", "generational mode between collections in state %d", g->gcstate);
  if (g->gcstopem || g->gcemergency)
    luab_ck_report(c, "gc-state", "a collection left gcstopem %d, gcemergency %d", g->gcstopem,
                   g->gcemergency);
  if ((g->gcstp & GCSTPGC) && !c->v->in_finalizer)
    luab_ck_report(c, "gc-state", "GCSTPGC set outside a finalizer (gcstp 0x%x)", g->gcstp);
  if (gettotalbytes(g) != c->v->live_bytes)
    luab_ck_report(
        c, "totalbytes", "Lua counts %zu bytes (totalbytes %td + GCdebt %td), the allocator %zu",
        (size_t)gettotalbytes(g), (ptrdiff_t)g->totalbytes, (ptrdiff_t)g->GCdebt, c->v->live_bytes);
  if (!c->inc && (g->weak || g->allweak || g->ephemeron))
    luab_ck_report(c, "gray-list", "weak, allweak or ephemeron list left set in generational mode");
}

size_t luab_check(const luab_view *v, fuzz_finding *out, size_t max) {
  luab_checker c = {.v = v, .g = G(v->L), .out = out, .max = max};
  global_State *g = c.g;
  c.inc = g->gckind == KGC_INC;
  c.keep = keepinvariant(g);
  c.sweeping = issweepphase(g);
  c.gray_rules = c.inc ? c.keep : 1;
  check_state(&c);
  luab_ck_walk_list(&c, &g->allgc, LIST_ALLGC);
  luab_ck_walk_list(&c, &g->finobj, LIST_FINOBJ);
  luab_ck_walk_list(&c, &g->tobefnz, LIST_TOBEFNZ);
  luab_ck_walk_list(&c, &g->fixedgc, LIST_FIXED);
  if (c.gray_rules) {
    luab_ck_walk_gray(&c, g->gray, "gray", 0);
    luab_ck_walk_gray(&c, g->grayagain, "grayagain", !c.inc);
    luab_ck_walk_gray(&c, g->weak, "weak", 0);
    luab_ck_walk_gray(&c, g->allweak, "allweak", 0);
    luab_ck_walk_gray(&c, g->ephemeron, "ephemeron", 0);
  }
  for (size_t i = 0; i < c.objs.capacity; i++) {
    if (c.objs.keys[i] == 0) continue;
    const GCObject *o = (const GCObject *)c.objs.keys[i];
    luab_ck_header(&c, o, c.objs.values[i]);
  }
  /* Contents after every header: a broken object's references are not followed. */
  for (size_t i = 0; i < c.objs.capacity; i++) {
    if (c.objs.keys[i] == 0 || (c.objs.values[i] & INFO_BROKEN)) continue;
    const GCObject *o = (const GCObject *)c.objs.keys[i];
    luab_ck_contents(&c, o);
    luab_mt kind = luab_block_mt(v, o);
    if (kind != LUAB_MT_COUNT) luab_ck_block(&c, o, kind, c.objs.values[i]);
  }
  luab_ck_gen_lists(&c);
  luab_ck_strings(&c);
  luab_ck_roots(&c);
  luab_ck_cells(&c);
  check_domains(&c);
  luab_ptrmap_free(&c.objs);
  return c.count;
}

/* ---- The walk ------------------------------------------------------------------------------- */

size_t luab_walk(const luab_view *v, void (*visit)(void *user, uint64_t id, uint64_t check),
                 void *user) {
  luab_checker c = {.v = v, .g = G(v->L)};
  GCObject *lists[] = {c.g->allgc, c.g->finobj, c.g->tobefnz};
  size_t unreadable = 0, seen = 0;
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (GCObject *o = lists[l]; o != NULL; o = o->next) {
      if (!luab_ck_readable(&c, o) || ++seen > v->allocs->count + 1) {
        unreadable++; /* a broken list: what follows cannot be read */
        break;
      }
      luab_mt kind = luab_block_mt(v, o);
      if (kind == LUAB_MT_COUNT) continue;
      uint64_t id, check;
      if (o->tt == LUA_VTABLE && !luab_ck_table_parts_ok(&c, gco2t(o), 1))
        unreadable++;
      else if (luab_block_ident(o, &id, &check))
        visit(user, id, check);
      else
        unreadable++;
    }
  }
  return unreadable;
}
