/* The backend-neutral model oracle: the driver's shadow graph of a heap it reaches only through
 * fuzz/backend/backend.h.
 *
 * The model knows every block the program made (an object: its identity, shape, fields or
 * payload words, finalizer and weak state) and what each of the backend's cells holds. It never
 * reads the heap itself; the runner (fuzz/oracle/run.c) reads through the backend and asks the
 * model what it must find. Nothing here knows a collector.
 *
 * Identity (INV-ORACLE-1): object k's id word is ORACLE_ID_SALT << 32 | k, its check word a
 * hash of the id, the shape and the size; both live in the block (the backend's set_ident), so a
 * block that is not object k, or object k's memory after it was freed and reused, reads back a
 * different pair. Ids are never reused within a program.
 *
 * Reachability. Sets computed from the cells when asked (O(objects + fields)):
 *   - strong: reachable from the cells and pinned objects through scanned fields, ephemeron data whose key is
 *     strong, and (conservative backends) range words that point into a block that was strong
 *     when the word was written (oracle_model_set_range_word);
 *   - at-collect: the strong set when the program's latest collection began: the collection
 *     keeps all of it, whatever its finalizers resurrect over cells meanwhile;
 *   - kept: strong and at-collect, plus everything reachable from an object with a finalizer set,
 *     from the block any non-zero range word points into (live or not: a conservative collector
 *     may keep it),
 *     one whose finalizer ran in the current collection (a collector keeps those for the
 *     finalizer, or until its next cycle), or one made since the collection began (by a
 *     finalizer's body: the collection never saw it).
 * Revival. A finalizer that resurrects its block makes reachable again what the collector had
 * found unreachable with it, and may already have separated for finalization or cleared weak
 * references to (Lua finalizes a whole unreachable group in one cycle); so does a weak or
 * ephemeron get that hands back a block nothing else reached (Lua keeps an ephemeron's entry
 * until the cycle after its key was separated). Each object such a revival makes strong again is
 * marked revived (oracle_model_revive) until the next full collection has run every finalizer
 * due: its finalizer running, or a weak reference to it answering empty, while it is strong is
 * no finding.
 * What the runner checks with them:
 *   oracle.finalizer-live   a finalizer runs on a strong block that was not revived;
 *   oracle.weak-cleared     a weak get answers empty while its target is strong, unless the
 *                           target was finalized or revived while the weak reference existed
 *                           (oracle_model_excuse_weak); an ephemeron's datum likewise while its
 *                           key is;
 *   oracle.weak-after-finalizer  a weak get answers its target after the target's finalizer
 *                           ran (a collector clears weak references before it finalizes their
 *                           target: Lua's weak values, bdwgc's disappearing links, Go's weak
 *                           pointers), unless the target was revived;
 *   oracle.not-freed        (FUZZ_CAP_PRECISE) after a full collection the heap's walk still
 *                           holds a block that is not kept;
 *   oracle.leak             after a full collection the backend's live bytes exceed its stated
 *                           bound over the bytes of the kept objects.
 */
#ifndef FUZZ_ORACLE_MODEL_H
#define FUZZ_ORACLE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/backend.h"

typedef uint32_t oracle_obj;
#define ORACLE_NONE    ((oracle_obj)UINT32_MAX)
#define ORACLE_ID_SALT UINT64_C(0x6766757a) /* "gfuz": no pointer and no small integer */

typedef enum oracle_role {
  ORACLE_PLAIN, /* alloc: a scanned or raw block */
  ORACLE_WEAK,  /* weak: its one weak slot names `a` (weak_set aims it anew, or at none) */
  ORACLE_EPHE,  /* ephe: key `a`, datum `b` (ephe_set sets both; either may be none) */
} oracle_role;

typedef enum oracle_fin {
  ORACLE_FIN_NONE, /* no finalizer set (or cleared) */
  ORACLE_FIN_SET,  /* set: must run once, only after the block is unreachable */
  ORACLE_FIN_RAN,  /* ran (since it was last set); an ordinary block again */
} oracle_fin;

