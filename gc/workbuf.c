/* Work buffers for the parallel mark (see workbuf.h). */
#include "gc/workbuf.h"

#include <stdlib.h>
#include <string.h>

#include "gc/poolcache.h"

static size_t buf_bsize(size_t entries) { return sizeof(gc_workbuf) + entries * sizeof(gc_value); }

/* Put the next buffer never used since the shape on the empty list; 0 when all are carved. Under
 * the lock (or outside marking). */
static int carve_with_lock(gc_mark_work *w) {
  if (w->carved == w->buf_count) return 0;
  gc_workbuf *b = (gc_workbuf *)((char *)w->arena + w->carved * buf_bsize(w->buf_entries));
  gc_spare_open(b, buf_bsize(w->buf_entries));
  w->carved++;
  b->count = 0;
  b->next = GC_GUARDED_LOAD(w->empty);
  GC_GUARDED_STORE(w->empty, b);
  w->empty_count++;
  return 1;
}

/* The empty list's first buffer, carving one if the list is empty; NULL when every buffer of the
 * arena is in use. Under the lock. */
static gc_workbuf *first_empty_with_lock(gc_mark_work *w) {
  gc_workbuf *b = GC_GUARDED_LOAD(w->empty);
  if (b == NULL && carve_with_lock(w)) b = GC_GUARDED_LOAD(w->empty);
  return b;
}

void gc_work_shape(gc_heap *heap, size_t total_entries, size_t markers) {
  gc_mark_work *w = &heap->work;
  /* Buffers of up to markbuf entries (512 by default), at least two per marker so a handoff can
   * always find one. */
  size_t entries = total_entries / (2 * markers);
  if (entries < 1) entries = 1;
  if (entries > heap->cfg.mark_buf_entries) entries = heap->cfg.mark_buf_entries;
  size_t count = total_entries / entries;
  if (count < 2 * markers) count = 2 * markers;
  if (w->arena != NULL && w->buf_entries == entries && w->buf_count == count) return;
  /* A new shape is carved from the arena it fits in (every buffer is on the empty list outside
   * marking, so nothing in it is live); a larger one comes from the spares a destroyed heap left,
   * or from malloc. */
  char *arena = w->arena;
  if (arena == NULL || w->arena_bsize < count * buf_bsize(entries)) {
    size_t got;
    arena = gc_spare_malloc(heap->cfg.pool_cache, GC_SPARE_ARENA, count * buf_bsize(entries), &got);
    if (arena == NULL) return;
    free(w->arena);
    w->arena = arena;
    w->arena_bsize = got;
  } else {
    /* Under ASan only the carved buffers are addressable (gc_spare_open): the old shape's are
     * closed, the new shape opens its own as it carves them. */
    gc_spare_close(arena, w->carved * buf_bsize(w->buf_entries));
  }
  w->buf_entries = entries;
  w->buf_count = count;
  w->empty = NULL;
  w->empty_count = 0;
  w->carved = 0;
  /* Buffers are carved from the arena as marking first needs them (carve_with_lock): the default
   * mark stack is 8 MiB, and linking every buffer here wrote one word on each of its pages, so
   * every heap cost 8 MiB of resident memory before its first allocation. Two a marker are
   * carved now, so the empty list is never empty outside marking. */
  for (size_t i = 0; i < 2 * markers; i++) carve_with_lock(w);
  w->full = NULL;
  gc_atomic_store(&w->full_count, 0);
}

void gc_work_free(gc_heap *heap) {
  gc_mark_work *w = &heap->work;
  gc_spare_free(heap->cfg.pool_cache, GC_SPARE_ARENA, w->arena, w->arena_bsize,
                w->carved * buf_bsize(w->buf_entries));
  heap->work.arena = NULL;
  heap->work.arena_bsize = 0;
  heap->work.empty = heap->work.full = NULL;
  heap->work.buf_count = heap->work.empty_count = heap->work.carved = 0;
}

void gc_work_begin(gc_heap *heap, size_t markers) {
  gc_mark_work *w = &heap->work;
  w->markers = markers;
  gc_atomic_store(&w->idle, 0);
  gc_atomic_store(&w->done, 0);
}

gc_workbuf *gc_work_get_empty(gc_mark_work *w) {
  gc_mutex_lock(&w->lock);
  gc_workbuf *b = first_empty_with_lock(w);
  if (b != NULL) {
    GC_GUARDED_STORE(w->empty, b->next);
    w->empty_count--;
    b->count = 0;
  }
  gc_mutex_unlock(&w->lock);
  return b;
}

