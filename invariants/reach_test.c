/* The reach pass: a clean heap passes; each deliberate corruption of a reachable block is reported
 * as exactly its kind, with the path from the root. */
#include <string.h>

#include "invariants/breaking.h"
#include "invariants/pass.h"

/* The fixture graph, rooted in global root `root`:
 *   a (3 fields) -> [0] b, [1] 42, [2] big
 *   b (2 fields) -> [0] c, [1] raw
 *   c (1 field)  -> 7
 *   big (200 fields, a large block) -> [5] c
 *   raw (2 words, raw) */
typedef struct fixture {
  gc_heap *h;
  gc_domain *d;
  gc_value root;
  gc_value a, b, c, big, raw;
} fixture;

static void fixture_build(fixture *f, const char *params) {
  memset(f, 0, sizeof *f);
  f->h = breaking_heap(params);
  f->d = gc_main_domain(f->h);
  gc_root_register(f->h, &f->root);
  f->a = f->root = gc_alloc(f->d, 3, GC_TAG_SCAN);
  f->b = gc_alloc(f->d, 2, GC_TAG_SCAN);
  GC_FIELD(f->a, 0) = f->b;
  GC_FIELD(f->a, 1) = gc_val_int(42);
  f->c = gc_alloc(f->d, 1, GC_TAG_SCAN);
  GC_FIELD(f->b, 0) = f->c;
  GC_FIELD(f->c, 0) = gc_val_int(7);
  f->raw = gc_alloc(f->d, 2, GC_TAG_RAW);
  GC_FIELD(f->b, 1) = f->raw;
  f->big = gc_alloc(f->d, 200, GC_TAG_SCAN);
  GC_FIELD(f->a, 2) = f->big;
  GC_FIELD(f->big, 5) = f->c;
  /* Garbage around the live blocks, so slots are reused and free lists are not trivial. */
  for (int i = 0; i < 500; i++) gc_alloc(f->d, 1 + i % 5, GC_TAG_SCAN);
  gc_collect(f->d, GC_COLLECT_FULL);
}

static void fixture_free(fixture *f) {
  gc_root_unregister(f->h, &f->root);
  gc_heap_destroy(f->h);
}

/* Run reach, check it reported only `kind`, on `block`, and return the first report's path
 * length (or -1). */
static long reach_expect(fixture *f, gc_verify_reports *out, gc_verify_kind kind, gc_value block) {
  gc_verify_reports_init(out);
  size_t n = gc_verify_reach(f->h, out);
  CHECK_ONLY_KIND(out, kind);
  CHECK_EQ_U(n, out->count);
  if (out->count == 0) return -1;
  CHECK(out->items[0].block == block);
  CHECK(strcmp(out->items[0].point, "direct") == 0);
  return (long)out->items[0].path_len;
}

static void ignore_finalizer(gc_heap *heap, gc_value block, void *user) {}

