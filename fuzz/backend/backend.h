/* The backend interface: what the fuzz harness needs of a collector, and nothing more.
 *
 * The op language (fuzz/lang), the backend-neutral model oracle and the driver that runs a
 * program through a backend (fuzz/oracle), the replay tool and the campaigns speak to a collector
 * only through this header. A backend is one `fuzz_backend` table of functions plus a capability
 * mask; gcfuzz's own collector is one (fuzz/backend/gcfuzz), Lua 5.4 and bdwgc are others
 * (fuzz/backend/lua, fuzz/backend/bdwgc), each built from its own sources. A backend depends on
 * its collector and on this header, never on the oracle above it nor on invariants/ (gcfuzz's own
 * passes are gcfuzz's backend's deep check; nobody else's).
 *
 * Cells. The driver never holds a pointer into a collected heap: a moving collector, a collector
 * whose values live on its own stack (Lua) and a conservative one (bdwgc) would each make such a
 * pointer a lie. Every reference the driver has lives in one of the backend's root **cells**,
 * numbered 0..cells-1 (fuzz_backend_config.cells), each empty or holding one block, and every
 * cell is a root of the collector for the life of the heap. Ops name cells: allocate into one,
 * store the block of one into a field of the block of another, load a field into a cell, copy,
 * clear. So a block is reachable exactly when the driver's model says so (INV-BACKEND-1 below),
 * whatever the collector's own notion of roots is.
 *
 * Identity. Every block carries an identity the backend stores in the block's own memory and
 * cannot forge: a 64-bit id and a 64-bit check word, written once by the driver right after the
 * allocation (set_ident) and read back (get_ident) whenever the driver meets the block again
 * (a load, a weak get, a finalizer, a walk). A block freed too early and its memory reused, a
 * field that names the wrong block, a raw block whose bytes changed: the identity or the check
 * word read back is not the model's. The check word of a raw block is a hash of its id and its
 * payload words (the driver recomputes it from what it wrote), so a raw block's contents are
 * checked too, not only its name.
 *
 * INV-BACKEND-1: a block is reachable from the driver only through cells and through the fields
 * of reachable scanned blocks (and, where the backend has them, through finalizers about to run,
 * weak references read while their target lives, and conservative range words). Nothing else the
 * driver does keeps a block alive, so the model's reachability is the collector's obligation.
 */
#ifndef FUZZ_BACKEND_BACKEND_H
#define FUZZ_BACKEND_BACKEND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- Capabilities -------------------------------------------------------------------------- */

/* X(NAME, "what a backend with it does"): one row a capability. The decoder gives a backend only
 * the ops its capabilities allow (fuzz/oracle/opset.c says which op needs which), and the model
 * applies the semantics a capability states. */
