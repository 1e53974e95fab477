/* The platform layer: every lock, atomic read-modify-write, barrier, spin-wait, safepoint and
 * every load and store of a protocol word of the collector goes through here, and each one first
 * calls the scheduling hook.
 *
 * The hook is empty unless a harness installs one. The controlled scheduler in fuzz/ installs it
 * to decide, at each of these points, which thread runs next; that is how it owns every
 * interleaving without a single change to collector code. The hook is process-wide on purpose:
 * it belongs to the harness that owns the threads, not to any one heap.
 *
 * The rule of the layer (which accesses are scheduling points, and why):
 *
 *   A protocol word is shared state through which threads coordinate: a domain's state, the
 *   stop-the-world request, heap->domain_count, the marking flags and counters (work.done,
 *   work.idle, work.full_count, work.overflowed, work.slicing, heap->marking),
 *   running_finalizers, the large index's stale flag; and the heads of the lists threads take
 *   from and push onto under a lock while others run (the orphan lists and the free pools, by
 *   running domains; the work lists, by markers). Every load and store of a protocol word is a
 *   scheduling point:
 *   gc_atomic_load / gc_atomic_store (acquire / release) for a word read without its lock,
 *   GC_GUARDED_LOAD / GC_GUARDED_STORE for a list head read and written under its lock, and the
 *   read-modify-writes as before. A race is a window between two accesses of one thread in which
 *   another thread's access matters; the scheduler can open a window only at a point, so a
 *   protocol access that is not one (a plain or relaxed load before a loop, a check-then-act
 *   with a load and a store, a head read before the lock) hides the window from it. Accesses
 *   under a lock are points too so that a slip that moves one out of its lock still opens a
 *   window the scheduler sees (the lock alone is then no longer around it).
 *
 *   Values that publish nothing and coordinate nothing (the parameters of INV-PARAM-1, statistics
 *   and pacing counters, the failure countdown whose CAS is the point, block headers read while
 *   markers CAS them) use the cheap forms, gc_atomic_load_relaxed / gc_atomic_store_relaxed /
 *   gc_atomic_load_word, which are never points: interleaving there cannot change an outcome
 *   beyond what the next point already allows, and they sit on hot paths.
 *
 *   A domain's own copy of the marking phase (head.marking, gc_store's fast path) is not one:
 *   it changes only while its domain is stopped, so no interleaving around its reads can see it
 *   change. The incremental barrier's slow path makes the field it overwrites a point instead
 *   (the load of the old value and the store), where a marker of another domain may scan it.
 *
 *   Exempt: initialisation before a word is published (a domain not yet on the list); code that
 *   runs only with the world stopped and no other marker running (adopting every orphan,
 *   shaping the work buffers, the large index's rebuild, destroying the heap), where no other
 *   thread of the heap runs between two accesses; and the plain reads of heap->domain_count by
 *   a holder of stw_lock, its only writers' lock (INV-STW-1).
 *   //gc:protocol_access_test lists the protocol words and fails on any access in gc/ that does
 *   not go through a point form (or is not one of the listed exemptions).
 */
#ifndef GC_PLATFORM_H
#define GC_PLATFORM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Arithmetic meant to wrap. Unsigned arithmetic in gc/, invariants/ and fuzz/ is meant never to
 * wrap, except in hashing and pseudo-random mixing (FNV-1a, Fibonacci hashing, splitmix64),
 * which is arithmetic modulo 2^64 on purpose: such code sits in a small function marked
 * GC_WRAPS, and nowhere else. UBSan's unsigned-integer-overflow check (in OSS-Fuzz's UBSan set,
 * where one report stops the run) then skips exactly those functions and still sees every
 * other unsigned wrap, which is a bug (a count gone below zero, a size overflowing). */
#define GC_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))

/* One FNV-1a step: the hash of `hash`'s input followed by `value`. The offset basis: */
#define GC_FNV1A_BASIS 0xcbf29ce484222325ull
static inline GC_WRAPS uint64_t gc_fnv1a(uint64_t hash, uint64_t value) {
  return (hash ^ value) * 0x100000001b3ull;
}

