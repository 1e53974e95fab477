/* The machine-readable verdict line: one per finding, besides its human report.
 *
 *   GCFUZZ-VERDICT {"kind": "reach.zero-header", "pass": "reach", "point": "cycled", "op": 12, "cycle": 3}
 *
 * The prefix, then one JSON object on one line, keys in this order (readers ignore keys they do
 * not know, so more may follow one day):
 *   kind   the stable kind name, "<pass>.<what>" (kinds.h; "asan.heap-use-after-free" for a
 *          sanitizer finding);
 *   pass   "reach", "swept", "checkmark", "model", "driver", or the sanitizer ("asan", "ubsan",
 *          "msan", "tsan", "lsan");
 *   point  "mark-done", "cycled", "swept", "op" (while an op ran), "final" (the end-of-program
 *          checks), "" unknown;
 *   op     the index of the op the finding is attributed to, -1 none;
 *   cycle  the heap's cycle count, -1 unknown.
 * ci/ scripts key crashes and mutant kills on this line instead of on the human text.
 */
#ifndef INVARIANTS_VERDICT_H
#define INVARIANTS_VERDICT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GC_VERDICT_PREFIX "GCFUZZ-VERDICT "

typedef struct gc_verdict {
  const char *kind, *pass, *point; /* NULL prints as "" */
  long op;
  long long cycle;
} gc_verdict;

/* Print the line, its strings JSON-escaped (quote, backslash, control characters as \u00XX), in
 * one write, then flush `out`: a process about to die (a sanitizer's death callback, abort)
 * loses nothing. Allocates nothing, so it is safe in a death callback. */
void gc_verdict_print(FILE *out, const gc_verdict *v);

#ifdef __cplusplus
}
#endif
#endif /* INVARIANTS_VERDICT_H */
