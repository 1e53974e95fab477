/* The replay tool as a library (fuzz/replay/replay.h): read a fuzz input (bytes or text), print
 * it as a program, run it with every pass, print what each pass found. Builds with any C
 * compiler, without libFuzzer. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/program.h"
#include "fuzz/replay/input.h"
#include "fuzz/replay/list.h"
#include "fuzz/replay/replay.h"
#include "fuzz/text.h"
#include "gc/gc.h"
#include "invariants/report.h"

static void usage(FILE *out) {
  fprintf(out,
          "Usage: replay [options] FILE...\n"
          "       replay --list-ops | --list-kinds\n"
          "\n"
          "Replays fuzz inputs: prints each as a program (one op a line), runs it against a\n"
          "fresh heap with every verification pass after every cycle and at the end, and prints\n"
          "what each pass found. A FILE is either raw bytes (a libFuzzer crash or corpus file)\n"
          "or the text form (corpus/*.txt); see \"Text or bytes\" below. Byte inputs belong to a\n"
          "target (each reads opcode bytes through its own op set): say which with --target.\n"
          "\n"
          "Options:\n"
          "  --target NAME     the fuzz target the input is for: graph (default), roots,\n"
          "                    schedule (each domain on its own thread, one at a time, the\n"
          "                    interleaving chosen by the program; printed after the run)\n"
          "  --free            schedule: run the threads in real parallel, scheduler off\n"
          "                    (a stress run, for ThreadSanitizer; not reproducible)\n"
          "  --text, --bytes   force the input format instead of detecting it\n"
          "  --quiet           do not print the program, only violations and the summary\n"
          "  --trace           print each op as it runs, and each cycle's hook points\n"
          "  --print           print the program as text and exit without running it\n"
          "  --assemble OUT    write the program's canonical bytes to OUT and exit\n"
          "                    (one FILE only; OUT '-' is stdout)\n"
          "  --verify PASSES   exactly the passes to run, joined by '+': reach, swept,\n"
          "                    checkmark, model; all (the default) or none. An empty value\n"
          "                    is an error (exit 2), not none\n"
          "  --params P        extra collector parameters, e.g. markstack=4 (see README)\n"
          "  --max-bytes N     run no program longer than N bytes (as run: text counts as\n"
          "                    the bytes it assembles to); 0: no limit. Default 65536: a\n"
          "                    run grows faster than its input (64 KiB of random bytes take\n"
          "                    about a second, 1 MiB over a minute). Longer than 4096 bytes,\n"
          "                    the fuzz targets' max_len, replay warns on stderr: no fuzzer\n"
          "                    makes such an input\n"
          "  --list-ops        print the op table (fuzz/ops.h) as markdown and exit: op,\n"
          "                    operands, what it does (fuzz/README.md holds a copy)\n"
          "  --list-kinds      print the table of report kinds (invariants/kinds.h) as\n"
          "                    markdown and exit: kind, pass, point, invariant, rule\n"
          "                    (invariants/README.md holds a copy)\n"
          "  -h, --help        this text\n"
          "\n"
          "Text or bytes: --text or --bytes decides. Otherwise a FILE whose name ends in\n"
          "'.txt' is text, always: a line that does not assemble is an error at FILE:LINE:COL\n"
          "(exit 2), never a reason to run the file as bytes. Any other FILE ('-': stdin) is\n"
          "text when it has no control byte but tab, CR and LF and its first word is an op (or\n"
          "it starts with a '#' comment, or is blank); otherwise it is bytes, and when it has no\n"
          "control byte replay says on stderr that it read it as bytes. Ops are ASCII; comments\n"
          "may hold any other byte (UTF-8).\n"
          "\n"
          "Exit status: 0 every input ran clean, 1 a verification pass (or the driver's API\n"
          "checks) reported a violation, 2 bad input (unreadable file, malformed text, usage).\n");
}

typedef struct replay_args {
  replay_format format; /* --text, --bytes, or the rule of fuzz/replay/input.h */
  int quiet, trace, print_only;
  const char *assemble_out;
  unsigned verify_mask; /* --verify: the exact passes, when verify_given */
  int verify_given;
  const char *params;
  const fuzz_opset *ops; /* --target: how byte inputs are read and text is assembled */
  int free_threads;      /* --free */
  size_t max_bytes;      /* --max-bytes: the longest program run; 0: any */
} replay_args;

/* --max-bytes: a decimal count of bytes, 0 for no limit. */
static int parse_max_bytes(const char *s, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v > SIZE_MAX) {
    fprintf(stderr, "replay: --max-bytes '%s': expected a number of bytes (0: no limit)\n", s);
    return 0;
  }
  *out = (size_t)v;
  return 1;
}

/* --verify's value through the collector's own `verify=` parser, so the names it accepts are
 * the collector's. An empty value is refused rather than read as no pass: `none` says that. */
