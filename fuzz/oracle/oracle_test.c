/* The model oracle (run.h) against a reference backend written here: every check of the oracle
 * fires on a collector that makes the one slip it exists for, and none fires on a correct one.
 *
 * The reference backend ("ref") is a precise, non-moving mark-sweep collector over malloc'd
 * blocks: cells are an array of block pointers; a collection marks from the cells through scanned
 * fields and ephemeron data whose key is marked (to a fixpoint), never through weak slots; then
 * every unmarked block with a finalizer set is queued and marked from (resurrected for its
 * finalizer), weak slots and ephemerons whose target or key is unmarked are cleared, and the
 * unmarked blocks are swept onto a free list: their identity words poisoned, their memory reused
 * by later allocations, so a block freed too early reads back as some other block. Memory goes
 * back to malloc only at destroy.
 *
 * `sabotage` switches one slip on: each mode is a mistake a real collector makes, and each has a
 * program below that must make the oracle report exactly its kind first, and run clean without
 * the slip. Then random programs on the honest backend must run clean (no false positives), and
 * the backend's op set must be what its capabilities allow.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/backend/backend.h"
#include "fuzz/lang/ops.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "fuzz/oracle/run.h"

static int passed, failed;

#define EXPECT(cond, ...)                         \
  do {                                            \
    if (cond) {                                   \
      passed++;                                   \
    } else {                                      \
      failed++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

/* ---- The slips ----------------------------------------------------------------------------- */

typedef enum sabotage {
  SAB_NONE,
  SAB_SCAN_SHORT,       /* marking skips the last field of a block: a reachable block is freed */
  SAB_STORE_INT_FIELD,  /* store_int writes the next field (an off-by-one in the index) */
  SAB_FIN_FLAG_KEPT,    /* a finalizer that ran stays set: queued again next cycle */
  SAB_FIN_REACHABLE,    /* every block with a finalizer is queued, marked or not */
  SAB_UNFIN_NOOP,       /* fin_clear says yes but leaves the finalizer set */
  SAB_FIN_NEVER_RUN,    /* run_finalizers runs nothing; the queue only grows */
  SAB_UNFIN_ANSWER,     /* fin_clear answers "none" (tests the wrong state) */
  SAB_WEAK_EARLY,       /* weak slots cleared after marking the roots, before tracing */
  SAB_WEAK_FLAG,        /* a cleared weak reference answers its old target once it lives again */
  SAB_EPHE_AS_WEAK,     /* an ephemeron's datum is not traced through it: dropped, cleared */
  SAB_SWEEP_SKIPS_HEAD, /* the sweep never looks at the newest block */
  SAB_WALK_SKIPS_HEAD,  /* the walk never reports the newest block */
  SAB_BYTES_NOT_FREED,  /* live_bytes never subtracts what the sweep freed */
  SAB_FAIL_IGNORED,     /* fail_after does nothing */
  SAB_WEAK_LATE,        /* weak references cleared only after the finalizers' marking */
  SAB_FAIL_TWICE,       /* fail_after(n) fails the n-th allocation and the one after it */
  SAB_COUNT_NOT_FREED,  /* the sweep forgets the block counter: the deep check sees it */
  SAB_ALLOC_NOTICES,    /* the allocator sees a slip of its own as it happens (events.finding) */
  SAB_PIN_NOT_ROOT,     /* marking forgets the pinned blocks: one held only by its pin is freed */
  SAB_UNPIN_ANSWER,     /* unpin answers "was pinned" for a block that was not */
  SAB_FIN_UNORDERED,    /* the fields of blocks with finalizers are not marked first */
  SAB_COUNT
} sabotage;

static sabotage g_sabotage;

/* ---- The reference backend ----------------------------------------------------------------- */

enum { ROLE_PLAIN, ROLE_WEAK, ROLE_EPHE };
enum { RFIN_NONE, RFIN_SET, RFIN_QUEUED };
#define POISON UINT64_C(0xdeadbeefdeadbeef)

typedef struct rblock {
  struct rblock *next;  /* the live list (newest first) or the free list */
  struct rblock *qnext; /* the finalization queue */
  uint64_t id, check;
  uint64_t token;
  size_t nfields, cap; /* fields (0 for weak and ephemeron blocks); words the memory holds */
  uint8_t shape, role, mark, fin, pinned;
  uint8_t found_dead;   /* queued for finalization by the last collection */
  struct rblock *ghost; /* SAB_WEAK_FLAG: the target a weak reference had before it was cleared */
  struct rblock *a, *b; /* weak: target; ephemeron: key, datum */
  /* Scanned: 0 empty, v << 1 | 1 an integer, else a block's address. Raw: payload words. */
  uint64_t f[];
} rblock;

struct fuzz_bheap {
  rblock **cells;
  size_t ncells; /* cfg.cells + 1: the last is FUZZ_CELL_SELF */
  fuzz_backend_events ev;
  rblock *live, *free_list;
  rblock *queue, *queue_tail;
  size_t nblocks, bytes, freed_bytes;
  unsigned fail_in; /* allocations until the injected failure; 0: none */
  int failed_twice; /* SAB_FAIL_TWICE: the second failure is armed */
  int in_finalizer; /* a finalizer (and its body) runs */
  rblock **stack;
  size_t sp, scap;
};

static size_t bytes_of(const rblock *b) { return (b->nfields + 2) * sizeof(uint64_t); }

static fuzz_bheap *ref_create(const fuzz_backend_config *cfg) {
  fuzz_bheap *h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  h->ncells = cfg->cells + 1;
  h->cells = calloc(h->ncells, sizeof *h->cells);
  if (h->cells == NULL) {
    fprintf(cfg->out, "ref backend: out of memory\n");
    free(h);
    return NULL;
  }
  h->ev = cfg->events;
  return h;
}

