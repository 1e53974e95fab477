/* Size classes of pool slots. The tables are generated (sizeclass_gen.c) into
 * sizeclass_table.h and pinned there by static asserts. */
#ifndef GC_SIZECLASS_H
#define GC_SIZECLASS_H

#include <stdint.h>

#include "gc/sizeclass_table.h"

typedef unsigned gc_sizeclass;

extern const uint32_t gc_wsize_of_class[GC_NUM_SIZECLASSES];   /* slot whsize */
extern const uint32_t gc_wastage_of_class[GC_NUM_SIZECLASSES]; /* words at the pool's end */
extern const uint8_t gc_class_of_whsize[GC_SIZECLASS_MAX_WHSIZE + 1];

/* Slots in one pool of class c. */
static inline uint32_t gc_slots_of_class(gc_sizeclass c) {
  return (GC_POOL_WSIZE - GC_POOL_HEADER_WSIZE) / gc_wsize_of_class[c];
}

#endif /* GC_SIZECLASS_H */
