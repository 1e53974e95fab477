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

#ifdef __cplusplus
extern "C" {
#endif

/* Every violation any pass reports. The short names (gc_verify_kind_name) are stable: tests and
 * ci/ scripts match on them. */
typedef enum gc_verify_kind {
  /* reach: walking from the roots after the colours cycled (INV-HD-1, INV-POOL-1, INV-COL-1). */
  GC_VK_REACH_FOREIGN_POINTER,  /* reach.foreign-pointer: points outside every pool/large in use */
  GC_VK_REACH_INTERIOR_POINTER, /* reach.interior-pointer: into a pool or large block, not a start */
  GC_VK_REACH_ZERO_HEADER,      /* reach.zero-header: a reachable slot is free (header 0) */
  GC_VK_REACH_BAD_HEADER,       /* reach.bad-header: bad tag, or size not fitting slot/large */
  GC_VK_REACH_BAD_COLOUR,       /* reach.bad-colour: not UNMARKED/NOT_MARKABLE after cycling */
  /* swept: recount when sweeping completes (INV-STATS-1, INV-POOL-1..3, INV-LARGE-1). */
  GC_VK_SWEPT_STAT_MISMATCH,      /* swept.stat-mismatch: a running statistic != the recount */
  GC_VK_SWEPT_UNSWEPT_LEFT,       /* swept.unswept-left: an unswept list not empty when done */
  GC_VK_SWEPT_BAD_POOL,           /* swept.bad-pool: wrong owner, bad class, on two lists */
  GC_VK_SWEPT_POOL_COUNT,         /* swept.pool-count: mapped pools != owned + free pools */
  GC_VK_SWEPT_POOL_SET,           /* swept.pool-set: the collector's pool set != owned pools */
  GC_VK_SWEPT_TILING,             /* swept.tiling: slots + wastage do not tile the pool */
  GC_VK_SWEPT_BAD_HEADER,         /* swept.bad-header: a block with an invalid tag or size */
  GC_VK_SWEPT_GARBAGE_LEFT,       /* swept.garbage-left: a GARBAGE block survived sweeping */
  GC_VK_SWEPT_BAD_COLOUR,         /* swept.bad-colour: a MARKED block outside marking */
  GC_VK_SWEPT_FREELIST_FOREIGN,   /* swept.freelist-foreign: an entry outside its own pool */
  GC_VK_SWEPT_FREELIST_MISALIGNED, /* swept.freelist-misaligned: an entry not at a slot start */
  GC_VK_SWEPT_FREELIST_LIVE,      /* swept.freelist-live: an entry whose header is not 0 */
  GC_VK_SWEPT_FREELIST_CYCLE,     /* swept.freelist-cycle: the list comes back to an entry */
  GC_VK_SWEPT_FREELIST_ORDER,     /* swept.freelist-order: entries not in ascending order */
  GC_VK_SWEPT_FREELIST_COUNT,     /* swept.freelist-count: a free slot missing from the list */
  GC_VK_SWEPT_FULL_POOL_HAS_FREE_SLOT, /* swept.full-pool-has-free-slot */
  GC_VK_SWEPT_AVAIL_POOL_FULL,    /* swept.avail-pool-full: an avail pool without a free slot */
  GC_VK_SWEPT_BAD_FRONTIER,       /* swept.bad-frontier: a pool's frontier or end out of place */
  GC_VK_SWEPT_WORKBUF_LOST,       /* swept.workbuf-lost: a mark work buffer not on the empty list */
  /* checkmark: a second mark right after marking. */
  GC_VK_CHECKMARK_UNMARKED,    /* checkmark.unmarked: reachable, not MARKED by the collector */
  GC_VK_CHECKMARK_BAD_POINTER, /* checkmark.bad-pointer: a reachable pointer that is no block */
  GC_VK_CHECKMARK_MARK_UNFINISHED, /* checkmark.mark-unfinished: a marker still busy at mark-done */
  /* model: the driver's shadow graph against the heap. */
  GC_VK_MODEL_DEAD,            /* model.dead: reachable in the model, freed or GARBAGE in the heap */
  GC_VK_MODEL_CONTENTS,        /* model.contents: header or a field differs from the model */
  GC_VK_MODEL_NOT_FREED,       /* model.not-freed: unreachable at a cycle's start, alive at its end */
  GC_VK_MODEL_FINALIZER_COUNT, /* model.finalizer-count: finalize ran != once per freed block */
  GC_VK_MODEL_LIVE_COUNT,      /* model.live-count: heap's live blocks != the model's */
  GC_VK_MODEL_ROOT,            /* model.root: a root slot does not hold what the model put there */
  GC_VK_COUNT
} gc_verify_kind;

/* "reach.zero-header", ... */
const char *gc_verify_kind_name(gc_verify_kind kind);
/* The pass part of the name: "reach", "swept", "checkmark", "model". */
const char *gc_verify_kind_pass(gc_verify_kind kind);
/* The kind named `name`, or GC_VK_COUNT. */
gc_verify_kind gc_verify_kind_of_name(const char *name);

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
  uint64_t cycle;      /* heap->cycles when the pass ran */
  const char *point;   /* "mark-done", "cycled", "swept", or "direct" (called outside a hook) */
  gc_value block;      /* the bad block or pointer; 0 when the report is about no single block */
  int has_header;      /* `header` was read (the address is a block start the heap knows) */
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
/* Print every report, then "N violation(s)". */
void gc_verify_reports_print(const gc_verify_reports *r, FILE *out);

/* Print one report, several lines, ending in a blank line. */
void gc_verify_report_print(const gc_verify_report *r, FILE *out);
/* Write the report's neighbourhood as a Graphviz digraph (`dot -Tsvg file > file.svg`): the bad
 * block red, the path to it blue, its children and grandchildren grey, edges labelled with the
 * field. Returns 0 when the file cannot be written. */
int gc_verify_report_write_dot(const gc_verify_report *r, const char *path);
void gc_verify_report_print_dot(const gc_verify_report *r, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* INVARIANTS_REPORT_H */
