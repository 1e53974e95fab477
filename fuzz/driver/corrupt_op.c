/* The corrupt op (see corrupt_op.h): plant one corruption of the catalogue, check that its pass
 * reports it, repair it exactly, check that the pass is quiet again. */
#include "fuzz/driver/corrupt_op.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/driver/verdict.h"
#include "gc/heap.h" /* whether a cycle marks */
#include "invariants/corrupt.h"

/* One corrupt op: the catalogue's corruption, and the op's own bookkeeping. */
typedef struct corrupt_op {
  gc_corruption c;
  fuzz_corruption which; /* as the program names it */
  mutator *m;            /* the mutator running the op */
  int fired;             /* a checkmark corruption's collection reached mark-done */
} corrupt_op;

/* The report code on real reports, under the build's sanitizers: every report printed, the first
 * one drawn as Graphviz; the text is thrown away. Once a program, for the first corruption its
 * pass reported: printing cost more than the rest of the op (a third of the graph target's time
 * went to corrupt ops), and which corruption comes first is the fuzzer's choice like any other. */
static void format_reports(const gc_verify_reports *r) {
  char *text = NULL;
  size_t bsize = 0;
  FILE *f = open_memstream(&text, &bsize);
  if (f == NULL) return;
  gc_verify_reports_print(r, f);
  if (r->count > 0) gc_verify_report_print_dot(&r->items[0], f);
  fclose(f);
  free(text);
}

/* "`corrupt reach.zero-header s3 2` on block 0x... (word at 0x...: 0x900 -> 0x0)": the op and
 * its first write (as planted: valid after the undo too). Made only for a trace line or a
 * violation: formatting it for every op cost more than a tenth of the op. */
static void describe(const corrupt_op *op, char *buf, size_t bsize) {
  char planted[160];
  gc_corruption_describe(&op->c, planted, sizeof planted);
  snprintf(buf, bsize, "`corrupt %s s%d %d` %s", fuzz_corruption_names[op->which], op->c.slot,
           op->c.n, planted);
}

/* With --trace: a corrupt op that could not apply says so (seeds are written to apply). */
static void trace_no_op(const driver *d, const corrupt_op *op) {
  if (d->opt->trace == NULL) return;
  fprintf(d->opt->trace, "        [`corrupt %s s%d %d` cannot apply here: no-op]\n",
          fuzz_corruption_names[op->which], op->c.slot, op->c.n);
}

static void plant_check_repair(driver *d, corrupt_op *op) {
  gc_corruption *c = &op->c;
  const mutator *m = op->m;
  const char *pass = gc_corruption_pass(c->which);
  gc_verify_kind kind = gc_corruption_kind(c->which);
  gc_verify_reports found;
  gc_verify_reports_init(&found);
  char summary[160];
  /* The pass first runs on the heap as the program left it. A report now is no corruption of
   * this op's but the collector's own (between two cycles nothing else looks): it is reported
   * as that pass's violation, and nothing is planted, so that "missed" and "unrepaired" below
   * only ever describe the verifier and the repair. */
  gc_corruption_check(c, &found);
  drv_check_made(d);
  if (found.count + found.dropped > 0) {
    char how[160];
    snprintf(how, sizeof how, "found by `corrupt %s s%d %d` before it planted anything",
             fuzz_corruption_names[op->which], c->slot, c->n);
    gc_corruption_undo(c); /* only bytes kept for the check, none written */
    drv_report_passes(d, m, &found, how);
    gc_verify_reports_free(&found);
    return;
  }
  if (!gc_corruption_plant(c)) {
    gc_corruption_undo(c); /* only bytes kept for the check, none written */
    trace_no_op(d, op);
    return;
  }
  char planted[256];
  fuzz_corrupt_sabotage sabotage = d->opt->corrupt_sabotage;
  if (sabotage == FUZZ_CORRUPT_UNDO_BEFORE_CHECK) gc_corruption_undo(c);

  gc_corruption_check(c, &found);
  drv_check_made(d);
  if (d->opt->trace != NULL) {
    describe(op, planted, sizeof planted);
    gc_verify_reports_summarize(&found, summary, sizeof summary);
    fprintf(d->opt->trace, "        [planted %s; %s found %s]\n", planted, pass, summary);
  }
  if (gc_verify_reports_count_kind(&found, kind) == 0) {
    describe(op, planted, sizeof planted);
    gc_verify_reports_summarize(&found, summary, sizeof summary);
    drv_violation(d, m, GC_VK_DRIVER_CORRUPTION_MISSED,
                  "planted %s; the %s pass, run directly, reported no %s but %s", planted, pass,
                  gc_verify_kind_name(kind), summary);
    gc_verify_reports_print(&found, d->out);
  }
  if (!d->corrupt_printed && found.count > 0) {
    d->corrupt_printed = 1;
    format_reports(&found);
  }
  gc_verify_reports_clear(&found);

  if (sabotage != FUZZ_CORRUPT_CHECK_BEFORE_REPAIR) gc_corruption_undo(c);
  gc_corruption_check(c, &found);
  if (sabotage == FUZZ_CORRUPT_CHECK_BEFORE_REPAIR) gc_corruption_undo(c);
  drv_check_made(d);
  if (found.count + found.dropped > 0) {
    describe(op, planted, sizeof planted);
    gc_verify_reports_summarize(&found, summary, sizeof summary);
    drv_violation(d, m, GC_VK_DRIVER_CORRUPTION_UNREPAIRED,
                  "planted %s and repaired it; the %s pass, run again, still reported %s", planted,
                  pass, summary);
    gc_verify_reports_print(&found, d->out);
  }
  gc_verify_reports_free(&found);
}

