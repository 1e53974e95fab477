/* The verdict line: the exact bytes, JSON escaping, one line however long its strings, flushed at
 * once, and a report's verdict. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc/check.h"
#include "invariants/report.h"
#include "invariants/verdict.h"

/* What a fully buffered stream holds on its file right after the call: only what was flushed. */
typedef struct captured {
  char text[4096];
  size_t len;
} captured;

static FILE *open_buffered(void) {
  FILE *f = tmpfile();
  CHECK(f != NULL);
  if (f != NULL) setvbuf(f, NULL, _IOFBF, 1 << 16);
  return f;
}

static captured on_file(FILE *f) {
  captured c = {.len = 0};
  ssize_t n = pread(fileno(f), c.text, sizeof c.text - 1, 0);
  c.len = n > 0 ? (size_t)n : 0;
  c.text[c.len] = '\0';
  return c;
}

static captured verdict_bytes(const gc_verdict *v) {
  FILE *f = open_buffered();
  if (f == NULL) return (captured){.len = 0};
  gc_verdict_print(f, v);
  captured c = on_file(f); /* before fclose: the line must already be flushed */
  fclose(f);
  return c;
}

static void prints_the_exact_line_flushed(void) {
  gc_verdict v = {"reach.zero-header", "reach", "cycled", 12, 3};
  captured c = verdict_bytes(&v);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"reach.zero-header\", \"pass\": \"reach\", "
               "\"point\": \"cycled\", \"op\": 12, \"cycle\": 3}\n") == 0);
  gc_verdict none = {NULL, "driver", NULL, -1, -1};
  c = verdict_bytes(&none);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"\", \"pass\": \"driver\", \"point\": \"\", "
               "\"op\": -1, \"cycle\": -1}\n") == 0);
}

static void escapes_quotes_backslashes_and_control_characters(void) {
  gc_verdict v = {
      "a\"b\\c\nd\te\x01"
      "f\x7f",
      "p", "caf\xc3\xa9", 0, 0};
  captured c = verdict_bytes(&v);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"a\\\"b\\\\c\\u000ad\\u0009e\\u0001f\\u007f\", "
               "\"pass\": \"p\", \"point\": \"caf\xc3\xa9\", \"op\": 0, "
               "\"cycle\": 0}\n") == 0);
  if (c.len > 0) fprintf(stderr, "  %s", c.text);
}

/* A string longer than the line is cut, never split inside a UTF-8 character, and the line is
 * still one complete object. */
static void a_long_string_is_cut_to_one_line(void) {
  static char kind[3001];
  for (int i = 0; i < 1500; i++) memcpy(kind + 2 * i, "\xc3\xa9", 2);
  gc_verdict v = {kind, "model", "swept", 7, 9};
  captured c = verdict_bytes(&v);
  CHECK(c.len > 100 && c.len < 1024);
  const char *head = "GCFUZZ-VERDICT {\"kind\": \"";
  CHECK(strncmp(c.text, head, strlen(head)) == 0);
  CHECK(strstr(c.text,
               "\", \"pass\": \"model\", \"point\": \"swept\", \"op\": 7, "
               "\"cycle\": 9}\n") != NULL);
  CHECK(strchr(c.text, '\n') == c.text + c.len - 1);
  const char *body = c.text + strlen(head);
  size_t body_len = (size_t)(strchr(body, '"') - body);
  CHECK(body_len % 2 == 0);
  for (size_t i = 0; i + 1 < body_len; i += 2) CHECK(memcmp(body + i, "\xc3\xa9", 2) == 0);
}

static captured report_verdict(gc_verify_kind kind, const char *point, uint64_t cycle, long op) {
  gc_verify_report r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.point = point;
  r.cycle = cycle;
  FILE *f = open_buffered();
  if (f == NULL) return (captured){.len = 0};
  gc_verify_report_print_verdict(&r, op, f);
  captured c = on_file(f);
  fclose(f);
  return c;
}

static void a_report_gives_its_kind_pass_point_and_cycle(void) {
  captured c = report_verdict(GC_VK_REACH_ZERO_HEADER, "cycled", 3, 12);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"reach.zero-header\", \"pass\": \"reach\", "
               "\"point\": \"cycled\", \"op\": 12, \"cycle\": 3}\n") == 0);
  c = report_verdict(GC_VK_SWEPT_TILING, "direct", 5, 40);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"swept.tiling\", \"pass\": \"swept\", "
               "\"point\": \"op\", \"op\": 40, \"cycle\": 5}\n") == 0);
  c = report_verdict(GC_VK_CHECKMARK_UNMARKED, "direct", 0, -1);
  CHECK(strcmp(c.text,
               "GCFUZZ-VERDICT {\"kind\": \"checkmark.unmarked\", \"pass\": "
               "\"checkmark\", \"point\": \"\", \"op\": -1, \"cycle\": 0}\n") == 0);
}

int main(void) {
  RUN(prints_the_exact_line_flushed);
  RUN(escapes_quotes_backslashes_and_control_characters);
  RUN(a_long_string_is_cut_to_one_line);
  RUN(a_report_gives_its_kind_pass_point_and_cycle);
  CHECK_MAIN_END();
}
