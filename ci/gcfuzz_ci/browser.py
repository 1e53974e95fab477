"""The report pages opened in a real browser (headless Chromium, Debian's chromium): the check
tests/test_browser.py makes (ci/test's ci configuration installs Chromium for it).

A page passes when it is self-contained (no address outside the page: no src, no href but
#anchors, no stylesheet link), Chromium loads it without a console message (the pages log
nothing, so any message is an error: an uncaught exception, a failed load), its inline script
ran to its end (it marks <body data-js="ok">), the DOM Chromium built holds the SVG elements the
page must have, and a screenshot of it is not blank: enough of its pixels differ from the
background (the PNG decoded here, zlib and the PNG filters, no imaging library).
"""
import os
import re
import shutil
import struct
import subprocess
import zlib

from . import procs

CHROMIUM_TIMEOUT_S = 90
# A page that draws its charts fills far more than this share of a 1280 x 2400 screenshot; a
# page that renders only its heading, or nothing, fills less.
MIN_INK = 0.02


def chromium_cmd(chromium, profile, extra, url, width, height):
  # --no-sandbox: as root (ci/test in a container); --disable-dev-shm-usage: a container's
  # /dev/shm (64 MiB under docker) is too small for it.
  return [chromium, "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
          "--hide-scrollbars", "--no-first-run", "--disable-extensions",
          "--user-data-dir=" + profile, "--window-size=%d,%d" % (width, height)] + extra + [url]


def load(page, workdir, width=1280, height=2400, chromium="chromium"):
  """(DOM text, console lines, screenshot PNG bytes or None, problems) of page in Chromium."""
  url = "file://" + os.path.abspath(page)
  profile = os.path.join(workdir, "profile")
  problems = []
  dom_path, dom_log = os.path.join(workdir, "dom.html"), os.path.join(workdir, "dom.log")
  with open(dom_path, "w") as out, open(dom_log, "w") as err:
    rc, hung = procs.run(chromium_cmd(chromium, profile, ["--enable-logging=stderr", "--v=0",
                                                          "--dump-dom"], url, width, height),
                         timeout_s=CHROMIUM_TIMEOUT_S, stdout=out, stderr=err)
  if rc != 0:
    problems.append("chromium --dump-dom %s (log %s)" % ("hung" if hung else "exited %d" % rc,
                                                         dom_log))
  with open(dom_path, errors="replace") as f:
    dom = f.read()
  with open(dom_log, errors="replace") as f:
    console = [l for l in f.read().splitlines() if re.search(r":CONSOLE[:(]", l)]
  shot = os.path.join(workdir, "shot.png")
  if os.path.exists(shot):
    os.unlink(shot)
  shot_log = os.path.join(workdir, "shot.log")
  with open(shot_log, "w") as f:
    rc, hung = procs.run(chromium_cmd(chromium, profile, ["--screenshot=" + shot], url, width,
                                      height),
                         timeout_s=CHROMIUM_TIMEOUT_S, stdout=f, stderr=subprocess.STDOUT)
  png = None
  if rc != 0 or not os.path.isfile(shot):
    problems.append("chromium --screenshot %s, no screenshot (log %s)"
                    % ("hung" if hung else "exited %d" % rc, shot_log))
  else:
    with open(shot, "rb") as f:
      png = f.read()
  return dom, console, png, problems


# ------------------------------------------------------------------ PNG


def png_rows(data):
  """(width, height, channels, rows) of an 8-bit, non-interlaced greyscale, RGB or RGBA PNG
  (what Chromium writes); each row a bytes of width * channels. ValueError otherwise."""
  if data[:8] != b"\x89PNG\r\n\x1a\n":
    raise ValueError("not a PNG")
  pos, idat, head = 8, [], None
  while pos + 8 <= len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    pos += 12 + length
    if kind == b"IHDR":
      head = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
      idat.append(body)
    elif kind == b"IEND":
      break
  if head is None:
    raise ValueError("no IHDR chunk")
  width, height, depth, colour, _, _, interlace = head
  channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
  if depth != 8 or channels is None or interlace != 0:
    raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)"
                     % (depth, colour, interlace))
  raw = zlib.decompress(b"".join(idat))
  stride = width * channels
  rows, prev = [], bytearray(stride)
  for y in range(height):
    start = y * (stride + 1)
    ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
    if len(line) != stride:
      raise ValueError("truncated image data")
    for i in range(stride):
      left = line[i - channels] if i >= channels else 0
      up = prev[i]
      if ftype == 1:
        line[i] = (line[i] + left) & 0xFF
      elif ftype == 2:
        line[i] = (line[i] + up) & 0xFF
      elif ftype == 3:
        line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
      elif ftype == 4:
        ul = prev[i - channels] if i >= channels else 0
        p = left + up - ul
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
        line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 0xFF
      elif ftype != 0:
        raise ValueError("bad filter type %d" % ftype)
    rows.append(bytes(line))
    prev = line
  return width, height, channels, rows


def ink(data):
  """The share of a PNG's pixels that differ from its most common pixel (the background)."""
  width, height, channels, rows = png_rows(data)
  counts = {}
  for row in rows:
    for x in range(0, len(row), channels * 4):  # every 4th pixel: enough to count ink
      px = row[x:x + channels]
      counts[px] = counts.get(px, 0) + 1
  total = sum(counts.values())
  return 1.0 - max(counts.values()) / total if total else 0.0


# ------------------------------------------------------------------ the check

OUTSIDE = re.compile(r"""<link\b|<script[^>]*\bsrc\s*=|\b(?:src|href)\s*=\s*["'](?!#)""", re.I)


def check(page, workdir, min_svgs, chromium="chromium", screenshot_copy=None):
  """The problems of page (an empty list: it passed). min_svgs: the <svg> elements its DOM must
  hold at least; screenshot_copy: where to keep the screenshot."""
  os.makedirs(workdir, exist_ok=True)
  with open(page, errors="replace") as f:
    text = f.read()
  problems = ["not self-contained: %s" % m.group(0) for m in OUTSIDE.finditer(text)][:5]
  dom, console, png, failed = load(page, workdir, chromium=chromium)
  problems += failed
  problems += ["console: %s" % l.split("] ", 1)[-1] for l in console][:10]
  if dom and 'data-js="ok"' not in dom:
    problems.append("the page's script did not run to its end (no data-js=\"ok\" in the DOM)")
  svgs = len(re.findall(r"<svg\b", dom))
  if svgs < min_svgs:
    problems.append("%d <svg> elements in the DOM, expected at least %d" % (svgs, min_svgs))
  if png is not None:
    try:
      share = ink(png)
    except (ValueError, zlib.error) as e:
      problems.append("screenshot: %s" % e)
    else:
      if share < MIN_INK:
        problems.append("the screenshot is blank: %.2f%% of it differs from the background"
                        % (100 * share))
    if screenshot_copy:
      shutil.copyfile(os.path.join(workdir, "shot.png"), screenshot_copy)
  return problems
