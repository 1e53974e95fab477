/* The table of kinds (kinds.h) and of passes (gc/passes.h), read through report.h: names unique
 * and named after their pass, every row tagged and placed, names found again, the verify=
 * parameter accepting exactly the passes' names, and the markdown table one row per kind. */
#include <stdlib.h>
#include <string.h>

#include "gc/check.h"
#include "gc/gc.h"
#include "invariants/report.h"

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void kinds_are_named_after_their_pass(void) {
  for (int k = 0; k < GC_VK_COUNT; k++) {
    gc_verify_kind kind = (gc_verify_kind)k;
    const char *name = gc_verify_kind_name(kind);
    const char *pass = gc_verify_kind_pass(kind);
    CHECK(gc_verify_kind_pass_id(kind) < GC_VPASS_COUNT);
    CHECK(strcmp(pass, gc_verify_pass_name(gc_verify_kind_pass_id(kind))) == 0);
    CHECK(starts_with(name, pass) && name[strlen(pass)] == '.' && name[strlen(pass) + 1] != '\0');
    CHECK(gc_verify_kind_of_name(name) == kind);
    for (int j = 0; j < k; j++) CHECK(strcmp(name, gc_verify_kind_name((gc_verify_kind)j)) != 0);
  }
  CHECK(strcmp(gc_verify_kind_name(GC_VK_REACH_ZERO_HEADER), "reach.zero-header") == 0);
  CHECK(strcmp(gc_verify_kind_name(GC_VK_CHECKMARK_UNMARKED), "checkmark.unmarked") == 0);
  CHECK(strcmp(gc_verify_kind_name(GC_VK_DRIVER_LIVELOCK), "driver.livelock") == 0);
  CHECK(gc_verify_kind_of_name("no.such-kind") == GC_VK_COUNT);
  CHECK(gc_verify_kind_of_name("reach") == GC_VK_COUNT);
  CHECK(strcmp(gc_verify_kind_name(GC_VK_COUNT), "unknown") == 0);
  CHECK(strcmp(gc_verify_kind_pass(GC_VK_COUNT), "unknown") == 0);
}

/* Every kind cites an invariant (an INV-* tag of gc/, or a contract kinds.h states), a rule, and
 * a point at which its pass runs. */
static void kinds_are_tagged_and_placed(void) {
  for (int k = 0; k < GC_VK_COUNT; k++) {
    gc_verify_kind kind = (gc_verify_kind)k;
    const char *tag = gc_verify_kind_tag(kind);
    CHECK(starts_with(tag, "INV-") || starts_with(tag, "API-") || starts_with(tag, "VERIFY-"));
    CHECK(strlen(tag) > strlen("INV-"));
    CHECK(strlen(gc_verify_kind_rule(kind)) > 0);
    const char *point = gc_verify_kind_point(kind);
    CHECK(strlen(point) > 0);
    /* The pass runs where the kind is checked: "swept" is one of the model's points, "op" the
     * driver's. */
    int runs_there = 0;
    for (int p = 0; p < GC_VPOINT_COUNT; p++) {
      if (strcmp(gc_verify_point_id_name((gc_verify_point_id)p), point) == 0) {
        runs_there = gc_verify_pass_runs_at(gc_verify_kind_pass_id(kind), (gc_verify_point_id)p);
      }
    }
    CHECK(runs_there);
    if (!runs_there) {
      fprintf(stderr, "  %s is checked at %s, where its pass does not run\n",
              gc_verify_kind_name(kind), point);
    }
  }
  CHECK(strcmp(gc_verify_kind_tag(GC_VK_REACH_ZERO_HEADER), "INV-HD-1") == 0);
  CHECK(strcmp(gc_verify_kind_point(GC_VK_CHECKMARK_UNMARKED), "mark-done") == 0);
  CHECK(strcmp(gc_verify_kind_point(GC_VK_DRIVER_API_ERROR), "op") == 0);
  CHECK(strcmp(gc_verify_kind_tag(GC_VK_COUNT), "") == 0);
}

