/* The model's internals, shared by model.c (the shadow graph: objects, fields, roots, finalizers
 * and reachability) and model_check.c (comparing it with the heap). Not for drivers: model.h.
 *
 * Field encoding. The model keeps one word per field. In a scanned object the word has the shape
 * of a gc_value with ids instead of addresses: 0 is NULL, an odd word is the immediate itself,
 * an even non-zero word is (target id + 1) << 1. In a raw or custom object it is the raw word.
 *
 * Object states. LIVE: allocated, and either kept by the last cycle or allocated since.
 * DOOMED: unreachable when the current cycle's marking began (and not rescued by a conservative
 * word when it ended); its block must be gone when that cycle's sweep ends, at which point the id
 * is released (FREE) for reuse.
 *
 * The snapshot (INV-BARRIER-1 in gc/heap.h, as an embedder sees it). A cycle keeps what was
 * reachable when its marking began and what was allocated while it marked (born MARKED); with
 * incremental marking what the mutator drops in between is floating garbage, kept by this cycle
 * and freed by the next if still unreachable then. The model records the first set at
 * GC_HOOK_MARK_START and the second as it records allocations (gc_mobj.kept_mark ==
 * gc_model.mark_serial), and decides at GC_HOOK_MARK_DONE: kept = that set, plus what the roots
 * reach now (the termination stop scans the conservative ranges again, so a word written while
 * marking may still rescue a block the start found dead), closed under pointer fields. With
 * stop-the-world marking the two points are one stop and the set is exactly what the roots reach.
 */
#ifndef INVARIANTS_MODEL_GRAPH_H
#define INVARIANTS_MODEL_GRAPH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "gc/heap.h"
#include "invariants/addrmap.h"
#include "invariants/heapindex.h"
#include "invariants/model.h"
#include "invariants/report.h"

enum gc_mobj_state { GC_MOBJ_FREE, GC_MOBJ_LIVE, GC_MOBJ_DOOMED };

/* A Go-style finalizer (gc_finalizer_set) through the model: SET while the collector holds the
 * record (the object's fields are roots); QUEUED when a mark found the object unreachable (it is
 * a root itself until the finalizer runs); RUNNING while its finalizer runs (a root, as the
 * collector's fin_running; a finalizer that sets one on its own block again makes it SET, and it
 * stays a root until it returns: gc_model.running); RAN once it ran (an ordinary object again
 * from the next mark on). */
enum gc_mobj_fin { GC_MFIN_NONE, GC_MFIN_SET, GC_MFIN_QUEUED, GC_MFIN_RAN, GC_MFIN_RUNNING };

/* How a walk reached an object that has no referrer (gc_mobj.via). */
#define GC_MVIA_PINNED       UINT32_MAX       /* a pinned object */
#define GC_MVIA_QUEUED       (UINT32_MAX - 1) /* an object whose finalizer is queued */
#define GC_MVIA_CONSERVATIVE (UINT32_MAX - 2) /* a word of a conservative range points into it */
#define GC_MVIA_RUNNING      (UINT32_MAX - 3) /* an object whose finalizer is running */
#define GC_MVIA_SNAPSHOT     (UINT32_MAX - 4) /* reachable when marking began, or born since */

/* A conservative range (gc_model_range_add): the driver's words, resolved by the model itself. */
typedef struct gc_mrange {
  uintptr_t *words;
  size_t count;
} gc_mrange;

/* One object's block, header included, as an address interval [lo, hi): what a conservative
 * word must fall in to keep the object alive. */
typedef struct gc_mspan {
  uintptr_t lo, hi;
  gc_model_id id;
} gc_mspan;

enum { GC_MRANGES_MAX = 16 };

typedef struct gc_mobj {
  gc_value val; /* the block; 0 for a free id */
  size_t wsize;
  unsigned tag;
  uint8_t state;  /* enum gc_mobj_state */
  uint8_t reused; /* a later allocation returned this address: the block was freed */
  uint8_t lost;   /* reported dead once; not compared again */
  uint8_t pinned;
  uint8_t fin;          /* enum gc_mobj_fin */
  uint32_t finalized;   /* times a custom block's finalize function ran on the block */
  uint64_t fin_cycle;   /* GC_MFIN_QUEUED: the cycle whose mark queued it */
  uint32_t revive_root; /* the root its Go-style finalizer stores it into, or GC_MNO_ROOT */
  uint64_t fin_tag;     /* non-zero: its finalizer calls the driver's callback with it */
  uint32_t epoch;       /* the last reachability walk that reached it */
  gc_model_id parent;   /* how that walk reached it: the referrer, or GC_MODEL_NONE from a root */
  gc_model_id holder;   /* parent NONE: the finalizable object whose field held it, or NONE */
  uint32_t via;    /* field of parent (or holder), root index, GC_MVIA_PINNED or GC_MVIA_QUEUED */
  uint32_t rooted; /* model roots holding it */
  uint32_t kept_mark; /* == gc_model.mark_serial: reachable when that mark began, or allocated
                       * while it marked: this cycle keeps it (the snapshot, top of this file) */
  gc_value moved_to;  /* inside gc_model_follow_compaction only: where its block went */
  uintptr_t *fields;  /* wsize words, encoded (top of this file) */
  /* Scanned objects: wsize words, what the block's fields must hold as of the stores that made
   * them (a pointer field: its target's val then), so a check compares the block in one go.
   * It equals what the encoded fields decode to now (expected_field in model_check.c) for every
   * object a check compares, unless m->images_exact was cleared: see there. NULL: unscanned. */
  uintptr_t *image;
  size_t fields_cap; /* words allocated at `fields` (fields and image); kept when the id is
                       * released, so an id taken again reuses them (ids are recycled
                       * last-released first) */
} gc_mobj;

