"""ci/campaign: the main job of gcfuzz, a fuzz campaign against the collector; and --export,
--coverage, --tsan, --throughput."""
import datetime
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import (afl, bazel, census, cli, event_census, jsonout, layout, libfuzzer, lock, paths,
               procs, report_html, tools, verdict)

PROG = "ci/campaign"

USAGE = """\
Usage: ci/campaign [options] [TARGET...]

The main job of gcfuzz: fuzz the collector. Targets: graph, roots, schedule (the default: all
three), and schedule-tsan (by name only): the schedule programs on free-running threads under
ThreadSanitizer, which finds data races.

  ci/campaign                  60 s over graph, roots and schedule, all cores, then a summary
  ci/campaign --time 600 graph ten minutes of the graph target
  ci/campaign --time 300 schedule-tsan
                               five minutes of coverage-guided race hunting
  ci/campaign --export         merge the work corpus back into corpus/<target>/ as text
  ci/campaign --backend lua --time 1800
                               half an hour against Lua 5.4's collector (Debian's source)
  ci/campaign --coverage       line coverage of gc/ and invariants/ from the corpus (HTML too),
                               and gc/'s branch census: every branch side never taken
  ci/campaign --census         how often each rare event of the collector happened in the corpus
  ci/campaign --throughput     exec/s of each target on one core, 60 s from its seeds
  ci/campaign --throughput --rounds 5 graph
                               the median of five such runs, with the lowest and highest
  ci/campaign --report [DIR]   (re)write DIR/report.html from DIR's files, no fuzzing
  ci/campaign --zeal store --workdir .gcfuzz-zeal
                               a campaign under the collector's zeal store: a mark slice at
                               every store while a cycle marks
  ci/campaign --engine afl     the same campaign with AFL++ as the fuzzing engine

What a campaign does, per target:
  1. builds the target's fuzzer (//fuzz/targets:<target>_fuzzer) with --config=fuzz (libFuzzer
     + ASan/UBSan, -O2), every verification pass after every cycle; schedule-tsan is
     //fuzz/targets:schedule_tsan_fuzzer with --config=tsan-fuzz (libFuzzer + TSan, -O2): the
     schedule target's programs, seeds, dictionary and options, every domain's thread running
     free (the controlled scheduler off), every pass on; a data race is a crash;
  2. seeds <workdir>/<target>/corpus/ with corpus/<target>/*.txt (schedule-tsan:
     corpus/schedule/) assembled into bytes, next
     to what earlier campaigns found there (the corpus is resumable); the work directory is
     locked: a second campaign on it stops with an error;
  3. runs libFuzzer -fork=JOBS for its share of --time, printing a progress line at least
     every 10 s: execs, exec/s, coverage (libFuzzer's cov), corpus size, crashes (saved by this
     campaign);
  4. triages the crashes this campaign saved: each one is reproduced once (inputs are remembered
     by content hash in <workdir>/<target>/crashes/triage.json, so no input is run twice but an
     unreproduced race, below) and
     keyed by what broke, read from its first GCFUZZ-VERDICT line (kind and pass, and for a
     sanitizer finding the first stack frame in gc/ invariants/ fuzz/), else from libFuzzer's
     and the sanitizers' own markers; one per key is minimized (-minimize_crash,
     --minimize-time s; a key minimized by an earlier campaign is not minimized again) and
     every crash found by this campaign is printed as a program with the verdict and a one-line
     replay command; the text is saved next to it
     (<workdir>/<target>/crashes/min-<key>.txt), ready for corpus/regressions/.
     Races depend on how the OS runs the threads: a schedule-tsan input is reproduced with
     -runs=200 (200 runs in one process), up to 3 times; one that still does not race is kept
     in crashes/ as unreproduced (not moved to fixed/; tried again whenever a campaign saves it
     again), listed with the command to retry it, and fails the campaign all the same: TSan
     saw the race once.
Then a summary table, also written as <workdir>/summary.json, and the page
<workdir>/report.html (below, --report):
  {"interrupted": false, "targets": [{"name": "graph", "seconds": 60, "execs": N,
   "exec_per_s": N, "coverage": N, "corpus": N, "crashes": N, "keys": ["..."]}]}
("crashes" counts the distinct crashes this campaign found, by key; a schedule-tsan row also
has "unreproduced": the crash files that did not race again.) An interrupted campaign
(SIGINT, SIGTERM, SIGHUP) stops its fuzzers and still writes the summary, with
"interrupted": true and the figures so far; the fuzzers run in process groups that die with the
campaign, even when it is killed with SIGKILL.

Options:
  --backend NAME       the collector to fuzz: gcfuzz (the default: its targets graph, roots,
                       schedule), lua or bdwgc (their target of the same name: the backend's op
                       set through the backend interface, fuzz/backend/NAME/, built from
                       Debian's source package). Triage, crash keys, minimization, summary.json
                       and the report page are the same; crashes replay with
                       `replay --backend NAME`. Not with --coverage or --tsan (gcfuzz's)
  --time SECONDS       the whole budget, shared by the targets (default 60)
  --jobs N             parallel fuzzing processes per target (default: all cores, nproc)
  --workdir DIR        corpora, crashes, logs, reports (default .gcfuzz-work, git-ignored)
  --minimize-time S    time to minimize each distinct crash (default 10)
  --engine E           libfuzzer (the default) or afl: AFL++ (Debian's afl++) fuzzes the
                       targets built with --config=afl, one afl-fuzz per job (-M main, -S sN),
                       with the same seeds, dictionary (-x) and max_len (-G), progress read from
                       each instance's fuzzer_stats (with AFL++'s stability); its queue joins the
                       work corpus and its crashes are triaged, keyed and minimized as above, with
                       the libFuzzer build of the same target (it reads the same bytes).
                       summary.json says which engine ran ("engine"); campaign mode only, program
                       targets only (not schedule-tsan)
  --export             no fuzzing: merge <workdir>/<target>/corpus with corpus/<target>/
                       (libFuzzer -merge=1) and write each new input as
                       corpus/<target>/auto-<hash>.txt
  --coverage           no fuzzing: build with clang source-based coverage, run
                       corpus/<target>/ and <workdir>/<target>/corpus/ (default targets: the
                       three program targets and gcfuzz and gcfuzz-threads, the collector
                       through the backend interface, whose ops reach its weak references),
                       write an HTML report to <workdir>/coverage/html/index.html, print line
                       coverage per file of gc/ and invariants/, then gc/'s branch census:
                       branch sides taken per file and per function, and every side never
                       taken with its FILE:LINE:COLUMN and condition, less the sides
                       gc/unreachable.tsv lists as unreachable by design (each with its
                       reason; a stale entry is warned of). Written to coverage/census.json
                       and census.txt, to summary.json ("census") and to report.html
  --census             no fuzzing: replay corpus/<target>/ and <workdir>/<target>/corpus/ of
                       each target with `replay --events` and print how often each rare
                       event of its collector happened, per target and per cycle, and which
                       never happened, one table per collector: gcfuzz's for the program
                       targets and gcfuzz, gcfuzz-threads (gc.h, GC_EVENTS: rechecks, the
                       recheck limit, overflows and re-darkening, handoffs, domains spawned,
                       terminated or blocked while idle, marking or sweeping, pins and unpins
                       mid-mark, finalizers that allocate or collect, adoptions, slices and
                       sweeps per cycle, compactions); lua's and bdwgc's from their backends'
                       tables (`replay --list-backends`: Lua's incremental steps, atomic
                       phases, minor and major collections, mode switches, full and
                       emergency collections, finalizers, weak entries cleared, steps at the
                       tunables' corners; bdwgc's collections whole or by increments,
                       abandoned marks, heap growth, failed allocations, finalizers, cleared
                       links); into summary.json ("events"; "backend_events" by collector)
                       and report.html
  --with-tests         with --coverage: also run the gc/ and invariants/ unit tests (the
                       breaking tests among them) and count their lines too
  --tsan               no fuzzing: the schedule target's programs (corpus/schedule/*.txt) on
                       free-running threads (the scheduler off) under ThreadSanitizer, again
                       and again for --time seconds (the driver's stress_test, --config=tsan); any
                       data race or violation fails it
  --throughput         no campaign: each target alone (schedule-tsan: by name; its domains'
                       threads share the core), pinned to one core (taskset), for
                       --time seconds EACH (default 60), from its seeds only (a fresh corpus
                       in a temporary directory; the work corpus is not touched), with its
                       options file, without -fork; prints execs, exec/s (libFuzzer's
                       average), coverage and corpus per target and writes
                       <workdir>/throughput.json. The measure behind the throughput figures of
                       bench/MEASUREMENTS.md; run it on an otherwise idle machine
  --zeal MODES         with a campaign or --throughput of the program targets (graph, roots,
                       schedule, schedule-tsan): run under the collector's zeal modes, the
                       values of `param zeal` (store, slice+recheck, ...; fuzz/README.md).
                       Every input the mutator makes begins with `param zeal MODES` (after
                       `param marking incremental` for store and recheck), so every input of
                       the corpus and every crash replays the zeal by itself; the seeds run as
                       they are. Modes the programs cannot say are refused before fuzzing.
                       Give it a --workdir of its own: the corpus it grows is the zeal's.
                       --census on that work directory counts what the zeal made happen
  --core N             with --throughput: the core to pin to (default: the last one)
  --rounds N           with --throughput: run each target N times, one round of every target
                       after another, round k with libFuzzer's -seed=k (one round: libFuzzer
                       picks the seed), and report each target's median exec/s with its lowest
                       and highest. One run's figure moves by up to a third with the seed (it
                       averages over the corpus that run grows); the median of five is the
                       figure bench/MEASUREMENTS.md gives
  --report [DIR]       no fuzzing: (re)write DIR/report.html (DIR: --workdir's) from what a
                       campaign left there: one self-contained page (inline SVG and CSS; open it
                       in any browser, offline) with the summary table, per target the curves
                       of coverage, exec/s and corpus size over time (the samples of
                       <target>/progress.json, recorded as the campaign runs), and each crash's
                       key, verdict, report, minimized program and the neighbourhood of the
                       violation drawn by Graphviz (crashes/min-<key>.out, .txt, .dot). A
                       campaign writes it at its end, an interrupted one too
  --no-install         do not try to install missing tools
  -h, --help           this text

The targets are names: graph roots schedule schedule-tsan lua bdwgc gcfuzz gcfuzz-threads
gcfuzz-threads-tsan (each at most once; lua and bdwgc are also --backend lua, --backend bdwgc).
gcfuzz-threads-tsan is the gcfuzz-threads programs (weak references and ephemerons among them)
on free-running threads under ThreadSanitizer, as schedule-tsan is the schedule programs.

First installs what is missing (clang, libclang-rt-14-dev, llvm, llvm-14, bazel-bootstrap,
graphviz; afl++ for --engine afl; --report: graphviz only) with apt-get, as root or through
sudo; a second run finds them and installs nothing.

GCFUZZ_DISK_CACHE=DIR in the environment gives Bazel a shared --disk_cache.

Exit status: 0 no crash, 1 at least one crash (or --coverage/--export failed, or a target
stopped under --throughput), 2 usage, build or setup error, a locked work directory, or an
interrupted run.
"""

