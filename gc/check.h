/* A minimal check macro for the collector's tests: prints the failing expression with its file
 * and line, counts failures, and lets the test go on so one run shows every broken check. */
#ifndef GC_CHECK_H
#define GC_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_EQ_U(a, b)                                                                        \
  do {                                                                                          \
    unsigned long long check_a_ = (unsigned long long)(a);                                      \
    unsigned long long check_b_ = (unsigned long long)(b);                                      \
    if (check_a_ != check_b_) {                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu vs %llu)\n", __FILE__, __LINE__, #a, \
              #b, check_a_, check_b_);                                                          \
      check_failures++;                                                                         \
    }                                                                                           \
  } while (0)

#define RUN(test)                                                                   \
  do {                                                                              \
    int before_ = check_failures;                                                   \
    test();                                                                         \
    fprintf(stderr, "%s %s\n", check_failures == before_ ? "ok  " : "FAIL", #test); \
  } while (0)

#define CHECK_MAIN_END()                                     \
  do {                                                       \
    fprintf(stderr, "%d check(s) failed\n", check_failures); \
    return check_failures == 0 ? 0 : 1;                      \
  } while (0)

#endif /* GC_CHECK_H */
