/* The replay command's options: one table (REPLAY_OPTIONS) that both the parser and --help read,
 * so every option is described. */
#ifndef FUZZ_REPLAY_OPTIONS_H
#define FUZZ_REPLAY_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "fuzz/lang/ops.h"
#include "fuzz/replay/input.h"

/* X(ID, "--name", "ARG" or NULL for a flag, "what it does": lines joined by \n). */
#define REPLAY_OPTIONS(X)                                                                   \
  X(TARGET, "--target", "NAME",                                                             \
    "the fuzz target the input is for: graph (default), roots,\n"                           \
    "schedule (each domain on its own thread, one at a time, the\n"                         \
    "interleaving chosen by the program; printed after the run);\n"                         \
    "a backend's name (--backend), or NAME-threads: the backend\n"                          \
    "with one thread a domain under the scheduler (gcfuzz-threads)")                        \
  X(BACKEND, "--backend", "NAME",                                                           \
    "run through the backend interface (fuzz/backend/backend.h)\n"                          \
    "on collector NAME, checked by the backend-neutral model and\n"                         \
    "the backend's deep check: gcfuzz, lua, bdwgc (those linked\n"                          \
    "in: --list-backends). Byte inputs read with its op set")                               \
  X(FREE, "--free", NULL,                                                                   \
    "schedule, NAME-threads: run the threads in real parallel,\n"                           \
    "scheduler off (a stress run, for ThreadSanitizer; not\n"                               \
    "reproducible)")                                                                        \
  X(TEXT, "--text", NULL, "read every FILE as text (see \"Text or bytes\")")                \
  X(BYTES, "--bytes", NULL, "read every FILE as bytes, even a .txt file")                   \
  X(QUIET, "--quiet", NULL, "do not print the program, only violations and the summary")    \
  X(AS_TARGET, "--as-target", NULL,                                                         \
    "graph, roots, schedule: run every FILE in one pool cache, full\n"                      \
    "at the start, and one scratch memory, as a fuzz target's process\n"                    \
    "runs its inputs (a heap reuses the spares the one before left;\n"                      \
    "ci/campaign --coverage replays so). Default: each FILE on its own")                    \
  X(EVENTS, "--events", NULL,                                                               \
    "after the last FILE, print how often each rare event of the\n"                         \
    "collector happened, summed over every FILE run, as one line:\n"                        \
    "GCFUZZ-EVENTS {json} (the census of ci/campaign --census):\n"                          \
    "gcfuzz's (gc.h, GC_EVENTS) for the program targets, the\n"                             \
    "backend's own table (backend.h: rare_events) for --backend")                           \
  X(TRACE, "--trace", NULL, "print each op as it runs, and each cycle's hook points")       \
  X(PRINT, "--print", NULL, "print the program as text and exit without running it")        \
  X(ASSEMBLE, "--assemble", "OUT",                                                          \
    "write the program's canonical bytes to OUT and exit\n"                                 \
    "(one FILE only; OUT '-' is stdout)")                                                   \
  X(VERIFY, "--verify", "PASSES",                                                           \
    "exactly the passes to run, joined by '+': reach, swept,\n"                             \
    "checkmark, model, perf, stats, space, satb, ephe, moved (gc/passes.h); all\n"          \
    "(the default) or none. An empty value is an error (exit 2), not none")                 \
  X(PARAMS, "--params", "P", "extra collector parameters, e.g. markstack=4 (gc/README.md)") \
  X(MAX_BYTES, "--max-bytes", "N",                                                          \
    "run no program longer than N bytes (text counts as the bytes\n"                        \
    "it assembles to); 0: no limit. Default 65536: a run grows\n"                           \
    "faster than its input (64 KiB of random bytes take about a\n"                          \
    "second, 1 MiB over a minute); a longer one is not run (exit 2).\n"                     \
    "Past 4096 bytes, the fuzz targets' max_len, replay warns on\n"                         \
    "stderr: no fuzzer makes such an input")                                                \
  X(LIST_OPS, "--list-ops", NULL,                                                           \
    "print the op table (fuzz/lang/ops.h) as markdown and exit: op,\n"                      \
    "operands, what it does (fuzz/README.md holds a copy)")                                 \
  X(LIST_KINDS, "--list-kinds", NULL,                                                       \
    "print the table of report kinds (invariants/kinds.h) as\n"                             \
    "markdown and exit: kind, pass, point, invariant, rule\n"                               \
    "(invariants/README.md holds a copy)")                                                  \
  X(LIST_BACKENDS, "--list-backends", NULL,                                                 \
    "print every backend linked in: its capabilities and tunables")                         \
  X(HELP, "--help", NULL, "this text (also -h)")

typedef struct replay_args {
  replay_format format; /* --text, --bytes, or the rule of fuzz/replay/input.h */
  int quiet, trace, print_only;
  int as_target; /* --as-target */
  int events;    /* --events */
  const char *assemble_out;
  unsigned verify_mask; /* --verify: the exact passes, when verify_given */
  int verify_given;
  const char *params;
  const fuzz_opset *ops;              /* --target: how byte inputs are read and text is assembled */
  int free_threads;                   /* --free */
  size_t max_bytes;                   /* --max-bytes: the longest program run; 0: any */
  const struct fuzz_backend *backend; /* --backend: run through fuzz/oracle; NULL: the driver */
  int threaded;                       /* --target NAME-threads: one thread a domain */
} replay_args;

enum { REPLAY_GO_ON = -1 };

/* Parse the options of argv into *args (defaults first). Returns REPLAY_GO_ON with the first
 * FILE's index in *first_file, or the exit status when the command is done: --help and the
 * listings (0), a usage error, reported on stderr (2). */
int replay_parse_args(int argc, char **argv, replay_args *args, int *first_file);

void replay_usage(FILE *out);

#endif /* FUZZ_REPLAY_OPTIONS_H */
