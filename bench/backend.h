/* The backend interface: the only way a benchmark touches memory.
 *
 * A benchmark is written once against this interface and compiled once per backend; the build
 * picks the backend with one define (bench/BUILD: BENCH_BACKEND_GCFUZZ, _BDWGC or _MALLOC). Every
 * operation is static inline (or a macro), so the interface itself costs nothing after inlining:
 * what is measured is the allocator, the collector and the rooting discipline it demands.
 *
 * What each backend provides:
 *
 *   bk_ref                  a reference to a block; BK_NULL is no block.
 *   BK_NAME                 "gcfuzz", "bdwgc" or "malloc".
 *   BK_EXPLICIT_FREE        1 when dead blocks must be given back with bk_free (malloc), else 0.
 *                           A constant, so `if (!BK_EXPLICIT_FREE) return;` removes a tree walk.
 *   bk_init(), bk_fini()    create and destroy the heap; one run of a benchmark sits between them.
 *                           bk_fini records the heap's collections (bench_record_collections).
 *   bk_collections()        the collections the heap has run so far (gcfuzz: completed major
 *                           cycles, gc_stats.cycles; bdwgc: GC_get_gc_no(); malloc: 0).
 *   bk_alloc(nref, nint)    a block of `nref` reference fields (BK_NULL) followed by `nint` integer
 *                           fields (0). Never returns BK_NULL: out of memory exits with a message.
 *   bk_get(b, i), bk_set(b, i, v)        reference field i. bk_set is a store into any block
 *                           (gcfuzz: through the write barrier, gc_store).
 *   bk_set_new(b, i, v)     an initialising store: into a block this thread allocated with no
 *                           allocation (no safepoint) between that bk_alloc and this store. It
 *                           may skip the write barrier (gcfuzz: GC_FIELD, gc.h's one exception);
 *                           every other store is bk_set. The other backends: both a plain store.
 *   bk_get_int(b, i), bk_set_int(b, i, n) integer field i (counted from 0 like the references:
 *                           the first integer field of a bk_alloc(2, 2) block is field 2).
 *   bk_alloc_raw(nbytes), bk_raw(b)      a block of bytes the collector never scans, and its data.
 *   bk_free(b)              give a dead block back (malloc); a no-op for the collectors.
 *   bk_collect_full()       an explicit full collection (gcfuzz: gc_collect(GC_COLLECT_FULL),
 *                           which also compacts when GCFUZZ_PARAMS sets compact=N, see
 *                           "Rooting"; bdwgc: GC_gcollect(); malloc: nothing).
 *   bk_heap_figures(&mapped, &live)      the heap's size now, in bytes, -1 where unknown:
 *                           mapped is what the backend holds from the OS for blocks, live what
 *                           its own books call live (gcfuzz: gc_stats os_pool_bytes plus large
 *                           blocks, and pool_live_words plus large blocks, headers included;
 *                           bdwgc: GC_get_heap_size(), and GC_get_memory_use(), the heap
 *                           blocks holding an object: an upper bound of live, as a block with
 *                           one object counts whole; malloc: mallinfo2's arena + hblkhd, and
 *                           uordblks + hblkhd, chunk headers included).
 *
 * Weak-keyed entries (weak-memo): an entry is a block made by bk_ephe_alloc, storable in a
 * reference field like any block, that holds a key weakly and a datum, plus one integer tag:
 *
 *   bk_ephe_alloc(key, datum, tag)   a new entry. Allocates: key and datum must be rooted
 *                           across it, as any reference held across an allocation.
 *   bk_ephe_tag(e)          the tag given at allocation (never cleared: a hash, an identity).
 *   bk_ephe_key(e)          the key while it lives; BK_NULL once the backend found it dead.
 *   bk_ephe_datum(e)        the datum while the key lives; BK_NULL once the key was found dead.
 *   bk_ephe_clear(e)        the program drops the key itself (BK_EXPLICIT_FREE: malloc has no
 *                           collector to find it dead): key and datum read BK_NULL from then on.
 *                           The caller frees the key and datum; the entry is a block (bk_free).
 *
 * What each backend makes of it:
 *   gcfuzz  an ephemeron (gc_ephemeron_alloc; the tag is its one raw data word): the datum is
 *           kept only while the key is kept by other means, and a cycle that finds the key dead
 *           clears key and datum. A read while a cycle marks shades what it returns (gc.h), so
 *           a key read then lives to the next cycle.
 *   bdwgc   no ephemerons: a GC_MALLOC'd entry whose key word is hidden (GC_HIDE_POINTER: not a
 *           pointer to the conservative scan) and registered with
 *           GC_general_register_disappearing_link, so the collection that finds the key
 *           unreachable clears it; reads reveal it under the allocation lock
 *           (GC_call_with_alloc_lock), as bdwgc's gc.h requires. The datum is an ordinary
 *           pointer: it stays alive until the program drops the entry, and a datum that points
 *           back to its key keeps the key alive for ever (no ephemeron semantics). A benchmark
 *           that must compute the same thing on both never lets a datum reach its key.
 *           A word elsewhere that happens to look like the key (a stale stack slot) keeps it too.
 *   malloc  a plain [key, datum, tag] block; bk_ephe_clear empties it, nothing else does.
 *
 * Rooting. gcfuzz is precise and never moves a block (but see bk_collect_full below), but it
 * frees every block that is not reachable from a root at a collection, and any allocation may
 * collect. So a reference held in a local variable across an allocation must sit in a root
 * frame; the other backends turn these macros into plain locals and nothing:
 *
 *   BK_FRAME(name, n);      declares `bk_ref name[n]`, every slot BK_NULL, and makes the slots
 *                           roots. Frames nest like blocks; end the innermost first.
 *   BK_FRAME_END(name);     the slots stop being roots. A reference read out of them just before
 *                           stays valid until the next allocation (enough to return it).
 *   BK_GLOBAL_ROOT(&slot);  a `bk_ref` variable with static storage becomes a root...
 *   BK_GLOBAL_UNROOT(&slot);   ...until this.
 *
 * A reference need not be rooted while its block is reachable from a rooted one: blocks never
 * move, so it stays valid. GCBench's top-down construction relies on this.
 * The one exception: with compact=N in GCFUZZ_PARAMS (ci/bench's gcfuzz-compact), bk_collect_full
 * may move blocks (gc.h, gc_compact). Across it, only references in root frames, global roots
 * and fields of blocks are updated: a benchmark that calls it reads every other reference
 * again from those afterwards (fragment does).
 *
 * Threads. A program built with BENCH_THREADS > 1 (bench/BUILD: the `_2` programs) may run the
 * benchmark on more than one thread; the backend is then built thread-safe (gcfuzz: the domain is
 * thread-local; bdwgc: GC_THREADS; malloc: nothing to do). With BENCH_THREADS 1 the code below is
 * exactly the single-threaded backend, and starting a thread is a fatal error.
 *
 *   bk_thread               a thread the benchmark started (the caller owns the struct).
 *   bk_thread_start(t, fn, arg)  from the main thread, between bk_init and bk_fini: run fn(arg) on
 *                           a new thread, a mutator like the main one (gcfuzz: on its own domain,
 *                           spawned from the main one; bdwgc: a registered thread). fn's
 *                           references follow the same rooting rules, in its own frames.
 *   bk_thread_join(t)       from the main thread: wait until fn returned (gcfuzz: in a blocking
 *                           section, so collections of the other domains never wait for it).
 *                           What fn allocated stays alive if it is reachable from a root.
 *
 * Blocks may be shared between threads (read-only in the benchmarks): a collection started by one
 * thread stops the others at their next allocation slow path (gcfuzz) or by signal (bdwgc).
 *
 * BENCH_VERBOSE=1 in the environment makes bk_fini print the backend's own statistics on stderr.
 */
#ifndef BENCH_BACKEND_H
#define BENCH_BACKEND_H

#include "bench/bench.h" /* BENCH_THREADS, before the backend header (bdwgc needs it first) */

#if defined(BENCH_BACKEND_GCFUZZ)
#include "bench/backend_gcfuzz.h"
#elif defined(BENCH_BACKEND_BDWGC)
#include "bench/backend_bdwgc.h"
#elif defined(BENCH_BACKEND_MALLOC)
#include "bench/backend_malloc.h"
#else
#error "define one of BENCH_BACKEND_GCFUZZ, BENCH_BACKEND_BDWGC, BENCH_BACKEND_MALLOC"
#endif

#endif /* BENCH_BACKEND_H */
