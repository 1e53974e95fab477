/* The bdwgc backend's domains (FUZZ_CAP_DOMAINS): domain 0 is the thread that created the heap,
 * domains 1..DOMAINS-1 threads made by GC_pthread_create, so bdwgc knows them as it knows any
 * client thread: it scans their stacks and registers, stops them with its signals for a
 * collection, gives each its thread-local free lists, and unregisters them when they return.
 *
 * They take turns (INV-BDWGC-2, bdwgc_heap.h): a call for domain d is handed to d's thread under
 * `handoff` and the caller waits on `done` until it has returned, so one thread runs the heap's
 * ops at a time and every other is parked on a condition variable, where a collection on the
 * running thread stops it. The hand-over is the synchronisation: whatever one thread wrote (the
 * cells, the registry, the blocks) the next one reads after taking the mutex.
 *
 * A finalizer runs on the thread that invoked the finalizers, which is domain on's; its body may
 * call the table again, and those calls are already on the right thread, so they run directly
 * (a hand-over to oneself would wait for ever).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

/* A domain's thread: run each call handed over, until asked to return. */
static void *domain_main(void *arg) {
  domain *dm = arg;
  fuzz_bheap *h = dm->h;
  pthread_mutex_lock(&h->handoff);
  for (;;) {
    while (dm->fn == NULL && !dm->quit) pthread_cond_wait(&dm->wake, &h->handoff);
    if (dm->fn == NULL) break; /* quit, nothing left to run */
    void (*fn)(void *) = dm->fn;
    void *call_arg = dm->arg;
    pthread_mutex_unlock(&h->handoff);
    fn(call_arg);
    pthread_mutex_lock(&h->handoff);
    dm->fn = NULL;
    h->call_done = true;
    /* Signalled after the unlock, so the waiting caller does not wake to a held mutex (on one
     * core every such wake is another pair of context switches). */
    pthread_mutex_unlock(&h->handoff);
    pthread_cond_signal(&h->done);
    pthread_mutex_lock(&h->handoff);
  }
  pthread_mutex_unlock(&h->handoff);
  return NULL; /* bdwgc unregisters the thread; its local free lists go back to the global ones */
}

void bdwgc_domains_init(fuzz_bheap *h) {
  pthread_mutex_init(&h->handoff, NULL);
  pthread_cond_init(&h->done, NULL);
  h->dom[0].h = h;
  h->dom[0].thread = pthread_self();
  h->dom[0].live = true;
  h->on = 0;
}

void bdwgc_run_on(fuzz_bheap *h, void (*fn)(void *arg), void *arg) {
  domain *dm = &h->dom[h->on];
  if (h->on == 0 || pthread_equal(pthread_self(), dm->thread)) {
    fn(arg);
    return;
  }
  pthread_mutex_lock(&h->handoff);
  dm->fn = fn;
  dm->arg = arg;
  h->call_done = false;
  pthread_mutex_unlock(&h->handoff);
  pthread_cond_signal(&dm->wake);
  pthread_mutex_lock(&h->handoff);
  while (!h->call_done) pthread_cond_wait(&h->done, &h->handoff);
  pthread_mutex_unlock(&h->handoff);
}

int bdwgc_domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= DOMAINS || h->dom[d].live) return 0;
  domain *dm = &h->dom[d];
  dm->h = h;
  dm->fn = NULL;
  dm->quit = false;
  pthread_cond_init(&dm->wake, NULL);
  if (GC_pthread_create(&dm->thread, NULL, domain_main, dm) != 0) {
    pthread_cond_destroy(&dm->wake);
    return 0;
  }
  dm->live = true;
  return 1;
}

/* A domain not spawned (or ended) runs nothing: the calls run on 0. */
void bdwgc_domain_on(fuzz_bheap *h, unsigned d) { h->on = d < DOMAINS && h->dom[d].live ? d : 0; }

void bdwgc_domain_end(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= DOMAINS || !h->dom[d].live) return;
  domain *dm = &h->dom[d];
  pthread_mutex_lock(&h->handoff);
  dm->quit = true;
  pthread_cond_signal(&dm->wake);
  pthread_mutex_unlock(&h->handoff);
  GC_pthread_join(dm->thread, NULL);
  pthread_cond_destroy(&dm->wake);
  dm->live = false;
  if (h->on == d) h->on = 0;
}

void bdwgc_domains_fini(fuzz_bheap *h) {
  for (unsigned d = 1; d < DOMAINS; d++) bdwgc_domain_end(h, d);
  h->on = 0;
  pthread_cond_destroy(&h->done);
  pthread_mutex_destroy(&h->handoff);
}
