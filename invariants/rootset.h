/* The root set, enumerated by the verifier itself from the heap's tables.
 *
 * The walks (reach, checkmark) must not share the collector's root enumeration: a root the
 * collector drops (the fields of a finalizable block, a domain's frames, a range word it fails to
 * resolve) would be dropped by the check as well, and the block it holds would be neither marked
 * nor missed. So the verifier reads the tables the API fills (global roots, every domain's local
 * root frames, pinned blocks, the finalizer set and queue, the block whose finalizer runs, the
 * embedder's scanners, the conservative ranges) with its own loops, and resolves conservative
 * words with its own heap index (gc_heapindex_containing). What the roots are is the API's
 * contract (gc/gc.h); INV-FIN-1 (gc/finalizer.h) makes the fields of a block with a finalizer
 * roots, and the queued and running finalizers' blocks.
 *
 * Called with the world stopped (a hook point), or on a heap no other thread uses.
 */
#ifndef INVARIANTS_ROOTSET_H
#define INVARIANTS_ROOTSET_H

#include "gc/heap.h"
#include "invariants/heapindex.h"

/* Root slots are passed to a gc_visit_fn (gc/gc.h), the scanners' own callback type. A
 * conservative word that resolves to `block`; `where` is the word. */
typedef void (*gc_verify_word_fn)(void *ctx, gc_value block, const uintptr_t *where);

/* Every root slot, then every conservative word that points into a block, in a fixed order (the
 * walks number roots by it, and gc_verify_describe_root finds the n-th again). */
void gc_verify_visit_roots(gc_heap *heap, gc_heapindex *ix, gc_visit_fn slot_fn,
                           gc_verify_word_fn word_fn, void *ctx);

#endif /* INVARIANTS_ROOTSET_H */
