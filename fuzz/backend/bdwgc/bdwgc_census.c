/* The rare events of bdwgc (bdwgc_heap.h, BDWGC_RARE_EVENTS), counted through bdwgc's public
 * API and the backend's own calls, for the census of `replay --events`.
 *
 * How each is seen. bdwgc reports the phases of its collections to one callback
 * (GC_set_on_collection_event), every growth of its heap to another (GC_set_on_heap_resize) and
 * every thread it suspends to a third (GC_set_on_thread_event), each called with the allocation
 * lock held; they count process-wide (bdwgc's heap is the process's), and a heap's counts are the difference since its create. A whole collection that
 * GC_try_to_collect_inner runs (GC_gcollect, an allocation that found no room, the first
 * collection) is a START and, unless the stop function cut its mark short, an END; a stopped
 * mark is a MARK_START and, unless abandoned, a MARK_END; the collections completed
 * (GC_get_gc_no) less the whole ones are those increments finished (GC_collect_a_little, an
 * allocation's share of an incremental or generational cycle). The others are the backend's:
 * an allocation bdwgc refused, a finalizer run (nested in another's body or not), a weak
 * reference read after bdwgc cleared its link, an increment that left a collection under way.
 */
#include <stdint.h>

#include "fuzz/backend/bdwgc/bdwgc_heap.h"

const fuzz_rare_event bdwgc_rare_events[BDWGC_RARE_COUNT] = {
#define BDWGC_RARE_ROW(name, id, what) {id, what},
    BDWGC_RARE_EVENTS(BDWGC_RARE_ROW)
#undef BDWGC_RARE_ROW
};

/* ---- bdwgc's callbacks, process-wide --------------------------------------------------------- */

enum { SEEN_START, SEEN_END, SEEN_MARK_START, SEEN_MARK_END, SEEN_SUSPENDED, SEEN_GROWN, SEEN_N };
_Static_assert(SEEN_N == BDWGC_SEEN_COUNT, "the heap keeps one count a callback's counter");

static uint64_t seen[SEEN_N];

static void bump(int what) { __atomic_fetch_add(&seen[what], 1, __ATOMIC_RELAXED); }

static void GC_CALLBACK on_collection_event(GC_EventType e) {
  switch (e) {
    case GC_EVENT_START: bump(SEEN_START); break;
    case GC_EVENT_END: bump(SEEN_END); break;
    case GC_EVENT_MARK_START: bump(SEEN_MARK_START); break;
    case GC_EVENT_MARK_END: bump(SEEN_MARK_END); break;
    default: break;
  }
}

static void GC_CALLBACK on_thread_event(GC_EventType e, void *thread) {
  (void)thread;
  if (e == GC_EVENT_THREAD_SUSPENDED) bump(SEEN_SUSPENDED);
}

static void GC_CALLBACK on_heap_resize(GC_word new_size) {
  (void)new_size;
  bump(SEEN_GROWN);
}

void bdwgc_census_init(void) {
  GC_set_on_collection_event(on_collection_event);
  GC_set_on_heap_resize(on_heap_resize);
  GC_set_on_thread_event(on_thread_event);
}

static uint64_t seen_now(int what) { return __atomic_load_n(&seen[what], __ATOMIC_RELAXED); }

/* ---- A heap's counts ------------------------------------------------------------------------- */

void bdwgc_census_start(fuzz_bheap *h) {
  for (int i = 0; i < SEEN_N; i++) h->seen_at_create[i] = seen_now(i);
  h->gc_no_at_create = GC_get_gc_no();
}

static uint64_t since(const fuzz_bheap *h, int what) {
  return seen_now(what) - h->seen_at_create[what];
}

static uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void bdwgc_rare_counts(fuzz_bheap *h, uint64_t *counts) {
  for (int e = 0; e < BDWGC_RARE_COUNT; e++) counts[e] = h->rare[e];
  uint64_t cycles = (uint64_t)(GC_get_gc_no() - h->gc_no_at_create);
  counts[BDWGC_RARE_CYCLE] = cycles;
  counts[BDWGC_RARE_FULL] = since(h, SEEN_END);
  counts[BDWGC_RARE_FULL_ABANDONED] = minus(since(h, SEEN_START), since(h, SEEN_END));
  counts[BDWGC_RARE_BY_INCREMENTS] = minus(cycles, since(h, SEEN_END));
  counts[BDWGC_RARE_MARK_ABANDONED] = minus(since(h, SEEN_MARK_START), since(h, SEEN_MARK_END));
  counts[BDWGC_RARE_THREAD_SUSPENDED] = since(h, SEEN_SUSPENDED);
  counts[BDWGC_RARE_HEAP_GROWN] = since(h, SEEN_GROWN);
}
