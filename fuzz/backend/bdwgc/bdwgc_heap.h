/* The bdwgc backend's heap: the types its files share and the names they call each other by
 * (bdwgc_*). Nothing outside fuzz/backend/bdwgc includes this; the harness sees the backend only
 * as fuzz_backend_bdwgc (fuzz/backend/backend.h).
 *
 *   bdwgc_backend.c   process setup, create and destroy, collections, tunables, the table
 *   bdwgc_registry.c  the registry of the blocks this heap allocated and their long links
 *   bdwgc_blocks.c    blocks, their identities and fields, cells, ranges, walk
 *   bdwgc_finalize.c  finalizers and weak references
 *   bdwgc_domains.c   domains: threads made by GC_pthread_create, and running a call on one
 *   bdwgc_check.c     the deep check
 *   bdwgc_census.c    the rare events
 */
#ifndef FUZZ_BACKEND_BDWGC_BDWGC_HEAP_H
#define FUZZ_BACKEND_BDWGC_BDWGC_HEAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz/backend/backend.h"
#include "gc.h"
#include "gc_inline.h" /* GC_I_NORMAL, GC_I_PTRFREE */
#include "gc_mark.h"   /* GC_get_kind_and_size */

enum {
  IDENT_WORDS = 2,           /* id, check */
  WEAK_SLOT = 2,             /* the word of a weak reference that holds its hidden target */
  WEAK_WORDS = 3,            /* id, check, hidden target */
  MAX_FIELDS = 1151,         /* the interface's largest block */
  MAX_RANGES = 64,           /* bdwgc's root set table is finite (MAX_ROOT_SETS); stay far below */
  PENDING_MAX = 8,           /* findings noticed outside check, reported by the next check */
  CHUNK_ENTRIES = 1024,      /* registry entries per chunk (chunks never move: links live there) */
  NEVER_MS = 999998,         /* a time limit the clock never reaches: GC_TIME_UNLIMITED - 1 */
  MAX_HEAP_STEP = 128 << 10, /* tune max_heap: V * 128 KiB, 0 unbounded */
  INFLIGHT_MAX = 8,          /* root slots for blocks being made, one per nested allocating op */
  DOMAINS = 4,               /* the interface's domains: 0 (the creating thread) and 1..3 */
};

/* The rare events of bdwgc the backend counts (bdwgc_census.c says how each is seen):
 * X(NAME, "name", "what one count is"). */
#define BDWGC_RARE_EVENTS(X)                                                                       \
  X(CYCLE, "cycle", "a collection completed (GC_get_gc_no)")                                       \
  X(FULL, "full", "a whole collection completed (GC_gcollect, an allocation, the first one)")      \
  X(FULL_ABANDONED, "full.abandoned", "a whole collection the stop function cut short")            \
  X(BY_INCREMENTS, "increments.completed",                                                         \
    "a collection completed by increments (GC_collect_a_little, allocation's share)")              \
  X(MARK_ABANDONED, "mark.abandoned", "a stopped mark abandoned at the step budget")               \
  X(STEP_MID_CYCLE, "step.mid-cycle", "an increment (slice) that left a collection under way")     \
  X(THREAD_SUSPENDED, "thread.suspended", "a domain's thread stopped for a collection")            \
  X(HEAP_GROWN, "heap.grown", "the heap grew (GC_set_on_heap_resize)")                             \
  X(ALLOC_FAILED, "alloc.failed", "an allocation bdwgc refused (max_heap, dont_expand)")           \
  X(FIN_RUN, "fin.run", "a finalizer ran (GC_invoke_finalizers)")                                  \
  X(FIN_NESTED, "fin.nested", "a finalizer ran inside another's body (the body allocated)")        \
  X(FIN_SET_AGAIN, "fin.set-again",                                                                \
    "a fin_set whose registration a collection queued finalizers around (taken back, made again)") \
  X(WEAK_CLEARED, "weak.read-cleared", "a weak reference read with its link cleared by bdwgc")

typedef enum bdwgc_rare {
#define BDWGC_RARE_ENUM(name, id, what) BDWGC_RARE_##name,
  BDWGC_RARE_EVENTS(BDWGC_RARE_ENUM)
#undef BDWGC_RARE_ENUM
      BDWGC_RARE_COUNT
} bdwgc_rare;

enum { BDWGC_SEEN_COUNT = 6 }; /* bdwgc_census.c: the callbacks' process-wide counters */

typedef enum block_shape { SHAPE_SCAN, SHAPE_RAW, SHAPE_WEAK } block_shape;
/* The object kind bdwgc must have put a block of this shape in: a scanned block in a heap block
 * bdwgc scans (NORMAL), a raw block or weak reference in a pointer-free one (GC_MALLOC_ATOMIC). */
