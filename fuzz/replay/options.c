/* The replay command's options (fuzz/replay/options.h). */
#include "fuzz/replay/options.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/oracle/run.h"
#include "fuzz/replay/list.h"
#include "fuzz/replay/replay.h"
#include "gc/gc.h"
#include "invariants/report.h"

typedef enum replay_option {
#define REPLAY_OPTION_ENUM(id, name, arg, help) REPLAY_OPT_##id,
  REPLAY_OPTIONS(REPLAY_OPTION_ENUM)
#undef REPLAY_OPTION_ENUM
      REPLAY_OPT_COUNT
} replay_option;

typedef struct option_info {
  const char *name, *arg, *help;
} option_info;

static const option_info options[REPLAY_OPT_COUNT] = {
#define REPLAY_OPTION_INFO(id, name, arg, help) {name, arg, help},
    REPLAY_OPTIONS(REPLAY_OPTION_INFO)
#undef REPLAY_OPTION_INFO
};

void replay_usage(FILE *out) {
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
          "Options:\n");
  for (int o = 0; o < REPLAY_OPT_COUNT; o++) {
    char head[32];
    snprintf(head, sizeof head, "%s%s%s", options[o].name, options[o].arg ? " " : "",
             options[o].arg ? options[o].arg : "");
    fprintf(out, "  %-17s ", head);
    for (const char *c = options[o].help; *c != '\0'; c++) {
      fputc(*c, out);
      if (*c == '\n') fprintf(out, "%20s", "");
    }
    fputc('\n', out);
  }
  fprintf(out,
          "\n"
          "Text or bytes: --text or --bytes decides. Otherwise a FILE whose name ends in\n"
          "'.txt' is text, always: a line that does not assemble is an error at FILE:LINE:COL\n"
          "(exit 2), never a reason to run the file as bytes. Any other FILE ('-': stdin) is\n"
          "text when it has no control byte but tab, CR and LF and its first word is an op (or\n"
          "it starts with a '#' comment, or is blank); otherwise it is bytes, and when it has no\n"
          "control byte replay says on stderr that it read it as bytes. Ops are ASCII; comments\n"
          "may hold any other byte (UTF-8).\n"
          "\n"
          "Exit status: %d every input ran clean (or --help, --list-*), %d a verification pass\n"
          "(or the driver's checks) reported a violation, %d bad input: an unreadable file\n"
          "(with the reason), text that does not assemble, a program longer than --max-bytes,\n"
          "a usage error. With several FILEs, the worst status of any.\n",
          FUZZ_REPLAY_CLEAN, FUZZ_REPLAY_VIOLATION, FUZZ_REPLAY_BAD_INPUT);
}

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

static int set_format(replay_args *args, replay_format format) {
  if (args->format != REPLAY_DETECT && args->format != format) {
    fprintf(stderr, "replay: --text and --bytes exclude each other\n");
    return 0;
  }
  args->format = format;
  return 1;
}

/* Apply option `o` (its value `value`, NULL for a flag). Returns REPLAY_GO_ON or the exit
 * status. */
