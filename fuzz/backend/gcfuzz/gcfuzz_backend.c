/* gcfuzz's own collector as a backend (fuzz/backend/backend.h): every pass of invariants/ but the
 * model (the oracle above is the model here) runs at every hook point of every cycle, and what
 * they report is this backend's deep check.
 *
 * Blocks. A scanned block of N fields is a gc block of N + 4 fields: the program's N, then the
 * identity as four immediates (the id and the check word, 32 bits each: an immediate holds 63,
 * and a word the collector scans must not look like a pointer). A raw block of N words is a
 * GC_TAG_RAW block of N + 2 words, the identity first. Cells are one local root frame of the
 * main domain, pushed at create and popped at destroy.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "gc/gc.h"
#include "invariants/report.h"
#include "invariants/verify.h"

enum { IDENT_SCAN_FIELDS = 4, IDENT_RAW_WORDS = 2 };

/* A finalizer's record: the collector hands it back as the finalizer's `user`. */
typedef struct fin_record {
  struct fuzz_bheap *h;
  uint64_t token;
} fin_record;

/* Records come in chunks that never move while the heap lives: a queued finalizer holds its
 * record's address. */
enum { FIN_CHUNK = 64 };
typedef struct fin_chunk {
  struct fin_chunk *next;
  size_t used;
  fin_record records[FIN_CHUNK];
} fin_chunk;

struct fuzz_bheap {
  gc_heap *heap;
  gc_domain *dom; /* the domain the calls run on: doms[on] */
  /* Domains (backend.h), on the caller's one thread as the graph target runs them: the one the
   * calls run on runs, every other waits in a blocking section, so a collection it starts stops
   * them without waiting and scans their frames. doms[0] is the main domain, which holds the
   * cells' frame. */
  gc_domain *doms[FUZZ_DOMAINS];
  unsigned on;
  gc_verifier *verifier;
  gc_frame frame;
  gc_value *cells; /* cfg.cells + 1: the last is FUZZ_CELL_SELF */
  size_t ncells;
  fuzz_backend_events events;
  size_t markslice_words; /* the program's own mark slice, which a budgeted slice puts back */
  fin_chunk *fins;        /* one record per fin_set (a block may be set again), newest chunk
                           * first, freed at destroy */
};

static const fuzz_tunable tunables[] = {
    {"percent", "pacing: gc_percent from fuzz/lang's table (0, 1, 10, 50, 100, 200, 1000, off)"},
    {"mintrigger", "the least words allocated before a cycle (0 .. 262144)"},
    {"sweep", "the lazy sweep budget in words (1 .. 16384)"},
    {"markstack", "mark stack entries (4: overflows at once .. 65536)"},
    {"batch", "pools mapped at once (1, 2, 4, 16)"},
    {"keep", "empty pools kept (0, 1, 4, 64)"},
    {"marking", "stw or incremental"},
    {"markslice", "the incremental mark slice's least budget in words (1 .. 65536)"},
};
_Static_assert(sizeof tunables / sizeof tunables[0] == FUZZ_PARAM_COUNT,
               "one tunable a `param` of the op language, in its order");

static fuzz_bheap *create(const fuzz_backend_config *cfg) {
  fuzz_bheap *h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  h->ncells = cfg->cells + 1;
  h->cells = calloc(h->ncells, sizeof *h->cells);
  gc_config c;
  gc_config_default(&c);
  /* As the graph target's heaps: pacing that triggers within a short program, one pool mapped
   * at a time, stop-the-world marking until a tune says otherwise. */
  c.marking = GC_MARKING_STW;
  c.min_trigger_words = 4096;
  c.mark_stack_entries = 1024;
  c.pools_per_batch = 1;
  c.free_pools_kept = 0;
  c.verify = GC_VERIFY_ALL & ~GC_VERIFY_MODEL;
  if (cfg->params != NULL) {
    char err[200];
    if (gc_config_parse(&c, cfg->params, err, sizeof err) != GC_OK) {
      fprintf(cfg->out, "gcfuzz backend: bad parameters: %s\n", err);
      free(h->cells);
      free(h);
      return NULL;
    }
  }
  h->markslice_words = c.mark_slice_words;
  h->heap = h->cells != NULL ? gc_heap_create(&c) : NULL;
  if (h->heap == NULL) {
    free(h->cells);
    free(h);
    return NULL;
  }
  h->verifier = gc_verify_install(h->heap, GC_VERIFY_COLLECT);
  h->dom = h->doms[0] = gc_main_domain(h->heap);
  h->events = cfg->events;
  gc_frame_push(h->dom, &h->frame, h->cells, h->ncells);
  return h;
}

