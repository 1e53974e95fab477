/* The Lua backend's heap (lua_backend.c says how it works): the state of one heap, the calling
 * convention of its ops, and the cross-file names of its parts. Only the backend's own files
 * include it: lua_backend.c (the heap, collections, tunables, checks, the table), lua_alloc.c
 * (the allocator), lua_cells.c (blocks and cells), lua_finalizer.c, lua_weak.c (weak references
 * and ephemerons) and lua_domain.c (coroutines).
 *
 * Names are `luab_` (the Lua backend), never `lua_`/`luaX_`, which are Lua's own.
 */
#ifndef FUZZ_BACKEND_LUA_LUA_HEAP_H
#define FUZZ_BACKEND_LUA_LUA_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/lua/lua_check.h"
#include "lgc.h"
#include "lobject.h"
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

/* The rare events of Lua's collector the backend counts (lua_census.c says how each is seen):
 * X(NAME, "name", "what one count is"). */
#define LUAB_RARE_EVENTS(X)                                                                      \
  X(CYCLE, "cycle", "a mark completed: an atomic phase (incremental, young or full collection)") \
  X(STEP_INC, "step.inc", "an incremental step (luaC_step in incremental mode)")                 \
  X(STEP_CYCLE_DONE, "step.cycle-done", "an incremental step that finished its cycle")           \
  X(STEP_STOPPED, "step.stopped", "a step found the collector stopped by the user (LUA_GCSTOP)") \
  X(STEP_COROUTINE, "step.coroutine", "a step taken while a coroutine domain ran")               \
  X(STEP_PAUSE0, "step.pause0", "an incremental step with pause 0")                              \
  X(STEP_STEPMUL0, "step.stepmul0", "an incremental step with stepmul 0")                        \
  X(STEP_STEPMUL_MAX, "step.stepmul-max", "an incremental step with stepmul at its maximum")     \
  X(STEP_STEPSIZE0, "step.stepsize0", "an incremental step with stepsize 0 (1 byte)")            \
  X(STEP_STEPSIZE_MAX, "step.stepsize-max", "an incremental step with stepsize at its maximum")  \
  X(GEN_MINOR, "gen.minor", "a generational minor (young) collection")                           \
  X(GEN_MINORMUL0, "gen.minormul0", "a minor collection with minormul 0")                        \
  X(GEN_MAJOR, "gen.major", "a generational major collection (memory grew past majormul)")       \
  X(GEN_MAJOR_BAD, "gen.major-bad", "a major collection that freed too little (a bad one)")      \
  X(GEN_AFTER_BAD, "gen.after-bad", "a step after a bad collection (stepgenfull)")               \
  X(GEN_RECOVERED, "gen.recovered", "a step after a bad collection went back to generational")   \
  X(MODE_TO_GEN, "mode.to-gen", "a switch from incremental to generational (lua_gc LUA_GCGEN)")  \
  X(MODE_TO_INC, "mode.to-inc", "a switch from generational to incremental (lua_gc LUA_GCINC)")  \
  X(MODE_MID_CYCLE, "mode.mid-cycle",                                                            \
    "a switch to generational in the middle of an incremental cycle")                            \
  X(FULL, "full", "a full collection (lua_gc LUA_GCCOLLECT)")                                    \
  X(FULL_GEN, "full.gen", "a full collection in generational mode")                              \
  X(FULL_MID_CYCLE, "full.mid-cycle",                                                            \
    "a full collection begun in the middle of an incremental cycle")                             \
  X(ALLOC_FAILED, "alloc.failed", "an allocation refused (an injected failure)")                 \
  X(EMERGENCY, "emergency", "an emergency collection (an allocation failed: gcemergency)")       \
  X(FIN_RUN, "fin.run", "a finalizer (__gc) ran")                                                \
  X(FIN_IN_STEP, "fin.in-step", "a finalizer run by a step rather than a full collection")       \
  X(FIN_RESURRECTED, "fin.resurrected", "a finalizer left its block in a cell (resurrection)")   \
  X(FIN_ALLOCATED, "fin.allocated", "a finalizer that allocated")                                \
  X(FIN_SET_IN_FIN, "fin.set-in-finalizer", "a finalizer set inside a finalizer (__gc running)") \
  X(WEAK_CLEARED, "weak.cleared", "a weak reference (a weak-valued table) cleared by an atomic") \
  X(EPHE_CLEARED, "ephe.cleared", "an ephemeron (a weak-keyed table) cleared: its key died")     \
  X(EPHE_UNMARKED, "ephe.unmarked-chain",                                                        \
    "an ephemeron left on Lua's ephemeron list after convergence: key and datum unmarked")

