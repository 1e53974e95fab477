/* The Lua 5.4 backend: Lua 5.4.4's collector (Debian's lua5.4) driven through backend.h.
 *
 * A heap is one lua_State made by lua_newstate with the allocator of lua_alloc.c. The cells are
 * one table in the registry (cell i at integer key i + 1, FUZZ_CELL_SELF the last), so every
 * cell is a root for as long as the state lives. Blocks are tables (scanned) and full userdata
 * (raw), marked as blocks by a metatable of the backend's (lua_check.h says where identities
 * live).
 *
 * Errors. Every call into Lua that mutates the heap runs inside lua_pcall (luab_protect), its
 * arguments passed as a light userdata: an injected allocation failure unwinds to there and the
 * op reports failure with the heap consistent; any other error Lua raises is kept as a finding
 * (lua.error) for check to report, never a longjmp through the driver. Pure reads (get_ident,
 * raw words) cannot raise and run directly.
 *
 * The allocator counts the bytes of every live allocation exactly and indexes them (address ->
 * size), so live_bytes is exact, the deep check can compare it with Lua's own count
 * (gettotalbytes) and dereference only real objects, and a free of the wrong size or of no
 * allocation is a finding (lua.alloc) at the moment Lua makes it.
 *
 * Injected failures (fail_after N). Lua answers a failed allocation with an emergency full
 * collection and one retry of the same request, so the N-th allocation fails and so does its
 * retry: one allocation failure as the program sees it. Only allocations of ops that may fail
 * (alloc, weak_new, ephe_new) count, and never those made while a finalizer runs (Lua would turn
 * the failure into a warning and drop the finalizer, a loss the driver cannot model). A table is
 * two allocations (its header, its array), so the failure may leave one half built: the path
 * Lua's luaH_resize takes on a failed resize.
 *
 * The parts (lua_heap.h): this file holds the heap, the calling convention, collections,
 * tunables, the checks and the table; lua_census.c the rare events; lua_alloc.c the allocator, lua_cells.c blocks and cells,
 * lua_finalizer.c finalizers, lua_weak.c weak references and ephemerons, lua_domain.c domains.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/lua/lua_heap.h"
#include "lgc.h"
#include "lstate.h"

/* ---- Findings kept for the next check, and Lua's own hooks ---------------------------------- */

/* A finding made outside check goes to the driver at once when it listens (events.finding: a
 * fuzz target then stops before the collector's next step reads what the finding is about),
 * else it is kept for the next check. */
static void keep_finding(fuzz_bheap *h, const fuzz_finding *f) {
  if (h->ready && h->cfg.events.finding != NULL) {
    h->reported++;
    h->cfg.events.finding(h->cfg.events.user, f);
    return;
  }
  if (h->npending < PENDING_MAX) h->pending[h->npending] = *f;
  h->npending++;
}

void luab_pend(fuzz_bheap *h, const char *what, const char *fmt, ...) {
  fuzz_finding f;
  va_list ap;
  va_start(ap, fmt);
  fuzz_finding_set(&f, "lua", what, fmt, ap);
  va_end(ap);
  keep_finding(h, &f);
}

static int on_panic(lua_State *L) {
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(no message)";
  fprintf(stderr, "lua backend: unprotected error in Lua: %s\n", msg);
  fprintf(stderr,
          "GCFUZZ-VERDICT {\"kind\": \"lua.panic\", \"pass\": \"lua\", \"point\": \"op\", "
          "\"op\": -1, \"cycle\": -1}\n");
  fflush(stderr);
  abort();
}

/* Lua warns only about errors in __gc metamethods (ours raise none) and control messages. */
static void on_warning(void *ud, const char *msg, int tocont) {
  fuzz_bheap *h = ud;
  if (!h->warning_open && msg[0] != '@') luab_pend(h, "warning", "Lua warned: %s...", msg);
  h->warning_open = tocont;
}

/* ---- Calling into Lua ----------------------------------------------------------------------- */

int luab_protect(fuzz_bheap *h, lua_CFunction fn, const char *name, luab_args *args, int failable) {
  lua_State *L = h->L;
  int outer_failable = h->failable, outer_fired = h->fail_fired;
  h->failable = 0;
  args->failable = failable;
  h->fail_fired = 0;
  h->op_depth++;
  args->h = h;
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, args);
  int status = lua_pcall(L, 1, 0, 0);
  if (status != LUA_OK) {
    if (!(status == LUA_ERRMEM && h->fail_fired)) {
      const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(no message)";
      luab_pend(h, "error", "%s raised status %d: %s", name, status, msg);
    }
    lua_pop(L, 1);
  }
  h->failable = outer_failable;
  h->fail_fired = outer_fired;
  h->op_depth--;
  return status == LUA_OK;
}

