"""ci/test: gcfuzz's tests, once per configuration, and the final `N passed, M failed`."""
import json
import os
import subprocess
import sys
import time

from . import bazel, cli, fmt, layout, paths, procs, tools

PROG = "ci/test"
ALL_CONFIGS = ("ci", "format", "default", "asan", "msan", "tsan", "fuzz", "oss-fuzz")

USAGE = """\
Usage: ci/test [--config NAME]... [--help]

Runs gcfuzz's tests, once per configuration:

  ci        the ci program's own tests (python3 -m unittest, ci/gcfuzz_ci/tests); each
            test case counts. Among them, test_browser: the report pages (ci/campaign's
            report.html, ci/bench's) written from the fixed work directories in
            ci/testdata/report/ and opened in headless Chromium (no console error, the
            script ran, the SVG charts in the DOM, a screenshot that is not blank, kept
            in .gcfuzz-work/logs/browser/), and a broken page and a blank one, which
            must fail the same check; this configuration installs chromium and graphviz
            for it first
  format    clang-format --dry-run --Werror over every tracked *.c and *.h outside
            third_party/ (.clang-format at the root); counts as one test
  default   bazel test //...                      (builds every target)
  asan      bazel test --config=asan //...        ASan + LeakSanitizer + UBSan
  msan      bazel test --config=msan //...        MemorySanitizer
  tsan      bazel test --config=tsan //...        ThreadSanitizer, only tests
                                                  tagged "tsan"
  fuzz      bazel test --config=fuzz //fuzz/targets:stability_test
                                                  every seed of every target reaches the
                                                  same coverage fresh, after the others
                                                  and in reverse (libFuzzer's counters)
  oss-fuzz  bazel test //ci/oss-fuzz:contract_test
                                                  ci/oss-fuzz/build.sh built and run as
                                                  OSS-Fuzz does, every engine x sanitizer

Sanitizer configurations build only test targets and their dependencies.

Options:
  --config NAME   run only this configuration (ci, format, default, asan, msan, tsan,
                  fuzz, oss-fuzz); repeatable. Without it, all eight run.
  -h, --help      show this text.

First installs what is missing with apt-get (clang, libclang-rt-14-dev, llvm,
bazel-bootstrap, zip, afl++, clang-format, git, patch, python3-yaml; chromium and graphviz
when the ci configuration runs), as root or through sudo.
GCFUZZ_DISK_CACHE=DIR in the environment gives Bazel a shared --disk_cache.

Output: one line per configuration, then a last line `N passed, M failed`
counting tests over all configurations (Bazel test targets, the ci program's test
cases, the format check). A target that fails to build, a build error, or a run
in which no test ran counts as failure. Bazel's full output goes to
.gcfuzz-work/logs/test-NAME.log; on failure the tail of each failing test's log
and the build errors are printed.

Exit status: 0 if every test passed and at least one ran, 1 otherwise,
2 for a usage error.
"""

BAZEL_OPTS = bazel.OPTS + ["--keep_going"]


class Result:
  def __init__(self, name):
    self.name, self.passed, self.failed, self.skipped, self.note = name, 0, 0, False, ""
    self.seconds = 0

  def line(self):
    if self.skipped:
      return "%-8s skipped: %s" % (self.name, self.note)
    return "%-8s %3d passed, %d failed  (%ds)%s" % (self.name, self.passed, self.failed,
                                                   self.seconds,
                                                   "  [%s]" % self.note if self.note else "")


def parse_args(argv):
  p = cli.Parser(PROG, USAGE)
  p.add_argument("--config", action="append", default=[])
  args = p.parse(argv)
  for c in args.config:
    if c not in ALL_CONFIGS:
      raise cli.UsageError("unknown configuration '%s' (one of: %s)" % (c, " ".join(ALL_CONFIGS)))
  # The canonical order, each configuration once.
  return [c for c in ALL_CONFIGS if not args.config or c in args.config]


def run_selftest(res, logdir):
  """The ci program's unittest suite, in a child python (its own signal handlers and cwd)."""
  out = os.path.join(logdir, "test-ci.json")
  log = os.path.join(logdir, "test-ci.log")
  if os.path.exists(out):
    os.unlink(out)
  # The browser tests need Chromium and Graphviz; here they must run (elsewhere, without
  # Chromium, they are skipped).
  try:
    tools.ensure("browser", PROG, os.path.join(logdir, "apt-browser.log"))
  except tools.ToolError as e:
    print("%s: %s (the browser tests will fail)" % (PROG, e), file=sys.stderr)
  env = dict(os.environ, GCFUZZ_BROWSER_TESTS="required")
  with open(log, "w") as f:
    rc = subprocess.run([sys.executable, "-m", "gcfuzz_ci.selftest", out], cwd=paths.CI,
                        stdout=f, stderr=subprocess.STDOUT, env=env).returncode
  try:
    with open(out) as f:
      counts = json.load(f)
  except (OSError, ValueError):
    counts = {"passed": 0, "failed": 1, "failures": ["the suite did not run (exit %d)" % rc]}
  res.passed, res.failed = counts["passed"], counts["failed"]
  if res.failed:
    print("---- ci: %d failed (full log: %s)" % (res.failed, os.path.relpath(log, paths.ROOT)))
    with open(log) as f:
      lines = f.read().splitlines()
    print("\n".join(lines[-60:]))


