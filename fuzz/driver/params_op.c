/* The params op and the trace sink (see params_op.h). */
#include "fuzz/driver/params_op.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/verdict.h"

/* ---- The configuration, field by field ----------------------------------------------------- */

/* Every field gc_set_params may write (the keys of gc/README.md, "Parameters"); trace_file and
 * pool_cache, which no string names, are compared besides. Field by field: a struct's padding
 * bytes are not part of its value. */
#define CONFIG_FIELDS(X) \
  X(gc_percent)          \
  X(min_trigger_words)   \
  X(sweep_budget_words)  \
  X(mark_stack_entries)  \
  X(heap_limit_bytes)    \
  X(pools_per_batch)     \
  X(free_pools_kept)     \
  X(fail_alloc_after)    \
  X(trace)               \
  X(verify)              \
  X(marking)             \
  X(mark_slice_words)    \
  X(compact_percent)     \
  X(mark_buf_entries)    \
  X(mark_slice_cap)      \
  X(mark_rechecks)       \
  X(zeal)

typedef enum config_field {
  F_NONE, /* an unused entry of a row's `sets` */
#define CONFIG_FIELD_ENUM(name) F_##name,
  CONFIG_FIELDS(CONFIG_FIELD_ENUM)
#undef CONFIG_FIELD_ENUM
      F_COUNT
} config_field;

static const char *const field_names[F_COUNT] = {[F_NONE] = "",
#define CONFIG_FIELD_NAME(name) [F_##name] = #name,
                                                 CONFIG_FIELDS(CONFIG_FIELD_NAME)
#undef CONFIG_FIELD_NAME
};

/* The field as a signed 64-bit value (gc_percent and compact_percent may be GC_PERCENT_OFF). */
static long long field_value(const gc_config *c, config_field f) {
  switch (f) {
#define CONFIG_FIELD_GET(name) \
  case F_##name: return (long long)c->name;
    CONFIG_FIELDS(CONFIG_FIELD_GET)
#undef CONFIG_FIELD_GET
    case F_NONE:
    case F_COUNT: break;
  }
  return 0;
}

static void set_field(gc_config *c, config_field f, long long v) {
  switch (f) {
#define CONFIG_FIELD_SET(name) \
  case F_##name: c->name = (__typeof__(c->name))v; break;
    CONFIG_FIELDS(CONFIG_FIELD_SET)
#undef CONFIG_FIELD_SET
    case F_NONE:
    case F_COUNT: break;
  }
}

/* ---- The catalogue -------------------------------------------------------------------------- */

enum { ROW_SETS = 4 };
enum { KIB = 1024, MIB = 1024 * 1024, GIB = 1024 * 1024 * 1024 };

typedef struct params_row {
  const char *text; /* NULL: gc_set_params(heap, NULL) */
  int accepted;     /* 1: GC_OK and `sets` take effect; 0: GC_ERR_PARAM and nothing changes */
  struct {
    config_field field;
    long long value;
  } sets[ROW_SETS];
} params_row;

#define REFUSED(text) \
  {                   \
    text, 0, {        \
      { F_NONE, 0 }   \
    }                 \
  }
#define ACCEPTED(text, ...)  \
  {                          \
    text, 1, { __VA_ARGS__ } \
  }

/* Every pass by name, each followed by '+' (the parser allows a trailing one): the mask a heap
 * running every pass has, said the long way. */
#define PASS_NAME_PLUS(id, name, points, run, needs, what) name "+"
#define EVERY_PASS_BY_NAME                                 GC_VERIFY_PASS_TABLE(PASS_NAME_PLUS)
#define ZEROS_25                                           "0000000000000000000000000"

/* The rows, in the order their numbers are written in programs: append only. Each comment names
 * the rule of gc/params.c (gc/README.md, "Parameters") the row holds the collector to. */
