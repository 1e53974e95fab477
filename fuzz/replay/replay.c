/* The replay tool as a library (fuzz/replay/replay.h): read a fuzz input (bytes or text), print
 * it as a program, run it with every pass, print what each pass found. Builds with any C
 * compiler, without libFuzzer. */
#include "fuzz/replay/replay.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/run.h"
#include "fuzz/replay/input.h"
#include "fuzz/replay/options.h"

/* The run's last line: clean, or how many were found and the first. Returns the exit status. */
static int verdict_line(size_t violations, const char *first_kind, long first_op) {
  if (violations == 0) {
    printf("== clean\n");
    return FUZZ_REPLAY_CLEAN;
  }
  if (first_op >= 0) {
    printf("== VIOLATION: %zu found; first: %s (op %ld)\n", violations, first_kind, first_op);
  } else {
    printf("== VIOLATION: %zu found; first: %s (final checks)\n", violations, first_kind);
  }
  return FUZZ_REPLAY_VIOLATION;
}

/* --events: the rare events of every program run, summed: gcfuzz's collector's (gc.h,
 * GC_EVENTS) for the program targets, the backend's own table (backend.h: rare_events) for
 * --backend. */
typedef struct event_census {
  uint64_t counts[FUZZ_RARE_EVENTS_MAX];
  size_t programs;
} event_census;

_Static_assert(GC_EVENT_COUNT <= FUZZ_RARE_EVENTS_MAX, "the census holds gc.h's events");

static size_t census_events(const replay_args *args) {
  if (args->backend == NULL) return GC_EVENT_COUNT;
  return args->backend->rare_counts != NULL ? args->backend->rare_event_count : 0;
}

static const char *census_name(const replay_args *args, size_t e) {
  return args->backend == NULL ? gc_event_name((gc_event)e) : args->backend->rare_events[e].name;
}

static void print_events(const event_census *c, const replay_args *args) {
  printf("GCFUZZ-EVENTS {\"programs\": %zu, \"events\": {", c->programs);
  for (size_t e = 0; e < census_events(args); e++) {
    printf("%s\"%s\": %llu", e ? ", " : "", census_name(args, e), (unsigned long long)c->counts[e]);
  }
  printf("}}\n");
}

/* The program through the backend interface (fuzz/oracle): the model's and the backend's
 * findings, each printed with its verdict line. */
static int replay_backend(const replay_args *args, const fuzz_buf *bytes, event_census *census) {
  oracle_options opt = {args->backend,
                        args->ops,
                        0,
                        stdout,
                        args->trace ? stdout : NULL,
                        args->params,
                        args->threaded,
                        args->threaded && !args->quiet && !args->free_threads ? stdout : NULL,
                        args->threaded && args->free_threads};
  oracle_result res;
  int rc = oracle_run(bytes->data, bytes->size, &opt, &res);
  if (rc < 0) {
    printf("replay: the %s heap could not be made (bad --params?)\n", args->backend->name);
    return FUZZ_REPLAY_BAD_INPUT;
  }
  census->programs++;
  for (size_t e = 0; e < census_events(args); e++) census->counts[e] += res.rare[e];
  if (args->threaded) {
    printf(
        "== schedule: %llu steps, %llu switches, interleaving %016llx; %zu full collections "
        "overlapped by another thread's op (whole-heap checks skipped)\n",
        (unsigned long long)res.sched_steps, (unsigned long long)res.sched_switches,
        (unsigned long long)res.sched_hash, res.skipped_full);
  }
  printf("== backend %s (%zu ops, %llu collections, %zu finalizers run, %zu ops in their bodies)\n",
         args->backend->name, res.ops, (unsigned long long)res.collects, res.finalizers,
         res.body_ops);
  printf("  %-10s %6zu checks, %zu runs of the deep check\n", "model", res.checks, res.deep_checks);
  if (res.planted + res.refused > 0) {
    printf("  %-10s %6zu corruptions planted, caught and repaired; %zu misuses refused\n",
           "self-test", res.planted, res.refused);
  }
  return verdict_line(res.violations, res.first_kind, res.first_op);
}

