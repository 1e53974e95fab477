/* The verdict line (verdict.h): built in a buffer on the stack, written at once. */
#include "invariants/verdict.h"

#include <string.h>

/* Each string value is cut to STRING_BYTES once escaped (any kind, pass or point name is far
 * shorter), at a character boundary, so three of them and the rest always fit the line and it
 * stays one valid JSON object. */
enum { STRING_BYTES = 256, LINE_BYTES = 1024 };

typedef struct line {
  char text[LINE_BYTES];
  size_t len;
} line;

static void append(line *l, const char *s, size_t n) {
  memcpy(l->text + l->len, s, n);
  l->len += n;
}

static void append_text(line *l, const char *s) { append(l, s, strlen(s)); }

static void append_string(line *l, const char *s) {
  append_text(l, "\"");
  size_t start = l->len;
  for (const unsigned char *c = (const unsigned char *)(s != NULL ? s : ""); *c; c++) {
    char one[8];
    if (*c == '"' || *c == '\\') {
      one[0] = '\\';
      one[1] = (char)*c;
      one[2] = '\0';
    } else if (*c < 0x20 || *c == 0x7f) {
      snprintf(one, sizeof one, "\\u%04x", *c);
    } else {
      one[0] = (char)*c;
      one[1] = '\0';
    }
    if (l->len - start + strlen(one) > STRING_BYTES) {
      /* Cut: drop a UTF-8 sequence the cut may have split (continuation bytes, then its lead). */
      while (l->len > start && ((unsigned char)l->text[l->len - 1] & 0xc0) == 0x80) l->len--;
      if (l->len > start && (unsigned char)l->text[l->len - 1] >= 0xc0) l->len--;
      break;
    }
    append_text(l, one);
  }
  append_text(l, "\"");
}

void gc_verdict_print(FILE *out, const gc_verdict *v) {
  line l = {.len = 0};
  char number[32];
  append_text(&l, GC_VERDICT_PREFIX "{\"kind\": ");
  append_string(&l, v->kind);
  append_text(&l, ", \"pass\": ");
  append_string(&l, v->pass);
  append_text(&l, ", \"point\": ");
  append_string(&l, v->point);
  snprintf(number, sizeof number, ", \"op\": %ld", v->op);
  append_text(&l, number);
  snprintf(number, sizeof number, ", \"cycle\": %lld", v->cycle);
  append_text(&l, number);
  append_text(&l, "}\n");
  fwrite(l.text, 1, l.len, out);
  fflush(out);
}
