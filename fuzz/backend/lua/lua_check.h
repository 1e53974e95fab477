/* The Lua backend's view of its own heap: which Lua objects are blocks, their identities, the
 * walk, and the deep check of Lua's collector invariants (lua_check.c).
 *
 * Names here are `luab_` (the Lua backend), never `lua_`/`luaX_`, which are Lua's own.
 *
 * Blocks. A block is a table or a full userdata whose metatable is one of the backend's marker
 * metatables (enum luab_mt); every other object (the registry, the cells table, the metatables
 * themselves, strings, the main thread) is Lua's or the backend's own. A table block keeps its
 * identity in the last two slots of its array part, as Lua integers: a scanned block of N fields
 * has an array of N + 2 slots (field f at index f + 1, the identity at N + 1 and N + 2), a weak
 * reference an array of 3 (the target at 1), an ephemeron an array of 2 and one hash node (its
 * key and datum). A raw block is a userdata of N + 2 words, the identity in words 0 and 1.
 * INV-LUAB-1: a block's array part never changes size (nothing stores outside it), so "the last
 * two slots" is always where set_ident wrote.
 *
 * The allocation index. The backend's allocator records every live allocation (address and
 * size); the check and the walk dereference a pointer only after the index (or the main thread's
 * known place inside the state's first allocation) vouches for it, so a broken heap gives a
 * finding, not a crash.
 */
#ifndef FUZZ_BACKEND_LUA_LUA_CHECK_H
#define FUZZ_BACKEND_LUA_LUA_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/lua/lua_ptrmap.h"
#include "lua.h"

/* ---- Blocks ------------------------------------------------------------------------------------ */

/* The marker metatables, kept in the registry for the life of the heap. The _FIN variants carry
 * __gc (the backend's finalizer); weak and ephemeron ones carry __mode "v" and "k". */
typedef enum luab_mt {
  LUAB_MT_BLOCK,     /* a scanned or raw block */
  LUAB_MT_BLOCK_FIN, /* ... with a finalizer set */
  LUAB_MT_WEAK,      /* a weak reference: {target, id, check}, values weak */
  LUAB_MT_WEAK_FIN,
  LUAB_MT_EPHE, /* an ephemeron: {id, check; [key] = datum}, keys weak */
  LUAB_MT_EPHE_FIN,
  LUAB_MT_COUNT,
} luab_mt;

/* Domains: 0 is the main thread, 1..LUAB_DOMAINS-1 coroutines (the driver uses 1..3). */
enum { LUAB_DOMAINS = 8 };

/* What the check and the walk read besides the Lua state. */
typedef struct luab_view {
  lua_State *L;                     /* the running domain's thread */
  const luab_ptrmap *allocs;        /* live allocations: address -> bytes */
  size_t live_bytes;                /* the allocator's own count */
  const void *mt[LUAB_MT_COUNT];    /* the marker metatables (Table *) */
  const void *cells;                /* the cells table (Table *) */
  int in_finalizer;                 /* a __gc of ours is running (Lua's GCSTPGC is set) */
  int mid_op;                       /* an op is running (the check after a step of the collector) */
  lua_State *domains[LUAB_DOMAINS]; /* each domain's thread, NULL when it does not exist */
  const void *domains_table;        /* the anchor table of the coroutines (Table *) */
  unsigned running;                 /* the running domain */
  const luab_ptrmap *ended; /* coroutines ended and not yet freed (allocation) -> cycles then */
  uint64_t cycles;          /* whole cycles completed */
} luab_view;

/* The marker of a Lua object (a GCObject *): LUAB_MT_COUNT when it is no block. */
luab_mt luab_block_mt(const luab_view *v, const void *gco);

/* The identity of a block (a GCObject *); 0 when it cannot be read (too small, not integers). */
int luab_block_ident(const void *gco, uint64_t *id, uint64_t *check);

/* The size of the array part of a table (a Table *), as Lua's luaH_realasize computes it but
 * without its assertion. */
unsigned luab_table_asize(const void *table);

/* ---- The walk and the deep check --------------------------------------------------------------- */

/* Calls visit with the identity of every block in allgc, finobj and tobefnz; returns how many
 * blocks it met whose identity it could not read (objects that are no block are not counted). */
size_t luab_walk(const luab_view *v, void (*visit)(void *user, uint64_t id, uint64_t check),
                 void *user);

/* The deep check: Lua's collector invariants re-derived from lgc.h and lstate.h (the rules and
 * their kinds are listed in lua_check.c). Never called while a collection runs. Returns the
 * number of findings; the first `max` go to out. */
size_t luab_check(const luab_view *v, fuzz_finding *out, size_t max);

/* The check at the end of an incremental atomic phase (marking complete, white not flipped,
 * nothing swept): every weak table on Lua's gray lists (weak, allweak, ephemeron) has its strong
 * parts marked: the keys of a weak-value table, the array of an ephemeron table, and the datum
 * of every entry whose key is marked (the entries with unmarked keys are cleared by then). Only
 * the backend's weak markers are read for their mode. lua.mark-incomplete; O(their size). */
size_t luab_check_atomic(const luab_view *v, fuzz_finding *out, size_t max);

/* The check of an object luaC_checkfinalizer has just moved from allgc to finobj (fin_set):
 * none of allgc's generational positions (survival, old1, reallyold, firstold1) may still name
 * it (lgc.c's correctpointers). O(1): run after every fin_set, where the driver's deep check does
 * not run. Returns the number of findings (lua.gen-lists), the first `max` written to out. */
size_t luab_check_separated(const luab_view *v, const void *gco, fuzz_finding *out, size_t max);

/* ---- For tests that break a heap on purpose (lua_broken_heap_test.c) -------------------------- */

/* The heap's Lua state, and the object (a GCObject *) in a cell, or NULL when it is empty. */
lua_State *luab_state(fuzz_bheap *h);
/* What the deep check reads of the heap now. */
luab_view luab_heap_view(fuzz_bheap *h);
/* Domain d's thread, or NULL when it does not exist. */
lua_State *luab_domain_state(fuzz_bheap *h, unsigned d);
void *luab_cell_object(fuzz_bheap *h, size_t cell);

#endif /* FUZZ_BACKEND_LUA_LUA_CHECK_H */
