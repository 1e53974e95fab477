/* Running a program (see driver.h): the top of the driver. A fresh heap with the verifier, the
 * model and the driver's hook; the ops on one thread or on a thread per domain; the final checks;
 * the memory a fuzz target keeps between programs. Calls down only: threads.h, semantics.h,
 * corrupt_op.h, verdict.h. */
#include "fuzz/driver/driver.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/corrupt_op.h"
#include "fuzz/driver/in_collection.h"
#include "fuzz/driver/params_op.h"
#include "fuzz/driver/semantics.h"
#include "fuzz/driver/state.h"
#include "fuzz/driver/threads.h"
#include "fuzz/driver/verdict.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/gc.h"
#include "invariants/model.h"
#include "invariants/verify.h"

/* ---- The hook ------------------------------------------------------------------------------ */

/* Run the passes due at `point` (the heap's verify mask, read at every point like the verifier's
 * own hook) and print what they found, attributed to the op that started the cycle. The driver
 * owns the hook so that it can say which op that was before anything else runs. */
static void driver_check_cycle(driver *d, const mutator *m, gc_hook_point point) {
  size_t found = gc_verify_run_point(d->verifier, gc_heap_config(d->heap)->verify, point);
  if (found == 0) return;
  drv_report_passes(d, m, gc_verify_reports_of(d->verifier), NULL);
  gc_verify_clear(d->verifier);
}

/* --trace, at a compaction's end: how many blocks it moved, and on scheduled threads where each
 * other living domain's thread stood meanwhile: inside an op (parked at a safepoint of it, or
 * in a blocking section it entered), between two ops, or blocked by `block`. What shows that a
 * program moved blocks while another domain was in the middle of something. Scheduled threads
 * only: one runs at a time, so the others' records hold still while this reads them. */
static void trace_compacted(driver *d, const mutator *self) {
  const gc_compact_move *moves;
  fprintf(d->opt->trace, "        [compacted: %zu blocks moved", gc_compact_moves(d->heap, &moves));
  for (int k = 0; d->opt->threads == FUZZ_SCHEDULED && k < FUZZ_DOMAINS; k++) {
    const mutator *o = &d->muts[k];
    if (o == self || d->domains[k] == NULL) continue;
    if (o->op != NULL) {
      char text[FUZZ_OP_TEXT_MAX];
      fprintf(d->opt->trace, "; d%d inside op %zu `%s`", k, o->op->index,
              fuzz_op_format(o->op, text, sizeof text));
    } else if (o->last_op == NULL) {
      fprintf(d->opt->trace, "; d%d in a blocking section, its part not begun or over", k);
    } else {
      fprintf(d->opt->trace, "; d%d between ops %zu and the next%s", k, o->last_op->index,
              o->dom == NULL ? ", blocked" : "");
    }
  }
  fprintf(d->opt->trace, "]\n");
}

/* Runs at every hook point: its comparisons are of the driver's own bookkeeping, nothing the
 * fuzzer can steer by, so it is left out of coverage (an OSS-Fuzz build traces the comparisons
 * of every file; the fuzz config already spares this one). */
