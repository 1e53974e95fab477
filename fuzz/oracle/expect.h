/* The oracle tests' check: counts what passed and what failed, prints each failure with its file,
 * line and message, and lets the test go on so one run shows every broken check. */
#ifndef FUZZ_ORACLE_EXPECT_H
#define FUZZ_ORACLE_EXPECT_H

#include <stdio.h>

static int passed, failed;

#define EXPECT(cond, ...)                         \
  do {                                            \
    if (cond) {                                   \
      passed++;                                   \
    } else {                                      \
      failed++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

#endif /* FUZZ_ORACLE_EXPECT_H */