typedef enum luab_rare {
#define LUAB_RARE_ENUM(name, id, what) LUAB_RARE_##name,
  LUAB_RARE_EVENTS(LUAB_RARE_ENUM)
#undef LUAB_RARE_ENUM
      LUAB_RARE_COUNT
} luab_rare;

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
  uint64_t fin_runs;                 /* finalizers run (events.finalize called) */
  uint64_t fin_moves;                /* blocks fin_set moved into finobj */
  int closing;                       /* lua_close runs: finalizers must not call the driver */
  int warning_open;                  /* a multi-part Lua warning is being reported */
  int ready;                         /* created: findings may go to events.finding */
  size_t reported;                   /* findings sent to events.finding since the last check */
  fuzz_finding pending[PENDING_MAX]; /* findings made outside check, reported by the next check */
  size_t npending;                   /* may exceed PENDING_MAX: the excess is counted, not kept */
  uint64_t rare[LUAB_RARE_COUNT];    /* the rare events since create (lua_census.c) */
  int in_full;                       /* luaC_fullgc runs (a finalizer then is not a step's) */
  /* Weak references whose slot is known empty (cleared and counted, or emptied by weak_set):
   * Lua lists every weak table with an array part for clearing at every atomic, so an empty
   * slot there is a clearing only the first time. */
  luab_ptrmap weak_empty;
  int fin_allocated; /* the running finalizer allocated */
};

/* ---- Calling into Lua (lua_backend.c) ------------------------------------------------------ */

/* An op's arguments and answer, passed to its lua_CFunction as a light userdata. */
typedef struct luab_args {
  fuzz_bheap *h;
  size_t a, b, c;
  uint64_t u, w;
  int64_t value;
  int is_int;   /* store: the value, not the block in cell b */
  int failable; /* the op may fail: luab_arm_failures counts its allocations from there on */
  int result;   /* what the op answers */
} luab_args;

/* Run fn(args) in protected mode (`name` for a lua.error). Returns 1 when it returned, 0 when
 * it raised. An injected failure counts only from the op's luab_arm_failures on, never in
 * lua_pcall's own allocations (a coroutine's first call allocates its CallInfo), so it hits the
 * op's own allocations, after the op has dropped what it drops first. */
int luab_protect(fuzz_bheap *h, lua_CFunction fn, const char *name, luab_args *args, int failable);

/* A finding made outside check (lua.alloc, lua.error, ...): to events.finding at once when the
 * driver set it, else reported by the next check. */
void luab_pend(fuzz_bheap *h, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What the deep check and the walk read of the heap now. */
luab_view luab_view_of(fuzz_bheap *h);

/* The marker of the value on top of the running thread's stack (LUAB_MT_COUNT: no block). */
luab_mt luab_top_kind(fuzz_bheap *h);

static inline luab_args *luab_args_of(lua_State *L) { return lua_touserdata(L, 1); }

/* From here the op's allocations may fail (its dst is empty by now). */
static inline void luab_arm_failures(luab_args *a) { a->h->failable = a->failable; }

/* The collectable object on top of the stack, or NULL. */
static inline const GCObject *luab_top_object(lua_State *L) {
  const TValue *o = s2v(L->top - 1);
  return iscollectable(o) ? gcvalue(o) : NULL;
}

/* A marker and its __gc twin differ in the low bit (enum luab_mt). */
static inline luab_mt luab_armed(luab_mt kind) { return (luab_mt)(kind | 1); }
static inline luab_mt luab_disarmed(luab_mt kind) { return (luab_mt)(kind & ~1); }

/* Pushes the cells table, then the value of cell i; returns the cells table's index. */
static inline int luab_push_cell(lua_State *L, size_t cell) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, REG_CELLS);
  lua_rawgeti(L, -1, (lua_Integer)cell + 1);
  return lua_absindex(L, -2);
}

