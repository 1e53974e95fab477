/* The stats pass (the public statistics), run when every domain finished sweeping
 * (GC_HOOK_SWEPT); also callable directly whenever no collection is running.
 *
 * The swept pass holds each owner's own statistics against a recount of its pools; nothing there
 * looks at what an embedder reads, gc_get_stats, which sums them, adds the heap's counters and
 * keeps the maxima. This pass checks every figure of gc_get_stats and gc_pause_history against
 * INV-STATS-2 (gc/heap.h):
 *   - stats.sum: the pool and large figures equal the sums over every owner (each domain and
 *     the orphans), pool_words the pools mapped and not on the free list, orphan_pool_words the
 *     pools on the orphans' lists, large_words the heap's own large word count, domains the
 *     domains, the activity counters the living domains' plus the retired ones';
 *   - stats.recount: free_pools the free list's length, os_pool_bytes the mapped pools, the
 *     finalizer figures the records, the heap's counters what it holds;
 *   - stats.balance: allocated minus freed blocks (words) equal the blocks (words) alive;
 *   - stats.counter: against the last sweep end, no counter decreased, and cycles grew by exactly
 *     one at a sweep end (by at most one when called directly between two);
 *   - stats.maximum: pool_max_words and large_max_words not below their figures nor any domain's
 *     own maximum, max_pause_ns not below any pause, and none of them decreased;
 *   - stats.pauses: the history holds min(pauses, GC_PAUSE_HISTORY) pauses (one a stop of the
 *     world, at least one a cycle), its newest is
 *     last_pause_ns, the newest of the last sweep end is now the one before it, and while the
 *     ring has not wrapped max_pause_ns is the largest.
 * The previous figures are the verifier's (gc_verify_history, one per heap), recorded at every
 * SWEPT point; a direct run compares against them without recording.
 *
 * Cost: O(owners + orphan pools + free pools) list steps, no domain pool or slot read (the swept
 * pass, at the same point, reads every one), plus the pause ring's entries (min(cycles, 256))
 * copied once; at a sweep end the figures read are the verifier's record for the next one. The
 * pass runs at every sweep end of every fuzz input, so it reads what gc_get_stats reads and
 * little more.
 */
#include <stdio.h>
#include <string.h>

#include "gc/large.h"
#include "gc/pool.h"
#include "invariants/pass.h"
#include "invariants/verify.h"

typedef struct statscheck {
  const gc_verify_run *run;
  gc_heap *heap;
  size_t found;
} statscheck;

/* A violation about `where` (a figure's source, for the report's where: line). */
#define violation(sc, kind, where, ...)                                                       \
  do {                                                                                        \
    gc_verify_report *r_ = gc_verify_violation((sc)->run, &(sc)->found, (kind), __VA_ARGS__); \
    if (r_ != NULL) gc_verify_report_where(r_, "%s", (where));                                \
  } while (0)

/* `field` of gc_get_stats is `said`; `what` says it must be `expected`. */
static void expect_eq(statscheck *sc, gc_verify_kind kind, const char *field, uint64_t said,
                      const char *what, uint64_t expected) {
  if (said == expected) return;
  violation(sc, kind, "gc_get_stats", "%s: gc_get_stats says %llu, %s %llu (INV-STATS-2)", field,
            (unsigned long long)said, what, (unsigned long long)expected);
}

/* ---- What the owners hold -------------------------------------------------------------------- */

typedef struct owners_sum {
  gc_heap_stats sum;                        /* every owner's running statistics */
  size_t domains;                           /* domain owners */
  size_t domain_pool_max, domain_large_max; /* the largest of a domain's own maxima */
  uint64_t alloc_blocks, alloc_words, freed_blocks, freed_words; /* domains' plus retired */
  size_t orphan_pool_words; /* the orphans' running pool_words */
  size_t orphan_pools;      /* pools on the orphans' lists */
  size_t free_pools;        /* pools on the heap's free list */
  int lists_complete;       /* those lists ended within their bound */
} owners_sum;

/* Pools on `heads` (GC_NUM_SIZECLASSES lists), at most `bound` (a list that loops is the swept
 * pass's to report: here it only stops the walk). */
