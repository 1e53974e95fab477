"""The pages people look at: a campaign's <workdir>/report.html and ci/bench's
bench/out/report.html, each one self-contained file (inline CSS, inline SVG charts, a few lines
of inline JS for the charts' read-out; no network, no font, no script from elsewhere).

Both are written from files the commands leave behind, so either can be rewritten at any time
(ci/campaign --report DIR, ci/bench --report DIR):
  campaign: summary.json; <target>/progress.json (the samples of the progress the campaign read,
            recorded by Progress below); each key's crashes/min-<key>.txt (the program),
            .out (the replay of the minimized input: the verdict line and the human report) and
            .dot (the first violation's neighbourhood, GCFUZZ_VERIFY_DOT), drawn with
            Graphviz's `dot -Tsvg` when it is installed (else its source is shown);
  bench:    results.json (the medians and rows) and pauses.json (the gcfuzz programs' pause
            history per run).
"""
import datetime
import html
import json
import math
import os
import subprocess

from . import event_census, jsonout, verdict

# ------------------------------------------------------------------ progress samples


class Progress:
  """The samples of one target's progress (what the campaign prints every 10 s, read every
  second), kept in <workdir>/<target>/progress.json for the page. A campaign starts it anew;
  the file is rewritten whole every FLUSH_EVERY samples and at the end."""

  FLUSH_EVERY = 10

  def __init__(self, path, target, seconds):
    self.path = path
    self.data = {"target": target, "seconds": seconds,
                 "started": datetime.datetime.now(datetime.timezone.utc).strftime(
                     "%Y-%m-%dT%H:%M:%SZ"), "samples": []}
    self.flush()

  def add(self, row):
    self.data["samples"].append({"t": row["seconds"], "execs": row.get("execs", 0),
                                 "coverage": row.get("coverage", 0), "corpus": row["corpus"],
                                 "crash_files": row.get("crash_files", 0)})
    if len(self.data["samples"]) % self.FLUSH_EVERY == 0:
      self.flush()

  def flush(self):
    jsonout.write(self.path, self.data)


def load_json(path, default=None):
  try:
    with open(path) as f:
      return json.load(f)
  except (OSError, ValueError):
    return default


# ------------------------------------------------------------------ numbers and charts


def compact(v):
  """12, 3.4k, 1.2M: a tick label."""
  a = abs(v)
  for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
    if a >= div:
      s = "%.1f" % (v / div)
      return (s[:-2] if s.endswith(".0") else s) + suffix
  if a == 0 or a >= 1 or v == int(v):
    return "%d" % v if v == int(v) else "%.1f" % v
  return "%.3g" % v


def nice_step(span, ticks=4):
  """A round step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over span."""
  if span <= 0:
    return 1
  raw = span / ticks
  mag = 10 ** math.floor(math.log10(raw))
  for m in (1, 2, 5, 10):
    if raw <= m * mag:
      return m * mag
  return 10 * mag


def thin(points, most=400):
  """At most `most` points, evenly picked, the last one kept."""
  if len(points) <= most:
    return points
  k = len(points) / most
  out = [points[int(i * k)] for i in range(most)]
  if out[-1] != points[-1]:
    out.append(points[-1])
  return out


CHART_W, CHART_H = 400, 230
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 62, 14, 28, 42


def axes(out, sx, sy, xtop, xstep, ytop, ystep, x_label, y_label):
  """A chart's frame: the y grid with its tick labels, the x ticks, both axes and their labels
  (sx, sy: data to SVG coordinates)."""
  e = html.escape
  x0, y0 = MARGIN_L, MARGIN_T + CHART_H - MARGIN_T - MARGIN_B
  pw = CHART_W - MARGIN_L - MARGIN_R
  v = 0.0
  while v <= ytop * 1.0001:
    out.append('<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>'
               % (x0, sy(v), x0 + pw, sy(v)))
    out.append('<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>'
               % (x0 - 6, sy(v) + 4, compact(v)))
    v += ystep
  v = 0.0
  while v <= xtop * 1.0001:
    out.append('<line class="axis" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>'
               % (sx(v), y0, sx(v), y0 + 4))
    out.append('<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>'
               % (sx(v), y0 + 16, compact(v)))
    v += xstep
  out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>' % (x0, MARGIN_T, x0, y0))
  out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>' % (x0, y0, x0 + pw, y0))
  out.append('<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>'
             % (x0 + pw / 2, CHART_H - 6, e(x_label)))
  out.append('<text class="label" transform="translate(13 %d) rotate(-90)" '
             'text-anchor="middle">%s</text>' % ((MARGIN_T + y0) / 2, e(y_label)))