luab_view luab_view_of(fuzz_bheap *h) {
  luab_view v = {.L = h->L,
                 .allocs = &h->allocs,
                 .live_bytes = h->live_bytes,
                 .cells = h->cells_table,
                 .in_finalizer = h->fin_depth > 0,
                 .mid_op = h->op_depth > 0,
                 .domains_table = h->domains_table,
                 .running = h->running,
                 .ended = &h->ended,
                 .cycles = h->cycles};
  memcpy(v.mt, h->mt, sizeof v.mt);
  memcpy(v.domains, h->domains, sizeof v.domains);
  return v;
}

luab_mt luab_top_kind(fuzz_bheap *h) {
  const GCObject *o = luab_top_object(h->L);
  const void *mt;
  if (o == NULL) return LUAB_MT_COUNT;
  if (o->tt == LUA_VTABLE)
    mt = gco2t(o)->metatable;
  else if (o->tt == LUA_VUSERDATA)
    mt = gco2u(o)->metatable;
  else
    return LUAB_MT_COUNT;
  for (int i = 0; mt != NULL && i < LUAB_MT_COUNT; i++) {
    if (h->mt[i] == mt) return (luab_mt)i; /* luab_block_mt, without building a view */
  }
  return LUAB_MT_COUNT;
}

/* ---- Collections and tunables --------------------------------------------------------------- */

static void check_between_cycles(fuzz_bheap *h);

enum { FULL_CYCLES_MAX = 8 };

static size_t list_length(const GCObject *o) {
  size_t n = 0;
  for (; o != NULL; o = o->next) n++;
  return n;
}

static int op_collect(lua_State *L) {
  luab_args *a = luab_args_of(L);
  switch ((fuzz_collect_kind)a->a) {
    case FUZZ_COLLECT_SLICE: lua_gc(L, LUA_GCSTEP, (int)a->b); break;
    case FUZZ_COLLECT_MAJOR:
      lua_gc(L, LUA_GCCOLLECT);
      a->h->cycles++;
      break;
    case FUZZ_COLLECT_FULL: {
      /* A block finalized (or merely separated, after fin_clear) in a cycle is freed by the next
       * one: the second cycle gives back what the first one's finalizers left. And a finalizer
       * body may arm a block it then drops, or arm and clear one (another block's, whose own
       * finalizer ran already): only a later cycle finds it. So cycles go on while the last one
       * separated a block (finobj lost more than the fin_sets gave it) or ran a finalizer, up to
       * FULL_CYCLES_MAX (bodies that keep re-arming each other never settle). */
      for (int n = 0; n < FULL_CYCLES_MAX; n++) {
        uint64_t ran = a->h->fin_runs, moved = a->h->fin_moves;
        size_t finobj = list_length(G(L)->finobj);
        if (n > 0) check_between_cycles(a->h);
        lua_gc(L, LUA_GCCOLLECT);
        a->h->cycles++;
        int separated = finobj + (size_t)(a->h->fin_moves - moved) > list_length(G(L)->finobj);
        if (n > 0 && a->h->fin_runs == ran && !separated) break;
      }
      break;
    }
    case FUZZ_COLLECT_START:
      /* From the pause, start a cycle and stop with its roots marked gray; mid-cycle (or in
       * generational mode), one basic step. */
      if (G(L)->gckind == KGC_INC && G(L)->gcstate == GCSpause)
        luaC_runtilstate(L, bitmask(GCSpropagate));
      else
        lua_gc(L, LUA_GCSTEP, 0);
      break;
  }
  return 0;
}

static void heap_collect(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget) {
  if (h->fin_depth > 0) return; /* Lua refuses to collect inside a finalizer (GCSTPGC) */
  luab_args a = {.a = kind, .b = budget};
  luab_protect(h, op_collect, "collect", &a, 0);
}

enum {
  TUNE_MODE,
  TUNE_PAUSE,
  TUNE_STEPMUL,
  TUNE_STEPSIZE,
  TUNE_MINORMUL,
  TUNE_MAJORMUL,
  TUNE_STOP,
  TUNE_COUNT
};