FUZZ_NO_COVERAGE static void driver_hook(gc_heap *heap, gc_hook_point point, void *user) {
  driver *d = user;
  const mutator *m = drv_thread_mutator; /* see state.h: the hook cannot be handed it */
  (void)heap;
  if (point == GC_HOOK_MARK_DONE) {
    /* Marking runs inside one op: that op started this cycle. */
    if (m->op != NULL) {
      d->cycle_op = (long)m->op->index;
      d->cycle_op_copy = *m->op;
    } else {
      d->cycle_op = -1;
    }
  }
  if (point == GC_HOOK_CYCLED) d->cycles_seen++;
  if (point == GC_HOOK_CYCLED || point == GC_HOOK_COMPACTED) drv_trace_note(d, point);
  /* Inside a collection: in any hook, and from mark-done to the end of cycled, the world
   * stopped. No finalizer may start there (driver.finalizer-context). */
  d->in_hook++;
  if (point == GC_HOOK_MARK_DONE) d->in_stw = 1;
  if (d->opt->trace != NULL) {
    fprintf(d->opt->trace, "        [cycle %s]\n",
            gc_verify_point_id_name((gc_verify_point_id)point));
  }
  /* A checkmark corruption planted, checked and repaired before the driver's own passes look. */
  if (point == GC_HOOK_MARK_DONE && d->corrupt_armed != NULL) drv_corrupt_mark_done(d);
  /* Blocks moved: the model follows before anything reads it (whether or not its pass runs). */
  if (point == GC_HOOK_COMPACTED) gc_model_follow_compaction(d->model);
  if (point == GC_HOOK_COMPACTED && d->opt->trace != NULL) trace_compacted(d, m);
  driver_check_cycle(d, m, point);
  /* After the passes: they judge the collection as it ran, before any call from the hook. */
  drv_in_collection_at_hook(d, m, point);
  if (d->opt->at_hook != NULL) d->opt->at_hook(d->opt->after_op_user, heap, point);
  if (point == GC_HOOK_CYCLED) d->in_stw = 0;
  d->in_hook--;
}

/* ---- The heap, the model and the memory kept between programs ------------------------------ */

static void bind_roots(driver *d, gc_model *m);

struct fuzz_scratch {
  gc_verify_scratch *verify;
  gc_model *model;      /* detached between programs (gc_model_detach), or NULL before the first */
  drv_trace_sink trace; /* every heap's trace_file, rewound for each program */
  driver *d; /* the driver state, cleared for each program; the model's roots stay bound to
                    * its slots from one program to the next */
};

