/* Utilities shared by every benchmark and backend. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/bench.h"

/* bench_record_collections: one heap at a time, so one word. */
static unsigned long recorded_collections;

void bench_record_collections(unsigned long collections) { recorded_collections = collections; }
unsigned long bench_recorded_collections(void) { return recorded_collections; }

static unsigned long recorded_compactions;

void bench_record_compactions(unsigned long compactions) { recorded_compactions = compactions; }
unsigned long bench_recorded_compactions(void) { return recorded_compactions; }

/* bench_record_heap: likewise, the last run's. */
static int heap_recorded;
static double recorded_mapped, recorded_live, recorded_data;

void bench_record_heap(double mapped_bytes, double live_bytes, double data_bytes) {
  heap_recorded = 1;
  recorded_mapped = mapped_bytes;
  recorded_live = live_bytes;
  recorded_data = data_bytes;
}
int bench_recorded_heap(double *mapped_bytes, double *live_bytes, double *data_bytes) {
  *mapped_bytes = recorded_mapped;
  *live_bytes = recorded_live;
  *data_bytes = recorded_data;
  return heap_recorded;
}

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_die(const char *what, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "%s: ", what);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

double bench_peak_mib(void) {
  /* VmHWM is this address space's high-water mark: exec starts a new one. ru_maxrss is not:
   * Linux folds the old address space's high-water mark into it at exec, so a program started
   * by a larger parent (ci/bench is Python, ~12 MiB) reports at least the parent's RSS. */
  FILE *f = fopen("/proc/self/status", "r");
  if (f != NULL) {
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f) != NULL)
      if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    fclose(f);
    if (kib >= 0) return (double)kib / 1024.0;
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (double)usage.ru_maxrss / 1024.0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, by_value);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}