# The fuzzing builds: .bazelrc's fuzz config (libFuzzer + ASan/UBSan, -O2) and, for
# schedule-tsan, its tsan-fuzz config (libFuzzer + TSan, -O2); layout.config_of says which.
def config_flags(config):
  return ["--config=" + config]


# Source-based coverage, in its own output tree.
COV_FLAGS = ["--platform_suffix=cov", "--copt=-O1", "--copt=-fprofile-instr-generate",
             "--copt=-fcoverage-mapping", "--linkopt=-fprofile-instr-generate",
             "--linkopt=-fcoverage-mapping"]
PROGRESS_EVERY_S = 10
REPRODUCE_TIMEOUT_S = 120
# A TSan target's crash is a race, which the OS's scheduling of the threads may or may not repeat:
# each reproduction runs the input this many times in one process (libFuzzer -runs), and is
# tried this many times before the input counts as unreproduced.
TSAN_REPRODUCE_RUNS = 200
TSAN_REPRODUCE_TRIES = 3


def nproc():
  return len(os.sched_getaffinity(0))


def parse_args(argv):
  p = cli.Parser(PROG, USAGE)
  p.add_argument("--time", default="60")
  p.add_argument("--jobs")
  p.add_argument("--workdir", default=".gcfuzz-work")
  p.add_argument("--minimize-time", default="10")
  p.add_argument("--engine", default="libfuzzer")
  p.add_argument("--backend", default=None)
  mode = p.add_mutually_exclusive_group()
  for m in ("export", "coverage", "census", "tsan", "throughput"):
    mode.add_argument("--" + m, dest="mode", action="store_const", const=m)
  mode.add_argument("--report", nargs="?", const="", metavar="DIR")
  p.add_argument("--core")
  p.add_argument("--rounds")
  p.add_argument("--zeal")
  p.add_argument("--with-tests", action="store_true")
  p.add_argument("--no-install", action="store_true")
  p.add_argument("targets", nargs="*")
  a = p.parse(argv)
  a.mode = a.mode or "campaign"
  if a.report is not None:
    a.mode, a.workdir = "report", a.report or a.workdir
  a.time = cli.decimal(a.time, "--time", minimum=1)
  a.minimize_time = cli.decimal(a.minimize_time, "--minimize-time")
  cores = nproc()
  a.jobs = cores if a.jobs is None else cli.decimal(a.jobs, "--jobs", minimum=1)
  a.core = cores - 1 if a.core is None else cli.decimal(a.core, "--core", maximum=cores - 1)
  if a.rounds is not None and a.mode != "throughput":
    raise cli.UsageError("--rounds goes with --throughput")
  a.rounds = 1 if a.rounds is None else cli.decimal(a.rounds, "--rounds", minimum=1, maximum=99)
  if a.zeal is not None:
    if a.mode not in ("campaign", "throughput") or a.engine != "libfuzzer":
      raise cli.UsageError("--zeal goes with a libFuzzer campaign or --throughput")
    if not a.zeal or a.zeal.startswith("-"):
      raise cli.UsageError("--zeal needs modes (store, slice+recheck, ...; fuzz/README.md)")
  for t in a.targets:
    if t.startswith("-"):
      raise cli.UsageError("unknown option '%s' (see %s --help)" % (t, PROG))
    if t not in layout.FUZZ_TARGETS:
      raise cli.UsageError("unknown target '%s' (targets: %s)" % (t, " ".join(layout.FUZZ_TARGETS)))
    if a.targets.count(t) > 1:
      raise cli.UsageError("target '%s' named twice" % t)
  if a.backend is not None:
    if a.backend not in layout.BACKENDS:
      raise cli.UsageError("unknown backend '%s' (backends: %s)"
                           % (a.backend, " ".join(layout.BACKENDS)))
    for t in a.targets:
      if layout.backend_of(t) != a.backend:
        raise cli.UsageError("target '%s' fuzzes %s, not --backend %s"
                             % (t, layout.backend_of(t), a.backend))
    a.targets = a.targets or list(layout.targets_of_backend(a.backend))
  if not a.targets and a.mode == "coverage":
    a.targets = list(layout.COVERAGE_TARGETS)
  a.targets = a.targets or list(layout.DEFAULT_TARGETS)
  foreign = [t for t in a.targets if layout.backend_of(t) != "gcfuzz"]
  if os.environ.get("GCFUZZ_PARAMS") and a.mode != "report":
    raise cli.UsageError("GCFUZZ_PARAMS is set (%s): the fuzz targets make their heaps from the "
                         "programs alone, so that every finding replays from its input; unset "
                         "it (parameters belong in the programs: `param KEY VALUE`)"
                         % os.environ["GCFUZZ_PARAMS"])
  if a.zeal is not None and any(layout.programs_of(t) not in layout.PROGRAM_TARGETS
                                for t in a.targets):
    raise cli.UsageError("--zeal runs the program targets (%s, schedule-tsan), not %s"
                         % (" ".join(layout.PROGRAM_TARGETS),
                            [t for t in a.targets
                             if layout.programs_of(t) not in layout.PROGRAM_TARGETS][0]))
  census_targets = layout.PROGRAM_TARGETS + layout.INTERFACE_TARGETS
  if a.mode == "census" and any(t not in census_targets for t in a.targets):
    raise cli.UsageError("--census counts the events of the program targets and the backend "
                         "targets (%s), not %s: it replays with the default build"
                         % (" ".join(census_targets),
                            [t for t in a.targets if t not in census_targets][0]))
  if foreign and a.mode in ("coverage", "tsan"):
    raise cli.UsageError("--%s measures gcfuzz's collector; %s fuzzes another (--backend %s)"
                         % (a.mode, foreign[0], layout.backend_of(foreign[0])))
  if foreign and a.engine == "afl":
    raise cli.UsageError("--engine afl runs gcfuzz's program targets only, not %s" % foreign[0])
  if a.engine not in afl.ENGINES:
    raise cli.UsageError("unknown engine '%s' (engines: %s)" % (a.engine, " ".join(afl.ENGINES)))
  if a.engine == "afl" and (a.mode != "campaign" or
                            any(t not in layout.PROGRAM_TARGETS for t in a.targets)):
    raise cli.UsageError("--engine afl runs a campaign of the program targets (%s) only"
                         % " ".join(layout.PROGRAM_TARGETS))
  return a