static size_t count_pools(gc_pool *const *heads, size_t bound, int *complete) {
  size_t n = 0;
  for (uint32_t bits = gc_verify_pool_classes(heads); bits != 0; bits &= bits - 1) {
    for (gc_pool *p = heads[__builtin_ctz(bits)]; p != NULL; p = p->next) {
      if (++n > bound) {
        *complete = 0;
        return n;
      }
    }
  }
  return n;
}

/* The owners' running statistics and counters; the orphans' pools and the free pools counted on
 * their lists (the domains' pools are the swept pass's to walk: here they are what is mapped and
 * not free). */
static void sum_owners(gc_heap *heap, owners_sum *o) {
  memset(o, 0, sizeof *o);
  o->lists_complete = 1;
  o->alloc_blocks = heap->retired.alloc_blocks;
  o->alloc_words = heap->retired.alloc_words;
  o->freed_blocks = heap->retired.freed_blocks;
  o->freed_words = heap->retired.freed_words;
  size_t bound = heap->mapped_pool_count; /* every pool on a list is mapped */
  for (gc_pool *p = heap->free_pools; p != NULL && o->lists_complete; p = p->next) {
    if (++o->free_pools > bound) o->lists_complete = 0;
  }
  size_t cursor = 0;
  gc_verify_owner ow;
  while (gc_verify_owner_next(heap, &cursor, &ow)) {
    const gc_heap_stats *s = ow.stats;
    gc_heap_stats_add(&o->sum, s);
    if (ow.domain == NULL) {
      o->orphan_pool_words = s->pool_words;
      o->orphan_pools = count_pools(ow.pool_lists[GC_VERIFY_AVAIL], bound, &o->lists_complete) +
                        count_pools(ow.pool_lists[GC_VERIFY_FULL], bound, &o->lists_complete);
      continue;
    }
    const gc_domain *d = ow.domain;
    o->domains++;
    if (s->pool_max_words > o->domain_pool_max) o->domain_pool_max = s->pool_max_words;
    if (s->large_max_words > o->domain_large_max) o->domain_large_max = s->large_max_words;
    o->alloc_blocks += d->alloc_blocks;
    o->alloc_words += d->alloc_words;
    o->freed_blocks += d->freed_blocks;
    o->freed_words += d->freed_words;
  }
}

/* ---- The checks ----------------------------------------------------------------------------- */

/* Returns 1 when pool_words and large_words passed, so the maxima may be held against them. */
static int check_sums(statscheck *sc, const gc_stats *s, const owners_sum *o) {
  size_t found = sc->found;
  const gc_verify_kind k = GC_VK_STATS_SUM;
  const char *owners = "the sum over the owners is";
  expect_eq(sc, k, "pool_words", s->pool_words, owners, o->sum.pool_words);
  expect_eq(sc, k, "pool_live_words", s->pool_live_words, owners, o->sum.pool_live_words);
  expect_eq(sc, k, "pool_live_blocks", s->pool_live_blocks, owners, o->sum.pool_live_blocks);
  expect_eq(sc, k, "pool_frag_words", s->pool_frag_words, owners, o->sum.pool_frag_words);
  expect_eq(sc, k, "large_words", s->large_words, owners, o->sum.large_words);
  expect_eq(sc, k, "large_blocks", s->large_blocks, owners, o->sum.large_blocks);
  expect_eq(sc, k, "orphan_pool_words", s->orphan_pool_words, "the orphans' is",
            o->orphan_pool_words);
  expect_eq(sc, k, "domains", s->domains, "the heap's domain list holds", o->domains);
  expect_eq(sc, k, "large_words", s->large_words, "the heap's large word count is",
            gc_atomic_load_relaxed(&sc->heap->large_words));
  const char *counters = "the living domains' plus the retired ones' are";
  expect_eq(sc, k, "alloc_blocks", s->alloc_blocks, counters, o->alloc_blocks);
  expect_eq(sc, k, "alloc_words", s->alloc_words, counters, o->alloc_words);
  expect_eq(sc, k, "freed_blocks", s->freed_blocks, counters, o->freed_blocks);
  expect_eq(sc, k, "freed_words", s->freed_words, counters, o->freed_words);
  if (!o->lists_complete) return 0; /* a list longer than it can be: the swept pass says why */
  expect_eq(sc, k, "pool_words", s->pool_words, "the pools mapped and not free make",
            (uint64_t)(sc->heap->mapped_pool_count - o->free_pools) * GC_POOL_WSIZE);
  expect_eq(sc, k, "orphan_pool_words", s->orphan_pool_words,
            "the pools on the orphans' lists make", (uint64_t)o->orphan_pools * GC_POOL_WSIZE);
  return sc->found == found;
}

