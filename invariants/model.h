/* The model oracle: a driver's shadow graph of the heap, checked against the heap at every cycle.
 *
 * A driver (a test, the fuzz targets) does its allocations, stores and root changes through the
 * model. Each call performs the operation on the heap and records it, so the model always knows
 * what the heap must hold: which objects exist, what each field contains (a pointer to another
 * model object, an immediate, or a raw word), and which objects the roots keep alive. The model
 * never trusts the heap; it compares.
 *
 * Identity. A model object is named by a gc_model_id (a small integer). A side table maps each
 * object to its block (gc_value) and back; no word of the block is used for identity, so the
 * contents the driver stores are exactly what it asked for. When an allocation returns the
 * address of an object the model already had, that object's block was freed and its slot reused;
 * the model records the reuse, which is how a freed slot holding a newer block is told apart from
 * a block that was never freed.
 *
 * What is checked (gc_model_check, called by the verifier at each hook point when the heap's
 * cfg.verify has GC_VERIFY_MODEL and the model is attached with gc_verify_set_model):
 *   GC_HOOK_MARK_START the model records the snapshot: which objects its roots reach now. This
 *                      cycle keeps them, and every object allocated while it marks (born MARKED),
 *                      whatever the mutator drops meanwhile: with incremental marking that is
 *                      floating garbage, freed by the next cycle if still unreachable then. (A
 *                      finalizer queued by the last cycle that has not run by now, with the
 *                      collector's finalizer loop not running, is model.finalizer-count.)
 *   GC_HOOK_MARK_DONE  every object the cycle does not keep (not in the snapshot, not born since,
 *                      not reached from the roots as they are now: the termination stop scans
 *                      the conservative ranges again) is "doomed": this cycle must free it.
 *                      Objects with a Go-style finalizer set are queued instead, as the
 *                      collector does, and survive. With stop-the-world marking the two points
 *                      are one stop, and the rule is the plain one: unreachable is doomed.
 *   GC_HOOK_CYCLED     every object reachable in the model is alive in the heap (its memory is a
 *                      block, header non-zero, not GARBAGE) with exactly the model's header and
 *                      field contents (model.dead, model.contents), and every model root slot
 *                      holds its object (model.root).
 *   GC_HOOK_COMPACT_START  the sweep is over: the doomed objects are settled as at SWEPT.
 *   GC_HOOK_COMPACTED  the model follows the moves (gc_model_follow_compaction), then the CYCLED
 *                      checks and the live count, as at SWEPT: a compacted heap is a swept one.
 *   GC_HOOK_SWEPT      every doomed object is freed: its slot has a zero header, its pool or
 *                      large block is gone, or a later allocation reused its address
 *                      (model.not-freed); every freed custom block's finalize ran exactly once and
 *                      no live block's did, and no Go-style finalizer ran unqueued or twice
 *                      (model.finalizer-count); the CYCLED checks again on
 *                      the current graph; and the heap's live block count (pool_live_blocks +
 *                      large_blocks) equals the number of objects the model holds
 *                      (model.live-count). The last is exact at every sweep's end, which is
 *                      stronger than "after a full collection": blocks the cycle kept stay
 *                      (floating garbage included), blocks allocated since stay, doomed blocks
 *                      are gone.
 *
 * The driver's side of the contract:
 *   - every block of the heap is allocated through the model (gc_model_alloc*), or the live
 *     count and the slot-reuse rule cannot hold;
 *   - an object the driver will use again is reachable from the model's roots (or pinned) at
 *     every allocation and collection, exactly as a mutator roots its values; the model refuses
 *     operations on doomed objects;
 *   - custom blocks come from gc_model_alloc_custom: the model's own finalize function finds the
 *     model through data word 1 (field 1), so no global is needed. Drivers with their own
 *     finalizers call gc_model_note_finalized.
 *   - conservative ranges are registered through the model (gc_model_range_add) and written
 *     through it (gc_model_range_store); the model resolves their words itself, from its own
 *     objects' addresses, not through the collector's block index;
 *   - one thread at a time uses the model (as the controlled scheduler runs domains); its
 *     finalizers run on whichever domain runs the queue, which is then that thread. The one
 *     exception is gc_model_note_finalized: custom blocks' finalize functions run when swept,
 *     and the domains of a stopped world sweep in parallel, so notes may come from several
 *     threads at once (they take the model's note lock);
 *   - teardown order: gc_model_destroy (it disarms its finalizers still in the heap), then the
 *     verifier, then gc_heap_destroy.
 *
 * Cost per check: O(model objects + the fields of the reachable ones), plus building the heap
 * index (the verifier builds one per hook point for all passes). GC_HOOK_MARK_SLICE checks
 * nothing (the world runs). The reachable set is walked again
 * only when something it depends on changed since the last walk (the checks of one point, and of
 * points with no mutation between them, share a walk), and each reachable object's block is
 * compared with the model in one go. The model keeps per object its header fields, one word per
 * field, and for scanned objects one more word per field (the expected block contents).
 */
