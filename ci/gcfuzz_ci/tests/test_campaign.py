import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

from gcfuzz_ci import cmd_campaign, layout, libfuzzer, lock, paths, procs
from gcfuzz_ci.tests import fakes


def alive(pid):
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  # A zombie is dead too.
  try:
    with open("/proc/%d/stat" % pid) as f:
      return f.read().split(") ", 1)[1][0] != "Z"
  except OSError:
    return False


def wait_dead(pid, seconds=5):
  end = time.monotonic() + seconds
  while time.monotonic() < end:
    if not alive(pid):
      return True
    time.sleep(0.05)
  return False


class FakeCampaign(unittest.TestCase):
  """A campaign whose bazel-bin holds fake fuzzers and a fake replay tool."""

  def setUp(self):
    self.tmp = tempfile.TemporaryDirectory()
    self.addCleanup(self.tmp.cleanup)
    self.w = os.path.join(self.tmp.name, "work")
    os.makedirs(os.path.join(self.w, "logs"))
    self.bindir = os.path.join(self.tmp.name, "bin")
    self.lay = layout.current()
    for t in layout.FUZZ_TARGETS:
      fakes.script(os.path.join(self.bindir, self.lay.fuzzer(t)), fakes.FUZZER)
    fakes.script(os.path.join(self.bindir, self.lay.replay), fakes.REPLAY)
    self.fuzz_dir = os.path.dirname(os.path.join(self.bindir, self.lay.fuzzer("graph")))
    args = cmd_campaign.parse_args(["--time", "2", "--jobs", "1", "--minimize-time", "0",
                                    "graph"])
    self.c = cmd_campaign.Campaign(args, self.w, self.lay)
    self.c.bindirs = {"fuzz": self.bindir, "tsan-fuzz": self.bindir}
    self.c.replay = os.path.join(self.bindir, self.lay.replay)
    self.c.build_fuzzers = lambda: None
    self.crashes = os.path.join(self.w, "graph", "crashes")
    os.makedirs(self.crashes)

  def runs(self):
    try:
      with open(os.path.join(self.fuzz_dir, "runs")) as f:
        return len(f.read().split())
    except FileNotFoundError:
      return 0

  def crash_file(self, name, content):
    with open(os.path.join(self.crashes, name), "w") as f:
      f.write(content)

  def triage(self, names, target="graph"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      self.last_triage = cmd_campaign.Triage(self.c, target, self.crashes)
      keys = self.last_triage.run(names)
    return keys, out.getvalue()

  def args_of_runs(self):
    try:
      with open(os.path.join(self.fuzz_dir, "args")) as f:
        return f.read().splitlines()
    except FileNotFoundError:
      return []


class TriageTest(FakeCampaign):

  def test_keys_come_from_the_verdict_line(self):
    self.crash_file("crash-1", "bugaa 1")
    keys, out = self.triage(["crash-1"])
    self.assertEqual(keys, ["bugaa.x@reach"])
    self.assertIn("==== crash 1/1 [graph] bugaa.x@reach", out)

  def test_a_known_key_found_again_is_printed(self):
    # The old campaign printed a key only the first time it was ever seen: a bug that came back
    # after a fix made "CRASHES found", exit 1, and printed nothing.
    self.crash_file("crash-1", "bugaa 1")
    self.triage(["crash-1"])
    self.crash_file("crash-2", "bugaa 2, the bug is back")
    keys, out = self.triage(["crash-2"])
    self.assertEqual(keys, ["bugaa.x@reach"])
    self.assertIn("==== crash 1/1 [graph] bugaa.x@reach", out)
    self.assertIn("---- replay: ", out)

  def test_an_input_is_reproduced_once(self):
    self.crash_file("crash-1", "bugaa 1")
    self.crash_file("crash-2", "bugbb 2")
    self.triage(["crash-1", "crash-2"])
    first = self.runs()
    # A later campaign saves the same inputs again (same content, same hash): nothing re-runs
    # to key them, and they are still printed as found.
    keys, out = self.triage(["crash-1", "crash-2"])
    self.assertEqual(self.runs(), first)
    self.assertEqual(keys, ["bugaa.x@reach", "bugbb.x@reach"])
    self.assertIn("crash 2/2", out)

  def test_an_input_that_no_longer_crashes_moves_to_fixed(self):
    self.crash_file("crash-1", "fine now")
    keys, _ = self.triage(["crash-1"])
    self.assertEqual(keys, [])
    self.assertTrue(os.path.isfile(os.path.join(self.crashes, "fixed", "crash-1")))

  def test_one_minimized_input_per_key_is_kept(self):
    self.crash_file("crash-1", "bugaa long input")
    self.crash_file("crash-2", "bugaa")
    keys, _ = self.triage(["crash-1", "crash-2"])
    with open(os.path.join(self.crashes, "min-bugaa.x-reach")) as f:
      self.assertEqual(f.read(), "bugaa")  # the smallest, then minimized
    with open(os.path.join(self.crashes, "min-bugaa.x-reach.txt")) as f:
      self.assertIn("# graph: bugaa.x@reach", f.read())

  def test_the_replay_of_a_minimized_input_is_kept_for_the_page(self):
    # The replay tool writes the neighbourhood where GCFUZZ_VERIFY_DOT says.
    fakes.script(self.c.replay, fakes.REPLAY + 'echo "digraph g {}" >"$GCFUZZ_VERIFY_DOT"\n')
    self.crash_file("crash-1", "bugaa")
    self.triage(["crash-1"])
    with open(os.path.join(self.crashes, "min-bugaa.x-reach.out")) as f:
      self.assertIn("op 2 collect full", f.read())
    with open(os.path.join(self.crashes, "min-bugaa.x-reach.dot")) as f:
      self.assertEqual(f.read(), "digraph g {}\n")


class TsanTriageTest(FakeCampaign):
  """schedule-tsan's crashes are races: reproducing one may take several runs."""

  def setUp(self):
    super().setUp()
    self.crashes = os.path.join(self.w, "schedule-tsan", "crashes")
    os.makedirs(self.crashes)

  def test_a_race_is_keyed_by_its_verdict_and_first_own_frame(self):
    self.crash_file("crash-1", "race")
    keys, out = self.triage(["crash-1"], "schedule-tsan")
    self.assertEqual(keys, ["tsan.data-race@tsan@gc_heap_account_bytes (gc/heap.h)"])
    self.assertIn("==== crash 1/1 [schedule-tsan] tsan.data-race@tsan@", out)
    # Replayed as it ran: the schedule programs on free threads, under TSan.
    self.assertIn("--config=tsan //fuzz/replay:replay -- --target schedule --free", out)
    with open(os.path.join(self.crashes, "min-" + cmd_campaign.verdict.slug(keys[0]) +
                           ".txt")) as f:
      self.assertIn("# target: schedule\n", f.read())

  def test_a_race_that_does_not_repeat_at_once_is_run_again(self):
    # The fake races on every second process: the first reproduction finds nothing, the second
    # does; each is one process of many runs.
    self.crash_file("crash-1", "race")
    keys, _ = self.triage(["crash-1"], "schedule-tsan")
    self.assertEqual(len(keys), 1)
    first_two = self.args_of_runs()[:2]
    self.assertEqual(len(first_two), 2)
    for args in first_two:
      self.assertIn("-runs=%d" % cmd_campaign.TSAN_REPRODUCE_RUNS, args.split())

  def test_an_unreproduced_race_is_kept_and_retried(self):
    self.crash_file("crash-1", "never")
    keys, out = self.triage(["crash-1"], "schedule-tsan")
    self.assertEqual(keys, [])
    self.assertEqual(self.last_triage.unreproduced, ["crash-1"])
    self.assertEqual(self.runs(), cmd_campaign.TSAN_REPRODUCE_TRIES)
    # Not moved to fixed/: TSan saw a race in it once.
    self.assertTrue(os.path.isfile(os.path.join(self.crashes, "crash-1")))
    self.assertFalse(os.path.exists(os.path.join(self.crashes, "fixed")))
    self.assertIn("did not race again", out)
    self.assertIn("retry: ", out)
    # Saved again by a later campaign: tried again (a graph input would not be).
    self.triage(["crash-1"], "schedule-tsan")
    self.assertEqual(self.runs(), 2 * cmd_campaign.TSAN_REPRODUCE_TRIES)

  def test_a_graph_crash_runs_once(self):
    self.crash_file("crash-1", "bugaa")
    self.triage(["crash-1"])
    self.assertNotIn("-runs=", " ".join(self.args_of_runs()))


# A replay tool for --census: each target's collector has its own table of events.
CENSUS_REPLAY = """\
case "$2" in
  lua) echo 'GCFUZZ-EVENTS {"programs": 2, "events": {"cycle": 6, "emergency": 1, "gen.major": 0}}';;
  bdwgc) echo 'GCFUZZ-EVENTS {"programs": 1, "events": {"cycle": 3, "heap.grown": 0}}';;
  *) echo 'GCFUZZ-EVENTS {"programs": 1, "events": {"cycle": 4, "mark.recheck": 1}}';;
esac
"""


class CensusTest(FakeCampaign):

  def test_each_collector_gets_its_table(self):
    fakes.script(os.path.join(self.bindir, self.lay.replay), CENSUS_REPLAY)
    c = cmd_campaign.Campaign(cmd_campaign.parse_args(["--census", "graph", "lua", "bdwgc"]),
                              self.w, self.lay)
    c.build = lambda logname, flags, labels: self.bindir
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      self.assertEqual(cmd_campaign.mode_census(c), 0)
    text = out.getvalue()
    self.assertIn("==== rare events of the collector (seeds; graph ", text)
    self.assertIn("==== rare events of lua's collector (seeds; lua ", text)
    self.assertIn("never happened (1): gen.major", text)
    self.assertIn("never happened (1): heap.grown", text)
    with open(os.path.join(self.w, "summary.json")) as f:
      summary = json.load(f)
    self.assertEqual(list(summary["events"]["programs"]), ["graph"])
    self.assertEqual(sorted(summary["backend_events"]), ["bdwgc", "lua"])
    lua = summary["backend_events"]["lua"]
    self.assertEqual(lua["collector"], "lua")
    self.assertEqual(lua["never"], ["gen.major"])
    seeds = len([n for n in os.listdir(os.path.join(paths.ROOT, "corpus", "lua"))
                 if n.endswith(".txt")])
    self.assertEqual(lua["events"][1], {"event": "emergency", "targets": {"lua": 1},
                                        "total": 1})
    self.assertEqual(lua["programs"], {"lua": 2 * ((seeds + 399) // 400)})
    with open(os.path.join(self.w, "report.html")) as f:
      page = f.read()
    self.assertIn("rare events of lua&#x27;s collector", page)
    self.assertIn("rare events of bdwgc&#x27;s collector", page)


class ArgumentsTest(unittest.TestCase):

  def test_schedule_tsan_is_a_target_by_name(self):
    a = cmd_campaign.parse_args(["schedule-tsan"])
    self.assertEqual(a.targets, ["schedule-tsan"])
    a = cmd_campaign.parse_args(["--throughput", "graph", "schedule-tsan"])
    self.assertEqual(a.targets, ["graph", "schedule-tsan"])

  def test_rounds_go_with_throughput(self):
    from gcfuzz_ci import cli
    self.assertEqual(cmd_campaign.parse_args(["--throughput"]).rounds, 1)
    self.assertEqual(cmd_campaign.parse_args(["--throughput", "--rounds", "5"]).rounds, 5)
    for argv, message in ((["--rounds", "5"], "--rounds goes with --throughput"),
                          (["--throughput", "--rounds", "0"], "expected at least 1"),
                          (["--throughput", "--rounds", "x"], "expected a decimal number")):
      with self.assertRaises(cli.UsageError) as e:
        cmd_campaign.parse_args(argv)
      self.assertIn(message, str(e.exception))

  def test_zeal_goes_with_program_campaigns(self):
    from gcfuzz_ci import cli
    self.assertEqual(cmd_campaign.parse_args(["--zeal", "store", "graph"]).zeal, "store")
    self.assertEqual(cmd_campaign.parse_args(["--throughput", "--zeal", "slice+recheck",
                                              "schedule-tsan"]).zeal, "slice+recheck")
    self.assertIsNone(cmd_campaign.parse_args(["graph"]).zeal)
    for argv, message in ((["--census", "--zeal", "store"], "--zeal goes with"),
                          (["--engine", "afl", "--zeal", "store"], "--zeal goes with"),
                          (["--zeal", "store", "gcfuzz"], "--zeal runs the program targets"),
                          (["--zeal", "--throughput"], "argument --zeal: expected one argument"),
                          (["--zeal", "", "graph"], "--zeal needs modes")):
      with self.assertRaises(cli.UsageError) as e:
        cmd_campaign.parse_args(argv)
      self.assertIn(message, str(e.exception))
    summary = cmd_campaign.summary_json([], False, zeal="store")
    self.assertEqual(summary["zeal"], "store")
    self.assertNotIn("zeal", cmd_campaign.summary_json([], False))

  def test_throughput_row_is_the_median_run(self):
    runs = [{"seed": k, "execs": 60 * eps, "exec_per_s": eps, "coverage": k, "corpus": k}
            for k, eps in ((1, 14906), (2, 12326), (3, 12954), (4, 15101), (5, 15017))]
    r = cmd_campaign.throughput_row("graph", 60, runs)
    self.assertEqual((r["exec_per_s"], r["seed"], r["execs"], r["coverage"]), (14906, 1, 894360, 1))
    self.assertEqual((r["exec_per_s_min"], r["exec_per_s_max"]), (12326, 15101))
    self.assertEqual(r["runs"], runs)
    # An even count: the lower of the two middle runs, a figure some run reached.
    self.assertEqual(cmd_campaign.throughput_row("graph", 60, runs[:4])["exec_per_s"], 12954)
    one = cmd_campaign.throughput_row("schedule", 60, runs[:1])
    self.assertEqual((one["exec_per_s"], one["exec_per_s_min"], one["exec_per_s_max"]),
                     (14906, 14906, 14906))

  def test_the_default_targets_leave_it_out(self):
    self.assertEqual(cmd_campaign.parse_args([]).targets, ["graph", "roots", "schedule"])

  def test_gcfuzz_params_is_refused(self):
    from gcfuzz_ci import cli
    with mock.patch.dict(os.environ, {"GCFUZZ_PARAMS": "zeal=slice"}):
      with self.assertRaises(cli.UsageError) as e:
        cmd_campaign.parse_args(["graph"])
      self.assertIn("GCFUZZ_PARAMS is set (zeal=slice)", str(e.exception))
      self.assertEqual(cmd_campaign.parse_args(["--report", "x"]).mode, "report")

  def test_coverage_and_census_targets(self):
    from gcfuzz_ci import cli
    self.assertEqual(cmd_campaign.parse_args(["--coverage"]).targets,
                     ["graph", "roots", "schedule", "gcfuzz", "gcfuzz-threads"])
    self.assertEqual(cmd_campaign.parse_args(["--census"]).targets, ["graph", "roots", "schedule"])
    self.assertEqual(cmd_campaign.parse_args(["--census", "lua", "bdwgc"]).targets,
                     ["lua", "bdwgc"])
    self.assertEqual(cmd_campaign.parse_args(["--census", "graph", "gcfuzz",
                                              "gcfuzz-threads"]).targets,
                     ["graph", "gcfuzz", "gcfuzz-threads"])
    with self.assertRaises(cli.UsageError) as e:
      cmd_campaign.parse_args(["--census", "graph", "schedule-tsan"])
    self.assertIn("--census counts the events of the program targets and the backend targets",
                  str(e.exception))
    self.assertIn("not schedule-tsan", str(e.exception))
    with self.assertRaises(cli.UsageError):
      cmd_campaign.parse_args(["--census", "--coverage"])

  def test_bad_target_names(self):
    from gcfuzz_ci import cli
    for argv, message in ((["schedule_tsan"], "unknown target 'schedule_tsan'"),
                          (["schedule-tsan", "schedule-tsan"], "named twice"),
                          (["tsan"], "unknown target 'tsan'")):
      with self.assertRaises(cli.UsageError) as e:
        cmd_campaign.parse_args(argv)
      self.assertIn(message, str(e.exception))

  def test_help_names_it(self):
    self.assertIn("schedule-tsan", cmd_campaign.USAGE)


class LayoutTest(unittest.TestCase):

  def test_schedule_tsan_runs_the_schedule_programs_in_its_own_build(self):
    lay = layout.current()
    self.assertEqual(lay.fuzzer("schedule-tsan"), "fuzz/targets/schedule_tsan_fuzzer")
    self.assertEqual(layout.label(lay.fuzzer("schedule-tsan")),
                     "//fuzz/targets:schedule_tsan_fuzzer")
    self.assertEqual(lay.options_file("schedule-tsan"), "fuzz/targets/schedule.options")
    self.assertEqual(layout.programs_of("schedule-tsan"), "schedule")
    self.assertEqual(layout.config_of("schedule-tsan"), "tsan-fuzz")
    self.assertEqual(layout.config_of("schedule"), "fuzz")
    self.assertTrue(layout.is_tsan("schedule-tsan"))
    self.assertFalse(layout.is_tsan("schedule"))
    self.assertEqual(lay.fuzzer("graph"), "fuzz/targets/graph_fuzzer")
    self.assertEqual(lay.fuzzer("gcfuzz-threads-tsan"), "fuzz/targets/gcfuzz_threads_tsan_fuzzer")
    self.assertEqual(lay.fuzzer_source("gcfuzz-threads-tsan"), "fuzz/targets/backend_fuzzer.c")
    self.assertEqual(lay.options_file("gcfuzz-threads-tsan"), "fuzz/targets/gcfuzz-threads.options")
    self.assertEqual(layout.programs_of("gcfuzz-threads-tsan"), "gcfuzz-threads")
    self.assertEqual(layout.backend_of("gcfuzz-threads-tsan"), "gcfuzz")
    self.assertTrue(layout.is_tsan("gcfuzz-threads-tsan"))

  def test_the_names_exist_in_the_tree(self):
    lay = layout.current()
    for t in layout.FUZZ_TARGETS:
      self.assertTrue(os.path.isfile(os.path.join(paths.ROOT, lay.fuzzer_source(t))), t)
      self.assertTrue(os.path.isfile(os.path.join(paths.ROOT, lay.options_file(t))), t)
      self.assertTrue(os.path.isdir(os.path.join(paths.ROOT, "corpus", layout.programs_of(t))))
    with open(os.path.join(paths.ROOT, ".bazelrc")) as f:
      rc = f.read()
    for t in layout.FUZZ_TARGETS:
      self.assertIn("build:%s " % layout.config_of(t), rc)


class ProgressTest(FakeCampaign):

  def test_crash_files_of_earlier_campaigns_are_not_counted(self):
    self.crash_file("crash-old", "bugaa")
    before = libfuzzer.artifacts(self.crashes)
    time.sleep(0.01)
    self.crash_file("crash-new", "bugbb")
    self.crash_file("corpus-file", "x")
    row = cmd_campaign.new_row("graph")
    log = os.path.join(self.w, "logs", "fuzz-graph.log")
    with open(log, "w") as f:
      f.write("#100: cov: 12 ft: 13 corp: 2 exec/s 50 oom/timeout/crash: 0/0/0 time: 2s\n")
    self.c.update_row(row, log, self.crashes, time.monotonic() - 2, before, self.crashes)
    self.assertEqual(row["crash_files"], 1)
    self.assertEqual((row["execs"], row["coverage"]), (100, 12))
    self.assertIn("crashes 1", cmd_campaign.progress_line("graph", row))


class InterruptTest(FakeCampaign):

  def test_an_interrupted_campaign_writes_its_summary_and_stops_its_fuzzer(self):
    summary = os.path.join(self.w, "summary.json")
    with open(summary, "w") as f:
      f.write('{"targets": [{"name": "an older campaign"}]}\n')
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    self.addCleanup(lambda: [signal.signal(s, h) for s, h in old.items()])
    procs.install_signal_handlers()
    self.c.a.time = 60
    pid_file = os.path.join(self.fuzz_dir, "fuzzer.pid")

    def interrupt_once_fuzzing():
      end = time.monotonic() + 30
      while not read(pid_file) and time.monotonic() < end:
        time.sleep(0.05)
      time.sleep(0.5)
      os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt_once_fuzzing)
    timer.start()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
      status = cmd_campaign.mode_campaign(self.c)
    timer.join()
    self.assertEqual(status, 2)
    with open(summary) as f:
      s = json.load(f)
    self.assertTrue(s["interrupted"])
    self.assertEqual([t["name"] for t in s["targets"]], ["graph"])
    self.assertIn("INTERRUPTED", out.getvalue())
    # The page too, with the samples recorded so far.
    self.assertTrue(os.path.isfile(os.path.join(self.w, "report.html")))
    with open(os.path.join(self.w, "graph", "progress.json")) as f:
      self.assertTrue(json.load(f)["samples"])
    self.assertTrue(wait_dead(int(read(pid_file))))


def read(path):
  try:
    with open(path) as f:
      return f.read().strip()
  except FileNotFoundError:
    return ""


KILLED_PARENT = """\
import sys, time
sys.path.insert(0, %r)
from gcfuzz_ci import procs
procs.spawn(["sh", "-c", "sleep 300 & echo $! > %s; wait"])
time.sleep(300)
"""


class KillTest(unittest.TestCase):

  def test_a_sigkilled_program_leaves_no_child_running(self):
    # The grandchild stands for a libFuzzer fork-mode job: PR_SET_PDEATHSIG on the fuzzer
    # alone would not reach it.
    with tempfile.TemporaryDirectory() as tmp:
      pidfile = os.path.join(tmp, "pid")
      parent = subprocess.Popen([sys.executable, "-c", KILLED_PARENT % (paths.CI, pidfile)])
      end = time.monotonic() + 10
      while not read(pidfile):
        self.assertLess(time.monotonic(), end)
        time.sleep(0.05)
      with open(pidfile) as f:
        grandchild = int(f.read())
      self.assertTrue(alive(grandchild))
      parent.send_signal(signal.SIGKILL)
      parent.wait()
      self.assertTrue(wait_dead(grandchild))

  def test_children_are_the_guarded_command(self):
    p = procs.spawn(["sleep", "30"])
    try:
      pids = procs.children(p)
      self.assertEqual(len(pids), 1)
      # The child is the guard's fork; on a loaded machine it may not have exec'd sleep yet.
      end = time.monotonic() + 5
      while True:
        with open("/proc/%d/comm" % pids[0]) as f:
          comm = f.read().strip()
        if comm == "sleep" or time.monotonic() > end:
          break
        time.sleep(0.01)
      self.assertEqual(comm, "sleep")
    finally:
      procs.kill(p)
    self.assertTrue(wait_dead(pids[0]))

  def test_run_stops_a_command_at_its_timeout(self):
    start = time.monotonic()
    rc, hung = procs.run(["sleep", "30"], timeout_s=0.5)
    self.assertTrue(hung)
    self.assertLess(time.monotonic() - start, 5)


class LockTest(unittest.TestCase):

  def test_a_second_campaign_on_one_workdir_is_refused(self):
    with tempfile.TemporaryDirectory() as w:
      fd = lock.lock_dir(w, "ci/campaign")
      self.addCleanup(os.close, fd)
      err = io.StringIO()
      with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        cwd = os.getcwd()
        try:
          status = cmd_campaign.main(["--workdir", w, "--no-install", "graph"])
        finally:
          os.chdir(cwd)
      self.assertEqual(status, 2)
      self.assertIn("in use by another ci/campaign (pid %d)" % os.getpid(), err.getvalue())

  def test_the_lock_is_released_with_its_holder(self):
    with tempfile.TemporaryDirectory() as w:
      os.close(lock.lock_dir(w, "ci/campaign"))
      os.close(lock.lock_dir(w, "ci/campaign"))


class SummaryTest(unittest.TestCase):

  def test_summary_json(self):
    with tempfile.TemporaryDirectory() as w:
      row = cmd_campaign.new_row("graph")
      row.update(seconds=60, execs=600, exec_per_s=10, coverage=5, corpus=7, crashes=1,
                 keys=["model.dead@model"], crash_files=3)
      with contextlib.redirect_stdout(io.StringIO()):
        cmd_campaign.write_summary(w, [row], interrupted=False)
      with open(os.path.join(w, "summary.json")) as f:
        s = json.load(f)
    self.assertEqual(s, {"engine": "libfuzzer", "interrupted": False, "targets": [
        {"name": "graph", "seconds": 60, "execs": 600, "exec_per_s": 10, "coverage": 5,
         "corpus": 7, "crashes": 1, "keys": ["model.dead@model"]}]})


class LibFuzzerTest(unittest.TestCase):

  def test_options_file(self):
    with tempfile.TemporaryDirectory() as d:
      p = os.path.join(d, "graph.options")
      with open(p, "w") as f:
        f.write("# a comment\n[libfuzzer]\nmax_len = 4096\ndict = graph.dict\nuse_counters = 0\n")
      self.assertEqual(libfuzzer.options_flags(p, "/tree/fuzz/targets"),
                       ["-max_len=4096", "-dict=/tree/fuzz/targets/graph.dict",
                        "-use_counters=0"])

  def test_status_lines(self):
    text = ("#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0\n"
            "#512\tpulse  cov: 30 ft: 40 corp: 5/80b exec/s: 256\n"
            "#9000: cov: 44 ft: 50 corp: 9 exec/s 300 oom/timeout/crash: 0/0/1 time: 30s\n")
    self.assertEqual(libfuzzer.last_stats(text), (9000, 44))
    # Without -fork (--throughput) every status line has a tab after the count.
    plain = "#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0\n#70696\tDONE   cov: 1325 ft: 1330\n"
    self.assertEqual(libfuzzer.last_stats(plain), (70696, 1325))
    self.assertIsNone(libfuzzer.last_stats("INFO: Seed: 1\n"))
    self.assertEqual(libfuzzer.final_stat("stat::average_exec_per_sec:     11516\n",
                                          "average_exec_per_sec"), 11516)


if __name__ == "__main__":
  unittest.main()