static void check_recounts(statscheck *sc, const gc_stats *s, const owners_sum *o) {
  gc_heap *heap = sc->heap;
  const gc_verify_kind k = GC_VK_STATS_RECOUNT;
  if (o->lists_complete) {
    expect_eq(sc, k, "free_pools", s->free_pools, "the heap's free list holds", o->free_pools);
  }
  expect_eq(sc, k, "os_pool_bytes", s->os_pool_bytes, "the heap's mapped pools make",
            (uint64_t)heap->mapped_pool_count * GC_POOL_BSIZE);
  expect_eq(sc, k, "finalizers", s->finalizers, "the heap's finalizer records are",
            heap->finalizers.count);
  size_t queued = (heap->finq_head <= heap->finq.count ? heap->finq.count - heap->finq_head : 0) +
                  (heap->fin_running != 0);
  expect_eq(sc, k, "finalizers_queued", s->finalizers_queued, "the queue's unrun records are",
            queued);
  expect_eq(sc, k, "finalizers_run", s->finalizers_run, "the heap counted", heap->finalizers_run);
  expect_eq(sc, k, "cycles", s->cycles, "the heap counted", heap->cycles);
  expect_eq(sc, k, "alloc_failures", s->alloc_failures, "the heap counted",
            gc_atomic_load_relaxed(&heap->alloc_failures));
  expect_eq(sc, k, "mark_overflows", s->mark_overflows, "the heap counted", heap->mark_overflows);
  expect_eq(sc, k, "handoffs", s->handoffs, "the heap counted", heap->work.handoffs);
}

static void check_balance(statscheck *sc, const gc_stats *s) {
  const gc_verify_kind k = GC_VK_STATS_BALANCE;
  uint64_t live_blocks = (uint64_t)s->pool_live_blocks + s->large_blocks;
  uint64_t live_words = (uint64_t)s->pool_live_words + s->large_words -
                        (uint64_t)s->large_blocks * GC_LARGE_HEADER_WSIZE;
  if (s->alloc_blocks - s->freed_blocks != live_blocks) {
    violation(sc, k, "gc_get_stats",
              "alloc_blocks %llu - freed_blocks %llu = %llu, but %llu blocks are alive "
              "(pool_live_blocks + large_blocks) (INV-STATS-2)",
              (unsigned long long)s->alloc_blocks, (unsigned long long)s->freed_blocks,
              (unsigned long long)(s->alloc_blocks - s->freed_blocks),
              (unsigned long long)live_blocks);
  }
  if (s->alloc_words - s->freed_words != live_words) {
    violation(sc, k, "gc_get_stats",
              "alloc_words %llu - freed_words %llu = %llu, but %llu words are alive "
              "(pool_live_words + large_words without the large headers) (INV-STATS-2)",
              (unsigned long long)s->alloc_words, (unsigned long long)s->freed_words,
              (unsigned long long)(s->alloc_words - s->freed_words),
              (unsigned long long)live_words);
  }
}

/* `field` now is `now`, at the last sweep end `then`: it must not have decreased. */
static void not_below(statscheck *sc, gc_verify_kind kind, const char *field, uint64_t now,
                      uint64_t then) {
  if (now >= then) return;
  violation(sc, kind, "gc_get_stats, against the last sweep end",
            "%s decreased: %llu at the last sweep end, %llu now (INV-STATS-2)", field,
            (unsigned long long)then, (unsigned long long)now);
}