#ifndef INVARIANTS_MODEL_H
#define INVARIANTS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gc/gc.h"
#include "invariants/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_model gc_model;
typedef uint32_t gc_model_id;
#define GC_MODEL_NONE ((gc_model_id)UINT32_MAX)
typedef void (*gc_model_fin_callback)(void *user, gc_model_id obj, uint64_t tag);

/* A model of `heap` with `root_count` root slots, all empty. The model's own slots are scanned
 * through a root scanner it registers; gc_model_root_bind can move a root to a driver's slot.
 * NULL when out of memory. */
gc_model *gc_model_create(gc_heap *heap, size_t root_count);
/* Unregister the scanner, disarm the finalizers of the model's custom blocks still in the heap,
 * and free the model. Call before gc_heap_destroy. */
void gc_model_destroy(gc_model *m);

/* Reusing a model's memory for the next heap (a fuzz driver keeps one model across inputs, so a
 * program does not pay for the model's arrays and maps). gc_model_detach does to the heap what
 * gc_model_destroy does (root scanner, finalizers, custom blocks' model words; call it where
 * gc_model_destroy would be called, before gc_heap_destroy) and forgets every object, root and
 * pending report, keeping only memory. gc_model_attach makes a detached model exactly what
 * gc_model_create(heap, its root count) returns: no object, ids from 0, every root empty in the
 * model's own slot. Returns 0 when out of memory (the model stays detached: destroy it). */
void gc_model_detach(gc_model *m);
int gc_model_attach(gc_model *m, gc_heap *heap);
/* gc_model_attach, except that every root stays bound where gc_model_root_bind put it (its slot
 * is set to NULL, the root is empty): for a driver whose root slots outlive its heaps. */
int gc_model_reattach(gc_model *m, gc_heap *heap);

/* ---- Allocation ---------------------------------------------------------------------------- */

/* gc_alloc(d, wsize, tag) and record it; GC_MODEL_NONE when gc_alloc failed (see gc_last_error)
 * or the model ran out of memory. May collect (and so run the checks) before the block exists. */
gc_model_id gc_model_alloc(gc_model *m, gc_domain *d, size_t wsize, unsigned tag);
/* A custom block with data_wsize >= 1 data words and the model's finalize function; data word 1
 * (field 1) holds the model pointer and must not be overwritten. */
gc_model_id gc_model_alloc_custom(gc_model *m, gc_domain *d, size_t data_wsize);

/* ---- Mutation (performed on the heap, and recorded) ---------------------------------------- */

/* The domain the model's stores run on: gc_store's write barrier darkens into that domain's
 * marker, so it must be the domain of the thread calling the model. The heap's main domain from
 * gc_model_create/attach on; a driver running other domains sets it before each store (on a
 * scheduled thread, right before the call: nothing between may hand the model to another thread). */
void gc_model_set_domain(gc_model *m, gc_domain *d);

/* Each returns 1, or 0 for a misuse that changed nothing: an id that is not a live object, a field
 * out of range, a pointer or immediate into a raw or custom block, a raw word into a scanned one,
 * or a raw word over a custom block's function or model words (fields 0 and 1). Pointer, null and
 * immediate stores go through gc_store on the model's domain (the write barrier); raw words into
 * unscanned blocks need none. */
int gc_model_store_ptr(gc_model *m, gc_model_id obj, size_t field, gc_model_id target);
int gc_model_store_null(gc_model *m, gc_model_id obj, size_t field);
int gc_model_store_imm(gc_model *m, gc_model_id obj, size_t field, intptr_t n);
int gc_model_store_raw(gc_model *m, gc_model_id obj, size_t field, uintptr_t word);

/* The object field `field` of obj points to, or GC_MODEL_NONE (NULL, an immediate, raw data). */
gc_model_id gc_model_load(const gc_model *m, gc_model_id obj, size_t field);

/* ---- Roots --------------------------------------------------------------------------------- */

size_t gc_model_root_count(const gc_model *m);
/* Put obj (GC_MODEL_NONE: NULL) in root slot `root`: writes the slot and records it. */
int gc_model_root_set(gc_model *m, size_t root, gc_model_id obj);
static inline int gc_model_root_clear(gc_model *m, size_t root) {
  return gc_model_root_set(m, root, GC_MODEL_NONE);
}
gc_model_id gc_model_root_get(const gc_model *m, size_t root);
/* The root's slot stops being a root of the heap (the frame of a domain that terminated): the
 * root is cleared and refuses every later gc_model_root_set (a resurrecting finalizer aimed at it
 * stores nothing) until the model is attached to a heap again. */
void gc_model_root_retire(gc_model *m, size_t root);
/* Make root `root` live in the driver's `slot` (a registered global root or a local frame slot,
 * which the driver keeps registered while bound); its current object is copied there. slot NULL:
 * back to the model's own slot. Unbind before the slot goes away (a popped frame). */
int gc_model_root_bind(gc_model *m, size_t root, gc_value *slot);