static void free_list_of(rblock *b) {
  while (b != NULL) {
    rblock *next = b->next;
    free(b);
    b = next;
  }
}

static void ref_destroy(fuzz_bheap *h) {
  free_list_of(h->live);
  free_list_of(h->free_list);
  free(h->cells);
  free(h->stack);
  free(h);
}

/* A block of n fields, from the free list when one there is big enough. */
static rblock *new_block(fuzz_bheap *h, fuzz_block_shape shape, int role, size_t n) {
  rblock *b = NULL;
  for (rblock **p = &h->free_list; *p != NULL; p = &(*p)->next) {
    if ((*p)->cap >= n) {
      b = *p;
      *p = b->next;
      break;
    }
  }
  if (b == NULL) {
    size_t cap = n > 0 ? n : 1;
    b = malloc(sizeof *b + cap * sizeof(uint64_t));
    if (b == NULL) return NULL;
    b->cap = cap;
  }
  size_t cap = b->cap;
  memset(b, 0, sizeof *b + cap * sizeof(uint64_t));
  b->cap = cap;
  b->nfields = n;
  b->shape = (uint8_t)shape;
  b->role = (uint8_t)role;
  b->next = h->live;
  h->live = b;
  h->nblocks++;
  h->bytes += bytes_of(b);
  return b;
}

/* The injected failure (backend.h, fail_after): alloc, weak_new and ephe_new each make one
 * allocation; this one is refused. */
static int refused(fuzz_bheap *h) {
  if (h->in_finalizer) return 0; /* none made inside a finalizer counts (backend.h) */
  if (h->fail_in > 0 && --h->fail_in == 0) {
    h->fail_in = g_sabotage == SAB_FAIL_TWICE && !h->failed_twice ? 1 : 0;
    h->failed_twice = h->fail_in != 0;
    return 1;
  }
  return 0;
}

static int ref_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  h->cells[dst] = NULL;
  if (refused(h)) return 0;
  rblock *b = new_block(h, shape, ROLE_PLAIN, fields);
  h->cells[dst] = b;
  if (g_sabotage == SAB_ALLOC_NOTICES && h->ev.finding != NULL) {
    /* Reported at once: no deep check follows an allocation, so only the event can say it. */
    fuzz_finding f = {"ref.alloc", "the allocator handed out a block it holds as free"};
    h->ev.finding(h->ev.user, &f);
  }
  return b != NULL;
}

static void ref_set_ident(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check) {
  rblock *b = h->cells[cell];
  if (b == NULL) return;
  b->id = id;
  b->check = check;
}

static int ref_get_ident(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check) {
  rblock *b = h->cells[cell];
  if (b == NULL) return 0;
  *id = b->id;
  *check = b->check;
  return 1;
}

/* The scanned field `field` of the block in `obj`, or NULL when it has none (only ever after a
 * slip: a cell that holds a reused block of another shape). */
static uint64_t *field_at(fuzz_bheap *h, size_t obj, size_t field) {
  rblock *b = h->cells[obj];
  if (b == NULL || b->role != ROLE_PLAIN || field >= b->nfields) return NULL;
  return &b->f[field];
}

static void ref_store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  uint64_t *f = field_at(h, obj, field);
  if (f != NULL) *f = (uint64_t)(uintptr_t)h->cells[src];
}

static void ref_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  if (g_sabotage == SAB_STORE_INT_FIELD && h->cells[obj] != NULL) {
    field = (field + 1) % (h->cells[obj]->nfields ? h->cells[obj]->nfields : 1);
  }
  uint64_t *f = field_at(h, obj, field);
  if (f != NULL) *f = (uint64_t)value << 1 | 1;
}

static fuzz_field_kind ref_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field,
                                int64_t *value) {
  uint64_t *f = field_at(h, obj, field);
  h->cells[dst] = NULL;
  if (f == NULL) return FUZZ_FIELD_OTHER;
  uint64_t v = *f;
  if (v == 0) return FUZZ_FIELD_EMPTY;
  if (v & 1) {
    *value = (int64_t)(v >> 1);
    return FUZZ_FIELD_INT;
  }
  h->cells[dst] = (rblock *)(uintptr_t)v;
  return FUZZ_FIELD_BLOCK;
}

static void ref_raw_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  rblock *b = h->cells[obj];
  if (b != NULL && word < b->nfields) b->f[word] = value;
}

static uint64_t ref_raw_read(fuzz_bheap *h, size_t obj, size_t word) {
  rblock *b = h->cells[obj];
  return b != NULL && word < b->nfields ? b->f[word] : POISON;
}

static void ref_copy(fuzz_bheap *h, size_t dst, size_t src) { h->cells[dst] = h->cells[src]; }
static void ref_clear(fuzz_bheap *h, size_t cell) { h->cells[cell] = NULL; }

/* ---- Collecting ---- */

static void push(fuzz_bheap *h, rblock *b) {
  if (b == NULL || b->mark) return;
  b->mark = 1;
  if (h->sp == h->scap) {
    size_t n = h->scap ? 2 * h->scap : 256;
    rblock **s = realloc(h->stack, n * sizeof *s);
    if (s == NULL) abort();
    h->stack = s;
    h->scap = n;
  }
  h->stack[h->sp++] = b;
}

