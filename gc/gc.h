/* gcfuzz collector: the public API.
 *
 * A mark-sweep collector with size-classed pools and rotating colours. All state hangs off one
 * gc_heap; each mutator thread allocates through its own gc_domain. This header is everything an
 * embedder (a benchmark, a fuzz driver, a runtime) needs; the verification passes in invariants/
 * also read the internal headers (heap.h, pool.h, ...).
 *
 * Values. A field of a scanned block is a gc_value: an immediate has its low bit set, anything else
 * is NULL or a pointer to the first field of a block (a "val", never a header pointer). Blocks are
 * word-aligned, so a pointer always has its low bit clear.
 */
#ifndef GC_GC_H
#define GC_GC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gc/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uintptr_t gc_value;
typedef struct gc_heap gc_heap;
typedef struct gc_domain gc_domain;

static inline gc_value gc_val_int(intptr_t n) { return ((uintptr_t)n << 1) | 1u; }
static inline intptr_t gc_int_val(gc_value v) { return (intptr_t)v >> 1; }
static inline int gc_is_block(gc_value v) { return v != 0 && (v & 1u) == 0; }
static inline gc_value *gc_fields(gc_value v) { return (gc_value *)v; }
#define GC_FIELD(v, i) (((gc_value *)(v))[i])

/* ---- Tags ---------------------------------------------------------------------------------- */

/* The tag is the low byte of a block's header. Tags 0..GC_TAG_SCAN_MAX are scanned blocks (the
 * embedder may use the value as a constructor number); GC_TAG_RAW holds bytes the collector never
 * looks at; GC_TAG_CUSTOM holds a finalize function in field 0 (run when the block is swept) and
 * raw data after it. Every other tag value is rejected. */
enum gc_tag {
  GC_TAG_SCAN = 0,
  GC_TAG_SCAN_MAX = 250,
  GC_TAG_RAW = 252,
  GC_TAG_EPHEMERON = 253, /* made by gc_ephemeron_alloc only: see "Ephemerons" below */
  GC_TAG_WEAK = 254,      /* made by gc_weak_alloc only */
  GC_TAG_CUSTOM = 255,
};

/* Run exactly once, while the heap is sweeping the dead custom block `block`. It must not
 * allocate or touch other heap blocks (they may already be freed). */
typedef void (*gc_finalize_fn)(gc_value block);

/* ---- Errors -------------------------------------------------------------------------------- */

/* Misuse and exhaustion never corrupt the heap: the call fails, the heap records why. */
typedef enum gc_error {
  GC_OK = 0,
  GC_ERR_NOMEM,         /* no memory even after a forced collection (limit, injected, OS) */
  GC_ERR_ZERO_SIZE,     /* a block of 0 words */
  GC_ERR_TOO_LARGE,     /* more words than GC_MAX_WSIZE */
  GC_ERR_BAD_TAG,       /* a tag that is neither scanned, raw nor custom; an ephemeron or weak
                         * reference call on a block of another kind */
  GC_ERR_UNKNOWN_ROOT,  /* unregistering a root or a scanner (function and user) that was never
                         * registered; registering a NULL root slot or scanner function */
  GC_ERR_DUP_ROOT,      /* registering the same root slot, or adding a conservative range at the
                         * same start, twice */
  GC_ERR_FRAME_ORDER,   /* popping a local root frame that is not the innermost */
  GC_ERR_PARAM,         /* a malformed parameter string or value out of range */
  GC_ERR_NOT_BLOCK,     /* an operation that needs a block was given NULL or an immediate */
  GC_ERR_NO_FINALIZER,  /* clearing the finalizer of a block that has none; setting a NULL one */
  GC_ERR_UNKNOWN_RANGE, /* removing a conservative range that was never added; adding one at NULL */
  GC_ERR_MAIN_DOMAIN,   /* terminating the main domain (it lives as long as the heap) */
  GC_ERR_IN_COLLECTION, /* a collection asked for from inside one (a hook): refused */
} gc_error;

#define GC_MAX_WSIZE ((size_t)1 << 40) /* fits the header's size field with room to spare */

/* The last error a call on `heap` recorded on the calling thread, like errno: each mutator thread
 * sees its own, so one domain's misuse never shows up as, or overwrites, another's. GC_OK when
 * the calling thread's last recorded error was for another heap, or was cleared. */
gc_error gc_last_error(const gc_heap *heap);
const char *gc_last_error_message(const gc_heap *heap); /* "" when GC_OK */
void gc_clear_error(gc_heap *heap);
const char *gc_error_name(gc_error err);

/* ---- Configuration ------------------------------------------------------------------------- */

#define GC_PERCENT_OFF (-1)
#define GC_PARAMS_ENV  "GCFUZZ_PARAMS"

/* How a cycle marks (the `marking` parameter; incremental by default). Both modes are complete
 * collectors; gc/README.md ("Colours and the cycle") gives the phases of each and how the
 * default was chosen. */
typedef enum gc_marking_mode {
  GC_MARKING_INCREMENTAL, /* a short stop darkens the roots, then every running domain marks in
                           * slices beside its mutator (deletion barrier, blocks born MARKED);
                           * a short stop confirms termination and rotates the colours */
  GC_MARKING_STW,         /* the whole mark inside one stop of the world */
} gc_marking_mode;