def run_format(res, logdir):
  files = fmt.tracked_sources(paths.ROOT)
  bad = fmt.unformatted(paths.ROOT, files)
  with open(os.path.join(logdir, "test-format.log"), "w") as f:
    f.write("".join("%s\n" % b for b in bad))
  if bad:
    res.failed = 1
    res.note = "%d of %d files not formatted" % (len(bad), len(files))
    print("---- format: %d of %d files differ from clang-format (fix: clang-format -i FILE):"
          % (len(bad), len(files)))
    for b in bad[:40]:
      print("  " + b)
    if len(bad) > 40:
      print("  ... (all in %s)" % os.path.relpath(os.path.join(logdir, "test-format.log"),
                                                paths.ROOT))
  else:
    res.passed = 1


def show_failure_details(summary, text, log):
  errors = bazel.build_errors(text)
  if errors:
    print("---- build errors (full log: %s)" % os.path.relpath(log, paths.ROOT))
    print("\n".join(errors))
  shown = 0
  for st, label, path in summary:
    if st in ("PASSED", "FLAKY"):
      continue
    shown += 1
    if shown > 10:
      print("---- (more failures: see %s)" % os.path.relpath(log, paths.ROOT))
      break
    if path and os.path.isfile(path):
      print("---- %s: %s (last 40 lines of %s)" % (label, st, path))
      with open(path, errors="replace") as f:
        # Bazel puts a pager line at the top of every test.log.
        lines = [l for l in f.read().splitlines() if not l.startswith("exec ${PAGER:-")]
      print("\n".join(lines[-40:]))
    else:
      print("---- %s: %s" % (label, st))


def run_bazel_config(res, logdir):
  name = res.name
  log = os.path.join(logdir, "test-%s.log" % name)
  args = ["test"] + BAZEL_OPTS + bazel.cache_opts()
  if name in ("asan", "msan"):
    args += ["--config=" + name, "--build_tests_only"]
  elif name == "tsan":
    # Only concurrency tests run under TSan; they carry the tag "tsan".
    tagged = bazel.output(["query"] + bazel.OPTS +
                          ['attr(tags, "[\\[ ,]tsan[,\\]]", tests(//...))'], cwd=paths.ROOT)
    if tagged is None:
      res.failed, res.note = 1, "bazel query failed"
      return
    if not tagged:
      res.skipped, res.note = True, 'no test target is tagged "tsan" yet'
      return
    args += ["--config=tsan", "--test_tag_filters=tsan", "--build_tests_only"]
  elif name == "fuzz":
    args += ["--config=fuzz"]
  # oss-fuzz: the full contract matrix, a manual target (the fast part of it is in //...);
  # fuzz: the stability test, manual (it needs the coverage counters of a fuzz build).
  targets = ([layout.label(layout.OSS_FUZZ_CONTRACT_TEST)] if name == "oss-fuzz" else
             [layout.label(layout.STABILITY_TEST)] if name == "fuzz" else ["//..."])
  print("ci/test: %s: bazel %s %s" % (name, " ".join(args), " ".join(targets)), flush=True)
  rc = bazel.run(args + targets, log, cwd=paths.ROOT)
  with open(log, errors="replace") as f:
    text = f.read()
  summary = bazel.test_summary(text)
  res.passed = sum(1 for s in summary if s[0] in ("PASSED", "FLAKY"))
  res.failed = len(summary) - res.passed
  # Bazel exit codes: 0 all passed, 3 some test failed, 4 built but no test target, 1 build
  # failed; anything else is a usage or environment error. A failed build or run with no
  # failing test line still counts as a failure.
  notes = []
  if rc == 4:
    notes.append("no test targets")
  elif rc == 3 and res.failed == 0:
    res.failed = 1
    notes.append("bazel reported failures it did not list")
  elif rc == 1:
    notes.append("build failed")
    res.failed = max(res.failed, 1)
  elif rc not in (0, 3, 4):
    notes.append("bazel exited with status %d" % rc)
    res.failed = max(res.failed, 1)
  flaky = [l for s, l, _ in summary if s == "FLAKY"]
  if flaky:
    notes.append("flaky: " + " ".join(flaky))
  res.note = "; ".join(notes)
  if res.failed:
    show_failure_details(summary, text, log)


def final_status(results):
  """(exit status, the last line). Zero tests is a failure, not a pass; the one exception:
  every configuration was skipped on purpose (tsan before any test is tagged)."""
  passed = sum(r.passed for r in results)
  failed = sum(r.failed for r in results)
  status = 0
  if failed:
    status = 1
  elif passed == 0 and not all(r.skipped for r in results):
    status = 1
  return status, "%d passed, %d failed" % (passed, failed)


def main(argv):
  configs = parse_args(argv)
  procs.install_signal_handlers()
  logdir = os.path.join(paths.ROOT, ".gcfuzz-work", "logs")
  os.makedirs(logdir, exist_ok=True)
  try:
    tools.ensure("test", PROG, os.path.join(logdir, "apt.log"))
  except tools.ToolError as e:
    print("%s: %s" % (PROG, e), file=sys.stderr)
    return 1
  if any(c in ("asan", "msan", "tsan") for c in configs):
    tools.mmap_warning(PROG)
  results = []
  start = time.monotonic()
  try:
    for name in configs:
      res = Result(name)
      t0 = time.monotonic()
      if name == "ci":
        run_selftest(res, logdir)
      elif name == "format":
        run_format(res, logdir)
      else:
        run_bazel_config(res, logdir)
      res.seconds = int(time.monotonic() - t0)
      results.append(res)
  except procs.Interrupted:
    print("%s: interrupted" % PROG, file=sys.stderr)
    return 2
  print("---- per configuration (logs in .gcfuzz-work/logs/)")
  for r in results:
    print(r.line())
  print("total time %ds" % int(time.monotonic() - start))
  status, last = final_status(results)
  if status and not sum(r.failed for r in results):
    print("ci/test: FAILED: no test ran")
  print(last, flush=True)
  return status