/* Trace to a fixpoint: scanned fields, ephemeron data whose key is marked. */
static void drain(fuzz_bheap *h) {
  for (;;) {
    while (h->sp > 0) {
      rblock *b = h->stack[--h->sp];
      if (b->role == ROLE_PLAIN && b->shape == FUZZ_SHAPE_SCAN) {
        size_t n = b->nfields;
        if (g_sabotage == SAB_SCAN_SHORT && n > 0) n--;
        for (size_t i = 0; i < n; i++) {
          uint64_t v = b->f[i];
          if (v != 0 && !(v & 1)) push(h, (rblock *)(uintptr_t)v);
        }
      } else if (b->role == ROLE_EPHE && b->a != NULL && b->a->mark &&
                 g_sabotage != SAB_EPHE_AS_WEAK) {
        push(h, b->b);
      }
    }
    if (g_sabotage == SAB_EPHE_AS_WEAK) return;
    for (rblock *b = h->live; b != NULL; b = b->next) {
      if (b->role == ROLE_EPHE && b->mark && b->a != NULL && b->a->mark) push(h, b->b);
    }
    if (h->sp == 0) return;
  }
}

/* Weak references go before the finalizers' marking (values), ephemerons after it (keys): as Lua
 * and every collector with finalizers does (backend.h). */
static void clear_weak_values(fuzz_bheap *h) {
  for (rblock *b = h->live; b != NULL; b = b->next) {
    if (b->role == ROLE_WEAK && b->a != NULL && !b->a->mark) {
      b->ghost = b->a;
      b->a = NULL;
    }
  }
}

static void clear_weak(fuzz_bheap *h) {
  for (rblock *b = h->live; b != NULL; b = b->next) {
    if (b->role == ROLE_WEAK && b->a != NULL && !b->a->mark) b->a = NULL;
    if (b->role == ROLE_EPHE && b->a != NULL && !b->a->mark) b->a = b->b = NULL;
    if (g_sabotage == SAB_EPHE_AS_WEAK && b->role == ROLE_EPHE && b->b != NULL && !b->b->mark) {
      b->b = NULL;
    }
  }
}

static void enqueue(fuzz_bheap *h, rblock *b) {
  b->fin = RFIN_QUEUED;
  b->found_dead = 1;
  b->qnext = NULL;
  if (h->queue_tail != NULL) {
    h->queue_tail->qnext = b;
  } else {
    h->queue = b;
  }
  h->queue_tail = b;
}

static void ref_collect(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget) {
  (void)kind;
  (void)budget;
  for (rblock *b = h->live; b != NULL; b = b->next) b->mark = b->found_dead = 0;
  for (size_t c = 0; c < h->ncells; c++) push(h, h->cells[c]);
  for (rblock *b = h->live; b != NULL && g_sabotage != SAB_PIN_NOT_ROOT; b = b->next) {
    if (b->pinned) push(h, b);
  }
  if (g_sabotage == SAB_WEAK_EARLY) clear_weak(h);
  drain(h);
  if (g_sabotage != SAB_WEAK_LATE) clear_weak_values(h);
  /* Ordered finalization: what a block with a finalizer (set or queued) reaches, itself
   * included, is marked before anything is queued, so it waits for that finalizer. */
  for (rblock *b = h->live; b != NULL && g_sabotage != SAB_FIN_UNORDERED; b = b->next) {
    if ((b->fin == RFIN_SET || b->fin == RFIN_QUEUED) && b->role == ROLE_PLAIN &&
        b->shape == FUZZ_SHAPE_SCAN) {
      for (size_t i = 0; i < b->nfields; i++) {
        uint64_t v = b->f[i];
        if (v != 0 && !(v & 1)) push(h, (rblock *)(uintptr_t)v);
      }
    }
  }
  drain(h);
  /* Finalization: what has a finalizer and is unreachable is queued, and lives for it. */
  for (rblock *b = h->live; b != NULL; b = b->next) {
    if (b->fin == RFIN_SET && (!b->mark || g_sabotage == SAB_FIN_REACHABLE)) enqueue(h, b);
  }
  for (rblock *q = h->queue; q != NULL; q = q->qnext) {
    q->mark = 0; /* pushed again, whether or not marked, so what it reaches is marked too */
    push(h, q);
  }
  drain(h);
  clear_weak(h);
  /* Sweep. */
  rblock **p = &h->live;
  if (g_sabotage == SAB_SWEEP_SKIPS_HEAD && *p != NULL) p = &(*p)->next;
  while (*p != NULL) {
    rblock *b = *p;
    if (b->mark) {
      p = &b->next;
      continue;
    }
    *p = b->next;
    if (g_sabotage != SAB_COUNT_NOT_FREED) h->nblocks--;
    h->bytes -= bytes_of(b);
    h->freed_bytes += bytes_of(b);
    b->id = b->check = POISON;
    b->a = b->b = NULL;
    b->fin = RFIN_NONE;
    memset(b->f, 0, b->cap * sizeof(uint64_t));
    b->next = h->free_list;
    h->free_list = b;
  }
}

static size_t ref_run_finalizers(fuzz_bheap *h) {
  if (g_sabotage == SAB_FIN_NEVER_RUN) return 0;
  size_t n = 0, self = h->ncells - 1;
  while (h->queue != NULL) {
    rblock *b = h->queue;
    h->queue = b->qnext;
    if (h->queue == NULL) h->queue_tail = NULL;
    b->fin = g_sabotage == SAB_FIN_FLAG_KEPT ? RFIN_SET : RFIN_NONE;
    h->cells[self] = b;
    h->in_finalizer = 1;
    h->ev.finalize(h->ev.user, b->token);
    h->in_finalizer = 0;
    h->cells[self] = NULL;
    n++;
  }
  return n;
}

static void ref_fail_after(fuzz_bheap *h, unsigned n) {
  if (g_sabotage == SAB_FAIL_IGNORED) return;
  h->fail_in = n;
}