/* Verification passes (bit mask), run by invariants/ through the hooks below: one bit per row of
 * GC_VERIFY_PASS_TABLE (gc/passes.h), in its order. */
enum gc_verify_pass_bit {
#define GC_VERIFY_PASS_BIT_(id, name, points, run, needs, what) GC_VERIFY_BIT_##id,
  GC_VERIFY_PASS_TABLE(GC_VERIFY_PASS_BIT_)
#undef GC_VERIFY_PASS_BIT_
      GC_VERIFY_PASS_COUNT
};
enum gc_verify_pass {
#define GC_VERIFY_PASS_MASK_(id, name, points, run, needs, what) \
  GC_VERIFY_##id = 1u << GC_VERIFY_BIT_##id,
  GC_VERIFY_PASS_TABLE(GC_VERIFY_PASS_MASK_)
#undef GC_VERIFY_PASS_MASK_
#define GC_VERIFY_PASS_OR_(id, name, points, run, needs, what) | GC_VERIFY_##id
      GC_VERIFY_ALL = 0 GC_VERIFY_PASS_TABLE(GC_VERIFY_PASS_OR_),
#undef GC_VERIFY_PASS_OR_
};

/* A cache of mapped pools for heaps made one after another (a fuzz target makes and destroys a
 * heap per input): a heap given one in its config takes pools from it before mapping new ones,
 * and leaves its pools there instead of unmapping them, up to `max_pools`. Reused pools keep no
 * state a new heap can see: a pool is set up from its header alone (INV-POOL-1). The cache also
 * keeps what every heap allocates exactly one of for itself (its heap structure, its main
 * domain, its mark stack), handed to the next heap as fresh memory (gc/poolcache.h). Heaps
 * living at the same time may share one. Destroy it after its last heap; that unmaps every pool
 * in it and frees the rest. */
typedef struct gc_pool_cache gc_pool_cache;
gc_pool_cache *gc_pool_cache_create(size_t max_pools);
void gc_pool_cache_destroy(gc_pool_cache *cache);
size_t gc_pool_cache_count(gc_pool_cache *cache); /* pools in it now */
/* Map pools into the cache until it holds max_pools (fewer if the OS refuses); returns how many it
 * holds. A cache filled before its first heap starts every heap full, whatever the heaps before
 * took (each gives back what it took), so a heap's first pools come from the cache and never from
 * the OS: a fuzz target's runs of one input then take the same path wherever they run. */
size_t gc_pool_cache_fill(gc_pool_cache *cache);

typedef struct gc_config {
  int gc_percent;           /* start a cycle when the heap grew by this % of live; GC_PERCENT_OFF */
  size_t min_trigger_words; /* never trigger a cycle before this many words were allocated */
  size_t sweep_budget_words; /* words swept per slice (allocation slow path or collect slice) */
  size_t mark_stack_entries; /* bounded mark stack; >= 4; overflow falls back to re-darkening */
  size_t heap_limit_bytes;   /* 0: no limit; pool and large bytes may not exceed it */
  size_t pools_per_batch;    /* pools mapped from the OS at once */
  size_t free_pools_kept;    /* empty pools kept for reuse; more go back to the OS */
  uint64_t fail_alloc_after; /* 0: off; n: the n-th allocation from now fails (injected) */
  int trace;                 /* 1: one line per cycle on trace_file */
  FILE *trace_file;          /* NULL: stderr */
  unsigned verify;           /* enum gc_verify_pass mask, read by invariants/ */
  int marking;               /* enum gc_marking_mode */
  size_t mark_slice_words;   /* incremental: mark work per slice, in words scanned (at least) */
  gc_pool_cache *pool_cache; /* NULL: pools come from and go back to the OS */
  int compact_percent;       /* GC_PERCENT_OFF (the default): gc_collect(GC_COLLECT_FULL) never
                              * moves a block; 0..100: it compacts (gc_compact) when, once swept,
                              * more than this % of the owned pools' slots are free */
  size_t mark_buf_entries;   /* entries a work buffer holds at most (1..512; default 512) */
  size_t mark_slice_cap;     /* incremental: a slice's budget is at most this many markslices
                              * (1..1024; default 32), however much mark work allocation owes */
  unsigned mark_rechecks;    /* incremental: termination stops that may resume marking in one
                              * cycle before a stop finishes the mark itself (default 8) */
  unsigned zeal;             /* GC_ZEAL_* modes: 0 (the default) none */
} gc_config;

