/* The heap and its domains: the internal state every collector file shares.
 *
 * No hidden globals: everything the collector knows hangs off one gc_heap. Each mutator thread
 * allocates through its own gc_domain, which owns its pools and large blocks and keeps their
 * statistics; only the domain's own thread touches them, except while the world is stopped.
 * Pools and large blocks of terminated domains wait on the orphan lists until adopted.
 */
#ifndef GC_HEAP_H
#define GC_HEAP_H

#include <stdarg.h>
#include <stdint.h>

#include "gc/gc.h"
#include "gc/header.h"
#include "gc/platform.h"
#include "gc/sizeclass.h"

typedef struct gc_pool gc_pool;
typedef struct gc_large gc_large;

#define GC_MARK_PREFETCH 64 /* pointers in flight between finding and examining (mark.c) */

/* The three rotating colours. At every cycle, after marking:
 *   garbage <- unmarked   (what marking did not reach is dead)
 *   unmarked <- marked    (what it reached is live, and unmarked for the next cycle)
 *   marked <- garbage     (reusable: no block has this colour any more)
 * INV-COL-1: a cycle starts marking only when every domain has finished sweeping, so no block
 * carries the GARBAGE colour then; that is what makes the old GARBAGE value free to become
 * MARKED. Sweeping never repaints a live block. NOT_MARKABLE never rotates. */
typedef struct gc_colours {
  gc_header unmarked;
  gc_header marked;
  gc_header garbage;
} gc_colours;

/* The shape of a part of the heap (a domain's, the orphans', or a recount by invariants/).
 * INV-STATS-1: for each domain, these equal a recount of its pools and large blocks once it
 * has finished sweeping (checked by the swept pass). */
typedef struct gc_heap_stats {
  size_t pool_words;       /* whole pools owned */
  size_t pool_max_words;   /* maximum of pool_words */
  size_t pool_live_words;  /* whsize of every block in those pools */
  size_t pool_live_blocks; /* blocks in those pools */
  size_t pool_frag_words;  /* pool headers + wastage + (slot - whsize) of every block */
  size_t large_words;      /* whsize + large header of every large block */
  size_t large_max_words;  /* maximum of large_words */
  size_t large_blocks;     /* large blocks */
} gc_heap_stats;

void gc_heap_stats_add(gc_heap_stats *acc, const gc_heap_stats *s);

/* A domain's state, read by the collecting domain to know when the world has stopped.
 * INV-DOM-1: a domain's mutator touches the heap only while RUNNING; a CLAIMED domain stays
 * outside until the collection that claimed it ends; an ENLISTED one does collection work only.
 * Transitions: RUNNING <-> BLOCKING by the domain; BLOCKING -> CLAIMED and PARKED -> ENLISTED by
 * a leader (compare-and-swap, so a domain cannot leave at the same moment); CLAIMED -> BLOCKING by
 * the leader at the end; ENLISTED -> PARKED by the domain when its part is done. */
enum gc_domain_state {
  GC_DOMAIN_RUNNING,  /* a mutator thread runs it; it will reach a safepoint */
  GC_DOMAIN_BLOCKING, /* in a blocking section: outside the heap, roots frozen */
  GC_DOMAIN_CLAIMED,  /* was BLOCKING; a collection has stopped it there */
  GC_DOMAIN_PARKED,   /* stopped at a safepoint, waiting for the world to run again */
  GC_DOMAIN_ENLISTED, /* parked, and running a collection's program for its leader */
};

typedef struct gc_workbuf gc_workbuf;

/* One marker's private state (mark.c); each domain marks with its own. */
typedef struct gc_marker {
  gc_heap *heap;
  gc_workbuf *buf;                     /* the buffer this marker pushes to and pops from */
  size_t buf_entries;                  /* heap->work.buf_entries, at hand on the push path */
  gc_header unmarked, marked;          /* this cycle's colours, at hand on the mark path */
  gc_value prefetch[GC_MARK_PREFETCH]; /* pointers waiting for their header; 0: empty */
  unsigned prefetch_head;
  unsigned prefetch_count; /* non-zero entries in prefetch */
  unsigned pops;           /* for the periodic handoff check */
  int parallel;            /* other markers run: mark headers by compare-and-swap */
  size_t marked_words;     /* whsize of the blocks this marker marked */
  size_t marked_blocks;
} gc_marker;

