/* The bdwgc backend: Boehm-Demers-Weiser's conservative collector (Debian's libgc 8.2.2, built
 * from source by third_party/debian/libgc.BUILD) behind the harness's backend interface.
 *
 * bdwgc's heap is the process's: one backend heap at a time, GC_INIT once per process, and every
 * setting the tunables touch reset at create. Incremental mode cannot be turned off again once on,
 * so it is chosen per process by the create parameters (mode=incremental, the default, or
 * mode=stop), never by an op: an op that flipped it would change every later input's heap.
 *
 * Layout. A scanned block starts with its fields, so whatever bdwgc leaves in a fresh object's
 * first words (a free-list link it failed to clear) reads back as a field the driver never
 * stored; its identity follows, found through the registry (below), which knows every block's
 * size:
 *   scan, N fields  GC_MALLOC((N + 2) words)         fields 0..N-1, id, check
 *   raw, N words    GC_MALLOC_ATOMIC((N + 2) words)  id, check, payload 0..N-1 (zeroed here)
 *   weak ref        GC_MALLOC_ATOMIC(3 words)         id, check, the hidden target (the link)
 * A field is NULL (empty), an odd word 2V+1 (the integer V: never an aligned block's address,
 * though bdwgc with interior pointers may keep a block alive through one; it is conservative),
 * or the address of a block.
 *
 * The registry. bdwgc has no "allocated" bit an outsider can read: an unmarked object is either
 * garbage awaiting the lazy sweep, on a free list, or allocated since the last cycle. So the
 * backend keeps its own table of the blocks it allocated, and asks the collector's own verdict
 * about each through a long link (GC_register_long_link): bdwgc clears the link at the end of the
 * cycle that finds the block unreachable (after finalization marking, so a block kept for a
 * finalizer still counts as held), and hands out its memory only after that. The registry gives
 * the walk (the blocks whose link is set), live_bytes (their GC_size) and the deep check its
 * strongest test: a block the driver can reach whose link is cleared is a block bdwgc decided was
 * garbage while it was reachable (INV-BACKEND-1), found at the first check after the faulty cycle,
 * before its memory is reused. The links live in malloc'd chunks bdwgc never scans, hidden, and
 * never move.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/backend/backend.h"
#include "gc.h"

enum {
  IDENT_WORDS = 2,           /* id, check */
  WEAK_SLOT = 2,             /* the word of a weak reference that holds its hidden target */
  WEAK_WORDS = 3,            /* id, check, hidden target */
  MAX_FIELDS = 1151,         /* the interface's largest block */
  MAX_RANGES = 64,           /* bdwgc's root set table is finite (MAX_ROOT_SETS); stay far below */
  PENDING_MAX = 8,           /* findings noticed outside check, reported by the next check */
  CHUNK_ENTRIES = 1024,      /* registry entries per chunk (chunks never move: links live there) */
  NEVER_MS = 999998,         /* a time limit the clock never reaches: GC_TIME_UNLIMITED - 1 */
  MAX_HEAP_STEP = 128 << 10, /* tune max_heap: V * 128 KiB, 0 unbounded */
  INFLIGHT_MAX = 8,          /* root slots for blocks being made, one per nested allocating op */
};

typedef enum block_shape { SHAPE_SCAN, SHAPE_RAW, SHAPE_WEAK } block_shape;
typedef enum fin_order { FIN_ORDERED, FIN_UNORDERED, FIN_IGNORE_SELF } fin_order;

/* ---- The registry ---------------------------------------------------------------------------- */

/* INV-BDWGC-1: an entry with key != 0 names a block this heap allocated (GC_HIDE_POINTER of its
 * base) and is in the hash; its long link is registered with bdwgc exactly while link != 0, and
 * bdwgc clears link (and drops the registration) when a cycle finds the block unreachable. An
 * entry with key == 0 is on the free list. */
typedef struct block_entry {
  GC_hidden_pointer link; /* the long link: the hidden block, 0 once bdwgc found it unreachable */
  GC_hidden_pointer key;  /* the hidden block, kept after link clears; 0: a free entry */
  uint32_t words;         /* requested size in words, identity included */
  uint32_t seen;          /* the check's visit epoch */
  uint8_t shape;          /* block_shape */
  uint8_t has_fin;        /* fin_set gave it a finalizer that has neither run nor been cleared */
} block_entry;

typedef struct registry {
  block_entry **chunks; /* chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES] */
  size_t chunk_count;
  size_t entries; /* entries ever handed out (free ones included) */
  uint32_t *free; /* indices of free entries */
  size_t free_count;
  uint32_t *slots;     /* open addressing by block address: entry index + 1, 0 empty */
  size_t slot_count;   /* a power of two, at least twice the keys */
  size_t keys;         /* entries in the hash */
  GC_word swept_gc_no; /* GC_get_gc_no() at the last sweep: links clear only in collections */
} registry;

/* ---- The heap -------------------------------------------------------------------------------- */