void gc_work_put_empty(gc_mark_work *w, gc_workbuf *b) {
  gc_mutex_lock(&w->lock);
  b->count = 0;
  b->next = GC_GUARDED_LOAD(w->empty);
  GC_GUARDED_STORE(w->empty, b);
  w->empty_count++;
  gc_mutex_unlock(&w->lock);
}

static void put_full_with_lock(gc_mark_work *w, gc_workbuf *b) {
  b->next = GC_GUARDED_LOAD(w->full);
  GC_GUARDED_STORE(w->full, b);
  gc_atomic_store(&w->full_count, gc_atomic_load(&w->full_count) + 1);
}

void gc_work_put_full(gc_mark_work *w, gc_workbuf *b) {
  gc_mutex_lock(&w->lock);
  put_full_with_lock(w, b);
  gc_mutex_unlock(&w->lock);
}

void gc_work_put_partial(gc_mark_work *w, gc_workbuf *b) {
  gc_mutex_lock(&w->lock);
  put_full_with_lock(w, b);
  w->shares++;
  gc_mutex_unlock(&w->lock);
}

/* The full list's head, taken off it; NULL when the list is empty. */
static gc_workbuf *take_full_with_lock(gc_mark_work *w) {
  gc_workbuf *b = GC_GUARDED_LOAD(w->full);
  if (b != NULL) {
    GC_GUARDED_STORE(w->full, b->next);
    gc_atomic_store(&w->full_count, gc_atomic_load(&w->full_count) - 1);
  }
  return b;
}

gc_workbuf *gc_work_get_full_or_finish(gc_mark_work *w) {
  gc_mutex_lock(&w->lock);
  for (;;) {
    gc_workbuf *b = take_full_with_lock(w);
    if (b != NULL) {
      gc_mutex_unlock(&w->lock);
      return b;
    }
    if (gc_atomic_load(&w->done)) break;
    /* Termination: this marker has nothing; if every other marker has nothing either, no one
     * can produce work again, and marking is over. */
    uintptr_t idle = gc_atomic_load(&w->idle) + 1;
    gc_atomic_store(&w->idle, idle);
    if (idle == w->markers) {
      gc_atomic_store(&w->done, 1);
      break;
    }
    gc_mutex_unlock(&w->lock);
    while (gc_atomic_load(&w->full_count) == 0 && !gc_atomic_load(&w->done)) gc_plat_spin(w);
    gc_mutex_lock(&w->lock);
    gc_atomic_store(&w->idle, gc_atomic_load(&w->idle) - 1);
  }
  gc_mutex_unlock(&w->lock);
  return NULL;
}

gc_workbuf *gc_work_try_get_full(gc_mark_work *w) {
  if (gc_atomic_load(&w->full_count) == 0) return NULL; /* a hint, read again under the lock */
  gc_mutex_lock(&w->lock);
  gc_workbuf *b = take_full_with_lock(w);
  gc_mutex_unlock(&w->lock);
  return b;
}

/* Move the oldest half of b into an empty buffer on the full list, if `wanted` still holds
 * under the lock. */
static void split_half(gc_mark_work *w, gc_workbuf *b, int (*wanted)(gc_mark_work *w)) {
  gc_mutex_lock(&w->lock);
  gc_workbuf *half = wanted(w) ? first_empty_with_lock(w) : NULL;
  if (half != NULL) {
    GC_GUARDED_STORE(w->empty, half->next);
    w->empty_count--;
    /* The oldest half: on a tree those entries are near the root, each a whole subtree of work,
     * where the newest entries are leaves the giver is about to finish anyway. */
    size_t moved = b->count / 2;
    memcpy(half->items, b->items, moved * sizeof(gc_value));
    memmove(b->items, b->items + moved, (b->count - moved) * sizeof(gc_value));
    b->count -= moved;
    half->count = moved;
    put_full_with_lock(w, half);
    w->handoffs++;
  }
  gc_mutex_unlock(&w->lock);
}

static int a_marker_idle(gc_mark_work *w) { return gc_atomic_load(&w->idle) > 0; }
static int another_slicing(gc_mark_work *w) { return gc_atomic_load(&w->slicing) > 1; }

void gc_work_maybe_handoff(gc_mark_work *w, gc_workbuf *b) {
  /* Read before the lock, and read again under it: a hint that no one needs work. */
  if (b->count < 2 || gc_atomic_load(&w->full_count) != 0) return;
  if (!a_marker_idle(w)) return;
  split_half(w, b, a_marker_idle);
}

void gc_work_maybe_share(gc_mark_work *w, gc_workbuf *b) {
  if (b->count < 2 || gc_atomic_load(&w->full_count) != 0) return;
  if (!another_slicing(w)) return;
  split_half(w, b, another_slicing);
}
