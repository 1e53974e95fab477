"""The report pages without a browser (ci/test's browser configuration opens them in one): what
they are written from, what they hold, and the PNG reading the browser check relies on."""
import contextlib
import io
import json
import os
import re
import shutil
import struct
import tempfile
import unittest
import zlib

from gcfuzz_ci import browser, cmd_bench, cmd_campaign, layout, paths, report_html

FIXTURES = os.path.join(paths.ROOT, layout.REPORT_FIXTURES)


def fixture_copy(test, name):
  tmp = tempfile.TemporaryDirectory()
  test.addCleanup(tmp.cleanup)
  d = os.path.join(tmp.name, name)
  shutil.copytree(os.path.join(FIXTURES, name), d)
  return d


class CampaignPageTest(unittest.TestCase):

  def setUp(self):
    self.w = fixture_copy(self, "campaign")

  def page(self, dot_tool=None):
    with open(report_html.write_campaign(self.w, dot_tool)) as f:
      return f.read()

  def test_the_summary_table_has_summary_json_figures(self):
    text = self.page()
    summary = report_html.load_json(os.path.join(self.w, "summary.json"))
    for row in summary["targets"]:
      for field in ("execs", "exec_per_s", "coverage", "corpus"):
        self.assertIn("<td>%d</td>" % row[field], text)
    self.assertIn('href="#crash-graph-1">checkmark.unmarked@checkmark</a>', text)

  def test_three_curves_per_target_with_axes(self):
    text = self.page()
    charts = re.findall(r'<svg class="chart".*?</svg>', text)
    self.assertEqual(len(charts), 6)
    for c in charts:
      self.assertIn('class="axis"', c)
      self.assertIn("time (s)", c)
      self.assertIn("<polyline", c)
    self.assertIn("graph: coverage", text)
    self.assertIn("roots: corpus size", text)

  def test_each_crash_shows_its_verdict_program_and_report(self):
    text = self.page()
    self.assertIn("crash 1/2 [graph] checkmark.unmarked@checkmark", text)
    self.assertIn("GCFUZZ-VERDICT {&quot;kind&quot;: &quot;checkmark.unmarked&quot;", text)
    self.assertIn("alloc_large s0 scan 128", text)  # the minimized program
    self.assertIn("gcfuzz verify: checkmark.unmarked (pass checkmark", text)  # the report

  def test_without_graphviz_the_dot_source_is_shown(self):
    text = self.page(dot_tool=None)
    self.assertIn("Graphviz's dot is not installed", text)
    self.assertIn("digraph gcfuzz_report", text)

  @unittest.skipUnless(shutil.which("dot"), "graphviz is installed by ci/campaign")
  def test_the_neighbourhood_is_drawn_inline(self):
    text = self.page(dot_tool="dot")
    graphs = re.findall(r'<div class="graph"><svg.*?</svg>', text, re.S)
    self.assertEqual(len(graphs), 2)
    self.assertNotIn("<?xml", text)
    self.assertIn("UNMARKED", graphs[0])

  def test_text_is_escaped(self):
    with open(os.path.join(self.w, "graph", "crashes", "min-checkmark.unmarked-checkmark.txt"),
              "a") as f:
      f.write("# <script>alert(1)</script>\n")
    text = self.page()
    self.assertNotIn("<script>alert", text)
    self.assertIn("&lt;script&gt;alert(1)", text)

  def test_it_is_self_contained(self):
    text = self.page(dot_tool=shutil.which("dot"))
    self.assertEqual(browser.OUTSIDE.findall(text), [])
    self.assertEqual(text.count("<script>"), 1)

  def test_a_missing_summary_is_an_error_and_a_missing_progress_file_no_samples(self):
    os.unlink(os.path.join(self.w, "roots", "progress.json"))
    self.assertIn("no samples", self.page())
    os.unlink(os.path.join(self.w, "summary.json"))
    with self.assertRaises(ValueError):
      report_html.campaign_html(self.w)

  def test_campaign_report_mode(self):
    a = cmd_campaign.parse_args(["--report", self.w])
    self.assertEqual((a.mode, a.workdir), ("report", self.w))
    a = cmd_campaign.parse_args(["--workdir", self.w, "--report"])
    self.assertEqual((a.mode, a.workdir), ("report", self.w))
    with self.assertRaises(Exception):
      cmd_campaign.parse_args(["--report", self.w, "--export"])
    c = cmd_campaign.Campaign(a, self.w, layout.current())
    with contextlib.redirect_stdout(io.StringIO()):
      self.assertEqual(cmd_campaign.mode_report(c), 0)
    self.assertTrue(os.path.isfile(os.path.join(self.w, "report.html")))


