import contextlib
import io
import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from gcfuzz_ci import cmd_mutants, layout, lock, paths, zoo
from gcfuzz_ci.tests import fakes

PATCH = """\
# name: workbuf-putempty-lost
# class: 1 (the Go seed's putempty bug)
# bug: gc_work_put_empty links the buffer in front of the empty list, then sets the head to
#   b->next, which is the old head.
# expect: swept.workbuf-lost (INV-WB-1)
# run: fuzz:graph test:invariants/threads_test
# quick: yes
--- a/gc/workbuf.c
+++ b/gc/workbuf.c
@@ -1 +1 @@
-a
+b
"""


class ZooDir(unittest.TestCase):

  def setUp(self):
    self.tmp = tempfile.TemporaryDirectory()
    self.addCleanup(self.tmp.cleanup)
    self.here = self.tmp.name
    self.write("01-workbuf-putempty-lost.patch", PATCH)
    self.write("10-adopt-orphan-without-lock.patch",
               "# class: 10\n# run: test-tsan:invariants/threads_test repeat-tsan:gc/domain_test\n"
               "--- a/gc/domain.c\n+++ b/gc/domain.c\n")
    patcher = mock.patch.object(cmd_mutants, "HERE", self.here)
    patcher.start()
    self.addCleanup(patcher.stop)

  def write(self, name, text):
    with open(os.path.join(self.here, name), "w") as f:
      f.write(text)


