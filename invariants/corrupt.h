/* The corruption catalogue: violations planted on purpose, each one that exactly one verification
 * pass must report, and undone exactly. The passes' own tests break a heap in one way each and
 * throw it away; the catalogue plants the same breakings in the middle of a running program
 * (the fuzz driver's corrupt op) and puts every byte back, so that a pass that stopped seeing
 * what it checks is caught under the fuzzer too.
 *
 * A corruption is named after the kind it must produce (invariants/report.h), "reach.zero-header",
 * or kind/variant when several corruptions produce one kind ("reach.bad-colour/marked"). Each one
 * needs something of its operands (a block in the slot, a scanned field N, a pool, a live model
 * object) and of the heap (its pass in the verify mask, sweeping finished, nothing pending in the
 * model); gc_corruption_prepare says whether it can apply now, gc_corruption_plant writes it
 * (every byte through the undo log), gc_corruption_check runs its pass directly into the caller's
 * reports, gc_corruption_undo writes every logged byte back, newest first. What each one writes
 * is in corrupt.c, with the breaking test it is modelled on.
 *
 * The catalogue reaches into the collector's and the model's internals as the breaking tests do;
 * it knows nothing of the fuzz driver. */
#ifndef INVARIANTS_CORRUPT_H
#define INVARIANTS_CORRUPT_H

#include <stddef.h>

#include "gc/gc.h"
#include "invariants/heapindex.h"
#include "invariants/model.h"
#include "invariants/model_graph.h"
#include "invariants/pass.h"
#include "invariants/report.h"
#include "invariants/verify.h"

/* Every location a corruption writes, and every location its pass's check may write (a model
 * check notes what it reported), with the bytes it held before. The sizes fit the largest
 * corruption (a model pending record and a few words) with room to spare. */
enum { GC_CORRUPT_UNDO_ENTRIES = 8, GC_CORRUPT_UNDO_BSIZE = 512 };

typedef struct gc_corrupt_undo {
  struct {
    void *addr;
    size_t bsize;
    size_t at; /* offset of the saved bytes in `saved` */
  } entries[GC_CORRUPT_UNDO_ENTRIES];
  size_t count;
  size_t used_bsize;
  unsigned char saved[GC_CORRUPT_UNDO_BSIZE];
} gc_corrupt_undo;

/* Where the victim block lives: its owner (a domain or the orphans) and the list link that holds
 * its pool or large block, for the corruptions of pools, lists and statistics. */
typedef struct gc_corrupt_place {
  gc_verify_owner owner;
  gc_pool *pool; /* the pool holding the victim, or NULL for a large block */
  gc_large *large;
  int list; /* GC_VERIFY_AVAIL.. for the pool, GC_VERIFY_SWEPT_LARGE.. for the large block */
  gc_pool **pool_link; /* the link that points at the pool on its list */
  gc_large **large_link;
} gc_corrupt_place;

/* One corruption at one point of a program. */
typedef struct gc_corruption {
  /* Set by the caller. */
  size_t which; /* the catalogue's row: gc_corruption_find */
  gc_heap *heap;
  gc_model *model;       /* the model the heap runs with (every allocation through it), or
                          * NULL: then the corruptions that need a model object do not apply */
  gc_verifier *verifier; /* installed on the heap, the model set: its memory runs the pass */
  gc_domain *dom;        /* the running domain */
  gc_value *slots;       /* the running mutator's root slots; the victim is slots[slot] */
  size_t slot_count;
  int slot, n; /* the operands: a slot, and N (a field, an entry, a statistic...) */
  /* Set by gc_corruption_prepare. */
  gc_value victim;     /* the block in the slot, or 0 */
  gc_model_id obj;     /* its model object, or GC_MODEL_NONE */
  gc_mobj *o;          /* that object's record, when the corruption needs one */
  gc_corrupt_place at; /* where the victim lives, when it is a block */
  gc_corrupt_undo undo;
  gc_verify_fixed moved_fixed; /* the block a planted moved record says had to stay */
  /* Set by gc_corruption_plant: the first word it wrote, as it was and as planted (addr NULL if
   * no word-sized write changed anything), so that a description made after the undo, or only
   * when something failed, still says what was planted. */
  struct {
    const void *addr;
    uintptr_t before, now;
  } written;
} gc_corruption;

/* The catalogue: its rows, each one's name ("kind" or "kind/variant", into buf; returns buf), the
 * row of a name (len bytes; -1 if none), the kind it must produce (invariants/kinds.h), and that
 * kind's pass, which checks it ("reach", "swept", "checkmark", "model"). */
size_t gc_corruption_count(void);
const char *gc_corruption_name(size_t which, char *buf, size_t bsize);
long gc_corruption_find(const char *name, size_t len);
gc_verify_kind gc_corruption_kind(size_t which);
const char *gc_corruption_pass(size_t which);
/* The hook point its pass is run as: one of the points where the kind's pass runs
 * (gc/passes.h). */
gc_hook_point gc_corruption_point(size_t which);

/* Checkmark compares the collector's marks with its own, so it means something only right after a
 * mark: such a corruption is prepared, planted, checked and undone at a collection's mark-done
 * point (GC_HOOK_MARK_DONE), every other one between two operations of the program. */
int gc_corruption_at_mark_done(size_t which);

/* Resolve the operands and check what the corruption needs of them and of the heap; 1 when it can
 * be planted now (and its pass, run now, sees exactly the heap as it is). */
int gc_corruption_prepare(gc_corruption *c);
/* Write the corruption, every write through c->undo: 1 when planted, 0 when it cannot apply here
 * (then only bytes kept for the check are logged, none written: undo anyway). */
int gc_corruption_plant(gc_corruption *c);
/* Run the one pass that must see it, in the verifier's memory, into `out`; returns the reports. */
size_t gc_corruption_check(gc_corruption *c, gc_verify_reports *out);
/* Write back every logged byte, newest first: the heap and the model are exactly as before
 * (the pass's own notes in the model included). */
void gc_corruption_undo(gc_corruption *c);
/* "on block 0x... (word at 0x...: 0x900 -> 0x0)": the victim and the first word written, as
 * gc_corruption_plant left it (valid after the undo too). */
void gc_corruption_describe(const gc_corruption *c, char *buf, size_t bsize);

#endif /* INVARIANTS_CORRUPT_H */
