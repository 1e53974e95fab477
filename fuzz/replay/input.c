/* Reading a replay input and choosing its form (fuzz/replay/input.h). */
#include "fuzz/replay/input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/lang/text.h"

/* The whole file into *out; NULL, or why it cannot be read. */
static const char *read_file(const char *path, fuzz_buf *out) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (f == NULL) return strerror(errno);
  uint8_t chunk[4096];
  size_t n;
  int appended = 1;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    appended = fuzz_buf_append(out, chunk, n) && appended;
  }
  const char *why = ferror(f) ? strerror(errno) : appended ? NULL : "out of memory";
  if (f != stdin) fclose(f);
  return why;
}

static int named_as_text(const char *path) {
  static const char suffix[] = ".txt";
  size_t len = strlen(path), suffix_len = sizeof suffix - 1;
  return len > suffix_len && strcmp(path + len - suffix_len, suffix) == 0;
}

/* The first word of the input (its first 64 characters, for a note). */
static void first_word(const uint8_t *data, size_t size, char *buf, size_t len) {
  size_t i = 0, n = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n')) i++;
  while (i < size && n + 1 < len && data[i] > ' ' && data[i] != 0x7f && data[i] != '#') {
    buf[n++] = (char)data[i++];
  }
  buf[n] = '\0';
}

static int is_text_form(const char *path, replay_format format, const fuzz_buf *raw) {
  if (format != REPLAY_DETECT) return format == REPLAY_TEXT;
  if (named_as_text(path)) return 1;
  if (fuzz_looks_like_text(raw->data, raw->size)) return 1;
  if (!fuzz_text_has_control_byte(raw->data, raw->size)) {
    char word[65];
    first_word(raw->data, raw->size, word, sizeof word);
    fprintf(stderr,
            "replay: %s: read as bytes: not a .txt file, and its first word '%s' is no op "
            "(--text reads it as text)\n",
            path, word);
  }
  return 0;
}

int replay_load(const char *path, replay_format format, const fuzz_opset *set, fuzz_buf *bytes,
                int *is_text) {
  fuzz_buf raw = {0};
  const char *why = read_file(path, &raw);
  if (why != NULL) {
    fprintf(stderr, "replay: %s: cannot read: %s\n", path, why);
    fuzz_buf_free(&raw);
    return 0;
  }
  *is_text = is_text_form(path, format, &raw);
  if (!*is_text) {
    *bytes = raw;
    return 1;
  }
  fuzz_text_error err;
  int ok = fuzz_assemble(set, (const char *)raw.data, raw.size, bytes, &err);
  if (!ok) {
    fprintf(stderr, "%s:%zu:%zu: error: %s\n", path, err.line, err.column, err.message);
    fuzz_buf_free(bytes);
  }
  fuzz_buf_free(&raw);
  return ok;
}
