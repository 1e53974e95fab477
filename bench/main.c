/* One benchmark on one backend, as a program: `<binary> [size]`.
 *
 * The build names the benchmark with BENCH_ENTRY (its run function, see bench/bench.h),
 * BENCH_DEFAULT_SIZE and BENCH_PROGRAM (its name in messages), and with BENCH_THREADS (default
 * 1) the threads it runs on: the `_2` programs split the benchmark between 2 threads (bench.h).
 * The benchmark's lines go to
 * stdout; at exit one machine-readable line goes to stderr, read by ci/bench:
 *   BENCH wall_s=<seconds on the monotonic clock, whole run> peak_mib=<VmHWM / 1024> gcs=<N>
 * (bench_peak_mib: the program's own peak, whatever started it; gcs: the collections its heap
 * ran, as bk_fini recorded them: gcfuzz's major cycles, bdwgc's GC_get_gc_no(), 0 on malloc).
 * A benchmark that records its heap's final size (bench_record_heap: fragment) adds
 *   final_mapped_mib=<backend's mapped heap> live_mib=<backend's live figure> data_mib=<the
 *   program's own live blocks>
 * to that line, each only where the backend knows it (ci/bench records a missing one as null).
 * Exit status: 0, 1 when a check of the benchmark failed, 2 on bad usage or out of memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/backend.h"
#include "bench/bench.h"

#if !defined(BENCH_ENTRY) || !defined(BENCH_DEFAULT_SIZE) || !defined(BENCH_PROGRAM)
#error "define BENCH_ENTRY, BENCH_DEFAULT_SIZE and BENCH_PROGRAM (see bench/BUILD)"
#endif

int main(int argc, char **argv) {
  double start = bench_now();
  long size = BENCH_DEFAULT_SIZE;

  if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
    fprintf(stderr, "usage: %s [size]   (%s on %s, %d thread(s), default size %d)\n", argv[0],
            BENCH_PROGRAM, BK_NAME, BENCH_THREADS, BENCH_DEFAULT_SIZE);
    return argc > 2 ? 2 : 0;
  }
  if (argc == 2) {
    char *end;
    errno = 0;
    size = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || size < 0 || size > 30)
      bench_die(BENCH_PROGRAM, "size must be an integer from 0 to 30, not '%s'", argv[1]);
  }

  int status = BENCH_ENTRY((int)size, BENCH_THREADS, stdout);
  fflush(stdout);

  double wall = bench_now() - start;
  fprintf(stderr, "BENCH wall_s=%.3f peak_mib=%.1f gcs=%lu", wall, bench_peak_mib(),
          bench_recorded_collections());
  double mapped, live, data;
  if (bench_recorded_heap(&mapped, &live, &data)) {
    const double mib = 1024.0 * 1024.0;
    if (mapped >= 0) fprintf(stderr, " final_mapped_mib=%.2f", mapped / mib);
    if (live >= 0) fprintf(stderr, " live_mib=%.2f", live / mib);
    if (data >= 0) fprintf(stderr, " data_mib=%.2f", data / mib);
  }
  fputc('\n', stderr);
  return status;
}
