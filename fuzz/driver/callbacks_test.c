/* Finalizer bodies (fin_do): the driver runs a body when its finalizer runs, and the model follows
 * every effect of it, so a correct collector runs these programs clean, with the effects
 * visible in the heap (allocation, resurrection, finalizers set and re-armed inside finalizers, a
 * collection inside a finalizer); and the driver's checks of the finalizer contract
 * (driver.finalizer-context, and the model after each body) fail when the test breaks the heap on
 * purpose: finalizers run inside a collection, nested in one another, a running finalizer's block
 * overwritten. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/driver.h"
#include "fuzz/lang/program.h"
#include "fuzz/lang/text.h"
#include "gc/check.h"
#include "gc/heap.h"

/* What a test watches and does while a program runs. */
typedef struct watch {
  size_t at_op;           /* after this top-level op, record the slots and the statistics */
  gc_value slots[16];     /* then */
  gc_value fields[16][2]; /* then: the first two fields of each slot's scanned block */
  gc_stats stats;         /* then */
  gc_value first_block;   /* s0 after op 0 */
  gc_hook_point run_at;   /* at_hook breakage: run the finalizer queue at this point... */
  int run_in_hook;        /* ...if set */
  int clear_running;      /* at_body breakage: let a nested gc_run_finalizers run the queue */
  int overwrite_running;  /* at_body breakage: overwrite the running block's first field */
  int bodies;             /* at_body calls */
  char out[1 << 16];      /* what the driver printed */
} watch;

/* The one watch, cleared for the next test. */
static watch *fresh_watch(size_t at_op) {
  static watch one;
  memset(&one, 0, sizeof one);
  one.at_op = at_op;
  return &one;
}

static void after_op(void *user, gc_heap *heap, gc_value *slots, const fuzz_op *op) {
  watch *w = user;
  if (op->index == 0) w->first_block = slots[0];
  if (op->index != w->at_op) return;
  memcpy(w->slots, slots, sizeof w->slots);
  for (int i = 0; i < 16; i++) {
    if (!gc_is_block(slots[i]) || gc_tag(slots[i]) > GC_TAG_SCAN_MAX) continue;
    for (size_t f = 0; f < 2 && f < gc_wsize(slots[i]); f++)
      w->fields[i][f] = GC_FIELD(slots[i], f);
  }
  gc_get_stats(heap, &w->stats);
}

/* The collector's own guard, lifted for one call: the queue runs inside the collection. */
static void at_hook(void *user, gc_heap *heap, gc_hook_point point) {
  watch *w = user;
  if (!w->run_in_hook || point != w->run_at) return;
  gc_domain *d = gc_main_domain(heap);
  int saved = d->in_collection;
  d->in_collection = 0;
  gc_run_finalizers(d);
  d->in_collection = saved;
}

static void at_body(void *user, gc_heap *heap, gc_domain *dom) {
  watch *w = user;
  (void)dom;
  w->bodies++;
  if (w->clear_running) gc_atomic_store(&heap->running_finalizers, 0);
  if (w->overwrite_running && gc_is_block(heap->fin_running)) {
    GC_FIELD(heap->fin_running, 0) = gc_val_int(77);
  }
}

/* Run `text` (graph, or schedule on threads) with w's hooks; returns fuzz_run's status. */
static int run_text(const char *text, const fuzz_opset *set, watch *w, fuzz_result *res) {
  fuzz_buf bytes = {0};
  fuzz_text_error err;
  int ok = fuzz_assemble(set, text, strlen(text), &bytes, &err);
  if (!ok) fprintf(stderr, "  %zu:%zu: %s\n", err.line, err.column, err.message);
  CHECK(ok);
  FILE *out = fmemopen(w->out, sizeof w->out - 1, "w");
  fuzz_options opt = {.ops = set, .out = out, .after_op = after_op, .after_op_user = w};
  opt.at_hook = at_hook;
  opt.at_body = at_body;
  if (set == &fuzz_opset_schedule) opt.threads = FUZZ_SCHEDULED;
  int status = fuzz_run(bytes.data, bytes.size, &opt, res);
  fclose(out);
  fuzz_buf_free(&bytes);
  return status;
}