struct gc_domain {
  gc_domain_head head; /* must stay first: gc.h's inline frame functions cast to it */
  gc_heap *heap;
  unsigned id;     /* 0 for the main domain, then in creation order */
  uintptr_t state; /* enum gc_domain_state; atomic */

  /* Pools by size class. INV-POOL-2: a pool of this domain is on exactly one of these lists;
   * avail pools have a free slot, full pools have none; unswept pools hold the previous cycle's
   * blocks, of which the GARBAGE-coloured are dead. */
  gc_pool *avail[GC_NUM_SIZECLASSES];
  gc_pool *full[GC_NUM_SIZECLASSES];
  gc_pool *unswept_avail[GC_NUM_SIZECLASSES];
  gc_pool *unswept_full[GC_NUM_SIZECLASSES];
  gc_large *swept_large;
  gc_large *unswept_large;
  gc_sizeclass next_to_sweep; /* lazy sweep cursor; GC_NUM_SIZECLASSES: pools done */
  int sweeping;               /* 1 from colour rotation until this domain swept everything */

  gc_heap_stats stats;
  uint64_t alloc_blocks, alloc_words; /* allocated by this domain */
  uint64_t freed_blocks, freed_words; /* freed by this domain's sweeping */
  size_t unpaced_words; /* allocated, not yet added to heap->alloc_words_since_cycle */

  gc_marker marker;
  int in_collection; /* re-entrancy guard: a finalizer or hook on this thread must not collect */
};

/* The pools, large blocks and statistics of terminated domains, waiting for adoption. Guarded
 * by heap->pool_lock. INV-ORPHAN-1: orphaned pools and large blocks were swept for the current
 * cycle (a domain finishes sweeping before it orphans, and every cycle adopts all orphans first),
 * and `stats` equals their recount. */
typedef struct gc_orphans {
  gc_pool *avail[GC_NUM_SIZECLASSES];
  gc_pool *full[GC_NUM_SIZECLASSES];
  gc_large *large;
  gc_heap_stats stats;
} gc_orphans;

/* The shared side of marking (workbuf.c). INV-WB-1: every work buffer is on the empty list, on
 * the full list, or held by exactly one marker; between marks all are on the empty list. */
typedef struct gc_mark_work {
  gc_mutex lock; /* guards the lists, idle and done */
  gc_workbuf *empty;
  gc_workbuf *full;
  uintptr_t full_count; /* buffers on the full list; atomic, read without the lock */
  uintptr_t idle;       /* markers waiting for a full buffer */
  uintptr_t done;       /* atomic: every marker was idle with no full buffer: marking is over */
  size_t markers;       /* markers in this mark */
  size_t buf_entries;   /* entries per buffer */
  size_t buf_count;     /* buffers in the arena */
  size_t empty_count;   /* buffers on the empty list */
  void *arena;          /* all buffers, one allocation */
  size_t arena_bsize;   /* its bytes: a new shape that fits in them reuses it */
  uintptr_t overflowed; /* atomic: a push found no room; flagged pools need re-darkening */
  uint64_t handoffs;    /* buffers split for idle markers, since the heap was created */
} gc_mark_work;

typedef struct gc_scanner {
  gc_scan_roots_fn fn;
  void *user;
} gc_scanner;

/* A growable array of pointers, for the root sets. */
typedef struct gc_ptr_vec {
  void **items;
  size_t count, capacity;
} gc_ptr_vec;

/* A Go-style finalizer record. */
typedef struct gc_finalizer {
  gc_value block;
  gc_finalizer_fn fn;
  void *user;
} gc_finalizer;

/* A growable array of finalizer records. */
typedef struct gc_finalizer_vec {
  gc_finalizer *items;
  size_t count, capacity;
} gc_finalizer_vec;