static void clean_heap_passes(void) {
  fixture f;
  fixture_build(&f, NULL);
  /* Every root kind: a frame, a pinned block, and the global root. */
  gc_value local[2] = {0, 0};
  gc_frame frame;
  gc_frame_push(f.d, &frame, local, 2);
  local[0] = gc_alloc(f.d, 4, GC_TAG_SCAN);
  gc_value pinned = gc_alloc(f.d, 2, GC_TAG_SCAN);
  GC_FIELD(pinned, 0) = gc_alloc(f.d, 1, GC_TAG_RAW);
  gc_pin(f.h, pinned);
  GC_FIELD(local[0], 3) = pinned;
  /* A conservative word pointing into the middle of a block: a root, not an interior pointer. */
  static uintptr_t words[3];
  gc_value only_conservative = gc_alloc(f.d, 5, GC_TAG_SCAN);
  GC_FIELD(only_conservative, 4) = gc_alloc(f.d, 2, GC_TAG_SCAN);
  words[1] = (uintptr_t)only_conservative + 3 * sizeof(gc_value);
  words[2] = 12345; /* not a pointer: ignored */
  gc_conservative_add(f.h, words, sizeof words);
  /* A block with a finalizer, unreachable: queued at the next mark, its referents kept. */
  gc_value finalizable = gc_alloc(f.d, 2, GC_TAG_SCAN);
  GC_FIELD(finalizable, 0) = gc_alloc(f.d, 1, GC_TAG_RAW);
  gc_finalizer_set(f.h, finalizable, ignore_finalizer, NULL);
  gc_collect(f.d, GC_COLLECT_MAJOR); /* lazily sweeping now: reach must still pass */
  gc_verify_reports out;
  gc_verify_reports_init(&out);
  CHECK_EQ_U(gc_verify_reach(f.h, &out), 0);
  CHECK_NO_REPORT(&out);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_EQ_U(gc_verify_reach(f.h, &out), 0);
  CHECK_NO_REPORT(&out);
  gc_frame_pop(f.d, &frame);
  gc_conservative_remove(f.h, words);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* INV-HD-1: b's slot looks free although a reaches it. */
static void zero_header(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_header saved = ((gc_header *)f.b)[-1];
  ((gc_header *)f.b)[-1] = 0;
  gc_verify_reports out;
  CHECK_EQ_U(reach_expect(&f, &out, GC_VK_REACH_ZERO_HEADER, f.b), 1);
  if (out.count > 0) {
    const gc_verify_report *r = &out.items[0];
    CHECK(strstr(r->origin, "global root #0") != NULL);
    CHECK(r->path[0].block == f.a && r->path[0].field == 0);
    CHECK(r->has_header && r->header == 0);
    CHECK(strstr(r->where, "slot") != NULL);
    gc_verify_reports_print(&out, stderr); /* the README quotes this one */
  }
  ((gc_header *)f.b)[-1] = saved;
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* A field pointing one word into b: not a slot start (INV-POOL-1). */
static void interior_pointer_into_slot(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(f.a, 1) = f.b + sizeof(gc_value);
  gc_verify_reports out;
  CHECK_EQ_U(reach_expect(&f, &out, GC_VK_REACH_INTERIOR_POINTER, f.b + sizeof(gc_value)), 1);
  if (out.count > 0) {
    CHECK(out.items[0].path[0].field == 1);
    CHECK(strstr(out.items[0].where, "word 1 of slot") != NULL);
  }
  GC_FIELD(f.a, 1) = gc_val_int(42);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

static void interior_pointer_into_large(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(f.c, 0) = f.big + 16 * sizeof(gc_value);
  gc_verify_reports out;
  reach_expect(&f, &out, GC_VK_REACH_INTERIOR_POINTER, f.big + 16 * sizeof(gc_value));
  if (out.count > 0) CHECK(strstr(out.items[0].where, "inside large block") != NULL);
  GC_FIELD(f.c, 0) = gc_val_int(7);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

static gc_value not_in_heap[4];

static void foreign_pointer(void) {
  fixture f;
  fixture_build(&f, NULL);
  GC_FIELD(f.big, 100) = (gc_value)&not_in_heap[2];
  gc_verify_reports out;
  CHECK_EQ_U(reach_expect(&f, &out, GC_VK_REACH_FOREIGN_POINTER, (gc_value)&not_in_heap[2]), 2);
  if (out.count > 0)
    CHECK(out.items[0].path[1].block == f.big && out.items[0].path[1].field == 100);
  GC_FIELD(f.big, 100) = 0;
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* INV-COL-1: a reachable block coloured GARBAGE (the next sweep would free it). */
static void reachable_garbage(void) {
  fixture f;
  fixture_build(&f, NULL);
  set_colour(f.c, f.h->colours.garbage);
  gc_verify_reports out;
  reach_expect(&f, &out, GC_VK_REACH_BAD_COLOUR, f.c);
  CHECK_EQ_U(out.count, 1); /* c is reached twice (b and big) but reported once */
  if (out.count > 0) CHECK(strstr(out.items[0].what, "GARBAGE") != NULL);
  set_colour(f.c, f.h->colours.unmarked);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* No block may be MARKED between cycles. */
static void reachable_marked(void) {
  fixture f;
  fixture_build(&f, NULL);
  set_colour(f.big, f.h->colours.marked);
  gc_verify_reports out;
  reach_expect(&f, &out, GC_VK_REACH_BAD_COLOUR, f.big);
  set_colour(f.big, f.h->colours.unmarked);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* b's header replaced by `hd` for one reach run, then put back: reach.bad-header on b, its
 * reports in *out. */
static void expect_bad_header(fixture *f, gc_header hd, gc_verify_reports *out) {
  gc_header *hp = (gc_header *)f->b - 1;
  gc_header saved = *hp;
  *hp = hd;
  reach_expect(f, out, GC_VK_REACH_BAD_HEADER, f->b);
  *hp = saved;
}

/* A header whose size does not fit the slot it sits in. */
static void oversized_header(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_verify_reports out;
  expect_bad_header(&f, gc_hd_make(50, gc_hd_colour(gc_hd_val(f.b)), GC_TAG_SCAN), &out);
  /* Its neighbourhood takes b's children from b's slot only (2 fields in a 3-word slot), not from
   * the words the header claims past it: the next slots, or memory after the pool. */
  if (out.count > 0) {
    const gc_verify_report *r = &out.items[0];
    for (size_t i = 0; i < r->edge_count; i++) {
      if (r->edges[i].from == 0) CHECK(r->edges[i].field < 2);
    }
  }
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* A header with a colour and no size: no block has 0 fields (INV-HD-1), so it is a free slot
 * something painted, reached through a field. */
static void sizeless_header(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_verify_reports out;
  expect_bad_header(&f, gc_hd_colour(gc_hd_val(f.b)), &out);
  if (out.count > 0) CHECK(strstr(out.items[0].what, "no size") != NULL);
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* A path through a long list: the report names every step (the printer shortens it). */
static void long_path(void) {
  fixture f;
  fixture_build(&f, NULL);
  gc_value cell = f.c;
  for (int i = 0; i < 1000; i++) {
    gc_value next = gc_alloc(f.d, 1, GC_TAG_SCAN);
    GC_FIELD(cell, 0) = next;
    cell = next;
  }
  ((gc_header *)cell)[-1] = 0;
  gc_verify_reports out;
  long len = reach_expect(&f, &out, GC_VK_REACH_ZERO_HEADER, cell);
  CHECK(len == 1002 || len == 1001); /* a -> b -> c -> ... or a -> big -> c -> ... */
  gc_verify_reports_free(&out);
  fixture_free(&f);
}

/* Through the hook: the corruption happens at GC_HOOK_CYCLED, before reach runs. */
static void garbage_c(gc_heap *h, void *arg) { set_colour(*(gc_value *)arg, h->colours.garbage); }

static void through_the_hook(void) {
  fixture f;
  fixture_build(&f, "verify=reach");
  breaking_hook b;
  breaking_hook_set(f.h, &b, GC_HOOK_CYCLED, garbage_c, &f.c);
  gc_verifier *v = gc_verify_install(f.h, GC_VERIFY_COLLECT);
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_NO_REPORT(gc_verify_reports_of(v)); /* not armed yet */
  b.armed = 1;
  gc_collect(f.d, GC_COLLECT_MAJOR);
  CHECK_EQ_U(b.fired, 1);
  CHECK_ONLY_KIND(gc_verify_reports_of(v), GC_VK_REACH_BAD_COLOUR);
  const gc_verify_reports *r = gc_verify_reports_of(v);
  if (r->count > 0) CHECK(strcmp(r->items[0].point, "cycled") == 0);
  CHECK_EQ_U(gc_verify_runs(v, GC_VERIFY_REACH), 2);
  /* At the hook the walk ran without paths, met the violation and walked again with them; a
   * direct call walks with paths at once. Both report the same block by the same path. */
  gc_verify_reports direct;
  gc_verify_reports_init(&direct);
  CHECK_EQ_U(gc_verify_reach(f.h, &direct), r->count);
  CHECK_ONLY_KIND(&direct, GC_VK_REACH_BAD_COLOUR);
  if (r->count > 0 && direct.count > 0) {
    const gc_verify_report *h = &r->items[0], *d = &direct.items[0];
    CHECK(h->block == d->block && h->block == f.c);
    CHECK(h->path_len > 0 && strstr(h->origin, "global root #0") != NULL);
    CHECK(strcmp(h->origin, d->origin) == 0);
    CHECK_EQ_U(h->path_len, d->path_len);
    for (size_t i = 0; i < h->path_len && i < d->path_len; i++) {
      CHECK(h->path[i].block == d->path[i].block && h->path[i].field == d->path[i].field);
    }
  }
  gc_verify_reports_free(&direct);
  /* Undo before the sweep frees c, then the next cycle is clean again. */
  set_colour(f.c, f.h->colours.unmarked);
  gc_verify_clear(v);
  gc_collect(f.d, GC_COLLECT_FULL);
  CHECK_NO_REPORT(gc_verify_reports_of(v));
  gc_verify_uninstall(v);
  fixture_free(&f);
}

typedef struct limited_run {
  gc_verifier *v;
  gc_verify_scratch *scratch; /* the verifier's, whose limits a test lowers */
  gc_verify_reports out;
  size_t found;
} limited_run;

static void limited_begin(limited_run *l, gc_heap *h) {
  l->v = gc_verify_install(h, GC_VERIFY_COLLECT);
  l->scratch = gc_verify_scratch_create();
  CHECK(l->v != NULL && l->scratch != NULL);
  gc_verify_use_scratch(l->v, l->scratch);
  gc_verify_reports_init(&l->out);
}

static void limited_end(limited_run *l) {
  gc_verify_reports_free(&l->out);
  gc_verify_uninstall(l->v);
  gc_verify_scratch_destroy(l->scratch);
}

static void run_reach_now(void *arg) {
  limited_run *l = arg;
  l->found = gc_verify_pass_now(l->v, GC_VERIFY_REACH, &l->out);
}

/* Out of memory for the walk's seen set (16 bytes, less than one pool's bits): the walk does
 * not start, says it checked part of the heap only, and reports nothing. */
static void out_of_memory_stops_the_walk(void) {
  fixture f;
  fixture_build(&f, "verify=none");
  limited_run l;
  limited_begin(&l, f.h);
  l.scratch->reached.max_bytes = 16;
  const char *said = breaking_stderr_of(run_reach_now, &l);
  CHECK_EQ_U(l.found, 0);
  CHECK_NO_REPORT(&l.out);
  CHECK(strstr(said, "gcfuzz verify: out of memory during the reach walk") != NULL);
  l.scratch->reached.max_bytes = 0;
  said = breaking_stderr_of(run_reach_now, &l);
  CHECK_EQ_U(l.found, 0);
  CHECK(strstr(said, "out of memory") == NULL);
  limited_end(&l);
  fixture_free(&f);
}

/* Out of memory for the map of referrers that only the walk with paths keeps (16 buckets: 8
 * blocks of a chain of 40 whose last block has a zero header): the walk without paths meets the
 * violation, the walk with paths runs out before it, says it checked part of the heap only, and
 * reports nothing; with the map unbounded, the violation is reported with its whole path. */
static void out_of_memory_stops_the_walk_with_paths(void) {
  fixture f;
  fixture_build(&f, "verify=none");
  gc_value last = 0;
  for (int i = 0; i < 40; i++) {
    gc_value next = gc_alloc(f.d, 1, GC_TAG_SCAN);
    GC_FIELD(next, 0) = GC_FIELD(f.big, 10);
    GC_FIELD(f.big, 10) = next;
    if (last == 0) last = next;
  }
  gc_collect(f.d, GC_COLLECT_FULL);
  gc_header saved = gc_hd_val(last);
  *gc_hp_val(last) = 0;
  limited_run l;
  limited_begin(&l, f.h);
  l.scratch->seen.max_buckets = 16;
  const char *said = breaking_stderr_of(run_reach_now, &l);
  CHECK_EQ_U(l.found, 0);
  CHECK_NO_REPORT(&l.out);
  CHECK(strstr(said, "gcfuzz verify: out of memory during the reach walk") != NULL);
  l.scratch->seen.max_buckets = 0;
  said = breaking_stderr_of(run_reach_now, &l);
  CHECK_EQ_U(l.found, 1);
  CHECK_ONLY_KIND(&l.out, GC_VK_REACH_ZERO_HEADER);
  if (l.out.count > 0) {
    CHECK(l.out.items[0].block == last);
    CHECK_EQ_U(l.out.items[0].path_len, 2 + 39); /* a, big, then the 39 chain blocks before it */
  }
  CHECK(strstr(said, "out of memory") == NULL);
  *gc_hp_val(last) = saved;
  limited_end(&l);
  fixture_free(&f);
}

int main(void) {
  RUN(clean_heap_passes);
  RUN(zero_header);
  RUN(interior_pointer_into_slot);
  RUN(interior_pointer_into_large);
  RUN(foreign_pointer);
  RUN(reachable_garbage);
  RUN(reachable_marked);
  RUN(oversized_header);
  RUN(sizeless_header);
  RUN(long_path);
  RUN(through_the_hook);
  RUN(out_of_memory_stops_the_walk);
  RUN(out_of_memory_stops_the_walk_with_paths);
  CHECK_MAIN_END();
}