static void domain_end(fuzz_bheap *h, unsigned d);

static void destroy(fuzz_bheap *h) {
  for (unsigned d = 1; d < FUZZ_DOMAINS; d++) {
    if (h->doms[d] != NULL) domain_end(h, d);
  }
  gc_frame_pop(h->dom, &h->frame);
  gc_verify_uninstall(h->verifier);
  gc_heap_destroy(h->heap);
  for (fin_chunk *c = h->fins, *next; c != NULL; c = next) {
    next = c->next;
    free(c);
  }
  free(h->cells);
  free(h);
}

static gc_value cell(fuzz_bheap *h, size_t c) { return h->cells[c]; }

static int alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  gc_value v = shape == FUZZ_SHAPE_SCAN ? gc_alloc(h->dom, fields + IDENT_SCAN_FIELDS, GC_TAG_SCAN)
                                        : gc_alloc(h->dom, fields + IDENT_RAW_WORDS, GC_TAG_RAW);
  gc_clear_error(h->heap);
  h->cells[dst] = v;
  return v != 0;
}

static void set_ident(fuzz_bheap *h, size_t c, uint64_t id, uint64_t check) {
  gc_value v = cell(h, c);
  if (gc_tag(v) == GC_TAG_RAW) {
    GC_FIELD(v, 0) = (gc_value)id;
    GC_FIELD(v, 1) = (gc_value)check;
    return;
  }
  /* A block allocated since this domain's last safepoint: initialising stores (gc.h). */
  size_t n = gc_wsize(v) - IDENT_SCAN_FIELDS;
  GC_FIELD(v, n) = gc_val_int((intptr_t)(id & UINT32_MAX));
  GC_FIELD(v, n + 1) = gc_val_int((intptr_t)(id >> 32));
  GC_FIELD(v, n + 2) = gc_val_int((intptr_t)(check & UINT32_MAX));
  GC_FIELD(v, n + 3) = gc_val_int((intptr_t)(check >> 32));
}

static int get_ident(fuzz_bheap *h, size_t c, uint64_t *id, uint64_t *check) {
  gc_value v = cell(h, c);
  if (!gc_is_block(v)) return 0;
  if (gc_tag(v) == GC_TAG_RAW) {
    *id = GC_FIELD(v, 0);
    *check = GC_FIELD(v, 1);
    return 1;
  }
  size_t n = gc_wsize(v) - IDENT_SCAN_FIELDS;
  uint64_t w[IDENT_SCAN_FIELDS];
  for (size_t i = 0; i < IDENT_SCAN_FIELDS; i++) {
    w[i] = (uint64_t)gc_int_val(GC_FIELD(v, n + i)) & UINT32_MAX;
  }
  *id = w[0] | w[1] << 32;
  *check = w[2] | w[3] << 32;
  return 1;
}

static void store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  gc_store(h->dom, cell(h, obj), field, cell(h, src));
}

static void store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  gc_store(h->dom, cell(h, obj), field, gc_val_int((intptr_t)value));
}

