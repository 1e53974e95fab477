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
 * INV-DOM-1: a domain's mutator touches the heap only while RUNNING; a CLAIMED or HELD domain
 * stays where it is until the leader that took it (a stop, or the sweep before one) puts it
 * back, and its thread does nothing to the heap meanwhile (the leader does its part); an
 * ENLISTED one does collection work only. Transitions: RUNNING <-> BLOCKING and RUNNING -> PARKED by the domain; BLOCKING ->
 * CLAIMED, PARKED -> ENLISTED and PARKED -> HELD by a leader (compare-and-swap, so a domain
 * cannot leave at the same moment); CLAIMED -> BLOCKING and HELD -> PARKED by the leader at the
 * end; ENLISTED -> PARKED by the domain when its part is done; PARKED -> RUNNING by the domain
 * (compare-and-swap, once no stop is requested). */
enum gc_domain_state {
  GC_DOMAIN_RUNNING,  /* a mutator thread runs it; it will reach a safepoint */
  GC_DOMAIN_BLOCKING, /* in a blocking section: outside the heap, roots frozen */
  GC_DOMAIN_CLAIMED,  /* was BLOCKING; a collection has stopped it there */
  GC_DOMAIN_PARKED,   /* stopped at a safepoint, waiting for the world to run again */
  GC_DOMAIN_ENLISTED, /* parked, and running a collection's program for its leader */
  GC_DOMAIN_HELD,     /* parked, in a stop that needs nothing of its thread (stw.h) */
};

/* A domain the stop has taken without its thread: CLAIMED or HELD. The leader does what the
 * stop needs of it (its sweep, its frames), as its thread would. */
static inline int gc_domain_state_taken(uintptr_t state) {
  return state == GC_DOMAIN_CLAIMED || state == GC_DOMAIN_HELD;
}

typedef struct gc_workbuf gc_workbuf;

/* The ephemerons and weak references (gc.h) of one owner, a domain or the orphans, chained
 * through their link word (field GC_WEAK_LINK, raw, the collector's; as OCaml chains its
 * ephemerons), newest first (ephemeron_mark.c): making one costs no allocation besides the block, and
 * moving a list to another owner is a splice. Marking finds them here, not through fields: they
 * are leaves for the marker (gc_tag_is_scanned is 0), so an ephemeron is never traced through
 * its key.
 * INV-EPHE-3: every ephemeron and weak reference alive is on exactly one list (its allocating
 * domain's, the orphans' once that domain terminated, the adopting domain's after), and every
 * entry is a block of a weak tag that was alive at the last clean phase or was made since: the
 * clean phase drops the dead ones before the sweep can free them. A domain's list is touched by
 * its own thread (allocation, its mark slices) and by a stopped world's leader; the orphans' under
 * stw_lock (a terminating domain holds it, and so does every stop). */
typedef struct gc_ephe_list {
  gc_value head;                /* the newest block, 0 when empty */
  size_t ephemerons, weak_refs; /* blocks on it of each tag */
} gc_ephe_list;

/* The work of one mark, counted per block or per buffer (never per field) by each marker and
 * summed by the leader at the end of the mark (gc_mark_finish). The bounds they obey are stated
 * at gc_cycle_work below. Each costs one add where it is counted: marking a scanned block
 * (mark_block), scanning one (scan_fields), a refused push (note_overflow), a pool or large block
 * re-darkened, a re-darkening pass. */
typedef struct gc_mark_counts {
  size_t scan_blocks_marked; /* blocks of a scanned tag this mark coloured MARKED */
  size_t scan_fields_marked; /* their fields (wsize) */
  size_t blocks_scanned;     /* scan_fields calls: from a work buffer or by re-darkening */
  size_t fields_scanned;     /* the fields those calls read */
  size_t overflows;          /* pushes that found no room in the mark stack */
  size_t flagged;            /* pools and large blocks whose REDARKEN flag a push set (0 -> 1) */
  size_t redarken_passes;    /* passes of the re-darkening loop */
  size_t redarkened;         /* pools and large blocks re-darkened */
  size_t ephe_rounds;        /* passes over an ephemeron list (ephemeron_mark.c) */
  size_t ephe_data;          /* data it marked, each because its key was MARKED */
  size_t handoffs;           /* offers of half its buffer that came back with the buffer smaller:
                              * INV-HANDOFFCOUNT-1's count from the giver's side */
} gc_mark_counts;

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
  gc_mark_counts counts; /* this marker's share of the mark's work */
} gc_marker;