static const fuzz_tunable tunables[TUNE_COUNT] = {
    [TUNE_MODE] = {"mode", "V even: incremental (LUA_GCINC); odd: generational (LUA_GCGEN)"},
    [TUNE_PAUSE] = {"pause", "incremental pause, 4V percent (0..1020; Lua's default 200)"},
    [TUNE_STEPMUL] = {"stepmul", "incremental step multiplier, 4V (0..1020; default 100)"},
    [TUNE_STEPSIZE] = {"stepsize",
                       "log2 of the incremental step, 41V/256 (0..40; default 13: 8 KB)"},
    [TUNE_MINORMUL] = {"minormul", "generational minor multiplier, V percent (default 20)"},
    [TUNE_MAJORMUL] = {"majormul", "generational major multiplier, 4V percent (default 100)"},
    [TUNE_STOP] = {"stop", "V odd: LUA_GCSTOP (no automatic steps); even: LUA_GCRESTART"},
};

static int op_tune(lua_State *L) {
  luab_args *a = luab_args_of(L);
  global_State *g = G(L);
  int v = (int)a->b;
  switch (a->a) {
    case TUNE_MODE:
      if (v & 1)
        lua_gc(L, LUA_GCGEN, 0, 0); /* 0: keep the parameters */
      else
        lua_gc(L, LUA_GCINC, 0, 0, 0);
      break;
    /* LUA_GCINC and LUA_GCGEN also switch modes and take 0 as "unchanged"; the old single-
     * parameter options reach 0 and keep the mode, and the rest is written as they would. */
    case TUNE_PAUSE: lua_gc(L, LUA_GCSETPAUSE, 4 * v); break;
    case TUNE_STEPMUL: lua_gc(L, LUA_GCSETSTEPMUL, 4 * v); break;
    /* Capped at 2^40 bytes: past ~2^56 incstep's work arithmetic overflows (signed). */
    case TUNE_STEPSIZE: g->gcstepsize = (lu_byte)(v * 41 / 256); break;
    case TUNE_MINORMUL: g->genminormul = (lu_byte)v; break;
    case TUNE_MAJORMUL: setgcparam(g->genmajormul, 4 * v); break;
    case TUNE_STOP: lua_gc(L, (v & 1) ? LUA_GCSTOP : LUA_GCRESTART); break;
  }
  return 0;
}

static void heap_tune(fuzz_bheap *h, unsigned param, unsigned value) {
  if (param >= TUNE_COUNT || h->fin_depth > 0) return;
  luab_args a = {.a = param, .b = value & 0xff};
  luab_protect(h, op_tune, "tune", &a, 0);
}

/* ---- Introspection -------------------------------------------------------------------------- */

static size_t heap_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                        void *user) {
  luab_view v = luab_view_of(h);
  return luab_walk(&v, visit, user);
}

static size_t heap_live_bytes(fuzz_bheap *h) { return h->live_bytes; }

/* A check inside a collection (the deep check, or `atomic`: the check of the weak tables at
 * the end of an atomic phase), its findings reported at once or kept (keep_finding). A block one
 * cycle freed while something still points to it is lua.dangling here, before the next cycle's
 * traversal reads the freed memory (where only a sanitizer would see it). At most PENDING_MAX
 * findings between two checks of the driver's: a broken heap is not reported again after every
 * step. */
static void check_inside(fuzz_bheap *h, int atomic) {
  size_t room = PENDING_MAX -
                (h->npending + h->reported < PENDING_MAX ? h->npending + h->reported : PENDING_MAX);
  if (room == 0) return;
  fuzz_finding found[PENDING_MAX];
  luab_view v = luab_view_of(h);
  v.mid_op = 1; /* inside the collector: whatever called it is mid-way */
  size_t n = atomic ? luab_check_atomic(&v, found, room) : luab_check(&v, found, room);
  for (size_t i = 0; i < n && i < room; i++) keep_finding(h, &found[i]);
}

/* The deep check between the two cycles of a full collection. */
static void check_between_cycles(fuzz_bheap *h) { check_inside(h, 0); }

/* The collector's own steps (an allocation that pays its debt) with the deep check after each:
 * the linker sends Lua's calls of luaC_step here (BUILD: --wrap). The state's allocator data is
 * the heap. Inside a finalizer, or while the state closes, nothing is checked. */
