/* The fixed geometry of a pool, shared by the size-class generator and the collector.
 *
 * A pool is GC_POOL_BSIZE bytes aligned to GC_POOL_BSIZE, so the pool of a small block is its
 * address with the low bits masked off. It starts with a GC_POOL_HEADER_WSIZE-word header
 * (struct gc_pool), then slots of one size class, then the class's wastage words.
 */
#ifndef GC_POOL_LAYOUT_H
#define GC_POOL_LAYOUT_H

#define GC_POOL_BSIZE        32768
#define GC_POOL_WSIZE        (GC_POOL_BSIZE / 8)
#define GC_POOL_HEADER_WSIZE 6
/* The largest block (whsize, header included) that lives in a pool; larger ones are large blocks. */
#define GC_SIZECLASS_MAX_WHSIZE 128

#endif /* GC_POOL_LAYOUT_H */
