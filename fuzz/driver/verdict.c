/* Violations (see verdict.h): printed with the op they are attributed to, and counted. */
#include "fuzz/driver/verdict.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/text.h"

const char *const fuzz_pass_names[FUZZ_PASS_COUNT] = {"reach", "swept", "checkmark", "model",
                                                      "driver"};

static void describe_op(const fuzz_op *op, char *buf, size_t len) {
  char text[FUZZ_OP_TEXT_MAX];
  fuzz_op_format(op, text, sizeof text);
  snprintf(buf, len, "op %zu `%s` (byte offset %zu)", op->index, text, op->offset);
}

/* Where the cycle of a violation came from, and the op m was running when it was found. */
static void print_attribution(driver *d, const mutator *m) {
  if (d->cycle_op >= 0) {
    char text[FUZZ_OP_TEXT_MAX];
    fuzz_op_format(&d->cycle_op_copy, text, sizeof text);
    fprintf(d->out, "  cycle started by op %ld `%s`\n", d->cycle_op, text);
  } else {
    fprintf(d->out, "  cycle started by the driver's final full collection\n");
  }
  if (m->op != NULL && (long)m->op->index != d->cycle_op) {
    char buf[FUZZ_OP_TEXT_MAX + 48];
    describe_op(m->op, buf, sizeof buf);
    fprintf(d->out, "  found while running %s\n", buf);
  } else if (m->op == NULL && d->cycle_op >= 0) {
    fprintf(d->out, "  found during the driver's final full collection\n");
  }
}

/* pass -1: a violation the verifier counted but did not keep (its pass is unknown). */
static void note_violation(driver *d, int pass, const char *kind, long op) {
  d->res->violations++;
  if (pass >= 0) d->res->pass_violations[pass]++;
  if (d->res->first_kind[0] == '\0') {
    snprintf(d->res->first_kind, sizeof d->res->first_kind, "%s", kind);
    d->res->first_op = op;
  }
}

static void finish_violation(driver *d) {
  fflush(d->out);
  if (d->opt->abort_on_violation) abort();
}

void drv_violation(driver *d, const mutator *m, const char *kind, const char *fmt, ...) {
  note_violation(d, PASS_DRIVER, kind, m->op != NULL ? (long)m->op->index : -1);
  fprintf(d->out, "VIOLATION %s (pass driver)\n", kind);
  if (m->op != NULL) {
    char buf[FUZZ_OP_TEXT_MAX + 48];
    describe_op(m->op, buf, sizeof buf);
    fprintf(d->out, "  at %s\n", buf);
  } else {
    fprintf(d->out, "  in the driver's final checks\n");
  }
  fprintf(d->out, "  what: ");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(d->out, fmt, ap);
  va_end(ap);
  fprintf(d->out, "\n\n");
  finish_violation(d);
}

void drv_expect_error(driver *d, const mutator *m, gc_error got, gc_error want, const char *call) {
  drv_check_made(d);
  if (got != want) {
    drv_violation(d, m, "driver.api-error", "%s returned %s, expected %s (last error: %s)", call,
                  gc_error_name(got), gc_error_name(want), gc_last_error_message(d->heap));
  }
  gc_clear_error(d->heap);
}

static int pass_index(const char *pass) {
  for (int p = 0; p < FUZZ_PASS_COUNT; p++) {
    if (strcmp(fuzz_pass_names[p], pass) == 0) return p;
  }
  return PASS_DRIVER;
}

void drv_report_passes(driver *d, const mutator *m, const gc_verify_reports *reports,
                       const char *how) {
  for (size_t i = 0; i < reports->count; i++) {
    const gc_verify_report *r = &reports->items[i];
    const char *kind = gc_verify_kind_name(r->kind);
    note_violation(d, pass_index(gc_verify_kind_pass(r->kind)), kind, d->cycle_op);
    fprintf(d->out, "VIOLATION %s (pass %s, cycle %llu, at %s)\n", kind,
            gc_verify_kind_pass(r->kind), (unsigned long long)r->cycle, r->point);
    if (how != NULL) fprintf(d->out, "  %s\n", how);
    print_attribution(d, m);
    gc_verify_report_print(r, d->out);
  }
  for (size_t i = 0; i < reports->dropped; i++)
    note_violation(d, -1, "verify.dropped", d->cycle_op);
  if (reports->dropped > 0) fprintf(d->out, "(%zu more violations not kept)\n\n", reports->dropped);
  const char *dot = getenv("GCFUZZ_VERIFY_DOT");
  if (dot != NULL && dot[0] != '\0' && reports->count > 0 &&
      d->res->violations == reports->count + reports->dropped) {
    if (gc_verify_report_write_dot(&reports->items[0], dot)) {
      fprintf(d->out, "neighbourhood of the first violation written to %s\n", dot);
    }
  }
  finish_violation(d);
}

void drv_count_pass_runs(driver *d) {
  static const unsigned bits[] = {GC_VERIFY_REACH, GC_VERIFY_SWEPT, GC_VERIFY_CHECKMARK,
                                  GC_VERIFY_MODEL};
  for (int p = 0; p < 4; p++) d->res->pass_runs[p] = (size_t)gc_verify_runs(d->verifier, bits[p]);
}