static int ref_fin_set(fuzz_bheap *h, size_t cell, uint64_t token) {
  rblock *b = h->cells[cell];
  if (b == NULL || b->fin == RFIN_QUEUED) return 0;
  b->fin = RFIN_SET;
  b->token = token;
  return 1;
}

static int ref_fin_clear(fuzz_bheap *h, size_t cell) {
  rblock *b = h->cells[cell];
  if (b == NULL) return 0;
  if (g_sabotage == SAB_UNFIN_ANSWER) {
    int had = b->fin == RFIN_QUEUED; /* the wrong state */
    b->fin = RFIN_NONE;
    return had;
  }
  if (b->fin != RFIN_SET) return 0;
  if (g_sabotage != SAB_UNFIN_NOOP) b->fin = RFIN_NONE;
  return 1;
}

static int ref_weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  rblock *t = h->cells[target];
  h->cells[dst] = NULL;
  if (refused(h)) return 0;
  rblock *w = new_block(h, FUZZ_SHAPE_SCAN, ROLE_WEAK, 0);
  h->cells[dst] = w;
  if (w == NULL) return 0;
  w->a = t;
  return 1;
}

static int ref_weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  rblock *w = h->cells[weak], *t = NULL;
  if (w != NULL && w->role == ROLE_WEAK) t = w->a;
  /* The slip: a cleared reference answers its old target again once that target lives. */
  if (t == NULL && g_sabotage == SAB_WEAK_FLAG && w != NULL && w->role == ROLE_WEAK &&
      w->ghost != NULL && w->ghost->mark && !w->ghost->found_dead) {
    t = w->ghost;
  }
  h->cells[dst] = t;
  return t != NULL;
}

static int ref_ephe_new(fuzz_bheap *h, size_t dst, size_t key, size_t datum) {
  rblock *k = h->cells[key], *d = h->cells[datum];
  h->cells[dst] = NULL;
  if (refused(h)) return 0;
  rblock *e = new_block(h, FUZZ_SHAPE_SCAN, ROLE_EPHE, 0);
  h->cells[dst] = e;
  if (e == NULL) return 0;
  e->a = k;
  e->b = d;
  return 1;
}

static int ref_ephe_get(fuzz_bheap *h, size_t dst, size_t ephe) {
  rblock *e = h->cells[ephe], *d = NULL;
  if (e != NULL && e->role == ROLE_EPHE && e->a != NULL) d = e->b;
  h->cells[dst] = d;
  return d != NULL;
}

static size_t ref_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                       void *user) {
  rblock *b = h->live;
  if (g_sabotage == SAB_WALK_SKIPS_HEAD && b != NULL) b = b->next;
  for (; b != NULL; b = b->next) visit(user, b->id, b->check);
  return 0;
}

static size_t ref_live_bytes(fuzz_bheap *h) {
  return h->bytes + (g_sabotage == SAB_BYTES_NOT_FREED ? h->freed_bytes : 0);
}

static int ref_pin(fuzz_bheap *h, size_t cell) {
  if (h->cells[cell] == NULL) return 0;
  h->cells[cell]->pinned = 1;
  return 1;
}

static int ref_unpin(fuzz_bheap *h, size_t cell) {
  rblock *b = h->cells[cell];
  if (b == NULL) return 0;
  int was = b->pinned || g_sabotage == SAB_UNPIN_ANSWER;
  b->pinned = 0;
  return was;
}

/* The deep check: the block and byte counters against a recount of the live list. */
static size_t ref_check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  size_t n = 0, bytes = 0;
  for (rblock *b = h->live; b != NULL; b = b->next) {
    n++;
    bytes += bytes_of(b);
  }
  if (n == h->nblocks && bytes == h->bytes) return 0;
  if (max > 0) {
    snprintf(out[0].kind, sizeof out[0].kind, "ref.broken");
    snprintf(out[0].message, sizeof out[0].message,
             "the heap counts %zu blocks of %zu bytes; its live list holds %zu of %zu", h->nblocks,
             h->bytes, n, bytes);
  }
  return 1;
}

static const fuzz_backend ref_backend = {
    .name = "ref",
    .what = "the oracle test's reference mark-sweep collector",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_FINALIZERS | FUZZ_CAP_FIN_ORDERED |
            FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_WEAK | FUZZ_CAP_EPHEMERON |
            FUZZ_CAP_PRECISE | FUZZ_CAP_WALK | FUZZ_CAP_FAIL | FUZZ_CAP_DEEP_CHECK | FUZZ_CAP_PIN,
    /* Exact accounting: the model's own bytes, plus room for a block or two left over. */
    .leak_slack_factor = 1.0,
    .leak_slack_bytes = 1024,
    .create = ref_create,
    .destroy = ref_destroy,
    .alloc = ref_alloc,
    .set_ident = ref_set_ident,
    .get_ident = ref_get_ident,
    .store = ref_store,
    .store_int = ref_store_int,
    .load = ref_load,
    .raw_write = ref_raw_write,
    .raw_read = ref_raw_read,
    .copy = ref_copy,
    .clear = ref_clear,
    .collect = ref_collect,
    .run_finalizers = ref_run_finalizers,
    .fail_after = ref_fail_after,
    .fin_set = ref_fin_set,
    .fin_clear = ref_fin_clear,
    .weak_new = ref_weak_new,
    .weak_get = ref_weak_get,
    .ephe_new = ref_ephe_new,
    .ephe_get = ref_ephe_get,
    .pin = ref_pin,
    .unpin = ref_unpin,
    .walk = ref_walk,
    .live_bytes = ref_live_bytes,
    .check = ref_check,
};