def line_chart(title, points, x_label, y_label, colour="#1f6fb2"):
  """An SVG line chart of points [(x, y)] with both axes, round ticks, labels and a title.
  The points also go in data attributes, for the page's read-out (JS)."""
  e = html.escape
  out = ['<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" role="img" aria-label="%s"' % (CHART_W, CHART_H, CHART_W, CHART_H,
                                                             e(title))]
  points = thin([(float(x), float(y)) for x, y in points if y is not None])
  pw, ph = CHART_W - MARGIN_L - MARGIN_R, CHART_H - MARGIN_T - MARGIN_B
  if points:
    xmax = max(max(x for x, _ in points), 1.0)
    ymax = max(y for _, y in points)
    xstep, ystep = nice_step(xmax), nice_step(ymax if ymax > 0 else 1)
    # The time axis ends at the last sample (the curve spans the width), the other at a tick.
    xtop, ytop = xmax, max(math.ceil(ymax / ystep), 1) * ystep
    sx = lambda x: MARGIN_L + pw * x / xtop
    sy = lambda y: MARGIN_T + ph * (1 - y / ytop)
    out.append(' data-x="%s" data-y="%s"' % (" ".join("%g" % x for x, _ in points),
                                            " ".join("%g" % y for _, y in points)))
  out.append(">")
  out.append('<title>%s</title>' % e(title))
  out.append('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (CHART_W, CHART_H))
  out.append('<text class="t" x="%d" y="16">%s</text>' % (MARGIN_L, e(title)))
  x0, y0 = MARGIN_L, MARGIN_T + ph
  if not points:
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
               % (x0, MARGIN_T, pw, ph))
    out.append('<text class="none" x="%d" y="%d">no samples</text>'
               % (x0 + pw / 2 - 30, MARGIN_T + ph / 2))
    out.append("</svg>")
    return "".join(out)
  axes(out, sx, sy, xtop, xstep, ytop, ystep, x_label, y_label)
  path = " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in points)
  out.append('<polyline class="series" fill="none" stroke="%s" stroke-width="2" points="%s"/>'
             % (colour, path))
  if len(points) == 1:
    out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>'
               % (sx(points[0][0]), sy(points[0][1]), colour))
  out.append("</svg>")
  return "".join(out)


def bar_chart(title, bars, reference=None, unit=""):
  """A horizontal SVG bar chart of bars [(label, value, colour)], with an x axis from 0, round
  ticks and a dashed line at `reference` (1.0 for a ratio)."""
  e = html.escape
  row_h, label_w = 22, 210
  h = MARGIN_T + row_h * max(len(bars), 1) + MARGIN_B
  w = 640
  pw = w - label_w - 60
  vmax = max([v for _, v, _ in bars if v is not None] + [reference or 0, 1e-9])
  step = nice_step(vmax)
  top = math.ceil(vmax / step) * step
  sx = lambda v: label_w + pw * v / top
  out = ['<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" role="img" aria-label="%s">' % (w, h, w, h, e(title)),
         '<title>%s</title>' % e(title),
         '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (w, h),
         '<text class="t" x="8" y="16">%s</text>' % e(title)]
  y_axis = MARGIN_T + row_h * len(bars)
  v = 0.0
  while v <= top + step / 2:
    out.append('<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>'
               % (sx(v), MARGIN_T, sx(v), y_axis))
    out.append('<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>'
               % (sx(v), y_axis + 16, compact(v)))
    v += step
  for i, (label, value, colour) in enumerate(bars):
    y = MARGIN_T + row_h * i
    out.append('<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>'
               % (label_w - 8, y + 15, e(label)))
    if value is None:
      continue
    out.append('<rect class="bar" x="%d" y="%d" width="%.1f" height="%d" fill="%s">'
               '<title>%s: %.3g%s</title></rect>'
               % (label_w, y + 3, max(sx(value) - label_w, 1), row_h - 6, colour, e(label), value,
                  unit))
    out.append('<text class="tick" x="%.1f" y="%d">%.2f%s</text>' % (sx(value) + 4, y + 15, value,
                                                                      unit))
  out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>'
             % (label_w, MARGIN_T, label_w, y_axis))
  out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>'
             % (label_w, y_axis, label_w + pw, y_axis))
  if reference is not None:
    out.append('<line class="ref" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>'
               % (sx(reference), MARGIN_T - 4, sx(reference), y_axis))
  out.append("</svg>")
  return "".join(out)


TIMELINE_COLOURS = {"heap": "#1f6fb2", "live": "#2a8a4a", "goal": "#c0392b",
                    "trigger": "#e08a1e", "stop": "#6b2c91"}