class Campaign:
  def __init__(self, args, workdir, lay):
    self.a, self.w, self.lay = args, workdir, lay
    self.logdir = os.path.join(workdir, "logs")
    self.replay = None  # the replay tool of the first target's build (seeds, printing)
    self.bindirs = {}   # config -> its bazel-bin

  # ---------------------------------------------------------------- building

  def build(self, logname, flags, labels):
    log = os.path.join(self.logdir, logname + ".log")
    if bazel.run(["build"] + bazel.OPTS + bazel.cache_opts() + flags + labels, log,
                 cwd=paths.ROOT) != 0:
      with open(log, errors="replace") as f:
        print("\n".join(bazel.build_errors(f.read(), 60)), file=sys.stderr)
      raise cli.SetupError("build failed (full log: %s)" % log)
    bindir = bazel.bazel_bin(bazel.cache_opts() + flags, cwd=paths.ROOT)
    if bindir is None:
      raise cli.SetupError("bazel info failed")
    return bindir

  def build_fuzzers(self):
    """Each configuration the targets need, with its fuzzers and its replay tool (a target's
    crashes are replayed by the replay tool of its own build)."""
    configs = []
    for t in self.a.targets:
      if layout.config_of(t) not in configs:
        configs.append(layout.config_of(t))
    for config in configs:
      labels = [layout.label(self.lay.replay)] + [
          layout.label(self.lay.fuzzer(t)) for t in self.a.targets if layout.config_of(t) == config]
      print("%s: building %s (--config=%s)" % (PROG, " ".join(labels[1:]), config), flush=True)
      self.bindirs[config] = self.build("build-" + config, config_flags(config), labels)
    self.replay = self.replay_of(self.a.targets[0])
    if self.a.zeal is not None:
      self.check_zeal()
    if self.a.engine == "afl":
      labels = [layout.label(self.lay.fuzzer(t)) for t in self.a.targets]
      print("%s: building %s (--config=%s)" % (PROG, " ".join(labels), afl.CONFIG), flush=True)
      self.bindirs[afl.CONFIG] = self.build("build-" + afl.CONFIG, config_flags(afl.CONFIG), labels)

  def check_zeal(self):
    """GCFUZZ_ZEAL for every fuzzer this run starts, once each target's fuzzer has accepted it
    (its custom mutator refuses modes its programs cannot say, before any input runs)."""
    os.environ["GCFUZZ_ZEAL"] = self.a.zeal
    empty = tempfile.mkdtemp(prefix="zeal-check.", dir=self.w)
    try:
      for t in self.a.targets:
        p = subprocess.run([self.fuzzer(t), "-runs=0", empty], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, errors="replace")
        if p.returncode != 0:
          said = [l for l in p.stdout.splitlines() if "GCFUZZ_ZEAL" in l]
          raise cli.UsageError("--zeal %s: %s" % (self.a.zeal, said[0] if said else
                                                   "the %s fuzzer refused it (exit %d)"
                                                   % (t, p.returncode)))
    finally:
      shutil.rmtree(empty, ignore_errors=True)
    print("%s: under zeal %s: every mutated input begins with `param zeal %s`"
          % (PROG, self.a.zeal, self.a.zeal), flush=True)

  def fuzzer(self, t):
    return os.path.join(self.bindirs[layout.config_of(t)], self.lay.fuzzer(t))

  def replay_of(self, t):
    return os.path.join(self.bindirs[layout.config_of(t)], self.lay.replay)

  def options(self, t):
    return libfuzzer.options_flags(os.path.join(paths.ROOT, self.lay.options_file(t)),
                                   os.path.join(paths.ROOT, self.lay.options_dir()))

  # ---------------------------------------------------------------- corpus

  def seed_corpus(self, t, directory):
    """Assembles the seeds of t's programs (corpus/T/*.txt) into directory (bytes,
    seed-<name>); returns how many."""
    os.makedirs(directory, exist_ok=True)
    n = 0
    log = os.path.join(self.logdir, "seed-%s.log" % t)
    programs = layout.programs_of(t)
    with open(log, "a") as lf:
      for f in sorted(glob.glob(os.path.join(paths.ROOT, "corpus", programs, "*.txt"))):
        out = os.path.join(directory, "seed-" + os.path.basename(f)[:-4])
        if subprocess.run([self.replay, "--target", programs, "--assemble", out, f], stdout=lf,
                          stderr=lf).returncode == 0:
          n += 1
        else:
          print("%s: warning: %s does not assemble (see %s)" % (PROG, f, log), file=sys.stderr)
    return n

  # ---------------------------------------------------------------- fuzzing

  def run_target(self, t, secs, row):
    """Fuzzes t for secs; fills row (the summary's) as it goes, so an interrupt finds the
    figures so far in it."""
    d = os.path.join(self.w, t)
    corpus, crashes = os.path.join(d, "corpus"), os.path.join(d, "crashes")
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(crashes, exist_ok=True)
    log = os.path.join(self.logdir, "fuzz-%s.log" % t)
    seeds = self.seed_corpus(t, corpus)
    before = libfuzzer.artifacts(crashes)
    print("%s: %s: %ds on %d job(s), corpus %s (%d inputs, %d seeds), log %s"
          % (PROG, t, secs, self.a.jobs, corpus, libfuzzer.count_files(corpus), seeds, log),
          flush=True)
    cmd = [self.fuzzer(t), "-fork=%d" % self.a.jobs, "-ignore_crashes=1", "-ignore_timeouts=1",
           "-ignore_ooms=1", "-max_total_time=%d" % secs, "-timeout=25", "-rss_limit_mb=2048",
           "-artifact_prefix=" + crashes + "/"] + self.options(t) + [corpus]
    start = time.monotonic()
    with open(log, "w") as lf:
      p = procs.spawn(cmd, stdout=lf, stderr=subprocess.STDOUT)
    last_print = start
    fuzzers = procs.children(p)
    progress = report_html.Progress(os.path.join(d, "progress.json"), t, secs)
    try:
      while p.poll() is None:
        time.sleep(1)
        self.update_row(row, log, corpus, start, before, crashes)
        progress.add(row)
        if time.monotonic() - last_print >= PROGRESS_EVERY_S:
          last_print = time.monotonic()
          print(progress_line(t, row), flush=True)
    finally:
      procs.kill(p)
      # The last figures, in the row and as the last sample (an interrupt's too).
      self.update_row(row, log, corpus, start, before, crashes)
      progress.add(row)
      progress.flush()
      # Fork mode keeps its jobs' corpora in a temporary directory named by its pid, which it
      # removes only when it ends by itself.
      for pid in fuzzers:
        shutil.rmtree(os.path.join(tempfile.gettempdir(), "libFuzzerTemp.FuzzWithFork%d.dir"
                                   % pid), ignore_errors=True)
    rc = p.returncode
    with open(log, errors="replace") as f:
      text = f.read()
    if libfuzzer.last_stats(text) is None:
      print("\n".join(text.splitlines()[-30:]), file=sys.stderr)
      print("%s: %s: libFuzzer printed no statistics (exit %s; log %s)" % (PROG, t, rc, log),
            file=sys.stderr)
      row["error"] = "no statistics"
      return True
    new = libfuzzer.new_artifacts(before, libfuzzer.artifacts(crashes))
    triage = Triage(self, t, crashes)
    keys = triage.run(new)
    row["crashes"], row["keys"] = len(keys), keys
    if layout.is_tsan(t):
      row["unreproduced"] = triage.unreproduced
    return bool(keys) or bool(triage.unreproduced)

  def update_row(self, row, log, corpus, start, before, crashes):
    elapsed = int(time.monotonic() - start)
    try:
      with open(log, errors="replace") as f:
        stats = libfuzzer.last_stats(f.read())
    except FileNotFoundError:
      stats = None
    row["seconds"] = elapsed
    row["corpus"] = libfuzzer.count_files(corpus)
    row["crash_files"] = len(libfuzzer.new_artifacts(before, libfuzzer.artifacts(crashes)))
    if stats:
      row["execs"], row["coverage"] = stats
      row["exec_per_s"] = stats[0] // max(elapsed, 1)