/* Zeal: modes that make a rare path of the collector the common one, as SpiderMonkey's gczeal
 * does, for testing (the fuzz targets set them with `param zeal`). Each is sound: it changes how
 * often a path runs, never what a cycle keeps. "zeal=slice+overflow" sets two; "zeal=none" none.
 *   slice:    every allocation takes the slow path and runs a collector slice first: a mark
 *             slice while a cycle marks, else a sweep slice (or a cycle the pacer has due).
 *   cycle:    every allocation with no cycle marking starts one (stw: a whole major cycle).
 *   overflow: every push of the mark finds no room: each block to scan is flagged instead, and
 *             marking proceeds by re-darkening passes alone.
 *   recheck:  every incremental termination stop resumes marking while rechecks are left, so
 *             every cycle spends its `rechecks` and ends in the stop that finishes the mark.
 *   store:    every store while a cycle marks beside the mutators (gc_store's slow path) runs a
 *             mark slice first, between the mutator's load of a field and the barrier. Never a
 *             termination: a store is no safepoint (its caller may hold blocks in C variables
 *             that no root names), so a slice that runs out of work leaves termination to the
 *             next allocation or slice.
 *   domains:  at the first allocation after each phase boundary a domain crosses (marking
 *             begins, marking ends, sweeping ends), a phantom domain of the collector's own
 *             joins, leaves its blocking section and enters it again, or terminates, in turn:
 *             every phase meets domains that spawn, block and exit (their work handed over,
 *             their pools orphaned and adopted, their counts retired). The allocating domain
 *             waits in a blocking section meanwhile, so the allocation is a safepoint as ever.
 *   finalizer: after every finalizer returns, a major cycle on the domain running it, from
 *             inside the finalizer loop (its block no longer a root, as after any finalizer):
 *             every finalizer is followed by a collection, and the cycles it starts queue more
 *             finalizers for the same loop. A finalizer that allocates and collects is the
 *             embedder's part: the fuzz driver makes every finalizer body allocate a block and
 *             run a major cycle from inside when it sees this mode. */
#define GC_ZEALS(X)                \
  X(SLICE, "slice", 1u << 0)       \
  X(CYCLE, "cycle", 1u << 1)       \
  X(OVERFLOW, "overflow", 1u << 2) \
  X(RECHECK, "recheck", 1u << 3)   \
  X(STORE, "store", 1u << 4)       \
  X(DOMAINS, "domains", 1u << 5)   \
  X(FINALIZER, "finalizer", 1u << 6)
enum {
#define GC_ZEAL_ENUM(name, id, bit) GC_ZEAL_##name = bit,
  GC_ZEALS(GC_ZEAL_ENUM)
#undef GC_ZEAL_ENUM
};

/* The defaults, then GCFUZZ_PARAMS applied on top when `use_env` is set. */
void gc_config_default(gc_config *cfg);
/* Apply "key=value,key=value" (see README: percent, mintrigger, sweep, markstack, limit, batch,
 * keep, failafter, trace, verify). Each key at most once: a key given twice is an error naming
 * it. Returns GC_OK, or GC_ERR_PARAM with a message in `err` and cfg unchanged. */
gc_error gc_config_parse(gc_config *cfg, const char *params, char *err, size_t err_len);

/* ---- Heap and domains ---------------------------------------------------------------------- */

/* cfg NULL: defaults plus GCFUZZ_PARAMS. A malformed GCFUZZ_PARAMS prints the problem and the
 * heap is not created (NULL). */
gc_heap *gc_heap_create(const gc_config *cfg);
/* Frees every block (running custom finalizers), every pool and all bookkeeping. */
void gc_heap_destroy(gc_heap *heap);
/* The domain created with the heap, for the thread that created it. */
gc_domain *gc_main_domain(gc_heap *heap);
gc_heap *gc_domain_heap(gc_domain *d);
/* The heap's parameters. gc_set_params changes them in place: read them on a thread that no
 * other thread's gc_set_params can overlap (the one that changes them, or from a hook). */
const gc_config *gc_heap_config(const gc_heap *heap);
/* Change parameters at run time, same syntax as gc_config_parse (e.g. "markstack=4"); a string
 * that does not parse changes nothing. Thread contract: call it from a thread running a domain
 * of this heap (not inside a blocking section), or while no other thread uses the heap. Other
 * domains may allocate and collect meanwhile, and several domains may call it at once (the calls
 * take a lock in turn, and no call is lost): a domain's next allocation slow path sees the new
 * sweep budget, heap limit, pool batch and reserve and pacing; markstack applies from the next
 * mark; failafter arms its countdown at once. */
gc_error gc_set_params(gc_heap *heap, const char *params);

/* ---- Domains --------------------------------------------------------------------------------- */

/* A domain is one mutator thread's view of the heap: its own pools (no lock on the allocation
 * path), its own local root frames. Collections stop every domain at a safepoint (an allocation
 * slow path, or gc_poll) and every stopped domain helps mark. A domain that leaves the heap for a
 * while (blocking I/O, a long computation) enters a blocking section, so a collection need not
 * wait for it; its frames stay roots. All calls on a domain come from the thread running it.
 *
 * Creating: gc_domain_create returns a domain in a blocking section; the thread that will run it
 * calls gc_leave_blocking first. A thread that already runs a domain of this heap creates others
 * with gc_domain_spawn (it must not wait for the heap's lock while running).
 * Terminating: gc_domain_terminate finishes the domain's sweeping, gives its pools, large blocks
 * and statistics to the heap's orphans (other domains adopt them) and frees it; its frames are
 * dropped. The main domain lives as long as the heap. */