static void expect_clean(const char *text, const fuzz_opset *set, watch *w) {
  fuzz_result res;
  int status = run_text(text, set, w, &res);
  if (status != 0) fprintf(stderr, "%s\n", w->out);
  CHECK_EQ_U(status, 0);
  CHECK_EQ_U(res.violations, 0);
}

/* ---- The model follows each effect -------------------------------------------------------- */

/* The body allocates and stores into its own block, resurrects it into s6, and its block keeps
 * the new block alive: all of it seen in the heap, and the final checks (the model's exact live
 * count) clean. */
static void allocation_and_resurrection(void) {
  watch *w = fresh_watch(7);
  expect_clean(
      "alloc s0 scan 2\n"   /* 0 */
      "fin_do s0 4\n"       /* 1 */
      "  alloc s5 scan 3\n" /* 2 */
      "  self s6\n"         /* 3 */
      "  store s6.0 s5\n"   /* 4 */
      "  store_imm s5.1 5\n"
      "drop s0\n"       /* 6 */
      "collect major\n" /* 7: queues s0; its body runs after the cycle */
      "drop s5\n"
      "collect full\n"
      "drop s6\n"
      "collect full\n"
      "collect full\n",
      NULL, w);
  CHECK_EQ_U(w->bodies, 1);
  CHECK(w->slots[6] == w->first_block); /* resurrected */
  CHECK(gc_is_block(w->slots[5]) && w->fields[6][0] == w->slots[5]);
  CHECK(w->fields[5][1] == gc_val_int(5));
  CHECK_EQ_U(w->stats.finalizers_run, 1);
}

/* A collection inside a finalizer runs whole (one op, two cycles); the second queued finalizer
 * is still queued then, and runs after the first returns; the finalizers the body sets on blocks
 * it lets go are queued by that collection and run in the same gc_run_finalizers. */
static void collection_inside_a_finalizer(void) {
  watch *w = fresh_watch(13);
  expect_clean(
      "alloc s0 scan 1\n" /* 0 */
      "alloc s1 scan 1\n" /* 1 */
      "alloc s2 scan 1\n" /* 2 */
      "alloc s3 raw 1\n"  /* 3 */
      "fin_do s0 5\n"     /* 4 */
      "  fin s2 -\n"      /* 5 */
      "  fin s3 -\n"      /* 6 */
      "  drop s2\n"       /* 7 */
      "  drop s3\n"       /* 8 */
      "  collect major\n" /* 9 */
      "fin_do s1 0\n"     /* 10 */
      "drop s0\n"         /* 11 */
      "drop s1\n"         /* 12 */
      "collect major\n"   /* 13 */
      "collect full\n"
      "collect full\n",
      NULL, w);
  CHECK_EQ_U(w->bodies, 2);
  CHECK_EQ_U(w->stats.finalizers_run, 4); /* s0, s1, and s2, s3 queued inside s0's */
  CHECK_EQ_U(w->stats.finalizers_queued, 0);
  CHECK_EQ_U(w->stats.cycles, 2);
}

/* A finalizer re-arms itself: the block has a finalizer set again, and a later cycle that finds it
 * unreachable runs it again, body and all; a body clearing another block's finalizer leaves that
 * block an ordinary one. */
