/* Parameters: defaults, and the "key=value,..." syntax shared by GCFUZZ_PARAMS, gc_config_parse
 * and gc_set_params. Each key is documented in the README ("Parameters"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/gc.h"

void gc_config_default(gc_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->gc_percent = 100;
  cfg->min_trigger_words = (size_t)256 * 1024; /* 2 MiB */
  cfg->sweep_budget_words = 16 * 1024;
  /* 8 MiB of work buffers, touched only as marking needs them: overflow, and its single-threaded
   * re-darkening, stays rare on heaps of millions of blocks (the fuzzers go down to 4). */
  cfg->mark_stack_entries = 1024 * 1024;
  cfg->heap_limit_bytes = 0;
  cfg->pools_per_batch = 16;
  cfg->free_pools_kept = 64;
  cfg->fail_alloc_after = 0;
  cfg->trace = 0;
  cfg->trace_file = NULL;
  cfg->verify = 0;
  cfg->marking = GC_MARKING_INCREMENTAL;
  cfg->mark_slice_words = 4096;
  cfg->compact_percent = GC_PERCENT_OFF;
  cfg->mark_rechecks = 8;
  cfg->mark_buf_entries = 512;
  cfg->mark_slice_cap = 32;
  cfg->zeal = 0;
}

static gc_error param_error(char *err, size_t err_len, const char *fmt, ...) {
  if (err != NULL && err_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return GC_ERR_PARAM;
}

/* "none", or zeal modes joined by '+' (gc.h, GC_ZEALS). */
static gc_error parse_zeal(const char *value, unsigned *out, char *err, size_t err_len) {
  static const struct {
    const char *name;
    unsigned bit;
  } zeals[] = {
#define GC_ZEAL_ROW(name, id, bit) {id, bit},
      GC_ZEALS(GC_ZEAL_ROW)
#undef GC_ZEAL_ROW
  };
  if (strcmp(value, "none") == 0) {
    *out = 0;
    return GC_OK;
  }
  unsigned modes = 0;
  for (const char *p = value;;) {
    size_t len = strcspn(p, "+");
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof zeals / sizeof zeals[0]; i++) {
      if (strlen(zeals[i].name) == len && strncmp(p, zeals[i].name, len) == 0) bit = zeals[i].bit;
    }
    if (bit == 0) {
      return param_error(err, err_len,
                         "zeal=%s: modes joined by '+' (slice, cycle, overflow, recheck, store, "
                         "domains, finalizer), or none",
                         value);
    }
    modes |= bit;
    if (p[len] == '\0') break;
    p += len + 1;
  }
  *out = modes;
  return GC_OK;
}

/* A size with an optional K/M/G suffix (powers of 1024). */
static int parse_size(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno != 0 || s[0] == '-') return 0;
  unsigned long long scale = 1;
  if (*end == 'k' || *end == 'K')
    scale = 1ull << 10, end++;
  else if (*end == 'm' || *end == 'M')
    scale = 1ull << 20, end++;
  else if (*end == 'g' || *end == 'G')
    scale = 1ull << 30, end++;
  if (*end != '\0' || (v != 0 && v > ~0ull / scale)) return 0;
  *out = v * scale;
  return 1;
}

/* One pass name of GC_VERIFY_PASS_TABLE, or "all" (every pass) or "none" (no pass: an empty
 * mask), joined by '+'. */
static int parse_verify(const char *s, unsigned *out) {
  static const struct {
    const char *name;
    unsigned bit;
  } passes[] = {
#define PASS_NAME(id, name, points, run, needs, what) {name, GC_VERIFY_##id},
      GC_VERIFY_PASS_TABLE(PASS_NAME)
#undef PASS_NAME
          {"all", GC_VERIFY_ALL},
      {"none", 0},
  };
  /* An empty value is refused, not read as no passes: a typo in GCFUZZ_PARAMS must not turn
   * every check off without a word (`none` says it on purpose). */
  if (*s == '\0') return 0;
  unsigned mask = 0;
  while (*s) {
    size_t len = strcspn(s, "+");
    size_t i;
    for (i = 0; i < sizeof passes / sizeof passes[0]; i++) {
      if (strlen(passes[i].name) == len && strncmp(s, passes[i].name, len) == 0) break;
    }
    if (i == sizeof passes / sizeof passes[0]) return 0;
    mask |= passes[i].bit;
    s += len;
    if (*s == '+') s++;
  }
  *out = mask;
  return 1;
}