gc_domain *gc_domain_create(gc_heap *heap);
gc_domain *gc_domain_spawn(gc_domain *parent);
gc_error gc_domain_terminate(gc_domain *d);
void gc_enter_blocking(gc_domain *d);
void gc_leave_blocking(gc_domain *d);
/* A safepoint: if a collection waits for this domain, take part in it now. */
void gc_poll(gc_domain *d);
unsigned gc_domain_id(const gc_domain *d); /* 0 for the main domain */

/* ---- Allocation ---------------------------------------------------------------------------- */

/* A block of `wsize` fields (words, header not counted). Scanned blocks start with every field
 * NULL; raw blocks start zeroed. Returns 0 on failure (see gc_last_error). May collect. */
gc_value gc_alloc(gc_domain *d, size_t wsize, unsigned tag);
/* A custom block: field 0 is `fn`, fields 1..data_wsize are raw data, zeroed. */
gc_value gc_alloc_custom(gc_domain *d, size_t data_wsize, gc_finalize_fn fn);

size_t gc_wsize(gc_value v);
unsigned gc_tag(gc_value v);

/* Pinned blocks are never freed and never moved; their fields are scanned as roots. */
gc_error gc_pin(gc_heap *heap, gc_value v);
gc_error gc_unpin(gc_heap *heap, gc_value v);

/* ---- Roots --------------------------------------------------------------------------------- */

/* A global root is a slot outside the heap holding a gc_value. */
gc_error gc_root_register(gc_heap *heap, gc_value *slot);
gc_error gc_root_unregister(gc_heap *heap, gc_value *slot);

/* A local root frame, like CAMLparam: the caller owns `frame` and `slots` (usually on its stack),
 * pushes it on entry and pops it on exit, innermost first. */
typedef struct gc_frame {
  struct gc_frame *prev;
  size_t count;
  gc_value *slots;
} gc_frame;

/* The first member of every gc_domain: what the inline frame functions touch. Frames are pushed
 * and popped on every call of a recursive mutator, so they must cost a few stores, not a call. */
typedef struct gc_domain_head {
  gc_frame *frames; /* innermost local root frame, or NULL */
  /* 1 while a cycle marks beside the mutators: gc_store's fast path reads it. The domain's own
   * copy of the heap's marking phase, written only while this domain is stopped (by the leader
   * of the stops that start and end marking, or when the domain is made), so it never changes
   * under the domain's feet and its load needs no ordering (see INV-BARRIER-1 in gc/heap.h). */
  uintptr_t marking;
} gc_domain_head;

static inline void gc_frame_push(gc_domain *d, gc_frame *frame, gc_value *slots, size_t count) {
  gc_domain_head *head = (gc_domain_head *)d;
  frame->prev = head->frames;
  frame->count = count;
  frame->slots = slots;
  head->frames = frame;
}
/* Records GC_ERR_FRAME_ORDER and leaves the frames as they were. */
gc_error gc_frame_pop_mismatch(gc_domain *d, gc_frame *frame);
static inline gc_error gc_frame_pop(gc_domain *d, gc_frame *frame) {
  gc_domain_head *head = (gc_domain_head *)d;
  if (head->frames != frame) return gc_frame_pop_mismatch(d, frame);
  head->frames = frame->prev;
  return GC_OK;
}

/* An embedder's root scanner: called at the start of every mark, with the world stopped (possibly
 * beside other markers); calls visit on each root slot, and may read the blocks they hold. It must
 * not allocate, collect, store into heap blocks, change roots, pins or finalizers, or call
 * gc_run_finalizers: it runs inside the collection (so the fuzz driver gives scanners no body). */
typedef void (*gc_visit_fn)(void *visit_ctx, gc_value *slot);
typedef void (*gc_scan_roots_fn)(gc_visit_fn visit, void *visit_ctx, void *user);
gc_error gc_root_scanner_add(gc_heap *heap, gc_scan_roots_fn fn, void *user);
gc_error gc_root_scanner_remove(gc_heap *heap, gc_scan_roots_fn fn, void *user);

/* Conservative roots: a memory range of raw words (a stack snapshot, a buffer) scanned at every
 * mark. A word that points anywhere inside a live block (its header or fields) keeps the block
 * alive; any other word (outside the heap, into a free slot, a pool header, wastage or the padding
 * after a block) is ignored. Only whole, aligned words inside [start, start + bsize) are read. */
gc_error gc_conservative_add(gc_heap *heap, const void *start, size_t bsize);
gc_error gc_conservative_remove(gc_heap *heap, const void *start);

/* ---- Finalizers ---------------------------------------------------------------------------- */

