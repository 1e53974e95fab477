/* The rare events of Lua's collector (lua_heap.h, LUAB_RARE_EVENTS), counted from outside Lua's
 * sources: what a fuzzer should make common, for the census of `replay --events`.
 *
 * How each is seen. The linker sends the calls Lua's other files make into lgc.c through the
 * backend (BUILD: --wrap): luaC_step (every step, automatic or lua_gc's), luaC_fullgc (lua_gc's
 * full collections and lmem.c's and lstring.c's emergency ones, told apart by its argument),
 * luaC_changemode (lua_gc's mode switches) and luaS_clearcache (called once, at the end of
 * atomic). Around a step the state says what genstep or incstep will do, by the same tests they
 * make: a step in generational mode after a bad collection is stepgenfull, one whose memory grew
 * past majormul a major collection, else a minor one; after it, lastatomic says whether the
 * major collection was bad and gckind whether stepgenfull went back to generational. Steps at
 * the tunables' corners read the parameters the step ran with. At the end of atomic the weak
 * tables on Lua's weak, allweak and ephemeron lists (those with an unmarked part the phase may
 * clear) are read: a weak reference whose one slot is empty now, an ephemeron with no live
 * entry left, was cleared by this phase (the only collectable slot of each is its target, its
 * key). Lua lists a weak table with an array part at every atomic, whatever it holds, so the
 * weak references known empty are kept (weak_empty) and counted once. Finalizers, resurrections and failed allocations are the backend's own calls.
 */
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"
#include "ltable.h"

const fuzz_rare_event luab_rare_events[LUAB_RARE_COUNT] = {
#define LUAB_RARE_ROW(name, id, what) {id, what},
    LUAB_RARE_EVENTS(LUAB_RARE_ROW)
#undef LUAB_RARE_ROW
};

void luab_rare_counts(fuzz_bheap *h, uint64_t *counts) { memcpy(counts, h->rare, sizeof h->rare); }

fuzz_bheap *luab_heap_of(global_State *g) {
  if (g->frealloc != luab_allocate) return NULL;
  fuzz_bheap *h = g->ud;
  return h != NULL && !h->closing ? h : NULL;
}

static void count(fuzz_bheap *h, luab_rare e) { h->rare[e]++; }

/* ---- Steps ---------------------------------------------------------------------------------- */

enum { STEP_NONE, STEP_STOPPED, STEP_INC, STEP_MINOR, STEP_MAJOR, STEP_AFTER_BAD };

enum { STEPMUL_MAX = 255, STEPSIZE_MAX = 40 }; /* lua_backend.c's tune maps: 4V/4, 41V/256 */

luab_step_seen luab_rare_step_before(fuzz_bheap *h, global_State *g) {
  luab_step_seen s = {STEP_NONE, g->gcstate};
  (void)h;
  if (!gcrunning(g)) {
    s.kind = (g->gcstp & GCSTPUSR) ? STEP_STOPPED : STEP_NONE;
  } else if (!isdecGCmodegen(g)) {
    s.kind = STEP_INC;
  } else if (g->lastatomic != 0) {
    s.kind = STEP_AFTER_BAD;
  } else { /* genstep's test */
    lu_mem majorbase = g->GCestimate;
    lu_mem majorinc = (majorbase / 100) * getgcparam(g->genmajormul);
    s.kind = g->GCdebt > 0 && gettotalbytes(g) > majorbase + majorinc ? STEP_MAJOR : STEP_MINOR;
  }
  return s;
}

void luab_rare_step_after(fuzz_bheap *h, global_State *g, luab_step_seen seen) {
  if (seen.kind == STEP_NONE) return;
  if (seen.kind == STEP_STOPPED) {
    count(h, LUAB_RARE_STEP_STOPPED);
    return;
  }
  if (h->L != h->main) count(h, LUAB_RARE_STEP_COROUTINE);
  switch (seen.kind) {
    case STEP_INC:
      count(h, LUAB_RARE_STEP_INC);
      if (seen.gcstate != GCSpause && g->gcstate == GCSpause) count(h, LUAB_RARE_STEP_CYCLE_DONE);
      if (g->gcpause == 0) count(h, LUAB_RARE_STEP_PAUSE0);
      if (g->gcstepmul == 0) count(h, LUAB_RARE_STEP_STEPMUL0);
      if (g->gcstepmul == STEPMUL_MAX) count(h, LUAB_RARE_STEP_STEPMUL_MAX);
      if (g->gcstepsize == 0) count(h, LUAB_RARE_STEP_STEPSIZE0);
      if (g->gcstepsize == STEPSIZE_MAX) count(h, LUAB_RARE_STEP_STEPSIZE_MAX);
      break;
    case STEP_MINOR:
      count(h, LUAB_RARE_GEN_MINOR);
      if (g->genminormul == 0) count(h, LUAB_RARE_GEN_MINORMUL0);
      break;
    case STEP_MAJOR:
      count(h, LUAB_RARE_GEN_MAJOR);
      if (g->lastatomic != 0) count(h, LUAB_RARE_GEN_MAJOR_BAD);
      break;
    case STEP_AFTER_BAD:
      count(h, LUAB_RARE_GEN_AFTER_BAD);
      if (g->gckind == KGC_GEN) count(h, LUAB_RARE_GEN_RECOVERED);
      break;
  }
}

