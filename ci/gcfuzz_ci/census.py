"""The branch census of the collector: which sides of gc/'s branches a corpus takes, from
`llvm-cov export` of a coverage run (ci/campaign --coverage), per file and per function, and every
side never taken with its FILE:LINE:COLUMN and its condition.

A side that no program can take by design (an out-of-memory path of a structure the fuzz targets
never exhaust, a check of API misuse that the driver never commits) is listed once, with its
reason, in gc/unreachable.tsv; the census subtracts those and says how many. An entry is found by
its file, function, side and the condition's source text, not by its line, so it survives edits
around it; an entry that matches no branch any more is reported as stale, so the list cannot
silently outlive the code it excuses.
"""
import json
import os
import re

from . import paths

EXCLUSIONS = os.path.join("gc", "unreachable.tsv")
SCOPE = "gc/"


class CensusError(Exception):
  pass


def read_exclusions(path):
  """The entries of the exclusion list: (file, function, side, condition) -> reason. Lines are
  tab-separated: FILE, FUNCTION, SIDE (true or false), CONDITION (the branch's source text, as
  the census prints it), REASON; `#` starts a comment line."""
  entries = {}
  try:
    with open(path) as f:
      lines = f.read().splitlines()
  except OSError:
    return entries
  for n, line in enumerate(lines, 1):
    if not line.strip() or line.lstrip().startswith("#"):
      continue
    cols = line.split("\t")
    if len(cols) != 5 or cols[2] not in ("true", "false") or not cols[4].strip():
      raise CensusError("%s:%d: want FILE, FUNCTION, SIDE (true|false), CONDITION and a REASON, "
                        "tab-separated" % (path, n))
    key = (cols[0], cols[1], cols[2], cols[3])
    if key in entries:
      raise CensusError("%s:%d: listed twice: %s" % (path, n, " ".join(key)))
    entries[key] = cols[4].strip()
  return entries


def source_text(lines, ls, cs, le, ce):
  """The source between (ls, cs) and (le, ce), 1-based, the end column exclusive, on one line
  with runs of blanks made one."""
  if not lines or ls < 1 or le > len(lines):
    return ""
  if ls == le:
    text = lines[ls - 1][cs - 1:ce - 1]
  else:
    text = " ".join([lines[ls - 1][cs - 1:]] + lines[ls:le - 1] + [lines[le - 1][:ce - 1]])
  return re.sub(r"\s+", " ", text).strip()


def plain_name(name):
  """A static function's name in the export is `file.c:name`: the name alone."""
  return name.rsplit(":", 1)[-1]


def function_spans(functions, scope):
  """Per file: the functions defined there, (first line, last line, name), from their regions."""
  spans = {}
  for fn in functions:
    names = fn.get("filenames") or []
    regions = fn.get("regions") or []
    if not names or not regions:
      continue
    # A region is [ls, cs, le, ce, count, file id, expanded file id, kind]; the function's own
    # body is its regions in file 0.
    body = [r for r in regions if r[5] == 0]
    if not body:
      continue
    f = relative(names[0])
    if not f.startswith(scope):
      continue
    spans.setdefault(f, []).append((min(r[0] for r in body), max(r[2] for r in body),
                                    plain_name(fn["name"])))
  return spans


def relative(path):
  for prefix in ("/proc/self/cwd/", paths.ROOT.rstrip("/") + "/"):
    if path.startswith(prefix):
      return path[len(prefix):]
  return path


def function_at(spans, line):
  """The innermost function whose span holds `line`, or `?`."""
  best = None
  for first, last, name in spans:
    if first <= line <= last and (best is None or last - first < best[1] - best[0]):
      best = (first, last, name)
  return best[2] if best else "?"