static void rearmed_and_cleared_finalizers(void) {
  watch *w = fresh_watch(8);
  expect_clean(
      "alloc s0 scan 1\n" /* 0 */
      "alloc s1 scan 1\n" /* 1 */
      "fin s1 -\n"        /* 2 */
      "fin_do s0 3\n"     /* 3 */
      "  self s6\n"       /* 4 */
      "  fin_do s6 1\n"   /* 5: re-armed, with a body of one op */
      "    unfin s1\n"    /* 6: runs the second time only */
      "drop s0\n"         /* 7 */
      "collect major\n"   /* 8 */
      "drop s6\n"
      "collect major\n"
      "collect full\n"
      "collect full\n",
      NULL, w);
  CHECK_EQ_U(w->bodies, 2);
  CHECK_EQ_U(w->stats.finalizers_run, 1);
  CHECK_EQ_U(w->stats.finalizers, 2); /* s0 re-armed, s1 still set */
}

/* On threads: the finalizer runs on whichever domain runs the queue, with its slots. */
static void bodies_on_threads(void) {
  watch *w = fresh_watch((size_t)-1);
  expect_clean(
      "pct 0x5 3\n"
      "spawn d1\n"
      "alloc s0 scan 2\n"
      "fin_do s0 3\n"
      "  alloc s4 raw 2\n"
      "  collect major\n"
      "  self s7\n"
      "drop s0\n"
      "on d1\n"
      "alloc s1 scan 1\n"
      "collect major\n"
      "collect full\n",
      &fuzz_opset_schedule, w);
  CHECK_EQ_U(w->bodies, 1);
}

/* ---- The checks fail when the heap is broken on purpose ----------------------------------- */

/* (Bodies that do not allocate: a finalizer run with the world stopped would wait for itself at
 * its first safepoint.) */
static const char two_finalizers[] =
    "alloc s0 scan 1\n"
    "alloc s1 scan 1\n"
    "fin_do s0 1\n"
    "  self s5\n"
    "fin_do s1 1\n"
    "  self s6\n"
    "drop s0\n"
    "drop s1\n"
    "collect major\n"
    "collect full\n";

static void expect_first(watch *w, const char *kind) {
  fuzz_result res;
  int status = run_text(two_finalizers, NULL, w, &res);
  CHECK_EQ_U(status, 1);
  if (strcmp(res.first_kind, kind) != 0) fprintf(stderr, "  first %s\n%s", res.first_kind, w->out);
  CHECK(strcmp(res.first_kind, kind) == 0);
}

/* The queue run from the mark-done hook, the world stopped. */
static void finalizers_run_at_mark_done(void) {
  watch *w = fresh_watch(0);
  w->run_in_hook = 1;
  w->run_at = GC_HOOK_MARK_DONE;
  expect_first(w, "driver.finalizer-context");
  CHECK(strstr(w->out, "between mark-done and cycled") != NULL);
}

/* The queue run from the cycled hook: still inside the collection. */
static void finalizers_run_at_cycled(void) {
  watch *w = fresh_watch(0);
  w->run_in_hook = 1;
  w->run_at = GC_HOOK_CYCLED;
  expect_first(w, "driver.finalizer-context");
}

/* The one-runner guard lost inside a finalizer: the driver's own gc_run_finalizers from the body
 * runs the second finalizer inside the first. */
static void finalizers_nested(void) {
  watch *w = fresh_watch(0);
  w->clear_running = 1;
  expect_first(w, "driver.finalizer-context");
  CHECK(strstr(w->out, "finalizers never nest") != NULL);
  CHECK(strstr(w->out, "from a finalizer it must run none") != NULL);
}

/* The running block overwritten while its finalizer runs: the model's check when the body
 * returns sees it. */
static void running_block_overwritten(void) {
  watch *w = fresh_watch(0);
  w->overwrite_running = 1;
  expect_first(w, "model.contents");
  CHECK(strstr(w->out, "found when the finalizer body of model object") != NULL);
}

int main(void) {
  RUN(allocation_and_resurrection);
  RUN(collection_inside_a_finalizer);
  RUN(rearmed_and_cleared_finalizers);
  RUN(bodies_on_threads);
  RUN(finalizers_run_at_mark_done);
  RUN(finalizers_run_at_cycled);
  RUN(finalizers_nested);
  RUN(running_block_overwritten);
  CHECK_MAIN_END();
}
