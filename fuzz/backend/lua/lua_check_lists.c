/* The deep check's lists (lua_check.h): every object list walked once, the header of every
 * listed object (size, colour by gcstate, age, finalization bit; threads' own colour rule), the
 * gray lists and the generational positions. The rules and their kinds are listed in
 * lua_check.c. */
#include "fuzz/backend/lua/lua_check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The lists ------------------------------------------------------------------------------ */

/* How far the current incremental sweep has gone through a list: 0 not at all, 1 up to the
 * sweep position (sweepgc), 2 wholly. */
static int sweep_list_state(const luab_checker *c, int list) {
  static const int order[] = {0, GCSswpallgc, GCSswpfinobj, GCSswptobefnz, 0};
  if (!c->inc) return 0;
  if (c->g->gcstate == GCSswpend || c->g->gcstate == GCScallfin || c->g->gcstate == GCSpause)
    return 2; /* all swept */
  if (!c->sweeping || list == LIST_FIXED) return 0;
  if (c->g->gcstate > order[list]) return 2;
  if (c->g->gcstate == order[list]) return 1; /* partly: up to sweepgc */
  return 0;
}

void luab_ck_walk_list(luab_checker *c, GCObject **head, int list) {
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
    if (!luab_ck_readable(c, o)) {
      luab_ck_report(c, "list", "%s[%zu] = %p is no live object", luab_ck_list_name(list), pos,
                     (void *)o);
      break;
    }
    if (luab_ck_info_of(c, o, &info)) {
      luab_ck_report(c, "list", "%s[%zu] = %p (%s) is already in %s: a cycle or two lists",
                     luab_ck_list_name(list), pos, (void *)o, luab_ck_type_name(o->tt),
                     luab_ck_list_name((int)(info & LIST_MASK)));
      break;
    }
    luab_ck_set_info(c, o,
                     (uint64_t)list | (swept ? INFO_SWEPT : 0) | ((uint64_t)pos << INFO_POS_SHIFT));
  }
  if (sweep == 1 && p == c->g->sweepgc) met_position = 1; /* an empty list's head */
  c->len[list] = pos;
  if (!met_position)
    luab_ck_report(c, "sweep", "state %d sweeps %s but its position %p is not in it", c->g->gcstate,
                   luab_ck_list_name(list), (void *)c->g->sweepgc);
}

/* ---- Headers and colours -------------------------------------------------------------------- */

/* Threads have no write barriers: a store to a stack is never seen by the collector. So Lua
 * keeps them gray: traversethread links a thread to grayagain in the propagate phase (to be
 * traversed again in the atomic one), and an old thread there in every phase, so each young
 * collection re-traverses its stack (sweep2old and correctgraylist keep old threads gray). */
static void check_thread_colour(luab_checker *c, const GCObject *o, const char *ln) {
  int marking = c->g->gcstate == GCSpropagate || c->g->gcstate == GCSenteratomic;
  if (c->inc && marking && isblack(o))
    luab_ck_report(c, "thread-colour",
                   "thread %p in %s is black in state %d, before the atomic phase", (void *)o, ln,
                   c->g->gcstate);
  else if (!c->inc && getage(o) == G_OLD && !isgray(o))
    luab_ck_report(c, "thread-colour", "old thread %p in %s is %s, not gray (on grayagain)",
                   (void *)o, ln, luab_ck_colour_name(c, o));
}