/* The same collector with no capability but the walk and precision: a smaller op set. */
static const fuzz_backend ref_min_backend = {
    .name = "ref-min",
    .what = "the reference collector offering only the core ops",
    .caps = FUZZ_CAP_PRECISE | FUZZ_CAP_WALK,
    .leak_slack_factor = 1.0,
    .leak_slack_bytes = 1024,
    .create = ref_create,
    .destroy = ref_destroy,
    .alloc = ref_alloc,
    .set_ident = ref_set_ident,
    .get_ident = ref_get_ident,
    .store = ref_store,
    .store_int = ref_store_int,
    .load = ref_load,
    .raw_write = ref_raw_write,
    .raw_read = ref_raw_read,
    .copy = ref_copy,
    .clear = ref_clear,
    .collect = ref_collect,
    .walk = ref_walk,
    .live_bytes = ref_live_bytes,
};

/* ---- Running ------------------------------------------------------------------------------- */

typedef struct outcome {
  int rc;
  oracle_result res;
  char *text; /* what the oracle printed */
  size_t len;
} outcome;

static void run_bytes(const fuzz_backend *b, const uint8_t *data, size_t size, outcome *o) {
  memset(o, 0, sizeof *o);
  FILE *out = open_memstream(&o->text, &o->len);
  if (out == NULL) abort();
  oracle_options opt = {b, NULL, 0, out, NULL, NULL, 0, NULL};
  o->rc = oracle_run(data, size, &opt, &o->res);
  fclose(out);
}

/* Assemble `text` for backend b's op set; 0 (and a failure counted) when it does not. */
static int assemble(const fuzz_backend *b, const char *name, const char *text, fuzz_buf *bytes) {
  fuzz_text_error err;
  memset(bytes, 0, sizeof *bytes);
  int ok = fuzz_assemble(oracle_opset(b), text, strlen(text), bytes, &err);
  EXPECT(ok, "%s: the program does not assemble: line %zu:%zu: %s", name, err.line, err.column,
         err.message);
  return ok;
}

typedef struct mode_case {
  sabotage mode;
  const char *name;
  const char *kind; /* the oracle's first finding */
  const char *program;
} mode_case;

static const mode_case cases[] = {
    {SAB_SCAN_SHORT, "mark skips a block's last field", "oracle.identity",
     "alloc s0 scan 2\n"
     "alloc s1 scan 1\n"
     "store s0.1 s1\n"
     "drop s1\n"
     "collect major       # s1's block is swept though s0.1 holds it\n"
     "alloc s2 scan 1     # and its memory is reused\n"
     "load s3 s0.1\n"},
    {SAB_STORE_INT_FIELD, "store_int into the next field", "oracle.contents",
     "alloc s0 scan 2\n"
     "store_imm s0.0 7\n"
     "load s1 s0.0\n"},
    {SAB_FIN_FLAG_KEPT, "a finalizer that ran stays set", "oracle.finalizer-twice",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "drop s0\n"
     "collect major\n"
     "collect major\n"},
    {SAB_FIN_REACHABLE, "finalizers queued for reachable blocks", "oracle.finalizer-live",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "collect major\n"},
    {SAB_UNFIN_NOOP, "fin_clear leaves the finalizer set", "oracle.finalizer-unset",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "unfin s0\n"
     "drop s0\n"
     "collect major\n"},
    {SAB_FIN_NEVER_RUN, "queued finalizers never run", "oracle.finalizer-lost",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_UNFIN_ANSWER, "fin_clear answers from the wrong state", "oracle.finalizer-clear",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "unfin s0\n"},
    {SAB_WEAK_EARLY, "weak slots cleared before tracing", "oracle.weak-cleared",
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "store s0.0 s1\n"
     "weak s2 s1\n"
     "drop s1\n"
     "collect major       # s1 lives through s0.0\n"
     "weak_get s3 s2\n"},
    {SAB_WEAK_FLAG, "a cleared weak reference answers again", "oracle.weak-revived",
     "alloc s0 scan 1\n"
     "fin s0 s4           # its finalizer resurrects it into s4\n"
     "weak s1 s0\n"
     "drop s0\n"
     "collect major\n"
     "weak_get s2 s1      # empty: allowed, its finalizer ran\n"
     "collect major\n"
     "weak_get s2 s1      # the block again\n"},
    {SAB_EPHE_AS_WEAK, "ephemeron datum not traced", "oracle.weak-cleared",
     "alloc s0 scan 1     # the key, which lives\n"
     "alloc s1 scan 1     # the datum\n"
     "ephe s2 s0 s1\n"
     "drop s1\n"
     "collect major\n"
     "ephe_get s3 s2\n"},
    {SAB_SWEEP_SKIPS_HEAD, "the sweep skips the newest block", "oracle.not-freed",
     "alloc s0 scan 1\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_WALK_SKIPS_HEAD, "the walk skips the newest block", "oracle.lost",
     "alloc s0 scan 1\n"
     "collect full\n"},
    {SAB_BYTES_NOT_FREED, "live bytes never shrink", "oracle.leak",
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "alloc s0 scan 127\n"
     "drop s0\n"
     "collect full\n"},
    {SAB_WEAK_LATE, "weak references cleared after finalization marking",
     "oracle.weak-after-finalizer",
     "alloc s0 scan 1\n"
     "fin s0 -\n"
     "weak s1 s0\n"
     "drop s0\n"
     "collect major       # s0's finalizer runs; the weak reference should be empty\n"
     "weak_get s2 s1\n"},
    {SAB_FAIL_IGNORED, "fail_after ignored", "oracle.failure-missed",
     "fail 2\n"
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "alloc s2 scan 1\n"},
    {SAB_FAIL_TWICE, "the injected failure fails twice", "oracle.unexpected-failure",
     "fail 2\n"
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "alloc s2 scan 1\n"},
    {SAB_COUNT_NOT_FREED, "the block counter not decremented", "ref.broken",
     "alloc s0 scan 1\n"
     "drop s0\n"
     "collect major\n"},
    {SAB_ALLOC_NOTICES, "the allocator's own finding, reported at once", "ref.alloc",
     "alloc s0 scan 1\n"},
    {SAB_PIN_NOT_ROOT, "pinned blocks not marked", "oracle.lost",
     "alloc s0 scan 1\n"
     "pin s0\n"
     "copy s1 s0\n"
     "drop s0            # held by its pin and s1 only\n"
     "collect full\n"
     "drop s1            # held by its pin only\n"
     "collect full\n"},
    {SAB_FIN_UNORDERED, "finalization not ordered", "oracle.finalizer-order",
     "alloc s0 scan 1\n"
     "alloc s1 scan 1\n"
     "store s0.0 s1      # s0 reaches s1; both have finalizers\n"
     "fin s0 -\n"
     "fin s1 -\n"
     "drop s0\n"
     "drop s1\n"
     "collect full       # s0's finalizer first; s1's only in a later cycle\n"},
    {SAB_UNPIN_ANSWER, "unpin answers for a block never pinned", "oracle.pin",
     "alloc s0 scan 1\n"
     "unpin s0\n"},
};
enum { CASE_COUNT = sizeof cases / sizeof cases[0] };

