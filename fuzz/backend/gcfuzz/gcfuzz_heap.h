/* The gcfuzz backend's heap (fuzz/backend/gcfuzz): private to its files, each one concept:
 *
 *   gcfuzz_backend.c  the table: blocks, cells, collections, finalizers, domains, the walk
 *   gcfuzz_misuse.c   the misuses gcfuzz's API refuses (backend.h: misuse)
 *   gcfuzz_corrupt.c  the corruption catalogue of invariants/ as the check of the deep check
 *                     (backend.h: corrupt), and the hook that plants one at a mark-done point
 */
#ifndef FUZZ_BACKEND_GCFUZZ_GCFUZZ_HEAP_H
#define FUZZ_BACKEND_GCFUZZ_GCFUZZ_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "gc/gc.h"
#include "invariants/heapindex.h"
#include "invariants/verify.h"

struct gcfuzz_corrupt_op;

enum { IDENT_SCAN_FIELDS = 4, IDENT_RAW_WORDS = 2 };

/* A finalizer's record: the collector hands it back as the finalizer's `user`. */
typedef struct fin_record {
  struct fuzz_bheap *h;
  uint64_t token;
} fin_record;

/* Records come in chunks that never move while the heap lives: a queued finalizer holds its
 * record's address. */
enum { FIN_CHUNK = 64 };
typedef struct fin_chunk {
  struct fin_chunk *next;
  size_t used;
  fin_record records[FIN_CHUNK];
} fin_chunk;

struct fuzz_bheap {
  gc_heap *heap;
  gc_domain *dom; /* one-thread heaps: the domain the calls run on, doms[on] (dom_of) */
  int threaded;   /* cell banks, one a domain, each on its own thread (thread_on) */
  /* Domains (backend.h), on the caller's one thread as the graph target runs them: the one the
   * calls run on runs, every other waits in a blocking section, so a collection it starts stops
   * them without waiting and scans their frames. doms[0] is the main domain, which holds the
   * cells' frame. */
  gc_domain *doms[FUZZ_DOMAINS];
  unsigned char blocked[FUZZ_DOMAINS]; /* in a blocking section by domain_block */
  unsigned on;
  gc_verifier *verifier;
  gc_frame frames[FUZZ_DOMAINS]; /* bank d's, pushed on domain d */
  unsigned char pushed[FUZZ_DOMAINS];
  gc_value *cells; /* cfg.cells + 1: the last is FUZZ_CELL_SELF */
  size_t ncells;
  size_t bank_cells; /* cells a bank */
  fuzz_backend_events events;
  size_t markslice_words; /* the program's own mark slice, which a budgeted slice puts back */
  /* The injected failure (backend.h: fail_after): allocations until it, counted here too,
   * because none made inside a finalizer may count and gcfuzz's own countdown counts every
   * one: a finalizer runs with the countdown disarmed, and it is armed again after with what
   * is left. */
  unsigned fail_left;
  int fin_depth;
  fin_chunk *fins;    /* one record per fin_set (a block may be set again), newest chunk first,
                       * freed at destroy */
  gc_heapindex index; /* the walk's: every pool and large block the owners hold */
  /* compact's caller (backend.h), told of every block that moved, at GC_HOOK_COMPACTED (the
   * collector's table of moves, gc_compact_moves, is readable there only); NULL outside a
   * compact call. One a domain, the calling one's: a compaction's hook runs on its leader, the
   * thread that called gc_compact, and on a threaded heap one compact call may park (finishing
   * the marking, waiting for the collection lock) while another domain's call runs and
   * returns: a field they shared would be cleared under the first, whose moves then went
   * unreported. */
  struct {
    void (*fn)(void *user, uint64_t id, uintptr_t start);
    void *user;
  } moved[FUZZ_DOMAINS];
  /* A corruption armed for the mark-done point of its own collection (gcfuzz_corrupt.c). */
  struct gcfuzz_corrupt_op *corrupt_armed;
};

/* The calling thread's domain on a threaded heap (backend.h: domain_attach). A process runs one
 * threaded heap at a time (fuzz/sched: one scheduled run at a time); every thread starts on
 * domain 0, as the thread that makes the heap is. */
extern _Thread_local unsigned gcfuzz_thread_on;

/* The domain the calls run on, and its number. */
static inline gc_domain *gcfuzz_dom(fuzz_bheap *h) {
  return h->threaded ? h->doms[gcfuzz_thread_on] : h->dom;
}
static inline unsigned gcfuzz_on(const fuzz_bheap *h) {
  return h->threaded ? gcfuzz_thread_on : h->on;
}

/* gcfuzz_misuse.c */
fuzz_misuse_answer gcfuzz_misuse(fuzz_bheap *h, const char *name, char *what, size_t len);

/* gcfuzz_corrupt.c */
fuzz_plant_result gcfuzz_corrupt(fuzz_bheap *h, const char *name, size_t cell, unsigned n,
                                 fuzz_finding *found);
/* The heap's hook (gc_set_hook): a corruption armed is planted at its mark-done point, then the
 * passes due at the point run into the verifier's reports. */
void gcfuzz_hook(gc_heap *heap, gc_hook_point point, void *user);
/* At GC_HOOK_COMPACTED of a compact call, on its thread: tell its caller where each moved block
 * went. */
void gcfuzz_report_moves(fuzz_bheap *h);

#endif /* FUZZ_BACKEND_GCFUZZ_GCFUZZ_HEAP_H */