/* Every pass has a kind; the mask passes are one bit each, together GC_VERIFY_ALL, and `verify=`
 * takes each one's name to its bit ("none": the empty mask). */
static void passes_match_the_verify_mask(void) {
  unsigned all = 0;
  CHECK_EQ_U(GC_VPASS_DRIVER, GC_VERIFY_PASS_COUNT);
  for (int p = 0; p < GC_VPASS_COUNT; p++) {
    gc_verify_pass_id pass = (gc_verify_pass_id)p;
    const char *name = gc_verify_pass_name(pass);
    CHECK(gc_verify_pass_of_name(name) == pass);
    int kinds = 0;
    for (int k = 0; k < GC_VK_COUNT; k++) {
      kinds += gc_verify_kind_pass_id((gc_verify_kind)k) == pass;
    }
    CHECK(kinds > 0);
    unsigned bit = gc_verify_pass_mask(pass);
    if (pass == GC_VPASS_DRIVER) {
      CHECK_EQ_U(bit, 0);
      continue;
    }
    CHECK(bit != 0 && (bit & (bit - 1)) == 0 && (all & bit) == 0);
    all |= bit;
    gc_config cfg;
    gc_config_default(&cfg);
    char params[64], err[256];
    snprintf(params, sizeof params, "verify=%s", name);
    CHECK(gc_config_parse(&cfg, params, err, sizeof err) == GC_OK);
    CHECK_EQ_U(cfg.verify, bit);
  }
  CHECK_EQ_U(all, GC_VERIFY_ALL);
  CHECK(gc_verify_pass_of_name("driver") == GC_VPASS_DRIVER);
  CHECK(gc_verify_pass_of_name("nope") == GC_VPASS_COUNT);

  gc_config cfg;
  gc_config_default(&cfg);
  char err[256];
  CHECK(gc_config_parse(&cfg, "verify=all", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.verify, GC_VERIFY_ALL);
  CHECK(gc_config_parse(&cfg, "verify=none", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.verify, 0);
  CHECK(gc_config_parse(&cfg, "verify=reach+model", err, sizeof err) == GC_OK);
  CHECK_EQ_U(cfg.verify, GC_VERIFY_REACH | GC_VERIFY_MODEL);
  /* The driver's checks are not a pass of the heap's mask. */
  CHECK(gc_config_parse(&cfg, "verify=driver", err, sizeof err) == GC_ERR_PARAM);
  CHECK(strstr(err,
               "reach, swept, checkmark, model, perf, stats, space, satb, ephe, moved, all, "
               "none") != NULL);
}

/* The markdown table: header, separator, then exactly one row per kind, in table order, each of
 * five cells. */
static void markdown_has_one_row_per_kind(void) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  if (f == NULL) return;
  gc_verify_kinds_print_markdown(f);
  fclose(f);
  CHECK(starts_with(text, "| kind | pass | point | invariant | rule |\n|---|---|---|---|---|\n"));
  int rows = 0;
  const char *line = strchr(strchr(text, '\n') + 1, '\n') + 1;
  for (; *line != '\0'; rows++) {
    const char *end = strchr(line, '\n');
    CHECK(end != NULL);
    if (end == NULL) break;
    if (rows < GC_VK_COUNT) {
      gc_verify_kind k = (gc_verify_kind)rows;
      char want[512];
      snprintf(want, sizeof want, "| %s | %s | %s | %s | %s |", gc_verify_kind_name(k),
               gc_verify_kind_pass(k), gc_verify_kind_point(k), gc_verify_kind_tag(k),
               gc_verify_kind_rule(k));
      CHECK((size_t)(end - line) == strlen(want) && strncmp(line, want, strlen(want)) == 0);
    }
    line = end + 1;
  }
  CHECK_EQ_U(rows, GC_VK_COUNT);
  free(text);
}

int main(void) {
  RUN(kinds_are_named_after_their_pass);
  RUN(kinds_are_tagged_and_placed);
  RUN(passes_match_the_verify_mask);
  RUN(markdown_has_one_row_per_kind);
  CHECK_MAIN_END();
}
