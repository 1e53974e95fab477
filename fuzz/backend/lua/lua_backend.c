/* The Lua 5.4 backend: Lua 5.4.4's collector (Debian's lua5.4) driven through backend.h.
 *
 * A heap is one lua_State made by lua_newstate with the allocator below. The cells are one table
 * in the registry (cell i at integer key i + 1, FUZZ_CELL_SELF the last), so every cell is a
 * root for as long as the state lives. Blocks are tables (scanned) and full userdata (raw),
 * marked as blocks by a metatable of the backend's (lua_check.h says where identities live).
 *
 * Errors. Every call into Lua that mutates the heap runs inside lua_pcall (protect below), its
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
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/lua/lua_check.h"
#include "lgc.h"
#include "lstate.h"
#include "lua.h"

/* Registry slots past Lua's own (LUA_RIDX_LAST): the cells table, the domains' anchor table,
 * then the marker metatables. */
enum {
  REG_CELLS = LUA_RIDX_LAST + 1,
  REG_DOMAINS = REG_CELLS + 1,
  REG_MT = REG_DOMAINS + 1, /* REG_MT + luab_mt */
};

enum { PENDING_MAX = 16, WORD_BYTES = sizeof(uint64_t), IDENT_WORDS = 2 };

struct fuzz_bheap {
  lua_State *L;     /* the running domain's thread: every call into Lua runs on it */
  lua_State *main;  /* domain 0: the state's main thread */
  unsigned running; /* the running domain */
  /* INV-LUAB-3: domains[d] (d > 0) is a coroutine between spawn and end, and then the anchor
   * table's slot d + 1 holds it; otherwise both are empty. Between ops every domain's stack is
   * empty (only the base frame's function slot), so no block is kept by a stack the model does
   * not know. */
  lua_State *domains[LUAB_DOMAINS];
  const void *domains_table;
  luab_ptrmap ended; /* a coroutine domain_end finished (its allocation) -> `cycles` then */
  uint64_t cycles;   /* whole cycles (LUA_GCCOLLECT) completed */
  int op_depth;      /* protected calls running (a step's check is then mid-op) */
  fuzz_backend_config cfg;
  size_t cells;       /* ordinary cells; the cells table has cells + 1 slots (SELF last) */
  luab_ptrmap allocs; /* INV-LUAB-2: every live allocation Lua holds -> its bytes */
  size_t live_bytes;  /* the sum of allocs' sizes */
  luab_ptrmap tokens; /* a block armed by fin_set (its GCObject address) -> its token */
  const void *mt[LUAB_MT_COUNT];
  const void *cells_table;
  unsigned fail_countdown; /* allocations of failable ops until the injected one; 0: none */
  int failable;            /* the running op may fail */
  int fail_fired;          /* an injected failure hit the running op */
  int retry_armed;         /* the next request, if the same, is Lua's retry of the failed one */
  const void *retry_ptr;
  size_t retry_osize, retry_nsize;
  int fin_depth;                     /* our __gc is running (Lua holds GCSTPGC) */
  int closing;                       /* lua_close runs: finalizers must not call the driver */
  int warning_open;                  /* a multi-part Lua warning is being reported */
  fuzz_finding pending[PENDING_MAX]; /* findings made outside check, reported by the next check */
  size_t npending;                   /* may exceed PENDING_MAX: the excess is counted, not kept */
};