static inline int bdwgc_kind_of(block_shape shape) {
  return shape == SHAPE_SCAN ? GC_I_NORMAL : GC_I_PTRFREE;
}

typedef enum fin_order { FIN_ORDERED, FIN_UNORDERED, FIN_IGNORE_SELF } fin_order;

/* ---- The registry (bdwgc_registry.c) --------------------------------------------------------- */

/* INV-BDWGC-1: an entry with key != 0 names a block this heap allocated (GC_HIDE_POINTER of its
 * base) and is in the hash; its long link is registered with bdwgc exactly while link != 0, and
 * bdwgc clears link (and drops the registration) when a cycle finds the block unreachable. An
 * entry with key == 0 is on the free list. */
typedef struct block_entry {
  GC_hidden_pointer link; /* the long link: the hidden block, 0 once bdwgc found it unreachable */
  GC_hidden_pointer key;  /* the hidden block, kept after link clears; 0: a free entry */
  uint32_t words;         /* requested size in words, identity included */
  uint32_t seen;          /* the check's visit epoch */
  uint8_t shape;          /* block_shape */
  uint8_t has_fin;        /* fin_set gave it a finalizer that has neither run nor been cleared */
} block_entry;

/* Only the thread running the heap's ops touches the registry (INV-BDWGC-2 below), and bdwgc
 * writes its links only under the allocation lock, in a collection that thread runs: bdwgc's
 * parallel markers mark objects and never clear links. So it needs no lock of its own. */
typedef struct registry {
  block_entry **chunks; /* chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES] */
  size_t chunk_count;
  size_t entries; /* entries ever handed out (free ones included) */
  uint32_t *free; /* indices of free entries */
  size_t free_count;
  uint32_t *slots;     /* open addressing by block address: entry index + 1, 0 empty */
  size_t slot_count;   /* a power of two, at least twice the keys */
  size_t keys;         /* entries in the hash */
  GC_word swept_gc_no; /* GC_get_gc_no() at the last sweep: links clear only in collections */
} registry;

/* ---- Domains (bdwgc_domains.c) --------------------------------------------------------------- */

/* A domain d >= 1: a thread made by GC_pthread_create (so registered with bdwgc: its stack is
 * scanned, it is stopped by bdwgc's signals, it has thread-local free lists) that waits on its
 * condition variable for a call, runs it and waits again. */
typedef struct domain {
  struct fuzz_bheap *h;
  pthread_t thread;
  bool live;             /* spawned and not yet ended */
  bool quit;             /* domain_end asked it to return */
  void (*fn)(void *arg); /* the call handed to it, NULL when it has none */
  void *arg;
  pthread_cond_t wake; /* signalled when fn or quit is set */
} domain;

/* ---- The heap -------------------------------------------------------------------------------- */

/* INV-BDWGC-2: exactly one thread runs the heap's ops at any time, every other parked on a
 * condition variable: a domain's thread on its `wake`, the creating thread on `done` while it
 * has handed a call over. The calls bdwgc serves per thread (bdwgc_backend.c says which) run on
 * domain `on`'s thread through bdwgc_run_on, directly when already there (the creating thread
 * for 0, a finalizer's body calling back); the others run on the caller's, between hand-overs. */
struct fuzz_bheap {
  fuzz_backend_config cfg;
  void **cells;    /* the driver's cfg.cells, FUZZ_CELL_SELF, then INFLIGHT_MAX slots: a GC root */
  size_t root_len; /* words in that root range */
  size_t depth;    /* allocating ops under way (a finalizer they run may call another) */
  fin_order fin;
  bool weak_long; /* weak refs by long links (kept while a finalizer can reach) */
  bool incremental;
  bool dying; /* destroy is under way: finalizers run now do nothing */
  uintptr_t *ranges[MAX_RANGES];
  size_t range_words[MAX_RANGES];
  size_t range_count;
  unsigned auto_steps; /* tune pause_steps: mark steps an op's stopped mark may take */
  registry reg;
  uint32_t epoch; /* the check's current visit mark */
  fuzz_finding pending[PENDING_MAX];
  size_t pending_count;    /* all noticed; the first PENDING_MAX kept */
  domain dom[DOMAINS];     /* dom[0] is the creating thread's, never spawned */
  unsigned on;             /* the domain the calls run on */
  pthread_mutex_t handoff; /* guards every domain's fn, arg, quit and call_done */
  pthread_cond_t done;     /* signalled when a handed-over call has returned */
  bool call_done;
  uint64_t rare[BDWGC_RARE_COUNT];           /* the events the backend counts itself */
  uint64_t seen_at_create[BDWGC_SEEN_COUNT]; /* bdwgc's callbacks' counts at create */
  GC_word gc_no_at_create;                   /* GC_get_gc_no() at create */
};

