/* gc_set_params while other domains run (its thread contract in gc.h): one domain changes every
 * parameter a running domain reads on its allocation slow paths (sweep budget, heap limit, pool
 * batch and reserve, pacing) in a loop, while two others allocate, collect and change parameters
 * of their own. Run under ThreadSanitizer by ci/test (tag "tsan"): an unsynchronised read of a
 * parameter is a report. Without TSan it still checks that nothing failed and that the last
 * values set are the ones in force. */
#include <pthread.h>
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"

enum { ALLOCATORS = 2, ROUNDS = 4000, CHANGES = 3000 };

typedef struct allocator {
  gc_heap *heap;
  gc_domain *d;
  int index;
  int failures;
} allocator;

static uintptr_t changer_done; /* atomic: the changing domain has finished */

static void *allocate(void *arg) {
  allocator *a = arg;
  gc_domain *d = a->d;
  gc_leave_blocking(d);
  gc_value kept = 0;
  gc_frame f;
  gc_frame_push(d, &f, &kept, 1);
  for (int i = 0; i < ROUNDS || !__atomic_load_n(&changer_done, __ATOMIC_ACQUIRE); i++) {
    /* Small blocks of every few classes (the sweep budget and pool batch on the slow paths) and
     * now and then a large one (the heap limit before every large allocation). */
    size_t wsize = i % 97 == 0 ? 5000 : 1 + (size_t)(i % 13);
    gc_value v = gc_alloc(d, wsize, GC_TAG_SCAN);
    if (v == 0) {
      a->failures++;
      fprintf(stderr, "allocator %d: %s\n", a->index, gc_last_error_message(a->heap));
      break;
    }
    if (i % 7 == 0) kept = v; /* most blocks die young: sweeping has work */
    /* Two domains changing parameters at once must not lose either change. */
    if (i % 500 == 0 &&
        gc_set_params(a->heap, a->index ? "mintrigger=4K" : "mintrigger=2K") != GC_OK) {
      a->failures++;
    }
    if (i % 1000 == 0) gc_collect(d, GC_COLLECT_SLICE);
  }
  gc_frame_pop(d, &f);
  gc_domain_terminate(d);
  return NULL;
}

static void parameters_change_while_other_domains_allocate(void) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  CHECK(gc_config_parse(&cfg, "mintrigger=2K,percent=20", err, sizeof err) == GC_OK);
  gc_heap *h = gc_heap_create(&cfg);
  gc_domain *main = gc_main_domain(h);
  allocator as[ALLOCATORS];
  pthread_t tids[ALLOCATORS];
  for (int i = 0; i < ALLOCATORS; i++) {
    as[i] = (allocator){h, gc_domain_spawn(main), i, 0};
    CHECK(as[i].d != NULL);
    pthread_create(&tids[i], NULL, allocate, &as[i]);
  }
  static const char *const settings[] = {
      "sweep=64,limit=1G,batch=1,keep=0,percent=50",
      "sweep=16K,limit=2G,batch=16,keep=64,percent=off",
      "sweep=1,limit=0,batch=4,keep=8,percent=100,markstack=64",
  };
  int refused = 0;
  for (int i = 0; i < CHANGES; i++) {
    if (gc_set_params(h, settings[i % 3]) != GC_OK) refused++;
    gc_poll(main); /* the changing domain is a mutator too: it answers collections */
  }
  CHECK_EQ_U(refused, 0);
  __atomic_store_n(&changer_done, 1, __ATOMIC_RELEASE);
  gc_enter_blocking(main); /* waiting for the threads is waiting outside the heap */
  for (int i = 0; i < ALLOCATORS; i++) {
    pthread_join(tids[i], NULL);
    CHECK_EQ_U(as[i].failures, 0);
  }
  gc_leave_blocking(main);
  /* The last change, settings[(CHANGES - 1) % 3] (the third), is in force. */
  CHECK_EQ_U((CHANGES - 1) % 3, 2);
  const gc_config *now = gc_heap_config(h);
  CHECK_EQ_U(now->sweep_budget_words, 1);
  CHECK_EQ_U(now->heap_limit_bytes, 0);
  CHECK_EQ_U(now->pools_per_batch, 4);
  CHECK_EQ_U(now->free_pools_kept, 8);
  CHECK_EQ_U(now->gc_percent, 100);
  CHECK_EQ_U(now->mark_stack_entries, 64);
  CHECK(now->min_trigger_words == 2048 || now->min_trigger_words == 4096);
  gc_collect(main, GC_COLLECT_FULL);
  gc_stats s;
  gc_get_stats(h, &s);
  CHECK(s.cycles > 0);
  CHECK_EQ_U(s.alloc_failures, 0);
  gc_heap_destroy(h);
}

int main(void) {
  RUN(parameters_change_while_other_domains_allocate);
  CHECK_MAIN_END();
}