/* Go-style finalizers, on any block. While a block has a finalizer, everything it points to is
 * kept alive. When a cycle finds the block itself unreachable, the finalizer is detached and
 * queued, the block survives that cycle, and the finalizer runs exactly once after the cycle (on
 * the domain that ran it, or at gc_run_finalizers). If the block is still unreachable at a later
 * cycle, that cycle frees it. Finalizers that could not run before gc_heap_destroy are dropped
 * unrun.
 *
 * What a finalizer may do, and what the collector promises it (API-CALLBACK; the fuzz driver's
 * finalizer bodies, `fin_do`, exercise every item and check each promise):
 *   - It runs with the world running, on the thread of the domain that runs the queue, never
 *     inside a collection (no hook point is between its start and its end unless it collects)
 *     and never inside another finalizer: one domain at a time runs the queue, in FIFO order.
 *   - While it runs, `block` is a root, and so is everything it reaches: a collection anywhere
 *     during the call leaves them allocated with their contents.
 *   - It may allocate (which may start a cycle), store into any block it can reach, set and
 *     clear roots, pin, and resurrect `block` by storing it somewhere reachable.
 *   - It may call gc_collect: the collection is not refused (the collection that queued the
 *     finalizer has ended) and runs whole; the finalizers it queues, and those still queued
 *     before it, run after this one returns, in the same gc_run_finalizers, before that returns.
 *     A cycle inside a finalizer thus finds the rest of the queue still queued: roots, not lost.
 *   - gc_run_finalizers called from a finalizer does nothing and returns 0.
 *   - It may set or clear the finalizers of other blocks (not of one whose finalizer is queued),
 *     and set one on `block` again (re-arming it, as Go's runtime.SetFinalizer allows): the
 *     block then has a finalizer set as any other, queued by a later cycle that finds it
 *     unreachable. gc_finalizer_clear on `block` itself fails (GC_ERR_NO_FINALIZER) unless it
 *     was re-armed.
 * A custom block's gc_finalize_fn, which runs while sweeping, may do none of these. */
typedef void (*gc_finalizer_fn)(gc_heap *heap, gc_value block, void *user);
/* Set (or replace) the finalizer of `block`. */
gc_error gc_finalizer_set(gc_heap *heap, gc_value block, gc_finalizer_fn fn, void *user);
/* Remove it; GC_ERR_NO_FINALIZER if the block has none (or it is already queued). */
gc_error gc_finalizer_clear(gc_heap *heap, gc_value block);
/* Run the queued finalizers now; returns how many ran. Does nothing when called from one. */
size_t gc_run_finalizers(gc_domain *d);

/* ---- Stores -------------------------------------------------------------------------------- */

/* Store `value` into field `i` of the scanned block `block`: every pointer store into a heap
 * block goes through here (the write barrier). Outside marking it is a load, a branch and the
 * store. While a cycle marks beside the mutators (incremental marking), the value overwritten is
 * darkened first (a deletion barrier: snapshot at the beginning), so marking reaches everything
 * that was reachable when it began, whatever the mutators unlink meanwhile.
 *
 * The one exception, initialising stores: GC_FIELD may write the fields of a block this domain
 * allocated since its last safepoint (gc_alloc, gc_poll, gc_collect), before the block is stored
 * anywhere another domain can read it. Its fields are all NULL or immediates then (nothing to
 * darken), and either marking is off (no safepoint since the allocation, so none since it began)
 * or the block was born MARKED and no marker will read its fields this cycle. */
void gc_store_slow(gc_domain *d, gc_value block, size_t i, gc_value value);
static inline void gc_store(gc_domain *d, gc_value block, size_t i, gc_value value) {
  if (__builtin_expect(__atomic_load_n(&((gc_domain_head *)d)->marking, __ATOMIC_RELAXED), 0)) {
    gc_store_slow(d, block, i, value);
    return;
  }
  /* Release: a marker may read the field at the same time (an incremental cycle that began
   * after this store) and then the header of the block stored, which this thread initialised:
   * the marker's acquire load of the field orders the two. On x86-64 the same instruction as a
   * plain store. */
  __atomic_store_n(&((gc_value *)block)[i], value, __ATOMIC_RELEASE);
}

/* ---- Ephemerons and weak references ------------------------------------------------------ */

/* An ephemeron (OCaml's, with one key) is a block of its own tag: field GC_EPHE_KEY holds the
 * key, field GC_EPHE_DATUM the datum, and data_wsize raw words follow (zeroed, never looked into,
 * the embedder's: an identity, a hash). Field 0 is the collector's link word: never write it. The ephemeron keeps its datum alive only while its key
 * is kept alive by other means (roots, scanned fields, other ephemerons' data): a datum never
 * keeps its own key alive, however many ephemerons a cycle runs through. A key that is an
 * immediate never dies. When a cycle finds the key dead, it clears both key and datum before any
 * of them can be freed, and the ephemeron reads as empty from then on.
 *
 * A weak reference (Go's weak.Pointer) is a block with one weak slot, GC_WEAK_TARGET, and
 * data_wsize raw words after it (field 0 the link word again): the slot does not keep its target alive; when a cycle finds the
 * target dead it clears the slot, before the target can be freed.
 *
 * Reads: gc_ephemeron_key, gc_ephemeron_datum and gc_weak_get return the block while it lives
 * and 0 once it was found dead (never a block being or already swept). While a cycle marks,
 * what they return is shaded (MARKED at once), so a weak-to-strong conversion during marking
 * keeps the block alive through the cycle: the mutator holds it, and the cycle cannot free it.
 * Writes: the set functions are stores (the write barrier darkens the value overwritten while a
 * cycle marks). Key, datum and target given to an allocating function must be kept by a root
 * across the call, as any value held across an allocation (it may collect).
 *
 * Order with finalizers (gc_finalizer_set), as Lua's weak values and weak keys: a cycle clears
 * the weak slots whose target it found dead BEFORE it queues the finalizers of the blocks it
 * found dead, and the ephemerons AFTER the finalizers' marking. So a finalizer never gets, through
 * a weak reference, a block the cycle that queued it found unreachable (its own block included),
 * and resurrecting its block does not refill the weak references to it (Go's weak pointers
 * behave so); but a block being finalized is a live key for that cycle: the ephemerons keyed by
 * it keep their data for its finalizer (side tables keyed by the block), and are cleared by a
 * later cycle that finds the key dead again.
 *
 * Misuse (an immediate, or a block of another tag) returns 0 or does nothing, recording
 * GC_ERR_NOT_BLOCK or GC_ERR_BAD_TAG. A pinned ephemeron or weak reference lives whatever holds
 * it, and its slots stay weak (the fields of a pinned block that are roots are scanned fields). */