static void pend(fuzz_bheap *h, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pend(fuzz_bheap *h, const char *what, const char *fmt, ...) {
  if (h->npending < PENDING_MAX) {
    fuzz_finding *f = &h->pending[h->npending];
    va_list ap;
    va_start(ap, fmt);
    fuzz_finding_set(f, "lua", what, fmt, ap);
    va_end(ap);
  }
  h->npending++;
}

/* ---- The allocator -------------------------------------------------------------------------- */

static int inject_failure(fuzz_bheap *h, const void *ptr, size_t osize, size_t nsize) {
  if (h->retry_armed) {
    h->retry_armed = 0;
    if (ptr == h->retry_ptr && osize == h->retry_osize && nsize == h->retry_nsize) return 1;
  }
  if (!h->failable || h->fail_countdown == 0 || h->L == NULL || (G(h->L)->gcstp & GCSTPGC))
    return 0;
  if (--h->fail_countdown > 0) return 0;
  h->fail_fired = 1;
  h->retry_armed = 1;
  h->retry_ptr = ptr;
  h->retry_osize = osize;
  h->retry_nsize = nsize;
  return 1;
}

static void *allocate(void *ud, void *ptr, size_t osize, size_t nsize) {
  fuzz_bheap *h = ud;
  size_t old = 0;
  if (ptr != NULL) {
    uint64_t have;
    if (!luab_ptrmap_get(&h->allocs, (uintptr_t)ptr, &have)) {
      pend(h, "alloc", "Lua %s %p (%zu bytes, it says), which is no live allocation",
           nsize ? "reallocates" : "frees", ptr, osize);
      return NULL;
    }
    if (have != osize)
      pend(h, "alloc", "Lua %s %p as %zu bytes; it has %zu", nsize ? "reallocates" : "frees", ptr,
           osize, (size_t)have);
    old = (size_t)have;
  }
  if (nsize == 0) {
    if (ptr != NULL) {
      luab_ptrmap_del(&h->allocs, (uintptr_t)ptr);
      if (h->ended.count > 0) luab_ptrmap_del(&h->ended, (uintptr_t)ptr); /* a coroutine freed */
      h->live_bytes -= old;
      free(ptr);
    }
    return NULL;
  }
  if (nsize > old && inject_failure(h, ptr, osize, nsize)) return NULL;
  void *p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  if (ptr != NULL) luab_ptrmap_del(&h->allocs, (uintptr_t)ptr);
  if (!luab_ptrmap_put(&h->allocs, (uintptr_t)p, nsize)) {
    fprintf(stderr, "lua backend: out of memory for the allocation index\n");
    abort();
  }
  h->live_bytes = h->live_bytes - old + nsize;
  return p;
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
  if (!h->warning_open && msg[0] != '@') pend(h, "warning", "Lua warned: %s...", msg);
  h->warning_open = tocont;
}

/* ---- Calling into Lua ----------------------------------------------------------------------- */

typedef struct op_args {
  fuzz_bheap *h;
  size_t a, b, c;
  uint64_t u, w;
  int64_t value;
  int is_int;   /* store: the value, not the block in cell b */
  int failable; /* the op may fail: arm_failures counts its allocations from there on */
  int result;   /* what the op answers */
} op_args;

static const char *op_name(lua_CFunction fn);

/* Run fn(args) in protected mode. Returns 1 when it returned, 0 when it raised. An injected
 * failure counts only from the op's arm_failures on, never in lua_pcall's own allocations (a
 * coroutine's first call allocates its CallInfo), so a failed op has always emptied its dst. */
static int protect(fuzz_bheap *h, lua_CFunction fn, op_args *args, int failable) {
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
      pend(h, "error", "%s raised status %d: %s", op_name(fn), status, msg);
    }
    lua_pop(L, 1);
  }
  h->failable = outer_failable;
  h->fail_fired = outer_fired;
  h->op_depth--;
  return status == LUA_OK;
}

static op_args *args_of(lua_State *L) { return lua_touserdata(L, 1); }

/* From here the op's allocations may fail (its dst is empty by now). */
static void arm_failures(op_args *a) { a->h->failable = a->failable; }

/* The collectable object on top of the stack, or NULL. */
static const GCObject *top_object(lua_State *L) {
  const TValue *o = s2v(L->top - 1);
  return iscollectable(o) ? gcvalue(o) : NULL;
}

static luab_view view_of(fuzz_bheap *h) {
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

/* The marker of the value on top of the stack (LUAB_MT_COUNT: no block). */
static luab_mt top_kind(fuzz_bheap *h) {
  const GCObject *o = top_object(h->L);
  if (o == NULL) return LUAB_MT_COUNT;
  luab_view v = view_of(h);
  return luab_block_mt(&v, o);
}

static luab_mt armed(luab_mt kind) { return (luab_mt)(kind | 1); }
static luab_mt disarmed(luab_mt kind) { return (luab_mt)(kind & ~1); }

/* Pushes the cells table, then the value of cell i; returns the cells table's index. */
static int push_cell(lua_State *L, size_t cell) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_CELLS);
  lua_rawgeti(L, -1, (lua_Integer)cell + 1);
  return lua_absindex(L, -2);
}

static void set_cell_from_top(lua_State *L, int cells, size_t cell) {
  lua_rawseti(L, cells, (lua_Integer)cell + 1);
}