fuzz_scratch *fuzz_scratch_create(void) {
  fuzz_scratch *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->verify = gc_verify_scratch_create();
  if (s->verify == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

void fuzz_scratch_destroy(fuzz_scratch *s) {
  if (s == NULL) return;
  gc_verify_scratch_destroy(s->verify);
  gc_model_destroy(s->model);
  drv_trace_sink_close(&s->trace);
  free(s->d);
  free(s);
}

/* The banks of model roots a program needs: one mutator on one thread, one per domain on threads.
 * (Every model check visits every root: the one-thread targets do not pay for banks they never
 * use.) */
static size_t bank_count(const fuzz_options *opt) {
  return opt->threads == FUZZ_ONE_THREAD ? 1 : FUZZ_DOMAINS;
}

/* The model for this program, its roots bound to the driver's slots (INV-DRV-1): the scratch's,
 * attached to the new heap (still bound: the scratch's driver state is where its slots were),
 * or a new one. */
static gc_model *open_model(driver *d) {
  fuzz_scratch *s = d->opt->scratch;
  size_t roots = bank_count(d->opt) * BANK_ROOTS;
  if (s == NULL) {
    gc_model *m = gc_model_create(d->heap, roots);
    if (m != NULL) bind_roots(d, m);
    return m;
  }
  if (s->model != NULL &&
      (gc_model_root_count(s->model) != roots || !gc_model_reattach(s->model, d->heap))) {
    gc_model_detach(s->model); /* no-op unless reattach succeeded */
    gc_model_destroy(s->model);
    s->model = NULL;
  }
  if (s->model == NULL) {
    s->model = gc_model_create(d->heap, roots);
    if (s->model != NULL) bind_roots(d, s->model);
  }
  return s->model;
}

static void close_model(driver *d) {
  if (d->model == NULL) return;
  if (d->opt->scratch != NULL) {
    gc_model_detach(d->model); /* kept in the scratch for the next program */
  } else {
    gc_model_destroy(d->model);
  }
  d->model = NULL;
}

/* Scheduled runs always go through a pool cache: taking and giving pools passes the cache's lock,
 * two scheduling points, whether it holds pools or not. With the cache in some runs and not in
 * others, an input would take one interleaving in the fuzzer and another in replay. It is full
 * from the start, as the targets' is: a program's pools come from it whatever ran before. */
static gc_pool_cache *scheduled_pool_cache(void) {
  static gc_pool_cache *cache;
  if (cache == NULL) {
    cache = gc_pool_cache_create(FUZZ_TARGET_CACHE_POOLS);
    if (cache != NULL) gc_pool_cache_fill(cache);
  }
  return cache;
}

/* The heap every program starts with: pacing that can trigger within a short program, pools
 * mapped one at a time and none kept but in the caller's pool cache (creating and destroying a
 * heap per input stays cheap), a modest mark stack (`param markstack` goes down to 4), and
 * stop-the-world marking whatever the collector's default, so that a program means what it
 * meant when it was written (`param marking incremental` switches; fuzz/README.md). Its trace
 * lines go to the driver's sink (params_op.h), whether or not a program turns them on. */
static gc_heap *create_heap(const fuzz_options *opt, FILE *trace_file) {
  gc_config cfg;
  gc_config_default(&cfg);
  cfg.trace_file = trace_file;
  cfg.marking = GC_MARKING_STW;
  cfg.min_trigger_words = 4096;
  cfg.mark_stack_entries = 1024;
  cfg.pools_per_batch = 1;
  cfg.free_pools_kept = 0;
  cfg.pool_cache = opt->pool_cache;
  if (opt->threads == FUZZ_SCHEDULED && cfg.pool_cache == NULL) {
    cfg.pool_cache = scheduled_pool_cache();
  }
  cfg.verify = opt->verify_given ? opt->verify : GC_VERIFY_ALL;
  if (opt->params != NULL) {
    char err[200];
    if (gc_config_parse(&cfg, opt->params, err, sizeof err) != GC_OK) {
      fprintf(opt->out ? opt->out : stderr, "fuzz driver: bad parameters: %s\n", err);
      return NULL;
    }
  }
  return gc_heap_create(&cfg);
}

/* Every model root lives in the driver's storage from the start: a slot, a frame's snapshot word,
 * a global cell. A frame not pushed and a cell not registered hold NULL (their model roots are
 * empty), so the model's root set and the heap's agree at every point, and the model's own root
 * scanner has nothing to visit. */
static void bind_roots(driver *d, gc_model *m) {
  for (size_t b = 0; b < bank_count(d->opt); b++) {
    mutator *mu = &d->muts[b];
    size_t base = b * BANK_ROOTS;
    for (size_t i = 0; i < FUZZ_SLOTS; i++)
      gc_model_root_bind(m, base + BANK_SLOTS + i, &mu->slots[i]);
    for (size_t k = 0; k < FUZZ_FRAMES; k++) {
      for (size_t i = 0; i < FUZZ_SLOTS; i++) {
        gc_model_root_bind(m, base + BANK_FRAMES + k * FUZZ_SLOTS + i, &mu->frames[k].values[i]);
      }
    }
    for (size_t g = 0; g < FUZZ_GLOBALS; g++)
      gc_model_root_bind(m, base + BANK_GLOBALS + g, &mu->globals[g]);
  }
}

static void teardown(driver *d) {
  /* The model first (it disarms its finalizers), then the roots the program left, the hook and
   * the verifier, then the heap. */
  close_model(d);
  /* The frames of d0 (the program ends on it, running); other domains' frames go with their
   * domains when the heap is destroyed. */
  mutator *m = &d->muts[0];
  for (int k; m->dom != NULL && (k = drv_innermost_frame(m, 0)) >= 0;) {
    gc_frame_pop(m->dom, &m->frames[k].frame);
    m->frames[k].domain = -1;
  }
  if (m->dom != NULL) gc_frame_pop(m->dom, &m->slot_frame);
  for (int g = 0; g < FUZZ_GLOBALS; g++) {
    for (int b = 0; b < FUZZ_DOMAINS; b++) {
      if (d->muts[b].registered[g]) gc_root_unregister(d->heap, &d->muts[b].globals[g]);
    }
  }
  gc_set_hook(d->heap, NULL, NULL);
  gc_verify_uninstall(d->verifier);
  gc_heap_destroy(d->heap);
  drv_trace_sink_close(&d->own_trace); /* the scratch's stays for the next program */
  if (d->opt->scratch == NULL) free(d);
}

/* A fresh driver for one program, its heap with the verifier, the model and the driver's hook,
 * and d0's slots pushed as its outermost frame; NULL when out of memory (nothing left over). */
static driver *open_driver(const fuzz_options *opt, fuzz_result *res) {
  driver *d;
  if (opt->scratch != NULL) {
    if (opt->scratch->d == NULL) opt->scratch->d = malloc(sizeof *d);
    d = opt->scratch->d;
    if (d != NULL) memset(d, 0, sizeof *d);
  } else {
    d = calloc(1, sizeof *d);
  }
  if (d == NULL) return NULL;
  d->opt = opt;
  d->out = opt->out ? opt->out : stderr;
  d->res = res;
  d->cycle_op = -1;
  d->heap = create_heap(opt, drv_trace_sink_open(d, opt->scratch ? &opt->scratch->trace : NULL));
  if (d->heap == NULL) {
    drv_trace_sink_close(&d->own_trace);
    if (opt->scratch == NULL) free(d);
    return NULL;
  }
  for (size_t b = 0; b < FUZZ_DOMAINS; b++) {
    d->muts[b].root_base = b * BANK_ROOTS;
    d->muts[b].on = (int)b;
    for (int k = 0; k < FUZZ_FRAMES; k++) d->muts[b].frames[k].domain = -1;
  }
  mutator *m = &d->muts[0];
  drv_thread_mutator = m;
  m->dom = d->domains[0] = gc_main_domain(d->heap);
  d->markslice = gc_heap_config(d->heap)->mark_slice_words;
  /* The verifier runs from the driver's hook (driver_check_cycle), in collect mode: the driver
   * prints each report with the op it belongs to, then aborts if asked to. */
  d->verifier = gc_verify_install(d->heap, GC_VERIFY_COLLECT);
  if (d->verifier != NULL && opt->scratch != NULL) {
    gc_verify_use_scratch(d->verifier, opt->scratch->verify);
  }
  d->model = open_model(d);
  if (d->verifier == NULL || d->model == NULL) {
    teardown(d);
    return NULL;
  }
  gc_verify_set_model(d->verifier, d->model);
  drv_install_bodies(d);
  gc_set_hook(d->heap, driver_hook, d);
  gc_frame_push(m->dom, &m->slot_frame, m->slots, FUZZ_SLOTS);
  for (int r = 0; r < FUZZ_RANGES; r++) {
    if (!gc_model_range_add(d->model, d->ranges[r], FUZZ_RANGE_WORDS)) {
      teardown(d);
      return NULL;
    }
  }
  drv_check_error_api(d, m);
  return d;
}

/* The graph and roots targets: every op in order on d->muts[0], which moves between domains. */
static void run_one_thread(driver *d, const uint8_t *data, size_t size) {
  const fuzz_options *opt = d->opt;
  mutator *m = &d->muts[0];
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, opt->ops, data, size);
  while (fuzz_program_next(&dec, &op)) {
    m->op = &op;
    if (op.depth > 0) continue; /* a finalizer body's: run by its finalizer (semantics.c) */
    if (opt->trace != NULL) {
      char text[FUZZ_OP_TEXT_MAX];
      fprintf(opt->trace, "%4zu  %s\n", op.index, fuzz_op_format(&op, text, sizeof text));
    }
    drv_run_op(d, m, &op);
    d->res->ops++;
    if (opt->after_op != NULL) opt->after_op(opt->after_op_user, d->heap, m->slots, &op);
  }
  m->op = NULL;
  /* The program ends on d0, running; the other domains stay in their blocking sections. */
  drv_end_on_main(d, m);
}

/* The final checks: a full collection runs every pass once more (the model's live count is exact
 * when its sweep ends); then the figures of fuzz_result. */
static void final_checks(driver *d) {
  fuzz_result *res = d->res;
  gc_collect(d->muts[0].dom, GC_COLLECT_FULL);
  gc_stats stats;
  gc_get_stats(d->heap, &stats);
  drv_trace_check(d);
  res->cycles = stats.cycles;
  for (int e = 0; e < GC_EVENT_COUNT; e++) res->events[e] = gc_event_count(d->heap, (gc_event)e);
  /* What determinism compares besides the interleaving: the heap's shape and activity, never a
   * time or an address. */
  const uint64_t shape[] = {stats.pool_words,     stats.pool_live_words, stats.pool_live_blocks,
                            stats.large_words,    stats.large_blocks,    stats.cycles,
                            stats.alloc_blocks,   stats.alloc_words,     stats.freed_blocks,
                            stats.freed_words,    stats.finalizers_run,  stats.handoffs,
                            stats.mark_overflows, stats.domains};
  res->stats_hash = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
    res->stats_hash = gc_fnv1a(res->stats_hash, shape[i]);
  }
  drv_count_pass_runs(d);
}