static fuzz_field_kind load(fuzz_bheap *h, size_t dst, size_t obj, size_t field, int64_t *value) {
  gc_value v = GC_FIELD(cell(h, obj), field);
  h->cells[dst] = 0;
  if (v == 0) return FUZZ_FIELD_EMPTY;
  if (!gc_is_block(v)) {
    *value = gc_int_val(v);
    return FUZZ_FIELD_INT;
  }
  h->cells[dst] = v;
  return FUZZ_FIELD_BLOCK;
}

static void raw_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  GC_FIELD(cell(h, obj), IDENT_RAW_WORDS + word) = (gc_value)value;
}

static uint64_t raw_read(fuzz_bheap *h, size_t obj, size_t word) {
  return GC_FIELD(cell(h, obj), IDENT_RAW_WORDS + word);
}

static void copy(fuzz_bheap *h, size_t dst, size_t src) { h->cells[dst] = h->cells[src]; }
static void clear(fuzz_bheap *h, size_t c) { h->cells[c] = 0; }

static void set_param(fuzz_bheap *h, const char *name, long value) {
  char text[64];
  snprintf(text, sizeof text, "%s=%ld", name, value);
  gc_set_params(h->heap, text);
  gc_clear_error(h->heap);
}

/* A slice with a budget: the heap's mark slice for this call only (as the op language's
 * mark_slice), the program's own put back after it. */
static void collect(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget) {
  if (kind == FUZZ_COLLECT_SLICE && budget > 0) {
    set_param(h, "markslice", (long)budget);
    gc_collect(h->dom, GC_COLLECT_SLICE);
    set_param(h, "markslice", (long)h->markslice_words);
    return;
  }
  static const gc_collect_kind kinds[] = {GC_COLLECT_SLICE, GC_COLLECT_MAJOR, GC_COLLECT_FULL,
                                          GC_COLLECT_START};
  gc_collect(h->dom, kinds[kind]);
}

static size_t run_finalizers(fuzz_bheap *h) { return gc_run_finalizers(h->dom); }

/* tune pN V: the op language's `param` N with the value V names in its table. */
static void tune(fuzz_bheap *h, unsigned param, unsigned value) {
  fuzz_param p = (fuzz_param)param;
  size_t i = value % fuzz_param_value_count(p);
  const char *name = fuzz_param_value_name(p, i);
  char text[64];
  if (name != NULL) {
    snprintf(text, sizeof text, "%s=%s", fuzz_param_name(p), name);
  } else {
    snprintf(text, sizeof text, "%s=%ld", fuzz_param_name(p), fuzz_param_value(p, i));
  }
  if (p == FUZZ_PARAM_MARKSLICE) h->markslice_words = (size_t)fuzz_param_value(p, i);
  gc_set_params(h->heap, text);
  gc_clear_error(h->heap);
}

static void fail_after(fuzz_bheap *h, unsigned n) { set_param(h, "failafter", (long)n); }

static void run_finalizer(gc_heap *heap, gc_value block, void *user) {
  fin_record *f = user;
  fuzz_bheap *h = f->h;
  (void)heap;
  size_t self = h->ncells - 1;
  h->cells[self] = block;
  h->events.finalize(h->events.user, f->token);
  h->cells[self] = 0;
}

static int fin_set(fuzz_bheap *h, size_t c, uint64_t token) {
  if (h->fins == NULL || h->fins->used == FIN_CHUNK) {
    fin_chunk *chunk = calloc(1, sizeof *chunk);
    if (chunk == NULL) return 0;
    chunk->next = h->fins;
    h->fins = chunk;
  }
  fin_record *f = &h->fins->records[h->fins->used++];
  f->h = h;
  f->token = token;
  gc_error e = gc_finalizer_set(h->heap, cell(h, c), run_finalizer, f);
  gc_clear_error(h->heap);
  return e == GC_OK;
}

static int fin_clear(fuzz_bheap *h, size_t c) {
  gc_error e = gc_finalizer_clear(h->heap, cell(h, c));
  gc_clear_error(h->heap);
  return e == GC_OK;
}

static int range_add(fuzz_bheap *h, uintptr_t *words, size_t count) {
  return gc_conservative_add(h->heap, words, count * sizeof *words) == GC_OK;
}

