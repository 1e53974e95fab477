/* Threads for the backends that need nothing per thread beyond starting and joining it (bdwgc,
 * malloc): the bk_thread part of bench/backend.h. Define BK_PTHREAD_CREATE and BK_PTHREAD_JOIN
 * (pthread_create/pthread_join, or a collector's wrappers) before including it. */
#ifndef BENCH_BACKEND_THREADS_H
#define BENCH_BACKEND_THREADS_H

#include "bench/bench.h"

typedef struct bk_thread {
  void (*fn)(void *);
  void *arg;
#if BENCH_THREADS > 1
  pthread_t tid;
#endif
} bk_thread;

#if BENCH_THREADS > 1
static void *bk_thread_main(void *arg) {
  bk_thread *t = arg;
  t->fn(t->arg);
  return NULL;
}
#endif

static inline void bk_thread_start(bk_thread *t, void (*fn)(void *), void *arg) {
  t->fn = fn;
  t->arg = arg;
#if BENCH_THREADS > 1
  if (BK_PTHREAD_CREATE(&t->tid, NULL, bk_thread_main, t) != 0)
    bench_die(BK_NAME, "creating a thread failed");
#else
  bench_die(BK_NAME, "this program is built for one thread (BENCH_THREADS=1)");
#endif
}

static inline void bk_thread_join(bk_thread *t) {
#if BENCH_THREADS > 1
  BK_PTHREAD_JOIN(t->tid, NULL);
#else
  (void)t;
#endif
}

#endif /* BENCH_BACKEND_THREADS_H */
