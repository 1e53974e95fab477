/* The platform layer; see platform.h for why every operation reaches the hook first. */
#define _GNU_SOURCE
#include "gc/platform.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

gc_plat_hook_fn gc_plat_hook;

void gc_plat_set_hook(gc_plat_hook_fn fn) { __atomic_store_n(&gc_plat_hook, fn, __ATOMIC_SEQ_CST); }

void gc_mutex_init(gc_mutex *mu) {
  if (pthread_mutex_init(&mu->m, NULL) != 0) {
    fprintf(stderr, "gcfuzz: pthread_mutex_init failed\n");
    abort();
  }
}

void gc_mutex_destroy(gc_mutex *mu) { pthread_mutex_destroy(&mu->m); }

void gc_mutex_lock(gc_mutex *mu) {
  gc_plat_point_reached(GC_PLAT_LOCK, mu);
  pthread_mutex_lock(&mu->m);
}

int gc_mutex_trylock(gc_mutex *mu) {
  gc_plat_point_reached(GC_PLAT_TRYLOCK, mu);
  return pthread_mutex_trylock(&mu->m) == 0;
}

void gc_mutex_unlock(gc_mutex *mu) {
  pthread_mutex_unlock(&mu->m);
  gc_plat_point_reached(GC_PLAT_UNLOCK, mu);
}

void gc_plat_spin(const void *object) {
  gc_plat_point_reached(GC_PLAT_SPIN, object);
  /* Waiters may outnumber cores (4 domains on 2 cores): give the core away rather than burn
   * the time slice of the thread being waited for. */
  sched_yield();
}

void gc_barrier_follow(gc_barrier *b) {
  gc_plat_point_reached(GC_PLAT_BARRIER, b);
  uintptr_t generation = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
  __atomic_fetch_add(&b->arrived, 1, __ATOMIC_ACQ_REL);
  while (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) == generation) gc_plat_spin(b);
}

void gc_barrier_lead(gc_barrier *b, size_t followers) {
  gc_plat_point_reached(GC_PLAT_BARRIER, b);
  while (__atomic_load_n(&b->arrived, __ATOMIC_ACQUIRE) < followers) gc_plat_spin(b);
}

void gc_barrier_release(gc_barrier *b) {
  /* Followers touch `arrived` again only after seeing the new generation. */
  __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&b->generation, 1, __ATOMIC_ACQ_REL);
}

void *gc_plat_map_aligned(size_t bytes, size_t align_bytes) {
  /* Over-map by one alignment unit, then trim both ends so the kept part is aligned. */
  size_t padded = bytes + align_bytes;
  char *raw = mmap(NULL, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)raw + align_bytes - 1) & ~(uintptr_t)(align_bytes - 1);
  size_t head = start - (uintptr_t)raw;
  size_t tail = padded - head - bytes;
  if (head) munmap(raw, head);
  if (tail) munmap((char *)start + bytes, tail);
  return (void *)start;
}

void gc_plat_unmap(void *mem, size_t bytes) { munmap(mem, bytes); }

uint64_t gc_plat_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