static gc_error apply_one(gc_config *cfg, const char *key, const char *value, char *err,
                          size_t err_len) {
  unsigned long long n = 0;
  if (strcmp(key, "verify") == 0) {
    if (!parse_verify(value, &cfg->verify)) {
      return param_error(err, err_len,
                         "verify=%s: expected passes joined by '+' from"
#define PASS_NAME(id, name, points, run, needs, what) " " name ","
                         GC_VERIFY_PASS_TABLE(PASS_NAME)
#undef PASS_NAME
                             " all, none",
                         value);
    }
    return GC_OK;
  }
  if (strcmp(key, "marking") == 0) {
    if (strcmp(value, "incremental") == 0) {
      cfg->marking = GC_MARKING_INCREMENTAL;
    } else if (strcmp(value, "stw") == 0) {
      cfg->marking = GC_MARKING_STW;
    } else {
      return param_error(err, err_len, "marking=%s: incremental or stw", value);
    }
    return GC_OK;
  }
  if (strcmp(key, "zeal") == 0) return parse_zeal(value, &cfg->zeal, err, err_len);
  if (strcmp(key, "percent") == 0 && strcmp(value, "off") == 0) {
    cfg->gc_percent = GC_PERCENT_OFF;
    return GC_OK;
  }
  if (strcmp(key, "compact") == 0 && strcmp(value, "off") == 0) {
    cfg->compact_percent = GC_PERCENT_OFF;
    return GC_OK;
  }
  if (!parse_size(value, &n)) {
    return param_error(err, err_len, "%s=%s: expected a non-negative number (K/M/G allowed)", key,
                       value);
  }
  if (strcmp(key, "percent") == 0) {
    if (n > 100000) return param_error(err, err_len, "percent=%llu: at most 100000, or off", n);
    cfg->gc_percent = (int)n;
  } else if (strcmp(key, "compact") == 0) {
    if (n > 100) return param_error(err, err_len, "compact=%llu: at most 100, or off", n);
    cfg->compact_percent = (int)n;
  } else if (strcmp(key, "mintrigger") == 0) {
    cfg->min_trigger_words = (size_t)n;
  } else if (strcmp(key, "sweep") == 0) {
    if (n == 0) return param_error(err, err_len, "sweep=0: the sweep budget must be positive");
    cfg->sweep_budget_words = (size_t)n;
  } else if (strcmp(key, "markstack") == 0) {
    if (n < 4 || n > (1ull << 28)) {
      return param_error(err, err_len, "markstack=%llu: between 4 and 2^28 entries", n);
    }
    cfg->mark_stack_entries = (size_t)n;
  } else if (strcmp(key, "markslice") == 0) {
    if (n < 1 || n > (1ull << 40)) {
      return param_error(err, err_len, "markslice=%llu: between 1 and 2^40 words", n);
    }
    cfg->mark_slice_words = (size_t)n;
  } else if (strcmp(key, "limit") == 0) {
    cfg->heap_limit_bytes = (size_t)n;
  } else if (strcmp(key, "batch") == 0) {
    if (n < 1 || n > 4096) return param_error(err, err_len, "batch=%llu: between 1 and 4096", n);
    cfg->pools_per_batch = (size_t)n;
  } else if (strcmp(key, "keep") == 0) {
    cfg->free_pools_kept = (size_t)n;
  } else if (strcmp(key, "failafter") == 0) {
    cfg->fail_alloc_after = n;
  } else if (strcmp(key, "markbuf") == 0) {
    if (n < 1 || n > 512) return param_error(err, err_len, "markbuf=%llu: between 1 and 512", n);
    cfg->mark_buf_entries = (size_t)n;
  } else if (strcmp(key, "slicecap") == 0) {
    if (n < 1 || n > 1024) {
      return param_error(err, err_len, "slicecap=%llu: between 1 and 1024", n);
    }
    cfg->mark_slice_cap = (size_t)n;
  } else if (strcmp(key, "rechecks") == 0) {
    if (n > 1000) return param_error(err, err_len, "rechecks=%llu: at most 1000", n);
    cfg->mark_rechecks = (unsigned)n;
  } else if (strcmp(key, "trace") == 0) {
    if (n > 1) return param_error(err, err_len, "trace=%llu: 0 or 1", n);
    cfg->trace = (int)n;
  } else {
    return param_error(err, err_len,
                       "unknown parameter '%s' (known: percent, mintrigger, sweep, markstack, "
                       "marking, markslice, limit, batch, keep, failafter, trace, verify, compact, "
                       "markbuf, slicecap, rechecks, zeal)",
                       key);
  }
  return GC_OK;
}

/* 1 if one of the items in [params, upto) has the key `key`. Those items have been applied, so
 * each is "key=value". */
static int key_given_before(const char *params, const char *upto, const char *key) {
  size_t key_len = strlen(key);
  for (const char *p = params; p < upto;) {
    size_t len = strcspn(p, ",");
    if (strcspn(p, "=,") == key_len && strncmp(p, key, key_len) == 0) return 1;
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

gc_error gc_config_parse(gc_config *cfg, const char *params, char *err, size_t err_len) {
  if (params == NULL) return GC_OK;
  /* Parse into a copy so a bad item leaves cfg untouched. */
  gc_config next = *cfg;
  char item[128];
  const char *p = params;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (len == 0) {
      p++;
      continue;
    }
    if (len >= sizeof item)
      return param_error(err, err_len, "parameter item too long: %.40s...", p);
    const char *item_start = p;
    memcpy(item, p, len);
    item[len] = '\0';
    p += len;
    if (*p == ',') p++;
    char *eq = strchr(item, '=');
    if (eq == NULL) return param_error(err, err_len, "'%s': expected key=value", item);
    *eq = '\0';
    /* Taking the last of two values would hide a typo or a forgotten earlier setting. */
    if (key_given_before(params, item_start, item)) {
      return param_error(err, err_len, "parameter '%s' given twice: give each key once", item);
    }
    gc_error e = apply_one(&next, item, eq + 1, err, err_len);
    if (e != GC_OK) return e;
  }
  *cfg = next;
  return GC_OK;
}