void __real_luaC_step(lua_State *L);
void __wrap_luaC_step(lua_State *L);
void __wrap_luaC_step(lua_State *L) {
  fuzz_bheap *counted = luab_heap_of(G(L));
  luab_step_seen seen =
      counted != NULL ? luab_rare_step_before(counted, G(L)) : (luab_step_seen){0};
  __real_luaC_step(L);
  if (counted != NULL) luab_rare_step_after(counted, G(L), seen);
  void *ud = NULL;
  lua_getallocf(L, &ud);
  fuzz_bheap *h = ud;
  if (h != NULL && h->domains_table != NULL && G(L) == G(h->main) && !h->closing &&
      h->fin_depth == 0) {
    check_between_cycles(h);
  }
}

/* The end of every atomic phase (the linker sends lgc.c's one call of luaS_clearcache here:
 * BUILD, --wrap): marking is complete and nothing is freed yet, so a datum of a weak table left
 * unmarked (lua.mark-incomplete) is seen before the sweep frees it and a later traversal reads
 * the freed memory. The weak tables Lua keeps on its gray lists only (O(their size): the whole
 * deep check here cost the lua target a quarter of its executions); incremental cycles only. */
void __real_luaS_clearcache(global_State *g);
void __wrap_luaS_clearcache(global_State *g);
void __wrap_luaS_clearcache(global_State *g) {
  __real_luaS_clearcache(g);
  if (g->frealloc != luab_allocate) return;
  fuzz_bheap *h = g->ud;
  if (h != NULL && !h->closing) luab_rare_atomic(h, g);
  if (h != NULL && h->domains_table != NULL && !h->closing && h->fin_depth == 0 &&
      g->gckind == KGC_INC)
    check_inside(h, 1);
}

/* The findings kept since the last check first, then the deep check's. */
static size_t heap_check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  size_t n = h->npending, kept = n < PENDING_MAX ? n : PENDING_MAX;
  for (size_t i = 0; i < kept && i < max; i++) out[i] = h->pending[i];
  h->npending = 0;
  h->reported = 0;
  luab_view v = luab_view_of(h);
  size_t used = n < max ? n : max;
  return n + luab_check(&v, out + used, max - used);
}

/* ---- The heap ------------------------------------------------------------------------------- */