#define FUZZ_BACKEND_CAPS(X)                                                                   \
  X(RAW, "raw blocks: N words the collector never scans (Lua: full userdata)")                 \
  X(LARGE, "blocks of 128..1151 fields (alloc_large)")                                         \
  X(INCREMENTAL, "collect slice/start run a bounded step of an incremental cycle")             \
  X(FINALIZERS, "finalizers on any block: run once after a cycle finds the block unreachable") \
  X(RESURRECT, "a finalizer may store its block somewhere reachable: it then lives")           \
  X(FIN_CLEAR, "a set finalizer can be removed before it runs")                                \
  X(FIN_ORDERED,                                                                               \
    "a block reachable from a block with a finalizer set (itself too) is not "                 \
    "finalized until that finalizer ran")                                                      \
  X(WEAK, "weak references: a block whose one weak slot names a target without keeping it")    \
  X(EPHEMERON, "ephemerons: a key and a datum, the datum kept only while the key lives")       \
  X(WEAK_SET,                                                                                  \
    "a weak reference's target and an ephemeron's key and datum set after it is made: a "      \
    "store through the barrier (weak_set, ephe_set)")                                          \
  X(CONSERVATIVE, "registered ranges of raw words that keep alive any block they point into")  \
  X(PRECISE,                                                                                   \
    "a full collection frees every block nothing keeps (cells, fields, finalizers, "           \
    "and range words, which keep whatever block they point into; checked by walk; on "         \
    "threads, once every other domain is parked: a running one sweeps its own lazily)")        \
  X(WALK, "walk: the identities of every block the heap holds")                                \
  X(FAIL, "an injected allocation failure: the N-th allocation from now fails")                \
  X(TUNE, "parameters as ops (tune pN V; the backend's table of tunables)")                    \
  X(DEEP_CHECK, "a deep check of the collector's own invariants, after every collection")      \
  X(DOMAINS, "domains: mutators of the collector's own (threads, coroutines) the ops run on")  \
  X(BLOCKING, "a running domain may leave the heap for a while (a thread in a system call)")   \
  X(THREADS,                                                                                   \
    "each domain's calls come from a thread of its own (domain_attach), one thread at a "      \
    "time under the controlled scheduler, its cell bank its own roots")                        \
  X(PIN, "pins: a pinned block is a root, its fields too, until unpinned, whatever holds it")  \
  X(LIMIT, "a heap limit: an allocation that would take the heap past it fails")               \
  X(UNITS,                                                                                     \
    "address_unit: the allocation unit holding a block (a pool, a page), for range "           \
    "words aimed at its header, its free slots, its neighbours")                               \
  X(MISUSE, "misuse: API calls the collector must refuse with a documented error, unchanged")  \
  X(CORRUPT,                                                                                   \
    "corrupt: the heap damaged on purpose, seen by the deep check, repaired exactly (the "     \
    "check of the checker)")                                                                   \
  X(COMPACT,                                                                                   \
    "compact: blocks move now, every cell, field, weak slot and finalizer following its "      \
    "block; pinned blocks and blocks a range word names stay")

typedef enum fuzz_backend_cap_bit {
#define FUZZ_BACKEND_CAP_BIT(name, what) FUZZ_CAP_BIT_##name,
  FUZZ_BACKEND_CAPS(FUZZ_BACKEND_CAP_BIT)
#undef FUZZ_BACKEND_CAP_BIT
      FUZZ_CAP_COUNT
} fuzz_backend_cap_bit;

enum {
#define FUZZ_BACKEND_CAP_MASK(name, what) FUZZ_CAP_##name = 1u << FUZZ_CAP_BIT_##name,
  FUZZ_BACKEND_CAPS(FUZZ_BACKEND_CAP_MASK)
#undef FUZZ_BACKEND_CAP_MASK
};

extern const char *const fuzz_backend_cap_names[FUZZ_CAP_COUNT]; /* "raw", "large", ... */
extern const char *const fuzz_backend_cap_whats[FUZZ_CAP_COUNT];

/* ---- Values and kinds ---------------------------------------------------------------------- */

typedef enum fuzz_block_shape {
  FUZZ_SHAPE_SCAN, /* N fields, each empty (NULL/nil), an integer, or a block */
  FUZZ_SHAPE_RAW,  /* N payload words of data (FUZZ_CAP_RAW) */
} fuzz_block_shape;

/* What a field holds, as load reports it. */
typedef enum fuzz_field_kind {
  FUZZ_FIELD_EMPTY, /* NULL, nil: nothing */
  FUZZ_FIELD_INT,   /* an integer the driver stored (store_int) */
  FUZZ_FIELD_BLOCK, /* a block: load put it in the destination cell */
  FUZZ_FIELD_OTHER, /* anything else: never stored by the driver, always a finding */
} fuzz_field_kind;

typedef enum fuzz_collect_kind {
  FUZZ_COLLECT_SLICE, /* a bounded step (incremental backends; otherwise a minor or nothing) */
  FUZZ_COLLECT_MAJOR, /* a whole cycle from the call */
  FUZZ_COLLECT_FULL,  /* a whole cycle, and everything it frees given back */
  FUZZ_COLLECT_START, /* begin a cycle and return mid-cycle where the backend can */
} fuzz_collect_kind;

/* One finding of a backend's deep check: kind "<backend>.<what>" (stable: the crash key of a
 * campaign), a message for people. */
typedef struct fuzz_finding {
  char kind[48];
  char message[512];
} fuzz_finding;