def progress_line(t, row):
  if "execs" not in row:
    return "  %-13s %4ds  starting (loading %d inputs)  crashes %d" % (
        t, row["seconds"], row["corpus"], row["crash_files"])
  return "  %-13s %4ds  execs %9d  exec/s %6d  cov %6d  corpus %6d  crashes %d" % (
      t, row["seconds"], row["execs"], row["exec_per_s"], row["coverage"], row["corpus"],
      row["crash_files"])


def new_row(t):
  return {"name": t, "seconds": 0, "execs": 0, "exec_per_s": 0, "coverage": 0, "corpus": 0,
          "crashes": 0, "keys": []}


SUMMARY_FMT = "%-13s %7s %10s %8s %7s %7s %8s"


def summary_json(rows, interrupted, engine="libfuzzer", zeal=None):
  out = []
  for r in rows:
    r = dict(r)
    r.pop("crash_files", None)
    out.append(r)
  summary = {"engine": engine, "interrupted": interrupted, "targets": out}
  if zeal is not None:
    summary["zeal"] = zeal
  return summary


def write_summary(w, rows, interrupted, engine="libfuzzer", zeal=None):
  print()
  print("==== summary (work directory %s)%s" % (w, " INTERRUPTED" if interrupted else ""))
  print(SUMMARY_FMT % ("target", "seconds", "execs", "exec/s", "cov", "corpus", "crashes"))
  for r in rows:
    if "error" in r:
      print(SUMMARY_FMT % (r["name"], r["seconds"], "?", "?", "?", "?", "error"))
    else:
      print(SUMMARY_FMT % (r["name"], r["seconds"], r["execs"], r["exec_per_s"], r["coverage"],
                           r["corpus"], r["crashes"]))
  path = os.path.join(w, "summary.json")
  jsonout.write(path, summary_json(rows, interrupted, engine, zeal))
  print("summary.json: %s" % path, flush=True)