/* Pools in use, an open-addressing hash set keyed by pool address (blockindex.c). */
typedef struct gc_pool_set {
  uintptr_t *keys; /* 0: empty, 1: deleted, else a pool address */
  size_t capacity; /* a power of two */
  size_t used;     /* keys that are not empty (pools plus deleted marks) */
  size_t count;    /* pools */
} gc_pool_set;

/* Large blocks sorted by address, rebuilt when stale (blockindex.c). */
typedef struct gc_large_index {
  gc_large **sorted;
  size_t count, capacity;
  uintptr_t stale; /* atomic: set by any domain, cleared by a rebuild (world stopped) */
} gc_large_index;

/* A registered conservative range (conservative.c). */
typedef struct gc_range {
  const uintptr_t *start; /* first whole word */
  size_t wsize;           /* words scanned */
  const void *key;        /* the start the embedder registered, to unregister by */
} gc_range;

#define GC_PAUSE_RING GC_PAUSE_HISTORY

struct gc_heap {
  /* The parameters. INV-PARAM-1: cfg changes after creation only in gc_set_params, under
   * params_lock. The fields a running domain reads outside a stopped world (sweep_budget_words,
   * heap_limit_bytes, pools_per_batch, free_pools_kept; and trigger_words below) are written
   * and read as relaxed atomic words (gc_param_load/gc_param_store): each is a tuning value on
   * its own, publishing no other data, so a reader needs the value, not an ordering. The other
   * fields are read only with the world stopped, or by gc_set_params under the lock; its caller
   * runs a domain (gc.h), so no stop of the world overlaps a change. pool_cache never changes. */
  gc_config cfg;
  gc_mutex params_lock;
  gc_colours colours;
  gc_domain *main_domain;

  /* Domains. INV-STW-1: stw_lock is held by whoever stops the world or changes the domain list,
   * so the list is stable while the world is stopped. */
  gc_mutex stw_lock;
  gc_domain **domains;
  size_t domain_capacity;
  uintptr_t domain_count; /* atomic: read without the lock */
  unsigned next_domain_id;
  uintptr_t stw_requested; /* atomic: a collection wants every domain stopped */
  int stw_program;         /* enum gc_stw_program (stw.h), set before any domain is enlisted */
  size_t participants;     /* domains collecting in this stop: the parked ones and the leader */
  gc_barrier barrier;

  /* Pools not owned by any domain, ready for reuse, and orphans. Guarded by pool_lock. */
  gc_mutex pool_lock;
  gc_pool *free_pools;
  size_t free_pool_count;
  size_t mapped_pool_count; /* pools currently mapped from the OS (owned or free) */
  gc_orphans orphans;
  uintptr_t used_bytes; /* atomic: pool and large-block bytes owned (domains and orphans) */

  /* Roots. INV-ROOT-1: a global root slot appears at most once in global_roots. The root sets
   * change under roots_lock, from running domains; marking reads them with the world stopped. */
  gc_mutex roots_lock;
  gc_ptr_vec global_roots; /* gc_value * */
  gc_scanner *scanners;
  size_t scanner_count, scanner_capacity;
  gc_ptr_vec pinned; /* gc_value, as void *: the NOT_MARKABLE blocks (INV-MARK-2), fields roots */

  /* Conservative roots: ranges of raw words, resolved through the block index. */
  gc_range *ranges;
  size_t range_count, range_capacity;
  gc_pool_set pool_set;
  gc_large_index large_index;

  /* Finalizers (finalizer.c). INV-FIN-1: a block is in at most one of `finalizers` (set, its
   * fields are roots), `finq` (queued by a cycle that found it unreachable; the block itself is a
   * root until its finalizer has run) and `fin_running` (running now, also a root). */
  gc_finalizer_vec finalizers;
  gc_finalizer_vec finq;
  size_t finq_head; /* records before it have run (or are running) */
  gc_value fin_running;
  uintptr_t running_finalizers; /* atomic: a domain is in gc_run_finalizers */
  uint64_t finalizers_run;