typedef enum gc_plat_point {
  GC_PLAT_LOCK,      /* about to take a mutex (object: the mutex) */
  GC_PLAT_UNLOCK,    /* just released a mutex (object: the mutex) */
  GC_PLAT_TRYLOCK,   /* about to try a mutex; never blocks (object: the mutex). Kept apart from
                      * LOCK because a scheduler that models blocking must never model a trylock
                      * as waiting: the collector spins on trylock while answering safepoints. */
  GC_PLAT_ATOMIC,    /* about to do an atomic read-modify-write (object: the word) */
  GC_PLAT_BARRIER,   /* about to wait at a barrier (object: the barrier) */
  GC_PLAT_SPIN,      /* one turn of a spin-wait loop (object: what is waited for) */
  GC_PLAT_SAFEPOINT, /* a mutator safepoint (object: the domain) */
  GC_PLAT_LOAD,      /* about to load a protocol word (object: the word); see the rule above */
  GC_PLAT_STORE,     /* about to store a protocol word (object: the word) */
  GC_PLAT_MARK,      /* about to run an incremental mark slice (object: the domain): another
                      * domain's stores may land between two slices, and within one at every
                      * header a marker colours (a compare-and-swap, GC_PLAT_ATOMIC) */
} gc_plat_point;

typedef void (*gc_plat_hook_fn)(gc_plat_point point, const void *object);

/* The installed hook, or NULL. Read on every platform operation, relaxed: a harness installs it
 * (gc_plat_set_hook, sequentially consistent) before starting the threads it schedules, and
 * thread creation orders the two. */
extern gc_plat_hook_fn gc_plat_hook;
void gc_plat_set_hook(gc_plat_hook_fn fn);

static inline void gc_plat_point_reached(gc_plat_point point, const void *object) {
  gc_plat_hook_fn fn = __atomic_load_n(&gc_plat_hook, __ATOMIC_RELAXED);
  if (fn) fn(point, object);
}

/* ---- Mutexes ---- */

/* pthread mutexes: lock is an acquire, unlock a release, as for any mutex. */
typedef struct gc_mutex {
  pthread_mutex_t m;
} gc_mutex;

void gc_mutex_init(gc_mutex *mu);
void gc_mutex_destroy(gc_mutex *mu);
void gc_mutex_lock(gc_mutex *mu);
/* Returns 1 if the mutex was taken. Never blocks: callers spin with gc_plat_spin around it when
 * they must stay responsive (a domain waiting for the collection lock still answers safepoints). */
int gc_mutex_trylock(gc_mutex *mu);
void gc_mutex_unlock(gc_mutex *mu);

/* ---- Atomics ----
 *
 * Every shared word that is not guarded by a lock is read and written through these (C11 memory
 * orders, on uintptr_t words). Each gives exactly the ordering its name or comment says, no more:
 * only the read-modify-writes are sequentially consistent. Which of them are scheduling points
 * is the rule of the layer (top of this file): the acquire load, the release store and the
 * read-modify-writes are; the relaxed forms are not.
 *
 * A protocol word is loaded with acquire and stored with release (gc_atomic_load/store), also
 * when only its value matters: a word that publishes other memory (a domain's state, published
 * after its frames and pools; `done` after the work lists) needs that order, and one that does
 * not pays nothing for it on x86 (a plain mov) and little elsewhere. None of the collector's
 * protocols needs a single total order of plain loads and stores (no Dekker-style "store mine,
 * then load yours"): where two threads race for one transition (leader and domain on a domain's
 * state, markers on a header) they use a compare-and-swap, which is sequentially consistent. */

/* Acquire load: later reads and writes of this thread stay after it, and it sees everything the
 * thread whose release store (or RMW) it reads from did before that store. A scheduling point:
 * for protocol words only (see the rule). */
