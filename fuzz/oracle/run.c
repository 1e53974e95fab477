/* Running a program through a backend (run.h): the heap's life, the ops in order (or the
 * domains' parts on their threads: threads.c), the final checks. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/oracle/run.h"
#include "fuzz/oracle/runner.h"

_Thread_local runner_mut *runner_current;

/* ---- Running ------------------------------------------------------------------------------- */

static oracle_model *kept_model[2]; /* one-thread, threaded: the targets' models, kept */

static int run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res,
               oracle_model *m) {
  memset(res, 0, sizeof *res);
  res->first_op = -1;
  runner r = {0};
  r.opt = opt;
  r.b = opt->backend;
  r.m = m;
  r.res = res;
  r.out = opt->out != NULL ? opt->out : stderr;
  r.threaded = opt->threaded;
  if (r.threaded && !(r.b->caps & FUZZ_CAP_THREADS)) {
    fprintf(r.out, "the %s backend cannot run domains on threads of their own\n", r.b->name);
    return -1;
  }
  r.cells = r.threaded ? THREAD_CELLS : BANK_CELLS;
  r.cell_self = r.cells;
  for (unsigned d = 0; d < FUZZ_DOMAINS; d++) {
    r.muts[d] = (runner_mut){.bank = r.threaded ? d * (size_t)BANK_CELLS : 0, .on = d};
  }
  r.muts[0].on = 0;
  runner_current = &r.muts[0];
  fuzz_backend_config cfg = {r.cells,
                             r.threaded ? FUZZ_DOMAINS : 1,
                             opt->params,
                             r.out,
                             {&r, runner_on_finalize, runner_on_finding}};
  r.h = r.b->create(&cfg);
  if (r.h == NULL) {
    runner_current = NULL;
    return -1;
  }
  if (r.b->caps & FUZZ_CAP_CONSERVATIVE) {
    r.b->range_add(r.h, r.ranges, RANGE_WORDS);
  }
  r.set = opt->ops != NULL ? opt->ops : r.threaded ? oracle_opset_threads(r.b) : oracle_opset(r.b);
  r.data = data;
  r.size = size;
  if (r.threaded) {
    if (runner_run_threads(&r) <= 0) {
      /* Stuck (reported) or out of memory: the parked threads hold the heap; it is left as it
       * is, never used again (fuzz/sched.h). */
      free(r.seen);
      runner_current = NULL;
      return res->violations ? 1 : -1;
    }
  } else {
    fuzz_decoder dec;
    fuzz_op op;
    fuzz_decoder_init(&dec, r.set, data, size);
    while (fuzz_program_next(&dec, &op)) {
      r.muts[0].op = &op;
      runner_trace_op(&r, &op);
      runner_run_op(&r, &op);
      res->ops++;
    }
  }
  r.muts[0].op = NULL;
  runner_unblock(&r); /* the final checks run on the domain the program is on */
  /* The end: a full collection and every check of one, on the domain the program is on (the
   * backend's destroy ends the others). */
  runner_collect(&r, FUZZ_COLLECT_FULL, 0);
  res->collects = oracle_model_collects(m);
  if (r.b->rare_counts != NULL && r.b->rare_event_count <= FUZZ_RARE_EVENTS_MAX)
    r.b->rare_counts(r.h, res->rare);
  r.b->destroy(r.h);
  free(r.seen);
  runner_current = NULL;
  return res->violations ? 1 : 0;
}

int oracle_run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res) {
  oracle_model *m = oracle_model_create(opt->threaded ? THREAD_CELLS : BANK_CELLS);
  if (m == NULL) return -1;
  int rc = run(data, size, opt, res, m);
  oracle_model_destroy(m);
  return rc;
}

int oracle_target_run_one(const fuzz_backend *b, int threaded, const uint8_t *data, size_t size) {
  oracle_model **kept = &kept_model[threaded != 0];
  if (*kept == NULL && (*kept = oracle_model_create(threaded ? THREAD_CELLS : BANK_CELLS)) == NULL)
    abort();
  oracle_model_reset(*kept);
  oracle_options opt = {b, NULL, 1, stderr, NULL, NULL, threaded != 0, NULL, threaded == 2};
  oracle_result res;
  if (run(data, size, &opt, &res, *kept) < 0) abort(); /* no heap: nothing can be tested */
  return 0;
}

_Static_assert(RANGE_WORDS == ORACLE_RANGE_WORDS, "the model keeps an object a range word");