static void empty_cell(lua_State *L, int cells, size_t cell) {
  lua_pushnil(L);
  lua_rawseti(L, cells, (lua_Integer)cell + 1);
}

/* The array size of the scanned block on top of the stack, or 0 when it is none. */
static unsigned top_scan_slots(fuzz_bheap *h) {
  luab_mt kind = top_kind(h);
  if (lua_type(h->L, -1) != LUA_TTABLE || disarmed(kind) != LUAB_MT_BLOCK) return 0;
  return luab_table_asize(top_object(h->L));
}

/* ---- Blocks and cells ----------------------------------------------------------------------- */

static int op_alloc(lua_State *L) {
  op_args *a = args_of(L);
  size_t dst = a->a, fields = a->c;
  int cells = push_cell(L, dst);
  empty_cell(L, cells, dst); /* empty on failure */
  arm_failures(a);
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
  set_cell_from_top(L, cells, dst);
  a->result = 1;
  return 0;
}

static int block_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  op_args a = {.a = dst, .b = shape, .c = fields};
  return protect(h, op_alloc, &a, 1) && a.result;
}

static int op_set_ident(lua_State *L) {
  op_args *a = args_of(L);
  push_cell(L, a->a);
  if (lua_type(L, -1) == LUA_TTABLE) {
    unsigned n = luab_table_asize(top_object(L));
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

static void ident_set(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check) {
  op_args a = {.a = cell, .u = id, .w = check};
  protect(h, op_set_ident, &a, 0);
}

static int ident_get(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check) {
  lua_State *L = h->L;
  push_cell(L, cell);
  const GCObject *o = top_object(L);
  int full = o != NULL;
  if (full && !luab_block_ident(o, id, check)) *id = *check = 0; /* reads back as no model's */
  lua_pop(L, 2);
  return full;
}

static int op_store(lua_State *L) {
  op_args *a = args_of(L);
  int cells = push_cell(L, a->a);
  unsigned slots = top_scan_slots(a->h);
  if (slots < IDENT_WORDS || a->c >= slots - IDENT_WORDS) return 0;
  if (a->is_int)
    lua_pushinteger(L, a->value);
  else
    lua_rawgeti(L, cells, (lua_Integer)a->b + 1);
  lua_rawseti(L, -2, (lua_Integer)a->c + 1); /* raw set: luaC_barrierback */
  return 0;
}

static void field_store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  op_args a = {.a = obj, .b = src, .c = field};
  protect(h, op_store, &a, 0);
}

static void field_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  op_args a = {.a = obj, .c = field, .is_int = 1, .value = value};
  protect(h, op_store, &a, 0);
}

/* Puts the value on top into cell dst when it is a block (returns 1), else empties dst. */
static int take_block(fuzz_bheap *h, int cells, size_t dst) {
  if (top_kind(h) != LUAB_MT_COUNT) {
    set_cell_from_top(h->L, cells, dst);
    return 1;
  }
  lua_pop(h->L, 1);
  empty_cell(h->L, cells, dst);
  return 0;
}

/* Loads, copies and clears of cells need no protection: they read tables and write the cells
 * table's array slots, which exist from the start (lua_createtable sized them), so nothing
 * allocates and nothing can raise. Unprotected, a load costs a few table reads instead of a
 * lua_pcall (the oracle loads every field of the reachable graph after each major collection). */
static void load_field(fuzz_bheap *h, op_args *a) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  int cells = push_cell(L, a->b);
  unsigned slots = top_scan_slots(h);
  a->result = FUZZ_FIELD_EMPTY;
  if (slots < IDENT_WORDS || a->c >= slots - IDENT_WORDS) {
    empty_cell(L, cells, a->a);
  } else {
    lua_rawgeti(L, -1, (lua_Integer)a->c + 1);
    if (lua_isinteger(L, -1)) {
      a->result = FUZZ_FIELD_INT;
      a->value = lua_tointeger(L, -1);
      lua_pop(L, 1);
      empty_cell(L, cells, a->a);
    } else if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      empty_cell(L, cells, a->a);
    } else {
      a->result = take_block(h, cells, a->a) ? FUZZ_FIELD_BLOCK : FUZZ_FIELD_OTHER;
    }
  }
  lua_settop(L, top);
}

static fuzz_field_kind field_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field,
                                  int64_t *value) {
  op_args a = {.h = h, .a = dst, .b = obj, .c = field};
  load_field(h, &a);
  if (a.result == FUZZ_FIELD_INT) *value = a.value;
  return (fuzz_field_kind)a.result;
}