/* The header of one listed object: its size, colour, age and finalization bit. */
void luab_ck_header(luab_checker *c, const GCObject *o, uint64_t info) {
  int list = (int)(info & LIST_MASK);
  int in_fin = list == LIST_FINOBJ || list == LIST_TOBEFNZ;
  const char *ln = luab_ck_list_name(list);
  size_t want = o->tt == LUA_VTHREAD ? sizeof(mirror_lx) : luab_ck_object_bytes(o);
  const void *start =
      o->tt == LUA_VTHREAD ? (const void *)((const char *)o - offsetof(mirror_lx, l)) : o;
  if (o != obj2gco(c->g->mainthread) && luab_ck_alloc_bytes(c->v, start) != want) {
    luab_ck_report(c, "object-size", "%s %p in %s: %zu bytes by its header, an allocation of %zu",
                   luab_ck_type_name(o->tt), (void *)o, ln, want, luab_ck_alloc_bytes(c->v, start));
    luab_ck_set_info(c, o, info | INFO_BROKEN);
  }
  if (list == LIST_FIXED) {
    if (o->tt != LUA_VSHRSTR || !isgray(o) || getage(o) != G_OLD)
      luab_ck_report(c, "fixed",
                     "%s %p in fixedgc is %s of age %d (a gray old short string expected)",
                     luab_ck_type_name(o->tt), (void *)o, luab_ck_colour_name(c, o), getage(o));
    return;
  }
  if (in_fin != (tofinalize(o) != 0))
    luab_ck_report(c, "finobj-bit", "%s %p in %s has FINALIZEDBIT %s", luab_ck_type_name(o->tt),
                   (void *)o, ln, tofinalize(o) ? "set" : "clear");
  if (in_fin && o->tt != LUA_VTABLE && o->tt != LUA_VUSERDATA)
    luab_ck_report(c, "list", "a %s %p in %s: only tables and userdata have finalizers",
                   luab_ck_type_name(o->tt), (void *)o, ln);
  if ((o->marked & WHITEBITS) == WHITEBITS || (iswhite(o) && isblack(o))) {
    luab_ck_report(c, "bad-colour", "%s %p in %s has marked 0x%02x: %s", luab_ck_type_name(o->tt),
                   (void *)o, ln, o->marked, luab_ck_colour_name(c, o));
    return;
  }
  /* Colours. */
  if (c->inc) {
    int all_swept = info & INFO_SWEPT;
    if (isdead(c->g, o) && (c->keep || all_swept))
      luab_ck_report(c, "dead-object", "%s %p in %s is dead (other white) in state %d, %s",
                     luab_ck_type_name(o->tt), (void *)o, ln, c->g->gcstate,
                     c->keep ? "after the sweep" : "in the part already swept");
    else if (all_swept && !iswhite(o))
      luab_ck_report(
          c, "bad-colour", "%s %p in %s is %s in state %d where everything is swept white",
          luab_ck_type_name(o->tt), (void *)o, ln, luab_ck_colour_name(c, o), c->g->gcstate);
    if (c->keep && list == LIST_TOBEFNZ && iswhite(o))
      luab_ck_report(c, "bad-colour", "%s %p waits for its finalizer but is white while marking",
                     luab_ck_type_name(o->tt), (void *)o);
  } else if (isdead(c->g, o)) {
    luab_ck_report(c, "dead-object", "%s %p in %s is dead (other white) in generational mode",
                   luab_ck_type_name(o->tt), (void *)o, ln);
  }
  if (o->tt == LUA_VTHREAD) check_thread_colour(c, o, ln);
  /* Ages. */
  int age = getage(o);
  if (c->inc && age != G_NEW)
    luab_ck_report(c, "bad-age", "%s %p in %s has age %d in incremental mode",
                   luab_ck_type_name(o->tt), (void *)o, ln, age);
  if (!c->inc && age > G_TOUCHED2)
    luab_ck_report(c, "bad-age", "%s %p in %s has no age (%d)", luab_ck_type_name(o->tt), (void *)o,
                   ln, age);
  if (!c->inc && (age == G_TOUCHED1 || age == G_TOUCHED2) && !(info & INFO_GRAY))
    luab_ck_report(c, "bad-age", "%s %p in %s is TOUCHED%d but in no gray list",
                   luab_ck_type_name(o->tt), (void *)o, ln, age == G_TOUCHED1 ? 1 : 2);
  if (!c->inc && age == G_TOUCHED1 && !isgray(o))
    luab_ck_report(c, "bad-age", "%s %p in %s is TOUCHED1 but %s", luab_ck_type_name(o->tt),
                   (void *)o, ln, luab_ck_colour_name(c, o));
  /* Gray objects wait in a gray list (lgc.h), but open upvalues. */
  if (c->gray_rules && isgray(o) && !(info & INFO_GRAY) &&
      !(o->tt == LUA_VUPVAL && upisopen(gco2upv(o))))
    luab_ck_report(c, "gray-list", "gray %s %p in %s is in no gray list", luab_ck_type_name(o->tt),
                   (void *)o, ln);
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

void luab_ck_walk_gray(luab_checker *c, GCObject *head, const char *name, int touched2_ok) {
  size_t pos = 0;
  for (GCObject *o = head; o != NULL; pos++) {
    uint64_t info;
    if (!luab_ck_info_of(c, o, &info) || (info & INFO_BROKEN)) {
      luab_ck_report(c, "gray-list", "%s[%zu] = %p is no listed object", name, pos, (void *)o);
      return;
    }
    if (info & INFO_GRAY) {
      luab_ck_report(c, "gray-list", "%s[%zu]: %s %p is on a gray list twice", name, pos,
                     luab_ck_type_name(o->tt), (void *)o);
      return;
    }
    GCObject **next = gclist_of(o);
    if (next == NULL) {
      luab_ck_report(c, "gray-list", "%s[%zu]: a %s %p cannot be on a gray list", name, pos,
                     luab_ck_type_name(o->tt), (void *)o);
      return;
    }
    luab_ck_set_info(c, o, info | INFO_GRAY);
    if (!isgray(o) && !(touched2_ok && isblack(o) && getage(o) == G_TOUCHED2))
      luab_ck_report(c, "gray-list", "%s[%zu]: %s %p is %s (age %d)", name, pos,
                     luab_ck_type_name(o->tt), (void *)o, luab_ck_colour_name(c, o), getage(o));
    o = *next;
  }
}

/* ---- Generational positions ----------------------------------------------------------------- */

static size_t position_in(luab_checker *c, GCObject *p, int list, const char *name) {
  uint64_t info;
  if (p == NULL) return c->len[list];
  if (!luab_ck_info_of(c, p, &info) || (int)(info & LIST_MASK) != list) {
    luab_ck_report(c, "gen-lists", "%s = %p is not in %s", name, (void *)p,
                   luab_ck_list_name(list));
    return SIZE_MAX;
  }
  return (size_t)(info >> INFO_POS_SHIFT);
}

/* The three boundaries of one list: young | survival | old1 | really old. */
static void check_generations(luab_checker *c, GCObject *head, int list, GCObject *sur,
                              GCObject *old1, GCObject *rold, const char *names[3]) {
  size_t b[3] = {position_in(c, sur, list, names[0]), position_in(c, old1, list, names[1]),
                 position_in(c, rold, list, names[2])};
  if (b[0] == SIZE_MAX || b[1] == SIZE_MAX || b[2] == SIZE_MAX) return;
  if (!(b[0] <= b[1] && b[1] <= b[2])) {
    luab_ck_report(c, "gen-lists", "%s at %zu, %s at %zu, %s at %zu: out of order", names[0], b[0],
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
      luab_ck_report(c, "bad-age", "%s %p at %s[%zu] (past %s) has age %d, younger than its place",
                     luab_ck_type_name(o->tt), (void *)o, luab_ck_list_name(list), pos, bad, age);
  }
}

void luab_ck_gen_lists(luab_checker *c) {
  global_State *g = c->g;
  if (c->inc) {
    /* Not firstold1: enterinc leaves it as it was, and nothing reads it before atomic2gen
     * sets it again. */
    if (g->survival || g->old1 || g->reallyold || g->finobjsur || g->finobjold1 || g->finobjrold)
      luab_ck_report(
          c, "gen-lists",
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
      luab_ck_report(c, "bad-age", "%s %p at allgc[%zu] is OLD1 but firstold1 is at %zu",
                     luab_ck_type_name(o->tt), (void *)o, pos, first);
  }
}