/* The catalogue's row of each corruption the op language names, looked up once per process (by
 * name: the two lists are kept apart, fuzz/lang has no collector dependency). */
static long corruption_rows[FUZZ_CORRUPTION_COUNT];
static pthread_once_t corruption_rows_once = PTHREAD_ONCE_INIT;

static void find_corruption_rows(void) {
  for (size_t w = 0; w < FUZZ_CORRUPTION_COUNT; w++) {
    const char *name = fuzz_corruption_names[w];
    corruption_rows[w] = gc_corruption_find(name, strlen(name));
    if (corruption_rows[w] < 0) {
      /* The op language names a corruption the catalogue does not have: a bug in gcfuzz,
       * whatever the input (corrupt_test checks that every name has its row). */
      fprintf(stderr, "fuzz driver: the corruption catalogue has no %s\n", name);
      abort();
    }
  }
}

void drv_corrupt_init(void) { pthread_once(&corruption_rows_once, find_corruption_rows); }

void drv_op_corrupt(driver *d, mutator *m, fuzz_corruption which, int slot, int n) {
  drv_corrupt_init();
  long row = corruption_rows[which];
  corrupt_op op;
  memset(&op, 0, sizeof op);
  op.which = which;
  op.m = m;
  op.c = (gc_corruption){.which = (size_t)row,
                         .heap = d->heap,
                         .model = d->model,
                         .verifier = d->verifier,
                         .dom = m->dom,
                         .slots = m->slots,
                         .slot_count = FUZZ_SLOTS,
                         .slot = slot,
                         .n = n};
  /* While an incremental cycle marks, the passes checked between two ops look at a heap in
   * mid-cycle (MARKED blocks before the colours rotate, a sweep not begun): they hold only
   * between cycles. Only the corruptions planted at a mark-done, which run a collection of their
   * own, apply (that collection first finishes the mark under way). */
  int marking = __atomic_load_n(&d->heap->marking, __ATOMIC_ACQUIRE) != 0;
  if ((marking && !gc_corruption_at_mark_done((size_t)row)) || !gc_corruption_prepare(&op.c)) {
    trace_no_op(d, &op);
    return;
  }
  if (!gc_corruption_at_mark_done(op.c.which)) {
    plant_check_repair(d, &op);
    return;
  }
  /* Checkmark compares the collector's marks with its own, so it runs right after a mark: this
   * op's own major collection, planted at its mark-done point (drv_corrupt_mark_done). */
  d->corrupt_armed = &op;
  gc_collect(m->dom, GC_COLLECT_MAJOR); /* what `collect major` runs */
  d->corrupt_armed = NULL;
  drv_check_made(d);
  if (!op.fired) {
    /* The collector's fault, not the verifier's: a major collection is a whole cycle from the
     * call (API-COLLECT), so it reaches a mark-done point. */
    drv_violation(d, m, GC_VK_DRIVER_NO_CYCLE,
                  "`corrupt %s s%d %d`: its major collection never reached the mark-done point",
                  fuzz_corruption_names[which], slot, n);
  }
}

void drv_corrupt_mark_done(driver *d) {
  corrupt_op *op = d->corrupt_armed;
  d->corrupt_armed = NULL; /* once: a later cycle in the same op (none today) is ordinary */
  op->fired = 1;
  /* The collection may have moved pools between lists (finishing the last sweep): look again. */
  if (gc_corruption_prepare(&op->c)) {
    plant_check_repair(d, op);
  } else {
    trace_no_op(d, op);
  }
}