/* Raw words: plain memory of the userdata, no call that can raise. */
static uint64_t *raw_word(fuzz_bheap *h, size_t obj, size_t word) {
  lua_State *L = h->L;
  push_cell(L, obj);
  uint64_t *p = NULL;
  size_t at = (IDENT_WORDS + word) * WORD_BYTES;
  if (lua_type(L, -1) == LUA_TUSERDATA && lua_rawlen(L, -1) >= at + WORD_BYTES)
    p = (uint64_t *)((char *)lua_touserdata(L, -1) + at);
  lua_pop(L, 2);
  return p;
}

static void word_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  uint64_t *p = raw_word(h, obj, word);
  if (p != NULL) memcpy(p, &value, sizeof value);
}

static uint64_t word_read(fuzz_bheap *h, size_t obj, size_t word) {
  uint64_t value = 0, *p = raw_word(h, obj, word);
  if (p != NULL) memcpy(&value, p, sizeof value);
  return value;
}

static void cell_copy(fuzz_bheap *h, size_t dst, size_t src) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  int cells = push_cell(L, src);
  set_cell_from_top(L, cells, dst);
  lua_settop(L, top);
}

static void cell_clear(fuzz_bheap *h, size_t cell) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_CELLS);
  empty_cell(L, lua_absindex(L, -1), cell);
  lua_settop(L, top);
}

/* ---- Collections and tunables --------------------------------------------------------------- */

static void check_between_cycles(fuzz_bheap *h);

static int op_collect(lua_State *L) {
  op_args *a = args_of(L);
  switch ((fuzz_collect_kind)a->a) {
    case FUZZ_COLLECT_SLICE: lua_gc(L, LUA_GCSTEP, (int)a->b); break;
    case FUZZ_COLLECT_MAJOR:
      lua_gc(L, LUA_GCCOLLECT);
      a->h->cycles++;
      break;
    case FUZZ_COLLECT_FULL:
      /* A block finalized (or merely separated, after fin_clear) in a cycle is freed by the next
       * one: the second cycle gives back what the first one's finalizers left. */
      lua_gc(L, LUA_GCCOLLECT);
      a->h->cycles++;
      check_between_cycles(a->h);
      lua_gc(L, LUA_GCCOLLECT);
      a->h->cycles++;
      break;
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
  op_args a = {.a = kind, .b = budget};
  protect(h, op_collect, &a, 0);
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
  op_args *a = args_of(L);
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
  op_args a = {.a = param, .b = value & 0xff};
  protect(h, op_tune, &a, 0);
}

static void heap_fail_after(fuzz_bheap *h, unsigned n) {
  h->fail_countdown = n;
  h->retry_armed = 0;
}

/* ---- Finalizers ----------------------------------------------------------------------------- */

/* The __gc of every armed block. It disarms the block's marker (so a _FIN marker always means
 * "armed and not yet run": lua.finalizer-lost), shows the block in the SELF cell for the
 * driver's callback, and empties the cell after. */
static int run_finalizer(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  fuzz_bheap *h = ud;
  if (h->closing) return 0; /* destroy: finalizers still set do not run */
  lua_settop(L, 1);
  const GCObject *o = top_object(L);
  uint64_t token;
  if (o == NULL || !luab_ptrmap_get(&h->tokens, (uintptr_t)o, &token)) {
    pend(h, "finalizer-unknown", "__gc ran on %p, which no fin_set armed", (const void *)o);
    return 0;
  }
  luab_ptrmap_del(&h->tokens, (uintptr_t)o);
  luab_mt kind = top_kind(h);
  if (kind != LUAB_MT_COUNT) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + disarmed(kind));
    lua_setmetatable(L, 1);
  }
  size_t self = h->cells;
  int cells = push_cell(L, self);
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  set_cell_from_top(L, cells, self);
  /* The body's calls run on the thread Lua runs the finalizer on (the domain whose step or
   * collection called it), on top of the __gc frame. */
  lua_State *outer = h->L;
  h->L = L;
  h->fin_depth++;
  if (h->cfg.events.finalize != NULL) h->cfg.events.finalize(h->cfg.events.user, token);
  h->fin_depth--;
  h->L = outer;
  empty_cell(L, cells, self);
  return 0;
}