static const params_row catalogue[] = {
    /* 0-5: sizes (parse_size). */
    REFUSED("sweep="),                    /* no digits */
    REFUSED("keep=18446744073709551616"), /* 2^64: strtoull's ERANGE */
    REFUSED("keep=-1"),                   /* negative: strtoull would wrap it to 2^64 - 1 */
    REFUSED("keep=12x"),                  /* junk after the number */
    REFUSED("keep=4k2"),                  /* junk after the suffix */
    REFUSED("mintrigger=17179869184G"),   /* 2^34 GiB: the scaled size overflows 64 bits */
    /* 6-9: names (parse_verify, marking, parse_zeal, apply_one's unknown key). */
    REFUSED("verify=bogus"),        /* a pass no row of GC_VERIFY_PASS_TABLE names */
    REFUSED("verify=reach++swept"), /* an empty pass name between two '+' */
    REFUSED("marking=concurrent"),  /* incremental or stw */
    REFUSED("zeal=slice+bogus"),    /* a zeal mode GC_ZEALS does not name */
    /* 10-23: ranges (apply_one). */
    REFUSED("percent=100001"),          /* at most 100000 */
    REFUSED("compact=101"),             /* at most 100 */
    REFUSED("sweep=0"),                 /* the sweep budget is positive */
    REFUSED("markstack=268435457"),     /* at most 2^28 entries */
    REFUSED("markslice=0"),             /* at least 1 word */
    REFUSED("markslice=1099511627777"), /* at most 2^40 words */
    REFUSED("batch=0"),                 /* 1..4096 */
    REFUSED("batch=4097"),              /* 1..4096 */
    REFUSED("markbuf=0"),               /* 1..512 */
    REFUSED("markbuf=513"),             /* 1..512 */
    REFUSED("slicecap=0"),              /* 1..1024 */
    REFUSED("slicecap=1025"),           /* 1..1024 */
    REFUSED("rechecks=1001"),           /* at most 1000 */
    REFUSED("trace=2"),                 /* 0 or 1 */
    /* 24-28: the list (gc_config_parse): a bad item anywhere refuses the items before it too. */
    REFUSED("sweep=64,sweep=64"),        /* each key once */
    REFUSED("keep=1,zeal=slice,keep=1"), /* each key once (zeal: a key of the same length) */
    REFUSED("sweep=64,markbuf"),         /* an item without '=' */
    REFUSED("sweep=64,keep=" ZEROS_25 ZEROS_25 ZEROS_25 ZEROS_25 ZEROS_25 "1"), /* an item of
                                                                                * 128 bytes or more */
    REFUSED("sweep=64,=1"), /* an unknown (empty) key */
    /* 29-31: nothing to change. */
    ACCEPTED(NULL, {F_NONE, 0}),                         /* no string at all */
    ACCEPTED("", {F_NONE, 0}),                           /* no items */
    ACCEPTED(",sweep=64,,", {F_sweep_budget_words, 64}), /* empty items are skipped */
    /* 32-38: sizes with suffixes, powers of 1024, either case. */
    ACCEPTED("sweep=1k", {F_sweep_budget_words, KIB}),
    ACCEPTED("sweep=16K", {F_sweep_budget_words, 16 * KIB}),
    ACCEPTED("limit=1m", {F_heap_limit_bytes, MIB}),
    ACCEPTED("limit=4M", {F_heap_limit_bytes, 4 * MIB}),
    ACCEPTED("markslice=1g", {F_mark_slice_words, GIB}),
    ACCEPTED("mintrigger=1G", {F_min_trigger_words, GIB}),
    ACCEPTED("keep=0k", {F_free_pools_kept, 0}), /* 0 scaled: no overflow to refuse */
    /* 39-41: verify, only ever the passes the heap runs now (the op skips the row otherwise). */
    ACCEPTED("verify=all", {F_verify, GC_VERIFY_ALL}),
    ACCEPTED("verify=none+all+", {F_verify, GC_VERIFY_ALL}), /* none adds nothing; a final '+' */
    ACCEPTED("verify=" EVERY_PASS_BY_NAME, {F_verify, GC_VERIFY_ALL}),
    /* 42-43: the marking mode, from the next cycle. */
    ACCEPTED("marking=stw", {F_marking, GC_MARKING_STW}),
    ACCEPTED("marking=incremental", {F_marking, GC_MARKING_INCREMENTAL}),
    /* 44-45: the trace line, on the driver's sink (checked after the final collection). */
    ACCEPTED("trace=1", {F_trace, 1}),
    ACCEPTED("trace=0", {F_trace, 0}),
    /* 46: several keys, two of one length (key_given_before compares them); failafter arms its
     * countdown from now. */
    ACCEPTED("keep=1,zeal=none,failafter=3,percent=off", {F_free_pools_kept, 1}, {F_zeal, 0},
             {F_fail_alloc_after, 3}, {F_gc_percent, GC_PERCENT_OFF}),
    /* 47: both `off` spellings, and failafter 0: no injected failure from now. */
    ACCEPTED("compact=off,failafter=0,percent=100", {F_compact_percent, GC_PERCENT_OFF},
             {F_fail_alloc_after, 0}, {F_gc_percent, 100}),
    /* 48: an empty verify value, not "no passes" (`none` says that on purpose). */
    REFUSED("verify="),
};
_Static_assert(sizeof catalogue / sizeof catalogue[0] == FUZZ_PARAMS_ROWS,
               "FUZZ_PARAMS_ROWS (fuzz/lang/ops.h) is the number of rows");

