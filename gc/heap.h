/* The heap and its domains: the internal state every collector file shares.
 *
 * No hidden globals: everything the collector knows hangs off one gc_heap. Each mutator thread
 * allocates through its own gc_domain, which owns its pools and large blocks; this issue runs one
 * domain per heap, but every list and statistic is already per domain.
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

struct gc_domain {
  gc_domain_head head; /* must stay first: gc.h's inline frame functions cast to it */
  gc_heap *heap;

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
  size_t alloc_words_since_cycle;     /* pacing: compared with heap->trigger_words */
};

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
  int stale;
} gc_large_index;

/* A registered conservative range (conservative.c). */
typedef struct gc_range {
  const uintptr_t *start; /* first whole word */
  size_t wsize;           /* words scanned */
  const void *key;        /* the start the embedder registered, to unregister by */
} gc_range;

#define GC_PAUSE_RING 256
#define GC_MARK_PREFETCH 64

struct gc_heap {
  gc_config cfg;
  gc_colours colours;
  gc_domain *main_domain;

  /* Pools not owned by any domain, ready for reuse. Guarded by pool_lock. */
  gc_mutex pool_lock;
  gc_pool *free_pools;
  size_t free_pool_count;
  size_t mapped_pool_count; /* pools currently mapped from the OS (owned or free) */

  /* Roots. INV-ROOT-1: a global root slot appears at most once in global_roots. */
  gc_ptr_vec global_roots; /* gc_value * */
  gc_scanner *scanners;
  size_t scanner_count, scanner_capacity;
  gc_ptr_vec pinned; /* gc_value, as void *: NOT_MARKABLE blocks, scanned as roots */

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
  int running_finalizers; /* re-entrancy guard of gc_run_finalizers */
  uint64_t finalizers_run;

  /* Marking. INV-MARK-1: every entry on the mark stack is a MARKED scanned block whose fields
   * are still to be scanned; a MARKED block neither on the stack nor scanned lives in a pool or
   * large block flagged for re-darkening (mark_overflowed is then set). A pointer in the prefetch
   * FIFO has been found in a field or root but its block not yet examined; marking ends only when
   * the stack and the FIFO are both empty. */
  gc_value *mark_stack;
  size_t mark_stack_capacity; /* entries; cfg.mark_stack_entries */
  size_t mark_sp;
  int mark_overflowed;
  gc_value prefetch[GC_MARK_PREFETCH]; /* pointers waiting for their header (mark.c), 0: empty */
  unsigned prefetch_head;
  unsigned prefetch_count; /* non-zero entries in prefetch */
  size_t marked_words;  /* whsize of the blocks marked this cycle */
  size_t marked_blocks; /* blocks marked this cycle */

  /* Pacing: a cycle starts when a domain allocated trigger_words since the last one. */
  size_t trigger_words;
  size_t live_words_after_mark;
  uint64_t freed_words_at_last_cycle; /* for the trace line's "freed since last cycle" */

  /* Counters and pauses. */
  uint64_t cycles;
  uint64_t alloc_failures;
  uint64_t mark_overflows;
  uint64_t pause_ns[GC_PAUSE_RING];
  unsigned pause_next;
  uint64_t last_pause_ns, max_pause_ns;
  uint64_t created_ns;
  uint64_t alloc_calls; /* for injected failure: allocations since the countdown was set */

  int in_collection; /* re-entrancy guard: finalizers and hooks must not collect */

  gc_error err;
  char err_msg[256];

  gc_hook_fn hook;
  void *hook_user;
};

/* Record a misuse or failure; returns `err` so callers can `return gc_fail(...)`. */
gc_error gc_fail(gc_heap *heap, gc_error err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The colour name of `colour` in this cycle: "UNMARKED", "MARKED", "GARBAGE", "NOT_MARKABLE". */
const char *gc_colour_name(const gc_heap *heap, gc_header colour);

/* Call the verification hook, if any. */
void gc_heap_call_hook(gc_heap *heap, gc_hook_point point);

/* Sum of every domain's stats (and, later, the orphans'). */
void gc_heap_sum_stats(gc_heap *heap, gc_heap_stats *out);

/* Bytes in use for the heap limit: pools owned by domains plus large blocks. */
size_t gc_heap_used_bytes(gc_heap *heap);

int gc_ptr_vec_push(gc_ptr_vec *v, void *item);
void gc_ptr_vec_free(gc_ptr_vec *v);

#endif /* GC_HEAP_H */
