/* The block header: one word before every block.
 *
 *   bits 0..7    tag      (enum gc_tag: scanned, raw or custom)
 *   bits 8..9    colour   (which of UNMARKED/MARKED/GARBAGE this cycle, or NOT_MARKABLE)
 *   bits 10..63  wsize    (fields, header not counted)
 *
 * Names carry units: `wsize` counts fields, `whsize` fields plus the header, `bsize` bytes.
 * `hp` points at a header, `val` (a gc_value) at the first field.
 *
 * INV-HD-1: a slot holds a block iff its header word is non-zero; a free slot's header is 0.
 * Since wsize >= 1 for every block, no block header is ever 0.
 */
#ifndef GC_HEADER_H
#define GC_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "gc/gc.h"

typedef uintptr_t gc_header;

#define GC_HD_TAG_MASK     ((gc_header)0xff)
#define GC_HD_COLOUR_SHIFT 8
#define GC_HD_COLOUR_MASK  ((gc_header)3 << GC_HD_COLOUR_SHIFT)
#define GC_HD_WSIZE_SHIFT  10

/* Colour values as they sit in the header (already shifted). Three of them rotate at every
 * cycle (see gc_colours in heap.h); NOT_MARKABLE never changes. */
#define GC_COLOUR_0     ((gc_header)0 << GC_HD_COLOUR_SHIFT)
#define GC_COLOUR_1     ((gc_header)1 << GC_HD_COLOUR_SHIFT)
#define GC_COLOUR_2     ((gc_header)2 << GC_HD_COLOUR_SHIFT)
#define GC_NOT_MARKABLE ((gc_header)3 << GC_HD_COLOUR_SHIFT)

/* The forwarding header (compact.c): what compaction leaves in the slot a block moved out of,
 * with the block's new address (a val) in the slot's word 1. Tag 251 is refused by every
 * allocator and a block has at least one field, so no live header is ever this word; it lives
 * only in pools being evacuated, which compaction gives back before the world runs again
 * (INV-COMPACT-1, heap.h). */
#define GC_TAG_FORWARD 251
#define GC_HD_FORWARD  ((gc_header)GC_TAG_FORWARD)

static inline gc_header gc_hd_make(size_t wsize, gc_header colour, unsigned tag) {
  return ((gc_header)wsize << GC_HD_WSIZE_SHIFT) | colour | (gc_header)tag;
}
static inline size_t gc_hd_wsize(gc_header hd) { return (size_t)(hd >> GC_HD_WSIZE_SHIFT); }
static inline size_t gc_hd_whsize(gc_header hd) { return gc_hd_wsize(hd) + 1; }
static inline gc_header gc_hd_colour(gc_header hd) { return hd & GC_HD_COLOUR_MASK; }
static inline unsigned gc_hd_tag(gc_header hd) { return (unsigned)(hd & GC_HD_TAG_MASK); }
static inline gc_header gc_hd_with_colour(gc_header hd, gc_header colour) {
  return (hd & ~GC_HD_COLOUR_MASK) | colour;
}

/* Scanned blocks hold gc_values in every field; raw and custom blocks are never looked into.
 * Ephemerons and weak references are not scanned either: their first fields are weak slots
 * (gc.h), which only the ephemeron code reads (ephemeron.c, and invariants/'s walks), and the
 * rest raw words. For every other part of the collector they are leaves, like raw blocks. */
static inline int gc_tag_is_scanned(unsigned tag) { return tag <= GC_TAG_SCAN_MAX; }
static inline int gc_tag_is_weak(unsigned tag) {
  return tag == GC_TAG_EPHEMERON || tag == GC_TAG_WEAK;
}
static inline int gc_tag_is_valid(unsigned tag) {
  return tag <= GC_TAG_SCAN_MAX || tag == GC_TAG_RAW || gc_tag_is_weak(tag) || tag == GC_TAG_CUSTOM;
}
/* The words of a block of a weak tag before its raw data: the link, then key and datum, or the
 * target (gc.h, GC_EPHE_DATA, GC_WEAK_DATA). */
static inline size_t gc_tag_weak_words(unsigned tag) { return tag == GC_TAG_EPHEMERON ? 3 : 2; }

static inline gc_header *gc_hp_val(gc_value v) { return (gc_header *)v - 1; }
static inline gc_value gc_val_hp(gc_header *hp) { return (gc_value)(hp + 1); }
static inline gc_header gc_hd_val(gc_value v) { return *gc_hp_val(v); }

#define GC_WORD_BSIZE ((size_t)sizeof(gc_value))
static inline size_t gc_bsize_wsize(size_t wsize) { return wsize * GC_WORD_BSIZE; }
static inline size_t gc_wsize_bsize(size_t bsize) { return bsize / GC_WORD_BSIZE; }

/* A readable rendering of a header, e.g. "wsize=3 tag=scan(0) colour=1", into buf. */
const char *gc_hd_describe(gc_header hd, char *buf, size_t buf_len);

#endif /* GC_HEADER_H */
