/* Custom blocks: the finalize function runs exactly once, when the block is swept, or at heap
 * destruction for blocks still alive then. */
#include "gc/check.h"
#include "gc/gc.h"

enum { N = 3000 };
static int finalized[N];

static void count_finalize(gc_value block) { finalized[GC_FIELD(block, 1)]++; }

static void finalizers_run_exactly_once(void) {
  for (int i = 0; i < N; i++) finalized[i] = 0;
  gc_heap *h = gc_heap_create(NULL);
  gc_domain *d = gc_main_domain(h);
  static gc_value keep;
  keep = gc_alloc(d, N, GC_TAG_SCAN); /* a large block holding every third custom block */
  gc_root_register(h, &keep);
  for (int i = 0; i < N; i++) {
    /* Sizes 1..200 data words: small and large custom blocks. */
    gc_value c = gc_alloc_custom(d, 1 + (size_t)i % 200, count_finalize);
    CHECK(c != 0);
    GC_FIELD(c, 1) = (gc_value)i;
    if (i % 3 == 0) gc_store(d, keep, (size_t)i, c);
  }
  gc_collect(d, GC_COLLECT_FULL);
  int dead_ok = 1, live_ok = 1;
  for (int i = 0; i < N; i++) {
    if (i % 3 == 0)
      live_ok &= finalized[i] == 0;
    else
      dead_ok &= finalized[i] == 1;
  }
  CHECK(dead_ok);
  CHECK(live_ok);
  for (int c = 0; c < 10; c++) gc_collect(d, c % 2 ? GC_COLLECT_MAJOR : GC_COLLECT_FULL);
  for (int i = 0; i < N; i++) {
    if (finalized[i] != (i % 3 != 0)) {
      CHECK(finalized[i] == (i % 3 != 0));
      break;
    }
  }
  /* Drop half of the survivors; destroy finalizes the rest. */
  for (int i = 0; i < N; i += 6) gc_store(d, keep, (size_t)i, 0);
  gc_collect(d, GC_COLLECT_FULL);
  for (int i = 0; i < N; i += 3) CHECK_EQ_U(finalized[i], i % 6 == 0 ? 1 : 0);
  gc_root_unregister(h, &keep);
  gc_heap_destroy(h);
  for (int i = 0; i < N; i++) CHECK_EQ_U(finalized[i], 1);
}

int main(void) {
  RUN(finalizers_run_exactly_once);
  CHECK_MAIN_END();
}