struct gc_domain {
  gc_domain_head head; /* must stay first: gc.h's inline frame functions cast to it */
  gc_heap *heap;
  unsigned id;     /* 0 for the main domain, then in creation order */
  uintptr_t state; /* enum gc_domain_state; a protocol word (platform.h): loads, stores, CAS */

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
  gc_ephe_list ephe;          /* its ephemerons and weak references (INV-EPHE-3) */
  uint64_t slice_alloc_words; /* alloc_words at this domain's last mark slice (incremental) */
  uint64_t mark_debt_words;   /* mark work its allocation owes and its slices have not paid */
  uint64_t mark_slices;       /* mark slices this domain ran (gc_stats.mark_slices) */
  uint64_t max_slice_ns;      /* the longest of them (gc_stats.max_slice_ns) */
  int in_collection; /* re-entrancy guard: a finalizer or hook on this thread must not collect */

  /* This domain's sweep of the current cycle (sweep.c), for the perf pass and the sweep credit.
   * Counted before the sweep's first step (one walk of the domain's unswept lists, O(pools), on
   * the thread that sweeps: the domain's own, or a stop's or a claim's), 0 until then; then
   * counted per pool and per large block swept. INV-SWEEPWORK-1: a cycle's sweep examines every
   * slot below the frontier of each pool unswept at its start once, and no other: slots_swept
   * <= slots_due, and each large block once: large_swept <= large_due (equal once the domain has
   * swept everything). A full orphan pool swept again when adopted (orphan.c) is adoption's
   * work, not counted here. */
  size_t sweep_slots_due;   /* slots below the frontiers of the pools gc_sweep_begin made unswept */
  size_t sweep_slots_swept; /* slots the sweep examined since */
  size_t sweep_large_due;   /* large blocks made unswept */
  size_t sweep_large_swept; /* large blocks swept since */
  int sweep_counted;        /* the two *_due above are counted (before the sweep's first step) */
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
  gc_ephe_list ephe; /* terminated domains' ephemerons and weak references, under stw_lock */
  /* INV-SPACE-3: a domain short of a pool of class c takes a fresh one (from the heap's free
   * pools or the OS) only when no orphan pool of c with a free slot waited when it looked:
   * gc_orphan_adopt_pool looks first, and its look and the acquisition are two steps under the
   * pool lock, so an orphan that arrives between them may wait until the next adoption. To make
   * that observable, orphanings are numbered (`serial`); avail_since[c] is the number of the
   * orphaning that put the oldest pool now on avail[c] there (lists are LIFO, so the oldest
   * waits longest); fresh_seen[c] is the latest orphaning a domain had seen when it took a
   * fresh pool of class c (gc_pool_acquire records it). A pool waiting on avail[c] with
   * avail_since[c] <= fresh_seen[c] was passed over. */
  uint64_t serial;
  uint64_t avail_since[GC_NUM_SIZECLASSES];
  uint64_t fresh_seen[GC_NUM_SIZECLASSES];
} gc_orphans;

/* The shared side of marking (workbuf.c). INV-WB-1: every work buffer carved from the arena is
 * on the empty list, on the full list, or held by exactly one marker; between marks all are on
 * the empty list. A buffer not carved yet was never touched (its pages are not resident). */
typedef struct gc_mark_work {
  gc_mutex lock; /* guards the lists, idle and done */
  gc_workbuf *empty;
  gc_workbuf *full;
  uintptr_t full_count; /* buffers on the full list; atomic, read without the lock */
  uintptr_t idle;       /* atomic: markers waiting for a full buffer; read without the lock */
  uintptr_t done;       /* atomic: every marker was idle with no full buffer: marking is over */
  size_t markers;       /* markers in this mark */
  size_t buf_entries;   /* entries per buffer */
  size_t buf_count;     /* buffers in the arena */
  size_t carved;        /* of them, carved (used at least once since the shape): the first ones */
  size_t empty_count;   /* buffers on the empty list */
  void *arena;          /* all buffers, one allocation */
  size_t arena_bsize;   /* its bytes: a new shape that fits in them reuses it */
  uintptr_t overflowed; /* atomic: a push found no room; flagged pools need re-darkening */
  uintptr_t slicing;    /* atomic: domains in an incremental mark slice now */
  uint64_t handoffs;    /* buffers split for idle markers, since the heap was created */
  uint64_t shares;      /* buffers put on the full list not full (gc_work_put_partial), since
                         * the heap was created; under the lock */
} gc_mark_work;

