/* Violations (see verdict.h): printed with the op they are attributed to, and counted. */
#include "fuzz/driver/verdict.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/lang/text.h"
#include "invariants/verdict.h"

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

/* GC_VPASS_COUNT: a violation the verifier counted but did not keep (its pass is unknown). */
static void note_violation(driver *d, gc_verify_pass_id pass, const char *kind, long op) {
  d->res->violations++;
  if (pass < GC_VPASS_COUNT) d->res->pass_violations[pass]++;
  if (d->res->first_kind[0] == '\0') {
    snprintf(d->res->first_kind, sizeof d->res->first_kind, "%s", kind);
    d->res->first_op = op;
  }
}

void drv_violation(driver *d, const mutator *m, gc_verify_kind kind, const char *fmt, ...) {
  long op = m->op != NULL ? (long)m->op->index : -1;
  note_violation(d, GC_VPASS_DRIVER, gc_verify_kind_name(kind), op);
  fprintf(d->out, "VIOLATION %s (pass %s)\n", gc_verify_kind_name(kind), gc_verify_kind_pass(kind));
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
  gc_verdict v = {
      .kind = gc_verify_kind_name(kind),
      .pass = gc_verify_kind_pass(kind),
      .point = m->op != NULL ? gc_verify_kind_point(kind) : "final",
      .op = op,
      .cycle = d->cycles_seen,
  };
  gc_verdict_print(d->out, &v);
  if (d->opt->abort_on_violation) abort();
}

/* The name of each gc_error, as the driver expects gc_error_name to give it (the op language's
 * and every message's names). */
static const char *const error_names[] = {
    [GC_OK] = "ok",
    [GC_ERR_NOMEM] = "nomem",
    [GC_ERR_ZERO_SIZE] = "zero-size",
    [GC_ERR_TOO_LARGE] = "too-large",
    [GC_ERR_BAD_TAG] = "bad-tag",
    [GC_ERR_UNKNOWN_ROOT] = "unknown-root",
    [GC_ERR_DUP_ROOT] = "duplicate-root",
    [GC_ERR_FRAME_ORDER] = "frame-order",
    [GC_ERR_PARAM] = "param",
    [GC_ERR_NOT_BLOCK] = "not-block",
    [GC_ERR_NO_FINALIZER] = "no-finalizer",
    [GC_ERR_UNKNOWN_RANGE] = "unknown-range",
    [GC_ERR_MAIN_DOMAIN] = "main-domain",
    [GC_ERR_IN_COLLECTION] = "in-collection",
};

void drv_expect_error(driver *d, const mutator *m, gc_error got, gc_error want, const char *call) {
  drv_check_made(d);
  gc_error last = gc_last_error(d->heap);
  if (got != want) {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "%s returned %s, expected %s (last error: %s)",
                  call, gc_error_name(got), gc_error_name(want), gc_last_error_message(d->heap));
  } else if (want != GC_OK) {
    /* gc.h, "Errors": the call fails and the heap records why, readable with a message until
     * cleared. (A success records nothing and clears nothing: no check then.) */
    const char *message = gc_last_error_message(d->heap);
    drv_check_made(d);
    if (last != got) {
      drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "%s returned %s, but gc_last_error says %s", call,
                    gc_error_name(got), gc_error_name(last));
    } else if (message == NULL || message[0] == '\0') {
      drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                    "%s recorded %s with an empty gc_last_error_message", call, gc_error_name(got));
    }
  }
  gc_clear_error(d->heap);
  /* Cleared: no error, and the message "" (gc.h: "" when GC_OK). */
  drv_check_made(d);
  last = gc_last_error(d->heap);
  const char *message = gc_last_error_message(d->heap);
  if (last != GC_OK || message == NULL || message[0] != '\0') {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "after %s, gc_clear_error left gc_last_error %s, message \"%s\"", call,
                  gc_error_name(last), message != NULL ? message : "(null)");
  }
}

void drv_check_error_api(driver *d, const mutator *m) {
  for (size_t e = 0; e < sizeof error_names / sizeof error_names[0]; e++) {
    const char *name = gc_error_name((gc_error)e);
    drv_check_made(d);
    if (name == NULL || strcmp(name, error_names[e]) != 0) {
      drv_violation(d, m, GC_VK_DRIVER_API_ERROR, "gc_error_name(%zu) is \"%s\", expected \"%s\"",
                    e, name != NULL ? name : "(null)", error_names[e]);
    }
  }
  /* gc.h: GC_OK while the thread's last recorded error was for another heap (a fuzz target's
   * previous program's) or none was recorded yet. */
  drv_check_made(d);
  gc_error last = gc_last_error(d->heap);
  const char *message = gc_last_error_message(d->heap);
  if (last != GC_OK || message == NULL || message[0] != '\0') {
    drv_violation(d, m, GC_VK_DRIVER_API_ERROR,
                  "a new heap, before its first op: gc_last_error is %s, message \"%s\"",
                  gc_error_name(last), message != NULL ? message : "(null)");
  }
}

void drv_report_passes(driver *d, const mutator *m, const gc_verify_reports *reports,
                       const char *how) {
  /* The Graphviz file shows the program's first violation only: a later one is usually a
   * consequence of it. */
  int first = d->res->violations == 0;
  for (size_t i = 0; i < reports->count; i++) {
    const gc_verify_report *r = &reports->items[i];
    const char *kind = gc_verify_kind_name(r->kind);
    note_violation(d, gc_verify_kind_pass_id(r->kind), kind, d->cycle_op);
    fprintf(d->out, "VIOLATION %s (pass %s, cycle %llu, at %s)\n", kind,
            gc_verify_kind_pass(r->kind), (unsigned long long)r->cycle, r->point);
  }
  for (size_t i = 0; i < reports->dropped; i++) {
    note_violation(d, GC_VPASS_COUNT, "verify.dropped", d->cycle_op);
  }
  if (how != NULL) fprintf(d->out, "  %s\n", how);
  print_attribution(d, m);
  const char *dot = first ? gc_verify_dot_path(d->verifier) : NULL;
  if (d->opt->abort_on_violation) gc_verify_fail_and_abort(reports, d->cycle_op, dot, d->out);
  gc_verify_reports_emit(reports, d->cycle_op, dot, d->out);
  fputc('\n', d->out);
}

void drv_count_pass_runs(driver *d) {
  for (gc_verify_pass_id p = 0; p < GC_VPASS_COUNT; p++) {
    unsigned bit = gc_verify_pass_mask(p);
    if (bit != 0) d->res->pass_runs[p] = (size_t)gc_verify_runs(d->verifier, bit);
  }
}