struct fuzz_bheap {
  fuzz_backend_config cfg;
  void **cells;    /* the driver's cfg.cells, FUZZ_CELL_SELF, then INFLIGHT_MAX slots: a GC root */
  size_t root_len; /* words in that root range */
  size_t depth;    /* allocating ops under way (a finalizer they run may call another) */
  fin_order fin;
  bool weak_long; /* weak refs by long links (kept while a finalizer can reach) */
  bool incremental;
  bool dying; /* destroy is under way: finalizers run now do nothing */
  uintptr_t *ranges[MAX_RANGES];
  size_t range_words[MAX_RANGES];
  size_t range_count;
  unsigned auto_steps; /* tune pause_steps: mark steps an op's stopped mark may take */
  registry reg;
  uint32_t epoch; /* the check's current visit mark */
  fuzz_finding pending[PENDING_MAX];
  size_t pending_count; /* all noticed; the first PENDING_MAX kept */
};

static fuzz_bheap *current; /* bdwgc's heap is the process's: at most one backend heap */

static void note(fuzz_bheap *h, const char *kind, const char *fmt, const void *p) {
  if (h->pending_count < PENDING_MAX) {
    fuzz_finding *f = &h->pending[h->pending_count];
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    snprintf(f->message, sizeof f->message, fmt, p);
  }
  h->pending_count++;
}

static block_entry *entry_at(registry *r, uint32_t i) {
  return &r->chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
}

static size_t slot_of(const registry *r, GC_hidden_pointer key) {
  uint64_t x = (uint64_t)key * 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 20) & (r->slot_count - 1);
}

/* The entry of the block at p (whatever its link says), or NULL. */
static block_entry *registry_find(registry *r, const void *p) {
  if (r->slot_count == 0) return NULL;
  GC_hidden_pointer key = GC_HIDE_POINTER(p);
  for (size_t s = slot_of(r, key);; s = (s + 1) & (r->slot_count - 1)) {
    if (r->slots[s] == 0) return NULL;
    block_entry *e = entry_at(r, r->slots[s] - 1);
    if (e->key == key) return e;
  }
}

static void slot_insert(registry *r, uint32_t index) {
  GC_hidden_pointer key = entry_at(r, index)->key;
  size_t s = slot_of(r, key);
  while (r->slots[s] != 0) s = (s + 1) & (r->slot_count - 1);
  r->slots[s] = index + 1;
}

/* Remove by backward shift, so lookups need no tombstones. */
static void slot_remove(registry *r, GC_hidden_pointer key) {
  size_t mask = r->slot_count - 1, s = slot_of(r, key);
  while (entry_at(r, r->slots[s] - 1)->key != key) s = (s + 1) & mask;
  for (size_t next = (s + 1) & mask; r->slots[next] != 0; next = (next + 1) & mask) {
    size_t home = slot_of(r, entry_at(r, r->slots[next] - 1)->key);
    /* The entry at next may move to the hole at s when its home is not in (s, next]. */
    bool between = s <= next ? (s < home && home <= next) : (s < home || home <= next);
    if (!between) {
      r->slots[s] = r->slots[next];
      s = next;
    }
  }
  r->slots[s] = 0;
  r->keys--;
}

static bool registry_grow_slots(registry *r) {
  size_t count = r->slot_count ? r->slot_count * 2 : 1024;
  uint32_t *old = r->slots;
  size_t old_count = r->slot_count;
  r->slots = calloc(count, sizeof *r->slots);
  if (r->slots == NULL) {
    r->slots = old;
    return false;
  }
  r->slot_count = count;
  for (size_t s = 0; s < old_count; s++)
    if (old[s] != 0) slot_insert(r, old[s] - 1);
  free(old);
  return true;
}

/* Entries whose link bdwgc cleared go back to the free list; nothing to do when no collection
 * has ended since the last sweep. */
static void registry_sweep(registry *r) {
  GC_word gc_no = GC_get_gc_no();
  if (gc_no == r->swept_gc_no) return;
  r->swept_gc_no = gc_no;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = entry_at(r, i);
    if (e->key == 0 || e->link != 0) continue;
    slot_remove(r, e->key);
    e->key = 0;
    r->free[r->free_count++] = i;
  }
}

/* A fresh entry index (links not yet registered), or false when out of memory. */
static bool registry_take(registry *r, uint32_t *index) {
  if (r->free_count == 0) registry_sweep(r);
  if (r->free_count > 0) {
    *index = r->free[--r->free_count];
    return true;
  }
  if (r->entries % CHUNK_ENTRIES == 0) {
    size_t chunk = r->entries / CHUNK_ENTRIES;
    block_entry **chunks = realloc(r->chunks, (chunk + 1) * sizeof *chunks);
    if (chunks == NULL) return false;
    r->chunks = chunks;
    uint32_t *free_list = realloc(r->free, (chunk + 1) * CHUNK_ENTRIES * sizeof *free_list);
    if (free_list == NULL) return false;
    r->free = free_list;
    chunks[chunk] = calloc(CHUNK_ENTRIES, sizeof **chunks);
    if (chunks[chunk] == NULL) return false;
    r->chunk_count = chunk + 1;
  }
  *index = (uint32_t)r->entries++;
  return true;
}

/* Enter the block at p, just allocated, and register its long link. A block already in the
 * registry at p whose link bdwgc has not cleared is memory bdwgc handed out again while it still
 * held the old block: a finding. Returns false when out of memory (the block is not entered). */