/* What the current (or last) cycle did and why it started, for the perf pass (invariants/
 * perf.c), which holds the collector to these bounds at the hook points. No timing: every figure
 * is a count. Set when the cycle starts (the reason, the pacing snapshot) and when its mark ends
 * (the mark's counts, summed from the markers).
 *
 * INV-PACE-1: a paced cycle starts only when pacing is on (gc_percent is not GC_PERCENT_OFF) and
 * the words the domains reported to the pacer since the last cycle's colours rotated reach the
 * trigger, itself never below min_trigger_words. Counted from the domains' own allocation
 * counters (alloc_words - unpaced_words, plus the terminated domains'), not from the pacer's
 * alloc_words_since_cycle: reported_at_start - reported_at_reset >= max(trigger_words,
 * min_trigger_words), both as the pacer read them when it decided.
 *
 * INV-OVERFLOW-1: a push overflows only when every work buffer is out of reach: none on the empty
 * list. With M markers, h handoffs and shares this mark, B buffers of E entries: the pushing
 * marker holds a full buffer or none, each other marker holds at most one buffer that may be
 * empty (the one it pops from, or a fresh one it is about to fill), and every other buffer is
 * full (E entries) or a handoff's half or a shared partial one (incremental marking: what a
 * slice left, or a marker's buffer collected at termination; at least 1 entry, at most h of
 * them). Every entry is a distinct block marked
 * this mark (a block is pushed once, when it turns MARKED), and the prefetch FIFO holds pointers
 * not yet marked, so it takes no entry. So a mark that overflowed marked at least
 * (B - M + 1 - h')E + h' + 1 blocks of a scanned tag, h' = min(h, B - M + 1); with one marker
 * (h = 0: INV-HANDOFF-1), B*E + 1: the mark stack's whole capacity plus the one refused. Under
 * zeal overflow (gc.h) a marker of the mark had no room at all (overflow_zeal below): its every
 * push overflows, by design.
 *
 * INV-MARKWORK-1: marking scans each block it marked once from a work buffer, and each
 * re-darkening pass scans each MARKED block of a flagged pool or large block at most once more:
 * fields_scanned <= scan_fields_marked * (1 + redarken_passes) + born_marked_words *
 * redarken_passes (blocks born MARKED are never pushed, but a pass scans them where it scans a
 * flagged pool; their whsize bounds their fields). Re-darkening visits only what a
 * refused push flagged, and each flag once: redarkened <= flagged (equal once the mark is over).
 *
 * INV-RECHECK-1: an incremental mark resumes after a termination stop (a recheck) only while its
 * rechecks are fewer than the limit (gc_config.mark_rechecks, `rechecks`): a mark lets marking
 * resume at most as many times as the largest limit one of its termination stops saw
 * (recheck_limit below; the limit may change between stops). At the limit the stop finishes the
 * mark itself, so a mutator that keeps storing cannot keep marking from ending.
 *
 * INV-HANDOFF-1: a marker splits its buffer only for an idle marker, so a mark with one marker
 * makes no handoff.
 *
 * Three counts have a second, independent count (the perf pass compares them; the verifier
 * records gc_get_stats at GC_HOOK_MARK_START and counts the GC_HOOK_MARK_SLICE calls itself):
 * INV-OVERFLOWCOUNT-1: the re-darkening passes a mark counts (heap->mark_overflows, gc_stats'
 * mark_overflows; the marker's redarken_passes) are at least one iff a push of the mark was
 * refused (mark.overflows, counted by each marker at the refusal) and at most one per refused
 * push: each pass clears the overflow flag that only a refused push sets, and the mark ends
 * only after a pass found it clear.
 * INV-HANDOFFCOUNT-1: the buffers the work lists split in a mark (handoffs, work.handoffs'
 * growth, gc_stats' handoffs) are the offers whose giver saw its buffer shrink (mark.handoffs,
 * per marker, a terminated domain's carried by the shade marker).
 * INV-SLICECOUNT-1: the slices a mark counts (gc_stats' mark_slices, every domain's plus the
 * retired ones'; cycle_slices for the trace line) are the GC_HOOK_MARK_SLICE calls between its
 * two stops: every slice calls the hook once, after it is counted, before any stop.
 */