class Triage:
  """Keys the crashing inputs a campaign saved, minimizes one per key, prints every one.

  triage.json remembers, by content hash, the key of every input ever reproduced here (null:
  it did not reproduce; the input moved to fixed/) and the minimized input of every key."""

  def __init__(self, campaign, t, crashes):
    self.c, self.t, self.dir = campaign, t, crashes
    self.programs = layout.programs_of(t)  # replay --target
    self.tsan = layout.is_tsan(t)
    self.unreproduced = []  # TSan targets: crash files that did not race again
    self.state_path = os.path.join(crashes, "triage.json")
    try:
      with open(self.state_path) as f:
        self.state = json.load(f)
    except (OSError, ValueError):
      self.state = {"inputs": {}, "minimized": {}}

  def save(self):
    jsonout.write(self.state_path, self.state)

  def runs_flags(self):
    """What makes one reproduction of this target's crash: one run, or for a TSan target
    TSAN_REPRODUCE_RUNS runs in one process (a race is up to the OS's scheduling)."""
    return ["-runs=%d" % TSAN_REPRODUCE_RUNS] if self.tsan else []

  def reproduce(self, path):
    """(verdict or None, output) of running the fuzzer on path: once, or for a TSan target up
    to TSAN_REPRODUCE_TRIES processes of TSAN_REPRODUCE_RUNS runs each, until one finds it."""
    out_path = os.path.join(self.dir, ".out")
    for _ in range(TSAN_REPRODUCE_TRIES if self.tsan else 1):
      with open(out_path, "w") as f:
        rc, hung = procs.run([self.c.fuzzer(self.t), "-timeout=25", "-rss_limit_mb=4096"] +
                             self.runs_flags() + [path],
                             timeout_s=REPRODUCE_TIMEOUT_S, stdout=f, stderr=subprocess.STDOUT)
      with open(out_path, errors="replace") as f:
        text = f.read()
      os.unlink(out_path)
      v = verdict.classify(text, failed=rc != 0, hung=hung)
      if v is not None:
        break
    return v, text

  def key_of(self, path):
    h = sha1_of(path)
    known = self.state["inputs"].get(h)
    # An unreproduced race is tried again each time a campaign saves the input again.
    if known is not None and not known.get("unreproduced"):
      return known["key"]
    v, text = self.reproduce(path)
    key = verdict.crash_key(v, text) if v is not None else None
    self.state["inputs"][h] = {"key": key, "file": os.path.basename(path)}
    if key is None and self.tsan:
      # TSan saw a race in it once; the OS did not run the threads that way again. Kept where
      # it is, for the next campaign (or by hand) to try again.
      self.state["inputs"][h]["unreproduced"] = True
      self.save()
      self.unreproduced.append(os.path.basename(path))
      return None
    self.save()
    if key is None:
      # It does not crash (any more): set it aside.
      os.makedirs(os.path.join(self.dir, "fixed"), exist_ok=True)
      os.replace(path, os.path.join(self.dir, "fixed", os.path.basename(path)))
    return key

  def run(self, new_files):
    """Returns the distinct keys of new_files, after printing each."""
    best = {}
    for name in new_files:
      path = os.path.join(self.dir, name)
      if not os.path.isfile(path):
        continue
      key = self.key_of(path)
      if key is None:
        continue
      size = os.path.getsize(path)
      if key not in best or size < best[key][1]:
        best[key] = (path, size)
    keys = sorted(best)
    for n, key in enumerate(keys, 1):
      self.report(n, len(keys), key, best[key][0])
    if self.unreproduced:
      print()
      print("==== [%s] %d crash file(s) saved on a race that did not race again in %d x %d runs "
            "(kept in %s; retried when saved again):" % (self.t, len(self.unreproduced),
                                                         TSAN_REPRODUCE_TRIES,
                                                         TSAN_REPRODUCE_RUNS, self.dir))
      for name in self.unreproduced:
        print("  %s   retry: %s -runs=%d %s" % (name, self.c.fuzzer(self.t), TSAN_REPRODUCE_RUNS,
                                                os.path.join(self.dir, name)))
    return keys

  def minimize(self, key, path, minimized):
    """Minimizes path into minimized; returns a note if the result drifted to another crash."""
    if key.startswith(("fuzzer.timeout", "fuzzer.oom", "timeout.")):
      shutil.copyfile(path, minimized)
      return ""
    log = os.path.join(self.c.logdir, "minimize-%s-%s.log" % (self.t, verdict.slug(key)))
    with open(log, "w") as f:
      # -runs: a TSan target's candidate counts as crashing if any of its runs races.
      procs.run([self.c.fuzzer(self.t), "-minimize_crash=1",
                 "-max_total_time=%d" % self.c.a.minimize_time,
                 "-exact_artifact_path=" + minimized, "-timeout=25"] + self.runs_flags() + [path],
                timeout_s=self.c.a.minimize_time + 60, stdout=f, stderr=subprocess.STDOUT)
    if not os.path.isfile(minimized):
      shutil.copyfile(path, minimized)
      return ""
    # -minimize_crash accepts any crash, and may drift to another one.
    v, text = self.reproduce(minimized)
    got = verdict.crash_key(v, text) if v is not None else "no crash"
    if got != key:
      note = ("minimizing drifted to another crash (%s, %d bytes); kept the original"
              % (got, os.path.getsize(minimized)))
      shutil.copyfile(path, minimized)
      return note
    return ""

  def report(self, n, total, key, path):
    minimized = os.path.join(self.dir, "min-" + verdict.slug(key))
    note = ""
    if self.state["minimized"].get(key) != os.path.basename(minimized) or \
        not os.path.isfile(minimized):
      note = self.minimize(key, path, minimized)
      self.state["minimized"][key] = os.path.basename(minimized)
      self.save()
    replay = self.c.replay_of(self.t)
    # A TSan target's programs replay on free threads, as it ran them.
    free = ["--free"] if self.tsan else []
    printed = subprocess.run([replay, "--target", self.programs, "--print", "--bytes", minimized],
                             capture_output=True, text=True, errors="replace").stdout
    text_path = minimized + ".txt"
    with open(text_path, "w") as f:
      f.write("# %s: %s\n# target: %s\n# found by ci/campaign on %s; minimized from %s\n%s"
              % (self.t, key, self.programs, datetime.date.today().isoformat(),
                 os.path.basename(path), printed))
    print()
    print("==== crash %d/%d [%s] %s" % (n, total, self.t, key))
    if note:
      print("(%s)" % note)
    # The replay's report and the first violation's neighbourhood stay beside the input, for
    # the page (report_html).
    if os.path.exists(minimized + ".dot"):
      os.unlink(minimized + ".dot")
    with open(minimized + ".out", "w+") as f:
      procs.run([replay, "--target", self.programs, "--quiet"] + free + ["--bytes", minimized],
                timeout_s=REPRODUCE_TIMEOUT_S, stdout=f, stderr=subprocess.STDOUT,
                env=dict(os.environ, GCFUZZ_VERIFY_DOT=minimized + ".dot"))
      f.seek(0)
      lines = f.read().splitlines()
    print("\n".join(lines[:40]))
    program = printed.splitlines()
    print("---- the program (%s):" % text_path)
    print("\n".join(program[:60]))
    if len(program) > 60:
      print("... (%d ops in all)" % len(program))
    if self.tsan:
      print("---- replay (a race may need several runs): bazel run --config=tsan %s -- --target "
            "%s --free %s; or %s -runs=%d %s" % (layout.label(self.c.lay.replay), self.programs,
                                                 minimized, self.c.fuzzer(self.t),
                                                 TSAN_REPRODUCE_RUNS, minimized), flush=True)
    else:
      print("---- replay: bazel run --config=asan %s -- --target %s %s"
            % (layout.label(self.c.lay.replay), self.t, minimized), flush=True)


def sha1_of(path):
  with open(path, "rb") as f:
    return hashlib.sha1(f.read()).hexdigest()


# ------------------------------------------------------------------ modes