enum {
  GC_WEAK_LINK = 0,  /* both kinds: the collector's list link (a raw word) */
  GC_EPHE_KEY = 1,   /* the key's field of an ephemeron */
  GC_EPHE_DATUM = 2, /* the datum's */
  GC_EPHE_DATA = 3,  /* the first of its raw data words */
  GC_WEAK_TARGET = 1,
  GC_WEAK_DATA = 2,
};
/* An ephemeron with the key and datum given (0 for none) and data_wsize raw words; 0 on
 * failure (gc_last_error). May collect. */
gc_value gc_ephemeron_alloc(gc_domain *d, gc_value key, gc_value datum, size_t data_wsize);
gc_value gc_ephemeron_key(gc_domain *d, gc_value ephe);
/* The datum while the key lives; 0 once the key was found dead (or there is none). */
gc_value gc_ephemeron_datum(gc_domain *d, gc_value ephe);
void gc_ephemeron_set_key(gc_domain *d, gc_value ephe, gc_value key);
void gc_ephemeron_set_datum(gc_domain *d, gc_value ephe, gc_value datum);
/* A weak reference to `target` (0 for none) with data_wsize raw words; 0 on failure. */
gc_value gc_weak_alloc(gc_domain *d, gc_value target, size_t data_wsize);
gc_value gc_weak_get(gc_domain *d, gc_value weak);
void gc_weak_set(gc_domain *d, gc_value weak, gc_value target);

/* ---- Collection ---------------------------------------------------------------------------- */

typedef enum gc_collect_kind {
  GC_COLLECT_SLICE, /* a budgeted slice: mark work while a cycle marks (incremental), else a
                     * sweep slice; starts a cycle if pacing says so */
  GC_COLLECT_MAJOR, /* a whole cycle from now: finish the one marking (if any), then finish
                     * sweeping, mark, cycle colours; sweeping continues lazily */
  GC_COLLECT_FULL,  /* MAJOR, then sweep everything and give surplus pools back to the OS */
  GC_COLLECT_START, /* start a cycle and return with marking under way (incremental; in the
                     * stop-the-world mode, a MAJOR); nothing if a cycle already marks */
} gc_collect_kind;
/* From a hook (inside a collection): nothing happens, and the heap records
 * GC_ERR_IN_COLLECTION. */
void gc_collect(gc_domain *d, gc_collect_kind kind);

/* Compaction (OCaml's caml_compact_heap): in one stop of the world, after finishing the cycle
 * marking now (if any) and every domain's sweep, the sparsest pools of each size class are
 * evacuated into the free slots of the others, every reference to a moved block is updated
 * (roots, frames, scanners' slots, finalizer records, ephemeron and weak slots, every field of
 * every live block), and the emptied pools go back to the OS (or the pool cache), with every
 * other free pool. A pinned block, a block a conservative range word names (gc.h's rule) and the
 * block whose finalizer is running never move; their pools are kept. Large blocks never move.
 * Orphans are adopted by d first, so their pools compact with d's.
 *
 * Blocks MOVE: after gc_compact, and after gc_collect(GC_COLLECT_FULL) with `compact` set, a
 * value is valid only if it was in a root the collector knows (a global root, a frame slot, a
 * scanner's slot, a field of a block, a finalizer's block) or in a conservative range (its block
 * did not move). Allocation itself never compacts (its forced collections pass no `compact`),
 * but every safepoint (an allocation's slow path, gc_poll, leaving a blocking section) is where
 * another domain's compaction may stop this one, and a finalizer an allocation runs may call
 * gc_compact: with several domains, or with finalizers that compact, a value held across an
 * allocation or a safepoint keeps its address only if it is rooted as above or pinned. With one
 * domain and no compacting finalizer, a value held across an allocation keeps its address.
 * Refused from a hook (GC_ERR_IN_COLLECTION). A finalizer may compact: its own block does not
 * move. */
gc_error gc_compact(gc_domain *d);

/* One block a compaction moved: its address before and after (gc_compact_forwarded). */
typedef struct gc_compact_move {
  gc_value from, to;
} gc_compact_move;

/* Where the block that was at `old` before the compaction now running lives: its new address if
 * that compaction moved it, else `old` itself (a block that stayed, a large block, an immediate,
 * an address that named no moved block). Valid only inside GC_HOOK_COMPACTED (INV-COMPACT-4,
 * gc/heap.h): a hook that keeps block addresses of its own (a shadow of the heap, a table keyed
 * by address) remaps them there; at any other point it answers `old`. O(log moved blocks). */