static int parse_verify(const char *s, unsigned *mask) {
  if (s[0] == '\0') {
    fprintf(stderr,
            "replay: --verify '': empty; name the passes (none: no pass, all: every pass)\n");
    return 0;
  }
  char item[128];
  int n = snprintf(item, sizeof item, "verify=%s", s);
  char err[200] = "";
  gc_config cfg;
  gc_config_default(&cfg);
  if (strchr(s, ',') != NULL || n < 0 || (size_t)n >= sizeof item ||
      gc_config_parse(&cfg, item, err, sizeof err) != GC_OK) {
    if (err[0] != '\0') {
      fprintf(stderr, "replay: --verify: %s\n", err);
    } else {
      fprintf(stderr, "replay: --verify '%s': passes are joined by '+'\n", s);
    }
    return 0;
  }
  *mask = cfg.verify;
  return 1;
}

static int replay_one(const char *path, const replay_args *args, const fuzz_options *base) {
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
    if (f != NULL && f != stdout) ok = fclose(f) == 0 && ok;
    fuzz_buf_free(&bytes);
    if (!ok) fprintf(stderr, "replay: %s: cannot write\n", args->assemble_out);
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
  if (!args->quiet && !args->trace) fuzz_print_program(stdout, args->ops, bytes.data, bytes.size, 1);
  printf("== run\n");
  fflush(stdout);

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
  printf("== passes (%zu ops, %llu cycles)\n", res.ops, (unsigned long long)res.cycles);
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    printf("  %-10s %6zu %s, %zu violation%s\n", fuzz_pass_names[p], res.pass_runs[p],
           p == FUZZ_PASS_COUNT - 1 ? "checks" : "runs", res.pass_violations[p],
           res.pass_violations[p] == 1 ? "" : "s");
  }
  if (res.violations == 0) {
    printf("== clean\n");
    return FUZZ_REPLAY_CLEAN;
  }
  if (res.first_op >= 0) {
    printf("== VIOLATION: %zu found; first: %s (op %ld)\n", res.violations, res.first_kind,
           res.first_op);
  } else {
    printf("== VIOLATION: %zu found; first: %s (final checks)\n", res.violations, res.first_kind);
  }
  return FUZZ_REPLAY_VIOLATION;
}

int fuzz_replay_main(int argc, char **argv, const fuzz_options *base) {
  replay_args args = {.ops = &fuzz_opset_graph, .max_bytes = FUZZ_REPLAY_DEFAULT_MAX_BYTES};
  int first_file = argc;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return FUZZ_REPLAY_CLEAN;
    } else if (strcmp(a, "--list-ops") == 0) {
      replay_list_ops(stdout);
      return FUZZ_REPLAY_CLEAN;
    } else if (strcmp(a, "--list-kinds") == 0) {
      gc_verify_kinds_print_markdown(stdout);
      return FUZZ_REPLAY_CLEAN;
    } else if (strcmp(a, "--text") == 0 || strcmp(a, "--bytes") == 0) {
      replay_format format = a[2] == 't' ? REPLAY_TEXT : REPLAY_BYTES;
      if (args.format != REPLAY_DETECT && args.format != format) {
        fprintf(stderr, "replay: --text and --bytes exclude each other\n");
        return FUZZ_REPLAY_BAD_INPUT;
      }
      args.format = format;
    } else if (strcmp(a, "--quiet") == 0) {
      args.quiet = 1;
    } else if (strcmp(a, "--trace") == 0) {
      args.trace = 1;
    } else if (strcmp(a, "--print") == 0) {
      args.print_only = 1;
    } else if (strcmp(a, "--free") == 0) {
      args.free_threads = 1;
    } else if (strcmp(a, "--target") == 0 && i + 1 < argc) {
      args.ops = fuzz_opset_find(argv[++i]);
      if (args.ops == NULL) {
        fprintf(stderr, "replay: --target %s: no such target (%s)\n", argv[i], fuzz_opset_names);
        return FUZZ_REPLAY_BAD_INPUT;
      }
    } else if (strcmp(a, "--verify") == 0 && i + 1 < argc) {
      if (!parse_verify(argv[++i], &args.verify_mask)) return FUZZ_REPLAY_BAD_INPUT;
      args.verify_given = 1;
    } else if (strcmp(a, "--assemble") == 0 && i + 1 < argc) {
      args.assemble_out = argv[++i];
    } else if (strcmp(a, "--params") == 0 && i + 1 < argc) {
      args.params = argv[++i];
    } else if (strcmp(a, "--max-bytes") == 0 && i + 1 < argc) {
      if (!parse_max_bytes(argv[++i], &args.max_bytes)) return FUZZ_REPLAY_BAD_INPUT;
    } else if (strcmp(a, "--") == 0) {
      first_file = i + 1;
      break;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "replay: unknown or incomplete option '%s' (see --help)\n", a);
      return FUZZ_REPLAY_BAD_INPUT;
    } else {
      first_file = i;
      break;
    }
  }
  if (first_file >= argc) {
    fprintf(stderr, "replay: no input file (see --help)\n");
    return FUZZ_REPLAY_BAD_INPUT;
  }
  if (args.assemble_out != NULL && argc - first_file != 1) {
    fprintf(stderr, "replay: --assemble takes exactly one input file\n");
    return FUZZ_REPLAY_BAD_INPUT;
  }
  int worst = FUZZ_REPLAY_CLEAN;
  for (int i = first_file; i < argc; i++) {
    int rc = replay_one(argv[i], &args, base);
    /* Bad input outranks a violation: the run is not trustworthy. */
    if (rc > worst) worst = rc;
    fflush(stdout);
  }
  return worst;
}
