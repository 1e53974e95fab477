/* The record of the heap at mark start; see snapshot.h. */
#include "invariants/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "invariants/rootset.h"

/* A block whose header the walk may trust: non-zero, a valid tag, a size that fits its slot (or
 * is a large size). Others are left out of the record: reach and checkmark name them. */
static int header_fits(const gc_heapindex_block *b) {
  size_t whsize = gc_hd_whsize(b->hd);
  return b->hd != 0 && gc_tag_is_valid(gc_hd_tag(b->hd)) && gc_hd_wsize(b->hd) > 0 &&
         whsize <= b->max_whsize && (b->max_whsize != SIZE_MAX || whsize > GC_SIZECLASS_MAX_WHSIZE);
}

/* ---- The walk ------------------------------------------------------------------------------ */

typedef struct snap_walk {
  gc_verify_snapshot *s;
  size_t sp;
  int out_of_memory;
} snap_walk;

static void push(snap_walk *w, gc_value v) {
  gc_verify_snapshot *s = w->s;
  if (w->sp == s->stack_capacity) {
    size_t capacity = s->stack_capacity ? 2 * s->stack_capacity : 1024;
    gc_value *more = realloc(s->stack, capacity * sizeof *more);
    if (more == NULL) {
      w->out_of_memory = 1;
      return;
    }
    s->stack = more;
    s->stack_capacity = capacity;
  }
  s->stack[w->sp++] = v;
}

/* v was found through (via, from, field): record it the first time, and walk on from it. */
static void reach(snap_walk *w, gc_value v, gc_snap_via via, uintptr_t from, size_t field) {
  gc_verify_snapshot *s = w->s;
  uint64_t value;
  if (!gc_is_block(v) || !gc_addrmap_get(&s->blocks, v, &value) || value != GC_SNAP_PRESENT) {
    return; /* no block allocated now (other passes name it), or reached already */
  }
  if (s->reached_count == s->reached_capacity) {
    size_t capacity = s->reached_capacity ? 2 * s->reached_capacity : 1024;
    gc_snap_block *more = realloc(s->reached, capacity * sizeof *more);
    if (more == NULL) {
      w->out_of_memory = 1;
      return;
    }
    s->reached = more;
    s->reached_capacity = capacity;
  }
  s->reached[s->reached_count] = (gc_snap_block){v, from, (uint32_t)field, (uint32_t)via};
  if (!gc_addrmap_put(&s->blocks, v, 1 + s->reached_count)) {
    w->out_of_memory = 1;
    return;
  }
  s->reached_count++;
  gc_header hd = gc_hd_val(v);
  /* A NOT_MARKABLE block's fields are root slots of their own (rootset.h), as for the marker. */
  if (gc_tag_is_scanned(gc_hd_tag(hd)) && gc_hd_colour(hd) != GC_NOT_MARKABLE) push(w, v);
}

static void drain(snap_walk *w) {
  while (w->sp > 0 && !w->out_of_memory) {
    gc_value v = w->s->stack[--w->sp];
    size_t wsize = gc_hd_wsize(gc_hd_val(v));
    for (size_t f = 0; f < wsize; f++) reach(w, gc_fields(v)[f], GC_SNAP_FIELD, v, f);
  }
}

static void visit_slot(void *ctx, gc_value *slot) {
  snap_walk *w = ctx;
  reach(w, *slot, GC_SNAP_ROOT_SLOT, (uintptr_t)slot, 0);
  drain(w);
}

static void visit_word(void *ctx, gc_value block, const uintptr_t *where) {
  snap_walk *w = ctx;
  reach(w, block, GC_SNAP_ROOT_WORD, (uintptr_t)where, 0);
  drain(w);
}

/* ---- The record ---------------------------------------------------------------------------- */

static int record_pool(gc_verify_snapshot *s, gc_pool *p, gc_header *free_head,
                       gc_header *frontier) {
  if (s->pool_count == s->pool_capacity) {
    size_t capacity = s->pool_capacity ? 2 * s->pool_capacity : 64;
    gc_snap_pool *more = realloc(s->pool_marks, capacity * sizeof *more);
    if (more == NULL) return 0;
    s->pool_marks = more;
    s->pool_capacity = capacity;
  }
  s->pool_marks[s->pool_count] = (gc_snap_pool){free_head, frontier, frontier};
  if (gc_addrmap_put(&s->pools, (uintptr_t)p, s->pool_count) == 0) return 0;
  s->pool_count++;
  return 1;
}

int gc_verify_snapshot_take(gc_verify_snapshot *s, gc_heap *heap, gc_heapindex *ix) {
  s->taken = 1;
  s->cycle = heap->cycles;
  s->reached_count = 0;
  s->pool_count = 0;
  int ok = gc_addrmap_reset(&s->blocks, 0) && gc_addrmap_reset(&s->pools, 0) && ix->complete;
  gc_heapindex_cursor c;
  gc_heapindex_block b;
  gc_heapindex_cursor_start(&c, ix);
  gc_pool *last = NULL;
  while (ok && gc_heapindex_next_block(&c, &b)) {
    if (!c.larges) {
      gc_pool *p = gc_pool_of_hp(gc_hp_val(b.v));
      if (p != last) ok = record_pool(s, p, p->free_list, c.limit);
      last = p;
    }
    if (header_fits(&b)) ok = ok && gc_addrmap_put(&s->blocks, b.v, GC_SNAP_PRESENT);
  }
  /* A pool with no slot used yet yields no block: it gets its record when a slice meets it. */
  snap_walk w = {.s = s, .sp = 0, .out_of_memory = !ok};
  if (ok) gc_verify_visit_roots(heap, ix, visit_slot, visit_word, &w);
  /* A pinned block is live because it is pinned, not because a root reaches it. */
  for (size_t i = 0; ok && i < heap->pinned.count; i++) {
    reach(&w, (gc_value)heap->pinned.items[i], GC_SNAP_PINNED, 0, 0);
    drain(&w);
  }
  s->complete = !w.out_of_memory;
  return s->complete;
}

int gc_verify_snapshot_current(const gc_verify_snapshot *s, const gc_heap *heap) {
  return s != NULL && s->taken && s->complete && s->cycle == heap->cycles;
}

const gc_snap_block *gc_verify_snapshot_reached(const gc_verify_snapshot *s, gc_value v) {
  uint64_t value;
  if (!gc_is_block(v) || !gc_addrmap_get(&s->blocks, v, &value)) return NULL;
  if (value == GC_SNAP_PRESENT || value == GC_SNAP_BORN_REPORTED) return NULL;
  return &s->reached[value - 1];
}

int gc_verify_snapshot_present(const gc_verify_snapshot *s, gc_value v) {
  uint64_t value;
  return gc_is_block(v) && gc_addrmap_get(&s->blocks, v, &value) && value != GC_SNAP_BORN_REPORTED;
}

gc_snap_pool *gc_verify_snapshot_pool(gc_verify_snapshot *s, gc_pool *p) {
  uint64_t i;
  if (gc_addrmap_get(&s->pools, (uintptr_t)p, &i)) return &s->pool_marks[i];
  /* New since mark start (a fresh pool): no slot of it was allocated then. */
  gc_header *first = gc_pool_first_slot(p);
  if (!record_pool(s, p, NULL, first)) return NULL;
  return &s->pool_marks[s->pool_count - 1];
}

void gc_verify_snapshot_free(gc_verify_snapshot *s) {
  gc_addrmap_free(&s->blocks);
  gc_addrmap_free(&s->pools);
  free(s->reached);
  free(s->stack);
  free(s->pool_marks);
  memset(s, 0, sizeof *s);
}