class ProgressTest(unittest.TestCase):

  def test_samples_are_written_as_the_campaign_runs_and_at_its_end(self):
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "progress.json")
      p = report_html.Progress(path, "graph", 60)
      self.assertEqual(report_html.load_json(path)["samples"], [])
      row = cmd_campaign.new_row("graph")
      for t in range(1, 13):
        row.update(seconds=t, execs=100 * t, coverage=10 + t, corpus=5, crash_files=0)
        p.add(row)
      self.assertEqual(len(report_html.load_json(path)["samples"]), 10)  # every 10th
      p.flush()
      data = report_html.load_json(path)
      self.assertEqual((data["target"], data["seconds"], len(data["samples"])), ("graph", 60, 12))
      self.assertEqual(data["samples"][-1], {"t": 12, "execs": 1200, "coverage": 22,
                                             "corpus": 5, "crash_files": 0})

  def test_exec_rate_over_windows(self):
    samples = [{"t": t, "execs": 50 * t} for t in range(0, 21)]
    rates = report_html.rate_series(samples)
    self.assertTrue(rates)
    self.assertTrue(all(abs(r - 50) < 1e-9 for _, r in rates))
    # Totals printed every 4 s (fork mode): no window reads 0 between two of them.
    steps = [{"t": t, "execs": 200 * (t // 4)} for t in range(4, 41)]
    self.assertTrue(all(abs(r - 50) < 1e-9 for _, r in report_html.rate_series(steps)))
    self.assertEqual(report_html.rate_series([{"t": 1, "execs": 0}]), [])


class ChartTest(unittest.TestCase):

  def test_ticks_are_round(self):
    self.assertEqual(report_html.nice_step(2165), 1000)
    self.assertEqual(report_html.nice_step(61), 20)
    self.assertEqual(report_html.nice_step(0.8), 0.2)
    self.assertEqual(report_html.compact(40927), "40.9k")
    self.assertEqual(report_html.compact(2000), "2k")
    self.assertEqual(report_html.compact(0.25), "0.25")

  def test_many_samples_are_thinned_to_the_last(self):
    pts = [(i, i) for i in range(5000)]
    thin = report_html.thin(pts)
    self.assertLessEqual(len(thin), 401)
    self.assertEqual(thin[-1], (4999, 4999))

  def test_points_fall_inside_the_plot(self):
    svg = report_html.line_chart("c", [(0, 0), (30, 5), (61, 2165)], "x", "y")
    pts = re.search(r'points="([^"]+)"', svg).group(1).split()
    for p in pts:
      x, y = map(float, p.split(","))
      self.assertTrue(report_html.MARGIN_L <= x <= report_html.CHART_W - report_html.MARGIN_R)
      self.assertTrue(report_html.MARGIN_T <= y <= report_html.CHART_H - report_html.MARGIN_B)


class BenchPageTest(unittest.TestCase):

  def test_pauses_line(self):
    self.assertEqual(cmd_bench.pauses_of("BENCH wall_s=1\nPAUSES cycles=3 ns=10,20,30\n"),
                     (3, [10, 20, 30]))
    self.assertEqual(cmd_bench.pauses_of("PAUSES cycles=0 ns=\n"), (0, []))
    self.assertIsNone(cmd_bench.pauses_of("BENCH wall_s=1\n"))

  def test_ratio_bars_and_pause_distributions(self):
    d = fixture_copy(self, "bench")
    with contextlib.redirect_stdout(io.StringIO()):
      self.assertTrue(cmd_bench.write_report(d))
    with open(os.path.join(d, "report.html")) as f:
      text = f.read()
    self.assertIn("binary-trees 16: ratios", text)
    self.assertIn("gcfuzz/bdwgc wall", text)
    self.assertIn("checkmark/mark wall", text)
    self.assertIn("binary-trees 16 on gcfuzz: pause times", text)
    self.assertIn('class="ref"', text)  # the line at 1
    self.assertEqual(browser.OUTSIDE.findall(text), [])

  def test_collections_column_and_bars(self):
    d = fixture_copy(self, "bench")
    rows = report_html.load_json(os.path.join(d, "results.json"))
    rows += [{"bench": "cache", "size": "16", "backend": "gcfuzz", "wall_s": 0.3,
              "peak_mib": 20.0, "gcs": 7},
             {"bench": "cache", "size": "16", "backend": "bdwgc", "wall_s": 0.4,
              "peak_mib": 19.0, "gcs": 14}]
    with open(os.path.join(d, "results.json"), "w") as f:
      json.dump(rows, f)
    with contextlib.redirect_stdout(io.StringIO()):
      self.assertTrue(cmd_bench.write_report(d))
    with open(os.path.join(d, "report.html")) as f:
      text = f.read()
    self.assertIn("cache 16: ratios", text)
    self.assertIn("gcfuzz/bdwgc collections", text)
    self.assertIn("<th>gcs</th>", text)
    self.assertEqual(browser.OUTSIDE.findall(text), [])

  def test_heap_over_time(self):
    d = fixture_copy(self, "bench")
    with contextlib.redirect_stdout(io.StringIO()):
      self.assertTrue(cmd_bench.write_report(d))
    with open(os.path.join(d, "report.html")) as f:
      text = f.read()
    # Round 1 of each gcfuzz backend, side by side; every cycle's goal, trigger and stops.
    self.assertIn("binary-trees 16 on gcfuzz (round 1): heap over time", text)
    self.assertIn("binary-trees 16 on gcfuzz-2 (round 1): heap over time", text)
    self.assertIn('class="series heap"', text)
    self.assertIn('class="series live"', text)
    self.assertGreater(text.count('class="goal"'), 10)
    self.assertGreater(text.count('class="trigger"'), 10)
    self.assertGreater(text.count('class="stop"'), 20)
    self.assertEqual(browser.OUTSIDE.findall(text), [])

  def test_a_run_without_trace_lines_draws_none(self):
    svg = report_html.timeline_chart("t", [])
    self.assertIn("no trace", svg)
    self.assertNotIn('class="goal"', svg)

  def test_against_backends_get_their_ratio(self):
    rows = [{"backend": "gcfuzz@abc123"}, {"backend": "gcfuzz-2@abc123"}, {"backend": "gcfuzz"}]
    self.assertEqual(cmd_bench.report_ratios(rows)[-2:],
                     ["gcfuzz-2/gcfuzz-2@abc123", "gcfuzz/gcfuzz@abc123"])


def png(width, height, rows, colour=2):
  """A PNG of the given rows (each a (filter type, raw bytes) pair: the filter is applied here,
  so the decoder has to undo it)."""
  channels = {0: 1, 2: 3, 6: 4}[colour]
  data, prev = b"", bytes(width * channels)
  for ftype, line in rows:
    out = bytearray()
    for i, v in enumerate(line):
      left = line[i - channels] if i >= channels else 0
      up, ul = prev[i], prev[i - channels] if i >= channels else 0
      if ftype == 0:
        pred = 0
      elif ftype == 1:
        pred = left
      elif ftype == 2:
        pred = up
      elif ftype == 3:
        pred = (left + up) >> 1
      else:
        p = left + up - ul
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
        pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
      out.append((v - pred) & 0xFF)
    data += bytes([ftype]) + bytes(out)
    prev = line

  def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(
        ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
  return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8,
                                                           colour, 0, 0, 0)) +
          chunk(b"IDAT", zlib.compress(data)) + chunk(b"IEND", b""))


class PngTest(unittest.TestCase):

  def test_every_filter_is_undone(self):
    w = 8
    lines = [bytes((x * 37 + y * 11 + c * 5) & 0xFF for x in range(w) for c in range(3))
             for y in range(5)]
    data = png(w, 5, list(zip(range(5), lines)))
    width, height, channels, rows = browser.png_rows(data)
    self.assertEqual((width, height, channels), (w, 5, 3))
    self.assertEqual(rows, lines)

  def test_ink_counts_what_differs_from_the_background(self):
    white = bytes([255] * 3 * 16)
    self.assertEqual(browser.ink(png(16, 4, [(0, white)] * 4)), 0.0)
    half = bytes([255] * 3 * 8 + [0] * 3 * 8)
    self.assertGreater(browser.ink(png(16, 4, [(1, half)] * 4)), 0.4)

  def test_not_a_png(self):
    with self.assertRaises(ValueError):
      browser.png_rows(b"GIF89a")


if __name__ == "__main__":
  unittest.main()