static inline uintptr_t gc_atomic_load(const uintptr_t *p) {
  gc_plat_point_reached(GC_PLAT_LOAD, p);
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
/* Release store: earlier reads and writes of this thread stay before it; an acquire load that
 * reads this value sees them. A scheduling point: for protocol words only. */
static inline void gc_atomic_store(uintptr_t *p, uintptr_t v) {
  gc_plat_point_reached(GC_PLAT_STORE, p);
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
/* Relaxed load: atomic (never torn, never a data race), no ordering with other memory, and not
 * a scheduling point: for words that publish and coordinate nothing (see the rule). */
static inline uintptr_t gc_atomic_load_relaxed(const uintptr_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
/* Relaxed store: atomic, no ordering with other memory, not a scheduling point. */
static inline void gc_atomic_store_relaxed(uintptr_t *p, uintptr_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
/* Relaxed add, not a scheduling point: for statistics counted by several threads at once. */
static inline void gc_atomic_add_relaxed(uintptr_t *p, uintptr_t v) {
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
/* An acquire load that is not a scheduling point, for a verifier reading protocol words with the
 * world stopped (invariants/): a harness must not add points of its own to the interleaving it
 * checks. Never used in gc/ (//gc:protocol_access_test). */
static inline uintptr_t gc_atomic_peek(const uintptr_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* A safepoint: the scheduling point, then an acquire load of the flag that asks this thread to
 * stop (heap->stw_requested). The safepoint is that load's point: a second one right after it
 * would add a step where nothing can happen in between. */
static inline uintptr_t gc_safepoint_load(const uintptr_t *flag, const void *domain) {
  gc_plat_point_reached(GC_PLAT_SAFEPOINT, domain);
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* A list head (any pointer lvalue) guarded by a lock, read or written under it: a scheduling
 * point, then a plain access. Plain on purpose: the lock orders it, and ThreadSanitizer still
 * reports a race when the lock is missing (an atomic access would hide that from it). The
 * point is there for the day the access slips out of its lock (see the rule). */
#define GC_GUARDED_LOAD(lvalue) (gc_plat_point_reached(GC_PLAT_LOAD, &(lvalue)), (lvalue))
#define GC_GUARDED_STORE(lvalue, value)              \
  do {                                               \
    gc_plat_point_reached(GC_PLAT_STORE, &(lvalue)); \
    (lvalue) = (value);                              \
  } while (0)

/* Sequentially consistent read-modify-write (acquire and release, and in the single total order
 * of all seq_cst operations); returns the old value. A scheduling point. */
static inline uintptr_t gc_atomic_fetch_add(uintptr_t *p, uintptr_t v) {
  gc_plat_point_reached(GC_PLAT_ATOMIC, p);
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
/* The same, subtracting `v`: a counter going down, without negating `v` (which wraps). */
static inline uintptr_t gc_atomic_fetch_sub(uintptr_t *p, uintptr_t v) {
  gc_plat_point_reached(GC_PLAT_ATOMIC, p);
  return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);
}
/* Returns 1 and stores `desired` if *p == expected; 0 otherwise. Sequentially consistent whether
 * it succeeds or not (a failed one is a seq_cst load): the winner of a race for a transition
 * sees everything the previous owner published. A scheduling point. */
static inline int gc_atomic_cas(uintptr_t *p, uintptr_t expected, uintptr_t desired) {
  gc_plat_point_reached(GC_PLAT_ATOMIC, p);
  return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Relaxed fetch-or on a 32-bit flag word; returns the old value. Only the bits matter: the
 * markers set re-darkening flags with it, and the leader reads them after the mark's closing
 * barrier, which orders them. A scheduling point. */
static inline uint32_t gc_atomic_or_u32(uint32_t *p, uint32_t bits) {
  gc_plat_point_reached(GC_PLAT_ATOMIC, p);
  return __atomic_fetch_or(p, bits, __ATOMIC_RELAXED);
}
/* A block header read while other markers may mark (CAS) it: a relaxed load. The reader needs
 * the header's value only (size, tag, colour); the block's fields were written before the world
 * stopped, and the stop orders them, so the header publishes nothing. */
static inline uintptr_t gc_atomic_load_word(const uintptr_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* A barrier for the phases of a stop-the-world section: followers arrive and wait; the leader
 * waits for all of them, runs the serial part alone, then releases them. Ordering: everything a
 * follower did before arriving happens before the leader's return from gc_barrier_lead (acq_rel
 * arrival, acquire wait), and everything the leader did before gc_barrier_release happens
 * before the followers' return from gc_barrier_follow (acq_rel release, acquire wait). */
typedef struct gc_barrier {
  uintptr_t arrived;    /* followers arrived in this generation */
  uintptr_t generation; /* bumped by the leader to release the followers */
} gc_barrier;
void gc_barrier_follow(gc_barrier *b);
/* Wait until `followers` have arrived; the caller then runs its serial part and calls release. */
void gc_barrier_lead(gc_barrier *b, size_t followers);
void gc_barrier_release(gc_barrier *b);

/* One turn of a spin-wait on `object`: lets the hook schedule another thread, then pauses. */
void gc_plat_spin(const void *object);

/* ---- Memory from the OS ---- */

/* `bytes` of zeroed memory aligned to `align_bytes` (a power of two, a multiple of the page
 * size), or NULL. Each page-aligned part may later be unmapped on its own. */
void *gc_plat_map_aligned(size_t bytes, size_t align_bytes);
void gc_plat_unmap(void *mem, size_t bytes);

/* ---- Time ---- */

uint64_t gc_plat_now_ns(void);

#endif /* GC_PLATFORM_H */