/* A field of a scanned object: ORACLE_FIELD_EMPTY, an integer, or a block. */
typedef uint64_t oracle_field;
#define ORACLE_FIELD_EMPTY ((oracle_field)0)
static inline oracle_field oracle_field_int(int64_t v) { return (uint64_t)v << 2 | 1; }
static inline oracle_field oracle_field_block(oracle_obj o) { return (uint64_t)o << 2 | 2; }
static inline int oracle_field_is_int(oracle_field f) { return (f & 3) == 1; }
static inline int oracle_field_is_block(oracle_field f) { return (f & 3) == 2; }
static inline int64_t oracle_field_int_of(oracle_field f) { return (int64_t)(f >> 2); }
static inline oracle_obj oracle_field_block_of(oracle_field f) { return (oracle_obj)(f >> 2); }

typedef struct oracle_object {
  uint64_t id, check;       /* INV-ORACLE-1 */
  uint8_t shape;            /* fuzz_block_shape */
  uint8_t role;             /* oracle_role */
  uint8_t fin;              /* oracle_fin */
  uint8_t weak_cleared;     /* a get found the slot empty: it stays empty */
  uint8_t may_be_empty;     /* ORACLE_WEAK, ORACLE_EPHE: its target (key) was finalized or revived
                            * while this one existed: the collector may have cleared it then */
  uint8_t revived;          /* made strong again by a revival (see the top) */
  uint8_t after_finalizer;  /* ORACLE_WEAK: reachable when its target's finalizer ran: it must
                             * answer empty from then on */
  uint8_t pinned;           /* FUZZ_CAP_PIN: a root until unpinned (oracle_model_set_pinned) */
  uint32_t nfields;         /* scanned fields or raw payload words (ORACLE_PLAIN) */
  size_t first;             /* its fields' (or payload words') index in the model's words */
  oracle_obj a, b;          /* ORACLE_WEAK: target; ORACLE_EPHE: key, datum; ORACLE_NONE
                             * after a set to none: every get must answer empty. A set clears
                             * weak_cleared, may_be_empty and after_finalizer: they were about
                             * the old target or key (fuzz/oracle/ops.c: aim) */
  size_t fin_cell;          /* the slot a finalizer resurrects into (of the mutator that runs
                             * it: fuzz/oracle/runner.h), or SIZE_MAX */
  uint64_t body;            /* a fin_do's body (where its ops are: fuzz/oracle/ops.c), or 0 */
  uint64_t fin_ran_collect; /* the model's collection count when the finalizer ran */
  uint64_t fin_set_collect; /* ... and when it was set (oracle_model_below_finalizers) */
  uintptr_t addr;           /* conservative backends: where the block is, and its bytes */
  size_t bsize;
} oracle_object;

typedef struct oracle_model oracle_model;

/* A model of `cells` cells, all empty; NULL when out of memory. reset forgets every object and
 * empties every cell (the memory is kept for the next program). */
oracle_model *oracle_model_create(size_t cells);
void oracle_model_reset(oracle_model *m);
void oracle_model_destroy(oracle_model *m);

/* A new object (fields empty or zero); ORACLE_NONE when out of memory. */
oracle_obj oracle_model_new(oracle_model *m, fuzz_block_shape shape, oracle_role role,
                            size_t nfields);
oracle_object *oracle_model_object(oracle_model *m, oracle_obj o);
size_t oracle_model_count(const oracle_model *m);
/* The object an id word names, or ORACLE_NONE. */
oracle_obj oracle_model_by_id(const oracle_model *m, uint64_t id);

/* A scanned object's field / a raw object's payload word. */
oracle_field oracle_model_field(const oracle_model *m, oracle_obj o, size_t f);
void oracle_model_set_field(oracle_model *m, oracle_obj o, size_t f, oracle_field v);

oracle_obj oracle_model_cell(const oracle_model *m, size_t cell);
void oracle_model_set_cell(oracle_model *m, size_t cell, oracle_obj o);