class ArgumentsTest(ZooDir):

  def test_a_bad_only_leaves_the_previous_logs(self):
    # The old script deleted ci/mutants/out/logs before it rejected --only 99.
    logs = os.path.join(self.here, "out", "logs")
    os.makedirs(logs)
    self.write("out/logs/01-workbuf-putempty-lost.log", "the previous run\n")
    self.write("out/results.json", "{}\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
      from gcfuzz_ci import cli
      status = cli.run("mutants", ["--only", "99"])
    self.assertEqual(status, 2)
    self.assertIn("no mutant matches '99'", err.getvalue())
    self.assertEqual(os.listdir(logs), ["01-workbuf-putempty-lost.log"])
    self.assertTrue(os.path.exists(os.path.join(self.here, "out", "results.json")))

  def test_every_other_argument_error_touches_nothing(self):
    for argv in (["--budget", "0"], ["--jobs", "3"], ["--seed", "x"], ["--tree", "/nonexistent"],
                 ["--rev", "no-such-revision-anywhere"], ["--rev", "HEAD", "--tree", "."],
                 ["--only", "01", "--only", "nosuch"], ["--via", "lua"], ["--via", "nosuch"],
                 ["--via", "gcfuzz", "--backend", "lua"]):
      with self.subTest(argv=argv):
        with contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
          from gcfuzz_ci import cli
          self.assertEqual(cli.run("mutants", argv), 2)
        self.assertFalse(os.path.exists(os.path.join(self.here, "out")))

  def test_a_bad_step_is_a_usage_error(self):
    self.write("02-bad.patch", "# run: fuz:graph\n")
    with self.assertRaisesRegex(Exception, "unknown step kind 'fuz'"):
      cmd_mutants.parse_args(["--only", "2"])

  def test_a_fuzz_step_names_a_known_target(self):
    self.write("02-bad.patch", "# run: fuzz:schedule_tsan\n")
    with self.assertRaisesRegex(Exception, "unknown fuzz target 'schedule_tsan'"):
      cmd_mutants.parse_args(["--only", "2"])
    self.write("03-race.patch", "# run: fuzz:schedule-tsan test-tsan:fuzz/driver/stress_test\n")
    self.assertEqual(cmd_mutants.parse_args(["--only", "3"]).selected[0].steps,
                     ["fuzz:schedule-tsan", "test-tsan:fuzz/driver/stress_test"])
    self.assertIsNone(zoo.check_step("fuzz:schedule-tsan"))

  def test_via_runs_one_target_only(self):
    # A mutant the schedule programs measure goes through the threaded interface target.
    self.write("03-race.patch", "# run: fuzz:schedule-tsan test-tsan:fuzz/driver/stress_test\n")
    a = cmd_mutants.parse_args(["--only", "3", "--via", "gcfuzz"])
    self.assertEqual(a.selected[0].steps, ["fuzz:gcfuzz-threads"])
    self.write("04-sweep.patch", "# run: fuzz:graph test:gc/alloc_test\n")
    a = cmd_mutants.parse_args(["--only", "4", "--via", "gcfuzz"])
    self.assertEqual(a.selected[0].steps, ["fuzz:gcfuzz"])
    self.assertEqual(cmd_mutants.parse_args(["--only", "3"]).selected[0].steps,
                     ["fuzz:schedule-tsan", "test-tsan:fuzz/driver/stress_test"])

  def test_selection(self):
    self.assertEqual([m.base for m in cmd_mutants.parse_args(["--quick"]).selected],
                     ["01-workbuf-putempty-lost"])
    for sel in ("1", "01", "adopt-orphan-without-lock", "10-adopt-orphan-without-lock"):
      self.assertEqual(len(cmd_mutants.parse_args(["--only", sel]).selected), 1)
    a = cmd_mutants.parse_args(["--quick"])
    self.assertEqual(a.budget, 15)
    self.assertEqual(cmd_mutants.parse_args([]).budget, 60)


class HeaderTest(ZooDir):

  def test_header_fields(self):
    m = zoo.Mutant(os.path.join(self.here, "01-workbuf-putempty-lost.patch"))
    self.assertEqual((m.number, m.name, m.class_, m.quick), (1, "workbuf-putempty-lost", "1",
                                                              True))
    self.assertEqual(m.steps, ["fuzz:graph", "test:invariants/threads_test"])
    self.assertEqual(m.expected, "swept.workbuf-lost (INV-WB-1)")
    self.assertEqual(m.touched(), ["gc/workbuf.c"])
    self.assertIn("which is the old head.", zoo.header(m.path)["bug"])

  def test_baseline_steps_in_first_use_order(self):
    ms = zoo.all_mutants(self.here)
    self.assertEqual(zoo.baseline_steps(ms + ms),
                     ["fuzz:graph", "test:invariants/threads_test",
                      "test-tsan:invariants/threads_test", "repeat-tsan:gc/domain_test"])

  def test_labels_of_steps(self):
    z = cmd_mutants.Zoo(cmd_mutants.parse_args(["--no-baseline"]), layout.Layout("split"))
    steps = ["fuzz:graph", "test:invariants/threads_test", "repeat-tsan:gc/domain_test",
             "test-tsan:fuzz/driver/stress_test"]
    self.assertEqual(z.labels(steps, "fuzz"),
                     ["//fuzz/targets:graph_fuzzer", "//invariants:threads_test"])
    self.assertEqual(z.labels(steps, "tsan"), ["//fuzz/driver:stress_test", "//gc:domain_test"])
    self.assertEqual(zoo.target_of("repeat-tsan:gc/domain_test"), "tsan:gc/domain_test")

  def test_the_tsan_fuzz_step_builds_in_its_own_config(self):
    z = cmd_mutants.Zoo(cmd_mutants.parse_args(["--no-baseline"]), layout.Layout("split"))
    steps = ["fuzz:schedule-tsan", "fuzz:schedule", "test-tsan:fuzz/driver/stress_test"]
    self.assertEqual(z.labels(steps, "tsan-fuzz"), ["//fuzz/targets:schedule_tsan_fuzzer"])
    self.assertEqual(z.labels(steps, "fuzz"), ["//fuzz/targets:schedule_fuzzer"])
    self.assertEqual(z.labels(steps, "tsan"), ["//fuzz/driver:stress_test"])
    self.assertIn("--config=tsan-fuzz", z.tsan_fuzz_flags)
    self.assertEqual(zoo.target_of("fuzz:schedule-tsan"), "schedule-tsan")

  def test_the_corpus_test_runs_the_program_targets(self):
    z = cmd_mutants.Zoo(cmd_mutants.parse_args(["--no-baseline"]), layout.Layout("split"))
    cmd = z.test_cmd("/ws", "/bin", z.lay.corpus_test)
    self.assertEqual([cmd[i + 1] for i, a in enumerate(cmd) if a == "--target"],
                     ["graph", "roots", "schedule"])


class WatchTest(unittest.TestCase):
  """What killed a mutant comes from the step output's verdict line."""

  def setUp(self):
    self.tmp = tempfile.TemporaryDirectory()
    self.addCleanup(self.tmp.cleanup)
    self.z = cmd_mutants.Zoo.__new__(cmd_mutants.Zoo)
    self.z.stop = cmd_mutants.threading.Event()
    self.log = os.path.join(self.tmp.name, "step.log")

  def watch(self, body, secs=10, breaking=False):
    prog = fakes.script(os.path.join(self.tmp.name, "prog"), body)
    return self.z.watched(secs, self.log, [prog], self.tmp.name, dict(os.environ), breaking)

  def test_a_verdict_line_kills_at_once(self):
    v, secs = self.watch("echo 'VIOLATION checkmark.unmarked (pass checkmark, at cycled)'\n"
                         "echo '%s'\nsleep 30\n" % fakes.verdict_line("swept.workbuf-lost",
                                                                       "swept"))
    self.assertEqual((v.pass_, v.kind), ("swept", "swept.workbuf-lost"))
    self.assertLess(secs, 2)

  def test_a_failing_test_without_verdict(self):
    v, _ = self.watch("echo 'x_test.c:12: CHECK failed: a == b'\nexit 1\n")
    self.assertEqual((v.pass_, v.kind), ("test", "test.failed"))

  def test_a_breaking_test_passing_is_no_finding(self):
    v, _ = self.watch("echo '%s'\nexit 0\n" % fakes.verdict_line("reach.zero-header", "reach"),
                      breaking=True)
    self.assertIsNone(v)

  def test_a_sanitizer_without_verdict(self):
    v, _ = self.watch("echo '==1==ERROR: AddressSanitizer: SEGV on unknown address'\nexit 1\n")
    self.assertEqual((v.pass_, v.kind), ("asan", "asan.SEGV"))

  def test_a_hang(self):
    v, secs = self.watch("sleep 30\n", secs=1)
    self.assertEqual(v, cmd_mutants.verdict.HANG)
    self.assertLess(secs, 3)


class HangLimitTest(unittest.TestCase):
  """The hang limit is HANG_S on a quiet machine and grows with the load per core."""

  def test_quiet_and_loaded(self):
    self.assertEqual(cmd_mutants.hang_limit_s(load1=0.3, cores=2), cmd_mutants.HANG_S)
    self.assertEqual(cmd_mutants.hang_limit_s(load1=2.0, cores=2), cmd_mutants.HANG_S)
    self.assertEqual(cmd_mutants.hang_limit_s(load1=8.0, cores=2), 4 * cmd_mutants.HANG_S)
    self.assertEqual(cmd_mutants.hang_limit_s(load1=100.0, cores=2),
                     cmd_mutants.HANG_SCALE_MAX * cmd_mutants.HANG_S)

  def test_reads_the_machine(self):
    with mock.patch.object(cmd_mutants.os, "getloadavg", return_value=(6.0, 0.0, 0.0)), \
        mock.patch.object(cmd_mutants.os, "cpu_count", return_value=2):
      self.assertEqual(cmd_mutants.hang_limit_s(), 3 * cmd_mutants.HANG_S)


class ResultsTest(unittest.TestCase):

  def test_results_json(self):
    a = mock.Mock(budget=60, seed=1, no_seeds=False)
    rows = [{"name": "workbuf-putempty-lost", "class": "1", "status": "killed", "by": "swept",
             "kind": "swept.workbuf-lost", "target": "graph", "seconds": 0.1, "also": [],
             "expected": "swept.workbuf-lost"},
            {"name": "alloc-last-field-not-zeroed", "class": "extra", "status": "survived",
             "by": "-", "kind": "-", "target": "-", "seconds": None, "also": ["x:y:z"],
             "expected": "-"}]
    j = cmd_mutants.results_json(a, rows, 0, "clean")
    self.assertEqual((j["baseline_findings"], j["baseline"], j["budget"], j["seed"],
                      j["seed_corpus"]), (0, "clean", 60, 1, True))
    self.assertEqual(j["mutants"][0]["class"], 1)
    self.assertTrue(j["mutants"][0]["killed"])
    self.assertEqual(j["mutants"][1]["class"], "extra")
    self.assertFalse(j["mutants"][1]["killed"])
    self.assertIsNone(j["mutants"][1]["seconds"])


  def test_median(self):
    self.assertEqual(zoo.median([3.0, 1.0, 2.0]), 2.0)
    self.assertEqual(zoo.median([0.1, 0.3, 15.4, 0.5]), 0.4)
    self.assertIsNone(zoo.median([]))


if __name__ == "__main__":
  unittest.main()


class TreeTest(unittest.TestCase):
  """The zoo's patches against the tree as it is: a collector change that moves the lines a
  mutant patches must rebase it in the same change, or the zoo loses that mutant."""

  def test_every_patch_applies_as_the_zoo_applies_it(self):
    if shutil.which("patch") is None:
      self.skipTest("patch is not installed")
    failed = []
    for m in zoo.all_mutants(os.path.join(paths.ROOT, "ci", "mutants")):
      cmd = ["patch", "--dry-run", "-p1", "-F0", "--batch", "--forward", "-s", "-d", paths.ROOT,
             "-i", m.path]
      r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
      if r.returncode != 0:
        failed.append("%s: %s" % (m.base, r.stdout.strip()))
    self.assertEqual(failed, [], "patches that no longer apply without fuzz:\n" + "\n".join(failed))


class ScratchLockTest(unittest.TestCase):

  def test_a_second_zoo_on_one_scratch_is_refused(self):
    with tempfile.TemporaryDirectory() as s:
      fd = lock.lock_dir(s, "ci/mutants/run")
      self.addCleanup(os.close, fd)
      err = io.StringIO()
      with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cmd_mutants.main(["--scratch", s, "--no-install", "--only", "1"])
      self.assertEqual(status, 2)
      self.assertIn("in use by another ci/mutants/run (pid %d)" % os.getpid(), err.getvalue())
