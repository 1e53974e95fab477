/* gcfuzz's own collector as a backend (fuzz/backend/backend.h): every pass of invariants/ but the
 * model (the oracle above is the model here) runs at every hook point of every cycle, and what
 * they report is this backend's deep check.
 *
 * Blocks. A scanned block of N fields is a gc block of N + 4 fields: the identity as four
 * immediates (the id and the check word, 32 bits each: an immediate holds 63, and a word the
 * collector scans must not look like a pointer), then the program's N, so that the block's last
 * field is the program's (a collector that skips a block's last field loses a block the program
 * stored there). A raw block of N words is a GC_TAG_RAW block of N + 2 words, the identity
 * first. A weak reference and an ephemeron are the collector's own (gc_weak_alloc,
 * gc_ephemeron_alloc) with two raw data words after their slots: the identity, as a raw
 * block's. Each bank of cells is one local root frame of its domain (bank 0: the main domain's,
 * pushed at create and popped at destroy; bank d of a threaded heap: pushed when d's thread
 * attaches, popped when d ends), FUZZ_CELL_SELF left out (a finalizer's block must be kept by
 * the collector itself while the finalizer runs).
 *
 * Threads (FUZZ_CAP_THREADS). A heap made with more than one cell bank is threaded: each call
 * acts on the calling thread's domain (gcfuzz_thread_on), and gc/platform.h's points inside the
 * collector are the scheduler's; otherwise one thread moves between the domains (`on`).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/backend/gcfuzz/gcfuzz_heap.h"
#include "fuzz/lang/ops.h"
#include "gc/gc.h"
#include "gc/heap.h" /* the locks and protocol words named for the scheduler */
#include "gc/large.h"
#include "gc/pool.h"
#include "gc/sizeclass.h"
#include "invariants/heapindex.h"
#include "invariants/report.h"
#include "invariants/verify.h"

static const fuzz_tunable tunables[] = {
    {"percent", "pacing: gc_percent from fuzz/lang's table (0, 1, 10, 50, 100, 200, 1000, off)"},
    {"mintrigger", "the least words allocated before a cycle (0 .. 262144)"},
    {"sweep", "the lazy sweep budget in words (1 .. 16384)"},
    {"markstack", "mark stack entries (4: overflows at once .. 65536)"},
    {"batch", "pools mapped at once (1, 2, 4, 16)"},
    {"keep", "empty pools kept (0, 1, 4, 64)"},
    {"marking", "stw or incremental"},
    {"markslice", "the incremental mark slice's least budget in words (1 .. 65536)"},
    {"rechecks", "the incremental termination's recheck limit (0 .. 64)"},
    {"markbuf", "entries a mark work buffer holds (1 .. 512)"},
    {"slicecap", "a slice's budget cap in markslices (1 .. 1024)"},
    {"zeal",
     "zeal modes: none, slice, cycle, overflow, recheck, store, domains, finalizer and "
     "combinations"},
};
/* compact is the one `param` that is not a tunable: a backend compacts through its own op
 * (compact, FUZZ_CAP_COMPACT), whose moves the oracle follows; a `collect full` that compacted
 * would move blocks without telling it. So tunable i is param i, or i + 1 from compact on. */
_Static_assert(sizeof tunables / sizeof tunables[0] == FUZZ_PARAM_COUNT - 1 &&
                   FUZZ_PARAM_COUNT - 1 == FUZZ_TUNABLE_COUNT,
               "one tunable a `param` of the op language but compact, in its order");
static fuzz_param param_of_tunable(unsigned tunable) {
  return (fuzz_param)(tunable < FUZZ_PARAM_COMPACT ? tunable : tunable + 1);
}

_Thread_local unsigned gcfuzz_thread_on;

static fuzz_bheap *create(const fuzz_backend_config *cfg) {
  size_t banks = cfg->cell_banks > 1 ? cfg->cell_banks : 1;
  if (banks > FUZZ_DOMAINS || cfg->cells % banks != 0) {
    fprintf(cfg->out, "gcfuzz backend: %zu cells cannot make %zu banks, one a domain\n", cfg->cells,
            banks);
    return NULL;
  }
  fuzz_bheap *h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  h->threaded = banks > 1;
  gcfuzz_thread_on = 0;
  h->bank_cells = cfg->cells / banks;
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
  /* Ours first: the verifier calls the hook it finds before its passes, so a corruption armed
   * for a mark-done point is planted, checked and repaired before they look (gcfuzz_heap.h). */
  gc_set_hook(h->heap, gcfuzz_hook, h);
  h->verifier = gc_verify_install(h->heap, GC_VERIFY_COLLECT);
  h->dom = h->doms[0] = gc_main_domain(h->heap);
  h->events = cfg->events;
  /* Every cell but FUZZ_CELL_SELF: the block whose finalizer runs is the collector's to keep
   * alive (gc.h), and a collection the finalizer's body starts must find it so by itself. */
  gc_frame_push(h->dom, &h->frames[0], h->cells, h->bank_cells);
  h->pushed[0] = 1;
  return h;
}