static int op_fin_set(lua_State *L) {
  op_args *a = args_of(L);
  push_cell(L, a->a);
  luab_mt kind = top_kind(a->h);
  if (kind == LUAB_MT_COUNT) return 0;
  if (!luab_ptrmap_put(&a->h->tokens, (uintptr_t)top_object(L), a->u)) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + armed(kind));
  lua_setmetatable(L, -2); /* __gc present: luaC_checkfinalizer moves it to finobj */
  a->result = 1;
  return 0;
}

static int fin_set(fuzz_bheap *h, size_t cell, uint64_t token) {
  op_args a = {.a = cell, .u = token};
  return protect(h, op_fin_set, &a, 0) && a.result;
}

static int op_fin_clear(lua_State *L) {
  op_args *a = args_of(L);
  push_cell(L, a->a);
  luab_mt kind = top_kind(a->h);
  if (kind == LUAB_MT_COUNT) return 0;
  a->result = kind == armed(kind);
  luab_ptrmap_del(&a->h->tokens, (uintptr_t)top_object(L));
  if (a->result) {
    /* No __gc in the new metatable: Lua still separates the block once, then calls nothing. */
    lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + disarmed(kind));
    lua_setmetatable(L, -2);
  }
  return 0;
}

static int fin_clear(fuzz_bheap *h, size_t cell) {
  op_args a = {.a = cell};
  return protect(h, op_fin_clear, &a, 0) && a.result;
}

/* ---- Weak references and ephemerons --------------------------------------------------------- */

static int op_weak_new(lua_State *L) {
  op_args *a = args_of(L);
  int cells = push_cell(L, a->b); /* the target */
  empty_cell(L, cells, a->a);
  arm_failures(a);
  lua_createtable(L, 1 + IDENT_WORDS, 0);
  lua_rotate(L, -2, 1); /* table, target */
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 2);
  lua_pushinteger(L, 0);
  lua_rawseti(L, -2, 3);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_MT + LUAB_MT_WEAK);
  lua_setmetatable(L, -2);
  set_cell_from_top(L, cells, a->a);
  a->result = 1;
  return 0;
}

static int weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  op_args a = {.a = dst, .b = target};
  return protect(h, op_weak_new, &a, 1) && a.result;
}

static int op_weak_get(lua_State *L) {
  op_args *a = args_of(L);
  int cells = push_cell(L, a->b);
  if (lua_type(L, -1) != LUA_TTABLE || disarmed(top_kind(a->h)) != LUAB_MT_WEAK) {
    empty_cell(L, cells, a->a);
    return 0;
  }
  lua_rawgeti(L, -1, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    empty_cell(L, cells, a->a);
    return 0;
  }
  a->result = take_block(a->h, cells, a->a);
  if (!a->result) pend(a->h, "weak-slot", "weak reference in cell %zu holds no block", a->b);
  return 0;
}

static int weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  op_args a = {.a = dst, .b = weak};
  return protect(h, op_weak_get, &a, 0) && a.result;
}

static int op_ephe_new(lua_State *L) {
  op_args *a = args_of(L);
  /* Key and datum are read before anything allocates (a finalizer may run then). */
  int cells = push_cell(L, a->b);
  int key = lua_gettop(L);
  lua_rawgeti(L, cells, (lua_Integer)a->c + 1);
  int datum = lua_gettop(L);
  if (lua_isnil(L, datum)) {
    /* An empty datum: false keeps the entry (and so "the key lives") visible. */
    lua_pushboolean(L, 0);
    lua_replace(L, datum);
  }
  empty_cell(L, cells, a->a);
  arm_failures(a);
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
  set_cell_from_top(L, cells, a->a);
  a->result = 1;
  return 0;
}

static int ephe_new(fuzz_bheap *h, size_t dst, size_t key, size_t datum) {
  op_args a = {.a = dst, .b = key, .c = datum};
  return protect(h, op_ephe_new, &a, 1) && a.result;
}

static int op_ephe_get(lua_State *L) {
  op_args *a = args_of(L);
  int cells = push_cell(L, a->b);
  int ephe = lua_gettop(L);
  if (lua_type(L, -1) != LUA_TTABLE || disarmed(top_kind(a->h)) != LUAB_MT_EPHE) {
    empty_cell(L, cells, a->a);
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
      empty_cell(L, cells, a->a);
    } else if (!take_block(a->h, cells, a->a)) {
      pend(a->h, "weak-slot", "ephemeron in cell %zu holds a datum that is no block", a->b);
    }
    return 0;
  }
  empty_cell(L, cells, a->a);
  return 0;
}