def mode_campaign(c):
  summary = os.path.join(c.w, "summary.json")
  if os.path.exists(summary):
    os.unlink(summary)  # never leave an older campaign's figures as this one's
  rows, any_crash, left = [], False, c.a.time
  try:
    c.build_fuzzers()
    for i, t in enumerate(c.a.targets):
      secs = max(left // (len(c.a.targets) - i), 1)
      row = new_row(t)
      rows.append(row)
      if c.a.engine == "afl":
        any_crash |= afl.run_target(c, t, secs, row, PROG, progress_line, Triage)
      else:
        any_crash |= c.run_target(t, secs, row)
      left -= secs
  except procs.Interrupted as e:
    procs.kill_all()
    write_summary(c.w, rows, interrupted=True, engine=c.a.engine, zeal=c.a.zeal)
    write_report(c.w)
    print("%s: interrupted (%s); the summary holds the figures so far" % (PROG, e),
          file=sys.stderr)
    return 2
  write_summary(c.w, rows, interrupted=False, engine=c.a.engine, zeal=c.a.zeal)
  write_report(c.w)
  if any_crash:
    print("%s: CRASHES found (saved under %s/<target>/crashes/); to keep one as a regression, "
          "copy its min-*.txt to corpus/regressions/ (see corpus/README.md)"
          % (PROG, c.w))
    return 1
  print("%s: no crash" % PROG)
  return 0


def write_report(w, what="warning: "):
  """The page; a campaign's figures stand without it, so a page that cannot be written is a
  warning there (ci/campaign --report says why and fails)."""
  try:
    print("report.html: %s" % report_html.write_campaign(w, shutil.which("dot")), flush=True)
  except (OSError, ValueError) as e:
    print("%s: %sreport.html not written: %s" % (PROG, what, e), file=sys.stderr)
    return False
  return True


def mode_report(c):
  """The page alone, from what a campaign left in the work directory."""
  return 0 if write_report(c.w, what="") else 2


def mode_export(c):
  c.build_fuzzers()
  status = 0
  for t in c.a.targets:
    work = os.path.join(c.w, t, "corpus")
    if libfuzzer.count_files(work) == 0:
      print("%s: %s: no work corpus in %s (run a campaign first)" % (PROG, t, work))
      continue
    with tempfile.TemporaryDirectory() as tmp:
      seeds, merged = os.path.join(tmp, "seeds"), os.path.join(tmp, "merged")
      os.makedirs(merged)
      c.seed_corpus(t, seeds)
      log = os.path.join(c.logdir, "export-%s.log" % t)
      # The merge keeps a minimal set of inputs that together cover what the seeds and the work
      # corpus cover. Seeds go first, so an input only joins if it adds something.
      with open(log, "w") as f:
        rc, _ = procs.run([c.fuzzer(t), "-merge=1", "-timeout=25", "-rss_limit_mb=2048", merged,
                           seeds, work], stdout=f, stderr=subprocess.STDOUT)
      if rc != 0:
        with open(log, errors="replace") as f:
          print("\n".join(f.read().splitlines()[-20:]), file=sys.stderr)
        print("%s: %s: merge failed (log %s)" % (PROG, t, log), file=sys.stderr)
        status = 1
        continue
      seed_hashes = {sha1_of(os.path.join(seeds, s)) for s in os.listdir(seeds)}
      added = 0
      # schedule-tsan's inputs are schedule programs: they join corpus/schedule/.
      programs = layout.programs_of(t)
      for name in sorted(os.listdir(merged)):
        # Print and reassemble: the text's canonical bytes are what a seed would become.
        p = subprocess.run([c.replay, "--target", programs, "--print", "--bytes",
                            os.path.join(merged, name)], capture_output=True, text=True)
        if p.returncode != 0:
          continue
        txt, binp = os.path.join(tmp, "p.txt"), os.path.join(tmp, "p.bin")
        with open(txt, "w") as f:
          f.write(p.stdout)
        if subprocess.run([c.replay, "--target", programs, "--assemble", binp, txt],
                          capture_output=True).returncode != 0:
          continue
        h = sha1_of(binp)
        dest = os.path.join(paths.ROOT, "corpus", programs, "auto-%s.txt" % h[:12])
        if h in seed_hashes or os.path.exists(dest):
          continue
        with open(dest, "w") as f:
          f.write("# exported by ci/campaign --export on %s (libFuzzer -merge=1 of the work "
                  "corpus)\n%s" % (datetime.date.today().isoformat(), p.stdout))
        added += 1
      print("%s: %s: merged %d work inputs with %d seeds into %d; %d new text inputs in "
            "corpus/%s/" % (PROG, t, libfuzzer.count_files(work), libfuzzer.count_files(seeds),
                            libfuzzer.count_files(merged), added, programs))
  return status


# Inputs a replay process of the coverage run takes at once (see xargs_replay).
REPLAY_BATCH = 64


def xargs_replay(c, t, files, profiles, extra):
  """Replays files with coverage, REPLAY_BATCH to a process. A program target's batch runs
  --as-target: in one pool cache and scratch, as the fuzz target's process runs its inputs, so
  what a heap meets only after another (the spares a destroyed heap leaves) is counted as the
  fuzzer takes it. An input that crashes loses its batch's profile."""
  env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(profiles, "replay-%8m.profraw"))
  running = []
  as_target = ["--as-target"] if layout.programs_of(t) in layout.PROGRAM_TARGETS else []
  for k in range(0, len(files), REPLAY_BATCH):
    while len(running) >= c.a.jobs:
      running.pop(0).wait()
    free = ["--free"] if layout.is_tsan(t) else []
    running.append(subprocess.Popen([c.replay, "--target", layout.programs_of(t), "--quiet"] +
                                    free + as_target + extra + files[k:k + REPLAY_BATCH],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
  for p in running:
    p.wait()


def mode_coverage(c):
  if not (shutil.which("llvm-profdata-14") and shutil.which("llvm-cov-14")):
    raise cli.SetupError("llvm-profdata-14 and llvm-cov-14 are needed (package llvm-14)")
  print("%s: building with source-based coverage" % PROG, flush=True)
  bindir = c.build("build-cov", COV_FLAGS, [layout.label(c.lay.replay)])
  c.replay = os.path.join(bindir, c.lay.replay)
  cov = os.path.join(c.w, "coverage")
  shutil.rmtree(cov, ignore_errors=True)
  profiles = os.path.join(cov, "profiles")
  os.makedirs(profiles)
  # The replay tool runs each input through the same driver, collector and passes as the fuzz
  # target, without aborting at a violation (in batches: xargs_replay).
  had_work = False
  for t in c.a.targets:
    seeds = sorted(glob.glob(os.path.join(paths.ROOT, "corpus", layout.programs_of(t), "*.txt")))
    work_dir = os.path.join(c.w, t, "corpus")
    work = sorted(os.path.join(work_dir, n) for n in os.listdir(work_dir)) \
        if os.path.isdir(work_dir) else []
    had_work |= bool(work)
    print("%s: %s: running %d seeds and %d work corpus inputs" % (PROG, t, len(seeds), len(work)),
          flush=True)
    xargs_replay(c, t, seeds, profiles, [])
    xargs_replay(c, t, work, profiles, ["--bytes"])
  objects = [c.replay]
  if c.a.with_tests:
    # The unit tests too, the breaking tests among them: the passes' report paths run only when
    # a pass finds something, which a clean corpus never makes happen.
    print("%s: building and running the gc/ and invariants/ tests with coverage" % PROG,
          flush=True)
    c.build("build-cov-tests", COV_FLAGS, ["//gc:all", "//invariants:all"])
    env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(profiles, "test-%8m.profraw"))
    for test_bin in sorted(glob.glob(os.path.join(bindir, "gc", "*_test")) +
                           glob.glob(os.path.join(bindir, "invariants", "*_test"))):
      if not is_elf(test_bin):
        continue
      rc, _ = procs.run([test_bin], timeout_s=300, cwd=paths.ROOT, env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
      if rc != 0:
        print("%s: warning: %s failed under coverage" % (PROG, os.path.basename(test_bin)),
              file=sys.stderr)
      objects.append(test_bin)
  listing = os.path.join(cov, "profiles.list")
  with open(listing, "w") as f:
    f.write("".join(p + "\n" for p in glob.glob(os.path.join(profiles, "*.profraw"))))
  merged = os.path.join(cov, "merged.profdata")
  if subprocess.run(["llvm-profdata-14", "merge", "-sparse", "-f", listing, "-o",
                     merged]).returncode != 0:
    raise cli.SetupError("llvm-profdata-14 merge failed")
  obj_args = [objects[0]] + [a for o in objects[1:] for a in ("-object", o)]
  show_log = os.path.join(c.logdir, "coverage-show.log")
  # The objects name their sources /proc/self/cwd/... (Bazel's compile actions): without mapping
  # that to the tree, `show` finds no source and writes an index listing no file.
  with open(show_log, "w") as lf:
    if subprocess.run(["llvm-cov-14", "show"] + obj_args + [
        "-instr-profile=" + merged, "-format=html", "-output-dir=" + os.path.join(cov, "html"),
        "-show-line-counts-or-regions", "-ignore-filename-regex=(_test\\.c|external/)",
        "-path-equivalence=/proc/self/cwd," + paths.ROOT, "gc", "invariants", "fuzz"],
        cwd=paths.ROOT, stdout=subprocess.DEVNULL, stderr=lf).returncode != 0:
      raise cli.SetupError("llvm-cov-14 show failed (log %s)" % show_log)
    report = subprocess.run(["llvm-cov-14", "report"] + obj_args + [
        "-instr-profile=" + merged,
        "-ignore-filename-regex=(_test\\.c|external/|invariants/breaking)", "gc", "invariants",
        "fuzz"], cwd=paths.ROOT, capture_output=True, text=True)
    lf.write(report.stderr)
  if report.returncode != 0:
    raise cli.SetupError("llvm-cov-14 report failed")
  with open(os.path.join(cov, "report.txt"), "w") as f:
    f.write(report.stdout)
  what = "seeds" + (" + work corpus" if had_work else "") + \
      (" + the gc/ and invariants/ tests" if c.a.with_tests else "")
  print()
  print("==== line coverage (%s)" % what)
  for line in coverage_lines(report.stdout):
    print(line)
  result = branch_census(c, obj_args, merged, cov, what)
  print()
  for line in census.text_lines(result, what):
    print(line)
  print("HTML report: %s   (full table: %s; census: %s)" % (
      os.path.join(cov, "html", "index.html"), os.path.join(cov, "report.txt"),
      os.path.join(cov, "census.txt")))
  return 0


def branch_census(c, obj_args, merged, cov, what):
  """gc/'s branch census (census.py) from the merged profile: coverage/census.{json,txt}, and a
  `census` entry in the work directory's summary.json, which the report page shows."""
  export = subprocess.run(["llvm-cov-14", "export", "-format=text"] + obj_args + [
      "-instr-profile=" + merged, "-ignore-filename-regex=(_test\\.c|external/)",
      "-path-equivalence=/proc/self/cwd," + paths.ROOT, "gc"], cwd=paths.ROOT,
      capture_output=True, text=True)
  if export.returncode != 0:
    raise cli.SetupError("llvm-cov-14 export failed: %s" % export.stderr.strip()[-400:])
  try:
    result = census.run(export.stdout)
  except census.CensusError as e:
    raise cli.SetupError(str(e))
  result["what"] = what
  result["targets"] = list(c.a.targets)
  jsonout.write(os.path.join(cov, "census.json"), result)
  with open(os.path.join(cov, "census.txt"), "w") as f:
    f.write("\n".join(census.text_lines(result, what)) + "\n")
  summary_path = os.path.join(c.w, "summary.json")
  summary = report_html.load_json(summary_path)
  if not isinstance(summary, dict):
    summary = {"interrupted": False, "targets": []}
  summary["census"] = {k: result[k] for k in ("what", "targets", "scope", "taken", "sides",
                                              "percent", "files", "untaken", "excused",
                                              "stale_exclusions")}
  jsonout.write(summary_path, summary)
  report_html.write_campaign(c.w)
  return result


def coverage_lines(report):
  """Per-file and per-folder line coverage of gc/ and invariants/ from `llvm-cov report`'s
  table (columns: file, regions, missed, cover, functions, missed, executed, lines, missed
  lines, line cover, branches, missed, cover)."""
  out, totals = [], {}
  for line in report.splitlines():
    cols = line.split()
    if len(cols) < 10 or not cols[0].startswith(("gc/", "invariants/")):
      continue
    lines, missed = int(cols[7]), int(cols[8])
    out.append("  %-28s %5d/%-5d %6.1f%%" % (cols[0], lines - missed, lines,
                                           100.0 * (lines - missed) / lines if lines else 0))
    d = cols[0].split("/")[0]
    tl, tm = totals.get(d, (0, 0))
    totals[d] = (tl + lines, tm + missed)
  for d, (lines, missed) in sorted(totals.items()):
    out.append("  %-28s %5d/%-5d %6.1f%%  (all of %s/)" % (
        d + "/", lines - missed, lines, 100.0 * (lines - missed) / lines if lines else 0, d))
  return out


def is_elf(path):
  try:
    with open(path, "rb") as f:
      return f.read(4) == b"\x7fELF"
  except OSError:
    return False


def mode_tsan(c):
  label = layout.label(c.lay.stress_test)
  print("%s: building %s (--config=tsan)" % (PROG, label), flush=True)
  bindir = c.build("build-tsan", ["--config=tsan"], [label])
  log = os.path.join(c.logdir, "tsan-stress.log")
  print("%s: tsan: %ds of corpus/schedule/ on free threads (log %s)" % (PROG, c.a.time, log),
        flush=True)
  env = dict(os.environ, GCFUZZ_SCHEDULE_STRESS_SECONDS=str(c.a.time),
             TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1")
  with open(log, "w") as f:
    rc, _ = procs.run([os.path.join(bindir, c.lay.stress_test)] +
                      sorted(glob.glob(os.path.join(paths.ROOT, "corpus", "schedule", "*.txt"))),
                      env=env, stdout=f, stderr=subprocess.STDOUT)
  with open(log, errors="replace") as f:
    text = f.read()
  for line in text.splitlines():
    if line.startswith("stress:"):
      print(line)
  if rc == 0:
    print("%s: tsan: no report" % PROG)
    return 0
  v = verdict.classify(text, failed=True)
  print("%s: tsan: FAILED: %s (pass %s; full log %s)" % (PROG, v.kind, v.pass_, log),
        file=sys.stderr)
  return 1


THROUGHPUT_FMT = "%-13s %7s %10s %8s %15s %7s %7s"


def throughput_run(c, t, seed):
  """One run of target t alone on one core from its seeds, -seed=seed (None: libFuzzer's
  choice). Returns its figures, or None when the fuzzer stopped (a crash: its input is kept)."""
  d = tempfile.mkdtemp(prefix="throughput-%s." % t, dir=c.w)
  log = os.path.join(c.logdir, "throughput-%s%s.log" % (t, "" if seed is None else "-%d" % seed))
  seeds = c.seed_corpus(t, os.path.join(d, "corpus"))
  print("%s: throughput: %s, %ds on core %d from its %d seeds%s (log %s)"
        % (PROG, t, c.a.time, c.a.core, seeds, "" if seed is None else ", -seed=%d" % seed, log),
        flush=True)
  with open(log, "w") as f:
    rc, _ = procs.run(["taskset", "-c", str(c.a.core), c.fuzzer(t)] + c.options(t) +
                      ([] if seed is None else ["-seed=%d" % seed]) +
                      ["-max_total_time=%d" % c.a.time, "-print_final_stats=1",
                       "-artifact_prefix=" + d + "/", os.path.join(d, "corpus")],
                      stdout=f, stderr=subprocess.STDOUT)
  with open(log, errors="replace") as f:
    text = f.read()
  eps = libfuzzer.final_stat(text, "average_exec_per_sec")
  if rc != 0 or eps is None:
    print("\n".join(text.splitlines()[-30:]), file=sys.stderr)
    print("%s: throughput: %s stopped (exit %d): a crash is a finding, not a figure; its input "
          "is in %s (replay it with %s --target %s FILE)" % (PROG, t, rc, d, c.replay_of(t),
                                                              layout.programs_of(t)),
          file=sys.stderr)
    return None
  stats = libfuzzer.last_stats(text)
  run = {"seed": seed, "execs": libfuzzer.final_stat(text, "number_of_executed_units"),
         "exec_per_s": eps, "coverage": stats[1] if stats else 0,
         "corpus": libfuzzer.count_files(os.path.join(d, "corpus"))}
  shutil.rmtree(d)
  return run


def throughput_row(name, seconds, runs):
  """A target's figures over its runs: the median run by exec/s (the lower middle one of an even
  count), with the lowest and highest exec/s."""
  ranked = sorted(runs, key=lambda r: r["exec_per_s"])
  mid = ranked[(len(ranked) - 1) // 2]
  return dict(mid, name=name, seconds=seconds, exec_per_s_min=ranked[0]["exec_per_s"],
              exec_per_s_max=ranked[-1]["exec_per_s"], runs=runs)


def mode_throughput(c):
  """Each target alone on one core, from the seeds, --rounds times: libFuzzer's own average over
  each run (stat::average_exec_per_sec), the median of them the figure of the throughput table."""
  if shutil.which("taskset") is None:
    raise cli.SetupError("taskset not found (Debian package util-linux)")
  c.build_fuzzers()
  runs = {t: [] for t in c.a.targets}
  stopped = set()
  for k in range(1, c.a.rounds + 1):
    for t in c.a.targets:
      if t in stopped:
        continue
      run = throughput_run(c, t, None if c.a.rounds == 1 else k)
      if run is None:
        stopped.add(t)
      else:
        runs[t].append(run)
  rows, out = [], []
  for t in c.a.targets:
    if t in stopped or not runs[t]:
      rows.append(THROUGHPUT_FMT % (t, c.a.time, "?", "?", "", "?", "?"))
      continue
    r = throughput_row(t, c.a.time, runs[t])
    spread = "" if len(runs[t]) == 1 else "%d-%d" % (r["exec_per_s_min"], r["exec_per_s_max"])
    rows.append(THROUGHPUT_FMT % (t, c.a.time, r["execs"], r["exec_per_s"], spread,
                                  r["coverage"], r["corpus"]))
    del r["seed"]
    out.append(dict(r, core=c.a.core))
  print()
  print("==== throughput (one core, from the seeds%s%s)"
        % ("" if c.a.rounds == 1 else "; the median of %d rounds" % c.a.rounds,
           "" if c.a.zeal is None else "; under zeal %s" % c.a.zeal))
  print(THROUGHPUT_FMT % ("target", "seconds", "execs", "exec/s", "lowest-highest", "cov",
                          "corpus"))
  print("\n".join(rows))
  path = os.path.join(c.w, "throughput.json")
  jsonout.write(path, dict({"rounds": c.a.rounds, "targets": out},
                           **({} if c.a.zeal is None else {"zeal": c.a.zeal})))
  print("throughput.json: %s" % path)
  return 1 if stopped else 0


CENSUS_CHUNK = 400  # inputs per replay process: one process sums its inputs' events


def census_replay(c, t, files, as_what, done, total):
  """The events of `files` (read --text or --bytes), summed over replay processes of
  CENSUS_CHUNK inputs each; a progress line per process."""
  programs, events = 0, {}
  for i in range(0, len(files), CENSUS_CHUNK):
    chunk = files[i:i + CENSUS_CHUNK]
    run = subprocess.run([c.replay, "--target", t, "--quiet", "--events", as_what] + chunk,
                         capture_output=True, text=True, errors="replace")
    try:
      data = event_census.parse(run.stdout)
    except event_census.EventsError as e:
      raise cli.SetupError("%s: replay --events on %d inputs: %s (exit %d; %s)" % (
          t, len(chunk), e, run.returncode, run.stderr.strip()[-300:]))
    programs += data["programs"]
    for name, n in data["events"].items():
      events[name] = events.get(name, 0) + n
    done += len(chunk)
    print("%s: %s: %d of %d inputs replayed" % (PROG, t, done, total), flush=True)
  return {"programs": programs, "events": events}, done


def mode_census(c):
  """The rare events the seeds and the work corpus make happen, per target, one table per
  collector: gcfuzz's (gc.h, GC_EVENTS: the program targets, gcfuzz, gcfuzz-threads) into
  summary.json "events", another backend's (its rare_events) into "backend_events"[NAME]; each
  printed and on the report page."""
  print("%s: building the replay tool" % PROG, flush=True)
  bindir = c.build("build-census", [], [layout.label(c.lay.replay)])
  c.replay = os.path.join(bindir, c.lay.replay)
  per_target, had_work = {}, False
  for t in c.a.targets:
    seeds = sorted(glob.glob(os.path.join(paths.ROOT, "corpus", t, "*.txt")))
    work_dir = os.path.join(c.w, t, "corpus")
    work = sorted(os.path.join(work_dir, n) for n in os.listdir(work_dir)) \
        if os.path.isdir(work_dir) else []
    had_work |= bool(work)
    total = len(seeds) + len(work)
    seeds_data, done = census_replay(c, t, seeds, "--text", 0, total)
    work_data, _ = census_replay(c, t, work, "--bytes", done, total) if work else (
        {"programs": 0, "events": {}}, done)
    for name, n in work_data["events"].items():
      seeds_data["events"][name] = seeds_data["events"].get(name, 0) + n
    seeds_data["programs"] += work_data["programs"]
    per_target[t] = seeds_data
  what = "seeds" + (" + work corpus" if had_work else "")
  summary_path = os.path.join(c.w, "summary.json")
  summary = report_html.load_json(summary_path)
  if not isinstance(summary, dict):
    summary = {"interrupted": False, "targets": []}
  for collector, result in event_census.by_collector(per_target, layout.backend_of).items():
    result["what"] = what
    print()
    for line in event_census.text_lines(result, what):
      print(line)
    if collector == "gcfuzz":
      summary["events"] = result
    else:
      summary.setdefault("backend_events", {})[collector] = result
  jsonout.write(summary_path, summary)
  report_html.write_campaign(c.w)
  print("summary.json: %s   report: %s" % (summary_path, os.path.join(c.w, "report.html")))
  return 0


MODES = {"campaign": mode_campaign, "export": mode_export, "coverage": mode_coverage,
         "census": mode_census,
         "tsan": mode_tsan, "throughput": mode_throughput, "report": mode_report}


def main(argv):
  a = parse_args(argv)
  procs.install_signal_handlers()
  os.chdir(paths.ROOT)
  try:
    os.makedirs(a.workdir, exist_ok=True)
  except OSError as e:
    raise cli.UsageError("cannot create %s: %s" % (a.workdir, e.strerror))
  w = os.path.realpath(a.workdir)
  try:
    lock.lock_dir(w, "ci/campaign")
  except lock.Busy as e:
    print("%s: %s" % (PROG, e), file=sys.stderr)
    return 2
  c = Campaign(a, w, layout.current())
  os.makedirs(c.logdir, exist_ok=True)

  def body():
    need = "report" if a.mode == "report" else "campaign-afl" if a.engine == "afl" else "campaign"
    tools.ensure(need, PROG, os.path.join(c.logdir, "apt.log"), allowed=not a.no_install)
    if a.mode != "report":
      tools.mmap_warning(PROG)
    return MODES[a.mode](c)

  return cli.guarded(PROG, body)