static void domain_end(fuzz_bheap *h, unsigned d);

static void domain_unblock(fuzz_bheap *h);

static void destroy(fuzz_bheap *h) {
  domain_unblock(h);
  for (unsigned d = 1; d < FUZZ_DOMAINS; d++) {
    if (h->doms[d] != NULL) domain_end(h, d);
  }
  gc_frame_pop(h->dom, &h->frames[0]);
  gc_verify_uninstall(h->verifier);
  gc_heapindex_free(&h->index);
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
  /* Counted before the call: gc_alloc spends its countdown before anything else, and the
   * collection a failure forces may run finalizers (which must find the count spent). */
  if (h->fin_depth == 0 && h->fail_left > 0) h->fail_left--;
  gc_value v = shape == FUZZ_SHAPE_SCAN
                   ? gc_alloc(gcfuzz_dom(h), fields + IDENT_SCAN_FIELDS, GC_TAG_SCAN)
                   : gc_alloc(gcfuzz_dom(h), fields + IDENT_RAW_WORDS, GC_TAG_RAW);
  gc_clear_error(h->heap);
  h->cells[dst] = v;
  return v != 0;
}

/* Where a block of a raw identity keeps it: a raw block's first words, a weak reference's or an
 * ephemeron's data words; NULL for a scanned block (four immediates). */
static gc_value *raw_ident(gc_value v) {
  switch (gc_tag(v)) {
    case GC_TAG_RAW: return &GC_FIELD(v, 0);
    case GC_TAG_WEAK: return &GC_FIELD(v, GC_WEAK_DATA);
    case GC_TAG_EPHEMERON: return &GC_FIELD(v, GC_EPHE_DATA);
    default: return NULL;
  }
}

static void set_ident(fuzz_bheap *h, size_t c, uint64_t id, uint64_t check) {
  gc_value v = cell(h, c);
  gc_value *raw = raw_ident(v);
  if (raw != NULL) {
    raw[0] = (gc_value)id;
    raw[1] = (gc_value)check;
    return;
  }
  /* A block allocated since this domain's last safepoint: initialising stores (gc.h). */
  GC_FIELD(v, 0) = gc_val_int((intptr_t)(id & UINT32_MAX));
  GC_FIELD(v, 1) = gc_val_int((intptr_t)(id >> 32));
  GC_FIELD(v, 2) = gc_val_int((intptr_t)(check & UINT32_MAX));
  GC_FIELD(v, 3) = gc_val_int((intptr_t)(check >> 32));
}

static int get_ident(fuzz_bheap *h, size_t c, uint64_t *id, uint64_t *check) {
  gc_value v = cell(h, c);
  if (!gc_is_block(v)) return 0;
  const gc_value *raw = raw_ident(v);
  if (raw != NULL) {
    *id = raw[0];
    *check = raw[1];
    return 1;
  }
  uint64_t w[IDENT_SCAN_FIELDS];
  for (size_t i = 0; i < IDENT_SCAN_FIELDS; i++) {
    w[i] = (uint64_t)gc_int_val(GC_FIELD(v, i)) & UINT32_MAX;
  }
  *id = w[0] | w[1] << 32;
  *check = w[2] | w[3] << 32;
  return 1;
}

static void store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  gc_store(gcfuzz_dom(h), cell(h, obj), IDENT_SCAN_FIELDS + field, cell(h, src));
}

static void store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  gc_store(gcfuzz_dom(h), cell(h, obj), IDENT_SCAN_FIELDS + field, gc_val_int((intptr_t)value));
}