static bool registry_add(fuzz_bheap *h, void *p, uint32_t words, block_shape shape) {
  registry *r = &h->reg;
  block_entry *e = registry_find(r, p);
  if (e != NULL) {
    if (e->link != 0) {
      note(h, "bdwgc.reused-live",
           "bdwgc allocated %p again while the block there still had its long link: the collector "
           "never found the old block unreachable, yet reused its memory",
           p);
      GC_unregister_long_link((void **)&e->link);
    }
  } else {
    if ((r->keys + 1) * 2 > r->slot_count && !registry_grow_slots(r)) return false;
    uint32_t index;
    if (!registry_take(r, &index)) return false;
    e = entry_at(r, index);
    e->key = GC_HIDE_POINTER(p);
    slot_insert(r, index);
    r->keys++;
  }
  e->words = words;
  e->shape = (uint8_t)shape;
  e->has_fin = 0;
  e->seen = 0;
  e->link = GC_HIDE_POINTER(p);
  int rc = GC_register_long_link((void **)&e->link, p);
  if (rc == GC_DUPLICATE) /* bdwgc re-aimed the registration it still had at p: keep it */
    note(h, "bdwgc.link-duplicate",
         "GC_register_long_link on the registry entry of %p said the link was already registered, "
         "after bdwgc had cleared it",
         p);
  if (rc == GC_SUCCESS || rc == GC_DUPLICATE) return true;
  e->link = 0; /* out of memory: not registered, swept with the dead */
  return false;
}

static void registry_free(registry *r) {
  for (size_t c = 0; c < r->chunk_count; c++) free(r->chunks[c]);
  free(r->chunks);
  free(r->free);
  free(r->slots);
  memset(r, 0, sizeof *r);
}

/* ---- Process-wide setup ---------------------------------------------------------------------- */

/* bdwgc's settings as GC_INIT left them, restored at every create. */
static struct {
  GC_word free_space_divisor, max_retries;
  int full_freq, rate, dont_expand;
} defaults;

/* The stop function bdwgc polls between mark steps of a stopped mark (GC_set_stop_func): a
 * countdown, so an increment's length is a number of steps, never a time. steps_left is
 * SIZE_MAX (never stop) outside the ops that allow it. */
static size_t steps_left = SIZE_MAX;

static int GC_CALLBACK stop_poll(void) {
  if (steps_left == SIZE_MAX) return 0;
  if (steps_left == 0) return 1;
  steps_left--;
  return 0;
}

/* A failed GC_ASSERT (GC_ASSERTIONS) or any other bdwgc abort: the verdict line first, so the
 * harness keys the crash on it, then bdwgc's message. Plain write(2): nothing allocated. */