/* Pops the top into cell i of the cells table at index `cells`. */
static inline void luab_set_cell(lua_State *L, int cells, size_t cell) {
  lua_rawseti(L, cells, (lua_Integer)cell + 1);
}

static inline void luab_empty_cell(lua_State *L, int cells, size_t cell) {
  lua_pushnil(L);
  lua_rawseti(L, cells, (lua_Integer)cell + 1);
}

/* ---- The allocator (lua_alloc.c) ------------------------------------------------------------ */

/* The lua_Alloc of every heap (ud: the heap). */
void *luab_allocate(void *ud, void *ptr, size_t osize, size_t nsize);
void luab_fail_after(fuzz_bheap *h, unsigned n);

/* ---- Blocks and cells (lua_cells.c) --------------------------------------------------------- */

int luab_block_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields);
void luab_ident_set(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check);
int luab_ident_get(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check);
void luab_field_store(fuzz_bheap *h, size_t obj, size_t field, size_t src);
void luab_field_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value);
fuzz_field_kind luab_field_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field,
                                int64_t *value);
void luab_word_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value);
uint64_t luab_word_read(fuzz_bheap *h, size_t obj, size_t word);
void luab_cell_copy(fuzz_bheap *h, size_t dst, size_t src);
void luab_cell_clear(fuzz_bheap *h, size_t cell);
/* Puts the value on top into cell dst when it is a block (returns 1), else empties dst. */
int luab_take_block(fuzz_bheap *h, int cells, size_t dst);

/* ---- Finalizers (lua_finalizer.c) ----------------------------------------------------------- */

/* The __gc of the armed markers. */
int luab_run_finalizer(lua_State *L);
int luab_fin_set(fuzz_bheap *h, size_t cell, uint64_t token);
int luab_fin_clear(fuzz_bheap *h, size_t cell);

/* ---- Weak references and ephemerons (lua_weak.c) -------------------------------------------- */

int luab_weak_new(fuzz_bheap *h, size_t dst, size_t target);
int luab_weak_get(fuzz_bheap *h, size_t dst, size_t weak);
int luab_ephe_new(fuzz_bheap *h, size_t dst, size_t key, size_t datum);
int luab_ephe_get(fuzz_bheap *h, size_t dst, size_t ephe);
void luab_weak_set(fuzz_bheap *h, size_t weak, size_t target);
void luab_ephe_set(fuzz_bheap *h, size_t ephe, size_t key, size_t datum);

/* ---- Rare events (lua_census.c) ------------------------------------------------------------- */

extern const fuzz_rare_event luab_rare_events[LUAB_RARE_COUNT];
void luab_rare_counts(fuzz_bheap *h, uint64_t *counts);
/* The heap whose state `g` is, or NULL (another allocator's state, or one closing). */
fuzz_bheap *luab_heap_of(global_State *g);
/* Around each luaC_step: what the step will do, read from the state before it (step_before),
 * and what it did (step_after). */
typedef struct luab_step_seen {
  int kind;
  lu_byte gcstate;
} luab_step_seen;
luab_step_seen luab_rare_step_before(fuzz_bheap *h, global_State *g);
void luab_rare_step_after(fuzz_bheap *h, global_State *g, luab_step_seen seen);
/* At the end of every atomic phase (lgc.c's one call of luaS_clearcache). */
void luab_rare_atomic(fuzz_bheap *h, global_State *g);

/* ---- Domains (lua_domain.c) ----------------------------------------------------------------- */

int luab_domain_spawn(fuzz_bheap *h, unsigned d);
void luab_domain_on(fuzz_bheap *h, unsigned d);
void luab_domain_end(fuzz_bheap *h, unsigned d);

#endif /* FUZZ_BACKEND_LUA_LUA_HEAP_H */
