"""ci/bench: the benchmarks (binary-trees, GCBench, cache, tree-churn) on gcfuzz (both marking
modes), bdwgc (plain and incremental) and malloc/free, as ratios, on one thread and on two; then
the programs that measure the collector itself (the verification passes' cost, the parallel mark,
the barrier).

Adding to it: a benchmark is a row of BENCHES; a backend is an entry of BACKENDS; a ratio an
entry of RATIOS. A program that prints its own rows (`ROW {"bench": ..., "size": ...,
"backend": ..., "wall_s": ..., "peak_mib": ...}` on stdout, a summary on stderr) is a row of
ROW_PROGRAMS.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from . import bazel, cli, jsonout, paths, procs, report_html, tools

PROG = "ci/bench"

USAGE = """\
usage: ci/bench [--quick] [--rounds N] [--only BENCH] [--against REV] [--help]
       ci/bench --report [DIR]

Runs the benchmarks (binary-trees, GCBench, cache: a steady cache under churn, tree-churn: a
long-lived tree whose subtrees are replaced) on gcfuzz, bdwgc (Debian's libgc, default settings)
and glibc malloc/free, each on one thread and on two (gcfuzz-2: two domains; bdwgc-2: two
registered threads; malloc-2), alternating the backends run by run, and prints the median wall
time, peak RSS and collections (gcs: gcfuzz's major cycles, bdwgc's GC_get_gc_no(), 0 on malloc)
of each, with the ratios gcfuzz/bdwgc, gcfuzz/malloc, gcfuzz-2/bdwgc-2 and gcfuzz-2/malloc-2
(below 1: gcfuzz is faster or smaller). gcfuzz runs in both marking modes: `gcfuzz` is the
collector's default mode, the other is named (gcfuzz-incremental while the default is stw,
gcfuzz-stw once it is incremental; -2 after it on two threads); bdwgc-incr is bdwgc with
GC_enable_incremental. gcfuzz rows add pause_max_ms (each run's longest stop of the world),
pause_p99_ms (the p99 of its last 256 stops) and slice_max_ms (its longest incremental mark
slice, which stalls its mutator without a stop), medians over the rounds; the ratios include
incremental/stw (wall, peak, pauses), incremental/bdwgc and bdwgc-incr/bdwgc. Then the programs
that print their own rows: verify (the verification passes, satb included, against one full
mark, at 10^4, 10^5, 10^6 live blocks), mark-parallel (one full mark of 10^6 blocks with 1 marker and with 2)
and barrier (a pointer store outside marking, gc_store against a plain store, gc_store/plain)
and stops (the longest first and last stop of a cycle at 16, 64 and 256 MiB live, both modes).

  --quick       small sizes (binary-trees 16, GCBench stretch depth 16, cache 2^16 slots,
                tree-churn depth 16, verify 10^4 and 10^5
                with 3 runs, mark-parallel 10^5 blocks with 5 runs, barrier 10^3 and 10^4
                blocks with 3 runs, stops at 16 and 64 MiB)
  --rounds N    runs of each benchmark on each backend (default 3); the median is reported
                (the ROW programs take their own medians and ignore it)
  --only BENCH  one benchmark: binary-trees, gcbench, cache, tree-churn, weak-memo, fragment,
                verify, mark-parallel, barrier, stops or compact
  --against REV also build revision REV (any git revision: a commit, a branch, HEAD~3) in a
                temporary worktree and run its collector beside this tree's, as backends
                gcfuzz@REV and gcfuzz-2@REV in the same alternation, with the ratios
                gcfuzz/gcfuzz@REV and gcfuzz-2/gcfuzz-2@REV (below 1: this tree is faster or
                smaller). Judges a collector change on speed as ci/mutants judges it on the
                zoo. The ROW programs run for this tree only.
  --report [DIR]
                no benchmark: (re)write DIR/report.html (DIR: bench/out) from DIR/results.json
                and DIR/pauses.json, what a run left there (a run writes it at its end); a
                relative DIR is from the tree's root
  --help        this text

Sizes by default: binary-trees 20, GCBench 18 (the published size), cache 19 (2^19 slots),
tree-churn 20 (the tree's depth). binary-trees, cache, tree-churn and weak-memo print the same lines on
every backend (counts and checksums, no timings): a run whose lines differ from the first run's
of that benchmark fails.
weak-memo (a weak-keyed memo table under churn: ephemerons, disappearing links, explicit frees):
2^15 buckets and live keys, 2^12 with --quick; one thread only, so no -2 rows; `--only weak-memo`.
fragment (a long-lived set of 2^20 blocks of 2 to 64 words, 2^14 with --quick, left sparse by
random deaths, explicit full collections): one thread only, and one more backend,
gcfuzz-compact (GCFUZZ_PARAMS gains compact=10: those collections compact); its rows add the
heap's final size from the BENCH line: final_mapped_mib, live_mib (the backend's own figure),
data_mib (the program's blocks) and the ratios mapped_live, mapped_data (null where unknown).
compact (a ROW program): one gc_compact's stop against one full mark at 10^4, 10^5 and 10^6 live
blocks with every other pool slot free (compact/mark; 10^4 and 10^5 with --quick).
GCFUZZ_PARAMS in the environment reaches the gcfuzz runs (e.g. GCFUZZ_PARAMS=percent=200; a
named mode's runs get marking=MODE after it, and a marking= in it changes what `gcfuzz` means)
and mark-parallel (collection stays off there, e.g. GCFUZZ_PARAMS=markstack=2M); verify and
barrier ignore it.
Output: bench/out/results.json (medians), bench/out/runs.tsv (every run), bench/out/logs/,
bench/out/pauses.json (the pause history of every gcfuzz run: its last 256 stops of the world,
its mode, stop count and longest stop, which the programs print when BENCH_PAUSES is set, as
ci/bench does) and bench/out/report.html:
one self-contained page (inline SVG, open it offline) with per benchmark the medians, the ratios
as bars (wall time, peak RSS, longest stop and collections, a dashed line at 1) and the
pause-time distribution of each gcfuzz backend (a histogram, p50/p90/p99/max).
Exit status: 0 when every build and run succeeded and every benchmark's checks passed (and, for
binary-trees, cache, tree-churn and weak-memo, every run printed the same lines).
"""

# name: (Bazel target stem, size, size with --quick, its stdout is the same on every backend)
BENCHES = {"binary-trees": ("binary_trees", 20, 16, True), "gcbench": ("gcbench", 18, 16, False),
           "cache": ("cache_churn", 19, 16, True), "tree-churn": ("tree_churn", 20, 16, True),
           "weak-memo": ("weak_memo", 15, 12, True), "fragment": ("fragment", 20, 14, True)}
# The order the backends alternate in. A `-2` backend is the same collector with the benchmark
# split between two threads (bench/README.md, "Two threads"); its programs are the `_2` targets.
# gcfuzz's marking modes: `gcfuzz` is the collector's default mode (whichever it is: the run
# asks the program, see default_marking), and the other mode is named: `gcfuzz-incremental`
# while the default is stw, `gcfuzz-stw` once it is incremental; the explicit backend of the
# default mode is dropped. They are the gcfuzz programs run with GCFUZZ_PARAMS ending in
# marking=MODE. bdwgc-incr is bdwgc after GC_enable_incremental (the `_bdwgc_incr` targets).
BACKENDS = ["gcfuzz", "gcfuzz-stw", "gcfuzz-incremental", "gcfuzz-compact", "bdwgc", "bdwgc-incr",
            "malloc",
            "gcfuzz-2", "gcfuzz-stw-2", "gcfuzz-incremental-2", "bdwgc-2", "bdwgc-incr-2",
            "malloc-2"]
MARKING_MODES = ("stw", "incremental")
# gcfuzz-compact: the gcfuzz program with compact=COMPACT_PERCENT appended to GCFUZZ_PARAMS (an
# explicit full collection compacts when more than that % of the pools' slots are free), only
# for the benchmarks that make explicit full collections (COMPACT_BENCHES): on the others it
# would be the gcfuzz rows again.
COMPACT_PERCENT = 10
COMPACT_BENCHES = {"fragment"}
# numerator/denominator, both backends of one row group (a pair with a missing side is skipped,
# so each applies only where it makes sense: verify's backends are passes, mark-parallel's are
# marker counts, barrier's are the two stores; of the two forms of incremental/stw, only the one
# that matches the default mode has both sides).
RATIOS = ["gcfuzz/bdwgc", "gcfuzz/malloc", "gcfuzz-2/bdwgc-2", "gcfuzz-2/malloc-2",
          "gcfuzz-incremental/gcfuzz", "gcfuzz/gcfuzz-stw",
          "gcfuzz-incremental-2/gcfuzz-2", "gcfuzz-2/gcfuzz-stw-2",
          "gcfuzz-incremental/bdwgc", "gcfuzz-incremental/bdwgc-incr", "gcfuzz/bdwgc-incr",
          "gcfuzz-incremental-2/bdwgc-2", "gcfuzz-incremental-2/bdwgc-incr-2",
          "gcfuzz-2/bdwgc-incr-2", "bdwgc-incr/bdwgc", "bdwgc-incr-2/bdwgc-2",
          "gcfuzz-compact/gcfuzz", "gcfuzz-compact/bdwgc", "gcfuzz-compact/malloc",
          "checkmark/mark", "reach/mark", "swept/mark", "satb/mark", "markers-1/markers-2",
          "gc_store/plain", "compact/mark", "mark-after/mark"]
# name: (Bazel target, arguments, arguments with --quick, title of its summary)
ROW_PROGRAMS = {
    "verify": ("verify_cost", "5 10000 100000 1000000", "3 10000 100000",
               "verify: each pass's time / one full mark's, and its growth with the heap"),
    "mark-parallel": ("mark_parallel", "9 1000000", "5 100000",
                      "mark-parallel: one full mark, 1 marker vs 2 (speedup = markers-1 / "
                      "markers-2)"),
    "barrier": ("barrier_cost", "7 20000000 1000 10000 1000000", "3 5000000 1000 10000",
                "barrier: a pointer store outside marking, gc_store vs a plain store, into "
                "fields of N blocks"),
    "stops": ("stop_scaling", "16 64 256", "16 64",
              "stops: the longest first and last stop of a cycle against the live heap (MiB), "
              "both marking modes"),
    "compact": ("compact_cost", "3 10000 100000 1000000", "3 10000 100000",
                "compact: one compaction's stop against one full mark of the same heap (every "
                "other slot free), and a mark of the compacted heap"),
}
# weak-memo (bench/weak_memo.c): a weak-keyed memo table under churn, ephemerons on gcfuzz,
# disappearing links on bdwgc, explicit frees on malloc. One thread only (its `_2` programs exit
# with a usage error), so its rows have no -2 backends.
# fragment (bench/fragment.c) likewise.
ONE_THREAD_BENCHES = {"weak-memo", "fragment"}
# The heap's final size, from the BENCH line of a benchmark that records it (fragment): the
# backend's mapped bytes, its live figure and the program's own data, in MiB.
HEAP_FIELDS = ("final_mapped_mib", "live_mib", "data_mib")
OUT = os.path.join("bench", "out")
# A benchmark run longer than this is killed and counts as a failure (a collector that hangs).
RUN_TIMEOUT_S = 600


def marking_of(backend):
  """The marking mode a gcfuzz backend names (`gcfuzz-stw-2`: stw), or None."""
  parts = backend.split("-")
  return parts[1] if parts[0] == "gcfuzz" and len(parts) > 1 and parts[1] in MARKING_MODES \
      else None


def compacting(backend):
  """Whether a backend is gcfuzz-compact (the gcfuzz program with compact=N)."""
  return backend.split("@")[0].split("-")[:2] == ["gcfuzz", "compact"]


def variant(backend):
  """The Bazel target suffix of a backend: the marking mode and compaction are parameters, not
  programs."""
  mode = marking_of(backend)
  if mode is not None:
    backend = backend.replace("-" + mode, "", 1)
  if compacting(backend):
    backend = backend.replace("-compact", "", 1)
  return backend.replace("-", "_")


def runs_on(bench, backend):
  """Whether a benchmark runs on a backend: not a one-thread benchmark on a -2 backend, and
  gcfuzz-compact only for the benchmarks that collect explicitly."""
  if compacting(backend) and bench not in COMPACT_BENCHES:
    return False
  return bench not in ONE_THREAD_BENCHES or not variant(backend.split("@")[0]).endswith("_2")


def target(bench, backend):
  return "//bench:%s_%s" % (BENCHES[bench][0], variant(backend))


def backends_for(default):
  """BACKENDS without the explicit backends of the default marking mode (the `gcfuzz` rows
  are that mode); with no known default (a collector without modes), without any explicit
  one."""
  return [be for be in BACKENDS
          if marking_of(be) is None or (default is not None and marking_of(be) != default)]


def params_for(backend, environ):
  """GCFUZZ_PARAMS for a run: the environment's, with marking=MODE appended for an explicit
  mode, compact=COMPACT_PERCENT for gcfuzz-compact (unless the environment's name compact
  itself: a key given twice is an error)."""
  params = environ.get("GCFUZZ_PARAMS", "")
  mode = marking_of(backend)
  if mode is not None:
    params = (params + "," if params else "") + "marking=" + mode
  if compacting(backend) and not re.search(r"(^|,)compact=", params):
    params = (params + "," if params else "") + "compact=%d" % COMPACT_PERCENT
  return params


def parse_args(argv):
  p = cli.Parser(PROG, USAGE)
  p.add_argument("--quick", action="store_true")
  p.add_argument("--rounds", default="3")
  p.add_argument("--only")
  p.add_argument("--against")
  p.add_argument("--report", nargs="?", const=OUT, metavar="DIR")
  a = p.parse(argv)
  a.rounds = cli.decimal(a.rounds, "--rounds", minimum=1)
  a.benches, a.rows = list(BENCHES), list(ROW_PROGRAMS)
  if a.only is not None:
    only = a.only.replace("_", "-")
    if only not in BENCHES and only not in ROW_PROGRAMS:
      raise cli.UsageError("unknown benchmark '%s' (known: %s)"
                           % (a.only, " ".join(list(BENCHES) + list(ROW_PROGRAMS))))
    a.benches = [b for b in BENCHES if b == only]
    a.rows = [r for r in ROW_PROGRAMS if r == only]
  if a.against is not None and subprocess.run(
      ["git", "-C", paths.ROOT, "rev-parse", "--verify", "--quiet", a.against + "^{commit}"],
      capture_output=True).returncode != 0:
    raise cli.UsageError("--against %s: not a revision of this repository" % a.against)
  return a


def bench_fields(text):
  """The fields of the last `BENCH wall_s=W peak_mib=P gcs=N` line a benchmark prints on stderr
  (its own fixed format), as strings; {} without one."""
  fields = {}
  for line in text.splitlines():
    if line.startswith("BENCH "):
      fields = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
  return fields


def bench_line(text):
  """(wall_s, peak_mib) of the last BENCH line."""
  fields = bench_fields(text)
  return to_float(fields.get("wall_s")), to_float(fields.get("peak_mib"))


def bench_heap(text):
  """{final_mapped_mib, live_mib, data_mib} of the last BENCH line, each a float or None (the
  backend does not know it, or the benchmark records no heap)."""
  fields = bench_fields(text)
  return {k: to_float(fields.get(k)) for k in HEAP_FIELDS}


def bench_collections(text):
  """gcs= of the last BENCH line (the collections the run's heap ran), or None (a program from
  before it printed one)."""
  try:
    return int(bench_fields(text)["gcs"])
  except (KeyError, ValueError):
    return None


def to_float(s):
  try:
    return float(s)
  except (TypeError, ValueError):
    return None


def row_of(line):
  """A result row from a `ROW {json}` line, or None if malformed. Fields beyond the five are
  kept when they are numbers (barrier's ns_per_store)."""
  try:
    r = json.loads(line[len("ROW "):])
  except ValueError:
    return None
  if not isinstance(r, dict) or any(r.get(k) in (None, "") for k in ("bench", "size", "backend",
                                                                      "wall_s")):
    return None
  row = {"bench": str(r["bench"]), "size": str(r["size"]), "backend": str(r["backend"]),
         "wall_s": r["wall_s"], "peak_mib": r.get("peak_mib")}
  for k, v in r.items():
    if k not in row and isinstance(v, (int, float)) and not isinstance(v, bool):
      row[k] = v
  return row


def pauses_of(text):
  """(cycles, [pause ns]) of the last `PAUSES cycles=N ... ns=P1,P2,...` line a gcfuzz benchmark
  prints on stderr with BENCH_PAUSES set (bench/backend_gcfuzz.h), or None."""
  found = pause_fields(text)
  return None if found is None else (found["cycles"], found["pauses_ns"])


def pause_fields(text):
  """The last PAUSES line as a dict: cycles, pauses_ns (the ring, oldest first), and when the
  program prints them marking (its mode), pauses (every stop of the run), max_ns (the longest
  stop of the run, which the ring may no longer hold) and max_slice_ns (the longest incremental
  mark slice: no stop, but its mutator waits); None without a well-formed line."""
  found = None
  for line in text.splitlines():
    if line.startswith("PAUSES "):
      fields = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
      try:
        found = {"cycles": int(fields.get("cycles", "0")),
                 "pauses_ns": [int(p) for p in fields.get("ns", "").split(",") if p]}
        if "marking" in fields:
          found["marking"] = fields["marking"]
        for k in ("pauses", "max_ns", "max_slice_ns"):
          if k in fields:
            found[k] = int(fields[k])
      except ValueError:
        found = None
  return found


TRACE_LINE = re.compile(r"^gc (\d+) @([0-9.]+)s ")
TRACE_FIELDS = {
    "stops": re.compile(r"start ([0-9.]+) ms, end ([0-9.]+) ms"),
    "mark": re.compile(r"mark ([0-9.]+) ms, pause ([0-9.]+) ms"),
    "heap": re.compile(r"heap (\d+)->(\d+) KiB"),
    "live": re.compile(r"live (\d+) KiB"),
    "pace": re.compile(r"goal (\d+) KiB, trigger (\d+) KiB, at end (\d+) KiB"),
    "at_end": re.compile(r"at end (\d+) KiB"),
}


def trace_cycles(text):
  """The cycles of a gcfuzz run's trace lines (GCFUZZ_PARAMS trace=1, gc/README.md "The trace
  line"), oldest first, each {"t": seconds when the world ran again after its last stop, "mark_ms",
  "start_ms" (the first stop; the whole cycle's in stw), "end_ms" (the last stop, incremental;
  None in stw), "heap_kib": [pools and large blocks at mark start, at mark end], "live_kib",
  "goal_kib", "trigger_kib", "end_kib" (blocks allocated and not freed at mark end)}; a field a
  line lacks (an older collector's trace) is None."""
  cycles = []
  for line in text.splitlines():
    m = TRACE_LINE.match(line)
    if not m:
      continue
    c = {"t": float(m.group(2)), "mark_ms": None, "start_ms": None, "end_ms": None,
         "heap_kib": None, "live_kib": None, "goal_kib": None, "trigger_kib": None,
         "end_kib": None}
    f = {k: r.search(line) for k, r in TRACE_FIELDS.items()}
    if f["mark"]:
      c["mark_ms"] = float(f["mark"].group(1))
      c["start_ms"] = float(f["mark"].group(2))
    if f["stops"]:
      c["start_ms"], c["end_ms"] = float(f["stops"].group(1)), float(f["stops"].group(2))
    if f["heap"]:
      c["heap_kib"] = [int(f["heap"].group(1)), int(f["heap"].group(2))]
    if f["live"]:
      c["live_kib"] = int(f["live"].group(1))
    if f["pace"]:
      c["goal_kib"], c["trigger_kib"] = int(f["pace"].group(1)), int(f["pace"].group(2))
    if f["at_end"]:
      c["end_kib"] = int(f["at_end"].group(1))
    cycles.append(c)
  return cycles


def traced(params):
  """GCFUZZ_PARAMS with trace=1 added, unless it names trace itself (a key given twice is an
  error): the report draws each run's cycles from its trace lines."""
  if re.search(r"(^|,)trace=", params):
    return params
  return (params + "," if params else "") + "trace=1"


def pause_figures(found):
  """(max ms, p99 ms) of one run: the max from max_ns (the whole run) where the program prints
  it, else the ring's; p99 over the ring (the run's last 256 stops). None, None without
  pauses."""
  if found is None:
    return None, None
  ring = sorted(found["pauses_ns"])
  top = found.get("max_ns", ring[-1] if ring else None)
  if top is None or (not ring and top == 0):
    return None, None
  p99 = report_html.percentile(ring, 99) if ring else None
  return top / 1e6, (p99 / 1e6 if p99 is not None else None)


def report_ratios(rows):
  """The ratios the page draws: RATIOS, and gcfuzz/gcfuzz@REV for each --against backend."""
  against = sorted({r["backend"] for r in rows if "@" in r["backend"]})
  return list(RATIOS) + ["%s/%s" % (b.split("@")[0], b) for b in against]


def write_report(outdir):
  try:
    rows = report_html.load_json(os.path.join(outdir, "results.json"), [])
    path = report_html.write_bench(outdir, report_ratios(rows if isinstance(rows, list) else []))
  except (OSError, ValueError) as e:
    print("%s: warning: report.html not written: %s" % (PROG, e), file=sys.stderr)
    return False
  print("report: %s" % path)
  return True


def ratio(a, b):
  return None if a is None or b is None or b == 0 else a / b


PAUSE_FIELDS = ("pause_max_ms", "pause_p99_ms", "slice_max_ms")


HEAP_COLUMNS = (("final_mapped_mib", "mapped_mib"), ("live_mib", "live_mib"),
                ("mapped_live", "map/live"), ("data_mib", "data_mib"), ("mapped_data", "map/data"))


def table(rows, ratios):
  out = []
  # The heap's final size (fragment): five more columns, only when a row has them.
  heap = any("final_mapped_mib" in r for r in rows)
  form = "%-14s %-7s %-33s %9s %10s %12s %12s %12s %7s" + (" %10s %9s %9s %9s %9s" if heap else "")
  line = lambda *c: out.append((form % c[:form.count("%")]).rstrip())
  line("bench", "size", "backend", "wall_s", "peak_mib", "pause_max_ms", "pause_p99_ms",
       "slice_max_ms", "gcs", *[name for _, name in HEAP_COLUMNS])
  line("-" * 14, "-" * 7, "-" * 33, "-" * 9, "-" * 10, "-" * 12, "-" * 12, "-" * 12, "-" * 7,
       "-" * 10, *["-" * 9] * 4)
  for i, r in enumerate(rows):
    # A median as the benchmarks' table has it (three decimals for seconds, one for MiB); a
    # ROW program's figure as it printed it. Pause columns only for the rows that have them,
    # the collections (gcs) and the heap's final size likewise.
    median = r.get("_median", False)
    pauses = [fmt(r[k], "%.3f") if k in r else "" for k in PAUSE_FIELDS]
    heaps = [fmt(r[k], "%.2f") if k in r else "" for k, _ in HEAP_COLUMNS]
    line(r["bench"], r["size"], r["backend"], fmt(r["wall_s"], "%.3f" if median else None),
         fmt(r["peak_mib"], "%.1f" if median else None), *pauses,
         fmt(r["gcs"], "%g") if "gcs" in r else "", *heaps)
    nxt = rows[i + 1] if i + 1 < len(rows) else None
    if nxt and (nxt["bench"], nxt["size"]) == (r["bench"], r["size"]):
      continue
    group = {x["backend"]: x for x in rows if (x["bench"], x["size"]) == (r["bench"], r["size"])}
    for pair in ratios:
      num, den = pair.split("/", 1)
      if num not in group or den not in group:
        continue
      rw = ratio(group[num]["wall_s"], group[den]["wall_s"])
      rp = ratio(group[num]["peak_mib"], group[den]["peak_mib"])
      rpause = [ratio(group[num].get(k), group[den].get(k)) for k in PAUSE_FIELDS]
      rgcs = ratio(group[num].get("gcs"), group[den].get("gcs"))
      # The final mapped heap's ratio, in its column.
      rmap = ratio(group[num].get("final_mapped_mib"), group[den].get("final_mapped_mib"))
      if rw is None and rp is None:
        continue
      line(r["bench"], r["size"], pair, "%.2fx" % rw if rw is not None else "",
           "%.2fx" % rp if rp is not None else "",
           *["%.2fx" % x if x is not None else "" for x in rpause],
           "%.2fx" % rgcs if rgcs is not None else "",
           "%.2fx" % rmap if rmap is not None else "", "", "", "", "")
  return out


def heap_figures(heaps):
  """The medians of a backend's runs' heap figures (bench_heap), and the medians of their
  ratios: mapped_live (final mapped / the backend's live figure) and mapped_data (final mapped /
  the program's own data, the same on every backend); None where a run lacks a figure."""
  out = {k: median_or_none([h[k] for h in heaps], 2) for k in HEAP_FIELDS}
  for name, den in (("mapped_live", "live_mib"), ("mapped_data", "data_mib")):
    out[name] = median_or_none([ratio(h["final_mapped_mib"], h[den]) for h in heaps], 2)
  return out


def median_or_none(values, digits):
  values = [v for v in values if v is not None]
  return round(statistics.median(values), digits) if values else None


def default_marking(program, log):
  """The gcfuzz collector's marking mode under this environment's GCFUZZ_PARAMS (its default
  unless they set one): the smallest run of a gcfuzz benchmark program says it on its PAUSES
  line. None for a collector that prints no mode (before marking modes) or when it fails."""
  with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
    rc, _ = procs.run([program, "0"], stdout=out, stderr=err,
                      env=dict(os.environ, BENCH_PAUSES="1"))
  with open(log + ".err", errors="replace") as f:
    found = pause_fields(f.read())
  if rc != 0 or found is None or found.get("marking") not in MARKING_MODES:
    return None
  return found["marking"]


def fmt(v, form):
  if v is None:
    return "-"
  return form % v if form else str(v)


class Bench:
  def __init__(self, a):
    self.a = a
    self.logs = os.path.join(OUT, "logs")
    self.failures = 0
    self.rows = []
    self.ratios = list(RATIOS)
    self.programs = {}  # backend: {bench: program path}
    self.pauses = []    # pauses.json's runs
    self.first_output = {}  # bench: (log, stdout) of its first run (BENCHES' same-output ones)
    self.default_marking = None

  def size(self, bench):
    return BENCHES[bench][2] if self.a.quick else BENCHES[bench][1]

  def build(self):
    labels = sorted({target(b, be) for be in BACKENDS for b in self.a.benches}) + \
        ["//bench:" + ROW_PROGRAMS[p][0] for p in self.a.rows]
    print("%s: bazel build -c opt %s" % (PROG, " ".join(labels)), flush=True)
    flags = ["-c", "opt"] + bazel.cache_opts()
    available, rows = [], []
    if bazel.run(["build"] + flags + labels, os.path.join(self.logs, "build.log"),
                 cwd=paths.ROOT) == 0:
      available = list(BACKENDS) if self.a.benches else []
      rows = list(self.a.rows)
    else:
      # Find out which backends and programs build, so the others can still be measured.
      # A marking mode's backend builds when its program does (one build per program).
      built = {}
      for name, labels in ([(be, [target(b, be) for b in self.a.benches]) for be in BACKENDS
                            if self.a.benches] +
                           [(p, ["//bench:" + ROW_PROGRAMS[p][0]]) for p in self.a.rows]):
        if name in BACKENDS and variant(name) in built:
          if built[variant(name)]:
            available.append(name)
          continue
        log = os.path.join(self.logs, "build-%s.log" % name)
        ok = bazel.run(["build"] + flags + labels, log, cwd=paths.ROOT) == 0
        if name in BACKENDS:
          built[variant(name)] = ok
        if ok:
          (rows if name in ROW_PROGRAMS else available).append(name)
          continue
        print("%s: %s does not build, skipped (%s):" % (PROG, name, log), file=sys.stderr)
        with open(log, errors="replace") as f:
          errs = [l for l in f.read().splitlines() if "ERROR" in l or "error:" in l][:5]
        print("\n".join("  " + e for e in errs), file=sys.stderr)
        self.failures += 1
    self.bin_dir = bazel.bazel_bin(flags, cwd=paths.ROOT)
    for be in available:
      self.programs[be] = {b: os.path.join(self.bin_dir, "bench", target(b, be).split(":")[1])
                           for b in self.a.benches}
    if "gcfuzz" in available:
      self.default_marking = default_marking(self.programs["gcfuzz"][self.a.benches[0]],
                                             os.path.join(self.logs, "marking-probe"))
      print("%s: gcfuzz's default marking mode: %s" % (PROG, self.default_marking or
                                                       "none (a collector without modes)"))
    keep = backends_for(self.default_marking)
    available = [be for be in available if be in keep]
    return available, rows

  def build_against(self, available):
    """Its gcfuzz and gcfuzz-2 programs, built in a temporary worktree (its own Bazel output
    base), copied out at once; then the worktree and its output base are removed."""
    rev = subprocess.run(["git", "-C", paths.ROOT, "rev-parse", self.a.against + "^{commit}"],
                         capture_output=True, text=True).stdout.strip()
    short = subprocess.run(["git", "-C", paths.ROOT, "rev-parse", "--short", rev],
                           capture_output=True, text=True).stdout.strip()
    wt = tempfile.mkdtemp(prefix="gcfuzz-bench-against.", dir="/tmp")
    tree = os.path.join(wt, "tree")
    against_bin = os.path.join(OUT, "against")
    shutil.rmtree(against_bin, ignore_errors=True)
    os.makedirs(against_bin)
    log = os.path.join(self.logs, "build-against.log")
    print("%s: building %s (%s) in %s" % (PROG, self.a.against, short, wt), flush=True)
    if subprocess.run(["git", "-C", paths.ROOT, "worktree", "add", "--detach", "-q", tree,
                       rev]).returncode != 0:
      raise SystemExit(2)
    try:
      for be in ("gcfuzz", "gcfuzz-2"):
        progs, ok = {}, True
        for b in self.a.benches:
          t = target(b, be)
          name = t.split(":")[1]
          if bazel.run(["build", "-c", "opt", t], log, cwd=tree, append=True) != 0:
            ok = False
            continue
          src = os.path.join(bazel.bazel_bin(["-c", "opt"], cwd=tree), "bench", name)
          progs[b] = os.path.join(against_bin, name)
          shutil.copyfile(src, progs[b])
          os.chmod(progs[b], 0o755)
        if ok:
          self.programs["%s@%s" % (be, short)] = progs
          available.append("%s@%s" % (be, short))
          self.ratios.append("%s/%s@%s" % (be, be, short))
        else:
          print("%s: %s does not build at %s, no %s@%s rows (%s)" % (PROG, be, short, be, short,
                                                                     log), file=sys.stderr)
    finally:
      subprocess.run(["bazel", "clean", "--expunge"], cwd=tree, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
      subprocess.run(["git", "-C", paths.ROOT, "worktree", "remove", "--force", tree])
      shutil.rmtree(wt, ignore_errors=True)

  def run_benches(self, available, runs_tsv):
    samples = {}
    total = sum(runs_on(b, be) for b in self.a.benches for be in available) * self.a.rounds
    n, width = 0, len(str(total))
    for bench in self.a.benches:
      sz = self.size(bench)
      for rnd in range(1, self.a.rounds + 1):
        for be in available:
          if not runs_on(bench, be):
            continue
          n += 1
          log = os.path.join(self.logs, "%s-%s-%s-r%d" % (bench, be, sz, rnd))
          env = dict(os.environ, BENCH_PAUSES="1")
          if marking_of(be) or compacting(be):
            env["GCFUZZ_PARAMS"] = params_for(be, os.environ)
          if be.startswith("gcfuzz"):
            env["GCFUZZ_PARAMS"] = traced(env.get("GCFUZZ_PARAMS", ""))
          with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
            rc, timed_out = procs.run([self.programs[be][bench], str(sz)], stdout=out,
                                      stderr=err, env=env, timeout_s=RUN_TIMEOUT_S)
          with open(log + ".err", errors="replace") as f:
            err_text = f.read()
          wall, peak = bench_line(err_text)
          gcs = bench_collections(err_text)
          heap = bench_heap(err_text)
          found = pause_fields(err_text)
          if found is not None:
            found["trace"] = trace_cycles(err_text)
            self.pauses.append(dict({"bench": bench, "size": str(sz), "backend": be,
                                     "round": rnd}, **found))
          runs_tsv.write("%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\n" % (
              bench, sz, be, rnd, wall or "", peak or "", rc, "" if gcs is None else gcs))
          head = "[%*d/%d] %-13s %-3s %-20s round %d/%d" % (width, n, total, bench, sz, be, rnd,
                                                           self.a.rounds)
          if rc != 0 or wall is None:
            why = "timed out after %d s" % RUN_TIMEOUT_S if timed_out else "exit %d" % rc
            print("%s  FAILED (%s, see %s.err)" % (head, why, log), file=sys.stderr)
            print("\n".join("    " + l for l in err_text.splitlines()[-5:]), file=sys.stderr)
            self.failures += 1
            continue
          if BENCHES[bench][3] and not self.same_output(bench, log + ".out"):
            print("%s  FAILED (its lines differ from %s.out, the first run's: see %s.out)"
                  % (head, self.first_output[bench][0], log), file=sys.stderr)
            self.failures += 1
            continue
          print("%s  %8.3f s  %8.1f MiB  %6s gcs" % (head, wall, peak or 0,
                                                     "-" if gcs is None else gcs), flush=True)
          samples.setdefault((bench, be), ([], [], [], [], set(), [], [], []))
          if any(v is not None for v in heap.values()):
            samples[(bench, be)][7].append(heap)
          samples[(bench, be)][0].append(wall)
          if peak is not None:
            samples[(bench, be)][1].append(peak)
          top, p99 = pause_figures(found)
          if found is not None:
            samples[(bench, be)][2].append(top)
            samples[(bench, be)][3].append(p99)
            if "max_slice_ns" in found:
              samples[(bench, be)][5].append(found["max_slice_ns"] / 1e6)
            if "marking" in found:
              samples[(bench, be)][4].add(found["marking"])
          if gcs is not None:
            samples[(bench, be)][6].append(gcs)
    for bench in self.a.benches:
      for be in available:
        walls, peaks, tops, p99s, modes, slices, gcss, heaps = samples.get(
            (bench, be), ([], [], [], [], set(), [], [], []))
        if not walls:
          continue
        row = {"bench": bench, "size": str(self.size(bench)), "backend": be,
               "wall_s": round(statistics.median(walls), 3),
               "peak_mib": round(statistics.median(peaks), 1) if peaks else None,
               "_median": True}
        if gcss:
          # Collections: gcfuzz's major cycles, bdwgc's GC_get_gc_no(), 0 on malloc.
          row["gcs"] = median_or_none(gcss, 1)
        if heaps:
          row.update(heap_figures(heaps))
        if be.startswith("gcfuzz"):
          # Each run's longest stop and the p99 of its last 256, medians over the rounds.
          row["pause_max_ms"] = median_or_none(tops, 3)
          row["pause_p99_ms"] = median_or_none(p99s, 3)
          # The longest mark slice (incremental; 0 in stw): a stall of the mutator, no stop.
          if slices:
            row["slice_max_ms"] = median_or_none(slices, 3)
          if len(modes) == 1:
            row["marking"] = modes.pop()
        self.rows.append(row)

  def same_output(self, bench, out_path):
    """Whether a run of a benchmark that prints the same lines on every backend printed the
    first run's (which is kept as the reference: its log and text)."""
    with open(out_path, errors="replace") as f:
      text = f.read()
    first = self.first_output.setdefault(bench, (out_path[:-len(".out")], text))
    return first[1] == text

  def run_row_program(self, prog, runs_tsv):
    stem, args, quick_args, _ = ROW_PROGRAMS[prog]
    args = (quick_args if self.a.quick else args).split()
    log = os.path.join(self.logs, prog)
    print("[%s] bench/%s %s" % (prog, stem, " ".join(args)), flush=True)
    start = time.monotonic()
    with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
      rc, _ = procs.run([os.path.join(self.bin_dir, "bench", stem)] + args, stdout=out,
                        stderr=err)
    n = 0
    with open(log + ".out", errors="replace") as f:
      for line in f:
        if not line.startswith("ROW "):
          continue
        r = row_of(line.rstrip("\n"))
        if r is None:
          print("%s: %s: malformed row: %s" % (PROG, prog, line.rstrip()), file=sys.stderr)
          rc = rc or 1
          continue
        self.rows.append(r)
        runs_tsv.write("%s\t%s\t%s\t1\t%s\t%s\t%d\t\n" % (r["bench"], r["size"], r["backend"],
                                                          r["wall_s"], r["peak_mib"] or "", rc))
        n += 1
    if rc != 0 or n == 0:
      print("[%s] FAILED (exit %d, %d rows; see %s.err)" % (prog, rc, n, log), file=sys.stderr)
      self.failures += 1
      return
    print("[%s] %d rows in %.1f s" % (prog, n, time.monotonic() - start))

  def run(self):
    os.makedirs(self.logs, exist_ok=True)
    available, row_programs = self.build()
    if self.a.against and self.a.benches:
      self.build_against(available)
    if os.environ.get("GCFUZZ_PARAMS"):
      print("%s: GCFUZZ_PARAMS=%s" % (PROG, os.environ["GCFUZZ_PARAMS"]))
    with open(os.path.join(OUT, "runs.tsv"), "w") as runs_tsv:
      runs_tsv.write("bench\tsize\tbackend\tround\twall_s\tpeak_mib\tstatus\tgcs\n")
      self.run_benches(available, runs_tsv)
      for prog in row_programs:
        self.run_row_program(prog, runs_tsv)
    print()
    if available:
      print("medians of %d round(s); gcfuzz*/... ratios below 1 mean gcfuzz is faster (wall) or"
            % self.a.rounds)
      print("smaller (peak) or pauses less (pause columns: each run's longest stop and the p99 of")
      print("its last 256); pass/mark ratios are a pass's cost in full marks; "
            "markers-1/markers-2 is")
      print("the parallel mark's speedup (above 1: 2 markers are faster); gc_store/plain the "
            "barrier's cost;")
      print("gcs: the collections a run's heap ran (gcfuzz: major cycles; bdwgc: "
            "GC_get_gc_no(); malloc: 0)")
    else:
      print("pass/mark ratios are a pass's cost in full marks; markers-1/markers-2 is the "
            "parallel")
      print("mark's speedup (above 1: 2 markers are faster); gc_store/plain the barrier's cost")
    print("\n".join(table(self.rows, self.ratios)))
    for prog in row_programs:
      err = os.path.join(self.logs, prog + ".err")
      if os.path.getsize(err):
        print()
        print(ROW_PROGRAMS[prog][3])
        with open(err, errors="replace") as f:
          print("\n".join("  " + l for l in f.read().splitlines()))
    jsonout.write(os.path.join(OUT, "results.json"),
                  [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rows])
    jsonout.write(os.path.join(OUT, "pauses.json"), {"runs": self.pauses})
    print()
    print("results: %s/results.json  runs: %s/runs.tsv  logs: %s/logs/" % (OUT, OUT, OUT))
    write_report(OUT)
    if self.failures:
      print("%s: %d failure(s) (builds or runs), see above" % (PROG, self.failures),
            file=sys.stderr)
      return 1
    return 0


def main(argv):
  a = parse_args(argv)
  procs.install_signal_handlers()
  os.chdir(paths.ROOT)
  if a.report is not None:
    return 0 if write_report(a.report) else 2

  def body():
    tools.ensure("bench", PROG, os.path.join(OUT, "logs", "apt.log"))
    return Bench(a).run()

  return cli.guarded(PROG, body)