static void GC_CALLBACK on_abort(const char *msg) {
  char line[512];
  const char *kind =
      msg != NULL && strstr(msg, "ssertion") != NULL ? "bdwgc.assert" : "bdwgc.abort";
  int n = snprintf(line, sizeof line,
                   "GCFUZZ-VERDICT {\"kind\": \"%s\", \"pass\": \"bdwgc\", \"point\": \"op\", "
                   "\"op\": -1, \"cycle\": -1}\nbdwgc: %s\n",
                   kind, msg != NULL ? msg : "fatal error, exiting");
  if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Warnings ("Repeated allocation of very large block", "Finalization cycle") are bdwgc telling
 * a program about its own behaviour; under a fuzzer they are noise. */
static void GC_CALLBACK ignore_warning(char *msg, GC_word arg) {
  (void)msg;
  (void)arg;
}

static void GC_CALLBACK never_runs(void *obj, void *cd) {
  (void)obj;
  (void)cd;
}

static void process_init(void) {
  static bool done;
  if (done) return;
  done = true;
  GC_set_abort_func(on_abort);
  GC_set_warn_proc(ignore_warning);
  /* No static data roots: the harness keeps no heap pointer outside the cells and ranges, which
   * are registered, and bdwgc pushes its own tables itself (GC_push_finalizer_structures...).
   * Scanning the program's data (under ASan some 10 MiB of the runtime's) on every collection
   * cost 19 times the executions (85 against 1,627 a second) and kept dead blocks alive. */
  GC_set_no_dls(1);
  GC_INIT();
  GC_clear_roots();
  GC_set_finalize_on_demand(1);
  GC_set_stop_func(stop_poll);
  defaults.free_space_divisor = GC_get_free_space_divisor();
  defaults.max_retries = GC_get_max_retries();
  defaults.full_freq = GC_get_full_freq();
  defaults.rate = GC_get_rate();
  defaults.dont_expand = GC_get_dont_expand();
  /* bdwgc aborts when the first allocation of a finalization hash table fails ("Insufficient space
   * for initial table allocation"), which a small max_heap would make a false crash: make all
   * three tables now, while the heap is empty. */
  void **probe = GC_MALLOC(2 * sizeof(void *));
  if (probe != NULL) {
    GC_finalization_proc ofn;
    void *ocd;
    probe[0] = probe;
    GC_register_finalizer(probe, never_runs, NULL, &ofn, &ocd);
    GC_register_finalizer(probe, 0, NULL, &ofn, &ocd);
    if (GC_general_register_disappearing_link(&probe[0], probe) == GC_SUCCESS)
      GC_unregister_disappearing_link(&probe[0]);
    if (GC_register_long_link(&probe[1], probe) == GC_SUCCESS) GC_unregister_long_link(&probe[1]);
  }
}

static void reset_settings(fuzz_bheap *h) {
  GC_set_free_space_divisor(defaults.free_space_divisor);
  GC_set_max_retries(defaults.max_retries);
  GC_set_full_freq(defaults.full_freq);
  GC_set_rate(defaults.rate);
  GC_set_dont_expand(defaults.dont_expand);
  GC_set_max_heap_size(0);
  /* A finite limit makes bdwgc poll the stop function (and do a little marking on allocation's
   * slow path); one the clock never reaches leaves the polls as the only limit. */
  GC_set_time_limit(h->incremental ? NEVER_MS : GC_TIME_UNLIMITED);
  h->auto_steps = 0;
  steps_left = SIZE_MAX;
}

/* ---- Create and destroy ---------------------------------------------------------------------- */

static bool parse_params(fuzz_bheap *h, const char *params, FILE *out) {
  h->incremental = true;
  h->fin = FIN_ORDERED;
  h->weak_long = false;
  if (params == NULL) return true;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", params);
  for (char *save = NULL, *tok = strtok_r(buf, " ,", &save); tok != NULL;
       tok = strtok_r(NULL, " ,", &save)) {
    if (strcmp(tok, "mode=incremental") == 0)
      h->incremental = true;
    else if (strcmp(tok, "mode=stop") == 0)
      h->incremental = false;
    else if (strcmp(tok, "fin=ordered") == 0)
      h->fin = FIN_ORDERED;
    else if (strcmp(tok, "fin=unordered") == 0)
      h->fin = FIN_UNORDERED;
    else if (strcmp(tok, "fin=ignore_self") == 0)
      h->fin = FIN_IGNORE_SELF;
    else if (strcmp(tok, "weak=short") == 0)
      h->weak_long = false;
    else if (strcmp(tok, "weak=long") == 0)
      h->weak_long = true;
    else {
      fprintf(out,
              "bdwgc: unknown parameter '%s' (mode=incremental|stop, "
              "fin=ordered|unordered|ignore_self, weak=short|long)\n",
              tok);
      return false;
    }
  }
  return true;
}

static fuzz_bheap *bdwgc_create(const fuzz_backend_config *cfg) {
  if (current != NULL) {
    fprintf(cfg->out, "bdwgc: one heap per process (bdwgc's heap is the process's)\n");
    return NULL;
  }
  fuzz_bheap *h = calloc(1, sizeof *h);
  if (h == NULL) {
    fprintf(cfg->out, "bdwgc: out of memory\n");
    return NULL;
  }
  h->cfg = *cfg;
  if (!parse_params(h, cfg->params, cfg->out)) {
    free(h);
    return NULL;
  }
  process_init();
  if (h->incremental && !GC_is_incremental_mode()) GC_enable_incremental();
  if (h->incremental != (GC_is_incremental_mode() != 0)) {
    fprintf(cfg->out, h->incremental
                          ? "bdwgc: incremental mode could not be enabled\n"
                          : "bdwgc: mode=stop after an incremental heap in this process (bdwgc "
                            "cannot turn incremental mode off)\n");
    free(h);
    return NULL;
  }
  h->root_len = cfg->cells + 1 + INFLIGHT_MAX;
  h->cells = calloc(h->root_len, sizeof *h->cells);
  if (h->cells == NULL) {
    fprintf(cfg->out, "bdwgc: out of memory for %zu cells\n", cfg->cells);
    free(h);
    return NULL;
  }
  GC_add_roots(h->cells, h->cells + h->root_len);
  reset_settings(h);
  current = h;
  return h;
}

/* Nothing of this heap may outlive it in bdwgc: a block the stack keeps alive conservatively must
 * not run this heap's finalizer in the next one, nor bdwgc clear a link in freed memory. */
static void bdwgc_destroy(fuzz_bheap *h) {
  registry *r = &h->reg;
  h->dying = true;
  steps_left = SIZE_MAX;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = entry_at(r, i);
    if (e->key == 0 || e->link == 0) continue;
    void *p = GC_REVEAL_POINTER(e->key);
    if (e->has_fin) {
      GC_finalization_proc ofn;
      void *ocd;
      GC_register_finalizer(p, 0, NULL, &ofn, &ocd);
    }
    if (e->shape == SHAPE_WEAK) {
      void **slot = (void **)p + WEAK_SLOT;
      if (h->weak_long)
        GC_unregister_long_link(slot);
      else
        GC_unregister_disappearing_link(slot);
    }
    GC_unregister_long_link((void **)&e->link);
  }
  GC_invoke_finalizers(); /* queued before destroy: they run as no-ops now */
  for (size_t i = 0; i < h->range_count; i++)
    GC_remove_roots(h->ranges[i], h->ranges[i] + h->range_words[i]);
  memset(h->cells, 0, h->root_len * sizeof *h->cells);
  GC_remove_roots(h->cells, h->cells + h->root_len);
  GC_gcollect();
  GC_invoke_finalizers();
  registry_free(r);
  free(h->cells);
  current = NULL;
  free(h);
}

/* ---- Blocks ---------------------------------------------------------------------------------- */

static uintptr_t *block(fuzz_bheap *h, size_t cell) { return (uintptr_t *)h->cells[cell]; }

/* An op that may allocate gets the pause_steps budget for any stopped mark it triggers. */
static void op_begin(fuzz_bheap *h) { steps_left = h->auto_steps ? h->auto_steps : SIZE_MAX; }