def census(export, root, exclusions, scope=SCOPE):
  """The census from `llvm-cov export -format=text`'s JSON: a dict with the totals, per file, per
  function, the sides never taken, the sides excused and the stale exclusions."""
  data = export.get("data") or []
  if not data:
    raise CensusError("llvm-cov export holds no data")
  spans = function_spans(data[0].get("functions") or [], scope)
  # A header's inline functions are compiled into many files: one branch per source span, its
  # counts summed over the copies.
  branches = {}
  for fobj in data[0].get("files") or []:
    f = relative(fobj.get("filename", ""))
    if not f.startswith(scope):
      continue
    for b in fobj.get("branches") or []:
      ls, cs, le, ce, true_count, false_count = b[:6]
      key = (f, ls, cs, le, ce)
      t0, f0 = branches.get(key, (0, 0))
      branches[key] = (t0 + true_count, f0 + false_count)
  sources = {}
  files, functions, untaken, excused = {}, {}, [], []
  used = set()
  for (f, ls, cs, le, ce), (true_count, false_count) in sorted(branches.items()):
    if f not in sources:
      try:
        with open(os.path.join(root, f)) as src:
          sources[f] = src.read().splitlines()
      except OSError:
        sources[f] = []
    text = source_text(sources[f], ls, cs, le, ce)
    fn = function_at(spans.get(f, []), ls)
    for side, count in (("true", true_count), ("false", false_count)):
      key = (f, fn, side, text)
      entry = {"file": f, "line": ls, "column": cs, "function": fn, "side": side,
               "condition": text}
      if count == 0 and key in exclusions:
        used.add(key)
        excused.append(dict(entry, reason=exclusions[key]))
        continue
      for table, name in ((files, f), (functions, (f, fn))):
        row = table.setdefault(name, [0, 0])
        row[0] += count > 0
        row[1] += 1
      if count == 0:
        untaken.append(entry)
  taken = sum(r[0] for r in files.values())
  total = sum(r[1] for r in files.values())
  stale = [{"file": k[0], "function": k[1], "side": k[2], "condition": k[3]}
           for k in sorted(set(exclusions) - used)]
  return {
      "scope": scope,
      "taken": taken,
      "sides": total,
      "percent": round(100.0 * taken / total, 1) if total else 0.0,
      "excused": excused,
      "stale_exclusions": stale,
      "files": [{"file": f, "taken": r[0], "sides": r[1]} for f, r in sorted(files.items())],
      "functions": [{"file": k[0], "function": k[1], "taken": r[0], "sides": r[1]}
                    for k, r in sorted(functions.items())],
      "untaken": untaken,
  }


def run(llvm_cov_export_json, root=None, exclusions_path=None):
  root = root or paths.ROOT
  exclusions = read_exclusions(exclusions_path or os.path.join(root, EXCLUSIONS))
  return census(json.loads(llvm_cov_export_json), root, exclusions)


def pct(a, b):
  return 100.0 * a / b if b else 0.0


def text_lines(c, what):
  """The census as the terminal shows it."""
  out = ["==== branch census of %s (%s): %d of %d branch sides taken (%.1f %%)" % (
      c["scope"], what, c["taken"], c["sides"], c["percent"])]
  out.append("  %d side(s) unreachable by design subtracted (listed with their reasons in %s)" %
             (len(c["excused"]), EXCLUSIONS))
  for s in c["stale_exclusions"]:
    out.append("  warning: stale entry in %s (no such branch side any more): %s %s %s `%s`" % (
        EXCLUSIONS, s["file"], s["function"], s["side"], s["condition"]))
  out.append("  per file (lowest first):")
  for r in sorted(c["files"], key=lambda r: (pct(r["taken"], r["sides"]), r["file"])):
    out.append("    %-28s %5d/%-5d %6.1f%%" % (r["file"], r["taken"], r["sides"],
                                             pct(r["taken"], r["sides"])))
  missing = [r for r in c["functions"] if r["taken"] < r["sides"]]
  out.append("  per function with a side never taken (%d of %d functions with branches):" % (
      len(missing), len(c["functions"])))
  for r in sorted(missing, key=lambda r: (r["file"], r["function"])):
    out.append("    %-28s %-36s %4d/%-4d" % (r["file"], r["function"], r["taken"], r["sides"]))
  out.append("  never taken (%d):" % len(c["untaken"]))
  for u in c["untaken"]:
    out.append("    %s:%d:%d %-5s `%s`  (%s)" % (u["file"], u["line"], u["column"], u["side"],
                                                u["condition"], u["function"]))
  return out
