/* The rare events' catalogue (gc.h, GC_EVENTS): names and counts. They are counted where they
 * happen, with gc_event_note (heap.h). */
#include "gc/heap.h"

typedef struct event_info {
  const char *name;
  const char *what;
} event_info;

static const event_info events[GC_EVENT_COUNT] = {
#define GC_EVENT_INFO(row, id, what) [GC_EVENT_##row] = {id, what},
    GC_EVENTS(GC_EVENT_INFO)
#undef GC_EVENT_INFO
};

/* Each row's _IDLE, _MARKING and _SWEEPING follow one another (gc_event_note_phase). */
_Static_assert(GC_EVENT_SPAWN_MARKING == GC_EVENT_SPAWN_IDLE + 1 &&
                   GC_EVENT_SPAWN_SWEEPING == GC_EVENT_SPAWN_IDLE + 2 &&
                   GC_EVENT_TERMINATE_MARKING == GC_EVENT_TERMINATE_IDLE + 1 &&
                   GC_EVENT_TERMINATE_SWEEPING == GC_EVENT_TERMINATE_IDLE + 2 &&
                   GC_EVENT_BLOCK_MARKING == GC_EVENT_BLOCK_IDLE + 1 &&
                   GC_EVENT_BLOCK_SWEEPING == GC_EVENT_BLOCK_IDLE + 2,
               "a phased event's rows: idle, marking, sweeping, in that order");

uint64_t gc_event_count(gc_heap *heap, gc_event e) {
  if ((unsigned)e >= GC_EVENT_COUNT) return 0;
  return __atomic_load_n(&heap->events[e], __ATOMIC_RELAXED);
}

const char *gc_event_name(gc_event e) {
  return (unsigned)e < GC_EVENT_COUNT ? events[e].name : NULL;
}

const char *gc_event_what(gc_event e) {
  return (unsigned)e < GC_EVENT_COUNT ? events[e].what : NULL;
}