static void test_mode(const mode_case *c) {
  fuzz_buf bytes;
  if (!assemble(&ref_backend, c->name, c->program, &bytes)) {
    fuzz_buf_free(&bytes);
    return;
  }
  outcome o;
  g_sabotage = c->mode;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  g_sabotage = SAB_NONE;
  char verdict[96];
  snprintf(verdict, sizeof verdict, "GCFUZZ-VERDICT {\"kind\": \"%s\"", c->kind);
  EXPECT(o.rc == 1 && strcmp(o.res.first_kind, c->kind) == 0,
         "sabotage `%s`: expected %s first, got rc %d, %zu violations, first '%s'\n%s", c->name,
         c->kind, o.rc, o.res.violations, o.res.first_kind, o.text);
  EXPECT(o.text != NULL && strstr(o.text, verdict) != NULL,
         "sabotage `%s`: no `%s` line in the output:\n%s", c->name, verdict, o.text);
  printf("  %-44s -> %s at op %ld (%zu violations)\n", c->name, o.res.first_kind, o.res.first_op,
         o.res.violations);
  free(o.text);

  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  EXPECT(o.rc == 0 && o.res.violations == 0,
         "`%s` program without the slip: rc %d, %zu violations, first '%s'\n%s", c->name, o.rc,
         o.res.violations, o.res.first_kind, o.text);
  free(o.text);
  fuzz_buf_free(&bytes);
}

static void test_modes(void) {
  printf("each slip, and the kind the oracle reports first:\n");
  int covered[SAB_COUNT] = {0};
  for (size_t i = 0; i < CASE_COUNT; i++) {
    test_mode(&cases[i]);
    covered[cases[i].mode] = 1;
  }
  for (int m = SAB_NONE + 1; m < SAB_COUNT; m++) {
    EXPECT(covered[m], "sabotage mode %d has no program", m);
  }
  /* Every check the oracle makes is some slip's first finding. */
  static const char *const kinds[] = {
      "oracle.identity",
      "oracle.contents",
      "oracle.finalizer-live",
      "oracle.finalizer-twice",
      "oracle.finalizer-unset",
      "oracle.finalizer-lost",
      "oracle.finalizer-clear",
      "oracle.weak-cleared",
      "oracle.weak-revived",
      "oracle.weak-after-finalizer",
      "oracle.leak",
      "oracle.not-freed",
      "oracle.lost",
      "oracle.failure-missed",
      "oracle.unexpected-failure",
      "ref.broken",
      "ref.alloc",
      "oracle.pin",
      "oracle.finalizer-order",
  };
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    int found = 0;
    for (size_t i = 0; i < CASE_COUNT; i++) found |= strcmp(cases[i].kind, kinds[k]) == 0;
    EXPECT(found, "no case expects %s", kinds[k]);
  }
}

/* ---- Resurrection ------------------------------------------------------------------------- */

/* What a finalizer's resurrection makes reachable again, and what it displaces, judged right:
 * each program's first finding must be `want` ("" for none). The first three were false
 * positives of an earlier oracle (a resurrection over a cell displaced a block the collection
 * had begun with; an ephemeron's key resurrected before its datum's finalizer), the fourth a slip
 * it missed (a finalizer run below a block resurrected in an earlier collection). */
typedef struct resurrection_case {
  sabotage mode;
  const char *name;
  const char *want;
  const char *program;
} resurrection_case;

static const resurrection_case resurrections[] = {
    {SAB_NONE, "resurrection displaces a live block", "",
     "alloc s0 scan 1\n"
     "fin s0 s1           # resurrects into s1\n"
     "alloc s1 scan 1     # reachable while the collection marks\n"
     "drop s0\n"
     "collect full        # s0's block goes back into s1; s1's block stays this cycle\n"
     "collect full        # and goes in the next\n"},
    {SAB_NONE, "resurrection displaces a block with a finalizer", "",
     "alloc s0 scan 1\n"
     "fin s0 s1\n"
     "alloc s1 scan 1\n"
     "fin s1 -\n"
     "drop s0\n"
     "collect full\n"
     "collect full\n"},
    {SAB_NONE, "ephemeron key resurrected before its datum's finalizer", "",
     "alloc s1 scan 1     # the datum, with a finalizer\n"
     "fin s1 -\n"
     "alloc s0 scan 1     # the key: finalized first, resurrected into s5\n"
     "fin s0 s5\n"
     "ephe s2 s0 s1\n"
     "drop s0\n"
     "drop s1\n"
     "collect major\n"},
    {SAB_FIN_REACHABLE, "finalizer-live below a block resurrected earlier", "oracle.finalizer-live",
     "alloc s0 scan 1\n"
     "fin s0 s3           # resurrects into s3\n"
     "drop s0\n"
     "collect full        # its finalizer ran: s3 holds it\n"
     "alloc s1 scan 1\n"
     "store s3.0 s1\n"
     "fin s1 -\n"
     "drop s1             # reachable through s3.0\n"
     "collect major       # the slip runs its finalizer\n"},
};

