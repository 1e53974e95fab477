/* The fuzz driver's state: the bottom of the driver package. Every other file of it reads these
 * types and is handed the driver and the mutator it acts on as parameters. Nothing here calls
 * anything; the layers above (each calls only the ones below it):
 *
 *   run.c         running a program: the heap's lifecycle, the hook, the final checks
 *   threads.c     running a program's parts on threads, one per domain
 *   semantics.c   what each op does to the heap and the model (the checks of the API contract)
 *   corrupt_op.c  the corrupt op: plant (invariants/corrupt.h), check, repair, check again
 *   params_op.c   the params op (gc_set_params against a catalogue) and the trace sink
 *   in_collection.c  misuse in-collection: the collector's entry points called from its hook
 *   verdict.c     violations: printed, counted per pass, attributed to an op
 *   sanitizer.c   sanitizer findings as verdict lines (beside verdict.c; reads state only)
 *
 * layering_test checks that every file includes downwards only. Private to the driver package:
 * drivers use fuzz/driver/driver.h. */
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

/* Leaves a function out of libFuzzer's coverage instrumentation, trace-cmp included (clang;
 * other compilers do not instrument). */
#if defined(__clang__)
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_NO_COVERAGE
#endif

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
 * thread (fuzz/driver/threads.c). */
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
  /* On threads: the op this thread ran last, while it polls or waits between two ops (a
   * sanitizer finding there is attributed to it); NULL before its first op and after its part. */
  const fuzz_op *last_op;
  int terminated; /* on threads: its domain terminated itself; its thread ends */
  /* A finalizer body running on this mutator's thread (fuzz/driver/semantics.c): the depth of
   * the ops it runs (0: the program's own ops run, body ops are skipped) and the object whose
   * finalizer it is (`self`). */
  int body_depth;
  gc_model_id fin_self;
} mutator;

/* Where a heap's trace lines go (fuzz/driver/params_op.h): a memory stream and its buffer. */
typedef struct drv_trace_sink {
  FILE *file; /* NULL until opened */
  char *buf;
  size_t size;
} drv_trace_sink;

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

  /* The program's bytes: a finalizer body is decoded from them when its finalizer runs. */
  const uint8_t *data;
  size_t size;
  /* Finalizers of the heap running now (any thread); hook calls in progress, and whether the
   * world is stopped from mark-done to the end of cycled: what driver.finalizer-context checks. */
  int fin_running;
  int in_hook;
  int in_stw;

  /* What the driver expects of allocation. */
  unsigned fail_countdown; /* the injected failure hits when this reaches 0 on an allocation */
  size_t limit_bytes;      /* 0: no heap limit */
  size_t markslice;        /* the program's markslice parameter, which mark_slice puts back */

  /* FUZZ_SCHEDULED, FUZZ_FREE_THREADS: the threads (see "Running on threads"). */
  fuzz_sched *sched;
  struct thread_plan *plans; /* FUZZ_DOMAINS of them */
  pthread_mutex_t turn;      /* FUZZ_FREE_THREADS: held by the thread running an op */

  /* The trace sink (the scratch's or own_trace) and the lines due in it: cycles and
   * compactions that ended with the heap's trace on. */
  drv_trace_sink *trace;
  drv_trace_sink own_trace;
  size_t trace_cycles_due, trace_compactions_due;

  /* Attribution of violations. */
  long cycle_op;         /* the op that started the latest cycle (-1: the final collection) */
  fuzz_op cycle_op_copy; /* that op (formatted only when a violation is printed) */
  long long cycles_seen; /* cycles the hook saw end (GC_HOOK_CYCLED): a violation's cycle */

  /* A checkmark corrupt op waiting for its own collection's mark-done point
   * (fuzz/driver/corrupt_op.c), or NULL. */
  struct corrupt_op *corrupt_armed;
  /* The corrupt op's planted reports have been printed (to memory) once in this program. */
  int corrupt_printed;
  /* `misuse in-collection` (fuzz/driver/in_collection.c): its checks wait for the hook points
   * of the next collection; the op that armed them (-1: none), for the message. */
  int in_collection_armed;
  long in_collection_op;
} driver;

/* The mutator whose thread calls the collector's hook: the hook's one parameter is the driver,
 * and a collection is led by whichever thread's allocation or `collect` started it, so which
 * mutator's op is running there is a fact about the calling thread. Set by run.c (one thread)
 * and by threads.c (each domain's thread); read only by the hook (run.c) and by the sanitizer
 * verdict (sanitizer.c), both callbacks that cannot be handed a mutator. */
extern __thread mutator *drv_thread_mutator;

/* The driver running a program in this process, or NULL: read only by the sanitizer death
 * callback (sanitizer.c), which takes no parameter at all. One program runs at a time in a fuzz
 * target and in the replay tool. */
extern driver *drv_running;

#endif /* FUZZ_DRIVER_STATE_H */
