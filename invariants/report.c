/* Reports: kind names, the report list, printing, the neighbourhood snapshot and Graphviz. */
#include "invariants/report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "invariants/pass.h"
#include "invariants/verdict.h"

/* ---- Passes and kinds: readers of gc/passes.h and kinds.h ---------------------------------- */

typedef struct pass_row {
  const char *name;
  unsigned mask;   /* its GC_VERIFY_* bit; 0 for the driver */
  unsigned points; /* GC_HOOK_BIT()s; the driver's: GC_VPOINT_OP's bit */
} pass_row;

static const pass_row passes[GC_VPASS_COUNT] = {
#define PASS_ROW(id, name, points, run, needs, what) \
  [GC_VPASS_##id] = {name, GC_VERIFY_##id, points},
    GC_VERIFY_PASS_TABLE(PASS_ROW)
#undef PASS_ROW
        [GC_VPASS_DRIVER] = {"driver", 0, 1u << GC_VPOINT_OP},
};

static const char *const point_names[GC_VPOINT_COUNT] = {
    [GC_VPOINT_MARK_DONE] = "mark-done",
    [GC_VPOINT_CYCLED] = "cycled",
    [GC_VPOINT_SWEPT] = "swept",
    [GC_VPOINT_MARK_START] = "mark-start",
    [GC_VPOINT_MARK_SLICE] = "mark-slice",
    [GC_VPOINT_OP] = "op",
    [GC_VPOINT_COMPACT_START] = "compact-start",
    [GC_VPOINT_COMPACTED] = "compacted",
};

typedef struct kind_row {
  gc_verify_pass_id pass;
  const char *name, *tag;
  gc_verify_point_id point;
  const char *rule;
} kind_row;

static const kind_row kinds[GC_VK_COUNT] = {
#define KIND_ROW(id, pass, name, tag, point, rule) \
  [GC_VK_##id] = {GC_VPASS_##pass, name, tag, GC_VPOINT_##point, rule},
    GC_VERIFY_KIND_TABLE(KIND_ROW)
#undef KIND_ROW
};

static int pass_known(gc_verify_pass_id pass) { return (unsigned)pass < GC_VPASS_COUNT; }
static int kind_known(gc_verify_kind kind) { return (unsigned)kind < GC_VK_COUNT; }

const char *gc_verify_pass_name(gc_verify_pass_id pass) {
  return pass_known(pass) ? passes[pass].name : "unknown";
}

unsigned gc_verify_pass_mask(gc_verify_pass_id pass) {
  return pass_known(pass) ? passes[pass].mask : 0;
}

int gc_verify_pass_runs_at(gc_verify_pass_id pass, gc_verify_point_id point) {
  return pass_known(pass) && (unsigned)point < GC_VPOINT_COUNT &&
         (passes[pass].points & (1u << point)) != 0;
}

const char *gc_verify_point_id_name(gc_verify_point_id point) {
  return (unsigned)point < GC_VPOINT_COUNT ? point_names[point] : "";
}

gc_verify_pass_id gc_verify_pass_of_name(const char *name) {
  for (int p = 0; p < GC_VPASS_COUNT; p++) {
    if (strcmp(passes[p].name, name) == 0) return (gc_verify_pass_id)p;
  }
  return GC_VPASS_COUNT;
}

const char *gc_verify_kind_name(gc_verify_kind kind) {
  return kind_known(kind) ? kinds[kind].name : "unknown";
}

gc_verify_pass_id gc_verify_kind_pass_id(gc_verify_kind kind) {
  return kind_known(kind) ? kinds[kind].pass : GC_VPASS_COUNT;
}

const char *gc_verify_kind_pass(gc_verify_kind kind) {
  return gc_verify_pass_name(gc_verify_kind_pass_id(kind));
}

const char *gc_verify_kind_tag(gc_verify_kind kind) {
  return kind_known(kind) ? kinds[kind].tag : "";
}

const char *gc_verify_kind_rule(gc_verify_kind kind) {
  return kind_known(kind) ? kinds[kind].rule : "";
}

const char *gc_verify_kind_point(gc_verify_kind kind) {
  return kind_known(kind) ? point_names[kinds[kind].point] : "";
}

gc_verify_kind gc_verify_kind_of_name(const char *name) {
  for (int k = 0; k < GC_VK_COUNT; k++) {
    if (strcmp(kinds[k].name, name) == 0) return (gc_verify_kind)k;
  }
  return GC_VK_COUNT;
}

/* A table cell: a '|' in the text would end the cell. */
static void markdown_cell(FILE *out, const char *s) {
  fputs(" ", out);
  for (; *s; s++) {
    if (*s == '|') fputc('\\', out);
    fputc(*s, out);
  }
  fputs(" |", out);
}

void gc_verify_kinds_print_markdown(FILE *out) {
  fputs("| kind | pass | point | invariant | rule |\n", out);
  fputs("|---|---|---|---|---|\n", out);
  for (int k = 0; k < GC_VK_COUNT; k++) {
    fputs("|", out);
    markdown_cell(out, kinds[k].name);
    markdown_cell(out, gc_verify_pass_name(kinds[k].pass));
    markdown_cell(out, point_names[kinds[k].point]);
    markdown_cell(out, kinds[k].tag);
    markdown_cell(out, kinds[k].rule);
    fputc('\n', out);
  }
}

const char *gc_verify_point_name(gc_hook_point point) {
  /* A hook point is the point id of the same number (report.h). */
  return (unsigned)point < GC_VPOINT_OP ? point_names[point] : "?";
}

/* ---- The list ------------------------------------------------------------------------------ */

void gc_verify_reports_init(gc_verify_reports *r) { memset(r, 0, sizeof *r); }

static void report_free(gc_verify_report *r) {
  free(r->path);
  free(r->nodes); /* the edges are in the same allocation (gc_verify_report_neighbourhood) */
}

void gc_verify_reports_clear(gc_verify_reports *r) {
  for (size_t i = 0; i < r->count; i++) report_free(&r->items[i]);
  r->count = 0;
  r->dropped = 0;
}

void gc_verify_reports_free(gc_verify_reports *r) {
  gc_verify_reports_clear(r);
  free(r->items);
  size_t limit = r->limit;
  memset(r, 0, sizeof *r);
  r->limit = limit;
}

size_t gc_verify_reports_count_kind(const gc_verify_reports *r, gc_verify_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < r->count; i++) n += r->items[i].kind == kind;
  return n;
}

void gc_verify_reports_summarize(const gc_verify_reports *r, char *buf, size_t bsize) {
  size_t total = r->count + r->dropped;
  if (total == 0) {
    snprintf(buf, bsize, "nothing");
    return;
  }
  int used = snprintf(buf, bsize, "%zu report(s):", total);
  for (size_t i = 0; i < r->count && i < 4 && used > 0 && (size_t)used < bsize; i++) {
    used += snprintf(buf + used, bsize - (size_t)used, "%s %s", i ? "," : "",
                     gc_verify_kind_name(r->items[i].kind));
  }
  if (r->count > 4 && used > 0 && (size_t)used < bsize) {
    snprintf(buf + used, bsize - (size_t)used, ", ...");
  }
}

gc_verify_report *gc_verify_report_new(const gc_verify_run *run, gc_verify_kind kind) {
  gc_verify_reports *out = run->out;
  if (out == NULL) return NULL;
  size_t limit = out->limit ? out->limit : GC_VERIFY_REPORT_LIMIT;
  if (out->count >= limit) {
    out->dropped++;
    return NULL;
  }
  if (out->count == out->capacity) {
    size_t capacity = out->capacity ? out->capacity * 2 : 2; /* most lists hold one or two */
    gc_verify_report *items = realloc(out->items, capacity * sizeof *items);
    if (items == NULL) {
      out->dropped++;
      return NULL;
    }
    out->items = items;
    out->capacity = capacity;
  }
  gc_verify_report *r = &out->items[out->count++];
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->cycle = run->heap->cycles;
  r->point = run->point;
  return r;
}

/* ---- Filling a report ---------------------------------------------------------------------- */

void gc_verify_report_what(gc_verify_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
}

gc_verify_report *gc_verify_violation(const gc_verify_run *run, size_t *found, gc_verify_kind kind,
                                      const char *fmt, ...) {
  (*found)++;
  gc_verify_report *r = gc_verify_report_new(run, kind);
  if (r == NULL) return NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->what, sizeof r->what, fmt, ap);
  va_end(ap);
  return r;
}