static int ephe_get(fuzz_bheap *h, size_t dst, size_t ephe) {
  op_args a = {.a = dst, .b = ephe};
  return protect(h, op_ephe_get, &a, 0) && a.result;
}

/* ---- Domains: coroutines ------------------------------------------------------------------- */

/* Domain d > 0 is a coroutine (lua_newthread) anchored in the domains table from spawn to end.
 * It owns no cell: it changes which stack the ops' values pass through and which thread starts a
 * step, a collection or a finalizer, never what the model reaches. */

static int op_spawn(lua_State *L) {
  op_args *a = args_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  lua_State *co = lua_newthread(L); /* may step the collector, and so run finalizers */
  lua_rawseti(L, -2, (lua_Integer)a->a + 1);
  a->h->domains[a->a] = co;
  a->result = 1;
  return 0;
}

static int domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= LUAB_DOMAINS || h->domains[d] != NULL || h->fin_depth > 0) return 0;
  op_args a = {.a = d};
  return protect(h, op_spawn, &a, 0) && a.result;
}

static void domain_on(fuzz_bheap *h, unsigned d) {
  if (d >= LUAB_DOMAINS || h->domains[d] == NULL || h->fin_depth > 0) return;
  h->running = d;
  h->L = h->domains[d];
}

static int op_unanchor(lua_State *L) {
  op_args *a = args_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  lua_pushnil(L);
  lua_rawseti(L, -2, (lua_Integer)a->a + 1); /* an array slot: no allocation */
  return 0;
}

/* The coroutine is reset (its stack emptied and shrunk, lua_resetthread) and unanchored: the
 * next whole cycle frees it, which the deep check holds it to (lua.thread-kept). */
static void domain_end(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= LUAB_DOMAINS || h->domains[d] == NULL || h->fin_depth > 0) return;
  lua_State *co = h->domains[d];
  if (h->running == d) domain_on(h, 0);
  lua_resetthread(co);
  h->domains[d] = NULL;
  if (!luab_ptrmap_put(&h->ended, (uintptr_t)lua_getextraspace(co), h->cycles)) {
    fprintf(stderr, "lua backend: out of memory for the ended coroutines\n");
    abort();
  }
  op_args a = {.a = d};
  protect(h, op_unanchor, &a, 0);
}

/* ---- Introspection -------------------------------------------------------------------------- */

static size_t heap_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                        void *user) {
  luab_view v = view_of(h);
  return luab_walk(&v, visit, user);
}

static size_t heap_live_bytes(fuzz_bheap *h) { return h->live_bytes; }

/* The deep check between the two cycles of a full collection, its findings kept for the next
 * check: a block one cycle freed while something still points to it is lua.dangling here,
 * before the next cycle's traversal reads the freed memory (where only a sanitizer would see
 * it). */
static void check_between_cycles(fuzz_bheap *h) {
  if (h->npending >= PENDING_MAX) return;
  fuzz_finding found[PENDING_MAX];
  luab_view v = view_of(h);
  size_t n = luab_check(&v, found, PENDING_MAX - h->npending);
  for (size_t i = 0; i < n && h->npending < PENDING_MAX; i++) h->pending[h->npending++] = found[i];
}

/* The collector's own steps (an allocation that pays its debt) with the deep check after each:
 * the linker sends Lua's calls of luaC_step here (BUILD: --wrap). The state's allocator data is
 * the heap. Inside a finalizer, or while the state closes, nothing is checked. */
void __real_luaC_step(lua_State *L);
void __wrap_luaC_step(lua_State *L);
void __wrap_luaC_step(lua_State *L) {
  __real_luaC_step(L);
  void *ud = NULL;
  lua_getallocf(L, &ud);
  fuzz_bheap *h = ud;
  if (h != NULL && h->domains_table != NULL && G(L) == G(h->main) && !h->closing &&
      h->fin_depth == 0) {
    check_between_cycles(h);
  }
}

/* The findings kept since the last check first, then the deep check's. */
static size_t heap_check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  size_t n = h->npending, kept = n < PENDING_MAX ? n : PENDING_MAX;
  for (size_t i = 0; i < kept && i < max; i++) out[i] = h->pending[i];
  h->npending = 0;
  luab_view v = view_of(h);
  size_t used = n < max ? n : max;
  return n + luab_check(&v, out + used, max - used);
}

