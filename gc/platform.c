/* The platform layer; see platform.h for why every operation reaches the hook first. */
#define _GNU_SOURCE
#include "gc/platform.h"

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

void gc_mutex_unlock(gc_mutex *mu) {
  pthread_mutex_unlock(&mu->m);
  gc_plat_point_reached(GC_PLAT_UNLOCK, mu);
}

void gc_plat_spin(const void *object) {
  gc_plat_point_reached(GC_PLAT_SPIN, object);
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
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