typedef struct gc_mroot {
  gc_model_id obj;
  gc_value *slot; /* the model's own slot, or a driver's slot (gc_model_root_bind) */
  int retired;    /* gc_model_root_retire: empty, and stays empty until the next attach */
} gc_mroot;

/* A violation noticed between checks (in an allocation or a finalizer), reported at the next. */
typedef struct gc_mpending {
  gc_verify_kind kind;
  gc_value block;
  char what[200];
} gc_mpending;

enum { GC_MPENDING_MAX = 16 };
/* Finalizers running at once, as the model saw them start: one, unless the collector nests
 * them (the driver reports that; the model keeps this many of them roots). */
enum { GC_MRUNNING_MAX = 8 };
#define GC_MNO_ROOT UINT32_MAX

struct gc_model {
  gc_heap *heap;
  gc_mobj *objs;
  size_t obj_count, obj_capacity; /* ids in use are < obj_count */
  size_t obj_high; /* objs[0..obj_high) have valid field buffers (fields, fields_cap) */
  gc_model_id *free_ids;
  size_t free_count, free_capacity;
  gc_addrmap by_val; /* block val -> id */
  gc_mroot *roots;
  gc_value *own_slots;
  size_t root_count;
  /* What each root slot must hold: the val of roots[r].obj (0 for none), written by
   * gc_model_root_set, valid while roots_exact (a rooted object is never released, which is what
   * keeps it so; should one be, roots_exact is cleared and the checks decode every root). */
  gc_value *root_want;
  int roots_exact;
  /* Roots whose slots are consecutive words, as runs: run k is roots [root_runs[k],
   * root_runs[k + 1]); a check compares a run's slots with root_want in one go. Recomputed after
   * a root is bound elsewhere. */
  size_t *root_runs;
  size_t root_run_count;
  int root_runs_valid;
  /* 1 while every scanned object a check can reach has an image equal to its decoded fields.
   * That holds because an object a walk reaches only points to objects the same walk reaches,
   * which are never released, so no target of a pointer field changes its val. Only a cycle
   * that broke the model's own assumptions clears it (for the model's life): a doomed block
   * that was not freed (model.not-freed) and is live again, a walk or a doomed list cut short
   * by out of memory. Then checks decode every field as they always could. */
  int images_exact;
  gc_domain *dom; /* the domain whose stores the model makes (gc_model_set_domain) */
  /* The snapshot of the cycle marking now (top of this file). mark_serial counts the mark starts
   * the model saw; marking is 1 from a MARK_START check to the MARK_DONE check of the same cycle
   * (start_cycle), and start_gen is `gen` right after the MARK_START walk: unchanged at MARK_DONE
   * (a stop-the-world mark, or nothing mutated meanwhile), the kept set is what the roots reach. */
  uint32_t mark_serial;
  int marking;
  uint64_t start_cycle, start_gen;
  gc_model_id *doomed; /* objects doomed at the last MARK_DONE */
  size_t doomed_count, doomed_capacity;
  uint64_t doomed_cycle;
  uint32_t epoch;
  gc_model_id *stack;
  size_t stack_capacity;
  gc_heapindex index; /* for checks called directly (the verifier lends its own); kept for its
                       * memory */
  gc_mpending pend[GC_MPENDING_MAX];
  size_t pend_count, pend_dropped;
  /* INV-MODEL-NOTE-1: finalize notes (gc_model_note_finalized: each object's `finalized`,
   * finalized_notes, and the pending reports a note adds) are written under note_lock. Custom
   * blocks are finalized as they are swept, and the domains of a stopped world sweep in
   * parallel, so two sweepers may note at once; everything else in the model is one thread's at
   * a time, and the checks read the notes at hook points, after the sweepers' barrier. A plain
   * pthread mutex, not gc_mutex: the harness's own lock adds no scheduling point to the
   * interleavings the controlled scheduler explores (it never preempts inside a note). */
  pthread_mutex_t note_lock;
  /* What makes a check cost what the live graph costs, not a fixed price per hook point: */
  size_t own_bound;       /* roots still in the model's own slots: its root scanner visits these */
  size_t pinned_count;    /* objects with `pinned` set */
  size_t fin_count;       /* objects with a Go-style finalizer state other than NONE */
  size_t finalized_notes; /* finalize notes since the last check of finalized live blocks */
  /* The reachability cache. `gen` counts every change to what reachability depends on (roots,
   * pointer fields, objects coming or going, pins, finalizer states); the epoch marks are the
   * reachable set of the graph at generation reach_gen. gc_model_reach_current recomputes only
   * when the two differ, so the checks of one hook point, and of points with no mutation between
   * them, share one walk. */
  uint64_t gen, reach_gen;
  size_t reach_count; /* what the walk of reach_gen returned */
  int reach_valid;
  int reach_incomplete;          /* the stack could not grow during the walk: do not reuse it */
  int attached;                  /* registered with m->heap (gc_model_attach) */
  uint64_t compactions_followed; /* heap->compact.count when gc_model_follow_compaction last ran */
  /* Conservative ranges, and the span index a walk resolves their words through (rebuilt by
   * every walk that finds a non-zero word: objects come and go between walks). */
  gc_mrange ranges[GC_MRANGES_MAX];
  size_t range_count;
  gc_mspan *spans;
  size_t span_capacity;
  /* The objects whose finalizers are running, innermost last: roots (as the collector's
   * fin_running), and while there are any, a mark that finds a finalizer still queued is no
   * violation: the queue is being run (gc_finalizer_fn's contract, gc/gc.h). */
  gc_model_id running[GC_MRUNNING_MAX];
  size_t running_depth;
  gc_model_fin_callback fin_callback; /* gc_model_set_fin_callback */
  void *fin_callback_user;
};