/* ---- The op --------------------------------------------------------------------------------- */

static int row_sets(const params_row *r, config_field f) {
  for (int i = 0; i < ROW_SETS; i++) {
    if (r->sets[i].field == f) return 1;
  }
  return 0;
}

/* The first field where `got` differs from `want`, or F_NONE; the pointers no string names count
 * as F_COUNT. */
static config_field first_difference(const gc_config *got, const gc_config *want) {
  for (int f = F_NONE + 1; f < F_COUNT; f++) {
    if (field_value(got, (config_field)f) != field_value(want, (config_field)f)) {
      return (config_field)f;
    }
  }
  if (got->trace_file != want->trace_file || got->pool_cache != want->pool_cache) return F_COUNT;
  return F_NONE;
}

void drv_op_params(driver *d, mutator *m, int row) {
  const params_row *r = &catalogue[row];
  gc_config before = *gc_heap_config(d->heap);
  /* Never weaker checking: a verify row runs only where it names the passes running now. */
  for (int i = 0; i < ROW_SETS; i++) {
    if (r->sets[i].field == F_verify && (unsigned)r->sets[i].value != before.verify) return;
  }
  /* trace=1 without the driver's sink would write to stderr. */
  if (d->trace == NULL || d->trace->file == NULL) {
    for (int i = 0; i < ROW_SETS; i++) {
      if (r->sets[i].field == F_trace && r->sets[i].value != 0) return;
    }
  }
  gc_config want = before;
  if (r->accepted) {
    for (int i = 0; i < ROW_SETS; i++) set_field(&want, r->sets[i].field, r->sets[i].value);
  }
  const char *text = r->text != NULL ? r->text : "(NULL)";
  /* gc_config_parse, which gc_set_params calls, on a copy: the same verdict and the same fields,
   * with no message buffer (NULL) and with one of no room, which it must leave untouched. */
  gc_config parsed = before;
  char no_room[1] = {'#'};
  gc_error pe = gc_config_parse(&parsed, r->text, NULL, 0);
  gc_error pe_no_room = gc_config_parse(&parsed, r->text, no_room, 0);
  drv_check_made(d);
  if (pe != (r->accepted ? GC_OK : GC_ERR_PARAM) || pe_no_room != pe || no_room[0] != '#' ||
      first_difference(&parsed, &want) != F_NONE) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "gc_config_parse(\"%s\") without a message buffer returned %s then %s, or wrote "
                  "to a buffer of length 0, or did not set exactly what the string names",
                  text, gc_error_name(pe), gc_error_name(pe_no_room));
  }
  gc_error e = gc_set_params(d->heap, r->text);
  drv_expect_error(d, m, e, r->accepted ? GC_OK : GC_ERR_PARAM, text);
  gc_clear_error(d->heap);
  drv_check_made(d);
  const gc_config *now = gc_heap_config(d->heap);
  config_field f = first_difference(now, &want);
  if (f == F_COUNT) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "gc_set_params(\"%s\") changed trace_file or pool_cache, which no string names",
                  text);
  } else if (f != F_NONE) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "gc_set_params(\"%s\") %s: afterwards %s is %lld, expected %lld (it was %lld)",
                  text, r->accepted ? "was to set exactly what it names" : "was to change nothing",
                  field_names[f], field_value(now, f), field_value(&want, f),
                  field_value(&before, f));
  }
  if (!r->accepted || e != GC_OK) return;
  /* What the driver expects of allocation and of mark_slice follows, as after limit, fail and
   * param markslice. */
  d->limit_bytes = now->heap_limit_bytes;
  d->markslice = now->mark_slice_words;
  if (row_sets(r, F_fail_alloc_after)) d->fail_countdown = (unsigned)now->fail_alloc_after;
}