typedef struct gc_cycle_work {
  int reason;              /* enum gc_cycle_reason (cycle.h) */
  uintptr_t overflow_zeal; /* a marker of this mark began under zeal overflow (INV-OVERFLOW-1);
                            * set with a relaxed atomic store as markers are made */
  /* The pacer's view when it decided to start a paced cycle (0 for the other reasons). */
  size_t paced_words;       /* alloc_words_since_cycle */
  size_t trigger_words;     /* trigger_words */
  size_t min_trigger_words; /* cfg.min_trigger_words */
  int gc_percent;           /* cfg.gc_percent */
  /* Words reported to the pacer since the heap was created, from the domains' own counters: at
   * the last colour rotation (when alloc_words_since_cycle became 0) and at this cycle's start
   * (world stopped). */
  uint64_t reported_at_reset, reported_at_start;
  /* The mark. */
  size_t markers; /* markers of the parallel part (the leader and the parked); with
                        * incremental marking every domain that marked and the shade marker */
  /* INV-MARKERS-1: an incremental mark's markers are the domains there were at its start, the
   * shade marker, and every domain made while it marked: markers == domains_at_start + 1 +
   * (domain_id_at_end - domain_id_at_start). The markers are counted as domains join the mark
   * (domain.c); the witness reads the domain ids handed out meanwhile (heap->next_domain_id),
   * each id one domain made. Both ids are read with the world stopped, at the mark's two stops;
   * incremental is 0 for a stop-the-world mark, which the rule does not cover. */
  int incremental;
  size_t domains_at_start;
  unsigned domain_id_at_start, domain_id_at_end;
  /* Incremental marking: blocks born MARKED this cycle and their whsize words. Re-darkening
   * scans every MARKED block of a flagged pool, born MARKED ones included: INV-MARKWORK-1 counts
   * their fields (at most these words) beside scan_fields_marked. */
  uint64_t born_marked_blocks, born_marked_words;
  uint64_t handoffs;      /* buffers split for idle markers in this mark */
  uint64_t rechecks;      /* incremental: termination stops of this mark that let it resume */
  uint64_t recheck_limit; /* the largest `rechecks` limit one of its termination stops saw */
  uint64_t shares;        /* partial buffers put on the full list in this mark (incremental) */
  gc_mark_counts mark;    /* the markers' counts, summed */
} gc_cycle_work;

/* INV-MARKWORK-1's bound on fields_scanned, for the mark w counts. */
static inline uint64_t gc_mark_fields_bound(const gc_cycle_work *w) {
  uint64_t passes = w->mark.redarken_passes;
  return (uint64_t)w->mark.scan_fields_marked * (1 + passes) + w->born_marked_words * passes;
}

/* The pacer (pacer.c; its formulas are at the top of pacer.h and in the README, "Pacing"). What
 * it knows of the last mark, written with the world stopped when a mark ends, and the plan it
 * made from them. Words are whsize.
 * INV-PACE-2: the plan is consistent: with pacing on, min_trigger_words <= trigger_words <=
 * goal_alloc_words, and in the stw mode trigger_words == goal_alloc_words (the mark ends where it
 * starts); with pacing off both are SIZE_MAX. */
typedef struct gc_pacer {
  size_t reached_words;    /* blocks the last mark reached from the roots: the live heap */
  size_t kept_words;       /* blocks it left MARKED (reached, born MARKED): its sweep's survivors */
  size_t scan_words;       /* blocks it scanned: the next mark's expected work */
  size_t cons_mark_x1024;  /* words allocated per word of mark work while marking incrementally,
                           * times 1024, averaged over the paced incremental marks */
  size_t goal_alloc_words; /* relaxed atomic (INV-PARAM-1): words allocated since the last mark
                            * ended (alloc_words_since_cycle) by which the next one must end */
  size_t runway_words;     /* the plan's allowance for allocation during marking */
  uintptr_t mark_work_words; /* relaxed atomic: mark work the slices did in this mark */
  /* The plan the cycle now marking (or the last) started under, in heap words (kept + allocated),
   * for the trace line: its goal and its trigger; SIZE_MAX with pacing off. */
  size_t cycle_goal_words, cycle_trigger_words;
} gc_pacer;