/* Fill a finding: kind "<prefix>.<what>", the message from fmt; the one way the backends' checks
 * write theirs (fuzz/backend/registry.c). */
void fuzz_finding_set(fuzz_finding *f, const char *prefix, const char *what, const char *fmt,
                      va_list ap);

/* What a corrupt call came to (FUZZ_CAP_CORRUPT). */
typedef enum fuzz_plant_result {
  FUZZ_PLANT_NONE,       /* not one of the backend's, or it cannot apply here: nothing planted */
  FUZZ_PLANT_CAUGHT,     /* planted, reported by the check that must see it, repaired, and that
                             * check quiet again */
  FUZZ_PLANT_FOUND,      /* the check reported something before anything was planted: the
                             * collector's own finding (the finding says what) */
  FUZZ_PLANT_MISSED,     /* planted, and the check did not report it (the finding says what it
                             * reported instead) */
  FUZZ_PLANT_UNREPAIRED, /* repaired, and the check still reports (the finding: what) */
} fuzz_plant_result;

/* What a misuse call came to (FUZZ_CAP_MISUSE). */
typedef enum fuzz_misuse_answer {
  FUZZ_ANSWER_NOT_MINE, /* the backend makes no such misuse: nothing done */
  FUZZ_ANSWER_REFUSED,  /* refused with the documented error, nothing changed */
  FUZZ_ANSWER_WRONG,    /* accepted, refused with another error, or changed something (`what`) */
} fuzz_misuse_answer;

/* ---- Tunables ------------------------------------------------------------------------------ */

/* A parameter the `tune pN V` op sets: V is 0..255 and the backend maps it onto the parameter's
 * legal range, its corners (0, 1, the minimum, the maximum) reachable. The text form prints the
 * number; replay --trace and --list-tunables print the names. */
typedef struct fuzz_tunable {
  const char *name; /* "pause", "stepmul", "mode" */
  const char *what; /* one line: what V sets */
} fuzz_tunable;

enum { FUZZ_TUNABLES_MAX = 12 }; /* tune p0..p11: fuzz/lang/ops.h, FUZZ_TUNABLE_COUNT */

/* ---- Rare events --------------------------------------------------------------------------- */

/* A rare event of the backend's collector: something its collector does seldom under ordinary
 * programs and a fuzzer should make common (an emergency collection, a mode switch, a weak
 * entry cleared, a mark abandoned). The census of `replay --events` and `ci/campaign --census`
 * counts them over a corpus and lists those that never happened: a path the fuzzer never
 * tries. Each backend has one table (fuzz_backend.rare_events), names stable ("gen.minor",
 * "emergency"), its first row "cycle" (whole marks completed: the census's per-cycle unit). */
typedef struct fuzz_rare_event {
  const char *name; /* "emergency" */
  const char *what; /* one line: what one count is */
} fuzz_rare_event;

enum { FUZZ_RARE_EVENTS_MAX = 48 }; /* the longest table: gcfuzz's gc.h GC_EVENTS, 30 */

/* ---- The heap ------------------------------------------------------------------------------ */

typedef struct fuzz_bheap fuzz_bheap; /* one backend's heap: opaque to the driver */

/* Calls from the backend into the driver while a collector runs the driver's callbacks. */
typedef struct fuzz_backend_events {
  void *user;
  /* A finalizer set with `token` (fin_set) runs now. For the length of the call its block is in
   * cell FUZZ_CELL_SELF(cfg) (one past the last ordinary cell), so the driver can read its
   * identity and resurrect it by copying the cell elsewhere; the cell is emptied after the call.
   * The driver may call any function of the table from inside (a finalizer body allocates,
   * stores, sets finalizers, makes weak references) but collect, run_finalizers, tune,
   * fail_after and the domain calls. */
  void (*finalize)(void *user, uint64_t token);
  /* A finding the backend makes outside check: a check it runs inside the collector's own steps
   * (between the cycles of a full collection, after a step an allocation paid for), a wrong free
   * its allocator saw. Reported at once, against the op running, so that a fuzz target stops on
   * it before the collector's next step reads what the finding is about (a sanitizer would stop
   * there, and name the symptom rather than the cause). May be called from any function of the
   * table; the backend goes on after it. */
  void (*finding)(void *user, const fuzz_finding *f);
} fuzz_backend_events;

