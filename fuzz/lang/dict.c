/* Reading a libFuzzer dictionary (see dict.h). */
#include "fuzz/lang/dict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One line (without its newline) into *e; NULL, or what is wrong with it. */
static const char *parse_line(const char *line, size_t len, fuzz_dict_entry *e) {
  const char *open = memchr(line, '"', len);
  if (open == NULL) return "no opening quote";
  const char *end = line + len;
  while (end > open + 1 && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
  if (end == open + 1 || end[-1] != '"') return "no closing quote at the end of the line";
  e->size = 0;
  for (const char *p = open + 1; p < end - 1; p++) {
    int byte = (unsigned char)*p;
    if (*p == '\\') {
      if (p + 1 >= end - 1) return "a backslash at the end of the value";
      p++;
      if (*p == 'x') {
        int hi = p + 1 < end - 1 ? hex_digit(p[1]) : -1,
            lo = p + 2 < end - 1 ? hex_digit(p[2]) : -1;
        if (hi < 0 || lo < 0) return "\\x without two hex digits";
        byte = hi * 16 + lo;
        p += 2;
      } else if (*p == '\\' || *p == '"') {
        byte = (unsigned char)*p;
      } else {
        return "an unknown escape (\\\\, \\\" and \\xHH are known)";
      }
    } else if (*p == '"') {
      return "an unescaped quote inside the value";
    }
    if (e->size == FUZZ_DICT_ENTRY_MAX_BYTES) return "a value longer than 64 bytes";
    e->bytes[e->size++] = (uint8_t)byte;
  }
  if (e->size == 0) return "an empty value";
  return NULL;
}

int fuzz_dict_parse(fuzz_dict *d, const char *text, size_t size, char *err, size_t err_bsize) {
  size_t line_no = 0;
  for (size_t at = 0; at < size;) {
    const char *line = text + at;
    const char *nl = memchr(line, '\n', size - at);
    size_t len = nl != NULL ? (size_t)(nl - line) : size - at;
    at += len + (nl != NULL);
    line_no++;
    size_t skip = 0;
    while (skip < len && (line[skip] == ' ' || line[skip] == '\t' || line[skip] == '\r')) skip++;
    if (skip == len || line[skip] == '#') continue;
    fuzz_dict_entry e;
    const char *why = parse_line(line + skip, len - skip, &e);
    if (why != NULL) {
      snprintf(err, err_bsize, "line %zu: %s", line_no, why);
      return 0;
    }
    if (d->count == d->capacity) {
      size_t more = d->capacity ? 2 * d->capacity : 64;
      fuzz_dict_entry *grown = realloc(d->entries, more * sizeof *grown);
      if (grown == NULL) {
        snprintf(err, err_bsize, "line %zu: out of memory", line_no);
        return 0;
      }
      d->entries = grown;
      d->capacity = more;
    }
    d->entries[d->count++] = e;
  }
  return 1;
}

int fuzz_dict_load(fuzz_dict *d, const char *path, char *err, size_t err_bsize) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, err_bsize, "%s: cannot open", path);
    return 0;
  }
  char *text = NULL;
  size_t size = 0, capacity = 0, got;
  char chunk[4096];
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (size + got > capacity) {
      size_t more = capacity ? 2 * capacity : sizeof chunk;
      while (more < size + got) more *= 2;
      char *grown = realloc(text, more);
      if (grown == NULL) {
        free(text);
        fclose(f);
        snprintf(err, err_bsize, "%s: out of memory", path);
        return 0;
      }
      text = grown;
      capacity = more;
    }
    memcpy(text + size, chunk, got);
    size += got;
  }
  int read_error = ferror(f);
  fclose(f);
  if (read_error) {
    free(text);
    snprintf(err, err_bsize, "%s: read error", path);
    return 0;
  }
  char why[160];
  int ok = fuzz_dict_parse(d, text != NULL ? text : "", size, why, sizeof why);
  free(text);
  if (!ok) snprintf(err, err_bsize, "%s: %s", path, why);
  return ok;
}

void fuzz_dict_free(fuzz_dict *d) {
  free(d->entries);
  d->entries = NULL;
  d->count = d->capacity = 0;
}
