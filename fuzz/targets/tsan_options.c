/* The TSan settings of the fuzz targets built with --config=tsan-fuzz (schedule-tsan,
 * gcfuzz-threads-tsan), whoever runs them (ci/campaign, the zoo, by hand). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
/* TSAN_OPTIONS still overrides them:
 *   halt_on_error=1          the first report ends the process, so libFuzzer saves the input;
 *   report_signal_unsafe=0   libFuzzer's own signal handlers (-timeout's alarm, SIGTERM, SIGINT)
 *                            allocate: not the collector's doing, and with the report libFuzzer
 *                            would never print its timeout.
 * The runtime calls these before it has a thread state, so they carry no instrumentation at all
 * (an instrumented entry crashes there). */
const char *__tsan_default_options(void);
__attribute__((disable_sanitizer_instrumentation)) const char *__tsan_default_options(void) {
  return "halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0";
}

/* The races of libFuzzer's own coverage counters are suppressed by the driver
 * (fuzz/driver/sanitizer.c), for the replay tool of this build too; each target links it. */
#endif
#endif
