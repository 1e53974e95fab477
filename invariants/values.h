/* A growable array of values, for the walks' stacks and their lists of ephemerons met: one
 * definition of growth (doubling from a first capacity), so that each walk says only what it
 * keeps. */
#ifndef INVARIANTS_VALUES_H
#define INVARIANTS_VALUES_H

#include <stddef.h>
#include <stdlib.h>

#include "gc/gc.h"

/* Append v to items[0..*count), growing the array (to `first` entries at first, then twice as
 * many). Returns 0 when memory ran out: the array is then as it was, v not in it. */
static inline int gc_verify_values_push(gc_value **items, size_t *count, size_t *capacity,
                                        size_t first, gc_value v) {
  if (*count == *capacity) {
    size_t grown = *capacity ? 2 * *capacity : first;
    gc_value *more = realloc(*items, grown * sizeof *more);
    if (more == NULL) return 0;
    *items = more;
    *capacity = grown;
  }
  (*items)[(*count)++] = v;
  return 1;
}

#endif /* INVARIANTS_VALUES_H */