  /* Marking (mark.c, workbuf.c). INV-MARK-1: a MARKED scanned block whose fields are not yet
   * scanned is in a work buffer, or in a pool or large block flagged for re-darkening
   * (work.overflowed is then set). A pointer in a marker's prefetch FIFO was found in a field or
   * root but its block not yet examined; marking ends only when buffers and FIFOs are empty.
   * INV-MARK-2: marking keeps nothing the roots do not reach. When it ends, a block is MARKED
   * only if the roots reach it through scanned fields: the root sets of gc.h (global roots,
   * every domain's frames, pinned blocks' fields, the finalizer roots of INV-FIN-1, the
   * scanners) and the conservative words, each resolved by gc.h's rule (a word into a live
   * block's header or fields; never into a free slot, a pool header, wastage, the padding after
   * a block, an unused slot above a pool's frontier or outside the heap). A block is
   * NOT_MARKABLE only while it is on `pinned`. (Concurrent marking will add one exception:
   * blocks allocated since marking began are born MARKED.) */
  gc_mark_work work;
  size_t marked_words;  /* whsize of the blocks marked this cycle, all markers */
  size_t marked_blocks; /* blocks marked this cycle */

  /* Pacing: a cycle starts when the domains allocated trigger_words since the last one. */
  uintptr_t alloc_words_since_cycle; /* atomic */
  size_t trigger_words;              /* atomic (INV-PARAM-1): gc_param_load/gc_param_store */
  size_t live_words_after_mark;
  uint64_t freed_words_at_last_cycle; /* for the trace line's "freed since last cycle" */
  int swept_reported;                 /* the SWEPT hook ran for the current cycle's sweep */

  /* Counters and pauses. */
  struct {
    uint64_t alloc_blocks, alloc_words, freed_blocks, freed_words;
  } retired; /* the activity counters of terminated domains */
  uint64_t cycles;
  uintptr_t alloc_failures; /* atomic */
  uint64_t mark_overflows;
  uint64_t pause_ns[GC_PAUSE_RING];
  unsigned pause_next;
  uint64_t last_pause_ns, max_pause_ns;
  uint64_t created_ns;
  uintptr_t fail_countdown; /* atomic: 0 off; n: the n-th allocation from now fails */
  uint64_t serial;          /* unique per heap in the process (the thread-local last error) */

  gc_hook_fn hook;
  void *hook_user;
  int warned_no_verifier; /* a hook point found a verify mask and no hook; under stw_lock */
};

/* A parameter running domains read while another may change it (INV-PARAM-1). The parameters
 * are size_t, the platform's atomic words uintptr_t: the same type on every target we build. */
_Static_assert(_Generic((size_t)0, uintptr_t : 1, default : 0), "size_t is not uintptr_t");
static inline size_t gc_param_load(const size_t *field) { return gc_atomic_load_relaxed(field); }
static inline void gc_param_store(size_t *field, size_t value) {
  gc_atomic_store_relaxed(field, value);
}

/* Record a misuse or failure; returns `err` so callers can `return gc_fail(...)`. */
gc_error gc_fail(gc_heap *heap, gc_error err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The colour name of `colour` in this cycle: "UNMARKED", "MARKED", "GARBAGE", "NOT_MARKABLE". */
const char *gc_colour_name(const gc_heap *heap, gc_header colour);

/* Call the verification hook, if any. With none installed and a non-empty verify mask, say once
 * per heap on stderr that nothing verifies. Called with stw_lock held. */
void gc_heap_call_hook(gc_heap *heap, gc_hook_point point);

/* Sum of every domain's stats and the orphans'. Exact when the world is stopped or the heap has
 * one domain; otherwise a snapshot of running counters. */
void gc_heap_sum_stats(gc_heap *heap, gc_heap_stats *out);

/* Bytes in use for the heap limit: pools and large blocks owned by domains or orphaned. */
static inline size_t gc_heap_used_bytes(gc_heap *heap) {
  return gc_atomic_load_relaxed(&heap->used_bytes);
}
static inline void gc_heap_account_bytes(gc_heap *heap, intptr_t delta_bytes) {
  gc_atomic_fetch_add(&heap->used_bytes, (uintptr_t)delta_bytes);
}

int gc_ptr_vec_push(gc_ptr_vec *v, void *item);
void gc_ptr_vec_free(gc_ptr_vec *v);

#endif /* GC_HEAP_H */
