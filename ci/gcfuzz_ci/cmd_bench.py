"""ci/bench: the benchmarks (binary-trees, GCBench) on gcfuzz, bdwgc and malloc/free, as ratios,
on one thread and on two; then the programs that measure the collector itself (the verification
passes' cost, the parallel mark).

Adding to it: a benchmark is a row of BENCHES; a backend is an entry of BACKENDS; a ratio an
entry of RATIOS. A program that prints its own rows (`ROW {"bench": ..., "size": ...,
"backend": ..., "wall_s": ..., "peak_mib": ...}` on stdout, a summary on stderr) is a row of
ROW_PROGRAMS.
"""
import json
import os
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

Runs the benchmarks on gcfuzz, bdwgc (Debian's libgc, default settings) and glibc malloc/free,
each on one thread and on two (gcfuzz-2: two domains; bdwgc-2: two registered threads;
malloc-2), alternating the backends run by run, and prints the median wall time and peak RSS of
each, with the ratios gcfuzz/bdwgc, gcfuzz/malloc, gcfuzz-2/bdwgc-2 and gcfuzz-2/malloc-2
(below 1: gcfuzz is faster or smaller). Then the programs that print their own rows:
verify (the verification passes against one full mark, at 10^4, 10^5, 10^6 live blocks) and
mark-parallel (one full mark of 10^6 blocks with 1 marker and with 2).

  --quick       small sizes (binary-trees 16, GCBench stretch depth 16, verify 10^4 and 10^5
                with 3 runs, mark-parallel 10^5 blocks with 5 runs): the whole run < 1 min
  --rounds N    runs of each benchmark on each backend (default 3); the median is reported
                (the ROW programs take their own medians and ignore it)
  --only BENCH  one benchmark: binary-trees, gcbench, verify or mark-parallel
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

Sizes by default: binary-trees 20, GCBench 18 (the published size).
GCFUZZ_PARAMS in the environment reaches the gcfuzz runs (e.g. GCFUZZ_PARAMS=percent=200) and
mark-parallel (collection stays off there, e.g. GCFUZZ_PARAMS=markstack=2M); verify ignores it.
Output: bench/out/results.json (medians), bench/out/runs.tsv (every run), bench/out/logs/,
bench/out/pauses.json (the pause history of every gcfuzz run: its last 256 stop-the-world pauses,
which the programs print when BENCH_PAUSES is set, as ci/bench does) and bench/out/report.html:
one self-contained page (inline SVG, open it offline) with per benchmark the medians, the ratios
as bars (wall time and peak RSS, a dashed line at 1) and the pause-time distribution of each
gcfuzz backend (a histogram, p50/p90/p99/max).
Exit status: 0 when every build and run succeeded and every benchmark's checks passed.
"""

# name: (Bazel target stem, size, size with --quick)
BENCHES = {"binary-trees": ("binary_trees", 20, 16), "gcbench": ("gcbench", 18, 16)}
# The order the backends alternate in. A `-2` backend is the same collector with the benchmark
# split between two threads (bench/README.md, "Two threads"); its programs are the `_2` targets.
BACKENDS = ["gcfuzz", "bdwgc", "malloc", "gcfuzz-2", "bdwgc-2", "malloc-2"]
# numerator/denominator, both backends of one row group (a pair with a missing side is skipped,
# so each applies only where it makes sense: verify's backends are passes, mark-parallel's are
# marker counts).
RATIOS = ["gcfuzz/bdwgc", "gcfuzz/malloc", "gcfuzz-2/bdwgc-2", "gcfuzz-2/malloc-2",
          "checkmark/mark", "reach/mark", "swept/mark", "markers-1/markers-2"]
# name: (Bazel target, arguments, arguments with --quick, title of its summary)
ROW_PROGRAMS = {
    "verify": ("verify_cost", "5 10000 100000 1000000", "3 10000 100000",
               "verify: each pass's time / one full mark's, and its growth with the heap"),
    "mark-parallel": ("mark_parallel", "9 1000000", "5 100000",
                      "mark-parallel: one full mark, 1 marker vs 2 (speedup = markers-1 / "
                      "markers-2)"),
}
OUT = os.path.join("bench", "out")


def target(bench, backend):
  return "//bench:%s_%s" % (BENCHES[bench][0], backend.replace("-", "_"))


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


def bench_line(text):
  """(wall_s, peak_mib) of the last `BENCH ... wall_s=W ... peak_mib=P` line a benchmark prints
  on stderr (its own fixed format)."""
  wall = peak = None
  for line in text.splitlines():
    if line.startswith("BENCH "):
      fields = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
      wall, peak = to_float(fields.get("wall_s")), to_float(fields.get("peak_mib"))
  return wall, peak


def to_float(s):
  try:
    return float(s)
  except (TypeError, ValueError):
    return None


def row_of(line):
  """A result row from a `ROW {json}` line, or None if malformed."""
  try:
    r = json.loads(line[len("ROW "):])
  except ValueError:
    return None
  if not isinstance(r, dict) or any(r.get(k) in (None, "") for k in ("bench", "size", "backend",
                                                                      "wall_s")):
    return None
  return {"bench": str(r["bench"]), "size": str(r["size"]), "backend": str(r["backend"]),
          "wall_s": r["wall_s"], "peak_mib": r.get("peak_mib")}


def pauses_of(text):
  """(cycles, [pause ns]) of the last `PAUSES cycles=N ns=P1,P2,...` line a gcfuzz benchmark
  prints on stderr with BENCH_PAUSES set (bench/backend_gcfuzz.h), or None."""
  found = None
  for line in text.splitlines():
    if line.startswith("PAUSES "):
      fields = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
      try:
        found = (int(fields.get("cycles", "0")),
                 [int(p) for p in fields.get("ns", "").split(",") if p])
      except ValueError:
        found = None
  return found


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


def table(rows, ratios):
  out = []
  line = lambda *c: out.append("%-14s %-7s %-27s %9s %10s" % c)
  line("bench", "size", "backend", "wall_s", "peak_mib")
  line("-" * 14, "-" * 7, "-" * 27, "-" * 9, "-" * 10)
  for i, r in enumerate(rows):
    # A median as the benchmarks' table has it (three decimals for seconds, one for MiB); a
    # ROW program's figure as it printed it.
    median = r.get("_median", False)
    line(r["bench"], r["size"], r["backend"], fmt(r["wall_s"], "%.3f" if median else None),
         fmt(r["peak_mib"], "%.1f" if median else None))
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
      if rw is None and rp is None:
        continue
      line(r["bench"], r["size"], pair, "%.2fx" % rw if rw is not None else "",
           "%.2fx" % rp if rp is not None else "")
  return out


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

  def size(self, bench):
    return BENCHES[bench][2] if self.a.quick else BENCHES[bench][1]

  def build(self):
    labels = [target(b, be) for be in BACKENDS for b in self.a.benches] + \
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
      for name, labels in ([(be, [target(b, be) for b in self.a.benches]) for be in BACKENDS
                            if self.a.benches] +
                           [(p, ["//bench:" + ROW_PROGRAMS[p][0]]) for p in self.a.rows]):
        log = os.path.join(self.logs, "build-%s.log" % name)
        if bazel.run(["build"] + flags + labels, log, cwd=paths.ROOT) == 0:
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
    total = len(self.a.benches) * len(available) * self.a.rounds
    n, width = 0, len(str(total))
    for bench in self.a.benches:
      sz = self.size(bench)
      for rnd in range(1, self.a.rounds + 1):
        for be in available:
          n += 1
          log = os.path.join(self.logs, "%s-%s-%s-r%d" % (bench, be, sz, rnd))
          with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
            rc, _ = procs.run([self.programs[be][bench], str(sz)], stdout=out, stderr=err,
                              env=dict(os.environ, BENCH_PAUSES="1"))
          with open(log + ".err", errors="replace") as f:
            err_text = f.read()
          wall, peak = bench_line(err_text)
          pauses = pauses_of(err_text)
          if pauses is not None:
            self.pauses.append({"bench": bench, "size": str(sz), "backend": be, "round": rnd,
                                "cycles": pauses[0], "pauses_ns": pauses[1]})
          runs_tsv.write("%s\t%s\t%s\t%d\t%s\t%s\t%d\n" % (bench, sz, be, rnd, wall or "",
                                                           peak or "", rc))
          head = "[%*d/%d] %-13s %-3s %-8s round %d/%d" % (width, n, total, bench, sz, be, rnd,
                                                          self.a.rounds)
          if rc != 0 or wall is None:
            print("%s  FAILED (exit %d, see %s.err)" % (head, rc, log), file=sys.stderr)
            print("\n".join("    " + l for l in err_text.splitlines()[-5:]), file=sys.stderr)
            self.failures += 1
            continue
          print("%s  %8.3f s  %8.1f MiB" % (head, wall, peak or 0), flush=True)
          samples.setdefault((bench, be), ([], []))
          samples[(bench, be)][0].append(wall)
          if peak is not None:
            samples[(bench, be)][1].append(peak)
    for bench in self.a.benches:
      for be in available:
        walls, peaks = samples.get((bench, be), ([], []))
        if walls:
          self.rows.append({"bench": bench, "size": str(self.size(bench)), "backend": be,
                            "wall_s": round(statistics.median(walls), 3),
                            "peak_mib": round(statistics.median(peaks), 1) if peaks else None,
                            "_median": True})

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
        runs_tsv.write("%s\t%s\t%s\t1\t%s\t%s\t%d\n" % (r["bench"], r["size"], r["backend"],
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
      runs_tsv.write("bench\tsize\tbackend\tround\twall_s\tpeak_mib\tstatus\n")
      self.run_benches(available, runs_tsv)
      for prog in row_programs:
        self.run_row_program(prog, runs_tsv)
    print()
    if available:
      print("medians of %d round(s); gcfuzz*/... ratios below 1 mean gcfuzz is faster (wall) or"
            % self.a.rounds)
      print("smaller (peak); pass/mark ratios are a pass's cost in full marks; "
            "markers-1/markers-2 is")
      print("the parallel mark's speedup (above 1: 2 markers are faster)")
    else:
      print("pass/mark ratios are a pass's cost in full marks; markers-1/markers-2 is the "
            "parallel")
      print("mark's speedup (above 1: 2 markers are faster)")
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