int fuzz_run(const uint8_t *data, size_t size, const fuzz_options *opt, fuzz_result *res) {
  memset(res, 0, sizeof *res);
  res->first_op = -1;
  driver *d = open_driver(opt, res);
  if (d == NULL) return -1;
  d->data = data;
  d->size = size;
  drv_running = d;
  if (opt->threads == FUZZ_ONE_THREAD) {
    run_one_thread(d, data, size);
  } else {
    int ran = drv_run_threads(d, data, size);
    if (ran <= 0) {
      /* Stuck threads hold the heap's locks: leave the heap and the driver as they are. */
      drv_running = NULL;
      if (ran < 0) teardown(d);
      return ran < 0 ? -1 : 1;
    }
  }
  final_checks(d);
  drv_running = NULL;
  teardown(d);
  return res->violations ? 1 : 0;
}

/* ---- Fuzz targets -------------------------------------------------------------------------- */

/* The memory the targets keep between programs (fuzz_target_init). */
static gc_pool_cache *target_pool_cache;
static fuzz_scratch *target_scratch;

static int run_target(const fuzz_opset *set, fuzz_threads threads, const uint8_t *data,
                      size_t size) {
  if (target_pool_cache == NULL) fuzz_target_init_threads(set, threads);
  fuzz_options opt = {.ops = set,
                      .threads = threads,
                      .abort_on_violation = 1,
                      .pool_cache = target_pool_cache,
                      .scratch = target_scratch};
  fuzz_result res;
  fuzz_run(data, size, &opt, &res);
  return 0;
}