/* Something reachability depends on changed. */
static inline void gc_model_touch(gc_model *m) { m->gen++; }

/* ---- Encoding and small helpers ------------------------------------------------------------ */

static inline uintptr_t gc_model_enc_ptr(gc_model_id t) { return ((uintptr_t)t + 1) << 1; }
static inline int gc_model_is_ptr(uintptr_t f) { return f != 0 && (f & 1u) == 0; }
static inline gc_model_id gc_model_dec_ptr(uintptr_t f) { return (gc_model_id)((f >> 1) - 1); }

/* The object `id`, or NULL for an id that names none (free or out of range). */
static inline gc_mobj *gc_model_obj(const gc_model *m, gc_model_id id) {
  return id < m->obj_count && m->objs[id].state != GC_MOBJ_FREE ? &m->objs[id] : NULL;
}
/* The object `id` if the driver may use it (LIVE), else NULL. */
static inline gc_mobj *gc_model_live_obj(const gc_model *m, gc_model_id id) {
  gc_mobj *o = gc_model_obj(m, id);
  return o != NULL && o->state == GC_MOBJ_LIVE ? o : NULL;
}

/* Grow *items (of item_bsize each) to hold `need`; returns 0 when out of memory. */
int gc_model_grow_array(void **items, size_t *capacity, size_t need, size_t item_bsize);
/* Remember a violation seen outside a check (an allocation, a finalizer) for the next check. */
void gc_model_add_pending(gc_model *m, gc_verify_kind kind, gc_value block, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Release a freed object's id for reuse (its address mapping too, if still its own). */
void gc_model_release_id(gc_model *m, gc_model_id id);

/* Reachability, with a new epoch per walk (gc_mobj.epoch == m->epoch: reached). */
size_t gc_model_reach_all(gc_model *m);
/* The same, reusing the last walk when nothing it depends on changed since (m->gen). The result
 * (set, paths and count) is the one gc_model_reach_all would compute now. */
size_t gc_model_reach_current(gc_model *m);
/* Mark `id` reached (by parent's field `via`, or from a root) and push it on m->stack at *sp. */
int gc_model_reach_visit(gc_model *m, size_t *sp, gc_model_id id, gc_model_id parent,
                         gc_model_id holder, uint32_t via);
/* Everything reachable from the objects on the stack; returns how many were popped. */
size_t gc_model_reach_drain(gc_model *m, size_t sp);

/* gc_model_check with an index the caller built for this heap at this point (the verifier
 * shares one index between the passes of a point). */
size_t gc_model_check_with_index(gc_model *m, gc_hook_point point, gc_verify_reports *out,
                                 gc_heapindex *ix);

#endif /* INVARIANTS_MODEL_GRAPH_H */