/* A range word keeps a block alive from its header to its last field. */
static int address(fuzz_bheap *h, size_t c, uintptr_t *start, size_t *bsize) {
  gc_value v = cell(h, c);
  if (!gc_is_block(v)) return 0;
  *start = (uintptr_t)v - sizeof(gc_value);
  *bsize = (gc_wsize(v) + 1) * sizeof(gc_value);
  return 1;
}

static size_t live_bytes(fuzz_bheap *h) {
  gc_stats s;
  gc_get_stats(h->heap, &s);
  return (s.pool_live_words + s.large_words) * sizeof(gc_value);
}

/* A new domain, spawned by the running one: born in a blocking section (gc.h), until `on`. */
static int domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || h->doms[d] != NULL) return 0;
  h->doms[d] = gc_domain_spawn(h->dom);
  gc_clear_error(h->heap);
  return h->doms[d] != NULL;
}

static void domain_on(fuzz_bheap *h, unsigned d) {
  if (d == h->on || h->doms[d] == NULL) return;
  gc_enter_blocking(h->dom);
  h->on = d;
  h->dom = h->doms[d];
  gc_leave_blocking(h->dom);
}

/* A domain terminates itself, running (gc.h): the one running now waits meanwhile, and runs
 * again after, or domain 0 if it was d. */
static void domain_end(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || h->doms[d] == NULL) return;
  unsigned back = h->on == d ? 0 : h->on;
  domain_on(h, d);
  gc_domain_terminate(h->dom);
  gc_clear_error(h->heap);
  h->doms[d] = NULL;
  h->on = back;
  h->dom = h->doms[back];
  gc_leave_blocking(h->dom);
}

/* The passes' reports since the last check, as findings (their kinds are invariants/kinds.h's). */
static size_t check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  const gc_verify_reports *r = gc_verify_reports_of(h->verifier);
  size_t n = gc_verify_violations(h->verifier);
  for (size_t i = 0; i < r->count && i < max; i++) {
    const gc_verify_report *rep = &r->items[i];
    snprintf(out[i].kind, sizeof out[i].kind, "%s", gc_verify_kind_name(rep->kind));
    snprintf(out[i].message, sizeof out[i].message, "at %s of cycle %llu: %s (%s; %s)", rep->point,
             (unsigned long long)rep->cycle, rep->what, rep->header_text, rep->where);
  }
  gc_verify_clear(h->verifier);
  return n;
}

const fuzz_backend fuzz_backend_gcfuzz = {
    .name = "gcfuzz",
    .what = "gcfuzz's own collector, every pass of invariants/ but the model as its deep check",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_INCREMENTAL | FUZZ_CAP_FINALIZERS |
            FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_CONSERVATIVE | FUZZ_CAP_FAIL |
            FUZZ_CAP_TUNE | FUZZ_CAP_DEEP_CHECK | FUZZ_CAP_DOMAINS,
    .tunables = tunables,
    .tunable_count = sizeof tunables / sizeof tunables[0],
    /* Each block: a header and four identity words where the model counts two. */
    .leak_slack_factor = 2.0,
    .leak_slack_bytes = 64 * 1024,
    .create = create,
    .destroy = destroy,
    .alloc = alloc,
    .set_ident = set_ident,
    .get_ident = get_ident,
    .store = store,
    .store_int = store_int,
    .load = load,
    .raw_write = raw_write,
    .raw_read = raw_read,
    .copy = copy,
    .clear = clear,
    .collect = collect,
    .run_finalizers = run_finalizers,
    .tune = tune,
    .fail_after = fail_after,
    .fin_set = fin_set,
    .fin_clear = fin_clear,
    .range_add = range_add,
    .address = address,
    .domain_spawn = domain_spawn,
    .domain_on = domain_on,
    .domain_end = domain_end,
    .live_bytes = live_bytes,
    .check = check,
};