static fuzz_field_kind load(fuzz_bheap *h, size_t dst, size_t obj, size_t field, int64_t *value) {
  gc_value v = GC_FIELD(cell(h, obj), IDENT_SCAN_FIELDS + field);
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

/* What a call answered, into cell dst (empty for none); 1 for a block. */
static int into_cell(fuzz_bheap *h, size_t dst, gc_value v) {
  gc_clear_error(h->heap);
  h->cells[dst] = v;
  return v != 0;
}

/* Weak references and ephemerons (backend.h): the collector's, their identity in their data
 * words. An allocation counts toward an injected failure as alloc's does. The collector roots
 * the key, datum and target across the allocation itself (a finalizer it runs may empty their
 * cells: gc/ephemeron.c). */
static int weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  if (h->fin_depth == 0 && h->fail_left > 0) h->fail_left--;
  return into_cell(h, dst, gc_weak_alloc(gcfuzz_dom(h), cell(h, target), IDENT_RAW_WORDS));
}

static int weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  return into_cell(h, dst, gc_weak_get(gcfuzz_dom(h), cell(h, weak)));
}

static int ephe_new(fuzz_bheap *h, size_t dst, size_t key, size_t datum) {
  if (h->fin_depth == 0 && h->fail_left > 0) h->fail_left--;
  return into_cell(
      h, dst, gc_ephemeron_alloc(gcfuzz_dom(h), cell(h, key), cell(h, datum), IDENT_RAW_WORDS));
}

static int ephe_get(fuzz_bheap *h, size_t dst, size_t ephe) {
  return into_cell(h, dst, gc_ephemeron_datum(gcfuzz_dom(h), cell(h, ephe)));
}

/* Sets (FUZZ_CAP_WEAK_SET): the collector's set functions, stores through its write barrier
 * while a cycle marks (gc.h). An ephemeron's key goes first, then its datum: no allocation comes
 * between the two, and a marker that sees the new key with the old datum keeps a block for one
 * cycle more, which the snapshot allows. */
static void weak_set(fuzz_bheap *h, size_t weak, size_t target) {
  gc_weak_set(gcfuzz_dom(h), cell(h, weak), cell(h, target));
  gc_clear_error(h->heap);
}

static void ephe_set(fuzz_bheap *h, size_t ephe, size_t key, size_t datum) {
  gc_ephemeron_set_key(gcfuzz_dom(h), cell(h, ephe), cell(h, key));
  gc_ephemeron_set_datum(gcfuzz_dom(h), cell(h, ephe), cell(h, datum));
  gc_clear_error(h->heap);
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
    gc_collect(gcfuzz_dom(h), GC_COLLECT_SLICE);
    set_param(h, "markslice", (long)h->markslice_words);
    return;
  }
  static const gc_collect_kind kinds[] = {GC_COLLECT_SLICE, GC_COLLECT_MAJOR, GC_COLLECT_FULL,
                                          GC_COLLECT_START};
  gc_collect(gcfuzz_dom(h), kinds[kind]);
}

static size_t run_finalizers(fuzz_bheap *h) { return gc_run_finalizers(gcfuzz_dom(h)); }

/* tune pN V: the op language's `param` of tunable N (param_of_tunable) with the value V names in
 * its table. */
