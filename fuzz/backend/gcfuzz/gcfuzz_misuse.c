/* The misuses gcfuzz's API refuses (backend.h: misuse), one table: the op language's name, the
 * call, and the error gc.h documents for it. A refused allocation returns no block, a refused
 * parameter change leaves the configuration as it was; the driver's deep check after the call
 * says whether the heap did too. */
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/gcfuzz/gcfuzz_heap.h"

/* A root scanner nobody adds: removing it is unknown-root. */
static void never_added_scanner(gc_visit_fn visit, void *visit_ctx, void *user) {
  (void)visit;
  (void)visit_ctx;
  (void)user;
}

/* Each call's answer, as a gc_error; an allocation that returns a block answers GC_OK. */
static gc_error alloc_answer(fuzz_bheap *h, size_t fields, unsigned tag) {
  return gc_alloc(gcfuzz_dom(h), fields, tag) != 0 ? GC_OK : gc_last_error(h->heap);
}
static gc_error alloc0(fuzz_bheap *h) { return alloc_answer(h, 0, GC_TAG_SCAN); }
static gc_error too_large(fuzz_bheap *h) { return alloc_answer(h, GC_MAX_WSIZE + 1, GC_TAG_RAW); }
static gc_error bad_tag(fuzz_bheap *h) { return alloc_answer(h, 1, 251); }
static gc_error custom_tag(fuzz_bheap *h) { return alloc_answer(h, 2, GC_TAG_CUSTOM); }
static gc_error pin_null(fuzz_bheap *h) { return gc_pin(h->heap, 0); }
static gc_error pin_int(fuzz_bheap *h) { return gc_pin(h->heap, gc_val_int(3)); }
static gc_error unpin_int(fuzz_bheap *h) { return gc_unpin(h->heap, gc_val_int(3)); }
static gc_error scanner_remove(fuzz_bheap *h) {
  return gc_root_scanner_remove(h->heap, never_added_scanner, h);
}
static gc_error register_null(fuzz_bheap *h) { return gc_root_register(h->heap, NULL); }
static gc_error bad_param(fuzz_bheap *h) { return gc_set_params(h->heap, "markstack=3"); }
static gc_error unknown_param(fuzz_bheap *h) { return gc_set_params(h->heap, "bogus=1"); }
/* The weak API's refusals: its answer is no block, the error says why. */
static gc_error weak_get_int(fuzz_bheap *h) {
  gc_clear_error(h->heap); /* the error must be this call's */
  (void)gc_weak_get(gcfuzz_dom(h), gc_val_int(3));
  return gc_last_error(h->heap);
}
static gc_error ephe_key_int(fuzz_bheap *h) {
  gc_clear_error(h->heap);
  (void)gc_ephemeron_key(gcfuzz_dom(h), gc_val_int(3));
  return gc_last_error(h->heap);
}
static gc_error weak_too_large(fuzz_bheap *h) {
  return gc_weak_alloc(gcfuzz_dom(h), 0, GC_MAX_WSIZE) != 0 ? GC_OK : gc_last_error(h->heap);
}
/* The refusals that need no block of the program's (ephe-get-scan and the other misuses on a
 * scanned block take the driver's slots: not mine here, as in-collection). */
static void misuse_finalizer(gc_heap *heap, gc_value block, void *user) {
  (void)heap;
  (void)block;
  (void)user;
}
static gc_error fin_set_int(fuzz_bheap *h) {
  return gc_finalizer_set(h->heap, gc_val_int(3), misuse_finalizer, NULL);
}
static gc_error custom_too_large(fuzz_bheap *h) {
  return gc_alloc_custom(gcfuzz_dom(h), GC_MAX_WSIZE, NULL) != 0 ? GC_OK : gc_last_error(h->heap);
}
static const uintptr_t never_added_range[1];
static gc_error range_remove(fuzz_bheap *h) {
  return gc_conservative_remove(h->heap, never_added_range);
}
/* Added, removed with another user (the answer), removed: nothing left registered. A failed add
 * or final removal answers with its own error, which is not the one documented. */
