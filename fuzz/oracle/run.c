/* Running a program through a backend (run.h): the heap's life, the ops in order, the final
 * checks. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/program.h"
#include "fuzz/oracle/runner.h"

/* ---- Running ------------------------------------------------------------------------------- */

static oracle_model *kept_model;

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
  fuzz_backend_config cfg = {
      CELLS, opt->params, r.out, {&r, runner_on_finalize, runner_on_finding}};
  r.h = r.b->create(&cfg);
  if (r.h == NULL) return -1;
  if (r.b->caps & FUZZ_CAP_CONSERVATIVE) {
    r.b->range_add(r.h, r.ranges, RANGE_WORDS);
  }
  r.set = opt->ops != NULL ? opt->ops : oracle_opset(r.b);
  r.data = data;
  r.size = size;
  fuzz_decoder dec;
  fuzz_op op;
  fuzz_decoder_init(&dec, r.set, data, size);
  while (fuzz_program_next(&dec, &op)) {
    r.op = &op;
    runner_trace_op(&r, &op);
    runner_run_op(&r, &op);
    res->ops++;
  }
  r.op = NULL;
  /* The end: a full collection and every check of one, on the domain the program is on (the
   * backend's destroy ends the others). */
  runner_collect(&r, FUZZ_COLLECT_FULL, 0);
  res->collects = oracle_model_collects(m);
  r.b->destroy(r.h);
  free(r.seen);
  return res->violations ? 1 : 0;
}

int oracle_run(const uint8_t *data, size_t size, const oracle_options *opt, oracle_result *res) {
  oracle_model *m = oracle_model_create(CELLS);
  if (m == NULL) return -1;
  int rc = run(data, size, opt, res, m);
  oracle_model_destroy(m);
  return rc;
}

int oracle_target_run_one(const fuzz_backend *b, const uint8_t *data, size_t size) {
  if (kept_model == NULL && (kept_model = oracle_model_create(CELLS)) == NULL) abort();
  oracle_model_reset(kept_model);
  oracle_options opt = {b, NULL, 1, stderr, NULL, NULL};
  oracle_result res;
  if (run(data, size, &opt, &res, kept_model) < 0) abort(); /* no heap: nothing can be tested */
  return 0;
}

_Static_assert(RANGE_WORDS == ORACLE_RANGE_WORDS, "the model keeps an object a range word");