void gc_verify_report_where(gc_verify_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->where, sizeof r->where, fmt, ap);
  va_end(ap);
}

size_t gc_verify_state_violation(const gc_verify_run *run, gc_verify_kind kind, const char *where,
                                 const char *fmt, ...) {
  gc_verify_report *r = gc_verify_report_new(run, kind);
  if (r != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->what, sizeof r->what, fmt, ap);
    va_end(ap);
    gc_verify_report_where(r, "%s", where);
  }
  return 1;
}

const char *gc_verify_colour_of(const gc_heap *heap, gc_header hd) {
  return hd == 0 ? "none" : gc_colour_name(heap, gc_hd_colour(hd));
}

void gc_verify_report_header(gc_verify_report *r, gc_heap *heap, gc_header hd) {
  char buf[96];
  r->has_header = 1;
  r->header = hd;
  if (hd == 0) {
    snprintf(r->header_text, sizeof r->header_text, "0x0 (zero: a free slot)");
  } else {
    snprintf(r->header_text, sizeof r->header_text, "%s %s", gc_hd_describe(hd, buf, sizeof buf),
             gc_verify_colour_of(heap, hd));
  }
}

void gc_verify_report_block(gc_verify_report *r, gc_heapindex *ix, gc_value v) {
  r->block = v;
  if (!gc_is_block(v)) {
    /* What a root slot holds may be no pointer at all (model.root: a slot emptied behind the
     * model's back); the index locates block pointers only. */
    snprintf(r->where, sizeof r->where, "%s, not a block pointer",
             v == 0 ? "NULL" : "an immediate");
    snprintf(r->header_text, sizeof r->header_text, "not read (not a block pointer)");
    return;
  }
  gc_heapindex_describe(ix, v, r->where, sizeof r->where);
  gc_header hd;
  if (gc_heapindex_read_header(ix, v, &hd)) {
    gc_verify_report_header(r, ix->heap, hd);
  } else {
    snprintf(r->header_text, sizeof r->header_text, "not read (not a block start)");
  }
}

