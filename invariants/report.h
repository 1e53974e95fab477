/* One report type for every verification pass.
 *
 * A report says which check failed (the kind, with a stable short name such as
 * "reach.zero-header" that tests, scripts and people can grep), on which block, what its header
 * decodes to, where the block lives (pool and size class, or large block), and how it was reached:
 * the root and the chain of fields from it (reach, checkmark, model), or the pool and list it sits
 * on (swept). Everything is copied into the report when it is made, so it can be printed after the
 * heap changed or is gone. It can also draw the bad block's neighbourhood (two hops) as Graphviz.
 */
#ifndef INVARIANTS_REPORT_H
#define INVARIANTS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gc/gc.h"
#include "gc/header.h"
#include "gc/passes.h"
#include "invariants/kinds.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The passes a kind belongs to: the heap's verify passes (gc/passes.h), in their order, then the
 * fuzz driver's own checks. */
typedef enum gc_verify_pass_id {
#define GC_VERIFY_PASS_ID_(id, name, points, run, needs, what) GC_VPASS_##id,
  GC_VERIFY_PASS_TABLE(GC_VERIFY_PASS_ID_)
#undef GC_VERIFY_PASS_ID_
      GC_VPASS_DRIVER,
  GC_VPASS_COUNT
} gc_verify_pass_id;

/* "reach", "swept", "checkmark", "model", "driver"; "unknown" out of range. */
const char *gc_verify_pass_name(gc_verify_pass_id pass);
/* The pass's GC_VERIFY_* bit of the heap's verify mask; 0 for GC_VPASS_DRIVER (not a mask pass). */
unsigned gc_verify_pass_mask(gc_verify_pass_id pass);
/* The pass named `name`, or GC_VPASS_COUNT. */
gc_verify_pass_id gc_verify_pass_of_name(const char *name);

/* Where a kind is checked (kinds.h's POINT column): a hook point of gc.h, by its own number, or
 * an op of the fuzz driver. */
typedef enum gc_verify_point_id {
  GC_VPOINT_MARK_DONE = GC_HOOK_MARK_DONE,
  GC_VPOINT_CYCLED = GC_HOOK_CYCLED,
  GC_VPOINT_SWEPT = GC_HOOK_SWEPT,
  GC_VPOINT_MARK_START = GC_HOOK_MARK_START,
  GC_VPOINT_MARK_SLICE = GC_HOOK_MARK_SLICE,
  GC_VPOINT_COMPACT_START = GC_HOOK_COMPACT_START,
  GC_VPOINT_COMPACTED = GC_HOOK_COMPACTED,
  GC_VPOINT_OP, /* by the fuzz driver while an op runs */
  GC_VPOINT_COUNT
} gc_verify_point_id;

/* 1 when the pass runs at the point: a hook point of its row in gc/passes.h, "op" for the
 * driver. */
int gc_verify_pass_runs_at(gc_verify_pass_id pass, gc_verify_point_id point);
/* "mark-done", "cycled", "swept", "mark-start", "mark-slice", "op"; "" out of range. */
const char *gc_verify_point_id_name(gc_verify_point_id point);

/* Every violation a pass or the fuzz driver reports: one per row of GC_VERIFY_KIND_TABLE
 * (kinds.h), in its order. The names are stable: tests and ci/ scripts match on them. */
typedef enum gc_verify_kind {
#define GC_VERIFY_KIND_ID_(id, pass, name, tag, point, rule) GC_VK_##id,
  GC_VERIFY_KIND_TABLE(GC_VERIFY_KIND_ID_)
#undef GC_VERIFY_KIND_ID_
      GC_VK_COUNT
} gc_verify_kind;

/* What the table says of a kind; out of range: "unknown" (tag, rule, point: ""). */
const char *gc_verify_kind_name(gc_verify_kind kind);          /* "reach.zero-header" */
const char *gc_verify_kind_pass(gc_verify_kind kind);          /* its pass's name: "reach" */
gc_verify_pass_id gc_verify_kind_pass_id(gc_verify_kind kind); /* GC_VPASS_COUNT out of range */
const char *gc_verify_kind_tag(gc_verify_kind kind);   /* "INV-HD-1", "API-LIVE" (kinds.h) */
const char *gc_verify_kind_rule(gc_verify_kind kind);  /* the one-line rule */
const char *gc_verify_kind_point(gc_verify_kind kind); /* "mark-done", "cycled", "swept", "op" */
/* The kind named `name`, or GC_VK_COUNT. */
gc_verify_kind gc_verify_kind_of_name(const char *name);

/* The table as markdown: a header row, the separator, then one row per kind in table order:
 * | kind | pass | point | invariant | rule |. `replay --list-kinds` prints it and
 * invariants/README.md holds a copy that a test compares. */
void gc_verify_kinds_print_markdown(FILE *out);