static fuzz_threads threads_of(const fuzz_opset *set) {
  return set == &fuzz_opset_schedule ? FUZZ_SCHEDULED : FUZZ_ONE_THREAD;
}

void fuzz_target_init_threads(const fuzz_opset *set, fuzz_threads threads) {
  if (target_pool_cache != NULL) return;
  target_pool_cache = gc_pool_cache_create(FUZZ_TARGET_CACHE_POOLS);
  target_scratch = fuzz_scratch_create();
  if (target_pool_cache == NULL || target_scratch == NULL) return; /* run_target runs without */
  gc_pool_cache_fill(target_pool_cache);
  if (threads == FUZZ_SCHEDULED) scheduled_pool_cache();
  drv_corrupt_init();
  /* The empty program: the model, the driver state and the passes' scratch made as the first
   * program of this kind makes them, and the spares the cache keeps for the next heap
   * (gc/poolcache.h). Its mark stack is the largest `param markstack` sets: the mark arena it
   * leaves is large enough for any program's, so every later heap takes that one spare and never
   * mallocs another (a spare the size of some earlier program's would make a heap's path depend
   * on which programs ran before it). */
  fuzz_options opt = {.ops = set,
                      .threads = threads,
                      .abort_on_violation = 1,
                      .params = "markstack=65536",
                      .pool_cache = target_pool_cache,
                      .scratch = target_scratch};
  fuzz_result res;
  fuzz_run(NULL, 0, &opt, &res);
}

void fuzz_target_init(const fuzz_opset *set) { fuzz_target_init_threads(set, threads_of(set)); }

int fuzz_target_run_one(const fuzz_opset *set, const uint8_t *data, size_t size) {
  return run_target(set, threads_of(set), data, size);
}

int fuzz_target_run_free_threads(const uint8_t *data, size_t size) {
  return run_target(&fuzz_opset_schedule, FUZZ_FREE_THREADS, data, size);
}