/* The current cycle's times and figures, for the trace line (cycle.c), kept from its first stop
 * to its last (with incremental marking, the world runs between them). */
typedef struct gc_cycle_trace {
  int incremental;
  size_t markers;                   /* domains that marked */
  uint64_t start_ns, mark_start_ns; /* the first stop began; marking began */
  uint64_t end_ns;                  /* the world runs again after the last stop */
  uint64_t sweep_ns, mark_ns;       /* finishing the sweep; marking (to its last stop's end) */
  uint64_t start_pause_ns;          /* incremental: the first stop */
  uint64_t handoffs_before;
  gc_heap_stats before; /* the statistics when marking began */
  uint64_t freed_total; /* words freed by every domain since the heap was created, then */
  uint64_t freed_words; /* ... and since the last cycle */
} gc_cycle_trace;

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

/* Pools in use, an open-addressing hash set keyed by pool address (blockindex.c).
 * INV-POOLSET-1: every pool ever inserted lies in [lo, hi) (the bounds only widen), so a lookup
 * of an address outside needs no probe. Conservative words into large blocks (malloc's memory,
 * away from the mapped pools) then cost a comparison, and how long a probe runs never depends on
 * where malloc put a large block. */
typedef struct gc_pool_set {
  uintptr_t *keys;  /* 0: empty, 1: deleted, else a pool address */
  size_t capacity;  /* a power of two */
  size_t used;      /* keys that are not empty (pools plus deleted marks) */
  size_t count;     /* pools */
  uintptr_t lo, hi; /* INV-POOLSET-1; both 0 before the first insert */
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
   * heap_limit_bytes, pools_per_batch, free_pools_kept, mark_slice_words; and trigger_words and
   * marking_mode below) are written
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
  gc_pool *free_pools; /* its head and the orphans' are read and written by GC_GUARDED_* */
  size_t free_pool_count;
  size_t mapped_pool_count; /* pools currently mapped from the OS (owned or free) */
  gc_orphans orphans;
  uintptr_t used_bytes; /* atomic: pool and large-block bytes owned (domains and orphans) */
  /* INV-SPACE-2: a full collection gives every free pool back (to the OS or the pool cache)
   * before its sweep end is reported, so at that point free_pools is empty and the mapped pools
   * are exactly the owned ones. full_release is 1 while that report's hook runs. (Between full
   * collections the free list is what gc_pool_release's keep limit allowed, plus what is left
   * of a batch: both move with run-time parameters, so only the full collection's end is a
   * bound.) */
  int full_release;

  /* The heap's high-water marks, the maxima gc_get_stats reports (INV-STATS-2). pool_max_words
   * is raised under pool_lock by gc_pool_acquire to the words of the pools owned then (mapped
   * minus free); large_words counts every owner's large words and large_max_words its maximum,
   * both atomic (large blocks come and go on each domain's own thread, without a lock). A
   * domain's own maxima (gc_heap_stats) cannot give these: a sum of maxima over domains is not
   * the maximum of the sum, and a terminated domain's maximum would leave with it. */
  size_t pool_max_words;
  uintptr_t large_words;     /* atomic */
  uintptr_t large_max_words; /* atomic */

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
   * root until its finalizer has run) and `fin_running` (running now, also a root); the one
   * exception is a running finalizer that sets a finalizer on its own block again (re-armed):
   * the block is then in `finalizers` and `fin_running` until the finalizer returns.
   * INV-FIN-2: the records from finq_head to finq.count are exactly the queued finalizers that
   * have not started; every one of them runs, once, before the gc_run_finalizers that is running
   * the queue returns, those a cycle started inside a finalizer appends included. */
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
   * NOT_MARKABLE only while it is on `pinned`. Incremental marking adds the snapshot: a block
   * reachable when marking began (GC_HOOK_MARK_START), or allocated since (born MARKED), may be
   * MARKED at its end though the roots no longer reach it (floating garbage, freed next cycle).
   *
   * INV-BARRIER-1 (incremental marking, snapshot at the beginning): from the stop that starts
   * marking to the stop that ends it, (a) every block allocated is born MARKED (alloc_colour),
   * (b) every pointer overwritten in a heap block by gc_store was darkened first, (c) every
   * block reachable at the start is MARKED by the end. (a) and (b) give (c): the roots were
   * darkened in the first stop, and a path from them that a mutator cuts was cut at a darkened
   * block. Root slots (frames, global roots, scanners, the model's), conservative range words,
   * finalizer records and domains change without a barrier, each for its stated reason at the
   * code that changes it: a root only ever receives a value that is reachable at the start or
   * born MARKED, so cutting or adding a root edge loses nothing; pinning makes a block's fields
   * roots, so it darkens them (gc_mark_shade_fields), and unpinning a block that was a root
   * repaints it MARKED; ranges hold raw words that may point at any block,
   * so the stop that ends marking scans them again. */
  gc_mark_work work;
  /* Ephemerons (ephemeron_mark.c). INV-EPHE-1: when marking ends, every live ephemeron (MARKED)
   * whose key is alive (MARKED, NOT_MARKABLE, or an immediate) has its datum alive. Marking
   * reaches it by rounds: a round passes over one list and marks the datum of each live
   * ephemeron whose key is MARKED; a datum marked is grey work like any other, which may make
   * other keys MARKED. Each running domain runs rounds over its own list in its mark slices
   * when it finds no grey work; a stop that ends marking (both modes) runs rounds over every
   * list, and marking ends only in a stop whose round marks nothing with no grey work left
   * anywhere (gc_mark_quiescent): the fixpoint. A domain that joins has an empty list, one that
   * terminates leaves its list to the orphans, which every stop adopts first, and a blocked
   * one's list is the stop's like any other, so every list is in that last round.
   * INV-EPHE-2: the clean phase, in the stop that ends marking and so before the colours rotate
   * and any sweep, clears every weak slot naming an UNMARKED block and both slots of every
   * ephemeron whose key is not alive, and drops the dead entries of every list; from then on no
   * live ephemeron or weak reference names a block that is not live. Its weak slots are cleared
   * before finalizers are queued, its ephemerons after the finalizers' marking and a second
   * fixpoint (gc.h: the order). */
  struct {
    uint64_t rounds, data, cleared;  /* since the heap was created (gc_stats) */
    size_t cycle_rounds, cycle_data; /* this cycle's, for the trace line */
    size_t cycle_cleared;
  } ephe_work;
  uintptr_t marking;       /* atomic: 1 from the stop that starts incremental marking to the stop
                           * that ends it; each domain keeps its copy in head.marking */
  uintptr_t mark_parallel; /* atomic: markers of this incremental mark colour headers by
                            * compare-and-swap. A mark that starts with one domain marks with
                            * plain stores (its slices, its barrier and the shade marker all run
                            * on that domain's thread); a domain that joins it makes it parallel
                            * with a stop when it first leaves its blocking section, before it
                            * can mark (gc_cycle_make_mark_parallel). */
  gc_header alloc_colour;  /* the colour of a new block: colours.marked while marking (born
                           * MARKED), colours.unmarked otherwise; changed only in a stop */
  gc_mutex shade_lock;     /* guards `shade`: threads with no marker at hand (gc_pin) shade here */
  gc_marker shade;         /* a marker without a domain: its full buffers go to work.full */
  size_t mark_rechecks;    /* termination stops of this cycle that found work and resumed */
  size_t mark_markers;     /* domains that marked this cycle (at the start, and spawned since) */
  uintptr_t cycle_slices;  /* atomic (relaxed, a statistic): slices of the current cycle */
  uint64_t alloc_words_at_mark_start, alloc_blocks_at_mark_start; /* all domains and retired */
  uintptr_t zeal; /* cfg.zeal (gc.h, GC_ZEALS) as running domains read it: relaxed atomic */
  /* Zeal domains (zeal.c): the phantom domain, owned by the domain that set `zeal_acting` (an
   * atomic flag) and touched only by it; the phase of the last boundary it acted at (atomic);
   * the boundaries of its life so far. */
  gc_domain *zeal_phantom;
  uintptr_t zeal_acting;
  uintptr_t zeal_phase;
  unsigned zeal_phantom_age;
  uintptr_t marking_mode; /* enum gc_marking_mode: cfg.marking as running domains read it
                           * (INV-PARAM-1), when they start a cycle */
  gc_cycle_trace trace;   /* the current cycle's times and figures, for the trace line */
  /* INV-MARKCOUNT-1: when a mark ends (GC_HOOK_MARK_DONE), marked_blocks is exactly the blocks
   * coloured MARKED and marked_words their whsize words: each counted once, by the marker whose
   * compare-and-swap coloured it or, born MARKED, from the allocation counters (born_marked_*);
   * a block pinned while MARKED leaves the count and one unpinned mid-mark joins it (roots.c),
   * pinned blocks being counted apart (heap->pinned). The pacer takes marked_words for the live
   * heap; the checkmark pass counts the colours again (checkmark.mark-count). */
  size_t marked_words;  /* whsize of the blocks marked this cycle, all markers */
  size_t marked_blocks; /* blocks marked this cycle */
  /* Blocks pinned while MARKED during this mark and their words (under shade_lock): taken out of
   * the counts above when the mark ends, after the blocks born MARKED are added (a born block may
   * be among them, so the markers' sum alone may be smaller). */
  size_t mark_pinned_blocks, mark_pinned_words;
  gc_cycle_work cycle_work;         /* what this cycle did, for the perf pass (see its type) */
  uint64_t handoffs_at_mark_begin;  /* work.handoffs when this mark began */
  uint64_t shares_at_mark_begin;    /* work.shares when this mark began */
  gc_cycle_work pace_decision;      /* a paced start's snapshot, under stw_lock before the stop */
  uint64_t reported_words_at_reset; /* reported_words (cycle.c) when the pacer last reset */

  /* Compaction (compact.c). It runs in a stop of the world whose every domain has swept, on the
   * leader alone, and moves small blocks only, within their owner and size class.
   * INV-COMPACT-1: a forwarding header (GC_HD_FORWARD, header.h) exists only in a pool being
   * evacuated (GC_POOL_EVACUATED), during that stop. Before the evacuated pools are given back,
   * every reference the collector knows is forwarded: the root sets of gc_roots_visit (global
   * roots, frames, pinned blocks' fields, the finalizer roots, scanners' slots), the finalizer
   * records, the ephemeron lists' heads, and in every live block its scanned fields, or a weak
   * block's link word and weak slots. So from GC_HOOK_COMPACTED on no owned pool holds a
   * forwarding header and no reference names a block of a pool given back.
   * INV-COMPACT-2: a block that a pinned entry names, that a conservative range word names
   * (gc_block_containing: gc.h's rule), or whose finalizer runs now (fin_running) does not move,
   * and its pool is not evacuated.
   * INV-COMPACT-3: after a compaction, for each owner and size class with L live blocks, S slots
   * a pool and K pools holding a block of INV-COMPACT-2: pools <= max(K, ceil(L / S)). (All pools
   * of a class have S slots, so keeping the K pools and the fullest others until S * pools >= L,
   * and evacuating the rest, always fits: the sparsest are the ones evacuated.)
   * INV-COMPACT-4: while GC_HOOK_COMPACTED runs, `forwarded` holds one entry per block the
   * compaction moved, its old and its new address, sorted by old address (gc_compact_forwarded,
   * gc.h, answers from it): a hook whose own records hold block addresses (a model, a shadow of
   * the heap) follows the moves there, after the evacuated pools and their forwarding headers
   * are gone. It is NULL (count 0) at every other time: filled as blocks move, sorted before
   * the hook, freed right after it. With no hook installed nobody can read it, and it is not
   * kept (its sort was a quarter of a 10^6-block compaction). */
  struct {
    uint64_t count;                                     /* compactions (gc_stats.compactions) */
    uint64_t moved_blocks, moved_words, released_pools; /* since the heap was created */
    size_t last_pools, last_blocks, last_words;         /* the last compaction's, for the trace */
    uint64_t last_ns;                                   /* its time in the stop */
    gc_compact_move *forwarded; /* INV-COMPACT-4: the moves, for GC_HOOK_COMPACTED only */
    size_t forwarded_count, forwarded_capacity;
  } compact;

  /* Pacing: a cycle starts when the domains allocated trigger_words since the last one. */
  gc_pacer pacer;
  uintptr_t alloc_words_since_cycle; /* atomic */
  size_t trigger_words;              /* atomic (INV-PARAM-1): gc_param_load/gc_param_store */
  size_t live_words_after_mark;
  uint64_t freed_words_at_last_cycle; /* for the trace line's "freed since last cycle" */
  int swept_reported;                 /* the SWEPT hook ran for the current cycle's sweep */

  /* Counters and pauses. INV-STATS-2: what gc_get_stats reports is, once a sweep ends (or with
   * one domain between ops): pool and large figures the sums over every domain and the orphans
   * of their gc_heap_stats (so pool_words is the owned pools' words, orphan_pool_words the
   * orphans' share); the activity counters the sums over the living domains plus `retired`, so
   * they never decrease, and alloc_blocks - freed_blocks (alloc_words - freed_words) are the
   * blocks (whsize words, large headers not counted) alive now; cycles grows by exactly one
   * between two sweep ends; alloc_failures, mark_overflows, handoffs, finalizers_run and
   * finalizers_run + finalizers_queued never decrease; the maxima are the high-water marks
   * above, never below the current figure or any domain's own maximum, never decreasing;
   * last_pause_ns is the newest entry of pause_ns, max_pause_ns the largest pause ever (the
   * ring's largest while it has not wrapped); free_pools and os_pool_bytes are the free list's
   * length and the mapped pools' bytes; finalizers and finalizers_queued the records in
   * `finalizers` and the queue's unrun ones, the running one among them until it returns. */
  struct {
    uint64_t alloc_blocks, alloc_words, freed_blocks, freed_words, mark_slices, max_slice_ns;
  } retired; /* the activity counters of terminated domains */
  uint64_t cycles;
  uintptr_t alloc_failures; /* atomic */
  uint64_t mark_overflows;
  uint64_t pauses; /* stops recorded (gc_stats.pauses) */
  uint64_t pause_ns[GC_PAUSE_RING];
  uint64_t events[GC_EVENT_COUNT]; /* gc.h's rare events; relaxed atomic adds (gc_event_note) */
  unsigned pause_next;
  uint64_t last_pause_ns, max_pause_ns;
  uint64_t max_start_pause_ns, max_end_pause_ns; /* gc_stats': a cycle's first stop, its last */
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

/* The larger of two times (ns), without a branch: a time decides no branch of the collector, so
 * a fuzz target's runs of one input take the same edges however long each pause took (a ternary
 * is a branch once UBSan checks each arm's load). */
static inline uint64_t gc_time_max(uint64_t a, uint64_t b) {
  uint64_t grew = (uint64_t)(a > b) * UINT64_MAX; /* all ones when a is larger; no wrap
                                                   * (OSS-Fuzz's UBSan set reports -1u as one) */
  return (a & grew) | (b & ~grew);
}

/* Record a misuse or failure; returns `err` so callers can `return gc_fail(...)`. */
gc_error gc_fail(gc_heap *heap, gc_error err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The colour name of `colour` in this cycle: "UNMARKED", "MARKED", "GARBAGE", "NOT_MARKABLE". */
const char *gc_colour_name(const gc_heap *heap, gc_header colour);

/* Call the verification hook, if any. With none installed and a non-empty verify mask, say once
 * per heap on stderr that nothing verifies. Called with stw_lock held. */
void gc_heap_call_hook(gc_heap *heap, gc_hook_point point);
/* GC_HOOK_MARK_SLICE on d's thread, with d as the hook's domain: the world runs then, so a hook
 * may look at the state of the domain whose slice ended and at no other, and the hook's
 * arguments name no domain. */
void gc_heap_call_slice_hook(gc_domain *d);
/* The domain whose slice ended, while the calling thread runs GC_HOOK_MARK_SLICE on `heap`;
 * NULL at every other point, and on every other thread. */
gc_domain *gc_heap_hook_domain(const gc_heap *heap);

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

/* Count a rare event (gc.h, GC_EVENTS): relaxed, since the counts are read when the heap is quiet
 * (the census after a program) and order nothing. */
static inline void gc_event_note(gc_heap *heap, gc_event e) {
  __atomic_fetch_add(&heap->events[e], 1, __ATOMIC_RELAXED);
}
/* A domain's event by its phase: `idle_row` is the event's _IDLE row, followed in the table by
 * its _MARKING and _SWEEPING rows. Run by the domain's own thread (it reads d->sweeping). */
static inline void gc_event_note_phase(gc_domain *d, gc_event idle_row) {
  int phase = gc_atomic_load_relaxed(&d->head.marking) ? 1 : d->sweeping ? 2 : 0;
  gc_event_note(d->heap, (gc_event)(idle_row + phase));
}

#endif /* GC_HEAP_H */
