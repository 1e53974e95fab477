"""ci/mutants/run: the bug zoo (ci/mutants/README.md). The patches and their headers are read by
zoo.py; this module runs them."""
import os
import queue
import shutil
import subprocess
import sys
import threading
import time

from . import bazel, cli, jsonout, layout, libfuzzer, lock, paths, procs, tools, verdict, zoo

PROG = "ci/mutants"

USAGE = """\
Usage: ci/mutants/run [options]

The bug zoo (ci/mutants/ holds the patches; this script is its command). For each mutant
ci/mutants/NN-name.patch:
  1. apply it to a scratch copy of the tree (patch -p1, no fuzz; a patch that no longer
     applies is a failure);
  2. build what its header's `run:` line needs: the fuzz targets with the campaign's flags
     (--config=fuzz, -O2: libFuzzer + ASan/UBSan; schedule-tsan --config=tsan-fuzz), the tests
     with the same flags, and the `-tsan` steps with --config=tsan;
  3. run those steps in order, sharing one time budget, and stop at the first finding:
       fuzz:T          libFuzzer target T (//fuzz/targets:T_fuzzer) from the seed corpus
                       (corpus/T/*.txt assembled with replay --assemble), fixed -seed,
                       for what is left of the budget; it stops at the first crash;
                       fuzz:schedule-tsan is the schedule programs on free threads under
                       TSan (//fuzz/targets:schedule_tsan_fuzzer, --config=tsan-fuzz,
                       corpus/schedule/): a data race is its crash
       test:P/N        the test binary //P:N once (ASan+UBSan)
       test-tsan:P/N   the same under ThreadSanitizer
       repeat:P/N      //P:N again and again until it fails or the budget is spent (thread
       repeat-tsan:P/N   schedules differ from run to run)
     One test run longer than 20 s is a hang (a finding, by "timeout"); on a loaded machine
     the limit grows with the load average per core when the run starts (at most 8x).
  4. record killed or survived; what caught it, read from the first GCFUZZ-VERDICT line of
     the step's output (its pass: reach, swept, checkmark, model, driver, or a sanitizer; for
     a test that breaks heaps on purpose only sanitizer verdicts count), else from the tools'
     own markers (libFuzzer's timeout/oom/deadly signal: fuzzer; the sanitizer runtimes'
     report headers: asan, ubsan, msan, tsan, lsan), else test (test.failed) or timeout
     (timeout.hang); the target or test; seconds from the first step's start to the finding
     (builds not counted);
  5. revert the patch (the touched files are copied back), so the next build is incremental.
The baseline runs every step any selected mutant uses, each with the whole budget, on the
unpatched tree; it must find nothing. Two jobs run at a time (two scratch workspaces, each
with its own Bazel server, sharing a disk cache), the baseline first.

Prints a table and writes ci/mutants/out/results.json:
  {"baseline_findings": 0, "budget": 60, "mutants": [{"name": "...", "class": 1,
   "killed": true, "by": "swept", "kind": "swept.workbuf-lost", "target": "graph",
   "seconds": 3.2, "status": "killed", "expected": "..."}]}
and every job's log in ci/mutants/out/logs/.

Options:
  --backend NAME   the collector whose zoo runs: gcfuzz (the default: ci/mutants/*.patch
                   against this tree), lua or bdwgc (ci/mutants/NAME/*.patch against
                   Debian's source package of that collector, fetched by
                   third_party/debian/fetch-source; each mutant's patched copy of the
                   source is built in through the repository rule's variable, e.g.
                   GCFUZZ_LUA_SRC). Results go to ci/mutants/out/NAME/
  --budget S       seconds per mutant (default 60; 15 with --quick)
  --only NAME      only this mutant (its number, its name, or NN-name); repeatable
  --quick          the mutants whose header says `quick: yes` (known to die in seconds), with
                   the shorter budget: the CI zoo
  --matrix         after the measured steps, also run every test once (and the tsan-tagged
                   ones under TSan) on each mutant, to fill the kill matrix (results.json
                   "also")
  --no-baseline    skip the baseline run
  --no-seeds       fuzz steps start from an empty corpus instead of the seeds: how fast
                   libFuzzer itself finds each bug, not the seed corpus
  --jobs N         jobs at a time, 1 or 2 (default 2)
  --seed N         libFuzzer -seed (default 1)
  --rev REV        test the committed revision REV instead of the working tree
  --tree DIR       test the tree in DIR (a checkout or an export) instead of the working tree
  --scratch DIR    scratch workspaces (default ${TMPDIR:-/tmp}/gcfuzz-mutants); kept between
                   runs so builds stay incremental
  --keep-servers   leave the scratch workspaces' Bazel servers running at the end
  --no-install     do not try to install missing tools
  --via TARGET     gcfuzz's zoo through another target of the same collector: every fuzz: step
                   of a program target becomes fuzz:TARGET and the test: steps are dropped, so
                   only that target's checks can kill (`--via gcfuzz`: the zoo through the
                   backend interface, the backend-neutral model and the gcfuzz backend's deep
                   check; a mutant the schedule target measures goes through TARGET-threads,
                   its domains on threads under the scheduler). Results go to
                   ci/mutants/out/via-TARGET/
  -h, --help       this text

First installs what is missing (clang, libclang-rt-14-dev, llvm, bazel-bootstrap, patch, git)
with apt-get, as root or through sudo.

Every argument is checked before anything is touched: a bad one leaves the previous run's
ci/mutants/out/ as it was. GCFUZZ_DISK_CACHE=DIR replaces the scratch disk cache.

Exit status: 0 every mutant killed and a clean baseline; 1 a mutant survived, a patch no
longer applies or does not build, or the baseline found something; 2 usage or setup error,
or interrupted.
"""