/* Conservative range word `index` (of ORACLE_RANGE_WORDS) now holds w. It keeps the object whose
 * block holds w if that object is strong as the word is written; a word into a block nothing
 * reached may name freed memory (the collector may have freed the block before the word came),
 * so it keeps nothing the model can count on. */
enum { ORACLE_RANGE_WORDS = 32 };
void oracle_model_set_range_word(oracle_model *m, size_t index, uintptr_t w, size_t skip);

/* Object o's block moved to `start` (a compaction; ORACLE_NONE: nothing). Any other object whose
 * recorded block overlaps the new one was freed before it (a compaction moves into free slots
 * only): it no longer answers for a range word there. */
void oracle_model_moved(oracle_model *m, oracle_obj o, uintptr_t start);

/* Pin or unpin object o: a pinned object is a root of every set (strong, at-collect, kept). */
void oracle_model_set_pinned(oracle_model *m, oracle_obj o, int pinned);

/* Collections so far (the runner counts each collect op). */
uint64_t oracle_model_collects(const oracle_model *m);
void oracle_model_count_collect(oracle_model *m);

typedef enum oracle_reach_kind {
  ORACLE_REACH_STRONG,
  ORACLE_REACH_AT_COLLECT,
  ORACLE_REACH_KEPT,
  /* Computed with AT_COLLECT: what the objects whose finalizer is set reach when the collection
   * begins. A collection that queues such a finalizer keeps all of it to its end, whatever the
   * body then sets or clears. */
  ORACLE_REACH_FIN_AT_COLLECT,
} oracle_reach_kind;
/* Compute a set; oracle_model_reached answers from the last computed set of that kind. `skip` is
 * a cell left out of the roots (the finalizer's SELF cell), or SIZE_MAX. KEPT reads the last
 * AT_COLLECT set. */
void oracle_model_reach(oracle_model *m, oracle_reach_kind kind, size_t skip);
int oracle_model_reached(const oracle_model *m, oracle_reach_kind kind, oracle_obj o);
/* A finalizer resurrects o into `cell`: the model's cell is set, and every object strong now
 * that was not before is marked revived, and the weak references to it excused
 * (oracle_model_excuse_weak), whether or not an earlier revival had marked it. Returns how many
 * were newly marked. */
size_t oracle_model_revive(oracle_model *m, size_t cell, oracle_obj o, size_t skip);
/* After a full collection and its finalizers: the first object whose finalizer is set and that
 * nothing keeps (no cell, no block the collection began with, no field of another block with a
 * finalizer set, or of its own when `ordered` (FUZZ_CAP_FIN_ORDERED), nothing below a finalizer
 * that ran in this collection): a finalizer the collection should have run. ORACLE_NONE if there
 * is none. */
oracle_obj oracle_model_fin_overdue(oracle_model *m, size_t skip, int ordered);
/* FUZZ_CAP_FIN_ORDERED: whether o is reachable from the fields of a block whose finalizer is set
 * (o's own included) and was set before the current collection began: an ordering collector
 * (Go's, gcfuzz's, bdwgc's GC_register_finalizer) does not finalize o then. A finalizer set
 * since (by a finalizer's body, or before a collection an allocation started) is left out: the
 * model cannot tell whether the collector saw it. */
int oracle_model_below_finalizers(oracle_model *m, oracle_obj o);
/* Every weak reference to o and every ephemeron keyed by o may be empty from now on: o's
 * finalizer runs, or a resurrection revives it (Lua clears them as it separates o). */
void oracle_model_excuse_weak(oracle_model *m, oracle_obj o);
/* Forget every revival: a full collection has run every finalizer that was due. */
void oracle_model_forget_revivals(oracle_model *m);
/* Payload bytes of the objects in the last KEPT set (each block: its words and the two of its
 * identity). */
size_t oracle_model_kept_bytes(const oracle_model *m);

#endif /* FUZZ_ORACLE_MODEL_H */