static void tune(fuzz_bheap *h, unsigned param, unsigned value) {
  fuzz_param p = param_of_tunable(param);
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

static void fail_after(fuzz_bheap *h, unsigned n) {
  h->fail_left = n;
  set_param(h, "failafter", (long)n);
}

static void run_finalizer(gc_heap *heap, gc_value block, void *user) {
  fin_record *f = user;
  fuzz_bheap *h = f->h;
  (void)heap;
  size_t self = h->ncells - 1;
  h->cells[self] = block;
  if (h->fin_depth++ == 0 && h->fail_left > 0) set_param(h, "failafter", 0);
  h->events.finalize(h->events.user, f->token);
  if (--h->fin_depth == 0 && h->fail_left > 0) set_param(h, "failafter", (long)h->fail_left);
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

static int ident_of(gc_value v, uint64_t *id, uint64_t *check);

/* compact (backend.h): gc_compact on the calling domain; the hook reports the moves to the
 * caller registered for that domain (gcfuzz_heap.h: moved). */
static int compact(fuzz_bheap *h, void (*moved)(void *user, uint64_t id, uintptr_t start),
                   void *user) {
  unsigned on = gcfuzz_on(h);
  h->moved[on].fn = moved;
  h->moved[on].user = user;
  gc_error err = gc_compact(gcfuzz_dom(h));
  h->moved[on].fn = NULL;
  h->moved[on].user = NULL;
  gc_clear_error(h->heap);
  return err == GC_OK;
}

void gcfuzz_report_moves(fuzz_bheap *h) {
  unsigned on = gcfuzz_on(h); /* the leader's: the thread that called compact */
  if (h->moved[on].fn == NULL) return;
  const gc_compact_move *moves;
  size_t n = gc_compact_moves(h->heap, &moves);
  for (size_t i = 0; i < n; i++) {
    uint64_t id, check;
    if (ident_of(moves[i].to, &id, &check)) {
      /* The start as `address` gives it. */
      h->moved[on].fn(h->moved[on].user, id, (uintptr_t)moves[i].to - sizeof(gc_value));
    }
  }
}

/* The identity of the block at `v` (a block this backend made: scanned or raw), or 0. */
static int ident_of(gc_value v, uint64_t *id, uint64_t *check) {
  size_t n = gc_wsize(v);
  const gc_value *raw = raw_ident(v);
  if (raw != NULL) {
    if (gc_fields(v) + n < raw + IDENT_RAW_WORDS) return 0;
    *id = raw[0];
    *check = raw[1];
    return 1;
  }
  if (gc_tag(v) != GC_TAG_SCAN || n < IDENT_SCAN_FIELDS) return 0;
  uint64_t w[IDENT_SCAN_FIELDS];
  for (size_t i = 0; i < IDENT_SCAN_FIELDS; i++) {
    gc_value f = GC_FIELD(v, i);
    if (gc_is_block(f)) return 0;
    w[i] = (uint64_t)gc_int_val(f) & UINT32_MAX;
  }
  *id = w[0] | w[1] << 32;
  *check = w[2] | w[3] << 32;
  return 1;
}

/* Every block in every pool and every large block the owners (domains, orphans) hold, through
 * the heap index the passes use (invariants/heapindex.h): a slot below its pool's frontier with
 * a non-zero header is a block (INV-POOL-1), swept or not. */
static size_t walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                   void *user) {
  size_t unknown = 0;
  uint64_t id, check;
  if (!gc_heapindex_build(&h->index, h->heap)) return 0; /* out of memory: nothing to say */
  for (size_t i = 0; i < h->index.pool_count; i++) {
    gc_pool *p = (gc_pool *)h->index.pool_list[i].key;
    size_t slot_whsize = gc_wsize_of_class[p->size_class];
    for (gc_header *hp = gc_pool_first_slot(p); hp < p->frontier; hp += slot_whsize) {
      if (*hp == 0) continue; /* free */
      if (ident_of(gc_val_hp(hp), &id, &check)) {
        visit(user, id, check);
      } else {
        unknown++;
      }
    }
  }
  for (size_t i = 0; i < h->index.large_count; i++) {
    if (ident_of((gc_value)h->index.large_list[i].key, &id, &check)) {
      visit(user, id, check);
    } else {
      unknown++;
    }
  }
  return unknown;
}

/* A pool holds a small block (INV-POOL-1); a large block is its own unit, header included. */
static int address_unit(fuzz_bheap *h, size_t c, uintptr_t *start, size_t *bytes) {
  gc_value v = cell(h, c);
  if (!gc_is_block(v)) return 0;
  size_t whsize = gc_wsize(v) + 1;
  if (whsize > GC_SIZECLASS_MAX_WHSIZE) {
    *start = (uintptr_t)v - sizeof(gc_value);
    *bytes = whsize * sizeof(gc_value);
  } else {
    *start = (uintptr_t)v & ~(uintptr_t)(GC_POOL_BSIZE - 1);
    *bytes = GC_POOL_BSIZE;
  }
  return 1;
}

static size_t live_bytes(fuzz_bheap *h) {
  gc_stats s;
  gc_get_stats(h->heap, &s);
  return (s.pool_live_words + s.large_words) * sizeof(gc_value);
}

/* A new domain, spawned by the running one: born in a blocking section (gc.h), until `on` or
 * its thread's attach. */
static int domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || h->doms[d] != NULL) return 0;
  h->doms[d] = gc_domain_spawn(gcfuzz_dom(h));
  gc_clear_error(h->heap);
  return h->doms[d] != NULL;
}

/* One thread: the domain left waits in a blocking section (it is in one already if blocked), d
 * runs unless domain_block left it in one. */
static void domain_on(fuzz_bheap *h, unsigned d) {
  if (h->threaded || d == h->on || h->doms[d] == NULL) return;
  if (!h->blocked[h->on]) gc_enter_blocking(h->dom);
  h->on = d;
  h->dom = h->doms[d];
  if (!h->blocked[d]) gc_leave_blocking(h->dom);
}