/* The end of an op that allocated: a collection the allocation triggered may have queued
 * finalizers, and they run now, before the driver's next op can make their blocks reachable
 * again (a range word aimed at a dead block's address revives it), not at the next
 * run_finalizers; and never inside bdwgc, in the middle of the backend's own bookkeeping. They
 * run before the op's own effect on the cells, as the driver's model has it: a finalizer that
 * resurrects into the destination cell is then overwritten by the new block. */
static void op_end(void) {
  steps_left = SIZE_MAX;
  if (GC_should_invoke_finalizers()) GC_invoke_finalizers();
}

/* A root slot for the block an allocating op is making until it lands in its cell (past
 * INFLIGHT_MAX nested ops, the outer block is kept by the C stack alone, conservatively). */
static size_t inflight_enter(fuzz_bheap *h) { return h->cfg.cells + 1 + h->depth++ % INFLIGHT_MAX; }

static void inflight_leave(fuzz_bheap *h, size_t slot) {
  h->cells[slot] = NULL;
  h->depth--;
}

static int bdwgc_alloc(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields) {
  if (fields > MAX_FIELDS) fields = MAX_FIELDS;
  size_t words = fields + IDENT_WORDS;
  op_begin(h);
  void *p = shape == FUZZ_SHAPE_RAW ? GC_MALLOC_ATOMIC(words * sizeof(uintptr_t))
                                    : GC_MALLOC(words * sizeof(uintptr_t));
  steps_left = SIZE_MAX;
  size_t slot = inflight_enter(h);
  int ok = p != NULL;
  if (ok) {
    if (shape == FUZZ_SHAPE_RAW) memset(p, 0, words * sizeof(uintptr_t)); /* atomic: not cleared */
    h->cells[slot] = p; /* a root before the registry allocates (and may collect) */
    ok = registry_add(h, p, (uint32_t)words, shape == FUZZ_SHAPE_RAW ? SHAPE_RAW : SHAPE_SCAN);
  }
  op_end();
  h->cells[dst] = ok ? p : NULL;
  inflight_leave(h, slot);
  return ok;
}

/* Where the identity of the block at p lies: after the fields of a scanned block, first in the
 * others. A block the registry does not know (it cannot be in a cell) gives NULL. */
static uintptr_t *ident_of(fuzz_bheap *h, uintptr_t *p) {
  block_entry *e = registry_find(&h->reg, p);
  if (e == NULL) return NULL;
  return e->shape == SHAPE_SCAN ? p + e->words - IDENT_WORDS : p;
}

static void bdwgc_set_ident(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check) {
  uintptr_t *p = block(h, cell), *ident = p != NULL ? ident_of(h, p) : NULL;
  if (ident == NULL) return;
  ident[0] = id;
  ident[1] = check;
}

static int bdwgc_get_ident(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check) {
  uintptr_t *p = block(h, cell);
  if (p == NULL) return 0;
  uintptr_t *ident = ident_of(h, p);
  *id = ident != NULL ? ident[0] : 0;
  *check = ident != NULL ? ident[1] : 0;
  return 1;
}

/* Every pointer store goes through bdwgc's write barrier: in manual-VDB incremental mode the
 * dirty bit it sets is how a marked object gets rescanned; otherwise it is a plain store. */
static void bdwgc_store(fuzz_bheap *h, size_t obj, size_t field, size_t src) {
  uintptr_t *p = block(h, obj);
  if (p == NULL) return;
  GC_ptr_store_and_dirty(&p[field], h->cells[src]);
}

/* No barrier: an odd word is not a reference bdwgc must see. */
static void bdwgc_store_int(fuzz_bheap *h, size_t obj, size_t field, int64_t value) {
  uintptr_t *p = block(h, obj);
  if (p == NULL) return;
  p[field] = (uintptr_t)value * 2 + 1;
}

/* A block the registry holds and bdwgc has not given up on. */
static bool live_block(fuzz_bheap *h, uintptr_t word) {
  block_entry *e = registry_find(&h->reg, (const void *)word);
  return e != NULL && e->link != 0;
}

static fuzz_field_kind bdwgc_load(fuzz_bheap *h, size_t dst, size_t obj, size_t field,
                                  int64_t *value) {
  uintptr_t *p = block(h, obj);
  uintptr_t w = p != NULL ? p[field] : 0;
  if (w != 0 && (w & 1) == 0 && live_block(h, w)) {
    h->cells[dst] = (void *)w;
    return FUZZ_FIELD_BLOCK;
  }
  h->cells[dst] = NULL;
  if (w == 0) return FUZZ_FIELD_EMPTY;
  if (w & 1) {
    *value = (int64_t)(w >> 1);
    return FUZZ_FIELD_INT;
  }
  return FUZZ_FIELD_OTHER;
}

static void bdwgc_raw_write(fuzz_bheap *h, size_t obj, size_t word, uint64_t value) {
  uintptr_t *p = block(h, obj);
  if (p != NULL) p[IDENT_WORDS + word] = value;
}

static uint64_t bdwgc_raw_read(fuzz_bheap *h, size_t obj, size_t word) {
  uintptr_t *p = block(h, obj);
  return p != NULL ? p[IDENT_WORDS + word] : 0;
}

static void bdwgc_copy(fuzz_bheap *h, size_t dst, size_t src) { h->cells[dst] = h->cells[src]; }
static void bdwgc_clear(fuzz_bheap *h, size_t cell) { h->cells[cell] = NULL; }

