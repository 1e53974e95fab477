/* The oracle tests' run of a program: its result and everything the oracle printed, kept. */
#ifndef FUZZ_ORACLE_OUTCOME_H
#define FUZZ_ORACLE_OUTCOME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/oracle/run.h"

typedef struct outcome {
  int rc;
  oracle_result res;
  char *text; /* what the oracle printed (free it) */
  size_t len;
} outcome;

/* Run `data` on backend b with the op set `ops` (NULL: the backend's), threaded or not. */
static inline void outcome_run(const fuzz_backend *b, const fuzz_opset *ops, int threaded,
                               const uint8_t *data, size_t size, outcome *o) {
  memset(o, 0, sizeof *o);
  FILE *out = open_memstream(&o->text, &o->len);
  if (out == NULL) abort();
  oracle_options opt = {b, ops, 0, out, NULL, NULL, threaded, NULL};
  o->rc = oracle_run(data, size, &opt, &o->res);
  fclose(out);
}

#endif /* FUZZ_ORACLE_OUTCOME_H */