extern fuzz_bheap *bdwgc_current; /* bdwgc's heap is the process's: at most one backend heap */

/* The stop function's countdown (bdwgc_backend.c): mark steps a stopped mark may still take,
 * SIZE_MAX for no limit (outside the ops that allow one). */
extern size_t bdwgc_steps_left;

/* A finding noticed outside check (at an allocation), reported by the next check. */
void bdwgc_note(fuzz_bheap *h, const char *kind, const char *fmt, const void *p);

/* The finalization procedure that never runs: bdwgc leaves an `ofn` alone when it could not make
 * a registration, so an ofn still equal to this says so. */
void GC_CALLBACK bdwgc_never_runs(void *obj, void *cd);

/* ---- Registry ---- */
static inline block_entry *bdwgc_reg_entry(registry *r, uint32_t i) {
  return &r->chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
}
block_entry *bdwgc_reg_find(registry *r, const void *p); /* whatever its link says, or NULL */
bool bdwgc_reg_add(fuzz_bheap *h, void *p, uint32_t words, block_shape shape);
void bdwgc_reg_free(registry *r);

/* ---- Blocks ---- */
static inline uintptr_t *bdwgc_block(fuzz_bheap *h, size_t cell) {
  return (uintptr_t *)h->cells[cell];
}
bool bdwgc_live_block(fuzz_bheap *h, uintptr_t word); /* in the registry, link not cleared */
void bdwgc_op_begin(fuzz_bheap *h);
void bdwgc_op_end(void);
size_t bdwgc_inflight_enter(fuzz_bheap *h);
void bdwgc_inflight_leave(fuzz_bheap *h, size_t slot);

/* The interface's calls, as they run on the domain's thread (bdwgc_backend.c hands them there).
 * Each is the fuzz_backend member of the same name after the prefix. */
int bdwgc_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields);
void bdwgc_set_ident(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check);
int bdwgc_get_ident(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check);
void bdwgc_store(fuzz_bheap *h, size_t obj, size_t field, size_t src);
void bdwgc_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value);
fuzz_field_kind bdwgc_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field, int64_t *value);
void bdwgc_raw_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value);
uint64_t bdwgc_raw_read(fuzz_bheap *h, size_t obj, size_t word);
void bdwgc_copy(fuzz_bheap *h, size_t dst, size_t src);
void bdwgc_clear(fuzz_bheap *h, size_t cell);
int bdwgc_range_add(fuzz_bheap *h, uintptr_t *words, size_t count);
int bdwgc_address(fuzz_bheap *h, size_t cell, uintptr_t *start, size_t *bsize);
size_t bdwgc_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                  void *user);
size_t bdwgc_live_bytes(fuzz_bheap *h);

/* ---- Finalizers and weak references ---- */
size_t bdwgc_run_finalizers(fuzz_bheap *h);
int bdwgc_fin_set(fuzz_bheap *h, size_t cell, uint64_t token);
int bdwgc_fin_clear(fuzz_bheap *h, size_t cell);
int bdwgc_weak_new(fuzz_bheap *h, size_t dst, size_t target);
int bdwgc_weak_get(fuzz_bheap *h, size_t dst, size_t weak);

/* ---- Domains ---- */
void bdwgc_domains_init(fuzz_bheap *h);
void bdwgc_domains_fini(fuzz_bheap *h); /* ends every domain; the calls run on 0 after */
/* Run fn(arg) on domain on's thread and return when it has: directly when the caller is that
 * thread already (domain 0, or a finalizer's body calling back), else handed over. */
void bdwgc_run_on(fuzz_bheap *h, void (*fn)(void *arg), void *arg);
int bdwgc_domain_spawn(fuzz_bheap *h, unsigned d);
void bdwgc_domain_on(fuzz_bheap *h, unsigned d);
void bdwgc_domain_end(fuzz_bheap *h, unsigned d);

/* ---- Rare events ---- */
extern const fuzz_rare_event bdwgc_rare_events[BDWGC_RARE_COUNT];
void bdwgc_census_init(void);           /* once a process: bdwgc's callbacks */
void bdwgc_census_start(fuzz_bheap *h); /* at create: the counts so far */
void bdwgc_rare_counts(fuzz_bheap *h, uint64_t *counts);

/* ---- The deep check ---- */
size_t bdwgc_check(fuzz_bheap *h, fuzz_finding *out, size_t max);

#endif /* FUZZ_BACKEND_BDWGC_BDWGC_HEAP_H */