/* One step of a path: field `field` of `block` holds the next block of the path. */
typedef struct gc_verify_step {
  gc_value block;
  size_t field;
  gc_header header;   /* the block's header when the report was made */
  const char *colour; /* its colour name then ("UNMARKED", ...; static strings) */
} gc_verify_step;

/* The neighbourhood snapshot, for the Graphviz writer. */
typedef struct gc_verify_node {
  gc_value val;
  gc_header header;
  int has_header;     /* 0: the address is not a block start the heap knows */
  const char *colour; /* static string, or NULL */
  int role;           /* 0 neighbour, 1 the bad block, 2 on the path */
} gc_verify_node;
typedef struct gc_verify_edge {
  size_t from, to; /* node indices */
  size_t field;
} gc_verify_edge;

typedef struct gc_verify_report {
  gc_verify_kind kind;
  uint64_t cycle;    /* heap->cycles when the pass ran */
  const char *point; /* "mark-done", "cycled", "swept", "mark-start", "mark-slice", or "direct"
                      * (called outside a hook) */
  gc_value block;    /* the bad block or pointer; 0 when the report is about no single block */
  int has_header;    /* `header` was read (the address is a block start the heap knows) */
  gc_header header;
  char header_text[112]; /* gc_hd_describe plus the colour name */
  char where[176];       /* pool and size class and slot, or large block, or outside the heap */
  char what[320];        /* what is wrong, in words, with the numbers involved */
  char origin[160];      /* the root the path starts at, e.g. "global root #2 (slot 0x...)" */
  gc_verify_step *path;  /* origin -> path[0].block -> ... -> path[n-1].block -> block */
  size_t path_len;
  gc_verify_node *nodes; /* the two-hop neighbourhood, nodes[0] the bad block */
  size_t node_count;
  gc_verify_edge *edges;
  size_t edge_count;
} gc_verify_report;

/* A list of reports. Passes append; at most `limit` are kept (the rest are counted in
 * `dropped`), so a heap broken everywhere does not fill memory with reports. */
typedef struct gc_verify_reports {
  gc_verify_report *items;
  size_t count, capacity;
  size_t limit;   /* 0: GC_VERIFY_REPORT_LIMIT */
  size_t dropped; /* violations found past the limit */
} gc_verify_reports;
#define GC_VERIFY_REPORT_LIMIT 64

void gc_verify_reports_init(gc_verify_reports *r);
/* Forget every report (freeing their paths); the list stays usable. */
void gc_verify_reports_clear(gc_verify_reports *r);
void gc_verify_reports_free(gc_verify_reports *r);
/* How many kept reports have this kind. */
size_t gc_verify_reports_count_kind(const gc_verify_reports *r, gc_verify_kind kind);
/* "nothing" or "3 report(s): swept.stat-mismatch, swept.tiling, ...": the kinds, for a one-line
 * message. */
void gc_verify_reports_summarize(const gc_verify_reports *r, char *buf, size_t bsize);
/* Print every report, then "N violation(s)": human text only, no verdict line (see below). */
void gc_verify_reports_print(const gc_verify_reports *r, FILE *out);

/* One verdict line per finding (verdict.h), printed by whoever attributes the finding: the
 * reports a caller emits as its findings go through gc_verify_reports_emit, which prints each
 * with its verdict line; gc_verify_reports_print and gc_verify_report_print print human text
 * only, for reports that are evidence of another finding (the corrupt op shows what a pass said
 * under its driver.corruption-missed verdict) or that a test keeps.
 *
 * gc_verify_reports_emit: every report, each followed by its verdict line attributed to `op` (-1:
 * none), then "N violation(s)"; then, when `dot_path` is not NULL and there is a report, the
 * first report's neighbourhood written there as Graphviz, and a line saying where (or that it
 * could not be written). Flushes `out`. The verifier's ABORT mode ends in it (verify.h:
 * gc_verify_fail_and_abort), and so does the fuzz driver. */
void gc_verify_reports_emit(const gc_verify_reports *r, long op, const char *dot_path, FILE *out);

/* Print one report, several lines, ending in a blank line. */
void gc_verify_report_print(const gc_verify_report *r, FILE *out);
/* The verdict line (verdict.h) of one report: its kind and the kind's pass, the point it was
 * found at and its cycle. A report made by a pass called directly (point "direct") says "op"
 * when it is attributed to an op (op >= 0), else "". */
void gc_verify_report_print_verdict(const gc_verify_report *r, long op, FILE *out);
/* Write the report's neighbourhood as a Graphviz digraph (`dot -Tsvg file > file.svg`): the bad
 * block red, the path to it blue, its children and grandchildren grey, edges labelled with the
 * field. Returns 0 when the file cannot be written. */
int gc_verify_report_write_dot(const gc_verify_report *r, const char *path);
void gc_verify_report_print_dot(const gc_verify_report *r, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* INVARIANTS_REPORT_H */