# One test run may take this long, whatever is left of the budget: a test still running then is
# stopped and reported as a hang. The slowest test, threads_test under TSan, takes about 5 s
# alone and 10 s beside another job; a deadlocked collector spins forever, so this is also how
# long a deadlock takes to be detected.
HANG_S = 20
# ... on a quiet machine. A loaded one stretches every run alike (a zoo beside a campaign, or
# several at once: threads_test under TSan took 11-59 s at a load of 16 on 2 cores, no hang in
# any), so the limit grows with the load per core when the run starts, up to this factor.
HANG_SCALE_MAX = 8


def hang_limit_s(load1=None, cores=None):
  """HANG_S scaled by the 1-minute load average per core (never below 1x, at most
  HANG_SCALE_MAX x)."""
  if load1 is None:
    load1 = os.getloadavg()[0]
  if cores is None:
    cores = os.cpu_count() or 1
  return HANG_S * min(float(HANG_SCALE_MAX), max(1.0, load1 / cores))
# After a finding, the process gets this long to finish its report.
GRACE_S = 3
POLL_S = 0.1

HERE = os.path.join(paths.CI, "mutants")


def mutant_dir(backend):
  """Where a backend's zoo lives: gcfuzz's in ci/mutants/, another collector's in a folder of
  its own name there (its patches are against that collector's Debian source)."""
  return HERE if backend == "gcfuzz" else os.path.join(HERE, backend)


def matrix_tests(lay):
  """The tests --matrix runs: every cc_test of gc/ and invariants/, and the corpus replay."""
  plain = ["gc/alloc_test", "gc/conservative_test", "gc/custom_test", "gc/destroy_test",
           "gc/finalizer_test", "gc/limit_test", "gc/mark_test", "gc/params_test",
           "gc/roots_test", "gc/domain_test", "invariants/checkmark_test",
           "invariants/domains_test", "invariants/model_test", "invariants/reach_test",
           "invariants/rootset_test", "invariants/swept_test", "invariants/verify_test",
           "invariants/random_test", "invariants/threads_test", lay.corpus_test, lay.stress_test]
  tsan = ["gc/domain_test", "invariants/threads_test", lay.stress_test]
  return ["test:" + t for t in plain] + ["test-tsan:" + t for t in tsan]