int gc_verify_report_path(gc_verify_report *r, const char *origin, const gc_verify_step *steps,
                          size_t count) {
  snprintf(r->origin, sizeof r->origin, "%s", origin);
  free(r->path);
  r->path = NULL;
  r->path_len = 0;
  if (count == 0) return 1;
  r->path = malloc(count * sizeof *steps);
  if (r->path == NULL) return 0;
  memcpy(r->path, steps, count * sizeof *steps);
  r->path_len = count;
  return 1;
}

/* ---- The neighbourhood snapshot ------------------------------------------------------------ */

enum { MAX_NODES = 64, MAX_EDGES = 128, MAX_FIELDS_PER_NODE = 16 };

typedef struct snapshot {
  gc_verify_report *r;
  gc_heapindex *ix;
} snapshot;

static size_t node_of(snapshot *s, gc_value v, int role) {
  gc_verify_report *r = s->r;
  for (size_t i = 0; i < r->node_count; i++) {
    if (r->nodes[i].val == v) {
      if (role > r->nodes[i].role && r->nodes[i].role != 1) r->nodes[i].role = role;
      return i;
    }
  }
  if (r->node_count == MAX_NODES) return SIZE_MAX;
  gc_verify_node *n = &r->nodes[r->node_count];
  memset(n, 0, sizeof *n);
  n->val = v;
  n->role = role;
  gc_header hd;
  if (gc_heapindex_read_header(s->ix, v, &hd)) {
    n->has_header = 1;
    n->header = hd;
    n->colour = gc_verify_colour_of(s->ix->heap, hd);
  }
  return r->node_count++;
}

