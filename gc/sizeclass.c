/* The size-class tables, instantiated once from the generated initialisers. */
#include "gc/sizeclass.h"

const uint32_t gc_wsize_of_class[GC_NUM_SIZECLASSES] = GC_WSIZE_OF_CLASS_INIT;
const uint32_t gc_wastage_of_class[GC_NUM_SIZECLASSES] = GC_WASTAGE_OF_CLASS_INIT;
const uint8_t gc_class_of_whsize[GC_SIZECLASS_MAX_WHSIZE + 1] = GC_CLASS_OF_WHSIZE_INIT;