def parse_args(argv):
  p = cli.Parser(PROG, USAGE)
  p.add_argument("--budget")
  p.add_argument("--only", action="append", default=[])
  p.add_argument("--quick", action="store_true")
  p.add_argument("--matrix", action="store_true")
  p.add_argument("--no-baseline", action="store_true")
  p.add_argument("--no-seeds", action="store_true")
  p.add_argument("--jobs", default="2")
  p.add_argument("--seed", default="1")
  p.add_argument("--rev")
  p.add_argument("--tree")
  p.add_argument("--scratch", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   "gcfuzz-mutants"))
  p.add_argument("--keep-servers", action="store_true")
  p.add_argument("--no-install", action="store_true")
  p.add_argument("--backend", default="gcfuzz")
  p.add_argument("--via")
  a = p.parse(argv)
  if a.via is not None and (a.backend != "gcfuzz" or a.via not in layout.FUZZ_TARGETS or
                            layout.backend_of(a.via) != "gcfuzz"):
    raise cli.UsageError("--via %s: a fuzz target of gcfuzz's collector, with --backend gcfuzz "
                         "(targets: %s)" % (a.via, " ".join(
                             t for t in layout.FUZZ_TARGETS if layout.backend_of(t) == "gcfuzz")))
  if a.backend not in layout.BACKENDS:
    raise cli.UsageError("unknown backend '%s' (backends: %s)"
                         % (a.backend, " ".join(layout.BACKENDS)))
  a.budget = cli.decimal(a.budget or ("15" if a.quick else "60"), "--budget", minimum=1)
  if a.jobs not in ("1", "2"):
    raise cli.UsageError("--jobs: 1 or 2 (the machine has two cores), got '%s'" % a.jobs)
  a.jobs = int(a.jobs)
  a.seed = cli.decimal(a.seed, "--seed")
  if a.rev and a.tree:
    raise cli.UsageError("--rev and --tree: give one tree to test")
  if a.tree and not os.path.isdir(os.path.join(a.tree, "gc")):
    raise cli.UsageError("--tree: %s is not a gcfuzz tree (no gc/)" % a.tree)
  if a.rev and subprocess.run(["git", "-C", paths.ROOT, "rev-parse", "--verify", "--quiet",
                               a.rev + "^{commit}"], capture_output=True).returncode != 0:
    raise cli.UsageError("--rev: '%s' is not a revision of this repository" % a.rev)
  a.dir = mutant_dir(a.backend)
  mutants = zoo.all_mutants(a.dir) if os.path.isdir(a.dir) else []
  if not mutants:
    raise cli.UsageError("no mutants in %s (*.patch)" % a.dir)
  try:
    a.selected = zoo.select(mutants, a.only, a.quick)
  except ValueError as e:
    raise cli.UsageError(str(e))
  if a.via is not None:
    for m in a.selected:
      m.steps = zoo.steps_via(m.steps, a.via, layout.THREADED_TARGETS)
  return a


def sh(cmd, log=None, cwd=None):
  """A shell pipeline (tar | tar); True if it succeeded."""
  return subprocess.run(cmd, shell=True, cwd=cwd, stdout=log or subprocess.DEVNULL,
                        stderr=log or subprocess.DEVNULL).returncode == 0