/* ---- Collections ----------------------------------------------------------------------------- */

/* slice and start: a stopped mark this op begins may take `budget` mark steps (GC_mark_some
 * calls) before bdwgc leaves the rest to later increments; a cycle already under way advances by
 * GC_collect_a_little's own unit (GC_rate steps, tune rate). major and full always finish. */
static void bdwgc_collect(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget) {
  switch (kind) {
    case FUZZ_COLLECT_SLICE:
      steps_left = h->incremental ? budget : SIZE_MAX;
      GC_collect_a_little();
      break;
    case FUZZ_COLLECT_START:
      steps_left = h->incremental ? budget : SIZE_MAX;
      if (h->incremental)
        GC_start_incremental_collection();
      else
        GC_collect_a_little();
      break;
    case FUZZ_COLLECT_MAJOR:
      steps_left = SIZE_MAX;
      GC_gcollect();
      break;
    case FUZZ_COLLECT_FULL:
      steps_left = SIZE_MAX;
      GC_gcollect_and_unmap();
      break;
  }
  steps_left = SIZE_MAX;
}

static size_t bdwgc_run_finalizers(fuzz_bheap *h) {
  (void)h;
  return (size_t)GC_invoke_finalizers();
}

/* ---- Tunables -------------------------------------------------------------------------------- */

static const fuzz_tunable tunables[] = {
    {"free_space_divisor", "GC_set_free_space_divisor(1 + V): heap growth vs collection rate"},
    {"full_freq", "GC_set_full_freq(V): partial (generational) collections between full ones"},
    {"rate", "GC_set_rate(1 + V): mark steps per increment (GC_collect_a_little, allocation)"},
    {"pause_steps",
     "mark steps a stopped mark begun by an allocation may take before it turns incremental "
     "(V = 0: it finishes)"},
    {"max_heap", "GC_set_max_heap_size(V * 128 KiB), V = 0 unbounded: allocations then fail"},
    {"max_retries", "GC_set_max_retries(V >> 5): full collections before an allocation fails"},
    {"dont_expand", "GC_set_dont_expand(V & 1): collect rather than grow the heap"},
};
enum { TUNABLE_COUNT = sizeof tunables / sizeof tunables[0] };

static void bdwgc_tune(fuzz_bheap *h, unsigned param, unsigned value) {
  value &= 255;
  switch (param) {
    case 0: GC_set_free_space_divisor(1 + value); break;
    case 1: GC_set_full_freq((int)value); break;
    case 2: GC_set_rate((int)value + 1); break;
    case 3: h->auto_steps = value; break;
    case 4: GC_set_max_heap_size((GC_word)value * MAX_HEAP_STEP); break;
    case 5: GC_set_max_retries(value >> 5); break;
    case 6: GC_set_dont_expand((int)(value & 1)); break;
    default: break;
  }
}

/* ---- Finalizers ------------------------------------------------------------------------------ */

/* bdwgc calls this from GC_invoke_finalizers (finalize-on-demand: only run_finalizers runs it). */
static void GC_CALLBACK run_finalizer(void *obj, void *token) {
  fuzz_bheap *h = current;
  if (h == NULL || h->dying) return;
  block_entry *e = registry_find(&h->reg, obj);
  if (e != NULL) e->has_fin = 0;
  size_t self = FUZZ_CELL_SELF(&h->cfg);
  h->cells[self] = obj;
  h->cfg.events.finalize(h->cfg.events.user, (uint64_t)(uintptr_t)token);
  h->cells[self] = NULL;
}

static int bdwgc_fin_set(fuzz_bheap *h, size_t cell, uint64_t token) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  /* bdwgc leaves *ofn alone when it cannot allocate the registration: this value says so. */
  GC_finalization_proc ofn = never_runs;
  void *ocd, *cd = (void *)(uintptr_t)token;
  op_begin(h);
  switch (h->fin) {
    case FIN_ORDERED: GC_register_finalizer(p, run_finalizer, cd, &ofn, &ocd); break;
    case FIN_UNORDERED: GC_register_finalizer_no_order(p, run_finalizer, cd, &ofn, &ocd); break;
    case FIN_IGNORE_SELF:
      GC_register_finalizer_ignore_self(p, run_finalizer, cd, &ofn, &ocd);
      break;
  }
  int ok = ofn != never_runs;
  block_entry *e = registry_find(&h->reg, p);
  if (ok && e != NULL) e->has_fin = 1;
  op_end();
  return ok;
}

static int bdwgc_fin_clear(fuzz_bheap *h, size_t cell) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  GC_finalization_proc ofn = 0;
  void *ocd = NULL;
  GC_register_finalizer(p, 0, NULL, &ofn, &ocd);
  block_entry *e = registry_find(&h->reg, p);
  if (e != NULL) e->has_fin = 0;
  return ofn != 0;
}

/* ---- Weak references ------------------------------------------------------------------------- */