static void add_edge(snapshot *s, size_t from, size_t to, size_t field) {
  gc_verify_report *r = s->r;
  if (from == SIZE_MAX || to == SIZE_MAX || r->edge_count == MAX_EDGES) return;
  for (size_t i = 0; i < r->edge_count; i++) {
    if (r->edges[i].from == from && r->edges[i].to == to && r->edges[i].field == field) return;
  }
  r->edges[r->edge_count++] = (gc_verify_edge){from, to, field};
}

/* The out-edges of node i, if it is a readable scanned block (first MAX_FIELDS_PER_NODE). */
static void expand(snapshot *s, size_t i) {
  gc_verify_node n = s->r->nodes[i];
  if (!n.has_header || n.header == 0 || !gc_tag_is_scanned(gc_hd_tag(n.header))) return;
  size_t wsize = gc_hd_wsize(n.header);
  /* The bad block's header may claim more fields than its slot holds (reach.bad-header): past
   * the slot lie the next slot, or the next 32 KiB, which may not be mapped. */
  gc_loc loc = gc_heapindex_locate_start(s->ix, n.val);
  if (loc.kind == GC_LOC_SLOT && wsize >= gc_wsize_of_class[loc.size_class]) {
    wsize = gc_wsize_of_class[loc.size_class] - 1;
  }
  if (wsize > MAX_FIELDS_PER_NODE) wsize = MAX_FIELDS_PER_NODE;
  for (size_t f = 0; f < wsize; f++) {
    gc_value child = gc_fields(n.val)[f];
    if (!gc_is_block(child)) continue;
    add_edge(s, i, node_of(s, child, 0), f);
  }
}

static void draw_neighbourhood(gc_verify_report *r, gc_heapindex *ix);

/* The snapshot is drawn in arrays on the stack, then kept in one allocation of the size it took
 * (nodes, then edges): the corrupt op makes reports on purpose at every op, and a pair of
 * zeroed 2.5 and 3 KiB arrays a report, most of them unused, was most of the memory the graph
 * target allocated per input (under ASan, every byte of it passes through the quarantine). */
void gc_verify_report_neighbourhood(gc_verify_report *r, gc_heapindex *ix) {
  if (r->block == 0) return;
  gc_verify_node nodes[MAX_NODES];
  gc_verify_edge edges[MAX_EDGES];
  r->nodes = nodes;
  r->edges = edges;
  r->node_count = 0;
  r->edge_count = 0;
  draw_neighbourhood(r, ix);
  size_t nodes_bsize = r->node_count * sizeof *nodes, edges_bsize = r->edge_count * sizeof *edges;
  char *kept = malloc(nodes_bsize + edges_bsize);
  if (kept == NULL) {
    r->nodes = NULL;
    r->edges = NULL;
    r->node_count = 0;
    r->edge_count = 0;
    return;
  }
  memcpy(kept, nodes, nodes_bsize);
  memcpy(kept + nodes_bsize, edges, edges_bsize);
  r->nodes = (gc_verify_node *)kept;
  r->edges = (gc_verify_edge *)(kept + nodes_bsize);
}

