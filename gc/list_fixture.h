/* For the collector's tests (testonly): a heap made with some parameters, its main domain, and a
 * list of two-field blocks held by one frame slot; the rare events and the live blocks to read
 * back. Static inline: each test that includes it is one file. */
#ifndef GC_LIST_FIXTURE_H
#define GC_LIST_FIXTURE_H

#include "gc/check.h"
#include "gc/gc.h"

typedef struct list_fixture {
  gc_heap *h;
  gc_domain *d;
  gc_value root; /* the list's newest block, a root through `frame` */
  gc_frame frame;
} list_fixture;

static inline void list_fixture_open(list_fixture *f, const char *params) {
  f->h = gc_heap_create(NULL);
  CHECK(gc_set_params(f->h, params) == GC_OK);
  f->d = gc_main_domain(f->h);
  f->root = 0;
  gc_frame_push(f->d, &f->frame, &f->root, 1);
}

/* n more blocks at the head of the list *root holds (a root of d's), allocated on d. */
static inline void list_grow_on(gc_domain *d, gc_value *root, int n) {
  for (int i = 0; i < n; i++) {
    gc_value b = gc_alloc(d, 2, GC_TAG_SCAN);
    CHECK(b != 0);
    GC_FIELD(b, 0) = *root; /* initialising store: b is this domain's newest block */
    *root = b;
  }
}

static inline void list_fixture_grow(list_fixture *f, int n) { list_grow_on(f->d, &f->root, n); }

static inline void list_fixture_close(list_fixture *f) {
  gc_frame_pop(f->d, &f->frame);
  gc_heap_destroy(f->h);
}

static inline uint64_t list_fixture_event(const list_fixture *f, gc_event e) {
  return gc_event_count(f->h, e);
}

static inline size_t list_fixture_live_blocks(const list_fixture *f) {
  gc_stats s;
  gc_get_stats(f->h, &s);
  return s.pool_live_blocks;
}

#endif /* GC_LIST_FIXTURE_H */