/* The weak reference block w, rooted already, made to name t. */
static int weak_link(fuzz_bheap *h, uintptr_t *w, void *t) {
  if (!registry_add(h, w, WEAK_WORDS, SHAPE_WEAK)) return 0;
  if (t == NULL) return 1; /* a weak reference to nothing reads as gone */
  /* gc.h: the link location holds a disguised pointer to the target, cleared (to 0) by bdwgc. */
  w[WEAK_SLOT] = GC_HIDE_POINTER(t);
  void **link = (void **)&w[WEAK_SLOT];
  int rc = h->weak_long ? GC_register_long_link(link, t)
                        : GC_general_register_disappearing_link(link, t);
  if (rc == GC_DUPLICATE) /* bdwgc re-aimed a registration it kept at t: a dead one's */
    note(h, "bdwgc.link-duplicate",
         "the link word of the new weak reference %p was still registered: a dead weak "
         "reference's link was never dropped",
         w);
  if (rc == GC_SUCCESS || rc == GC_DUPLICATE) return 1;
  w[WEAK_SLOT] = 0;
  return 0;
}

static int bdwgc_weak_new(fuzz_bheap *h, size_t dst, size_t target) {
  void *t = h->cells[target];
  op_begin(h);
  uintptr_t *w = GC_MALLOC_ATOMIC(WEAK_WORDS * sizeof(uintptr_t));
  steps_left = SIZE_MAX;
  size_t slot = inflight_enter(h);
  int ok = w != NULL;
  if (ok) {
    memset(w, 0, WEAK_WORDS * sizeof(uintptr_t));
    h->cells[slot] = w;
    ok = weak_link(h, w, t);
  }
  op_end();
  h->cells[dst] = ok ? (void *)w : NULL;
  inflight_leave(h, slot);
  return ok;
}

/* Under the allocation lock, so the collector cannot clear the link between the read and the
 * reveal (gc.h's advice for disguised pointers). */
static void *GC_CALLBACK read_weak(void *slot) {
  GC_hidden_pointer hidden = *(GC_hidden_pointer *)slot;
  return hidden != 0 ? GC_REVEAL_POINTER(hidden) : NULL;
}

static int bdwgc_weak_get(fuzz_bheap *h, size_t dst, size_t weak) {
  uintptr_t *w = block(h, weak);
  void *t = w != NULL ? GC_call_with_alloc_lock(read_weak, &w[WEAK_SLOT]) : NULL;
  h->cells[dst] = t;
  return t != NULL;
}

/* ---- Conservative ranges --------------------------------------------------------------------- */

static int bdwgc_range_add(fuzz_bheap *h, uintptr_t *words, size_t count) {
  if (h->range_count == MAX_RANGES || words == NULL) return 0;
  if (count == 0) return 1;
  GC_add_roots(words, words + count);
  h->ranges[h->range_count] = words;
  h->range_words[h->range_count++] = count;
  return 1;
}

static int bdwgc_address(fuzz_bheap *h, size_t cell, uintptr_t *start, size_t *bsize) {
  void *p = h->cells[cell];
  if (p == NULL) return 0;
  *start = (uintptr_t)GC_base(p);
  *bsize = GC_size(p);
  return 1;
}

/* ---- Introspection --------------------------------------------------------------------------- */

/* Every block whose long link bdwgc has not cleared: reachable, or unreachable but not yet
 * found so by a completed cycle. All carry an identity. */
static size_t bdwgc_walk(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check),
                         void *user) {
  registry *r = &h->reg;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = entry_at(r, i);
    if (e->key == 0 || e->link == 0) continue;
    const uintptr_t *p = GC_REVEAL_POINTER(e->key);
    const uintptr_t *ident = e->shape == SHAPE_SCAN ? p + e->words - IDENT_WORDS : p;
    visit(user, ident[0], ident[1]);
  }
  return 0;
}

/* The bytes of the blocks bdwgc still holds by its own verdict (their links), at its own object
 * sizes (GC_size: the request plus bdwgc's rounding and interior-pointer byte). */
static size_t bdwgc_live_bytes(fuzz_bheap *h) {
  registry *r = &h->reg;
  size_t bytes = 0;
  for (uint32_t i = 0; i < r->entries; i++) {
    block_entry *e = entry_at(r, i);
    if (e->key != 0 && e->link != 0) bytes += GC_size(GC_REVEAL_POINTER(e->key));
  }
  return bytes;
}

/* ---- The deep check -------------------------------------------------------------------------- */

/* From the cells and the conservative ranges through every scanned field: every block the driver
 * can reach must be one this heap allocated (bdwgc.dangling), that bdwgc still holds by its own
 * verdict (bdwgc.freed-reachable: a completed cycle found it unreachable), and that bdwgc sees as
 * an object starting where the block starts (bdwgc.base) of at least its requested size
 * (bdwgc.size). Cost: the reachable blocks and their fields, a registry lookup each. */
typedef struct check_run {
  fuzz_bheap *h;
  fuzz_finding *out;
  size_t max, count;
  char where[64];    /* the root the current chain started from: "cell 3", "range 1" */
  uintptr_t **stack; /* scanned blocks whose fields are still to visit */
  size_t depth, cap;
} check_run;

__attribute__((format(printf, 3, 4))) static void report(check_run *c, const char *what,
                                                         const char *fmt, ...) {
  if (c->count < c->max) {
    fuzz_finding *f = &c->out[c->count];
    va_list ap;
    va_start(ap, fmt);
    fuzz_finding_set(f, "bdwgc", what, fmt, ap);
    va_end(ap);
  }
  c->count++;
}