static void check_counters(statscheck *sc, const gc_stats *s, const gc_stats *p, int at_sweep_end) {
  const gc_verify_kind k = GC_VK_STATS_COUNTER;
  not_below(sc, k, "alloc_blocks", s->alloc_blocks, p->alloc_blocks);
  not_below(sc, k, "alloc_words", s->alloc_words, p->alloc_words);
  not_below(sc, k, "freed_blocks", s->freed_blocks, p->freed_blocks);
  not_below(sc, k, "freed_words", s->freed_words, p->freed_words);
  not_below(sc, k, "alloc_failures", s->alloc_failures, p->alloc_failures);
  not_below(sc, k, "mark_overflows", s->mark_overflows, p->mark_overflows);
  not_below(sc, k, "handoffs", s->handoffs, p->handoffs);
  not_below(sc, k, "finalizers_run", s->finalizers_run, p->finalizers_run);
  not_below(sc, k, "finalizers_run + finalizers_queued", s->finalizers_run + s->finalizers_queued,
            p->finalizers_run + p->finalizers_queued);
  /* Each cycle's sweep end is reported once, before the next cycle marks (gc/cycle.c). */
  uint64_t grew = s->cycles - p->cycles;
  if (s->cycles < p->cycles || (at_sweep_end ? grew != 1 : grew > 1)) {
    violation(sc, k, "gc_get_stats, against the last sweep end",
              "cycles went from %llu at the last sweep end to %llu %s: it must grow by exactly "
              "one from one sweep end to the next (INV-STATS-2)",
              (unsigned long long)p->cycles, (unsigned long long)s->cycles,
              at_sweep_end ? "at this one" : "between two");
  }
}

/* `figures_ok`: the figures passed stats.sum; a wrong one is not the floor of its maximum (it is
 * reported once, as what it is). */
static void check_maxima(statscheck *sc, const gc_stats *s, const owners_sum *o, int figures_ok,
                         const uint64_t *pauses, size_t n, const gc_stats *prev) {
  const gc_verify_kind k = GC_VK_STATS_MAXIMUM;
  struct {
    const char *name;
    uint64_t max;
    const char *of;
    uint64_t value;
  } floors[] = {
      {"pool_max_words", s->pool_max_words, "pool_words", s->pool_words},
      {"large_max_words", s->large_max_words, "large_words", s->large_words},
      {"pool_max_words", s->pool_max_words, "a domain's own pool maximum", o->domain_pool_max},
      {"large_max_words", s->large_max_words, "a domain's own large maximum", o->domain_large_max},
  };
  for (size_t i = figures_ok ? 0 : 2; i < sizeof floors / sizeof floors[0]; i++) {
    if (floors[i].max >= floors[i].value) continue;
    violation(sc, k, "gc_get_stats", "%s %llu is below %s %llu (INV-STATS-2)", floors[i].name,
              (unsigned long long)floors[i].max, floors[i].of, (unsigned long long)floors[i].value);
  }
  for (size_t i = 0; i < n; i++) {
    if (pauses[i] <= s->max_pause_ns) continue;
    violation(sc, k, "gc_pause_history",
              "max_pause_ns %llu is below pause %zu of %zu in the history, %llu (INV-STATS-2)",
              (unsigned long long)s->max_pause_ns, i, n, (unsigned long long)pauses[i]);
    break;
  }
  if (prev == NULL) return;
  not_below(sc, k, "pool_max_words", s->pool_max_words, prev->pool_max_words);
  not_below(sc, k, "large_max_words", s->large_max_words, prev->large_max_words);
  not_below(sc, k, "max_pause_ns", s->max_pause_ns, prev->max_pause_ns);
}