static void test_resurrections(void) {
  printf("resurrection:\n");
  for (size_t i = 0; i < sizeof resurrections / sizeof resurrections[0]; i++) {
    const resurrection_case *k = &resurrections[i];
    fuzz_buf bytes;
    if (assemble(&ref_backend, k->name, k->program, &bytes)) {
      outcome o;
      g_sabotage = k->mode;
      run_bytes(&ref_backend, bytes.data, bytes.size, &o);
      g_sabotage = SAB_NONE;
      const char *got = o.res.first_kind;
      EXPECT(strcmp(got, k->want) == 0, "`%s`: the oracle reports '%s', not '%s'\n%s", k->name, got,
             k->want, o.text);
      printf("  %-54s -> %s\n", k->name, got[0] ? got : "nothing");
      free(o.text);
    }
    fuzz_buf_free(&bytes);
  }
}

/* Finalizer bodies: their ops run when the finalizer runs, on the program's slots, with the
 * finalized block in `self`; a nested fin_do's body when its own finalizer runs; and a body's
 * finalizer run twice is caught like any other. */
static void test_bodies(void) {
  static const char program[] =
      "alloc s0 scan 2\n"
      "fin_do s0 5         # the body: the next five ops, the nested body's included\n"
      "  self s5           # s0's block, resurrected into s5\n"
      "  alloc s6 scan 2\n"
      "  store s6.0 s5\n"
      "  fin_do s6 1\n"
      "    self s7\n"
      "drop s0\n"
      "collect full        # s0's finalizer: its body runs (4 ops)\n"
      "load s8 s6.0        # the resurrected block, through the body's new one\n"
      "drop s6\n"
      "collect full        # s6's finalizer: the nested body (1 op)\n"
      "load s9 s7.0        # the resurrected block again\n"
      "drop s5\n"
      "drop s7\n"
      "drop s8\n"
      "drop s9\n"
      "collect full        # both blocks unreachable again, their finalizers spent\n";
  fuzz_buf bytes;
  if (!assemble(&ref_backend, "bodies", program, &bytes)) return;
  outcome o;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  EXPECT(o.rc == 0 && o.res.finalizers == 2 && o.res.body_ops == 5,
         "bodies: rc %d, %zu finalizers, %zu body ops (want 0, 2, 5), first '%s'\n%s", o.rc,
         o.res.finalizers, o.res.body_ops, o.res.first_kind, o.text);
  free(o.text);
  g_sabotage = SAB_FIN_FLAG_KEPT;
  run_bytes(&ref_backend, bytes.data, bytes.size, &o);
  g_sabotage = SAB_NONE;
  EXPECT(strcmp(o.res.first_kind, "oracle.finalizer-twice") == 0,
         "bodies with a finalizer that stays set: first '%s', not oracle.finalizer-twice\n%s",
         o.res.first_kind, o.text);
  printf("bodies: %zu body ops run; a kept finalizer flag -> %s\n", (size_t)5, o.res.first_kind);
  free(o.text);
  fuzz_buf_free(&bytes);
}