def timeline_chart(title, cycles):
  """An SVG of one gcfuzz run's heap over time, from its trace lines (cmd_bench.trace_cycles):
  the heap (pools and large blocks: at each mark's start and end, a line through them), the live
  heap each mark found and the heap of blocks at its end (dots), each cycle's goal (a red bar
  over its mark) and trigger (an orange tick where it started), and its stops (purple ticks
  under the axis, their height the stop's share of the run's longest; its title the times)."""
  e = html.escape
  pw, ph = CHART_W - MARGIN_L - MARGIN_R, CHART_H - MARGIN_T - MARGIN_B
  out = ['<svg class="chart timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" role="img" aria-label="%s">' % (CHART_W, CHART_H, CHART_W, CHART_H,
                                                              e(title)),
         '<title>%s</title>' % e(title),
         '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (CHART_W, CHART_H),
         '<text class="t" x="%d" y="16">%s</text>' % (MARGIN_L, e(title))]
  cycles = [c for c in cycles if c.get("heap_kib")]
  if not cycles:
    out.append('<text class="none" x="%d" y="%d">no trace</text>'
               % (MARGIN_L + pw / 2 - 30, MARGIN_T + ph / 2))
    out.append("</svg>")
    return "".join(out)
  mib = lambda kib: kib / 1024.0
  start = lambda c: max(c["t"] - (c.get("mark_ms") or 0) / 1e3, 0.0)
  xmax = max(max(c["t"] for c in cycles), 1e-3)
  ymax = max(max(mib(max(c["heap_kib"])), mib(c.get("goal_kib") or 0)) for c in cycles)
  xstep, ystep = nice_step(xmax), nice_step(ymax if ymax > 0 else 1)
  xtop, ytop = xmax, max(math.ceil(ymax / ystep), 1) * ystep
  sx = lambda x: MARGIN_L + pw * x / xtop
  sy = lambda y: MARGIN_T + ph * (1 - y / ytop)
  axes(out, sx, sy, xtop, xstep, ytop, ystep, "seconds", "MiB")
  heap = []
  for c in cycles:
    heap += [(start(c), mib(c["heap_kib"][0])), (c["t"], mib(c["heap_kib"][1]))]
  out.append('<polyline class="series heap" fill="none" stroke="%s" stroke-width="1.5" '
             'points="%s"/>' % (TIMELINE_COLOURS["heap"],
                                " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in thin(heap))))
  live = [(c["t"], mib(c["live_kib"])) for c in cycles if c.get("live_kib") is not None]
  out.append('<polyline class="series live" fill="none" stroke="%s" stroke-width="1.5" '
             'points="%s"/>' % (TIMELINE_COLOURS["live"],
                                " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in thin(live))))
  y0 = MARGIN_T + ph
  longest = max([c.get("start_ms") or 0 for c in cycles] +
                [c.get("end_ms") or 0 for c in cycles] + [1e-9])
  for c in thin(cycles, 200):
    x0, x1 = sx(start(c)), sx(c["t"])
    if c.get("goal_kib") is not None:
      out.append('<line class="goal" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" '
                 'stroke-width="2"/>' % (x0, sy(mib(c["goal_kib"])), max(x1, x0 + 2),
                                         sy(mib(c["goal_kib"])), TIMELINE_COLOURS["goal"]))
      out.append('<line class="trigger" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" '
                 'stroke-width="2"/>' % (x0, sy(mib(c["trigger_kib"])) - 4, x0,
                                         sy(mib(c["trigger_kib"])) + 4,
                                         TIMELINE_COLOURS["trigger"]))
    if c.get("end_kib") is not None:
      out.append('<circle class="at-end" cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>'
                 % (x1, sy(mib(c["end_kib"])), TIMELINE_COLOURS["heap"]))
    for at, ms in ((x0, c.get("start_ms")), (x1, c.get("end_ms"))):
      if ms is None:
        continue
      out.append('<line class="stop" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s">'
                 '<title>stop %.3f ms</title></line>'
                 % (at, y0, at, y0 - max(2.0, 30.0 * ms / longest), TIMELINE_COLOURS["stop"], ms))
  legend = [("heap", "heap"), ("live", "live"), ("goal", "goal"), ("trigger", "trigger"),
            ("stop", "stops, max %.3g ms" % longest)]
  lx = MARGIN_L + 8
  for key, label in legend:
    out.append('<rect x="%d" y="%d" width="10" height="3" fill="%s"/>'
               % (lx, MARGIN_T + 4, TIMELINE_COLOURS[key]))
    out.append('<text class="tick" x="%d" y="%d">%s</text>' % (lx + 13, MARGIN_T + 9, e(label)))
    lx += 13 + 7 * len(label) + 8
  out.append("</svg>")
  return "".join(out)


def histogram(title, values, x_label, bins=24, colour="#2a8a4a"):
  """An SVG histogram of values (equal-width bins from 0 to the largest value), drawn as a line
  chart's frame with bars: counts on the y axis."""
  e = html.escape
  pw, ph = CHART_W - MARGIN_L - MARGIN_R, CHART_H - MARGIN_T - MARGIN_B
  out = ['<svg class="chart hist" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" role="img" aria-label="%s">' % (CHART_W, CHART_H, CHART_W, CHART_H,
                                                              e(title)),
         '<title>%s</title>' % e(title),
         '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (CHART_W, CHART_H),
         '<text class="t" x="%d" y="16">%s</text>' % (MARGIN_L, e(title))]
  x0, y0 = MARGIN_L, MARGIN_T + ph
  if not values:
    out.append('<text class="none" x="%d" y="%d">no pauses</text>'
               % (x0 + pw / 2 - 30, MARGIN_T + ph / 2))
    out.append("</svg>")
    return "".join(out)
  vmax = max(values)
  xstep = nice_step(vmax if vmax > 0 else 1)
  xtop = max(math.ceil(vmax / xstep), 1) * xstep
  counts = [0] * bins
  for v in values:
    counts[min(int(v / xtop * bins), bins - 1)] += 1
  cstep = nice_step(max(counts))
  ctop = max(math.ceil(max(counts) / cstep), 1) * cstep
  sx = lambda x: x0 + pw * x / xtop
  sy = lambda c: MARGIN_T + ph * (1 - c / ctop)
  axes(out, sx, sy, xtop, xstep, ctop, cstep, x_label, "pauses")
  bw = pw / bins
  for i, n in enumerate(counts):
    if n:
      out.append('<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">'
                 '<title>%s to %s: %d</title></rect>'
                 % (x0 + i * bw + 0.5, sy(n), bw - 1, y0 - sy(n), colour,
                    compact(i * xtop / bins), compact((i + 1) * xtop / bins), n))
  out.append("</svg>")
  return "".join(out)


# ------------------------------------------------------------------ the page frame

CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #1a1a1a;
       background: #f6f6f4; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px 0; } h2 { font-size: 18px; margin: 28px 0 8px 0;
  border-bottom: 2px solid #ccc; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #555; font-size: 13px; margin-bottom: 12px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th { background: #e9e9e6; } td.l, th.l { text-align: left; }
.bad { color: #b00020; font-weight: bold; } .ok { color: #1b7a2e; font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
svg.chart, svg.bars { border: 1px solid #ccc; background: #fff; }
svg text { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; }
svg .t { font-size: 13px; font-weight: bold; fill: #222; }
svg .tick { font-size: 11px; fill: #444; } svg .label { font-size: 12px; fill: #222; }
svg .none { font-size: 13px; fill: #888; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; } svg .axis { stroke: #333; stroke-width: 1; }
svg .ref { stroke: #b00020; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .cursor { fill: #b00020; } svg .readout { font-size: 11px; fill: #b00020; }
.crash { background: #fff; border: 1px solid #d99; border-left: 6px solid #b00020;
         padding: 8px 14px; margin: 12px 0; }
.crash h3 { margin-top: 6px; font-family: "DejaVu Sans Mono", monospace; }
pre { background: #f1f1ee; border: 1px solid #ddd; padding: 8px; overflow: auto;
      max-height: 420px; font-size: 12px; font-family: "DejaVu Sans Mono", monospace; }
pre.verdict { background: #fff3f3; border-color: #e0b0b0; max-height: none; }
pre.wrap { white-space: pre-wrap; overflow-wrap: anywhere; }
.graph svg { max-width: 100%; height: auto; background: #fff; border: 1px solid #ddd; }
.cols { display: flex; flex-wrap: wrap; gap: 14px; } .cols > div { flex: 1 1 560px; min-width: 0; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
"""

# The charts' read-out: the sample nearest the pointer, named in the chart. Nothing else in the
# page depends on it; it marks the body when it has run (the browser test looks for that).
JS = """
(function () {
  var NS = "http://www.w3.org/2000/svg";
  var charts = document.querySelectorAll("svg.chart[data-x]");
  for (var i = 0; i < charts.length; i++) {
    (function (svg) {
      var xs = svg.getAttribute("data-x").split(" ").map(Number);
      var ys = svg.getAttribute("data-y").split(" ").map(Number);
      var pts = svg.querySelector("polyline").getAttribute("points").split(" ");
      var dot = document.createElementNS(NS, "circle");
      dot.setAttribute("r", "4"); dot.setAttribute("class", "cursor");
      dot.setAttribute("visibility", "hidden");
      var txt = document.createElementNS(NS, "text");
      txt.setAttribute("class", "readout"); txt.setAttribute("x", "300");
      txt.setAttribute("y", "16");
      svg.appendChild(dot); svg.appendChild(txt);
      svg.addEventListener("mousemove", function (ev) {
        var box = svg.getBoundingClientRect();
        var px = (ev.clientX - box.left) * svg.viewBox.baseVal.width / box.width;
        var best = 0, bestd = Infinity;
        for (var k = 0; k < pts.length; k++) {
          var d = Math.abs(parseFloat(pts[k].split(",")[0]) - px);
          if (d < bestd) { bestd = d; best = k; }
        }
        var p = pts[best].split(",");
        dot.setAttribute("cx", p[0]); dot.setAttribute("cy", p[1]);
        dot.setAttribute("visibility", "visible");
        txt.textContent = xs[best] + " s: " + ys[best];
      });
    })(charts[i]);
  }
  document.body.setAttribute("data-charts", String(charts.length));
  document.body.setAttribute("data-js", "ok");
})();
"""


def page(title, meta, body):
  return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width\">"
          "<title>%s</title><style>%s</style></head>\n<body>\n<h1>%s</h1>\n"
          "<div class=\"meta\">%s</div>\n%s\n<script>%s</script>\n</body></html>\n"
          % (html.escape(title), CSS, html.escape(title), meta, body, JS))


def table(header, rows, left=(0,)):
  """An HTML table; the columns numbered in `left` are text (left-aligned), the others figures.
  Cells are escaped unless given as ("html", markup)."""
  def cell(tag, i, v):
    cls = ' class="l"' if i in left else ""
    if isinstance(v, tuple) and v[0] == "html":
      return "<%s%s>%s</%s>" % (tag, cls, v[1], tag)
    return "<%s%s>%s</%s>" % (tag, cls, html.escape("" if v is None else str(v)), tag)
  out = ["<table><tr>" + "".join(cell("th", i, h) for i, h in enumerate(header)) + "</tr>"]
  for r in rows:
    out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>")
  out.append("</table>")
  return "\n".join(out)


def now_utc():
  return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ------------------------------------------------------------------ Graphviz


def dot_svg(dot_text, dot_tool="dot"):
  """The neighbourhood drawn by Graphviz (`dot -Tsvg`) as an inline <svg> element, or None when
  there is no dot tool or it fails."""
  try:
    p = subprocess.run([dot_tool, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                       timeout=60)
  except (OSError, subprocess.TimeoutExpired):
    return None
  if p.returncode != 0 or "<svg" not in p.stdout:
    return None
  # Inline SVG takes no XML prolog, doctype or comments before the element.
  return p.stdout[p.stdout.index("<svg"):]


# ------------------------------------------------------------------ the campaign's page


def rate_series(samples):
  """exec/s over windows of a sixtieth of the run (at least 2 s: about 60 points), from the
  cumulative execs of the samples. Only the samples where the count moved are used: libFuzzer's
  fork mode prints its totals when a job ends, so between two of its lines the count stands
  still, and a window inside that pause would read as 0 exec/s."""
  pts = []
  for s in samples:
    if s.get("execs") and (not pts or s["execs"] != pts[-1][1]):
      pts.append((s["t"], s["execs"]))
  if len(pts) < 2:
    return []
  window = max(2, (pts[-1][0] - pts[0][0]) / 60)
  out, (t0, e0) = [], pts[0]
  for t, e in pts[1:]:
    if t - t0 >= window:
      out.append((t, max(e - e0, 0) / (t - t0)))
      t0, e0 = t, e
  return out


def campaign_target(workdir, row, dot_tool):
  """One target's section: its three curves, then its crashes."""
  t = row["name"]
  e = html.escape
  prog = load_json(os.path.join(workdir, t, "progress.json"), {"samples": []})
  samples = prog.get("samples", [])
  out = ['<h2 id="t-%s">%s</h2>' % (e(t), e(t))]
  if prog.get("started"):
    out.append('<div class="meta">started %s, %d samples, budget %s s</div>'
               % (e(prog["started"]), len(samples), e(str(prog.get("seconds", "?")))))
  out.append('<div class="charts">')
  out.append(line_chart("%s: coverage" % t, [(s["t"], s["coverage"]) for s in samples
                                             if s.get("coverage")],
                        "time (s)", "coverage (libFuzzer cov)", "#1f6fb2"))
  out.append(line_chart("%s: exec/s" % t, rate_series(samples), "time (s)", "executions / s",
                        "#c0501a"))
  out.append(line_chart("%s: corpus size" % t, [(s["t"], s["corpus"]) for s in samples],
                        "time (s)", "inputs in the corpus", "#2a8a4a"))
  out.append("</div>")
  keys = row.get("keys", [])
  if row.get("error"):
    out.append('<p class="bad">%s: %s</p>' % (e(t), e(row["error"])))
  if not keys:
    out.append('<p class="ok">no crash</p>')
  for n, key in enumerate(keys, 1):
    out.append(crash_section(workdir, t, n, len(keys), key, dot_tool))
  if row.get("unreproduced"):
    out.append('<p class="bad">%d crash file(s) saved on a race that did not race again: %s</p>'
               % (len(row["unreproduced"]), e(" ".join(row["unreproduced"]))))
  return "\n".join(out)


def read_text(path, limit=200000):
  try:
    with open(path, errors="replace") as f:
      return f.read(limit)
  except OSError:
    return None


def crash_section(workdir, t, n, total, key, dot_tool):
  e = html.escape
  base = os.path.join(workdir, t, "crashes", "min-" + verdict.slug(key))
  rel = os.path.relpath(base, workdir)
  out = ['<div class="crash" id="crash-%s-%d">' % (e(t), n),
         '<h3>crash %d/%d [%s] %s</h3>' % (n, total, e(t), e(key)),
         '<div class="meta">minimized input <code>%s</code>, program <code>%s.txt</code>'
         '</div>' % (e(rel), e(rel))]
  report = read_text(base + ".out")
  if report is None:
    out.append("<p>no replay output was saved for this crash (%s.out)</p>" % e(rel))
  else:
    verdicts = [l for l in report.splitlines() if l.startswith(verdict.PREFIX)]
    if verdicts:
      out.append('<pre class="verdict wrap">%s</pre>' % e("\n".join(verdicts[:8])))
  out.append('<div class="cols">')
  program = read_text(base + ".txt")
  out.append("<div><h3>program</h3><pre class=\"wrap\">%s</pre></div>"
             % e(program if program is not None else "(no %s.txt)" % rel))
  out.append("<div><h3>report (replay of the minimized input)</h3><pre class=\"wrap\">%s</pre>"
             "</div>"
             % e(report if report is not None else "(none)"))
  out.append("</div>")
  dot_text = read_text(base + ".dot")
  if dot_text:
    svg = dot_svg(dot_text, dot_tool) if dot_tool else None
    out.append("<h3>neighbourhood of the first violation</h3>")
    if svg:
      out.append('<div class="graph">%s</div>' % svg)
    else:
      out.append("<p>Graphviz's dot is not installed (Debian package graphviz): its source"
                 "</p><pre>%s</pre>" % e(dot_text))
  else:
    out.append("<p>no neighbourhood: the first finding is not a pass's report on a block "
               "(a driver check, a sanitizer, a hang)</p>")
  out.append("</div>")
  return "\n".join(out)


SUMMARY_HEADER = ["target", "seconds", "execs", "exec/s", "cov", "corpus", "crashes", "keys"]


def campaign_html(workdir, dot_tool="dot"):
  summary = load_json(os.path.join(workdir, "summary.json"))
  if not isinstance(summary, dict) or not isinstance(summary.get("targets"), list):
    raise ValueError("%s has no summary.json (run a campaign there first)" % workdir)
  e = html.escape
  rows, sections = [], []
  for r in summary["targets"]:
    keys = r.get("keys", [])
    links = ", ".join('<a href="#crash-%s-%d">%s</a>' % (e(r["name"]), i, e(k))
                      for i, k in enumerate(keys, 1))
    crashes = r.get("crashes", 0)
    rows.append([("html", '<a href="#t-%s">%s</a>' % (e(r["name"]), e(r["name"]))),
                 r.get("seconds"), r.get("execs"), r.get("exec_per_s"), r.get("coverage"),
                 r.get("corpus"),
                 ("html", '<span class="%s">%s</span>' % ("bad" if crashes or r.get("error")
                                                          else "ok",
                                                          e(str(r.get("error") or crashes)))),
                 ("html", links or "-")])
    sections.append(campaign_target(workdir, r, dot_tool))
  status = "INTERRUPTED, the figures so far" if summary.get("interrupted") else "complete"
  meta = ("work directory <code>%s</code> &middot; %s &middot; page written %s "
          "(rewrite it: <code>ci/campaign --report %s</code>)"
          % (e(workdir), e(status), e(now_utc()), e(workdir)))
  body = ("<h2>summary</h2>\n" + table(SUMMARY_HEADER, rows, left=(0, 7)) +
          "<p class=\"meta\">the figures of summary.json: exec/s is the average over the run; "
          "crashes counts the distinct keys this campaign found</p>\n" + "\n".join(sections) +
          census_section(summary.get("census")) + events_section(summary.get("events")) +
          "".join(events_section(ev) for ev in (summary.get("backend_events") or {}).values()))
  return page("gcfuzz campaign", meta, body)


def events_section(ev):
  """The rare events' census (ci/campaign --census, event_census.py): each event per target and
  in all, those that never happened marked."""
  if not isinstance(ev, dict) or not isinstance(ev.get("events"), list):
    return ""
  e = html.escape
  targets = list(ev.get("programs", {}))
  rows = []
  for r in ev["events"]:
    never = r.get("total", 0) == 0
    rows.append([("html", '<span class="%s">%s</span>' % ("bad" if never else "ok",
                                                          e(r["event"])))] +
                [r["targets"].get(t, 0) for t in targets] + [r.get("total", 0)])
  collector = ev.get("collector", "gcfuzz")
  anchor = "events" if collector == "gcfuzz" else "events-" + collector
  return ("<h2 id=\"%s\">rare events of %s</h2>\n" % (e(anchor), e(event_census.title(ev))) +
          "<p>%s: %s; %d cycles; <b>%d of %d events never happened</b></p>\n" % (
              e(ev.get("what", "")), e(", ".join("%s %d programs" % (t, n)
                                                 for t, n in ev.get("programs", {}).items())),
              ev.get("cycles", 0), len(ev.get("never", [])), len(ev["events"])) +
          table(["event"] + targets + ["total"], rows))


CENSUS_SHOWN = 400  # never-taken sides listed on the page; census.txt has them all


def census_section(c):
  """gc/'s branch census (ci/campaign --coverage, census.py): the totals, the per-file bars and
  every side never taken with its FILE:LINE:COLUMN."""
  if not isinstance(c, dict) or not c.get("sides"):
    return ""
  e = html.escape
  bars = [(f["file"], 100.0 * f["taken"] / f["sides"] if f["sides"] else 0.0, "#2a8a4a")
          for f in sorted(c.get("files", []), key=lambda f: f["taken"] / max(f["sides"], 1))]
  untaken = c.get("untaken", [])
  rows = [["%s:%d:%d" % (u["file"], u["line"], u["column"]), u["side"],
           ("html", "<code>%s</code>" % e(u["condition"])), u["function"]]
          for u in untaken[:CENSUS_SHOWN]]
  excused = [["%s %s" % (x["file"], x["function"]), x["side"],
              ("html", "<code>%s</code>" % e(x["condition"])), x["reason"]]
             for x in c.get("excused", [])]
  stale = "".join('<p class="bad">stale exclusion: %s %s %s <code>%s</code></p>\n' % (
      e(s["file"]), e(s["function"]), e(s["side"]), e(s["condition"]))
      for s in c.get("stale_exclusions", []))
  more = ("<p class=\"meta\">%d more in coverage/census.txt</p>\n" %
          (len(untaken) - CENSUS_SHOWN) if len(untaken) > CENSUS_SHOWN else "")
  return ("<h2 id=\"census\">branch census of %s</h2>\n" % e(c.get("scope", "gc/")) +
          "<p>%s: <b>%d of %d branch sides taken (%.1f %%)</b>; %d unreachable by design "
          "subtracted (gc/unreachable.tsv, below)</p>\n" % (
              e(c.get("what", "")), c["taken"], c["sides"], c.get("percent", 0.0),
              len(c.get("excused", []))) + stale +
          bar_chart("branch sides taken per file (%)", bars, unit="%") +
          "<h3>never taken (%d)</h3>\n" % len(untaken) +
          table(["where", "side", "condition", "function"], rows, left=(0, 1, 2, 3)) + more +
          "<h3>unreachable by design (%d)</h3>\n" % len(excused) +
          table(["function", "side", "condition", "reason"], excused, left=(0, 1, 2, 3)))


def write_page(path, text):
  """Written whole (write, then rename): a browser open on it never reads half a page."""
  tmp = path + ".tmp.%d" % os.getpid()
  with open(tmp, "w") as f:
    f.write(text)
  os.replace(tmp, path)
  return path


def write_campaign(workdir, dot_tool="dot"):
  return write_page(os.path.join(workdir, "report.html"), campaign_html(workdir, dot_tool))


# ------------------------------------------------------------------ the benchmarks' page

RATIO_COLOURS = {"wall_s": "#1f6fb2", "peak_mib": "#c0501a", "pause_max_ms": "#2a8a3a",
                 "gcs": "#7a4fb0", "final_mapped_mib": "#8a6a1a"}
# The heap's final size (fragment's rows): columns shown only for a benchmark that has them.
HEAP_COLUMNS = ("final_mapped_mib", "live_mib", "mapped_live", "data_mib", "mapped_data")


def percentile(sorted_values, p):
  if not sorted_values:
    return None
  k = min(int(round(p / 100.0 * (len(sorted_values) - 1))), len(sorted_values) - 1)
  return sorted_values[k]


def bench_html(outdir, ratios):
  """The page of ci/bench's results: per benchmark and size, the medians, the ratio bars (wall
  time, peak RSS, longest stop and collections; the dashed line is 1: below it the numerator is
  faster, smaller or collects less often), and the pause-time distribution of each gcfuzz
  backend."""
  results = load_json(os.path.join(outdir, "results.json"))
  if not isinstance(results, list):
    raise ValueError("%s has no results.json (run ci/bench first)" % outdir)
  pauses = load_json(os.path.join(outdir, "pauses.json"), {"runs": []})
  e = html.escape
  groups = []
  for r in results:
    g = (r["bench"], str(r["size"]))
    if g not in groups:
      groups.append(g)
  sections = []
  for bench, size in groups:
    rows = [r for r in results if (r["bench"], str(r["size"])) == (bench, size)]
    by = {r["backend"]: r for r in rows}
    heap = [k for k in HEAP_COLUMNS if any(k in r for r in rows)]
    out = ['<h2 id="b-%s-%s">%s %s</h2>' % (e(bench), e(size), e(bench), e(size)),
           '<div class="charts">',
           table(["backend", "wall_s", "peak_mib", "pause_max_ms", "pause_p99_ms",
                  "slice_max_ms", "gcs"] + heap,
                 [[r["backend"], r["wall_s"], r.get("peak_mib", "-"),
                   r.get("pause_max_ms", "-"), r.get("pause_p99_ms", "-"),
                   r.get("slice_max_ms", "-"), r.get("gcs", "-")] +
                  ["-" if r.get(k) is None else r[k] for k in heap] for r in rows])]
    bars = []
    for pair in ratios:
      num, den = pair.split("/", 1)
      if num in by and den in by:
        for field, name in (("wall_s", "wall"), ("peak_mib", "peak"),
                            ("pause_max_ms", "max pause"), ("gcs", "collections"),
                            ("final_mapped_mib", "final mapped")):
          a, b = by[num].get(field), by[den].get(field)
          if a is not None and b:
            bars.append(("%s %s" % (pair, name), a / b, RATIO_COLOURS[field]))
    if bars:
      out.append(bar_chart("%s %s: ratios (blue wall time, orange peak RSS, green longest "
                           "stop, purple collections, brown final mapped heap; dashed: 1)"
                           % (bench, size), bars, reference=1.0, unit="x"))
    out.append("</div>")
    hists, stats = [], []
    for be in by:
      ns = [p for run in pauses.get("runs", []) if (run.get("bench"), str(run.get("size")),
                                                    run.get("backend")) == (bench, size, be)
            for p in run.get("pauses_ns", [])]
      if not ns:
        continue
      ms = sorted(p / 1e6 for p in ns)
      runs = [run for run in pauses["runs"]
              if (run.get("bench"), str(run.get("size")), run.get("backend")) ==
              (bench, size, be)]
      cycles = sum(run.get("cycles", 0) for run in runs)
      # The longest stop of every round (max_ns: the ring may have lost it), else the ring's.
      top = max([run["max_ns"] / 1e6 for run in runs if "max_ns" in run] + [ms[-1]])
      hists.append(histogram("%s %s on %s: pause times" % (bench, size, be), ms,
                             "stop of the world (ms)"))
      stats.append([be, len(ms), cycles, "%.3f" % percentile(ms, 50),
                    "%.3f" % percentile(ms, 90), "%.3f" % percentile(ms, 99), "%.3f" % top])
    if hists:
      out.append("<h3>pause times</h3>")
      out.append('<div class="charts">%s</div>' % "".join(hists))
      out.append(table(["backend", "pauses", "cycles", "p50 ms", "p90 ms", "p99 ms", "max ms"],
                       stats))
      out.append('<p class="meta">each run\'s last stops of the world (the collector keeps its '
                 'last 256, gc_pause_history; incremental marking stops at its start, each '
                 'recheck and its end), over every round; max: the longest stop of any round '
                 '(gc_stats.max_pause_ns)</p>')
    # Each gcfuzz backend's first round drawn over time, the modes side by side.
    lines = []
    for be in sorted(by, key=lambda b: (b.endswith("-2"), "@" in b, b)):
      run = next((run for run in pauses.get("runs", [])
                  if (run.get("bench"), str(run.get("size")), run.get("backend")) ==
                  (bench, size, be) and run.get("trace")), None)
      if run is not None:
        lines.append(timeline_chart("%s %s on %s (round %s): heap over time"
                                    % (bench, size, be, run.get("round", "?")), run["trace"]))
    if lines:
      out.append("<h3>heap over time</h3>")
      out.append('<div class="charts">%s</div>' % "".join(lines))
      out.append('<p class="meta">from each run\'s trace lines (gc/README.md, "The trace '
                 'line"): the heap\'s pools and large blocks at each mark\'s start and end (blue '
                 'line; dots: the blocks allocated and not freed when the mark ended), what the '
                 'mark found live (green), each cycle\'s goal (red, over its mark) and trigger '
                 '(orange tick), and its stops (purple ticks under the axis)</p>')
    sections.append("\n".join(out))
  meta = ("output directory <code>%s</code> &middot; page written %s (rewrite it: "
          "<code>ci/bench --report %s</code>)<br>medians over the rounds. A ratio "
          "gcfuzz*/X below 1 (left of the dashed line): gcfuzz is faster (wall) or smaller "
          "(peak); PASS/mark: a pass's cost in full marks; markers-1/markers-2: the parallel "
          "mark's speedup (above 1: two markers are faster)" % (e(outdir), e(now_utc()),
                                                               e(outdir)))
  return page("gcfuzz benchmarks", meta, "\n".join(sections) or "<p>no results</p>")


def write_bench(outdir, ratios):
  return write_page(os.path.join(outdir, "report.html"), bench_html(outdir, ratios))
