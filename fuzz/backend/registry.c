/* The table of backends and of capabilities. A backend is a library that defines its
 * `fuzz_backend` table (alwayslink: nothing else refers to it); a binary has the backends it
 * links, found here through weak references, so linking a backend in is all it takes to offer
 * `--backend NAME`. */
#include <stdio.h>
#include <string.h>

#include "fuzz/backend/backend.h"

const char *const fuzz_backend_cap_names[FUZZ_CAP_COUNT] = {
#define FUZZ_BACKEND_CAP_NAME(name, what) #name,
    FUZZ_BACKEND_CAPS(FUZZ_BACKEND_CAP_NAME)
#undef FUZZ_BACKEND_CAP_NAME
};

const char *const fuzz_backend_cap_whats[FUZZ_CAP_COUNT] = {
#define FUZZ_BACKEND_CAP_WHAT(name, what) what,
    FUZZ_BACKEND_CAPS(FUZZ_BACKEND_CAP_WHAT)
#undef FUZZ_BACKEND_CAP_WHAT
};

/* Every backend gcfuzz knows, in the order --list-backends prints them. */
extern const fuzz_backend fuzz_backend_gcfuzz __attribute__((weak));
extern const fuzz_backend fuzz_backend_lua __attribute__((weak));
extern const fuzz_backend fuzz_backend_bdwgc __attribute__((weak));

static const fuzz_backend *backend_at(size_t i) {
  switch (i) {
    case 0: return &fuzz_backend_gcfuzz;
    case 1: return &fuzz_backend_lua;
    case 2: return &fuzz_backend_bdwgc;
    default: return NULL;
  }
}
enum { KNOWN_BACKENDS = 3 };

const fuzz_backend *fuzz_backend_find(const char *name) {
  for (size_t i = 0; i < KNOWN_BACKENDS; i++) {
    const fuzz_backend *b = backend_at(i);
    if (b != NULL && strcmp(b->name, name) == 0) return b;
  }
  return NULL;
}

size_t fuzz_backend_names(char *out, size_t cap) {
  size_t n = 0;
  if (cap > 0) out[0] = '\0';
  for (size_t i = 0; i < KNOWN_BACKENDS; i++) {
    const fuzz_backend *b = backend_at(i);
    if (b == NULL) continue;
    int w =
        snprintf(out + (n < cap ? n : cap), n < cap ? cap - n : 0, "%s%s", n ? ", " : "", b->name);
    if (w > 0) n += (size_t)w;
  }
  return n;
}

uint64_t fuzz_rare_count(const fuzz_backend *b, fuzz_bheap *h, const char *name) {
  uint64_t counts[FUZZ_RARE_EVENTS_MAX] = {0};
  if (b->rare_counts == NULL || b->rare_event_count > FUZZ_RARE_EVENTS_MAX) return UINT64_MAX;
  b->rare_counts(h, counts);
  for (size_t e = 0; e < b->rare_event_count; e++) {
    if (strcmp(b->rare_events[e].name, name) == 0) return counts[e];
  }
  return UINT64_MAX;
}

void fuzz_finding_set(fuzz_finding *f, const char *prefix, const char *what, const char *fmt,
                      va_list ap) {
  snprintf(f->kind, sizeof f->kind, "%s.%s", prefix, what);
  vsnprintf(f->message, sizeof f->message, fmt, ap);
}
