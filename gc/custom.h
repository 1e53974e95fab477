/* Custom blocks: field 0 holds a gc_finalize_fn, run once when the block is freed. */
#ifndef GC_CUSTOM_H
#define GC_CUSTOM_H

#include <string.h>

#include "gc/gc.h"

static inline gc_finalize_fn gc_custom_fn(gc_value v) {
  gc_finalize_fn fn;
  memcpy(&fn, (void *)v, sizeof fn);
  return fn;
}

static inline void gc_custom_finalize(gc_value v) {
  gc_finalize_fn fn = gc_custom_fn(v);
  if (fn != NULL) fn(v);
}

#endif /* GC_CUSTOM_H */
