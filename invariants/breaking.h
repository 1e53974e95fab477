/* Helpers for the tests that break heaps on purpose: a heap from a parameter string, a chained
 * hook that runs a corruption at one point of the next cycle, and the check that a pass reported
 * exactly one kind of violation and nothing else. Test-only (header-only, static functions). */
#ifndef INVARIANTS_BREAKING_H
#define INVARIANTS_BREAKING_H

#include <stdio.h>
#include <stdlib.h>

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

static inline void check_no_report(const gc_verify_reports *r, const char *file, int line) {
  if (r->count == 0 && r->dropped == 0) return;
  fprintf(stderr, "%s:%d: CHECK failed: expected no report, got:\n", file, line);
  gc_verify_reports_print(r, stderr);
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

/* Repaint v's header colour. */
static inline void set_colour(gc_value v, gc_header colour) {
  gc_header *hp = (gc_header *)v - 1;
  *hp = (*hp & ~GC_HD_COLOUR_MASK) | colour;
}

static inline gc_header colour_of(gc_value v) { return ((gc_header *)v)[-1] & GC_HD_COLOUR_MASK; }

#endif /* INVARIANTS_BREAKING_H */
