/* The oracle tests' reference backend (test-only): a precise, non-moving mark-sweep collector
 * over malloc'd blocks, written to be obviously right, with one slip at a time switched on by
 * ref_sabotage, each a mistake a real collector makes.
 *
 * Cells are an array of block pointers; a collection marks from the cells (every bank's: its
 * roots are heap-wide) and the pinned blocks through scanned fields and ephemeron data whose key
 * is marked (to a fixpoint), never through weak slots; then every unmarked block with a finalizer
 * set is queued and marked from (resurrected for its finalizer), weak slots and ephemerons whose
 * target or key is unmarked are cleared, and the unmarked blocks are swept onto a free list:
 * their identity words poisoned, their memory reused by later allocations, so a block freed too
 * early reads back as some other block. Memory goes back to malloc only at destroy.
 *
 * Three tables: ref_backend (every capability but domains), ref_min() (only the core
 * ops), and ref_threads() (domains on threads of their own: FUZZ_CAP_THREADS, its
 * collections passing a scheduling point as they begin and end, so other threads' ops land
 * inside them, and taking a lock of gc/platform.h, so the scheduler sees it).
 */
#ifndef FUZZ_ORACLE_REF_BACKEND_H
#define FUZZ_ORACLE_REF_BACKEND_H

#include "fuzz/backend/backend.h"

typedef enum sabotage {
  SAB_NONE,
  SAB_SCAN_SHORT,       /* marking skips the last field of a block: a reachable block is freed */
  SAB_STORE_INT_FIELD,  /* store_int writes the next field (an off-by-one in the index) */
  SAB_FIN_FLAG_KEPT,    /* a finalizer that ran stays set: queued again next cycle */
  SAB_FIN_REACHABLE,    /* every block with a finalizer is queued, marked or not */
  SAB_UNFIN_NOOP,       /* fin_clear says yes but leaves the finalizer set */
  SAB_FIN_NEVER_RUN,    /* run_finalizers runs nothing; the queue only grows */
  SAB_UNFIN_ANSWER,     /* fin_clear answers "none" (tests the wrong state) */
  SAB_WEAK_EARLY,       /* weak slots cleared after marking the roots, before tracing */
  SAB_WEAK_FLAG,        /* a cleared weak reference answers its old target once it lives again */
  SAB_EPHE_AS_WEAK,     /* an ephemeron's datum is not traced through it: dropped, cleared */
  SAB_SWEEP_SKIPS_HEAD, /* the sweep never looks at the newest block */
  SAB_WALK_SKIPS_HEAD,  /* the walk never reports the newest block */
  SAB_BYTES_NOT_FREED,  /* live_bytes never subtracts what the sweep freed */
  SAB_FAIL_IGNORED,     /* fail_after does nothing */
  SAB_WEAK_LATE,        /* weak references cleared only after the finalizers' marking */
  SAB_FAIL_TWICE,       /* fail_after(n) fails the n-th allocation and the one after it */
  SAB_COUNT_NOT_FREED,  /* the sweep forgets the block counter: the deep check sees it */
  SAB_ALLOC_NOTICES,    /* the allocator sees a slip of its own as it happens (events.finding) */
  SAB_PIN_NOT_ROOT,     /* marking forgets the pinned blocks: one held only by its pin is freed */
  SAB_UNPIN_ANSWER,     /* unpin answers "was pinned" for a block that was not */
  SAB_FIN_UNORDERED,    /* the fields of blocks with finalizers are not marked first */
  SAB_MISUSE_ACCEPTED,  /* pinning an empty cell succeeds */
  SAB_CORRUPT_UNSEEN,   /* the corruption writes a counter the deep check never reads */
  SAB_CORRUPT_KEPT,     /* the corruption's repair forgets to write the counter back */
  SAB_SET_IGNORED,      /* weak_set and ephe_set store nothing: the old target, key, datum stay */
  SAB_ONE_THREAD_COUNT, /* the slips above: oracle_test.c; below: oracle_threads_test.c */
  SAB_PARKED_BANK_SKIPPED = SAB_ONE_THREAD_COUNT, /* marking skips the banks of the domains
                                                   * whose threads have left (parked) */
  SAB_COLLECT_LOCK_KEPT, /* a collection from a domain other than d0 keeps the heap's lock */
  SAB_COUNT
} sabotage;

/* The slip switched on (SAB_NONE: the honest collector). */
extern sabotage ref_sabotage;

/* A slip's test: a program that must make the oracle report `kind` first with the slip on, and
 * run clean with it off. */
typedef struct ref_slip_case {
  sabotage mode;
  const char *name;
  const char *kind;
  const char *program;
} ref_slip_case;

extern const fuzz_backend ref_backend;
/* Only the core ops (PRECISE and WALK). */
const fuzz_backend *ref_min(void);
/* ref_backend with its domains on threads of their own (FUZZ_CAP_THREADS). */
const fuzz_backend *ref_threads(void);

#endif /* FUZZ_ORACLE_REF_BACKEND_H */
