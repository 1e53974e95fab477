/* The controlled scheduler: runs a few real threads one at a time and chooses, at every scheduling
 * point of gc/platform.h (lock, trylock, unlock, atomic read-modify-write, barrier, spin turn,
 * safepoint, protocol load and store, the start of a mark slice), which thread runs next. The choice comes from the fuzz
 * input's bytes or from PCT (seeded random priorities), so any interleaving can be asked for, and
 * the same configuration and thread programs always give the same interleaving: every failure
 * replays.
 *
 * Model. A managed thread stands at a point until the scheduler resumes it. It is runnable unless
 * it stands at GC_PLAT_LOCK on a mutex the owner table says is held (INV-SCHED-1 below); a thread
 * at GC_PLAT_SPIN or GC_PLAT_BARRIER yields: it is not picked again while another thread is
 * runnable. A protocol load or store (GC_PLAT_LOAD, GC_PLAT_STORE) or a mark slice's start (GC_PLAT_MARK) is a plain choice: the thread
 * stays runnable and nothing is waited for; the access happens when the thread is resumed, so a
 * switch there puts the other threads between this access and the thread's previous one. No live thread runnable is a deadlock; every runnable thread only spinning for
 * `livelock_steps` steps is a livelock. Both stop the run with a report naming where each thread
 * waits.
 *
 * INV-SCHED-1: at most one managed thread runs at a time, and the owner table is exact for every
 * mutex taken by managed threads during the run: the scheduler records the owner when it resumes
 * a thread at LOCK on a free mutex, or at TRYLOCK on a free mutex (the trylock then succeeds, as
 * nobody else runs until the next point), and clears it at UNLOCK. So the real pthread call after
 * a resumed LOCK never blocks, and a thread never waits on anything but its own baton. Mutexes
 * shared with managed threads must not be taken by other threads during a run.
 *
 * Cost: a step where the running thread keeps running is a function call (no syscall, no lock);
 * a switch is one semaphore post and one wait (a few yields before it sleeps). Managed threads run
 * on worker OS threads that outlive the scheduler and serve the next one (sched.c, "Workers"), so
 * a run creates no OS thread once the workers exist.
 *
 * Not collector-specific: it depends on gc/platform.h only. One scheduled run at a time per
 * process (the hook is process-wide); threads it does not manage pass through the hook untouched.
 */
#ifndef FUZZ_SCHED_H
#define FUZZ_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gc/platform.h"

enum { FUZZ_SCHED_MAX_THREADS = 8 };

typedef enum fuzz_sched_mode {
  /* Choices from a byte string, read in pairs (run, choice): the running thread passes `run` more
   * steps, then at the next step runnable[choice % n_runnable] runs (runnable threads in index
   * order, the current one included unless it yields). Thread 0 starts; step 1 reads the first
   * pair. When the bytes run out, only blocking, yields and thread ends switch (to the next
   * runnable thread in index order). */
  FUZZ_SCHED_BYTES,
  /* PCT (Burckhardt et al., ASPLOS 2010): each thread a distinct random priority >= depth, depth-1
   * change points drawn from [1, pct_steps]; at the i-th one the running thread's priority
   * becomes i; the highest-priority runnable thread runs. Finds a bug of depth d in a program of
   * n threads and k steps with probability >= 1/(n * k^(d-1)) per run. */
  FUZZ_SCHED_PCT,
  /* Scheduler off: threads run in real parallel, no hook (stress under ThreadSanitizer). */
  FUZZ_SCHED_FREE,
} fuzz_sched_mode;

typedef struct fuzz_sched_config {
  fuzz_sched_mode mode;
  uint64_t seed;        /* PCT: all randomness comes from it */
  unsigned depth;       /* PCT: d; 0 means 3 */
  uint64_t pct_steps;   /* PCT: k, the steps change points are drawn from; 0 means 2000 */
  const uint8_t *bytes; /* BYTES: the choices (not copied: must outlive the run) */
  size_t bytes_len;
  uint64_t step_limit;     /* no preemption after this step (the run still goes to its end);
                             0: no limit */
  uint64_t livelock_steps; /* steps of spinning only before a livelock is reported; 0: 100000 */
  size_t log_steps;        /* steps kept for the printed interleaving, rounded up to a power of
                             two; 0 means 65536 */
  FILE *trace;             /* if set: one line per switch, and the deadlock/livelock report
                             (else stderr) */
} fuzz_sched_config;