/* The snapshot into r->nodes and r->edges (room for MAX_NODES and MAX_EDGES). */
static void draw_neighbourhood(gc_verify_report *r, gc_heapindex *ix) {
  snapshot s = {r, ix};
  node_of(&s, r->block, 1);
  /* In-edges: the last two steps of the path. */
  size_t below = 0; /* node the next-older step points at */
  for (size_t k = 0; k < 2 && k < r->path_len; k++) {
    const gc_verify_step *st = &r->path[r->path_len - 1 - k];
    size_t from = node_of(&s, st->block, 2);
    add_edge(&s, from, below, st->field);
    below = from;
  }
  /* Out-edges: children, then grandchildren. */
  size_t first_hop_end;
  expand(&s, 0);
  first_hop_end = r->node_count;
  for (size_t i = 1; i < first_hop_end; i++) {
    if (r->nodes[i].role == 0) expand(&s, i);
  }
}

/* ---- Printing ------------------------------------------------------------------------------ */

static const char *tag_kind(unsigned tag) {
  return gc_tag_is_scanned(tag)    ? "scan"
         : tag == GC_TAG_RAW       ? "raw"
         : tag == GC_TAG_EPHEMERON ? "ephemeron"
         : tag == GC_TAG_WEAK      ? "weak"
         : tag == GC_TAG_CUSTOM    ? "custom"
                                   : "invalid";
}

static void print_step(FILE *out, const gc_verify_step *st) {
  fprintf(out, "          -> %#llx [wsize=%zu %s(%u) %s] field %zu\n",
          (unsigned long long)st->block, gc_hd_wsize(st->header), tag_kind(gc_hd_tag(st->header)),
          gc_hd_tag(st->header), st->colour ? st->colour : "?", st->field);
}

void gc_verify_report_print_verdict(const gc_verify_report *r, long op, FILE *out) {
  const char *point = r->point != NULL ? r->point : "";
  if (strcmp(point, "direct") == 0) point = op >= 0 ? "op" : "";
  gc_verdict v = {
      .kind = gc_verify_kind_name(r->kind),
      .pass = gc_verify_kind_pass(r->kind),
      .point = point,
      .op = op,
      .cycle = (long long)r->cycle,
  };
  gc_verdict_print(out, &v);
}

void gc_verify_report_print(const gc_verify_report *r, FILE *out) {
  fprintf(out, "gcfuzz verify: %s (pass %s, cycle %llu, %s)\n", gc_verify_kind_name(r->kind),
          gc_verify_kind_pass(r->kind), (unsigned long long)r->cycle, r->point ? r->point : "?");
  fprintf(out, "  what:   %s\n", r->what);
  if (r->block != 0) {
    fprintf(out, "  block:  %#llx  header %s\n", (unsigned long long)r->block, r->header_text);
  } else if (r->has_header) {
    fprintf(out, "  header: %s\n", r->header_text);
  }
  if (r->where[0]) fprintf(out, "  where:  %s\n", r->where);
  /* An over-retained block has no path from a root: what it has is what holds it (a word, a
   * cycle, nothing), printed in the path's place. */
  int held = r->kind == GC_VK_CHECKMARK_OVER_RETAINED;
  if (r->origin[0]) {
    fprintf(out, "  %s%s\n", held ? "held by: " : "path:   ", r->origin);
    /* A path through a long list is long; its two ends say where it came from and went. */
    const size_t ends = 8;
    for (size_t i = 0; i < r->path_len; i++) {
      if (r->path_len > 2 * ends && i == ends) {
        fprintf(out, "          ... %zu more steps ...\n", r->path_len - 2 * ends);
        i = r->path_len - ends - 1;
        continue;
      }
      print_step(out, &r->path[i]);
    }
    if (r->block != 0)
      fprintf(out, "          -> %#llx (this block)\n", (unsigned long long)r->block);
    if (r->path_len > 0) {
      const gc_verify_step *ref = &r->path[r->path_len - 1];
      fprintf(out, "  referrer: %#llx field %zu\n", (unsigned long long)ref->block, ref->field);
    } else if (r->block != 0 && !held) {
      fprintf(out, "  referrer: the root itself\n");
    }
  }
  fputc('\n', out);
}