class Zoo:
  def __init__(self, a, lay):
    self.a, self.lay = a, lay
    self.out = os.path.join(HERE, "out") if a.backend == "gcfuzz" else \
        os.path.join(HERE, "out", a.backend)
    if a.via is not None:
      self.out = os.path.join(HERE, "out", "via-" + a.via)
    # Another collector's zoo: its Debian source, pristine (fetched once), and the variable that
    # points the repository rule at a copy of it (third_party/debian/debian_source.bzl).
    self.source = layout.BACKEND_SOURCES.get(a.backend)
    self.logs = os.path.join(self.out, "logs")
    self.scratch = os.path.realpath(a.scratch)
    self.pristine = os.path.join(self.scratch, "pristine-" + a.backend)
    self.tree = os.path.join(self.scratch, "tree")
    cache = os.path.join(self.scratch, "disk-cache")
    self.fuzz_flags = ["--config=fuzz"] + bazel.cache_opts(cache)
    self.tsan_flags = ["--config=tsan"] + bazel.cache_opts(cache)
    self.tsan_fuzz_flags = ["--config=tsan-fuzz"] + bazel.cache_opts(cache)
    self.workspaces = [os.path.join(self.scratch, "ws%d" % i) for i in range(a.jobs)]
    self.noapply = set()
    self.stop = threading.Event()
    self.results = {}
    self.print_lock = threading.Lock()

  def say(self, text):
    with self.print_lock:
      print(text, flush=True)

  # ---------------------------------------------------------------- the scratch tree

  def copy_tree(self):
    """The tree under test into scratch/tree: the working tree (tracked and untracked files,
    not the ignored ones), a committed revision (--rev) or a directory (--tree)."""
    shutil.rmtree(self.tree, ignore_errors=True)
    os.makedirs(self.tree)
    excl = "--exclude='./bazel-*' --exclude=./.gcfuzz-work --exclude=./ci/mutants/out"
    t = "'%s'" % self.tree
    if self.a.tree:
      ok = sh("tar %s -cf - . | tar -x -C %s" % (excl, t), cwd=self.a.tree)
    elif self.a.rev:
      ok = sh("git archive --format=tar '%s' | tar -x -C %s" % (self.a.rev, t), cwd=paths.ROOT)
    elif subprocess.run(["git", "rev-parse", "--git-dir"], cwd=paths.ROOT,
                        capture_output=True).returncode == 0:
      ok = sh("git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -x -C %s" % t,
              cwd=paths.ROOT)
    else:
      ok = sh("tar %s -cf - . | tar -x -C %s" % (excl, t), cwd=paths.ROOT)
    if not ok:
      raise cli.SetupError("cannot copy the tree under test")

  def sync_workspace(self, ws):
    """Each workspace is a full copy of the tree at a fixed path, so its Bazel output base (and
    the builds in it) survive from one run to the next."""
    os.makedirs(ws, exist_ok=True)
    for n in os.listdir(ws):
      if not n.startswith("bazel-"):
        p = os.path.join(ws, n)
        shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    if not sh("tar -cf - . | tar -x -C '%s'" % ws, cwd=self.tree):
      raise cli.SetupError("cannot copy the tree into %s" % ws)

  def patch(self, m, directory, log, dry_run=False):
    cmd = ["patch", "-p1", "-F0", "--batch", "--forward", "-s", "-d", directory, "-i", m.path]
    if dry_run:
      cmd.insert(1, "--dry-run")
    with open(log, "a") as f:
      return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode == 0

  def fetch_source(self):
    """The backend's pristine Debian source tree (fetch-source caches it and checks the cache;
    this is a copy)."""
    pkg, version, _ = self.source
    log = os.path.join(self.logs, "fetch-source.log")
    with open(log, "w") as f:
      if subprocess.run(["bash", os.path.join(self.tree, "third_party", "debian", "fetch-source"),
                         pkg, version, self.pristine], stdout=f,
                        stderr=subprocess.STDOUT).returncode != 0:
        raise cli.SetupError("cannot fetch Debian's %s=%s (log %s)" % (pkg, version, log))

  def source_copy(self, ws, base, m, log):
    """A fresh copy of the pristine source for one job, with m planted (None: the baseline);
    None if the patch does not apply. Each job gets a path of its own, so the repository rule
    sees its variable change and Bazel takes the new tree."""
    parent = ws + ".src"
    shutil.rmtree(parent, ignore_errors=True)
    os.makedirs(parent)
    src = os.path.join(parent, base)
    shutil.copytree(os.path.realpath(self.pristine), src, symlinks=True)
    if m is not None and not self.patch(m, src, log):
      return None
    return {self.source[2]: src}

  # ---------------------------------------------------------------- steps

  def labels(self, steps, config):
    out = set()
    for s in steps:
      kind, _, what = s.partition(":")
      if kind == "fuzz" and layout.config_of(what) == config:
        out.add(layout.label(self.lay.fuzzer(what)))
      elif (config == "fuzz" and kind in ("test", "repeat")) or \
          (config == "tsan" and kind in ("test-tsan", "repeat-tsan")):
        out.add(layout.label(what))
    return sorted(out)

  def test_cmd(self, ws, bindir, t):
    corpus = lambda sub: sorted(glob_txt(os.path.join(ws, "corpus", sub)))
    cmd = [os.path.join(bindir, t)]
    if t == self.lay.corpus_test:
      for target in layout.PROGRAM_TARGETS:
        cmd += ["--target", target, "--seeds"] + corpus(target)
        if target == "graph":
          cmd += ["--regressions"] + corpus("regressions")
    elif t == self.lay.stress_test:
      cmd += corpus("schedule")
    return cmd

  def watched(self, secs, log, cmd, cwd, env, sanitizers_only):
    """Runs cmd until it exits, a finding appears in its output, or secs pass. Returns
    (finding or None, seconds until the finding or the exit)."""
    start = time.monotonic()
    with open(log, "a") as f:
      p = procs.spawn(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    found_at, hung = None, False
    try:
      while p.poll() is None and not self.stop.is_set():
        t = time.monotonic() - start
        if found_at is None:
          with open(log, errors="replace") as f:
            text = f.read()
          if verdict.classify(text, failed=False, sanitizers_only=sanitizers_only):
            found_at = t
        if found_at is not None and t >= found_at + GRACE_S:
          break
        if found_at is None and t >= secs:
          hung = True
          found_at = t
          break
        time.sleep(POLL_S)
    finally:
      procs.kill(p)
    rc = p.returncode
    if hung:
      append(log, "== stopped after %ds: a hang\n" % secs)
    if found_at is None:
      found_at = time.monotonic() - start
    with open(log, errors="replace") as f:
      text = f.read()
    failed = (rc != 0 and rc is not None) or hung
    v = verdict.classify(text, failed=failed, hung=hung, sanitizers_only=sanitizers_only)
    return v, round(found_at, 1)

  def run_step(self, ws, bins, step, remaining, log):
    kind, _, what = step.partition(":")
    open(log, "w").close()
    env = dict(os.environ)
    if kind == "fuzz":
      corpus = ws + ".fuzz-corpus"
      shutil.rmtree(corpus, ignore_errors=True)
      os.makedirs(corpus)
      env.pop("GCFUZZ_PARAMS", None)
      opts = libfuzzer.options_flags(os.path.join(ws, self.lay.options_file(what)),
                                     os.path.join(ws, self.lay.options_dir()))
      # libFuzzer stops itself at the first crash, and -timeout catches an input that hangs.
      cmd = [os.path.join(bins[layout.config_of(what)], self.lay.fuzzer(what)),
             "-seed=%d" % self.a.seed,
             "-max_total_time=%d" % remaining, "-timeout=10", "-rss_limit_mb=2048",
             "-print_final_stats=1", "-artifact_prefix=" + corpus + "/"] + opts + \
            [corpus, os.path.join(self.scratch, "seeds", layout.programs_of(what))]
      return self.watched(remaining + 30, log, cmd, ws, env, sanitizers_only=False)
    env = test_env()
    bindir = bins["tsan" if kind.endswith("-tsan") else "fuzz"]
    breaking = what in zoo.BREAKING_TESTS
    cmd = self.test_cmd(ws, bindir, what)
    if kind in ("test", "test-tsan"):
      return self.watched(hang_limit_s(), log, cmd, ws, env, breaking)
    runs, total = 0, 0.0
    while not self.stop.is_set():
      runs += 1
      run_log = log + ".run"
      open(run_log, "w").close()
      v, secs = self.watched(hang_limit_s(), run_log, cmd, ws, env, breaking)
      total += secs
      with open(run_log, errors="replace") as f, open(log, "a") as out:
        if v is not None:
          out.write(f.read() + "(run %d)\n" % runs)
      os.unlink(run_log)
      if v is not None:
        return v, round(total, 1)
      if total >= remaining:
        break
    with open(log, "a") as out:
      out.write("%d runs, no failure\n" % runs)
    return None, round(total, 1)

  # ---------------------------------------------------------------- one job

  def build(self, ws, steps, log, env=None):
    for config, flags in (("fuzz", self.fuzz_flags), ("tsan", self.tsan_flags),
                          ("tsan-fuzz", self.tsan_fuzz_flags)):
      labels = self.labels(steps, config)
      if labels and bazel.run(["build"] + bazel.OPTS + flags + labels, log, cwd=ws,
                              append=True, env=env) != 0:
        return False
    return True

  def run_job(self, ws, bins, m):
    """m is a Mutant or None (the baseline). Returns its result row."""
    base = m.base if m else "baseline"
    log = os.path.join(self.logs, base + ".log")
    row = {"name": m.name if m else "baseline", "class": m.class_ if m else "-",
           "status": "survived", "by": "-", "kind": "-", "target": "-", "seconds": None,
           "also": [], "expected": (m.expected if m else "nothing") or "-"}
    steps = m.steps if m else self.baseline
    open(log, "w").close()
    touched = []
    env = None
    if self.source is not None:
      # Another collector: the patch goes into a copy of its source, not into this tree.
      if m and m.path in self.noapply:
        row["status"] = "no-apply"
        return row
      env = self.source_copy(ws, base, m, log)
      if env is None:
        row["status"] = "no-apply"
        return row
      m_tree = None
    else:
      m_tree = m
    if m_tree:
      if m.path in self.noapply:
        row["status"] = "no-apply"
        with open(os.path.join(self.logs, base + ".apply.log")) as f, open(log, "a") as out:
          out.write(f.read())
        return row
      touched = m.touched()
      if not self.patch(m, ws, log):
        row["status"] = "no-apply"
        self.restore(ws, touched)
        return row
    try:
      matrix = self.a.matrix and m and env is None
      every = list(steps) + (matrix_tests(self.lay) if matrix else [])
      with open(log, "a") as f:
        f.write("== build %s\n" % time.strftime("%H:%M:%S", time.gmtime()))
      if not self.build(ws, every, log, env):
        row["status"] = "build-failed"
        return row
      step_log = os.path.join(self.logs, base + ".step")
      elapsed = 0.0
      for step in steps:
        remaining = self.a.budget if not m else self.a.budget - int(elapsed)
        if remaining <= 0:
          append(log, "== %s: skipped (budget spent)\n" % step)
          continue
        append(log, "== %s (%ds left) %s\n" % (step, remaining,
                                                time.strftime("%H:%M:%S", time.gmtime())))
        v, secs = self.run_step(ws, bins, step, remaining, step_log)
        append_file(log, step_log)
        if self.stop.is_set():
          raise procs.Interrupted(2)
        if not m:
          if v is not None:
            row["also"].append("%s:%s:%s" % (zoo.target_of(step), v.pass_, v.kind))
            row["status"] = "found"
          continue
        elapsed += secs
        if v is not None:
          row.update(status="killed", by=v.pass_, kind=v.kind, target=zoo.target_of(step),
                     seconds=round(elapsed, 1))
          append(log, "== killed by %s (%s) in %s at %.1fs\n" % (v.pass_, v.kind, row["target"],
                                                                 elapsed))
          break
      if not m and row["status"] != "found":
        row["status"] = "clean"
      # The kill matrix: every test once, whatever the measured steps found.
      if self.a.matrix and m and env is None:
        for step in matrix_tests(self.lay):
          append(log, "== matrix %s\n" % step)
          v, _ = self.run_step(ws, bins, step, hang_limit_s(), step_log)
          append_file(log, step_log)
          if v is not None:
            row["also"].append("%s:%s:%s" % (zoo.target_of(step), v.pass_, v.kind))
      if os.path.exists(step_log):
        os.unlink(step_log)
      return row
    finally:
      self.restore(ws, touched)

  def restore(self, ws, touched):
    """Copies the patched files back from the pristine tree, so the next build is incremental."""
    for f in touched:
      shutil.copyfile(os.path.join(self.tree, f), os.path.join(ws, f))

  def worker(self, ws, jobs):
    bins = {"fuzz": bazel.bazel_bin(bazel.OPTS + self.fuzz_flags, cwd=ws),
            "tsan": bazel.bazel_bin(bazel.OPTS + self.tsan_flags, cwd=ws),
            "tsan-fuzz": bazel.bazel_bin(bazel.OPTS + self.tsan_fuzz_flags, cwd=ws)}
    name = os.path.basename(ws)
    while not self.stop.is_set():
      try:
        m = jobs.get_nowait()
      except queue.Empty:
        return
      base = m.base if m else "baseline"
      self.say("  %s %s: %s" % (time.strftime("%H:%M:%S", time.gmtime()), name, base))
      try:
        row = self.run_job(ws, bins, m)
      except procs.Interrupted:
        return
      self.results[base] = row
      self.say("  %s %s: %s %s %s %s %ss" % (time.strftime("%H:%M:%S", time.gmtime()),
                                             row["name"], row["status"], row["by"], row["kind"],
                                             row["target"], row["seconds"]
                                             if row["seconds"] is not None else "-"))

  # ---------------------------------------------------------------- the run

  def prepare(self):
    """Copies the tree into each workspace, builds the replay tool and the fuzz targets in the
    first, and assembles the seed corpora."""
    for ws in self.workspaces:
      self.sync_workspace(ws)
    log = os.path.join(self.logs, "prepare.log")
    self.say("%s: building the unpatched tree (log %s)" % (PROG, log))
    fuzz_targets = sorted({s.partition(":")[2] for s in self.baseline if s.startswith("fuzz:")})
    labels = [layout.label(self.lay.replay)] + [layout.label(self.lay.fuzzer(t))
                                                for t in fuzz_targets
                                                if layout.config_of(t) == layout.FUZZ_CONFIG]
    env = None
    if self.source is not None:
      env = self.source_copy(self.workspaces[0], "prepare", None, log)
    if bazel.run(["build"] + bazel.OPTS + self.fuzz_flags + labels, log,
                 cwd=self.workspaces[0], env=env) != 0:
      with open(log, errors="replace") as f:
        print("\n".join(bazel.build_errors(f.read(), 40)), file=sys.stderr)
      raise cli.SetupError("the unpatched tree does not build (log %s)" % log)
    bindir = bazel.bazel_bin(bazel.OPTS + self.fuzz_flags, cwd=self.workspaces[0])
    if bindir is None:
      raise cli.SetupError("bazel info failed")
    seeds = os.path.join(self.scratch, "seeds")
    shutil.rmtree(seeds, ignore_errors=True)
    # By the programs they run: schedule-tsan starts from the schedule seeds.
    for t in sorted({layout.programs_of(t) for t in fuzz_targets}):
      os.makedirs(os.path.join(seeds, t))
      if self.a.no_seeds:
        continue
      for f in sorted(glob_txt(os.path.join(self.tree, "corpus", t))):
        out = os.path.join(seeds, t, os.path.basename(f)[:-4])
        with open(log, "a") as lf:
          if subprocess.run([os.path.join(bindir, self.lay.replay), "--target", t, "--assemble",
                             out, f], stdout=lf, stderr=subprocess.STDOUT).returncode != 0:
            raise cli.SetupError("%s does not assemble (log %s)" % (f, log))

  def shutdown_servers(self):
    if self.a.keep_servers:
      return
    for ws in self.workspaces:
      if os.path.isdir(ws):
        subprocess.run(["bazel", "shutdown"], cwd=ws, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

  def run(self):
    a = self.a
    self.baseline = zoo.baseline_steps(a.selected)
    self.copy_tree()
    if self.source is not None:
      self.fetch_source()
    # Check every selected patch against the pristine tree (or source) before any build.
    target = self.tree if self.source is None else os.path.realpath(self.pristine)
    for m in a.selected:
      if not self.patch(m, target, os.path.join(self.logs, m.base + ".apply.log"),
                        dry_run=True):
        self.noapply.add(m.path)
    self.say("%s: %d mutant(s), budget %ds each, %d at a time; scratch %s%s"
             % (PROG, len(a.selected), a.budget, a.jobs, self.scratch,
                "; fuzzing from an empty corpus" if a.no_seeds else ""))
    if not a.no_baseline:
      self.say("%s: baseline steps: %s" % (PROG, " ".join(self.baseline)))
    self.prepare()
    jobs = queue.Queue()
    if not a.no_baseline:
      jobs.put(None)
    for m in a.selected:
      jobs.put(m)
    threads = [threading.Thread(target=self.worker, args=(ws, jobs), daemon=True)
               for ws in self.workspaces]
    for t in threads:
      t.start()
    try:
      for t in threads:
        while t.is_alive():
          t.join(0.5)
    except procs.Interrupted:
      self.stop.set()
      procs.kill_all()
      for t in threads:
        t.join(5)
      self.shutdown_servers()
      raise
    self.shutdown_servers()
    return self.report()

  def report(self):
    a = self.a
    print()
    print("==== the zoo (budget %ds per mutant; logs in %s/)" % (a.budget, self.logs))
    fmt = "%-34s %5s  %-9s %-10s %-34s %-28s %7s"
    print(fmt % ("mutant", "class", "result", "by", "kind", "target", "seconds"))
    rows, failed = [], 0
    for m in a.selected:
      r = self.results.get(m.base)
      if r is None:
        r = {"name": m.name, "class": m.class_, "status": "not-run", "by": "-", "kind": "-",
             "target": "-", "seconds": None, "also": [], "expected": m.expected or "-"}
      rows.append(r)
      print(fmt % (r["name"], r["class"], r["status"], r["by"], r["kind"], r["target"],
                   r["seconds"] if r["seconds"] is not None else "-"))
      if r["status"] != "killed":
        failed += 1
    base = self.results.get("baseline")
    base_status = "skipped" if a.no_baseline else (base["status"] if base else "not-run")
    base_findings = None
    if not a.no_baseline:
      base_findings = 0 if base_status == "clean" else (
          len(base["also"]) if base and base["also"] else 1)
      print("baseline (every step above, %ds each, unpatched): %s%s"
            % (a.budget, base_status,
               " (%d finding(s))" % base_findings if base_findings else ""))
      if base_status != "clean":
        print("  baseline findings: %s (log %s)" % (" ".join(base["also"]) if base else "-",
                                                    os.path.join(self.logs, "baseline.log")))
    killed = [r["seconds"] for r in rows if r["status"] == "killed"]
    if killed:
      print("killed %d of %d; median seconds to detection %s; slowest %s"
            % (len(killed), len(rows), zoo.median(killed), max(killed)))
    jsonout.write(os.path.join(self.out, "results.json"), results_json(a, rows, base_findings,
                                                                       base_status))
    print("results: %s" % os.path.join(self.out, "results.json"))
    status = 0
    if failed:
      print("%s: %d mutant(s) not killed (survived, no-apply or build-failed)" % (PROG, failed))
      status = 1
    if not a.no_baseline and base_status != "clean":
      print("%s: the baseline found something: the harness or the tree is broken, not only "
            "the mutants" % PROG)
      status = 1
    if status == 0:
      print("%s: every mutant killed, baseline clean" % PROG)
    return status


def results_json(a, rows, base_findings, base_status):
  mutants = []
  for r in rows:
    cls = int(r["class"]) if r["class"].isdigit() else r["class"]
    mutants.append({"name": r["name"], "class": cls, "killed": r["status"] == "killed",
                    "status": r["status"], "by": r["by"], "kind": r["kind"],
                    "target": r["target"], "seconds": r["seconds"], "expected": r["expected"],
                    "also": r["also"]})
  return {"baseline_findings": base_findings, "baseline": base_status, "budget": a.budget,
          "seed": a.seed, "seed_corpus": not a.no_seeds, "mutants": mutants}


def test_env():
  """The tests' environment: .bazelrc's test settings, and no developer parameters. The
  schedule corpus's free-thread stress gets 15 s a run, inside the 20 s a test run may take."""
  env = dict(os.environ)
  for k in ("GCFUZZ_PARAMS", "GCFUZZ_STRESS_SECONDS", "GCFUZZ_VERIFY_DOT"):
    env.pop(k, None)
  env.update(GCFUZZ_SCHEDULE_STRESS_SECONDS="15", ASAN_OPTIONS="detect_leaks=1",
             UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
             TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1")
  return env


def glob_txt(directory):
  try:
    return [os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".txt")]
  except FileNotFoundError:
    return []


def append(path, text):
  with open(path, "a") as f:
    f.write(text)


def append_file(path, other):
  with open(other, errors="replace") as src, open(path, "a") as dst:
    shutil.copyfileobj(src, dst)


def main(argv):
  a = parse_args(argv)  # every argument checked before anything is touched
  procs.install_signal_handlers()
  z = Zoo(a, layout.current())
  try:
    os.makedirs(z.scratch, exist_ok=True)
  except OSError as e:
    print("%s: cannot create %s: %s" % (PROG, a.scratch, e.strerror), file=sys.stderr)
    return 2
  # Two zoos on one scratch rebuild each other's seeds and workspaces under their feet: a
  # mutant then "dies" of a seed directory the other run just removed.
  try:
    lock.lock_dir(z.scratch, "ci/mutants/run")
  except lock.Busy as e:
    print("%s: %s (--scratch DIR)" % (PROG, e), file=sys.stderr)
    return 2
  shutil.rmtree(z.logs, ignore_errors=True)
  os.makedirs(z.logs)

  def body():
    tools.ensure("mutants", PROG, os.path.join(z.logs, "apt.log"), allowed=not a.no_install)
    tools.mmap_warning(PROG, "clang 14's TSan")
    return z.run()

  return cli.guarded(PROG, body)