static int replay_one(const char *path, const replay_args *args, const fuzz_options *base,
                      event_census *census) {
  fuzz_buf bytes = {0};
  int is_text = 0;
  if (!replay_load(path, args->format, args->ops, &bytes, &is_text)) return FUZZ_REPLAY_BAD_INPUT;
  if (bytes.size > FUZZ_REPLAY_TARGET_MAX_LEN) {
    fprintf(stderr,
            "replay: %s: %zu bytes: longer than the fuzz targets' max_len (%d): no fuzzer "
            "runs such an input, and it may run long\n",
            path, bytes.size, FUZZ_REPLAY_TARGET_MAX_LEN);
  }

  if (args->assemble_out != NULL) {
    FILE *f = strcmp(args->assemble_out, "-") == 0 ? stdout : fopen(args->assemble_out, "wb");
    int ok = f != NULL && fwrite(bytes.data, 1, bytes.size, f) == bytes.size;
    int why = errno;
    if (f != NULL && f != stdout && fclose(f) != 0 && ok) {
      ok = 0;
      why = errno;
    }
    fuzz_buf_free(&bytes);
    if (!ok) fprintf(stderr, "replay: %s: cannot write: %s\n", args->assemble_out, strerror(why));
    return ok ? FUZZ_REPLAY_CLEAN : FUZZ_REPLAY_BAD_INPUT;
  }
  if (args->print_only) {
    fuzz_print_program(stdout, args->ops, bytes.data, bytes.size, 0);
    fuzz_buf_free(&bytes);
    return FUZZ_REPLAY_CLEAN;
  }

  if (args->max_bytes != 0 && bytes.size > args->max_bytes) {
    fprintf(stderr,
            "replay: %s: %zu bytes, longer than --max-bytes (%zu): not run (a run grows faster "
            "than its input; --max-bytes 0 runs it anyway)\n",
            path, bytes.size, args->max_bytes);
    fuzz_buf_free(&bytes);
    return FUZZ_REPLAY_BAD_INPUT;
  }
  size_t count = fuzz_program_count(args->ops, bytes.data, bytes.size);
  printf("== %s (%s, %zu bytes, %zu ops, target %s)\n", path, is_text ? "text" : "bytes",
         bytes.size, count, args->ops->name);
  if (!args->quiet && !args->trace) {
    fuzz_print_program(stdout, args->ops, bytes.data, bytes.size, 1);
  }
  printf("== run\n");
  fflush(stdout);

  if (args->backend != NULL) {
    int rc = replay_backend(args, &bytes, census);
    fuzz_buf_free(&bytes);
    return rc;
  }

  fuzz_options opt = base ? *base : (fuzz_options){0};
  opt.abort_on_violation = 0;
  opt.out = stdout;
  opt.trace = args->trace ? stdout : NULL;
  opt.verify = args->verify_mask;
  opt.verify_given = args->verify_given;
  opt.params = args->params;
  opt.ops = args->ops;
  if (args->ops == &fuzz_opset_schedule) {
    opt.threads = args->free_threads ? FUZZ_FREE_THREADS : FUZZ_SCHEDULED;
    if (!args->quiet && !args->free_threads) opt.interleaving = stdout;
  }
  fuzz_result res;
  int rc = fuzz_run(bytes.data, bytes.size, &opt, &res);
  fuzz_buf_free(&bytes);
  if (rc < 0) {
    printf("replay: the heap could not be created (bad --params?)\n");
    return FUZZ_REPLAY_BAD_INPUT;
  }
  if (opt.threads == FUZZ_SCHEDULED) {
    printf("== schedule: %llu steps, %llu switches, interleaving %016llx, statistics %016llx\n",
           (unsigned long long)res.sched_steps, (unsigned long long)res.sched_switches,
           (unsigned long long)res.sched_hash, (unsigned long long)res.stats_hash);
  }
  census->programs++;
  for (int e = 0; e < GC_EVENT_COUNT; e++) census->counts[e] += res.events[e];
  printf("== passes (%zu ops, %llu cycles)\n", res.ops, (unsigned long long)res.cycles);
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    /* The driver counts the checks it made; a pass, its runs. */
    printf("  %-10s %6zu %s, %zu violation%s\n", gc_verify_pass_name((gc_verify_pass_id)p),
           res.pass_runs[p], p == FUZZ_PASS_DRIVER ? "checks" : "runs", res.pass_violations[p],
           res.pass_violations[p] == 1 ? "" : "s");
  }
  return verdict_line(res.violations, res.first_kind, res.first_op);
}

int fuzz_replay_main(int argc, char **argv, const fuzz_options *base) {
  replay_args args;
  int first_file;
  int status = replay_parse_args(argc, argv, &args, &first_file);
  if (status != REPLAY_GO_ON) return status;
  if (first_file >= argc) {
    fprintf(stderr, "replay: no input file (see --help)\n");
    return FUZZ_REPLAY_BAD_INPUT;
  }
  if (args.assemble_out != NULL && argc - first_file != 1) {
    fprintf(stderr, "replay: --assemble takes exactly one input file\n");
    return FUZZ_REPLAY_BAD_INPUT;
  }
  /* --as-target: what a fuzz target's process keeps from one input to the next (run.c's
   * fuzz_target_init): a full pool cache, whose spares each heap leaves the next, and one
   * scratch memory. */
  fuzz_options as_target = base ? *base : (fuzz_options){0};
  if (args.as_target && args.backend == NULL) {
    if (as_target.pool_cache == NULL) {
      as_target.pool_cache = gc_pool_cache_create(FUZZ_TARGET_CACHE_POOLS);
      if (as_target.pool_cache != NULL) gc_pool_cache_fill(as_target.pool_cache);
    }
    if (as_target.scratch == NULL) as_target.scratch = fuzz_scratch_create();
    if (as_target.pool_cache == NULL || as_target.scratch == NULL) {
      fprintf(stderr, "replay: --as-target: out of memory for the pool cache or scratch\n");
      return FUZZ_REPLAY_BAD_INPUT;
    }
    base = &as_target;
  }
  int worst = FUZZ_REPLAY_CLEAN;
  event_census census = {{0}, 0};
  for (int i = first_file; i < argc; i++) {
    int rc = replay_one(argv[i], &args, base, &census);
    /* Bad input outranks a violation: the run is not trustworthy. */
    if (rc > worst) worst = rc;
    fflush(stdout);
  }
  if (args.events) print_events(&census, &args);
  return worst;
}