gc_value gc_compact_forwarded(const gc_heap *heap, gc_value old);
/* The same table whole: *moves = the moves of the compaction running now, sorted by `from`;
 * returns how many. Inside GC_HOOK_COMPACTED only; 0 (and *moves NULL) at any other time. */
size_t gc_compact_moves(const gc_heap *heap, const gc_compact_move **moves);

/* ---- Statistics ---------------------------------------------------------------------------- */

typedef struct gc_stats {
  /* Heap shape (words include headers). The verification pass `swept` recomputes each owner's,
   * `stats` these sums and every figure below (INV-STATS-2, gc/heap.h). */
  size_t pool_words;       /* words of pools in use by domains (whole pools) */
  size_t pool_max_words;   /* the most pool_words the heap owned at once (never decreases) */
  size_t pool_live_words;  /* words of pool slots holding a block (whsize, not slot size) */
  size_t pool_live_blocks; /* blocks in pools */
  size_t pool_frag_words;  /* pool headers, slot padding and pool-end wastage */
  size_t large_words;      /* words of large blocks including their large header */
  size_t large_max_words;  /* the most large_words the heap owned at once (never decreases) */
  size_t large_blocks;     /* large blocks */
  /* Activity counters. */
  uint64_t cycles;             /* completed major cycles (mark + colour rotation) */
  uint64_t alloc_blocks;       /* blocks allocated since the heap was created */
  uint64_t alloc_words;        /* whsize words allocated */
  uint64_t freed_blocks;       /* blocks freed by sweeping */
  uint64_t freed_words;        /* whsize words freed by sweeping */
  uint64_t alloc_failures;     /* allocations that returned 0 */
  uint64_t mark_overflows;     /* times the mark stack overflowed into re-darkening */
  uint64_t finalizers;         /* blocks with a finalizer set, not yet queued */
  uint64_t finalizers_queued;  /* finalizers queued, not yet run (the one running included) */
  uint64_t finalizers_run;     /* finalizers run since the heap was created */
  uint64_t domains;            /* domains now */
  uint64_t handoffs;           /* work buffers split for idle markers */
  uint64_t orphan_pool_words;  /* pool words waiting on the orphan lists (in pool_words too) */
  uint64_t free_pools;         /* empty pools mapped but unused */
  uint64_t os_pool_bytes;      /* bytes of pools currently mapped from the OS */
  uint64_t mark_slices;        /* incremental mark slices run since the heap was created */
  uint64_t max_slice_ns;       /* the longest of them: the mutator that ran it was stalled that
                               * long, though no other domain was stopped */
  uint64_t pauses;             /* stops of the world recorded since the heap was created: every
                               * stop of a cycle (one in the stw mode; the start, each recheck
                               * and the end with incremental marking) and a full collection's
                               * final sweep */
  uint64_t last_pause_ns;      /* the last stop-the-world pause */
  uint64_t max_pause_ns;       /* the longest pause */
  uint64_t max_start_pause_ns; /* the longest first stop of a cycle (incremental marking: the
                                * start, roots darkened; stw: the whole cycle) */
  uint64_t max_end_pause_ns;   /* the longest stop that ended an incremental mark */
  /* Ephemerons and weak references (INV-EPHE-3, gc/heap.h). */
  uint64_t ephemerons;   /* ephemeron blocks alive on the domains' and orphans' lists */
  uint64_t weak_refs;    /* weak-reference blocks likewise */
  uint64_t ephe_rounds;  /* ephemeron marking rounds run since the heap was created */
  uint64_t ephe_data;    /* data marked through a live key, since the heap was created */
  uint64_t weak_cleared; /* weak slots and ephemerons cleared, since the heap was created */
  /* Compaction (gc_compact), since the heap was created. */
  uint64_t compactions;            /* compactions run */
  uint64_t compact_moved_blocks;   /* blocks they moved */
  uint64_t compact_moved_words;    /* whsize words they moved */
  uint64_t compact_pools_released; /* pools they evacuated and gave back */
} gc_stats;
void gc_get_stats(gc_heap *heap, gc_stats *out);
/* The last pause times (every stop of the world, ns), oldest first, at most GC_PAUSE_HISTORY;
 * returns how many were written to out (up to `max`). */
#define GC_PAUSE_HISTORY 256
size_t gc_pause_history(gc_heap *heap, uint64_t *out, size_t max);

/* ---- Rare events ------------------------------------------------------------------------------
 * How often each rare path of the collector ran since the heap was created: the census a fuzz
 * campaign prints (ci/campaign --census) to show which of them its programs make common. A path
 * that shares a lock or a phase boundary with another is where collectors break, and a fuzzer
 * finds only what it runs often. Each row: the event, its name, what one count is. A domain's
 * phase is `marking` while a cycle marks, `sweeping` while that domain has sweeping left, `idle`
 * otherwise. */