static void print_violation_count(const gc_verify_reports *r, FILE *out) {
  fprintf(out, "gcfuzz verify: %zu violation(s)", r->count + r->dropped);
  if (r->dropped) fprintf(out, " (%zu not kept)", r->dropped);
  fputc('\n', out);
}

void gc_verify_reports_print(const gc_verify_reports *r, FILE *out) {
  for (size_t i = 0; i < r->count; i++) gc_verify_report_print(&r->items[i], out);
  print_violation_count(r, out);
}

void gc_verify_reports_emit(const gc_verify_reports *r, long op, const char *dot_path, FILE *out) {
  for (size_t i = 0; i < r->count; i++) {
    gc_verify_report_print(&r->items[i], out);
    gc_verify_report_print_verdict(&r->items[i], op, out);
  }
  print_violation_count(r, out);
  if (dot_path != NULL && r->count > 0) {
    if (gc_verify_report_write_dot(&r->items[0], dot_path)) {
      fprintf(out, "gcfuzz verify: neighbourhood of the first report written to %s\n", dot_path);
    } else {
      fprintf(out, "gcfuzz verify: cannot write %s\n", dot_path);
    }
  }
  fflush(out);
}

/* ---- Graphviz ------------------------------------------------------------------------------ */

static void dot_escape(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    fputc(*s, out);
  }
}

void gc_verify_report_print_dot(const gc_verify_report *r, FILE *out) {
  fprintf(out, "digraph gcfuzz_report {\n  labelloc=t;\n  label=\"");
  dot_escape(out, gc_verify_kind_name(r->kind));
  fprintf(out, " (cycle %llu): ", (unsigned long long)r->cycle);
  dot_escape(out, r->what);
  fprintf(out, "\";\n  node [shape=box, fontname=\"monospace\", style=filled];\n");
  static const char *const fill[] = {"#e8e8e8", "#f4a0a0", "#a8c8f0"};
  for (size_t i = 0; i < r->node_count; i++) {
    const gc_verify_node *n = &r->nodes[i];
    fprintf(out, "  n%zu [fillcolor=\"%s\", label=\"%#llx\\n", i, fill[n->role],
            (unsigned long long)n->val);
    if (!n->has_header) {
      fprintf(out, "not a block start");
    } else if (n->header == 0) {
      fprintf(out, "header 0 (free slot)");
    } else {
      unsigned tag = gc_hd_tag(n->header);
      fprintf(out, "wsize=%zu %s(%u)\\n%s", gc_hd_wsize(n->header), tag_kind(tag), tag,
              n->colour ? n->colour : "?");
    }
    fprintf(out, "\"];\n");
  }
  for (size_t i = 0; i < r->edge_count; i++) {
    fprintf(out, "  n%zu -> n%zu [label=\"%zu\"];\n", r->edges[i].from, r->edges[i].to,
            r->edges[i].field);
  }
  if (r->origin[0] && r->node_count > 0) {
    /* The root, joined to the oldest path node shown (nodes[1..2] hold the path tail). */
    size_t shown = r->path_len < 2 ? r->path_len : 2;
    size_t target = 0;
    for (size_t i = 0; i < r->node_count; i++) {
      if (shown > 0 && r->nodes[i].val == r->path[r->path_len - shown].block) target = i;
    }
    fprintf(out, "  root [shape=ellipse, fillcolor=\"#ffffff\", label=\"");
    dot_escape(out, r->origin);
    fprintf(out, "\"];\n");
    if (r->path_len > shown) {
      fprintf(out, "  root -> n%zu [style=dashed, label=\"%zu more steps\"];\n", target,
              r->path_len - shown);
    } else {
      fprintf(out, "  root -> n%zu;\n", target);
    }
  }
  fprintf(out, "}\n");
}

int gc_verify_report_write_dot(const gc_verify_report *r, const char *path) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return 0;
  gc_verify_report_print_dot(r, f);
  return fclose(f) == 0;
}