static void check_pauses(statscheck *sc, const gc_stats *s, const uint64_t *pauses, size_t n,
                         const gc_verify_history *h, int at_sweep_end) {
  const gc_verify_kind k = GC_VK_STATS_PAUSES;
  size_t expected = s->pauses < GC_PAUSE_HISTORY ? (size_t)s->pauses : GC_PAUSE_HISTORY;
  if (n != expected) {
    violation(sc, k, "gc_pause_history",
              "the history holds %zu pauses after %llu stops: one a stop, at most %d, so %zu "
              "(INV-STATS-2)",
              n, (unsigned long long)s->pauses, GC_PAUSE_HISTORY, expected);
    return;
  }
  if (s->pauses < s->cycles) {
    violation(sc, k, "gc_get_stats",
              "%llu stops recorded for %llu cycles: every cycle stops the world at least once "
              "(INV-STATS-2)",
              (unsigned long long)s->pauses, (unsigned long long)s->cycles);
  }
  uint64_t newest = n > 0 ? pauses[n - 1] : 0;
  if (s->last_pause_ns != newest) {
    violation(sc, k, "gc_pause_history",
              "last_pause_ns is %llu, the history's newest pause %llu (INV-STATS-2)",
              (unsigned long long)s->last_pause_ns, (unsigned long long)newest);
  }
  if (s->pauses <= GC_PAUSE_HISTORY) {
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++) max = pauses[i] > max ? pauses[i] : max;
    if (s->max_pause_ns != max) {
      violation(sc, k, "gc_pause_history",
                "max_pause_ns is %llu, the largest of every pause so far (%zu, all in the "
                "history) %llu (INV-STATS-2)",
                (unsigned long long)s->max_pause_ns, n, (unsigned long long)max);
    }
  }
  if (h == NULL || !h->have || h->pauses == 0) return;
  /* Cycles that did not grow by 0 or 1 are stats.counter's to report. */
  uint64_t more_cycles = s->cycles == h->last.cycles + 1 ? 1 : 0;
  if (s->pauses < h->last.pauses || s->pauses - h->last.pauses < more_cycles) {
    violation(sc, k, "gc_get_stats, against the last sweep end",
              "%llu stops recorded, %llu at the last sweep end, for %llu cycles more: stops only "
              "grow, at least one a cycle (INV-STATS-2)",
              (unsigned long long)s->pauses, (unsigned long long)h->last.pauses,
              (unsigned long long)(s->cycles - h->last.cycles));
    return;
  }
  /* The last sweep end's newest pause, as many places from the end as stops were made since. */
  uint64_t since = s->pauses - h->last.pauses;
  if (since + 1 > n || (at_sweep_end && s->cycles != h->last.cycles + 1)) return;
  size_t back = (size_t)since + 1;
  if (pauses[n - back] != h->newest_pause) {
    violation(sc, k, "gc_pause_history, against the last sweep end",
              "the newest pause at the last sweep end, %llu, is not where the history has it now "
              "(%zu from its end, %llu) (INV-STATS-2)",
              (unsigned long long)h->newest_pause, back, (unsigned long long)pauses[n - back]);
  }
}

/* ---- The pass ------------------------------------------------------------------------------- */

static void record(gc_verify_history *h, const gc_stats *s, const uint64_t *pauses, size_t n) {
  h->last = *s;
  h->pauses = n;
  h->newest_pause = n > 0 ? pauses[n - 1] : 0;
  h->have = 1;
}

void gc_verify_stats_record(gc_verify_history *h, gc_heap *heap) {
  uint64_t pauses[GC_PAUSE_HISTORY];
  gc_stats s;
  gc_get_stats(heap, &s);
  record(h, &s, pauses, gc_pause_history(heap, pauses, GC_PAUSE_HISTORY));
}

size_t gc_verify_stats_run(const gc_verify_run *run) {
  statscheck sc = {.run = run, .heap = run->heap};
  gc_stats s;
  gc_get_stats(run->heap, &s);
  uint64_t pauses[GC_PAUSE_HISTORY];
  size_t n = gc_pause_history(run->heap, pauses, GC_PAUSE_HISTORY);
  owners_sum o;
  sum_owners(run->heap, &o);
  const gc_verify_history *h = run->history != NULL && run->history->have ? run->history : NULL;
  int at_sweep_end = run->at_hook && run->hook == GC_HOOK_SWEPT;
  int figures_ok = check_sums(&sc, &s, &o);
  check_recounts(&sc, &s, &o);
  check_balance(&sc, &s);
  if (h != NULL) check_counters(&sc, &s, &h->last, at_sweep_end);
  check_maxima(&sc, &s, &o, figures_ok, pauses, n, h != NULL ? &h->last : NULL);
  check_pauses(&sc, &s, pauses, n, h, at_sweep_end);
  /* This sweep end is the next one's history (the verifier records it when the pass is off). */
  if (at_sweep_end && run->history != NULL) record(run->history, &s, pauses, n);
  return sc.found;
}

size_t gc_verify_stats(gc_heap *heap, gc_verify_reports *out) {
  gc_verify_run run = {.heap = heap, .point = "direct", .out = out};
  return gc_verify_stats_run(&run);
}