/* `word`, a cell's block or a scanned field's pointer, names a block the driver reaches. */
static void reach(check_run *c, uintptr_t word) {
  fuzz_bheap *h = c->h;
  void *p = (void *)word;
  block_entry *e = registry_find(&h->reg, p);
  if (e == NULL) {
    report(c, "dangling",
           "%p, reached from %s, is no block this heap allocated and holds: freed and reused, or "
           "a pointer into a block",
           p, c->where);
    return;
  }
  if (e->seen == h->epoch) return;
  e->seen = h->epoch;
  if (e->link == 0) {
    report(c, "freed-reachable",
           "block %p, reached from %s, had its long link cleared: a completed bdwgc cycle found a "
           "reachable block unreachable",
           p, c->where);
    return;
  }
  size_t bytes = (size_t)e->words * sizeof(uintptr_t);
  if (GC_base(p) != p) {
    report(c, "base", "GC_base(%p) is %p, not the block itself (reached from %s)", p, GC_base(p),
           c->where);
    return;
  }
  if (GC_size(p) < bytes) {
    report(c, "size", "GC_size(%p) is %zu bytes, below the %zu requested (reached from %s)", p,
           GC_size(p), bytes, c->where);
    return;
  }
  if (e->shape != SHAPE_SCAN) return;
  if (c->depth == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    uintptr_t **stack = realloc(c->stack, cap * sizeof *stack);
    if (stack == NULL) return; /* out of memory: check less, report nothing false */
    c->stack = stack;
    c->cap = cap;
  }
  c->stack[c->depth++] = (uintptr_t *)p;
}

static void reach_all(check_run *c, uintptr_t root) {
  reach(c, root);
  while (c->depth > 0) {
    uintptr_t *p = c->stack[--c->depth];
    size_t words = registry_find(&c->h->reg, p)->words;
    for (size_t f = 0; f + IDENT_WORDS < words; f++)
      if (p[f] != 0 && (p[f] & 1) == 0) reach(c, p[f]);
  }
}

static size_t bdwgc_check(fuzz_bheap *h, fuzz_finding *out, size_t max) {
  check_run c = {.h = h, .out = out, .max = max};
  for (size_t i = 0; i < h->pending_count; i++) {
    if (c.count < max && i < PENDING_MAX) out[c.count] = h->pending[i];
    c.count++;
  }
  h->pending_count = 0;
  if (++h->epoch == 0) h->epoch = 1;
  for (size_t cell = 0; cell <= h->cfg.cells; cell++) {
    if (h->cells[cell] == NULL) continue;
    snprintf(c.where, sizeof c.where, "cell %zu", cell);
    reach_all(&c, (uintptr_t)h->cells[cell]);
  }
  /* A range word keeps alive whatever block it points into; a stale word aimed at a block that
   * died before it was written is the driver's business, so only blocks bdwgc holds are followed. */
  for (size_t r = 0; r < h->range_count; r++) {
    snprintf(c.where, sizeof c.where, "range %zu", r);
    for (size_t i = 0; i < h->range_words[r]; i++) {
      void *base = GC_base((void *)h->ranges[r][i]);
      if (base != NULL && live_block(h, (uintptr_t)base)) reach_all(&c, (uintptr_t)base);
    }
  }
  free(c.stack);
  return c.count;
}

const fuzz_backend fuzz_backend_bdwgc = {
    .name = "bdwgc",
    .what = "Boehm-Demers-Weiser conservative GC 8.2.2 (Debian libgc); incremental by default",
    .caps = FUZZ_CAP_RAW | FUZZ_CAP_LARGE | FUZZ_CAP_INCREMENTAL | FUZZ_CAP_FINALIZERS |
            FUZZ_CAP_RESURRECT | FUZZ_CAP_FIN_CLEAR | FUZZ_CAP_WEAK | FUZZ_CAP_CONSERVATIVE |
            FUZZ_CAP_WALK | FUZZ_CAP_TUNE | FUZZ_CAP_DEEP_CHECK,
    .tunables = tunables,
    .tunable_count = TUNABLE_COUNT,
    /* GC_size is at most 4 times a block's 8 bytes per field (1 field: 32 bytes) and 32 bytes for
     * a block of none; conservative roots kept up to 24 KiB of dropped blocks in the measurements
     * (README.md), and one stale word can keep a whole structure. */
    .leak_slack_factor = 4.0,
    .leak_slack_bytes = 256 << 10,
    .create = bdwgc_create,
    .destroy = bdwgc_destroy,
    .alloc = bdwgc_alloc,
    .set_ident = bdwgc_set_ident,
    .get_ident = bdwgc_get_ident,
    .store = bdwgc_store,
    .store_int = bdwgc_store_int,
    .load = bdwgc_load,
    .raw_write = bdwgc_raw_write,
    .raw_read = bdwgc_raw_read,
    .copy = bdwgc_copy,
    .clear = bdwgc_clear,
    .collect = bdwgc_collect,
    .run_finalizers = bdwgc_run_finalizers,
    .tune = bdwgc_tune,
    .fail_after = NULL,
    .fin_set = bdwgc_fin_set,
    .fin_clear = bdwgc_fin_clear,
    .weak_new = bdwgc_weak_new,
    .weak_get = bdwgc_weak_get,
    .ephe_new = NULL,
    .ephe_get = NULL,
    .range_add = bdwgc_range_add,
    .address = bdwgc_address,
    .walk = bdwgc_walk,
    .live_bytes = bdwgc_live_bytes,
    .check = bdwgc_check,
};
