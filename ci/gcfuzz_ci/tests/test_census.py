"""The branch census (census.py) on a small export made by hand: counts, functions, exclusions,
stale entries, a header's copies merged, bad exclusion lists refused; and its section of the
campaign page."""
import json
import os
import tempfile
import unittest

from .. import census, report_html

SOURCE = """\
int f(int *p) {
  if (p == NULL) return 0;
  return *p > 3 ? 1 : 2;
}
static int g(int x) {
  while (x > 0) x--;
  return x;
}
"""
HEADER = """\
static inline int h(int v) { return v ? 1 : 0; }
"""


def branch(ls, cs, le, ce, true_count, false_count):
  return [ls, cs, le, ce, true_count, false_count, 0, 0, 4]


def export(extra_files=()):
  """f's `p == NULL` never true, `*p > 3` both ways; g's loop both ways; h (a header, compiled
  into two files) true in one copy, false in the other."""
  files = [{"filename": "/proc/self/cwd/gc/a.c",
            "branches": [branch(2, 7, 2, 16, 0, 5), branch(3, 10, 3, 16, 2, 3),
                         branch(6, 10, 6, 15, 4, 1)]},
           {"filename": "/proc/self/cwd/gc/a.h", "branches": [branch(1, 37, 1, 38, 3, 0)]},
           {"filename": "/proc/self/cwd/gc/a.h", "branches": [branch(1, 37, 1, 38, 0, 2)]},
           {"filename": "/proc/self/cwd/fuzz/x.c", "branches": [branch(1, 1, 1, 2, 0, 0)]}]
  files += list(extra_files)
  region = lambda ls, le: [ls, 1, le, 2, 1, 0, 0, 0]
  functions = [{"name": "f", "filenames": ["/proc/self/cwd/gc/a.c"],
                "regions": [region(1, 4)]},
               {"name": "gc/a.c:g", "filenames": ["/proc/self/cwd/gc/a.c"],
                "regions": [region(5, 8)]},
               {"name": "gc/a.c:h", "filenames": ["/proc/self/cwd/gc/a.h"],
                "regions": [region(1, 1)]}]
  return {"data": [{"files": files, "functions": functions}]}


class CensusTest(unittest.TestCase):
  def setUp(self):
    self.dir = tempfile.TemporaryDirectory()
    self.root = self.dir.name
    os.makedirs(os.path.join(self.root, "gc"))
    with open(os.path.join(self.root, "gc", "a.c"), "w") as f:
      f.write(SOURCE)
    with open(os.path.join(self.root, "gc", "a.h"), "w") as f:
      f.write(HEADER)

  def tearDown(self):
    self.dir.cleanup()

  def exclusions(self, text):
    path = os.path.join(self.root, "unreachable.tsv")
    with open(path, "w") as f:
      f.write(text)
    return census.read_exclusions(path)

  def test_counts_sides_per_file_and_function(self):
    c = census.census(export(), self.root, {})
    self.assertEqual((c["taken"], c["sides"]), (7, 8))
    self.assertEqual(c["percent"], 87.5)
    by_file = {r["file"]: (r["taken"], r["sides"]) for r in c["files"]}
    self.assertEqual(by_file, {"gc/a.c": (5, 6), "gc/a.h": (2, 2)})  # fuzz/ is out of scope
    by_fn = {r["function"]: (r["taken"], r["sides"]) for r in c["functions"]}
    self.assertEqual(by_fn, {"f": (3, 4), "g": (2, 2), "h": (2, 2)})
    self.assertEqual(c["untaken"], [{"file": "gc/a.c", "line": 2, "column": 7, "function": "f",
                                     "side": "true", "condition": "p == NULL"}])

  def test_an_exclusion_is_subtracted_with_its_reason(self):
    ex = self.exclusions("# a comment\n\ngc/a.c\tf\ttrue\tp == NULL\tno caller passes NULL\n")
    c = census.census(export(), self.root, ex)
    self.assertEqual((c["taken"], c["sides"], c["untaken"]), (7, 7, []))
    self.assertEqual(c["excused"][0]["reason"], "no caller passes NULL")
    self.assertEqual(c["stale_exclusions"], [])
    text = "\n".join(census.text_lines(c, "seeds"))
    self.assertIn("7 of 7 branch sides taken (100.0 %)", text)
    self.assertIn("1 side(s) unreachable by design subtracted", text)

  def test_an_exclusion_of_a_taken_side_or_no_branch_is_stale(self):
    ex = self.exclusions("gc/a.c\tf\tfalse\tp == NULL\twrong side\n"
                         "gc/a.c\tf\ttrue\tq == NULL\tgone\n")
    c = census.census(export(), self.root, ex)
    self.assertEqual(len(c["stale_exclusions"]), 2)
    self.assertEqual(len(c["untaken"]), 1)
    self.assertIn("warning: stale entry", "\n".join(census.text_lines(c, "seeds")))

  def test_bad_exclusion_lines_are_refused_with_their_line(self):
    for bad in ("gc/a.c\tf\ttrue\tp == NULL\n", "gc/a.c\tf\tmaybe\tp == NULL\twhy\n",
                "gc/a.c\tf\ttrue\tp == NULL\t \n"):
      with self.assertRaisesRegex(census.CensusError, r"unreachable.tsv:1:"):
        self.exclusions(bad)
    with self.assertRaisesRegex(census.CensusError, "listed twice"):
      self.exclusions("gc/a.c\tf\ttrue\tp\tx\ngc/a.c\tf\ttrue\tp\ty\n")

  def test_never_taken_lines_name_file_line_column_and_condition(self):
    c = census.census(export(), self.root, {})
    lines = census.text_lines(c, "seeds")
    self.assertIn("    gc/a.c:2:7 true  `p == NULL`  (f)", lines)
    self.assertIn("never taken (1):", "\n".join(lines))

  def test_an_empty_export_is_an_error(self):
    with self.assertRaises(census.CensusError):
      census.census({"data": []}, self.root, {})

  def test_the_project_list_matches_its_format(self):
    ex = census.read_exclusions(os.path.join(census.paths.ROOT, census.EXCLUSIONS))
    self.assertGreater(len(ex), 0)
    for (f, fn, side, cond), reason in ex.items():
      self.assertTrue(f.startswith("gc/") and os.path.exists(os.path.join(census.paths.ROOT, f)),
                      f)
      with open(os.path.join(census.paths.ROOT, f)) as src:
        self.assertIn(cond, src.read(), (f, cond))

  def test_the_page_shows_the_census(self):
    c = census.census(export(), self.root, self.exclusions("gc/a.c\tg\ttrue\tx > 0\tstale\n"))
    c["what"] = "seeds"
    summary = {"interrupted": False, "targets": [], "census": c}
    with open(os.path.join(self.root, "summary.json"), "w") as f:
      json.dump(summary, f)
    page = report_html.campaign_html(self.root)
    self.assertIn("branch census of gc/", page)
    self.assertIn("7 of 8 branch sides taken (87.5 %)", page)
    self.assertIn("gc/a.c:2:7", page)
    self.assertIn("<code>p == NULL</code>", page)
    self.assertIn("stale exclusion", page)


if __name__ == "__main__":
  unittest.main()
