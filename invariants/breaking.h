/* Helpers for the tests that break heaps on purpose: a heap from a parameter string, a chained
 * hook that runs a corruption at one point of the next cycle, the check that a pass reported
 * exactly one kind of violation and nothing else, what a pass printed on stderr, and a heap whose
 * blocks one holder keeps. Test-only
 * (header-only, static functions). */
#ifndef INVARIANTS_BREAKING_H
#define INVARIANTS_BREAKING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "gc/heap.h"
#include "gc/large.h"
#include "gc/pool.h"
#include "invariants/report.h"
#include "invariants/verify.h"

/* A heap with the defaults plus `params` (GCFUZZ_PARAMS syntax; NULL for none). Never reads the
 * environment, so a developer's GCFUZZ_PARAMS cannot change what a test checks. */
static inline gc_heap *breaking_heap(const char *params) {
  gc_config cfg;
  gc_config_default(&cfg);
  char err[200];
  if (params != NULL && gc_config_parse(&cfg, params, err, sizeof err) != GC_OK) {
    fprintf(stderr, "breaking_heap: %s\n", err);
    abort();
  }
  gc_heap *h = gc_heap_create(&cfg);
  if (h == NULL) abort();
  return h;
}

/* At least one report, and every report of `kind`; prints them all when not. */
#define CHECK_ONLY_KIND(reports, kind) check_only_kind((reports), (kind), __FILE__, __LINE__)

static inline void check_only_kind(const gc_verify_reports *r, gc_verify_kind kind,
                                   const char *file, int line) {
  size_t of_kind = gc_verify_reports_count_kind(r, kind);
  if (r->count > 0 && of_kind == r->count && r->dropped == 0) return;
  fprintf(stderr, "%s:%d: CHECK failed: expected only %s, got %zu report(s), %zu of that kind:\n",
          file, line, gc_verify_kind_name(kind), r->count + r->dropped, of_kind);
  gc_verify_reports_print(r, stderr);
  check_failures++;
}

#define CHECK_NO_REPORT(reports) check_no_report((reports), __FILE__, __LINE__)

/* A report here is a finding of the collector, not of the test: each prints its verdict line too,
 * so what reads the output (the bug zoo) sees which check found it. */
static inline void check_no_report(const gc_verify_reports *r, const char *file, int line) {
  if (r->count == 0 && r->dropped == 0) return;
  fprintf(stderr, "%s:%d: CHECK failed: expected no report, got:\n", file, line);
  gc_verify_reports_emit(r, -1, NULL, stderr);
  check_failures++;
}

/* A hook that runs `fn(heap, arg)` once, at `point` of a later cycle, before the verifier's
 * passes: install it first, then gc_verify_install (which chains it). */
typedef void (*breaking_fn)(gc_heap *heap, void *arg);
typedef struct breaking_hook {
  gc_hook_point point;
  breaking_fn fn;
  void *arg;
  int armed; /* fires when set, then clears itself */
  int fired;
} breaking_hook;

static inline void breaking_hook_run(gc_heap *heap, gc_hook_point point, void *user) {
  breaking_hook *b = user;
  if (!b->armed || point != b->point) return;
  b->armed = 0;
  b->fired++;
  b->fn(heap, b->arg);
}

static inline void breaking_hook_set(gc_heap *heap, breaking_hook *b, gc_hook_point point,
                                     breaking_fn fn, void *arg) {
  b->point = point;
  b->fn = fn;
  b->arg = arg;
  b->armed = 0;
  b->fired = 0;
  gc_set_hook(heap, breaking_hook_run, b);
}

/* What `run` prints on stderr (the first 4 KiB; a static buffer, valid until the next call):
 * for the messages a pass prints instead of a report, such as running out of memory. */
static inline const char *breaking_stderr_of(void (*run)(void *), void *arg) {
  static char text[4096];
  FILE *tmp = tmpfile();
  if (tmp == NULL) abort();
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  run(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t n = pread(fileno(tmp), text, sizeof text - 1, 0);
  text[n > 0 ? (size_t)n : 0] = '\0';
  fclose(tmp);
  return text;
}

/* Switch the running domain of a one-thread test: from `from` (running) to `to` (in a blocking
 * section), so a collection from either finds the world stoppable. */
static inline void breaking_switch_domain(gc_domain *from, gc_domain *to) {
  gc_enter_blocking(from);
  gc_leave_blocking(to);
}

/* Repaint v's header colour. */
static inline void set_colour(gc_value v, gc_header colour) {
  gc_header *hp = (gc_header *)v - 1;
  *hp = (*hp & ~GC_HD_COLOUR_MASK) | colour;
}

static inline gc_header colour_of(gc_value v) { return ((gc_header *)v)[-1] & GC_HD_COLOUR_MASK; }

/* ---- A heap whose blocks one holder keeps ---------------------------------------------------- */

/* A heap (breaking_heap(params)) with a verifier installed in collect mode, and BREAKING_HOLD
 * blocks made by alloc(d, i) on its main domain, every third left garbage, the others in the
 * fields of one rooted holder block: what the stats and space tests break. The caller collects. */
enum { BREAKING_HOLD = 3000 };

typedef struct breaking_holder {
  gc_heap *h;
  gc_domain *d;
  gc_verifier *v;
  gc_value holder;
} breaking_holder;

static inline void breaking_holder_build(breaking_holder *f, const char *params,
                                         gc_value (*alloc)(gc_domain *d, size_t i)) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  f->v = gc_verify_install(f->h, GC_VERIFY_COLLECT);
  gc_root_register(f->h, &f->holder);
  f->holder = gc_alloc(f->d, BREAKING_HOLD, GC_TAG_SCAN);
  for (size_t i = 0; i < BREAKING_HOLD; i++) {
    gc_value v = alloc(f->d, i);
    if (i % 3 != 0) GC_FIELD(f->holder, i) = v;
  }
}

static inline void breaking_holder_free(breaking_holder *f) {
  gc_verify_uninstall(f->v);
  gc_root_unregister(f->h, &f->holder);
  gc_heap_destroy(f->h);
}

/* The pass `pass` (a GC_VERIFY_* bit) run now through the verifier, as the corrupt op runs it:
 * only `kind` (and its count returned), or nothing at all. */
static inline void breaking_expect_only(gc_verifier *v, unsigned pass, gc_verify_kind kind) {
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  size_t n = gc_verify_pass_now(v, pass, &out);
  CHECK_ONLY_KIND(&out, kind);
  CHECK_EQ_U(n, out.count);
  gc_verify_reports_free(&out);
}

static inline void breaking_expect_clean(gc_verifier *v, unsigned pass) {
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_pass_now(v, pass, &out), 0);
  CHECK_NO_REPORT(&out);
  gc_verify_reports_free(&out);
}

#endif /* INVARIANTS_BREAKING_H */
