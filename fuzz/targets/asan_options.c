/* The AddressSanitizer settings of the fuzz targets built with --config=fuzz (the program targets
 * and the interface targets), whoever runs them (ci/campaign, the zoo, by hand); ASAN_OPTIONS
 * still overrides them.
 *
 *   quarantine_size_mb=16   freed memory waits for 16 MB of later frees before reuse, not the
 *                           default 256 MB. An execution frees some 100 KB through malloc (the
 *                           collector's pools are its own mappings, poisoned by the collector),
 *                           so a block freed in one execution is still quarantined, and a use
 *                           after free still reported, some 150 executions later. What the
 *                           default bought beyond that was a 256 MB working set cycled through
 *                           the kernel: on a fixed corpus (21,840 graph executions, one core) the
 *                           default spent 0.48 s of system time in page faults against 2.4 s of
 *                           user time, 16 MB 0.19 s, and the wall time fell by 12 %
 *                           (bench/MEASUREMENTS.md). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
/* The runtime calls this before it is set up: no instrumentation in it. */
const char *__asan_default_options(void);
__attribute__((disable_sanitizer_instrumentation)) const char *__asan_default_options(void) {
  return "quarantine_size_mb=16";
}
#endif
#endif