typedef enum fuzz_sched_status {
  FUZZ_SCHED_OK = 0,
  FUZZ_SCHED_DEADLOCK = 1, /* every live thread waits on a lock; the threads stay parked */
  FUZZ_SCHED_LIVELOCK = 2, /* every runnable thread only spins; the threads stay parked */
  FUZZ_SCHED_EINVAL = -1,  /* run called twice, or a thread could not be started */
} fuzz_sched_status;

typedef struct fuzz_sched fuzz_sched;

/* NULL when out of memory. */
fuzz_sched *fuzz_sched_create(const fuzz_sched_config *cfg);
/* Threads still parked (after a deadlock or livelock, or never run) are abandoned: each is woken
 * and longjmps out of its program, which does not run further; locks it holds stay held, so the
 * caller must not destroy those mutexes. Then everything is freed. */
void fuzz_sched_destroy(fuzz_sched *s);

/* A managed thread running fn(arg): returns its index (0, 1, ... in spawn order), or -1 when
 * FUZZ_SCHED_MAX_THREADS already exist or the thread cannot be created. Before the run, from
 * the caller's thread; during it, from a managed thread only (a domain spawning a domain), and
 * then the spawn is a scheduling step of the spawner. */
int fuzz_sched_spawn(fuzz_sched *s, void (*fn)(void *), void *arg);

/* Installs the hook, runs every managed thread to its end (including those spawned meanwhile),
 * uninstalls the hook. Returns a fuzz_sched_status. Once per scheduler. PCT starts with the
 * highest-priority thread, BYTES with thread 0. */
int fuzz_sched_run(fuzz_sched *s);

/* The hook (gc_plat_hook_fn): a scheduling step of the calling managed thread; a no-op for other
 * threads. A harness may call it directly for its own points (e.g. GC_PLAT_SAFEPOINT between two
 * ops of a domain's program). */
void fuzz_sched_point(gc_plat_point point, const void *object);

/* How reports and the printed interleaving name thread `thread` (up to 7 characters; default
 * "t<index>"), e.g. the domain it runs. */
void fuzz_sched_label(fuzz_sched *s, int thread, const char *label);

/* The calling thread's index, or -1 when the scheduler does not manage it. */
int fuzz_sched_self(void);

/* Names `object` in reports and the printed interleaving ("lock stw_lock"); the name is copied
 * (up to 31 bytes). Up to 64 names. Before the run, or from the running managed thread. */
void fuzz_sched_name(fuzz_sched *s, const void *object, const char *name);

/* ---- The interleaving ---- */

/* Step kinds besides the gc_plat_point values. */
enum { FUZZ_SCHED_SPAWN = 100, FUZZ_SCHED_END = 101 };

typedef struct fuzz_sched_step {
  const void *object; /* NULL for SPAWN and END */
  uint8_t thread;
  uint8_t kind; /* a gc_plat_point, FUZZ_SCHED_SPAWN or FUZZ_SCHED_END */
} fuzz_sched_step;

/* Steps of the run: every point a managed thread reached, every spawn during the run, every
 * thread end. This is the k of PCT. */
uint64_t fuzz_sched_steps(const fuzz_sched *s);
/* Times the running thread changed. */
uint64_t fuzz_sched_switches(const fuzz_sched *s);
/* FNV-1a over every step's (thread, kind), never an address: equal across replays. */
uint64_t fuzz_sched_hash(const fuzz_sched *s);
/* The step numbered `step` (1-based); 0 when it is not among the last log_steps. */
int fuzz_sched_step_at(const fuzz_sched *s, uint64_t step, fuzz_sched_step *out);
const char *fuzz_sched_kind_name(int kind);
/* The name given to `object`, or "?". */
const char *fuzz_sched_object_name(const fuzz_sched *s, const void *object);
/* The kept steps, consecutive steps of one thread as one line: "d1 x37  last: lock stw_lock". */
void fuzz_sched_print_interleaving(const fuzz_sched *s, FILE *out);

#endif /* FUZZ_SCHED_H */
