"""The report pages in a real browser: each page written from the fixed work directories of
ci/testdata/report/ and opened in headless Chromium (browser.check); then a page whose script
throws and a blank page, which the same check must find broken. Screenshots are kept in
.gcfuzz-work/logs/browser/.

Without Chromium these tests are skipped, unless GCFUZZ_BROWSER_TESTS=required (ci/test sets it,
after installing chromium and graphviz): there a missing browser is a failure."""
import os
import shutil
import unittest

from gcfuzz_ci import browser, cmd_bench, layout, paths, report_html

CHROMIUM = shutil.which("chromium")
REQUIRED = os.environ.get("GCFUZZ_BROWSER_TESTS") == "required"
OUT = os.path.join(paths.ROOT, ".gcfuzz-work", "logs", "browser")
FIXTURES = os.path.join(paths.ROOT, layout.REPORT_FIXTURES)

# A page whose script throws, and one that draws nothing: (the page, its <svg> elements).
BROKEN_PAGES = {
    "throws": ('<!DOCTYPE html><html><body><svg xmlns="http://www.w3.org/2000/svg" width="400" '
               'height="300"><rect width="400" height="300" fill="#1f6fb2"/></svg><script>'
               'document.body.setAttribute("data-js", "ok"); no_such_function();</script>'
               '</body></html>\n', 1),
    "blank": ('<!DOCTYPE html><html><body><svg xmlns="http://www.w3.org/2000/svg" width="1" '
              'height="1"></svg><script>document.body.setAttribute("data-js", "ok");</script>'
              '</body></html>\n', 1),
}


@unittest.skipUnless(CHROMIUM or REQUIRED, "no chromium (ci/test installs it)")
class BrowserTest(unittest.TestCase):

  def setUp(self):
    self.assertIsNotNone(CHROMIUM, "chromium is not installed")
    os.makedirs(OUT, exist_ok=True)

  def copy(self, name):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(FIXTURES, name), d)
    return d

  def test_the_campaign_page(self):
    if REQUIRED:
      self.assertIsNotNone(shutil.which("dot"), "graphviz is not installed")
    w = self.copy("campaign")
    page = report_html.write_campaign(w, shutil.which("dot"))
    # Three curves per target, and with Graphviz each crash's neighbourhood.
    summary = report_html.load_json(os.path.join(w, "summary.json"))
    svgs = 3 * len(summary["targets"])
    if shutil.which("dot"):
      svgs += sum(len(t["keys"]) for t in summary["targets"])
    self.assertEqual(browser.check(page, os.path.join(OUT, "chromium-campaign"), svgs,
                                   screenshot_copy=os.path.join(OUT, "campaign.png")), [])

  def test_the_benchmarks_page(self):
    d = self.copy("bench")
    rows = report_html.load_json(os.path.join(d, "results.json"))
    page = report_html.write_bench(d, cmd_bench.report_ratios(rows))
    # Each size's ratio bars, each gcfuzz backend's pause histogram and its heap over time.
    self.assertEqual(browser.check(page, os.path.join(OUT, "chromium-bench"), 12,
                                   screenshot_copy=os.path.join(OUT, "bench.png")), [])

  def broken(self, name):
    text, svgs = BROKEN_PAGES[name]
    path = os.path.join(OUT, "broken-%s.html" % name)
    with open(path, "w") as f:
      f.write(text)
    return browser.check(path, os.path.join(OUT, "chromium-broken-" + name), svgs)

  def test_a_page_whose_script_throws_is_found_broken(self):
    problems = self.broken("throws")
    self.assertTrue(any("no_such_function" in p for p in problems), problems)

  def test_a_blank_page_is_found_broken(self):
    problems = self.broken("blank")
    self.assertTrue(any("blank" in p for p in problems), problems)


if __name__ == "__main__":
  unittest.main()