/* ---- The heap ------------------------------------------------------------------------------- */

static int op_setup(lua_State *L) {
  op_args *a = args_of(L);
  fuzz_bheap *h = a->h;
  lua_createtable(L, (int)h->cells + 1, 0);
  h->cells_table = lua_topointer(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, REG_CELLS);
  lua_createtable(L, LUAB_DOMAINS, 0); /* sized now: anchoring never allocates */
  h->domains_table = lua_topointer(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, REG_DOMAINS);
  for (int i = 0; i < LUAB_MT_COUNT; i++) {
    lua_createtable(L, 0, 2);
    if (i == (int)armed((luab_mt)i)) {
      lua_pushcfunction(L, run_finalizer);
      lua_setfield(L, -2, "__gc");
    }
    if (disarmed((luab_mt)i) == LUAB_MT_WEAK) {
      lua_pushliteral(L, "v");
      lua_setfield(L, -2, "__mode");
    } else if (disarmed((luab_mt)i) == LUAB_MT_EPHE) {
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
  lua_State *L = lua_newstate(allocate, h);
  if (L == NULL) {
    fprintf(cfg->out, "lua: lua_newstate failed\n");
    luab_ptrmap_free(&h->allocs);
    free(h);
    return NULL;
  }
  h->L = h->main = h->domains[0] = L;
  lua_atpanic(L, on_panic);
  lua_setwarnf(L, on_warning, h);
  op_args a = {.result = generational};
  if (!protect(h, op_setup, &a, 0)) {
    fprintf(cfg->out, "lua: setting up the heap failed: %s\n", h->pending[0].message);
    heap_destroy(h);
    return NULL;
  }
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
  free(h);
}

lua_State *luab_state(fuzz_bheap *h) { return h->L; }

lua_State *luab_domain_state(fuzz_bheap *h, unsigned d) {
  return d < LUAB_DOMAINS ? h->domains[d] : NULL;
}

void *luab_cell_object(fuzz_bheap *h, size_t cell) {
  push_cell(h->L, cell);
  void *o = (void *)top_object(h->L);
  lua_pop(h->L, 2);
  return o;
}

static const char *op_name(lua_CFunction fn) {
  static const struct {
    lua_CFunction fn;
    const char *name;
  } names[] = {
      {op_alloc, "alloc"},         {op_set_ident, "set_ident"}, {op_store, "store"},
      {op_collect, "collect"},     {op_tune, "tune"},           {op_fin_set, "fin_set"},
      {op_fin_clear, "fin_clear"}, {op_weak_new, "weak_new"},   {op_weak_get, "weak_get"},
      {op_ephe_new, "ephe_new"},   {op_ephe_get, "ephe_get"},   {op_setup, "setup"},
      {op_spawn, "domain_spawn"},  {op_unanchor, "domain_end"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (names[i].fn == fn) return names[i].name;
  }
  return "an op";
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
            FUZZ_CAP_PRECISE | FUZZ_CAP_WALK | FUZZ_CAP_FAIL | FUZZ_CAP_TUNE | FUZZ_CAP_DEEP_CHECK |
            FUZZ_CAP_DOMAINS,
    .tunables = tunables,
    .tunable_count = TUNE_COUNT,
    .leak_slack_factor = 6.0,
    .leak_slack_bytes = 6207 + 1024 * 16 + 3 * 2048 + 4096,
    .create = heap_create,
    .destroy = heap_destroy,
    .alloc = block_alloc,
    .set_ident = ident_set,
    .get_ident = ident_get,
    .store = field_store,
    .store_int = field_store_int,
    .load = field_load,
    .raw_write = word_write,
    .raw_read = word_read,
    .copy = cell_copy,
    .clear = cell_clear,
    .collect = heap_collect,
    .run_finalizers = NULL,
    .tune = heap_tune,
    .fail_after = heap_fail_after,
    .fin_set = fin_set,
    .fin_clear = fin_clear,
    .weak_new = weak_new,
    .weak_get = weak_get,
    .ephe_new = ephe_new,
    .ephe_get = ephe_get,
    .range_add = NULL,
    .address = NULL,
    .domain_spawn = domain_spawn,
    .domain_on = domain_on,
    .domain_end = domain_end,
    .walk = heap_walk,
    .live_bytes = heap_live_bytes,
    .check = heap_check,
};