/* Domain d, running on the calling thread, terminates itself (gc.h), its bank's frame popped
 * first (the driver emptied the bank: the domain's roots end with it). */
static void terminate_running(fuzz_bheap *h, unsigned d) {
  if (h->pushed[d]) gc_frame_pop(h->doms[d], &h->frames[d]);
  h->pushed[d] = 0;
  gc_domain_terminate(h->doms[d]);
  gc_clear_error(h->heap);
  h->doms[d] = NULL;
  h->blocked[d] = 0;
}

/* One thread: the one running now waits meanwhile (the driver ends domains only from one that
 * runs), and runs again after, or domain 0 if it was d. Threaded: from d's own thread, which it
 * leaves attached to nothing (it may attach again); or, after the threads' run, from the thread
 * on domain 0, as one thread does. */
static void domain_end(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || h->doms[d] == NULL) return;
  if (h->threaded && gcfuzz_thread_on == d) {
    if (h->blocked[d]) gc_leave_blocking(h->doms[d]);
    terminate_running(h, d);
    gcfuzz_thread_on = 0;
    return;
  }
  gc_domain *self = gcfuzz_dom(h);
  unsigned back = gcfuzz_on(h) == d ? 0 : gcfuzz_on(h);
  if (gcfuzz_on(h) != d) {
    gc_enter_blocking(self);
    gc_leave_blocking(h->doms[d]); /* in a blocking section: not running, or blocked */
  } else if (h->blocked[d]) {
    gc_leave_blocking(h->doms[d]);
  }
  terminate_running(h, d);
  if (!h->threaded) {
    h->on = back;
    h->dom = h->doms[back];
  }
  if (!h->blocked[back]) gc_leave_blocking(h->doms[back]);
}

static void domain_block(fuzz_bheap *h) {
  unsigned on = gcfuzz_on(h);
  if (h->blocked[on]) return;
  gc_enter_blocking(gcfuzz_dom(h));
  h->blocked[on] = 1;
}

static void domain_unblock(fuzz_bheap *h) {
  unsigned on = gcfuzz_on(h);
  if (!h->blocked[on]) return;
  gc_leave_blocking(gcfuzz_dom(h));
  h->blocked[on] = 0;
}

/* Threaded: the calling thread takes domain d out of its blocking section (the one it was born
 * in, or its previous thread's detach), and roots d's bank in a frame of d's the first time. */
static int domain_attach(fuzz_bheap *h, unsigned d) {
  if (!h->threaded || d >= FUZZ_DOMAINS || h->doms[d] == NULL) return 0;
  gcfuzz_thread_on = d;
  if (!h->blocked[d]) gc_leave_blocking(h->doms[d]);
  if (!h->pushed[d]) {
    gc_frame_push(h->doms[d], &h->frames[d], h->cells + d * h->bank_cells, h->bank_cells);
    h->pushed[d] = 1;
  }
  return 1;
}

/* The thread leaves its domain parked in a blocking section, its frames still roots; a domain
 * `block` left in one is in one already. */
static void domain_detach(fuzz_bheap *h) {
  if (!h->threaded || h->doms[gcfuzz_thread_on] == NULL) return;
  if (!h->blocked[gcfuzz_thread_on]) gc_enter_blocking(h->doms[gcfuzz_thread_on]);
  gcfuzz_thread_on = 0;
}

static void safepoint(fuzz_bheap *h) {
  unsigned on = gcfuzz_on(h);
  if (h->doms[on] != NULL && !h->blocked[on]) gc_poll(h->doms[on]);
}

/* The collector's locks and protocol words (gc/heap.h), for the printed interleaving; the
 * domains' as they exist when asked. */
