/* The oracle tests' reference backend (ref_backend.h). */
#include "fuzz/oracle/ref_backend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/ops.h" /* FUZZ_DOMAINS */
#include "gc/platform.h"
sabotage ref_sabotage;

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
  /* Domains (ref_threads): which exist, and which are parked (their thread gone, or
   * not yet come: backend.h, domain_attach); cells come in banks of bank_cells, one a domain. */
  size_t bank_cells;
  unsigned char exists[FUZZ_DOMAINS], parked[FUZZ_DOMAINS];
  gc_mutex lock; /* held by a collection: a lock the scheduler sees */
};

/* The domain the calling thread runs: set by domain_on (one thread) and domain_attach. */
static _Thread_local unsigned ref_on;

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
  h->bank_cells = cfg->cell_banks > 1 ? cfg->cells / cfg->cell_banks : cfg->cells;
  h->exists[0] = 1;
  ref_on = 0;
  gc_mutex_init(&h->lock);
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
  gc_mutex_destroy(&h->lock);
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
    h->fail_in = ref_sabotage == SAB_FAIL_TWICE && !h->failed_twice ? 1 : 0;
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
  if (ref_sabotage == SAB_ALLOC_NOTICES && h->ev.finding != NULL) {
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
  if (ref_sabotage == SAB_STORE_INT_FIELD && h->cells[obj] != NULL) {
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
        if (ref_sabotage == SAB_SCAN_SHORT && n > 0) n--;
        for (size_t i = 0; i < n; i++) {
          uint64_t v = b->f[i];
          if (v != 0 && !(v & 1)) push(h, (rblock *)(uintptr_t)v);
        }
      } else if (b->role == ROLE_EPHE && b->a != NULL && b->a->mark &&
                 ref_sabotage != SAB_EPHE_AS_WEAK) {
        push(h, b->b);
      }
    }
    if (ref_sabotage == SAB_EPHE_AS_WEAK) return;
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
    if (ref_sabotage == SAB_EPHE_AS_WEAK && b->role == ROLE_EPHE && b->b != NULL && !b->b->mark) {
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

/* Whether cell c is a root: every cell is (its roots are heap-wide), FUZZ_CELL_SELF too. */
static int is_root(const fuzz_bheap *h, size_t c) {
  size_t bank = c / h->bank_cells;
  if (ref_sabotage == SAB_PARKED_BANK_SKIPPED && c + 1 < h->ncells && bank < FUZZ_DOMAINS &&
      h->parked[bank]) {
    return 0;
  }
  return 1;
}

static void mark_and_sweep(fuzz_bheap *h);

/* A collection passes a scheduling point as it begins and as it ends (another thread's ops
 * land inside it, between two of this thread's steps that change nothing), and holds the heap's
 * lock meanwhile. */
static void ref_collect(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget) {
  (void)kind;
  (void)budget;
  gc_plat_point_reached(GC_PLAT_SAFEPOINT, h);
  gc_mutex_lock(&h->lock);
  mark_and_sweep(h);
  if (!(ref_sabotage == SAB_COLLECT_LOCK_KEPT && ref_on != 0)) gc_mutex_unlock(&h->lock);
  gc_plat_point_reached(GC_PLAT_SAFEPOINT, h);
}

static void mark_and_sweep(fuzz_bheap *h) {
  for (rblock *b = h->live; b != NULL; b = b->next) b->mark = b->found_dead = 0;
  for (size_t c = 0; c < h->ncells; c++) {
    if (is_root(h, c)) push(h, h->cells[c]);
  }
  for (rblock *b = h->live; b != NULL && ref_sabotage != SAB_PIN_NOT_ROOT; b = b->next) {
    if (b->pinned) push(h, b);
  }
  if (ref_sabotage == SAB_WEAK_EARLY) clear_weak(h);
  drain(h);
  if (ref_sabotage != SAB_WEAK_LATE) clear_weak_values(h);
  /* Ordered finalization: what a block with a finalizer (set or queued) reaches, itself
   * included, is marked before anything is queued, so it waits for that finalizer. */
  for (rblock *b = h->live; b != NULL && ref_sabotage != SAB_FIN_UNORDERED; b = b->next) {
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
    if (b->fin == RFIN_SET && (!b->mark || ref_sabotage == SAB_FIN_REACHABLE)) enqueue(h, b);
  }
  for (rblock *q = h->queue; q != NULL; q = q->qnext) {
    q->mark = 0; /* pushed again, whether or not marked, so what it reaches is marked too */
    push(h, q);
  }
  drain(h);
  clear_weak(h);
  /* Sweep. */
  rblock **p = &h->live;
  if (ref_sabotage == SAB_SWEEP_SKIPS_HEAD && *p != NULL) p = &(*p)->next;
  while (*p != NULL) {
    rblock *b = *p;
    if (b->mark) {
      p = &b->next;
      continue;
    }
    *p = b->next;
    if (ref_sabotage != SAB_COUNT_NOT_FREED) h->nblocks--;
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
  if (ref_sabotage == SAB_FIN_NEVER_RUN) return 0;
  size_t n = 0, self = h->ncells - 1;
  while (h->queue != NULL) {
    rblock *b = h->queue;
    h->queue = b->qnext;
    if (h->queue == NULL) h->queue_tail = NULL;
    b->fin = ref_sabotage == SAB_FIN_FLAG_KEPT ? RFIN_SET : RFIN_NONE;
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
  if (ref_sabotage == SAB_FAIL_IGNORED) return;
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
  if (ref_sabotage == SAB_UNFIN_ANSWER) {
    int had = b->fin == RFIN_QUEUED; /* the wrong state */
    b->fin = RFIN_NONE;
    return had;
  }
  if (b->fin != RFIN_SET) return 0;
  if (ref_sabotage != SAB_UNFIN_NOOP) b->fin = RFIN_NONE;
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
  if (t == NULL && ref_sabotage == SAB_WEAK_FLAG && w != NULL && w->role == ROLE_WEAK &&
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

/* Sets: a plain store, the collector stopping the world (SAB_SET_IGNORED: none made). */
static void ref_weak_set(fuzz_bheap *h, size_t weak, size_t target) {
  rblock *w = h->cells[weak];
  if (w == NULL || w->role != ROLE_WEAK || ref_sabotage == SAB_SET_IGNORED) return;
  w->a = h->cells[target];
  w->ghost = NULL;
}

static void ref_ephe_set(fuzz_bheap *h, size_t ephe, size_t key, size_t datum) {
  rblock *e = h->cells[ephe];
  if (e == NULL || e->role != ROLE_EPHE || ref_sabotage == SAB_SET_IGNORED) return;
  e->a = h->cells[key];
  e->b = h->cells[datum];
}

static size_t ref_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                       void *user) {
  rblock *b = h->live;
  if (ref_sabotage == SAB_WALK_SKIPS_HEAD && b != NULL) b = b->next;
  for (; b != NULL; b = b->next) visit(user, b->id, b->check);
  return 0;
}

static size_t ref_live_bytes(fuzz_bheap *h) {
  return h->bytes + (ref_sabotage == SAB_BYTES_NOT_FREED ? h->freed_bytes : 0);
}

static int ref_pin(fuzz_bheap *h, size_t cell) {
  if (h->cells[cell] == NULL) return 0;
  h->cells[cell]->pinned = 1;
  return 1;
}

static int ref_unpin(fuzz_bheap *h, size_t cell) {
  rblock *b = h->cells[cell];
  if (b == NULL) return 0;
  int was = b->pinned || ref_sabotage == SAB_UNPIN_ANSWER;
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

/* ---- The check of the API and of the deep check ---- */

/* pin-null: pinning an empty cell (FUZZ_CELL_SELF, empty outside a finalizer) is refused. */
static fuzz_misuse_answer ref_misuse(fuzz_bheap *h, const char *name, char *what, size_t len) {
  if (strcmp(name, "pin-null") != 0) return FUZZ_ANSWER_NOT_MINE;
  int pinned = ref_sabotage == SAB_MISUSE_ACCEPTED || ref_pin(h, h->ncells - 1);
  if (!pinned) return FUZZ_ANSWER_REFUSED;
  snprintf(what, len, "pinning an empty cell succeeded");
  return FUZZ_ANSWER_WRONG;
}

/* swept.stat-mismatch, as this collector has it: the byte counter off by 8 (N + 1) bytes, which
 * the deep check's recount sees. */
static fuzz_plant_result ref_corrupt(fuzz_bheap *h, const char *name, size_t cell, unsigned n,
                                     fuzz_finding *found) {
  (void)cell;
  if (strcmp(name, "swept.stat-mismatch") != 0) return FUZZ_PLANT_NONE;
  if (ref_check(h, found, 1) > 0) return FUZZ_PLANT_FOUND;
  size_t *counter = ref_sabotage == SAB_CORRUPT_UNSEEN ? &h->freed_bytes : &h->bytes;
  size_t was = *counter;
  *counter += 8 * ((size_t)n + 1);
  if (ref_check(h, found, 1) == 0) {
    *counter = was;
    snprintf(found->kind, sizeof found->kind, "ref.broken");
    snprintf(found->message, sizeof found->message, "a byte counter off by %zu: no report",
             8 * ((size_t)n + 1));
    return FUZZ_PLANT_MISSED;
  }
  if (ref_sabotage != SAB_CORRUPT_KEPT) *counter = was;
  return ref_check(h, found, 1) > 0 ? FUZZ_PLANT_UNREPAIRED : FUZZ_PLANT_CAUGHT;
}

/* ---- Domains ---- */

static int ref_domain_spawn(fuzz_bheap *h, unsigned d) {
  if (d == 0 || d >= FUZZ_DOMAINS || h->exists[d]) return 0;
  h->exists[d] = 1;
  h->parked[d] = 1; /* until its thread attaches */
  return 1;
}

static void ref_domain_on(fuzz_bheap *h, unsigned d) {
  if (h->exists[d]) ref_on = d;
}

static void ref_domain_end(fuzz_bheap *h, unsigned d) {
  h->exists[d] = 0;
  h->parked[d] = 0;
  if (ref_on == d) ref_on = 0;
}

static void ref_domain_block(fuzz_bheap *h) { (void)h; }
static void ref_domain_unblock(fuzz_bheap *h) { (void)h; }

static int ref_domain_attach(fuzz_bheap *h, unsigned d) {
  if (d >= FUZZ_DOMAINS || !h->exists[d]) return 0;
  ref_on = d;
  h->parked[d] = 0;
  return 1;
}

static void ref_domain_detach(fuzz_bheap *h) {
  h->parked[ref_on] = 1;
  ref_on = 0;
}

const fuzz_backend ref_backend = {
    .name = "ref",
    .what = "the oracle test's reference mark-sweep collector",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_FINALIZERS | FUZZ_CAP_FIN_ORDERED |
            FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_WEAK | FUZZ_CAP_EPHEMERON |
            FUZZ_CAP_WEAK_SET | FUZZ_CAP_PRECISE | FUZZ_CAP_WALK | FUZZ_CAP_FAIL |
            FUZZ_CAP_DEEP_CHECK | FUZZ_CAP_PIN | FUZZ_CAP_MISUSE | FUZZ_CAP_CORRUPT,
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
    .weak_set = ref_weak_set,
    .ephe_set = ref_ephe_set,
    .pin = ref_pin,
    .unpin = ref_unpin,
    .misuse = ref_misuse,
    .corrupt = ref_corrupt,
    .walk = ref_walk,
    .live_bytes = ref_live_bytes,
    .check = ref_check,
};

/* The same collector with no capability but the walk and precision: a smaller op set, and none
 * of the optional calls (the oracle calls run_finalizers whenever a backend has it). */
const fuzz_backend *ref_min(void) {
  static fuzz_backend table;
  if (table.name == NULL) {
    table = (fuzz_backend){
        .name = "ref-min",
        .what = "the reference collector offering only the core ops",
        .caps = FUZZ_CAP_PRECISE | FUZZ_CAP_WALK,
        .leak_slack_factor = ref_backend.leak_slack_factor,
        .leak_slack_bytes = ref_backend.leak_slack_bytes,
        .create = ref_backend.create,
        .destroy = ref_backend.destroy,
        .alloc = ref_backend.alloc,
        .set_ident = ref_backend.set_ident,
        .get_ident = ref_backend.get_ident,
        .store = ref_backend.store,
        .store_int = ref_backend.store_int,
        .load = ref_backend.load,
        .raw_write = ref_backend.raw_write,
        .raw_read = ref_backend.raw_read,
        .copy = ref_backend.copy,
        .clear = ref_backend.clear,
        .collect = ref_backend.collect,
        .walk = ref_backend.walk,
        .live_bytes = ref_backend.live_bytes,
    };
  }
  return &table;
}

/* The full collector, its domains on threads of their own: ref_backend's table and the domain
 * calls, made once. */
const fuzz_backend *ref_threads(void) {
  static fuzz_backend table;
  if (table.name == NULL) {
    table = ref_backend;
    table.what = "the reference collector, one thread a domain";
    table.caps = (ref_backend.caps & ~(unsigned)FUZZ_CAP_FAIL) | FUZZ_CAP_DOMAINS |
                 FUZZ_CAP_BLOCKING | FUZZ_CAP_THREADS;
    table.domain_spawn = ref_domain_spawn;
    table.domain_on = ref_domain_on;
    table.domain_end = ref_domain_end;
    table.domain_block = ref_domain_block;
    table.domain_unblock = ref_domain_unblock;
    table.domain_attach = ref_domain_attach;
    table.domain_detach = ref_domain_detach;
  }
  return &table;
}