static int apply(replay_option o, const char *value, replay_args *args) {
  switch (o) {
    case REPLAY_OPT_TARGET: {
      /* An interface target is named after its backend: --target lua is --backend lua, and
       * --target gcfuzz is gcfuzz's collector through the interface. */
      const fuzz_backend *b = fuzz_backend_find(value);
      if (b != NULL) {
        args->backend = b;
        args->ops = oracle_opset(b);
        args->threaded = 0;
        break;
      }
      /* NAME-threads: the backend's threaded run (one thread a domain, under the scheduler). */
      size_t len = strlen(value), suffix = strlen("-threads");
      if (len > suffix && strcmp(value + len - suffix, "-threads") == 0) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len - suffix), value);
        if ((b = fuzz_backend_find(name)) != NULL) {
          if (oracle_opset_threads(b) == NULL) {
            fprintf(stderr,
                    "replay: --target %s: the %s backend cannot run domains on threads of their "
                    "own (no `threads` capability: --list-backends)\n",
                    value, name);
            return FUZZ_REPLAY_BAD_INPUT;
          }
          args->backend = b;
          args->ops = oracle_opset_threads(b);
          args->threaded = 1;
          break;
        }
      }
      args->ops = fuzz_opset_find(value);
      if (args->ops == NULL) {
        char names[128];
        fuzz_backend_names(names, sizeof names);
        fprintf(stderr, "replay: --target %s: no such target (%s; backends linked in: %s)\n", value,
                fuzz_opset_names, names);
        return FUZZ_REPLAY_BAD_INPUT;
      }
      break;
    }
    case REPLAY_OPT_BACKEND: {
      args->backend = fuzz_backend_find(value);
      if (args->backend == NULL) {
        char names[128];
        fuzz_backend_names(names, sizeof names);
        fprintf(stderr, "replay: --backend %s: no such backend in this build (%s)\n", value, names);
        return FUZZ_REPLAY_BAD_INPUT;
      }
      args->ops = oracle_opset(args->backend);
      args->threaded = 0;
      break;
    }
    case REPLAY_OPT_LIST_BACKENDS: replay_list_backends(stdout); return FUZZ_REPLAY_CLEAN;
    case REPLAY_OPT_FREE: args->free_threads = 1; break;
    case REPLAY_OPT_TEXT:
      if (!set_format(args, REPLAY_TEXT)) return FUZZ_REPLAY_BAD_INPUT;
      break;
    case REPLAY_OPT_BYTES:
      if (!set_format(args, REPLAY_BYTES)) return FUZZ_REPLAY_BAD_INPUT;
      break;
    case REPLAY_OPT_QUIET: args->quiet = 1; break;
    case REPLAY_OPT_AS_TARGET: args->as_target = 1; break;
    case REPLAY_OPT_EVENTS: args->events = 1; break;
    case REPLAY_OPT_TRACE: args->trace = 1; break;
    case REPLAY_OPT_PRINT: args->print_only = 1; break;
    case REPLAY_OPT_ASSEMBLE: args->assemble_out = value; break;
    case REPLAY_OPT_VERIFY:
      if (!parse_verify(value, &args->verify_mask)) return FUZZ_REPLAY_BAD_INPUT;
      args->verify_given = 1;
      break;
    case REPLAY_OPT_PARAMS: args->params = value; break;
    case REPLAY_OPT_MAX_BYTES:
      if (!parse_max_bytes(value, &args->max_bytes)) return FUZZ_REPLAY_BAD_INPUT;
      break;
    case REPLAY_OPT_LIST_OPS: replay_list_ops(stdout); return FUZZ_REPLAY_CLEAN;
    case REPLAY_OPT_LIST_KINDS: gc_verify_kinds_print_markdown(stdout); return FUZZ_REPLAY_CLEAN;
    case REPLAY_OPT_HELP: replay_usage(stdout); return FUZZ_REPLAY_CLEAN;
    case REPLAY_OPT_COUNT: break;
  }
  return REPLAY_GO_ON;
}

static int find_option(const char *name) {
  if (strcmp(name, "-h") == 0) return REPLAY_OPT_HELP;
  for (int o = 0; o < REPLAY_OPT_COUNT; o++) {
    if (strcmp(name, options[o].name) == 0) return o;
  }
  return -1;
}

int replay_parse_args(int argc, char **argv, replay_args *args, int *first_file) {
  *args = (replay_args){.ops = &fuzz_opset_graph, .max_bytes = FUZZ_REPLAY_DEFAULT_MAX_BYTES};
  *first_file = argc;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      *first_file = i + 1;
      break;
    }
    if (a[0] != '-' || a[1] == '\0') { /* a FILE ("-": stdin) */
      *first_file = i;
      break;
    }
    int o = find_option(a);
    if (o < 0 || (options[o].arg != NULL && i + 1 >= argc)) {
      fprintf(stderr, "replay: %s option '%s' (see --help)\n", o < 0 ? "unknown" : "incomplete", a);
      return FUZZ_REPLAY_BAD_INPUT;
    }
    int status = apply((replay_option)o, options[o].arg != NULL ? argv[++i] : NULL, args);
    if (status != REPLAY_GO_ON) return status;
  }
  /* GCFUZZ_PARAMS is what a heap made with gc_heap_create(NULL) reads; replay makes its heaps
   * from the program and --params, so it takes the variable as --params, and says so (the fuzz
   * targets refuse it: fuzz/targets/target_env.h). --params, given too, wins. */
  const char *env_params = getenv("GCFUZZ_PARAMS");
  if (env_params != NULL && env_params[0] != '\0') {
    if (args->params == NULL) {
      args->params = env_params;
      fprintf(stderr, "replay: GCFUZZ_PARAMS=%s taken as --params %s\n", env_params, env_params);
    } else {
      fprintf(stderr, "replay: GCFUZZ_PARAMS=%s ignored: --params %s is given\n", env_params,
              args->params);
    }
  }
  return REPLAY_GO_ON;
}