static void sched_names(fuzz_bheap *h,
                        void (*name)(void *user, const void *object, const char *what),
                        void *user) {
  static const char *const domains[FUZZ_DOMAINS] = {"domain d0", "domain d1", "domain d2",
                                                    "domain d3"};
  static const char *const states[FUZZ_DOMAINS] = {"d0.state", "d1.state", "d2.state", "d3.state"};
  gc_heap *g = h->heap;
  const struct {
    const void *object;
    const char *what;
  } named[] = {
      {&g->stw_lock, "stw_lock"},
      {&g->pool_lock, "pool_lock"},
      {&g->roots_lock, "roots_lock"},
      {&g->work.lock, "work.lock"},
      {&g->stw_requested, "stw_requested"},
      {&g->barrier, "stw barrier"},
      {&g->domain_count, "domain_count"},
      {&g->work.done, "work.done"},
      {&g->work.idle, "work.idle"},
      {&g->work.full_count, "work.full_count"},
      {&g->work.overflowed, "work.overflowed"},
      {&g->running_finalizers, "running_finalizers"},
      {&g->large_index.stale, "large_index.stale"},
      {&g->free_pools, "free_pools"},
      {&g->marking, "marking"},
      {&g->work.slicing, "work.slicing"},
      {&g->shade_lock, "shade_lock"},
  };
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
    name(user, named[i].object, named[i].what);
  }
  for (unsigned d = 0; d < FUZZ_DOMAINS; d++) {
    if (h->doms[d] == NULL) continue;
    name(user, h->doms[d], domains[d]);
    name(user, &h->doms[d]->state, states[d]);
  }
}

static int pin(fuzz_bheap *h, size_t c) {
  gc_error e = gc_pin(h->heap, cell(h, c));
  gc_clear_error(h->heap);
  return e == GC_OK;
}

static int unpin(fuzz_bheap *h, size_t c) {
  gc_error e = gc_unpin(h->heap, cell(h, c));
  gc_clear_error(h->heap);
  return e == GC_OK;
}

static void limit(fuzz_bheap *h, size_t bytes) { set_param(h, "limit", (long)bytes); }

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

/* The rare events are the collector's own (gc.h, GC_EVENTS), counted by the heap and named as
 * the program targets' census names them, so the two censuses of one collector read alike. */
static const fuzz_rare_event rare_events[GC_EVENT_COUNT] = {
#define RARE_EVENT(name, id, what) {id, what},
    GC_EVENTS(RARE_EVENT)
#undef RARE_EVENT
};
_Static_assert(GC_EVENT_COUNT <= FUZZ_RARE_EVENTS_MAX, "gc.h's events fit the interface's table");

static void rare_counts(fuzz_bheap *h, uint64_t *counts) {
  for (int e = 0; e < GC_EVENT_COUNT; e++) counts[e] = gc_event_count(h->heap, (gc_event)e);
}

const fuzz_backend fuzz_backend_gcfuzz = {
    .name = "gcfuzz",
    .what = "gcfuzz's own collector, every pass of invariants/ but the model as its deep check",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_INCREMENTAL | FUZZ_CAP_FINALIZERS |
            FUZZ_CAP_FIN_ORDERED | FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_CONSERVATIVE |
            FUZZ_CAP_FAIL | FUZZ_CAP_TUNE | FUZZ_CAP_DEEP_CHECK | FUZZ_CAP_DOMAINS |
            FUZZ_CAP_BLOCKING | FUZZ_CAP_THREADS | FUZZ_CAP_PIN | FUZZ_CAP_LIMIT | FUZZ_CAP_WALK |
            FUZZ_CAP_PRECISE | FUZZ_CAP_UNITS | FUZZ_CAP_MISUSE | FUZZ_CAP_CORRUPT | FUZZ_CAP_WEAK |
            FUZZ_CAP_EPHEMERON | FUZZ_CAP_WEAK_SET | FUZZ_CAP_COMPACT,
    .tunables = tunables,
    .tunable_count = sizeof tunables / sizeof tunables[0],
    /* Each block: a header and four identity words where the model counts two; an ephemeron a
     * header, its link, key and datum words and two identity words where it counts two. */
    .leak_slack_factor = 3.0,
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
    .weak_new = weak_new,
    .weak_get = weak_get,
    .ephe_new = ephe_new,
    .ephe_get = ephe_get,
    .weak_set = weak_set,
    .ephe_set = ephe_set,
    .range_add = range_add,
    .address = address,
    .address_unit = address_unit,
    .domain_spawn = domain_spawn,
    .domain_on = domain_on,
    .domain_end = domain_end,
    .domain_block = domain_block,
    .domain_unblock = domain_unblock,
    .domain_attach = domain_attach,
    .domain_detach = domain_detach,
    .safepoint = safepoint,
    .sched_names = sched_names,
    .pin = pin,
    .unpin = unpin,
    .limit = limit,
    .misuse = gcfuzz_misuse,
    .corrupt = gcfuzz_corrupt,
    .compact = compact,
    .walk = walk,
    .live_bytes = live_bytes,
    .check = check,
    .rare_events = rare_events,
    .rare_event_count = GC_EVENT_COUNT,
    .rare_counts = rare_counts,
};