static int op_setup(lua_State *L) {
  luab_args *a = luab_args_of(L);
  fuzz_bheap *h = a->h;
  lua_createtable(L, (int)h->cells + 1, 0);
  h->cells_table = lua_topointer(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, REG_CELLS);
  lua_createtable(L, LUAB_DOMAINS, 0); /* sized now: anchoring never allocates */
  h->domains_table = lua_topointer(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  for (int i = 0; i < LUAB_MT_COUNT; i++) {
    lua_createtable(L, 0, 2);
    if (i == (int)luab_armed((luab_mt)i)) {
      lua_pushcfunction(L, luab_run_finalizer);
      lua_setfield(L, -2, "__gc");
    }
    if (luab_disarmed((luab_mt)i) == LUAB_MT_WEAK) {
      lua_pushliteral(L, "v");
      lua_setfield(L, -2, "__mode");
    } else if (luab_disarmed((luab_mt)i) == LUAB_MT_EPHE) {
      lua_pushliteral(L, "k");
      lua_setfield(L, -2, "__mode");
    }
    h->mt[i] = lua_topointer(L, -1);
    lua_rawseti(L, LUA_REGISTRYINDEX, REG_MT + i);
  }
  if (a->result) lua_gc(L, LUA_GCGEN, 0, 0);
  return 0;
}

static void heap_destroy(fuzz_bheap *h);

static fuzz_bheap *heap_create(const fuzz_backend_config *cfg) {
  int generational = 0;
  if (cfg->params != NULL && cfg->params[0] != '\0') {
    if (strcmp(cfg->params, "generational") == 0) {
      generational = 1;
    } else if (strcmp(cfg->params, "incremental") != 0) {
      fprintf(cfg->out, "lua: unknown parameters '%s' (incremental or generational)\n",
              cfg->params);
      return NULL;
    }
  }
  fuzz_bheap *h = calloc(1, sizeof *h);
  if (h == NULL) {
    fprintf(cfg->out, "lua: out of memory\n");
    return NULL;
  }
  h->cfg = *cfg;
  h->cells = cfg->cells;
  lua_State *L = lua_newstate(luab_allocate, h);
  if (L == NULL) {
    fprintf(cfg->out, "lua: lua_newstate failed\n");
    luab_ptrmap_free(&h->allocs);
    free(h);
    return NULL;
  }
  h->L = h->main = h->domains[0] = L;
  lua_atpanic(L, on_panic);
  lua_setwarnf(L, on_warning, h);
  luab_args a = {.result = generational};
  if (!luab_protect(h, op_setup, "setup", &a, 0)) {
    fprintf(cfg->out, "lua: setting up the heap failed: %s\n", h->pending[0].message);
    heap_destroy(h);
    return NULL;
  }
  h->ready = 1;
  return h;
}

static void heap_destroy(fuzz_bheap *h) {
  h->closing = 1;
  lua_close(h->main);
  if (h->live_bytes != 0 || h->allocs.count != 0)
    fprintf(h->cfg.out, "lua: %zu bytes in %zu allocations still live after lua_close\n",
            h->live_bytes, h->allocs.count);
  luab_ptrmap_free(&h->allocs);
  luab_ptrmap_free(&h->tokens);
  luab_ptrmap_free(&h->ended);
  luab_ptrmap_free(&h->weak_empty);
  free(h);
}

lua_State *luab_state(fuzz_bheap *h) { return h->L; }

luab_view luab_heap_view(fuzz_bheap *h) { return luab_view_of(h); }

lua_State *luab_domain_state(fuzz_bheap *h, unsigned d) {
  return d < LUAB_DOMAINS ? h->domains[d] : NULL;
}

void *luab_cell_object(fuzz_bheap *h, size_t cell) {
  luab_push_cell(h->L, cell);
  void *o = (void *)luab_top_object(h->L);
  lua_pop(h->L, 2);
  return o;
}

/* Leak bound, measured (lua_backend_test, leak_bound_holds): a fresh heap holds 6,207 bytes
 * with no cells (the state, its stack and string table, the registry, the tag-method names, the
 * six metatables, the domains' anchor table) and 16 bytes more a cell; three coroutines 928
 * bytes each (a finalizer body's frames may double a stack until a cycle shrinks it: 2 KB
 * each); the most a block costs against the model's 8 (fields + 2) bytes is an ephemeron's 112
 * for 16 (a table, an array of 2, one hash node): 7 times, so 6 times more. The slack covers a
 * fresh heap of 1,024 cells and three coroutines, plus 4 KB. */
const fuzz_backend fuzz_backend_lua = {
    .name = "lua",
    .what =
        "Lua 5.4.4 (Debian's lua5.4): incremental and generational collection of tables "
        "and userdata",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_INCREMENTAL | FUZZ_CAP_FINALIZERS |
            FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_WEAK | FUZZ_CAP_EPHEMERON |
            FUZZ_CAP_WEAK_SET | FUZZ_CAP_PRECISE | FUZZ_CAP_WALK | FUZZ_CAP_FAIL | FUZZ_CAP_TUNE |
            FUZZ_CAP_DEEP_CHECK | FUZZ_CAP_DOMAINS,
    .tunables = tunables,
    .tunable_count = TUNE_COUNT,
    .leak_slack_factor = 6.0,
    .leak_slack_bytes = 6207 + 1024 * 16 + 3 * 2048 + 4096,
    .create = heap_create,
    .destroy = heap_destroy,
    .alloc = luab_block_alloc,
    .set_ident = luab_ident_set,
    .get_ident = luab_ident_get,
    .store = luab_field_store,
    .store_int = luab_field_store_int,
    .load = luab_field_load,
    .raw_write = luab_word_write,
    .raw_read = luab_word_read,
    .copy = luab_cell_copy,
    .clear = luab_cell_clear,
    .collect = heap_collect,
    .run_finalizers = NULL,
    .tune = heap_tune,
    .fail_after = luab_fail_after,
    .fin_set = luab_fin_set,
    .fin_clear = luab_fin_clear,
    .weak_new = luab_weak_new,
    .weak_get = luab_weak_get,
    .ephe_new = luab_ephe_new,
    .ephe_get = luab_ephe_get,
    .weak_set = luab_weak_set,
    .ephe_set = luab_ephe_set,
    .range_add = NULL,
    .address = NULL,
    .domain_spawn = luab_domain_spawn,
    .domain_on = luab_domain_on,
    .domain_end = luab_domain_end,
    .walk = heap_walk,
    .live_bytes = heap_live_bytes,
    .check = heap_check,
    .rare_events = luab_rare_events,
    .rare_event_count = LUAB_RARE_COUNT,
    .rare_counts = luab_rare_counts,
};