static void misuse_scanner(gc_visit_fn visit, void *visit_ctx, void *user) {
  (void)visit;
  (void)visit_ctx;
  (void)user;
}
static gc_error scanner_user(fuzz_bheap *h) {
  gc_error e = gc_root_scanner_add(h->heap, misuse_scanner, h);
  if (e != GC_OK) return e;
  gc_error got = gc_root_scanner_remove(h->heap, misuse_scanner, NULL);
  gc_clear_error(h->heap);
  e = gc_root_scanner_remove(h->heap, misuse_scanner, h);
  return e != GC_OK ? e : got;
}

static const struct {
  const char *name; /* fuzz_misuse_names' */
  gc_error (*call)(fuzz_bheap *h);
  gc_error want;
  const char *what; /* the call, for a message */
  int params;       /* a gc_set_params call: the configuration must not change */
} misuses[] = {
    {"alloc0", alloc0, GC_ERR_ZERO_SIZE, "gc_alloc(0 fields)", 0},
    {"too-large", too_large, GC_ERR_TOO_LARGE, "gc_alloc(GC_MAX_WSIZE + 1 fields)", 0},
    {"bad-tag", bad_tag, GC_ERR_BAD_TAG, "gc_alloc(tag 251)", 0},
    {"custom-tag", custom_tag, GC_ERR_BAD_TAG, "gc_alloc(the custom tag)", 0},
    {"pin-null", pin_null, GC_ERR_NOT_BLOCK, "gc_pin(NULL)", 0},
    {"pin-int", pin_int, GC_ERR_NOT_BLOCK, "gc_pin(an immediate)", 0},
    {"unpin-int", unpin_int, GC_ERR_NOT_BLOCK, "gc_unpin(an immediate)", 0},
    {"scanner-remove", scanner_remove, GC_ERR_UNKNOWN_ROOT,
     "gc_root_scanner_remove(a scanner never added)", 0},
    {"register-null", register_null, GC_ERR_UNKNOWN_ROOT, "gc_root_register(NULL)", 0},
    {"bad-param", bad_param, GC_ERR_PARAM, "gc_set_params(\"markstack=3\")", 1},
    {"unknown-param", unknown_param, GC_ERR_PARAM, "gc_set_params(\"bogus=1\")", 1},
    {"weak-get-int", weak_get_int, GC_ERR_NOT_BLOCK, "gc_weak_get(an immediate)", 0},
    {"ephe-key-int", ephe_key_int, GC_ERR_NOT_BLOCK, "gc_ephemeron_key(an immediate)", 0},
    {"weak-too-large", weak_too_large, GC_ERR_TOO_LARGE, "gc_weak_alloc(GC_MAX_WSIZE data words)",
     0},
    {"fin-set-int", fin_set_int, GC_ERR_NOT_BLOCK, "gc_finalizer_set(an immediate)", 0},
    {"custom-too-large", custom_too_large, GC_ERR_TOO_LARGE,
     "gc_alloc_custom(GC_MAX_WSIZE data words)", 0},
    {"range-remove", range_remove, GC_ERR_UNKNOWN_RANGE,
     "gc_conservative_remove(a range never added)", 0},
    {"scanner-user", scanner_user, GC_ERR_UNKNOWN_ROOT,
     "gc_root_scanner_remove(a scanner added with another user)", 0},
};

fuzz_misuse_answer gcfuzz_misuse(fuzz_bheap *h, const char *name, char *what, size_t len) {
  for (size_t i = 0; i < sizeof misuses / sizeof misuses[0]; i++) {
    if (strcmp(misuses[i].name, name) != 0) continue;
    gc_config before = *gc_heap_config(h->heap);
    gc_error got = misuses[i].call(h);
    gc_clear_error(h->heap);
    if (got != misuses[i].want) {
      snprintf(what, len, "%s answered %s, gc.h documents %s", misuses[i].what, gc_error_name(got),
               gc_error_name(misuses[i].want));
      return FUZZ_ANSWER_WRONG;
    }
    /* Compared as bytes: a refused call writes none of the configuration, padding included. On
     * threads another domain's tune may land meanwhile: there only the error is checked. */
    if (misuses[i].params && !h->threaded &&
        memcmp(&before, gc_heap_config(h->heap), sizeof before) != 0) {
      snprintf(what, len, "a refused %s changed the configuration", misuses[i].what);
      return FUZZ_ANSWER_WRONG;
    }
    return FUZZ_ANSWER_REFUSED;
  }
  return FUZZ_ANSWER_NOT_MINE;
}