typedef struct fuzz_backend_config {
  size_t cells; /* root cells 0..cells-1, plus FUZZ_CELL_SELF; all empty at create */
  /* The cells come in `cell_banks` banks of cells / cell_banks each. 1, unless the driver runs
   * domains on threads of their own (FUZZ_CAP_THREADS): then FUZZ_DOMAINS, and bank d holds
   * domain d's cells, which only d's thread names. A collector that keeps roots per domain (a
   * domain's frames) roots bank d in domain d from its domain_attach on, so a domain whose
   * thread has left still holds its bank (a parked domain's frames); one with heap-wide roots
   * roots every bank as it roots every cell. */
  size_t cell_banks;
  const char *params; /* the backend's own parameter text (replay --params), or NULL */
  FILE *out;          /* where the backend prints what it must (create errors); never NULL */
  fuzz_backend_events events;
} fuzz_backend_config;

#define FUZZ_CELL_SELF(cfg) ((cfg)->cells)

typedef struct fuzz_backend {
  const char *name; /* "gcfuzz", "lua", "bdwgc": --backend NAME */
  const char *what; /* one line for --list-backends */
  unsigned caps;    /* FUZZ_CAP_* */
  const fuzz_tunable *tunables;
  size_t tunable_count;
  /* The bound of the leak check (the model, after `collect full`): live_bytes may exceed the
   * model's own count of live payload bytes by at most slack_factor times it plus slack_bytes.
   * A conservative collector states a wider bound than a precise one. */
  double leak_slack_factor;
  size_t leak_slack_bytes;

  /* A fresh, empty heap; NULL with a message on cfg->out when it cannot be made (bad params,
   * out of memory). A process may hold one heap of a backend at a time (Lua and gcfuzz could
   * hold more; bdwgc's heap is the process's). */
  fuzz_bheap *(*create)(const fuzz_backend_config *cfg);
  /* Everything the heap holds is given back (finalizers still set do not run). */
  void (*destroy)(fuzz_bheap *h);

  /* Allocate a block of `fields` fields (scan) or payload words (raw) into cell `dst`; the
   * fields are empty (scan) or zero (raw). Returns 1, or 0 when the collector refused (out of
   * memory, an injected failure): dst is then empty. May collect. */
  int (*alloc)(fuzz_bheap *h, size_t dst, fuzz_block_shape shape, size_t fields);
  /* Write and read the identity of the block in `cell` (see the top). get returns 0 when the
   * cell is empty. */
  void (*set_ident)(fuzz_bheap *h, size_t cell, uint64_t id, uint64_t check);
  int (*get_ident)(fuzz_bheap *h, size_t cell, uint64_t *id, uint64_t *check);

  /* Scanned fields. store puts the block in `src` (empty: NULL/nil) into field `field` of the
   * scanned block in `obj`, through the collector's write barrier; store_int an integer
   * 0..2^31. load reads field `field` of the scanned block in `obj`: a block goes into cell
   * `dst` (which is emptied otherwise), an integer into *value. Fields are 0..fields-1; the
   * driver never names one past the end. */
  void (*store)(fuzz_bheap *h, size_t obj, size_t field, size_t src);
  void (*store_int)(fuzz_bheap *h, size_t obj, size_t field, int64_t value);
  fuzz_field_kind (*load)(fuzz_bheap *h, size_t dst, size_t obj, size_t field, int64_t *value);
  /* Raw payload words of the raw block in `obj` (FUZZ_CAP_RAW). */
  void (*raw_write)(fuzz_bheap *h, size_t obj, size_t word, uint64_t value);
  uint64_t (*raw_read)(fuzz_bheap *h, size_t obj, size_t word);

  /* Cells: dst = the block in src (or empty); dst = empty. */
  void (*copy)(fuzz_bheap *h, size_t dst, size_t src);
  void (*clear)(fuzz_bheap *h, size_t cell);

  /* A collection of the kind; `budget` sizes a slice (0..255, the backend's unit). */
  void (*collect)(fuzz_bheap *h, fuzz_collect_kind kind, unsigned budget);
  /* Run the finalizers the collector has queued, where it queues them rather than running them
   * inside a collection (bdwgc's finalize-on-demand); NULL otherwise. Returns how many ran. */
  size_t (*run_finalizers)(fuzz_bheap *h);
  /* tune pN V (FUZZ_CAP_TUNE): N < tunable_count. */
  void (*tune)(fuzz_bheap *h, unsigned param, unsigned value);
  /* An injected failure (FUZZ_CAP_FAIL): the N-th allocation the collector makes from now for
   * alloc, weak_new or ephe_new is refused as if memory were out (0: none due), and the call
   * that made it returns 0. Each such call makes at least one allocation (a Lua table makes
   * two), so exactly one of the next N of them fails; none made inside a finalizer counts. */
  void (*fail_after)(fuzz_bheap *h, unsigned n);

  /* Finalizers (FUZZ_CAP_FINALIZERS): set on the block in `cell` (replacing one set before),
   * with a token handed back to events.finalize; clear (FUZZ_CAP_FIN_CLEAR) returns 0 when the
   * collector says the block has none. */
  int (*fin_set)(fuzz_bheap *h, size_t cell, uint64_t token);
  int (*fin_clear)(fuzz_bheap *h, size_t cell);

  /* Weak references (FUZZ_CAP_WEAK): a new weak-reference block into `dst` whose slot names
   * the block in `target`; weak_get puts the target into `dst` while it lives (returns 1) or
   * empties dst (returns 0). Ephemerons (FUZZ_CAP_EPHEMERON): a new ephemeron block with a key
   * and a datum; ephe_get puts the datum into `dst` while the key lives. Both blocks carry an
   * identity like any other. */
  int (*weak_new)(fuzz_bheap *h, size_t dst, size_t target);
  int (*weak_get)(fuzz_bheap *h, size_t dst, size_t weak);
  int (*ephe_new)(fuzz_bheap *h, size_t dst, size_t key, size_t datum);
  int (*ephe_get)(fuzz_bheap *h, size_t dst, size_t ephe);
  /* Setting them (FUZZ_CAP_WEAK_SET, with WEAK for weak_set and EPHEMERON for ephe_set): the
   * weak reference in `weak` names the block in `target` from now on, the ephemeron in `ephe`
   * has the key in `key` and the datum in `datum`; an empty cell is none, and a get answers
   * empty (0) while the target, the key or the datum is none. Each is a store into the
   * collector's own slots, made as the collector's API makes it (gcfuzz: gc_weak_set,
   * gc_ephemeron_set_key and _datum, through its write barrier while a cycle marks; Lua: rawset
   * on the weak table, with its back barrier): the old target, key or datum may be the only path
   * a marker still had to a block reachable when marking began. A reference that was cleared
   * answers again after a set, as a new one would; nothing allocates. The driver sets only
   * outside finalizers (ops.h: a body does not run weak_set or ephe_set). */
  void (*weak_set)(fuzz_bheap *h, size_t weak, size_t target);
  void (*ephe_set)(fuzz_bheap *h, size_t ephe, size_t key, size_t datum);

  /* Conservative ranges (FUZZ_CAP_CONSERVATIVE): words[0..count) become a root range scanned
   * word by word; address gives the block's address and byte size for aiming words at it. */
  int (*range_add)(fuzz_bheap *h, uintptr_t *words, size_t count);
  int (*address)(fuzz_bheap *h, size_t cell, uintptr_t *start, size_t *bsize);
  /* (FUZZ_CAP_UNITS, with CONSERVATIVE) The collector's unit of allocation that holds the block
   * in `cell`: its first byte and its size (gcfuzz: the block's pool, or a large block itself;
   * a page allocator: the page or run of pages). range_pool aims words into it. 0: empty cell. */
  int (*address_unit)(fuzz_bheap *h, size_t cell, uintptr_t *start, size_t *bytes);

  /* Domains (FUZZ_CAP_DOMAINS): the collector's own mutators, which the ops run on one at a time
   * (gcfuzz: gc_domain, the others waiting in blocking sections; Lua: coroutines, each a
   * lua_State of the heap's; bdwgc: threads made by GC_pthread_create, the others parked).
   * Domain 0 is the heap's first and always there; 1..FUZZ_DOMAINS-1 exist between spawn and end.
   * spawn makes domain d (0 when it exists already or the collector refused: out of memory);
   * on makes the calls that follow run on domain d (spawned, or 0) until the next on: the
   * allocations are d's, a collection is started by d, a finalizer runs on d's thread where the
   * collector runs it in the caller (a call the collector cannot tell apart by thread, such as
   * reading an identity, may run where the driver is: bdwgc's README says which); end finishes domain d, giving back what it held of its own
   * (a thread's local free lists, a coroutine's stack, a domain's pools become orphans); the
   * calls run on domain 0 after if they ran on d. A domain owns no cell: the cells are the heap's
   * and stay roots whichever domain runs, so domains change how the collector works, never what
   * the model reaches. Either all three are set, or none. */
  int (*domain_spawn)(fuzz_bheap *h, unsigned d);
  void (*domain_on)(fuzz_bheap *h, unsigned d);
  void (*domain_end)(fuzz_bheap *h, unsigned d);
  /* Blocking sections (FUZZ_CAP_BLOCKING, with DOMAINS): block puts the domain the calls run on
   * in one (a thread parked in a system call: it touches no block until unblock, and a
   * collection goes on without waiting for it); unblock brings it back. The driver calls only
   * domain_on, domain_end, unblock and collect-free functions (none) while the running domain is
   * blocked; domain_on away from a blocked domain leaves it blocked, and back to it finds it so. */
  void (*domain_block)(fuzz_bheap *h);
  void (*domain_unblock)(fuzz_bheap *h);

  /* Threads (FUZZ_CAP_THREADS, with DOMAINS and BLOCKING; the driver's threaded mode, config
   * cell_banks FUZZ_DOMAINS). Every domain's calls come from a thread of its own, and the
   * threads run one at a time under fuzz/sched's controlled scheduler, which switches at the
   * driver's points between two ops and at every point the collector itself passes
   * (gc/platform.h, where the collector has them). domain_on is not called: a call acts on the
   * calling thread's domain. attach makes the calling thread domain d's (spawned, or 0, which
   * the thread that made the heap detached first), bringing it out of the blocking section it
   * waits in; returns 0 when the collector refused. detach puts the calling thread's domain in
   * a blocking section for good and lets the thread go (it may end, or attach again): the
   * domain stays, its cells still roots, until domain_end from a thread attached to it (which
   * detaches that thread too). safepoint, between two ops of a thread (NULL: none), polls
   * the collector (a stop it asked for). sched_name, if set, names the collector's locks and
   * protocol words for the printed interleaving (fuzz/sched: fuzz_sched_name). The events
   * (finalize, finding) come on the thread whose call led to them: the driver answers them with
   * that thread's cells. */
  int (*domain_attach)(fuzz_bheap *h, unsigned d);
  void (*domain_detach)(fuzz_bheap *h);
  void (*safepoint)(fuzz_bheap *h);
  void (*sched_names)(fuzz_bheap *h, void (*name)(void *user, const void *object, const char *what),
                      void *user);

  /* Pins (FUZZ_CAP_PIN): pin makes the block in `cell` a root until unpin (pinning twice is
   * pinning once); returns 1, or 0 when the collector refused. unpin returns 1 when the block
   * was pinned, 0 when the collector says it was not (and then changes nothing). */
  int (*pin)(fuzz_bheap *h, size_t cell);
  int (*unpin)(fuzz_bheap *h, size_t cell);

  /* The heap limit (FUZZ_CAP_LIMIT): allocations that would take the collector's heap past
   * `bytes` fail (alloc returns 0) once a collection cannot make room; 0 lifts it. */
  void (*limit)(fuzz_bheap *h, size_t bytes);

  /* Misuses (FUZZ_CAP_MISUSE), by the op language's names (fuzz/lang: fuzz_misuse_names, e.g.
   * "pin-null", "bad-param"): make the misuse `name` and say how the collector answered, with a
   * line for people in `what` when it was wrong. A backend makes those of the names its API
   * has a documented refusal for (the others: FUZZ_ANSWER_NOT_MINE). The driver runs the deep check right
   * after: a refused call leaves the heap as it was. */
  fuzz_misuse_answer (*misuse)(fuzz_bheap *h, const char *name, char *what, size_t len);
  /* Corruptions (FUZZ_CAP_CORRUPT), by the op language's names (fuzz_corruption_names, e.g.
   * "reach.zero-header"): the check of the deep check. Damage the heap in the way `name` says,
   * on or around the block in `cell` (n: which field, entry or neighbour), run the part of the
   * deep check that must see it, repair it exactly (the heap as it was, byte for byte), run that
   * part again; a corruption that only means something right after a mark runs a collection of
   * its own and is planted there. The finding says what the check reported when the answer is
   * FOUND, MISSED or UNREPAIRED. */
  fuzz_plant_result (*corrupt)(fuzz_bheap *h, const char *name, size_t cell, unsigned n,
                               fuzz_finding *found);

  /* Compaction (FUZZ_CAP_COMPACT): move blocks now (gcfuzz: gc_compact, after finishing the
   * cycle under way). Every cell, scanned field, weak slot, ephemeron and finalizer names the
   * same block after as before (its identity reads back the same); a pinned block, a block a
   * conservative range word names and the block whose finalizer runs stay where they are. The
   * backend calls moved(user, id, start) once for each block that moved, with its identity and
   * its new start as `address` gives it, so that a driver aiming range words at addresses
   * follows (a word it wrote before names no moved block: those stay). Returns 1, or 0 when the
   * collector refused (nothing moved). Not called from a finalizer. On a threaded heap the
   * other domains are stopped meanwhile, maybe inside a call of their own, and `moved` is this
   * call's alone: called on this thread for this call's moves, never for the moves of another
   * thread's compact (which go to that call's `moved`), even when the two calls overlap. */
  int (*compact)(fuzz_bheap *h, void (*moved)(void *user, uint64_t id, uintptr_t start),
                 void *user);

  /* Introspection. walk (FUZZ_CAP_WALK) calls visit with the identity of every block the heap
   * holds now, whether reachable or not yet freed, and returns how many blocks it met that had
   * no identity it could read (blocks of the backend's own, e.g. weak tables, not counted).
   * live_bytes is the collector's own count of the bytes it holds now. */
  size_t (*walk)(fuzz_bheap *h, void (*visit)(void *user, uint64_t id, uint64_t check), void *user);
  size_t (*live_bytes)(fuzz_bheap *h);
  /* The backend's deep check (FUZZ_CAP_DEEP_CHECK), run by the driver after every collection
   * and at the end: returns the number of findings, the first `max` of them written to out. */
  size_t (*check)(fuzz_bheap *h, fuzz_finding *out, size_t max);

  /* Rare events (optional: rare_event_count 0 and rare_counts NULL for none). rare_counts
   * writes counts[0..rare_event_count), how often each event of rare_events happened since
   * create, observed from outside the collector's sources (its API, its state read before and
   * after a call, the calls the backend makes into it); the driver reads them once, before
   * destroy. */
  const fuzz_rare_event *rare_events;
  size_t rare_event_count;
  void (*rare_counts)(fuzz_bheap *h, uint64_t *counts);
} fuzz_backend;

/* ---- The backends this binary was linked with ---------------------------------------------- */

/* The table of backends (fuzz/backend/registry.c and the backends linked in): NULL when `name`
 * is not one; fuzz_backend_names lists them for messages ("gcfuzz, lua, bdwgc"). */
const fuzz_backend *fuzz_backend_find(const char *name);
size_t fuzz_backend_names(char *out, size_t cap);

/* The count of b's rare event `name` on heap h since its create; UINT64_MAX when b has no event
 * of that name (the tests of a backend's table). */
uint64_t fuzz_rare_count(const fuzz_backend *b, fuzz_bheap *h, const char *name);

#endif /* FUZZ_BACKEND_BACKEND_H */