/* ---- Full collections and mode switches (the wraps of lgc.c's entry points) ----------------- */

void __real_luaC_fullgc(lua_State *L, int isemergency);
void __wrap_luaC_fullgc(lua_State *L, int isemergency);
void __wrap_luaC_fullgc(lua_State *L, int isemergency) {
  global_State *g = G(L);
  fuzz_bheap *h = luab_heap_of(g);
  if (h == NULL) {
    __real_luaC_fullgc(L, isemergency);
    return;
  }
  count(h, isemergency ? LUAB_RARE_EMERGENCY : LUAB_RARE_FULL);
  if (g->gckind == KGC_GEN) count(h, LUAB_RARE_FULL_GEN);
  if (g->gckind == KGC_INC && g->gcstate != GCSpause) count(h, LUAB_RARE_FULL_MID_CYCLE);
  int outer = h->in_full;
  h->in_full = 1;
  __real_luaC_fullgc(L, isemergency);
  h->in_full = outer;
}

void __real_luaC_changemode(lua_State *L, int newmode);
void __wrap_luaC_changemode(lua_State *L, int newmode);
void __wrap_luaC_changemode(lua_State *L, int newmode) {
  global_State *g = G(L);
  fuzz_bheap *h = luab_heap_of(g);
  if (h != NULL && newmode != g->gckind) {
    count(h, newmode == KGC_GEN ? LUAB_RARE_MODE_TO_GEN : LUAB_RARE_MODE_TO_INC);
    if (newmode == KGC_GEN && g->gcstate != GCSpause) count(h, LUAB_RARE_MODE_MID_CYCLE);
  }
  __real_luaC_changemode(L, newmode);
}

/* ---- The end of atomic: weak tables cleared -------------------------------------------------- */

static int is_kind(fuzz_bheap *h, const Table *t, luab_mt kind) {
  return t->metatable != NULL && ((const void *)t->metatable == h->mt[kind] ||
                                  (const void *)t->metatable == h->mt[luab_armed(kind)]);
}

/* No entry of the hash part holds a value (an ephemeron's key->datum entry was cleared). */
static int hash_empty(const Table *t) {
  if (isdummy(t)) return 1;
  for (size_t i = 0; i < (size_t)sizenode(t); i++) {
    if (!isempty(gval(gnode(t, i)))) return 0;
  }
  return 1;
}

static void weak_list(fuzz_bheap *h, GCObject *head, int ephemeron_list) {
  size_t n = 0;
  for (GCObject *o = head; o != NULL && o->tt == LUA_VTABLE; o = gco2t(o)->gclist) {
    if (++n > h->allocs.count) break; /* a cycle: the deep check's lua.gray-list */
    const Table *t = gco2t(o);
    uint64_t known;
    if (is_kind(h, t, LUAB_MT_WEAK) && t->array != NULL && isempty(&t->array[0]) &&
        !luab_ptrmap_get(&h->weak_empty, (uintptr_t)t, &known)) {
      count(h, LUAB_RARE_WEAK_CLEARED);
      luab_ptrmap_put(&h->weak_empty, (uintptr_t)t, 1); /* out of memory: counted again */
    }
    if (is_kind(h, t, LUAB_MT_EPHE)) {
      if (hash_empty(t)) count(h, LUAB_RARE_EPHE_CLEARED);
      if (ephemeron_list) count(h, LUAB_RARE_EPHE_UNMARKED);
    }
  }
}

void luab_rare_atomic(fuzz_bheap *h, global_State *g) {
  count(h, LUAB_RARE_CYCLE);
  weak_list(h, g->weak, 0);
  weak_list(h, g->allweak, 0);
  weak_list(h, g->ephemeron, 1);
}