/* gc_pin / gc_unpin, recorded: a pinned object is a root of the model. */
int gc_model_pin(gc_model *m, gc_model_id obj);
int gc_model_unpin(gc_model *m, gc_model_id obj);

/* gc_finalizer_set / gc_finalizer_clear with the model's own finalizer function, recorded. The
 * model follows the collector's rules (INV-FIN-1): while set, the object's fields are roots; when
 * a mark finds the object unreachable, its finalizer is queued and the object survives that
 * cycle; the finalizer must then run exactly once before the next mark (model.finalizer-count
 * otherwise), after which the object is ordinary and a later cycle frees it. Set refuses an object
 * whose finalizer is queued; clear refuses one without a set finalizer. */
int gc_model_finalizer_set(gc_model *m, gc_model_id obj);
/* The same, with a finalizer that resurrects: when it runs it stores the object into model root
 * `root` (as gc_model_root_set), so the object is reachable again; GC_MODEL_NO_ROOT: it does
 * not (gc_model_finalizer_set). */
#define GC_MODEL_NO_ROOT ((size_t)-1)
int gc_model_finalizer_set_reviving(gc_model *m, gc_model_id obj, size_t root);
/* The same, with a finalizer that calls the driver's callback (gc_model_set_fin_callback) with
 * `tag` (non-zero) when it runs: the finalizer then runs the driver's code (a finalizer body
 * that allocates, stores, collects, resurrects, sets finalizers). While it runs the object is a
 * root (RUNNING); a finalizer set on it again from inside makes it SET once more (re-armed), and
 * a collection from inside finds the other queued finalizers still queued (they run after this
 * one returns), which the model allows while any finalizer runs. */
int gc_model_finalizer_set_calling(gc_model *m, gc_model_id obj, uint64_t tag);
/* Install the callback (NULL: none; a detach removes it). */
void gc_model_set_fin_callback(gc_model *m, gc_model_fin_callback fn, void *user);
/* The object whose finalizer runs now (the innermost), or GC_MODEL_NONE. */
gc_model_id gc_model_fin_running(const gc_model *m);
int gc_model_finalizer_clear(gc_model *m, gc_model_id obj);

/* ---- Conservative roots -------------------------------------------------------------------- */

/* gc_conservative_add(words, count words), recorded: from now on every word of the range that
 * falls inside a live object's block (its header included, interior and last byte too, not one
 * past its end) keeps the object alive, as the collector must. The driver writes the words only
 * through gc_model_range_store. Returns 0 when the collector refused it or the model holds
 * GC_MRANGES_MAX ranges (the range is then not registered). Detaching the model removes them. */
int gc_model_range_add(gc_model *m, uintptr_t *words, size_t count);
/* Word `index` of range `range` (in gc_model_range_add order) = word. */
void gc_model_range_store(gc_model *m, size_t range, size_t index, uintptr_t word);

/* ---- Queries ------------------------------------------------------------------------------- */

gc_value gc_model_value(const gc_model *m, gc_model_id obj); /* 0 if obj is not an object */
gc_model_id gc_model_id_of(const gc_model *m, gc_value v);   /* GC_MODEL_NONE if unknown */
size_t gc_model_wsize(const gc_model *m, gc_model_id obj);
unsigned gc_model_tag(const gc_model *m, gc_model_id obj);
/* 1 for an object the driver may use (allocated, not doomed). */
int gc_model_is_live(const gc_model *m, gc_model_id obj);
/* Objects whose blocks the model says exist, and objects reachable from the roots now. */
size_t gc_model_block_count(const gc_model *m);
size_t gc_model_reachable_count(gc_model *m);

/* ---- Finalizers and checking --------------------------------------------------------------- */

/* A finalize function ran on `block`. The model's custom blocks call this themselves. Safe to
 * call from several sweeping threads at once (the note lock; see the top of this file). */
void gc_model_note_finalized(gc_model *m, gc_value block);

/* Follow the compaction running now: called inside GC_HOOK_COMPACTED (before anything else
 * there reads the model), remaps every block address the model holds through the collector's
 * table of moves (gc_compact_forwarded, INV-COMPACT-4 in gc/heap.h): objects, their expected
 * pointer fields, the roots' expected words. Conservative range words stay as the driver wrote
 * them (gc.h: the blocks they name do not move). gc_model_check at GC_HOOK_COMPACTED calls it
 * first; a driver whose verify mask leaves the model out calls it from its own hook. Once per
 * compaction; a no-op at any other time. */
void gc_model_follow_compaction(gc_model *m);

/* The checks of `point` (see the top of this file); appends reports to out (may be NULL) and
 * returns the number of violations. Called by the verifier; a driver may call it directly with
 * GC_HOOK_CYCLED at any time no collection runs (reachable objects alive with the model's
 * contents). */
size_t gc_model_check(gc_model *m, gc_hook_point point, gc_verify_reports *out);

#ifdef __cplusplus
}
#endif
#endif /* INVARIANTS_MODEL_H */