#define GC_EVENTS(X)                                                                               \
  X(CYCLE, "cycle", "a major cycle completed")                                                     \
  X(MARK_SLICE, "mark.slice", "an incremental mark slice ran")                                     \
  X(MARK_ASSIST, "mark.assist", "an allocation paid mark work (an assist) while a cycle marked")   \
  X(MARK_RECHECK, "mark.recheck", "a termination stop found work and let marking resume")          \
  X(MARK_RECHECK_LIMIT, "mark.recheck-limit",                                                      \
    "a termination stop found work with no recheck left and finished the mark itself")             \
  X(MARK_CEILING, "mark.ceiling", "the pacer's ceiling made a stop finish the mark")               \
  X(MARK_OVERFLOW, "mark.overflow",                                                                \
    "a push found no work buffer: its pool or large block flagged")                                \
  X(MARK_REDARKEN, "mark.redarken", "a re-darkening pass over the flagged pools (the recovery)")   \
  X(MARK_HANDOFF, "mark.handoff", "a work buffer split for an idle marker")                        \
  X(EPHE_ROUND_MARKED, "ephe.round-marked",                                                        \
    "an ephemeron round marked a datum, so marking went on and another round followed")            \
  X(WEAK_GET_SHADED, "weak.get-shaded", "a weak or ephemeron read shaded its block mid-mark")      \
  X(SWEEP_SLICE, "sweep.slice", "a lazy sweep slice ran")                                          \
  X(SPAWN_IDLE, "domain.spawn.idle", "a domain joined while no cycle was under way")               \
  X(SPAWN_MARKING, "domain.spawn.marking", "a domain joined while a cycle marked")                 \
  X(SPAWN_SWEEPING, "domain.spawn.sweeping", "a domain joined while its parent had sweeping left") \
  X(TERMINATE_IDLE, "domain.terminate.idle", "a domain left while no cycle was under way")         \
  X(TERMINATE_MARKING, "domain.terminate.marking", "a domain left while a cycle marked")           \
  X(TERMINATE_SWEEPING, "domain.terminate.sweeping", "a domain left with sweeping left")           \
  X(BLOCK_IDLE, "domain.block.idle", "a domain entered a blocking section, no cycle under way")    \
  X(BLOCK_MARKING, "domain.block.marking", "a domain entered a blocking section mid-mark")         \
  X(BLOCK_SWEEPING, "domain.block.sweeping", "a domain entered a blocking section, sweeping left") \
  X(PIN_MARKING, "pin.marking", "a block was pinned while a cycle marked")                         \
  X(UNPIN_MARKING, "unpin.marking", "a block was unpinned while a cycle marked")                   \
  X(FIN_RUN, "finalizer.run", "a finalizer ran")                                                   \
  X(FIN_ALLOCATED, "finalizer.allocated", "a finalizer allocated on the domain running it")        \
  X(FIN_COLLECTED, "finalizer.collected", "a cycle completed inside a finalizer")                  \
  X(ADOPT_STOP, "orphan.adopt-stop", "a stop adopted every orphan (some were waiting)")            \
  X(ADOPT_POOL, "orphan.adopt-pool", "an allocation adopted an orphaned pool")                     \
  X(COMPACTION, "compaction", "a compaction ran")
typedef enum gc_event {
#define GC_EVENT_ENUM(name, id, what) GC_EVENT_##name,
  GC_EVENTS(GC_EVENT_ENUM)
#undef GC_EVENT_ENUM
      GC_EVENT_COUNT
} gc_event;
/* The count of `e` since the heap was created (0 for an event out of range). */
uint64_t gc_event_count(gc_heap *heap, gc_event e);
/* Its name ("mark.recheck") and what one count is; NULL out of range. */
const char *gc_event_name(gc_event e);
const char *gc_event_what(gc_event e);

/* ---- Verification hooks -------------------------------------------------------------------- */

/* The collector calls the hook at these points of every cycle; invariants/ installs it. Every
 * point but GC_HOOK_MARK_SLICE runs with the world stopped. */
typedef enum gc_hook_point {
  GC_HOOK_MARK_DONE,     /* marking finished, colours not yet cycled */
  GC_HOOK_CYCLED,        /* colours cycled: live blocks are UNMARKED, dead ones GARBAGE */
  GC_HOOK_SWEPT,         /* every domain finished sweeping this cycle */
  GC_HOOK_MARK_START,    /* world stopped, sweeping finished, orphans adopted, nothing marked yet:
                       * the snapshot incremental marking will preserve (both modes) */
  GC_HOOK_MARK_SLICE,    /* incremental: a mark slice just ended, on the domain that ran it, with
                       * the world RUNNING: only cheap checks of that domain's own state */
  GC_HOOK_COMPACT_START, /* a compaction's stop: every domain swept, orphans adopted, nothing
                          * moved yet (what a check of the compaction records first) */
  GC_HOOK_COMPACTED,     /* the same stop, the compaction done: blocks moved, references
                          * updated, evacuated pools given back */
} gc_hook_point;
/* A set of hook points, as gc/passes.h gives each pass's. */
#define GC_HOOK_BIT(point) (1u << (point))
typedef void (*gc_hook_fn)(gc_heap *heap, gc_hook_point point, void *user);
void gc_set_hook(gc_heap *heap, gc_hook_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* GC_GC_H */
