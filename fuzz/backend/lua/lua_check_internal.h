/* The deep check's own cross-file names (lua_check.c, lua_check_lists.c, lua_check_values.c):
 * the checker's state, what it learns of each listed object, and the helpers every part uses.
 * Only those three files include it. */
#ifndef FUZZ_BACKEND_LUA_LUA_CHECK_INTERNAL_H
#define FUZZ_BACKEND_LUA_LUA_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/lua/lua_check.h"
#include "lfunc.h"
#include "lgc.h"
#include "lobject.h"
#include "lstate.h"
#include "lstring.h"
#include "ltable.h"
#include "ltm.h"

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

typedef struct luab_checker {
  const luab_view *v;
  global_State *g;
  fuzz_finding *out;
  size_t max, count;
  luab_ptrmap objs; /* every listed object -> INFO_* */
  size_t len[LIST_FIXED + 1];
  int inc, keep, sweeping, gray_rules;
} luab_checker;

/* ---- Helpers (lua_check.c) ------------------------------------------------------------------ */

void luab_ck_report(luab_checker *c, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The allocation at p (0: none), and the one an object's header says it has (threads apart). */
size_t luab_ck_alloc_bytes(const luab_view *v, const void *p);
size_t luab_ck_object_bytes(const GCObject *o);
const char *luab_ck_type_name(int tt);
const char *luab_ck_colour_name(const luab_checker *c, const GCObject *o);
const char *luab_ck_list_name(int list);
/* Can o be read as an object at all: the main thread, a thread at its place in an allocation,
 * or an allocation big enough for its type's fixed part. */
int luab_ck_readable(const luab_checker *c, const GCObject *o);
int luab_ck_info_of(const luab_checker *c, const GCObject *o, uint64_t *info);
void luab_ck_set_info(luab_checker *c, const GCObject *o, uint64_t info);

/* ---- Lists, headers and colours (lua_check_lists.c) ----------------------------------------- */

/* Records every object of a list (objs) with its position and sweep state. */
void luab_ck_walk_list(luab_checker *c, GCObject **head, int list);
/* The header of one listed object: its size, colour, age and finalization bit. */
void luab_ck_header(luab_checker *c, const GCObject *o, uint64_t info);
/* One gray list: every object listed, gray (or TOUCHED2 and black where touched2_ok), once. */
void luab_ck_walk_gray(luab_checker *c, GCObject *head, const char *name, int touched2_ok);
/* The generational positions of allgc and finobj, and the ages they imply. */
void luab_ck_gen_lists(luab_checker *c);

/* ---- References and the backend's objects (lua_check_values.c) ----------------------------- */

/* Every reference of one listed object, by its type. */
void luab_ck_contents(luab_checker *c, const GCObject *o);
/* A table's array and hash parts are the allocations their sizes say (quiet: no report). */
int luab_ck_table_parts_ok(luab_checker *c, const Table *h, int quiet);
void luab_ck_block(luab_checker *c, const GCObject *o, luab_mt kind, uint64_t info);
void luab_ck_strings(luab_checker *c);
void luab_ck_roots(luab_checker *c);
void luab_ck_cells(luab_checker *c);

#endif /* FUZZ_BACKEND_LUA_LUA_CHECK_INTERNAL_H */
