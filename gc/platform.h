/* The platform layer: every lock, atomic read-modify-write, barrier, spin-wait and safepoint of
 * the collector goes through here, and each one first calls the scheduling hook.
 *
 * The hook is empty unless a harness installs one. The controlled scheduler in fuzz/ installs it
 * to decide, at each of these points, which thread runs next; that is how it owns every
 * interleaving without a single change to collector code. The hook is process-wide on purpose:
 * it belongs to the harness that owns the threads, not to any one heap.
 */
#ifndef GC_PLATFORM_H
#define GC_PLATFORM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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
 * only the read-modify-writes are sequentially consistent, and only they reach the scheduling
 * hook (a plain load or store is not a point where another thread's choice can matter more
 * than at the next RMW, lock or spin).
 *
 * A word whose value is all the reader needs (a counter, a size, a tuning parameter, a flag
 * that a later lock, barrier or acquire load orders anyway) uses the relaxed forms. A word that
 * publishes other memory (a domain's state, published after its frames and pools; `done` after
 * the work lists) is stored with release and loaded with acquire, so a reader that sees the value
 * also sees what the writer did before storing it. None of the collector's protocols needs a
 * single total order of plain loads and stores (no Dekker-style "store mine, then load yours"):
 * where two threads race for one transition (leader and domain on a domain's state, markers on
 * a header) they use a compare-and-swap, which is sequentially consistent. */

/* Acquire load: later reads and writes of this thread stay after it, and it sees everything the
 * thread whose release store (or RMW) it reads from did before that store. */
static inline uintptr_t gc_atomic_load(const uintptr_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
/* Relaxed load: atomic (never torn, never a data race), no ordering with other memory. */
static inline uintptr_t gc_atomic_load_relaxed(const uintptr_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
/* Release store: earlier reads and writes of this thread stay before it; an acquire load that
 * reads this value sees them. */
static inline void gc_atomic_store(uintptr_t *p, uintptr_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
/* Relaxed store: atomic, no ordering with other memory. */
static inline void gc_atomic_store_relaxed(uintptr_t *p, uintptr_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
/* Sequentially consistent read-modify-write (acquire and release, and in the single total order
 * of all seq_cst operations); returns the old value. A scheduling point. */
static inline uintptr_t gc_atomic_fetch_add(uintptr_t *p, uintptr_t v) {
  gc_plat_point_reached(GC_PLAT_ATOMIC, p);
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
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