/* ---- The trace sink ------------------------------------------------------------------------- */

FILE *drv_trace_sink_open(driver *d, drv_trace_sink *sink) {
  if (sink == NULL) sink = &d->own_trace;
  if (sink->file == NULL) sink->file = open_memstream(&sink->buf, &sink->size);
  d->trace = sink;
  if (sink->file != NULL) rewind(sink->file);
  return sink->file;
}

void drv_trace_sink_close(drv_trace_sink *sink) {
  if (sink->file != NULL) fclose(sink->file);
  free(sink->buf);
  *sink = (drv_trace_sink){0};
}

void drv_trace_note(driver *d, gc_hook_point point) {
  if (!gc_heap_config(d->heap)->trace) return;
  if (point == GC_HOOK_CYCLED) d->trace_cycles_due++;
  if (point == GC_HOOK_COMPACTED) d->trace_compactions_due++;
}

/* The digits at *p, stepped over: 1 and the number if there is at least one. */
static int read_number(const char **p, const char *end, unsigned long long *out) {
  const char *s = *p;
  unsigned long long v = 0;
  while (*p < end && **p >= '0' && **p <= '9') v = v * 10 + (unsigned long long)(*(*p)++ - '0');
  *out = v;
  return *p > s;
}

void drv_trace_check(driver *d) {
  if (d->trace == NULL || d->trace->file == NULL) return;
  long written = ftell(d->trace->file);
  if (written <= 0 && d->trace_cycles_due == 0 && d->trace_compactions_due == 0) return;
  fflush(d->trace->file);
  const char *p = d->trace->buf, *end = d->trace->buf + (written > 0 ? written : 0);
  size_t cycles = 0, compactions = 0;
  unsigned long long last_cycle = 0;
  const char *bad = NULL;
  while (p < end && bad == NULL) {
    const char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
    unsigned long long n;
    if (nl == NULL) {
      bad = "a line without its newline";
    } else if (strncmp(p, "gc compact ", 11) == 0) {
      p += 11;
      if (!read_number(&p, nl, &n) || strncmp(p, " @", 2) != 0) bad = "a malformed compaction line";
      compactions++;
    } else if (strncmp(p, "gc ", 3) == 0) {
      p += 3;
      if (!read_number(&p, nl, &n) || strncmp(p, " @", 2) != 0 || n <= last_cycle) {
        bad = "a cycle line that does not begin \"gc N @\" with N above the line before's";
      }
      last_cycle = n;
      cycles++;
    } else {
      bad = "a line that begins with neither \"gc N @\" nor \"gc compact N @\"";
    }
    if (bad != NULL) {
      drv_violation(d, &d->muts[0], GC_VK_DRIVER_API_ERROR, "the trace line: %s: \"%.*s\"", bad,
                    (int)((nl != NULL ? nl : end) - line), line);
      return;
    }
    p = nl + 1;
  }
  drv_check_made(d);
  if (cycles != d->trace_cycles_due || compactions != d->trace_compactions_due) {
    drv_violation(d, &d->muts[0], GC_VK_DRIVER_API_ERROR,
                  "the trace line: %zu cycle lines and %zu compaction lines written, but %zu "
                  "cycles and %zu compactions ended with trace on (one line each)",
                  cycles, compactions, d->trace_cycles_due, d->trace_compactions_due);
  }
}