/* ---- No false positives -------------------------------------------------------------------- */

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t rng(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

enum { RANDOM_PROGRAMS = 400, RANDOM_MAX_BYTES = 768 };

/* The program in data, re-encoded for the honest backend's random runs: every `fin sS sK` made
 * `fin sS -` unless `resurrect` (ORACLE_TEST_RESURRECT=0 leaves resurrection out). */
static size_t prepare_program(const uint8_t *data, size_t size, int resurrect, uint8_t *out,
                              size_t cap) {
  const fuzz_opset *set = oracle_opset(&ref_backend);
  fuzz_decoder dec;
  fuzz_op op;
  size_t n = 0;
  fuzz_decoder_init(&dec, set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    if (op.code == FUZZ_OP_FIN && !resurrect) op.args[1].a = FUZZ_NO_SLOT;
    uint8_t bytes[FUZZ_OP_MAX_BYTES];
    size_t len = fuzz_op_encode(set, &op, bytes);
    if (n + len > cap) break;
    memcpy(out + n, bytes, len);
    n += len;
  }
  return n;
}

/* ORACLE_TEST_PROGRAMS and ORACLE_TEST_SEED (environment) run more, or other, programs. */
static void test_random_clean(void) {
  uint8_t raw[RANDOM_MAX_BYTES], data[RANDOM_MAX_BYTES * 2];
  size_t dirty = 0, total_ops = 0, total_fin = 0, total_checks = 0;
  int programs = RANDOM_PROGRAMS;
  const char *env = getenv("ORACLE_TEST_PROGRAMS");
  if (env != NULL && atoi(env) > 0) programs = atoi(env);
  env = getenv("ORACLE_TEST_SEED");
  if (env != NULL && strtoull(env, NULL, 0) != 0) rng_state = strtoull(env, NULL, 0);
  env = getenv("ORACLE_TEST_RESURRECT");
  int resurrect = env == NULL || atoi(env) != 0;
  for (int i = 0; i < programs; i++) {
    size_t size = 1 + (size_t)(rng() % RANDOM_MAX_BYTES);
    for (size_t j = 0; j < size; j++) raw[j] = (uint8_t)rng();
    size = prepare_program(raw, size, resurrect, data, sizeof data);
    outcome o;
    run_bytes(&ref_backend, data, size, &o);
    total_ops += o.res.ops;
    total_fin += o.res.finalizers;
    total_checks += o.res.checks;
    if (o.rc != 0 || o.res.violations != 0) {
      printf("random program %d: %s at op %ld\n", i, o.res.first_kind, o.res.first_op);
      if (dirty++ < 3) {
        printf("random program %d (%zu bytes) on the honest backend: rc %d, first '%s'\n%s", i,
               size, o.rc, o.res.first_kind, o.text);
        fuzz_print_program(stdout, oracle_opset(&ref_backend), data, size, 1);
      }
    }
    free(o.text);
  }
  EXPECT(dirty == 0, "%zu of %d random programs reported a violation on the honest backend", dirty,
         programs);
  printf(
      "%d random programs on the honest backend: %zu ops, %zu finalizers, %zu checks, %zu "
      "dirty\n",
      programs, total_ops, total_fin, total_checks, dirty);
}

/* ---- The op set ---------------------------------------------------------------------------- */

static int has_op(const fuzz_opset *set, const char *mnemonic) {
  for (size_t i = 0; i < set->count; i++) {
    if (strcmp(fuzz_op_table[set->ops[i]].mnemonic, mnemonic) == 0) return 1;
  }
  return 0;
}

static void test_opset(void) {
  const fuzz_opset *set = oracle_opset(&ref_backend);
  EXPECT(set == oracle_opset(&ref_backend), "oracle_opset is not made once");
  EXPECT(strcmp(set->name, "ref") == 0, "the op set is named '%s'", set->name);
  /* Exactly the ops the capabilities allow, in op-table order. */
  size_t n = 0;
  for (int code = 0; code < FUZZ_OP_COUNT; code++) {
    if (!oracle_op_allowed((fuzz_opcode)code, ref_backend.caps)) continue;
    EXPECT(n < set->count && set->ops[n] == (fuzz_opcode)code, "op set entry %zu is not %s", n,
           fuzz_op_table[code].mnemonic);
    n++;
  }
  EXPECT(n == set->count, "the op set has %zu ops, the capabilities allow %zu", set->count, n);
  static const char *const want[] = {
      "alloc",    "alloc_large", "store",    "store_imm", "load", "drop", "copy",  "push",
      "pop",      "root",        "unroot",   "collect",   "fail", "fin",  "unfin", "weak",
      "weak_get", "ephe",        "ephe_get", "fin_do",    "self", "pin",  "unpin"};
  static const char *const never[] = {
      "range",   "range_int", "range_word", "range_pool", "mark_slice", "tune",
      "param",   "limit",     "misuse",     "spawn",      "on",         "terminate",
      "corrupt", "pct",       "choose",     "block",      "unblock"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    EXPECT(has_op(set, want[i]), "the ref op set lacks %s", want[i]);
  }
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
    EXPECT(!has_op(set, never[i]), "the ref op set has %s", never[i]);
  }
  EXPECT(set->count == sizeof want / sizeof want[0], "the ref op set has %zu ops, not %zu",
         set->count, sizeof want / sizeof want[0]);

  /* The assembler refuses what the set does not have. */
  static const char *const refused[] = {"range r0.0 s0 +0\n", "range_int r0.0 5\n", "tune p0 1\n",
                                        "mark_slice 3\n"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    fuzz_buf bytes = {0};
    fuzz_text_error err;
    int ok = fuzz_assemble(set, refused[i], strlen(refused[i]), &bytes, &err);
    EXPECT(!ok, "the ref op set assembles `%.*s`", (int)strlen(refused[i]) - 1, refused[i]);
    fuzz_buf_free(&bytes);
  }

  /* Fewer capabilities, fewer ops. */
  const fuzz_opset *min = oracle_opset(&ref_min_backend);
  EXPECT(min != set && strcmp(min->name, "ref-min") == 0, "ref-min shares ref's op set");
  static const char *const min_never[] = {"alloc_large", "fail",     "fin",  "unfin",
                                          "weak",        "weak_get", "ephe", "ephe_get",
                                          "range",       "fin_do",   "self", "pin"};
  for (size_t i = 0; i < sizeof min_never / sizeof min_never[0]; i++) {
    EXPECT(!has_op(min, min_never[i]), "the ref-min op set has %s", min_never[i]);
  }
  EXPECT(has_op(min, "alloc") && has_op(min, "collect") && min->count == 11,
         "the ref-min op set has %zu ops, not the 11 core ones", min->count);
  /* A program for the small set runs clean there. */
  fuzz_buf bytes;
  if (assemble(&ref_min_backend, "ref-min",
               "alloc s0 scan 2\nalloc s1 raw 3\nstore s0.0 s1\n"
               "store_imm s1.2 9\ndrop s1\ncollect full\n",
               &bytes)) {
    outcome o;
    run_bytes(&ref_min_backend, bytes.data, bytes.size, &o);
    EXPECT(o.rc == 0 && o.res.violations == 0 && o.res.ops == 6,
           "ref-min program: rc %d, %zu ops, first '%s'\n%s", o.rc, o.res.ops, o.res.first_kind,
           o.text);
    free(o.text);
  }
  fuzz_buf_free(&bytes);
}

int main(void) {
  test_opset();
  test_modes();
  test_resurrections();
  test_bodies();
  test_random_clean();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
