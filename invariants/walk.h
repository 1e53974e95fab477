/* The graph walk shared by reach and checkmark: from every root slot and every conservative word
 * that points into a block, as the verifier enumerates them itself (rootset.h), never through the
 * collector's own enumeration, with an explicit stack and an address map of the blocks seen,
 * checking every block before reading it.
 *
 * The two passes differ only in which colours a reachable block may have and in the names of the
 * violations, which is what gc_walk_rules holds. A block that fails a check is reported and not
 * scanned: its fields are not trusted, and when the marker missed a whole subtree the report
 * names its top block once instead of every block under it.
 *
 * Cost: O(reachable blocks + their fields), one pool lookup and one bit of the seen set
 * (seenset.h) per edge, plus O(pools + large blocks) to build the heap index and clear the set.
 * Memory: the set (512 bytes a pool, a byte a large block) and the stack. Only when the heap
 * breaks a rule is the walk run again recording every block's referrer in an address map (16
 * bytes a bucket, at most half full), for the reports' paths (walk.c).
 */
#ifndef INVARIANTS_WALK_H
#define INVARIANTS_WALK_H

#include "invariants/pass.h"

typedef struct gc_walk_rules {
  unsigned allowed_colours; /* bit (colour >> GC_HD_COLOUR_SHIFT) set for each allowed colour */
  const char *expected;     /* the allowed colours in words, for reports */
  gc_verify_kind foreign, interior, zero_header, bad_header, bad_colour;
  /* Ephemeron keys (gc.h): a key lives once the walk meets it, or, with bit (colour >>
   * GC_HD_COLOUR_SHIFT) set here, whenever its header has that colour. Checkmark at mark-done:
   * MARKED, floating garbage included, since the collector marks the datum of every marked key
   * of an ephemeron it keeps (a queued finalizer's too); a key kept wrongly is that key's own
   * over-retention. 0: only the keys the walk met. */
  unsigned key_colours;
} gc_walk_rules;

/* What a walk saw, for a pass that compares it with the heap (checkmark's over-retention). The
 * blocks it reached are run->scratch->reached after the walk (gc_seenset_has_block with
 * run->scratch->index), when the caller gave a scratch. */
typedef struct gc_walk_seen {
  /* Blocks reached that passed every check, by colour (colour >> GC_HD_COLOUR_SHIFT). */
  size_t blocks_of_colour[4];
  int complete; /* 0: out of memory, the walk saw part of the heap only */
} gc_walk_seen;

/* `seen` may be NULL. */
size_t gc_walk_run(const gc_verify_run *run, const gc_walk_rules *rules, gc_walk_seen *seen);

#endif /* INVARIANTS_WALK_H */
