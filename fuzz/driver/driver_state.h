/* The fuzz driver's state, shared by its two halves: driver.c (the ops, the checks, running a
 * program on one thread) and threads.c (running a program's parts on threads, one per domain).
 * Private to fuzz/: drivers use fuzz/driver/driver.h. */
#ifndef FUZZ_DRIVER_STATE_H
#define FUZZ_DRIVER_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/ops.h"
#include "fuzz/sched/sched.h"
#include "gc/gc.h"
#include "invariants/model.h"
#include "invariants/verify.h"

enum { PASS_REACH, PASS_SWEPT, PASS_CHECKMARK, PASS_MODEL, PASS_DRIVER };

/* Model roots: one bank per mutator: its slots, each frame's snapshot, its global cells (bank b
 * starts at b * BANK_ROOTS; the one-thread targets have bank 0 only). */
enum {
  BANK_SLOTS = 0,
  BANK_FRAMES = BANK_SLOTS + FUZZ_SLOTS,
  BANK_GLOBALS = BANK_FRAMES + FUZZ_FRAMES * FUZZ_SLOTS,
  BANK_ROOTS = BANK_GLOBALS + FUZZ_GLOBALS,
};

/* A local root frame pushed by `push`: a snapshot of the slots when it was pushed, on the domain
 * the program was on. */
typedef struct driver_frame {
  gc_frame frame;
  gc_value values[FUZZ_SLOTS];
  int domain;   /* the domain it is pushed on, or -1 when the record is free */
  uint64_t seq; /* push order: a domain's innermost frame has its highest seq */
} driver_frame;

/* A mutator: what one thread of the program holds. The graph and roots targets have one, which
 * moves from domain to domain with `on`; the schedule target has one per domain, on its own
 * thread (fuzz/schedule.c). */
typedef struct mutator {
  /* INV-DRV-1: every block a mutator can reach is in one of its slots, one of its pushed frames'
   * snapshots, a registered global cell, or a field of one of those; each of those words is a
   * model root (bound with gc_model_root_bind; its bank starts at root_base), and the words of
   * frames not pushed and cells not registered are NULL. So the model knows every root, and
   * every block is a model object (allocated through the model). */
  gc_value slots[FUZZ_SLOTS];
  gc_frame slot_frame; /* always the outermost frame of the domain it was pushed on */
  driver_frame frames[FUZZ_FRAMES];
  int frame_count; /* records in use */
  uint64_t frame_seq;
  /* Global root cells g0..g7, each mutator its own: on threads, two mutators registering one
   * cell would race, and which call wins depends on where the scheduler preempts inside it. */
  gc_value globals[FUZZ_GLOBALS];
  unsigned char registered[FUZZ_GLOBALS];
  size_t root_base;
  /* The domain the mutator is on (INV-DRV-2), and that domain while it runs (NULL while a
   * `block` holds it). */
  int on;
  gc_domain *dom;
  const fuzz_op *op; /* the op running, NULL during setup and the final checks */
  int terminated;    /* on threads: its domain terminated itself; its thread ends */
} mutator;

/* The calling thread's mutator (set by fuzz_run for the graph and roots targets, by each domain's
 * thread for the schedule target). */
extern __thread mutator *drv_self;
static inline mutator *me(void) { return drv_self; }

typedef struct driver {
  const fuzz_options *opt;
  FILE *out;
  fuzz_result *res;
  gc_heap *heap;
  /* Domains (see "Domains in one thread" in ops.h). INV-DRV-2: a mutator's domain, domains[on],
   * runs unless blocked[on]; every other spawned domain (one no mutator is on) is in a blocking
   * section. */
  gc_domain *domains[FUZZ_DOMAINS];
  unsigned char blocked[FUZZ_DOMAINS];
  gc_verifier *verifier;
  gc_model *model;

  mutator muts[FUZZ_DOMAINS]; /* the graph and roots targets use muts[0] only */
  /* Conservative ranges, registered through the model for the whole program; written only by
   * gc_model_range_store. */
  uintptr_t ranges[FUZZ_RANGES][FUZZ_RANGE_WORDS];

  /* What the driver expects of allocation. */
  unsigned fail_countdown; /* the injected failure hits when this reaches 0 on an allocation */
  size_t limit_bytes;      /* 0: no heap limit */

  /* FUZZ_SCHEDULED, FUZZ_FREE_THREADS: the threads (see "Running on threads"). */
  fuzz_sched *sched;
  struct thread_plan *plans; /* FUZZ_DOMAINS of them */
  pthread_mutex_t turn;      /* FUZZ_FREE_THREADS: held by the thread running an op */

  /* Attribution of violations: the running op is the calling thread's mutator's. */
  long cycle_op;          /* the op that started the latest cycle (-1: the final collection) */
  fuzz_op cycle_op_copy;  /* that op (formatted only when a violation is printed) */

  /* A checkmark corruption waiting for its own collection's mark-done point
   * (fuzz/driver/corrupt.c), or NULL. */
  struct corruption *corrupt_armed;
  /* The corrupt op's planted reports have been printed (to memory) once in this program. */
  int corrupt_printed;
} driver;

/* ---- driver.c, for threads.c ---- */

/* Run one op on the calling thread's mutator. */
void drv_run_op(driver *d, const fuzz_op *op);
/* A violation of the API contract found by the driver itself (printed; aborts if asked to). */
void drv_violation(driver *d, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Print and count every report in `reports` as a violation of the pass that made it, attributed
 * to the op that started the cycle; `how`, if not NULL, is one more line saying how it was found
 * (aborts if asked to). */
void drv_report_passes(driver *d, const gc_verify_reports *reports, const char *how);
/* A call that must return `want` (a check of the driver's). */
void drv_expect_error(driver *d, gc_error got, gc_error want, const char *call);
/* spawn dN: the domain (born in a blocking section), or nothing when it is refused. */
void drv_op_spawn(driver *d, int n);
/* The frame record of domain dom's innermost frame, or -1; and freeing a record. */
int drv_innermost_frame(const driver *d, int dom);
void drv_release_frame(driver *d, int k);
void drv_op_unroot(driver *d, int g);
void drv_set_slot(driver *d, int s, gc_model_id obj);

/* ---- threads.c, for driver.c ---- */

/* spawn dN from another domain's part (FUZZ_SCHEDULED, FUZZ_FREE_THREADS). */
void drv_op_spawn_thread(driver *d, int n);
/* terminate dN in dN's own part: the domain ends, and its thread with it. */
void drv_op_terminate_self(driver *d);
/* Run the program's parts on their threads: 1 when every thread ended, 0 when the collector is
 * stuck (reported; the threads stay parked and the heap cannot be used again), -1 when out of
 * memory. */
int drv_run_threads(driver *d, const uint8_t *data, size_t size);

#endif /* FUZZ_DRIVER_STATE_H */
