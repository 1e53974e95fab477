import os
import tempfile
import unittest

from gcfuzz_ci import afl, cli, cmd_campaign

# fuzzer_stats as afl-fuzz 4.04c writes it (shortened).
STATS = """start_time        : 1796171228
last_update       : 1796171291
run_time          : 63
fuzzer_pid        : 3868
cycles_done       : 0
execs_done        : 251417
execs_per_sec     : 4190.27
corpus_count      : 1311
saved_crashes     : 2
saved_hangs       : 0
edges_found       : 1336
total_edges       : 65536
bitmap_cvg        : 23.50%
stability         : 99.18%
target_mode       : shmem_testcase persistent deferred
command_line      : afl-fuzz -M main -i in -o out -- ./graph_fuzzer
"""


class StatsTest(unittest.TestCase):

  def test_fuzzer_stats(self):
    s = afl.parse_stats(STATS)
    self.assertEqual(s["execs_done"], 251417)
    self.assertEqual(s["execs_per_sec"], 4190.27)
    self.assertEqual(s["stability"], 99.18)
    self.assertEqual(s["bitmap_cvg"], 23.5)
    self.assertEqual(s["edges_found"], 1336)
    self.assertEqual(s["target_mode"], "shmem_testcase persistent deferred")
    # A value with colons stays whole.
    self.assertEqual(s["command_line"], "afl-fuzz -M main -i in -o out -- ./graph_fuzzer")

  def test_combine_sums_rates_and_takes_the_worst_stability(self):
    a = afl.parse_stats(STATS)
    b = dict(a, execs_done=1000, execs_per_sec=10.0, edges_found=1400, stability=97.0,
             saved_crashes=1)
    f = afl.combine([a, None, b])
    self.assertEqual(f["execs"], 252417)
    self.assertEqual(f["exec_per_s"], 4200)
    self.assertEqual(f["coverage"], 1400)
    self.assertEqual(f["stability"], 97.0)
    self.assertEqual(f["saved_crashes"], 3)
    self.assertIsNone(afl.combine([None, None]))
    # Before its clock moves, afl-fuzz writes `execs_per_sec : inf`.
    self.assertEqual(afl.combine([afl.parse_stats("execs_per_sec : inf\n")])["exec_per_s"], 0)

  def test_statsd_gauges(self):
    d = (b"fuzzing.execs_done:29093|g|#banner:main,afl_version:++4.04c\n"
         b"fuzzing.execs_per_sec:28054.97|g|#banner:main,afl_version:++4.04c\n"
         b"fuzzing.execs_per_sec:inf|g|#banner:s1,afl_version:++4.04c\n"
         b"fuzzing.edges_found:12|g\n"
         b"other.metric:1|c|#banner:main\n")
    self.assertEqual(afl.parse_statsd(d), [("main", "execs_done", 29093),
                                           ("main", "execs_per_sec", 28054.97)])

  def test_gauges_over_the_stats_file(self):
    with tempfile.TemporaryDirectory() as out:
      os.makedirs(os.path.join(out, "main"))
      with open(os.path.join(out, "main", "fuzzer_stats"), "w") as f:
        f.write(STATS)
      merged = afl.merged_stats(out, ["main", "s1"], {"main": {"execs_done": 300000},
                                                      "s1": {"execs_done": 7}})
      self.assertEqual(merged[0]["execs_done"], 300000)
      self.assertEqual(merged[0]["stability"], 99.18)  # only the file has it
      self.assertEqual(merged[1], {"execs_done": 7})


class CommandTest(unittest.TestCase):

  def test_instances(self):
    self.assertEqual(afl.instance_names(1), ["main"])
    self.assertEqual(afl.instance_names(3), ["main", "s1", "s2"])

  def test_instance_command(self):
    self.assertEqual(
        afl.instance_cmd("/b/graph_fuzzer", "main", "/w/corpus", "/w/afl", 60,
                         "/t/graph.dict", 4096),
        ["afl-fuzz", "-M", "main", "-T", "main", "-i", "/w/corpus", "-o", "/w/afl", "-V", "60",
         "-t", "25000", "-m", "none", "-x", "/t/graph.dict", "-G", "4096", "--",
         "/b/graph_fuzzer"])
    cmd = afl.instance_cmd("/b/f", "s2", "i", "o", 5)
    self.assertEqual(cmd[:5], ["afl-fuzz", "-S", "s2", "-T", "s2"])
    self.assertNotIn("-x", cmd)
    self.assertNotIn("-G", cmd)

  def test_seed_check(self):
    self.assertEqual(afl.seed_check_cmd("/b/graph_fuzzer", "/w/corpus", "/w/crashes"),
                     ["/b/graph_fuzzer", "-runs=0", "-timeout=25", "-rss_limit_mb=2048",
                      "-artifact_prefix=/w/crashes/", "/w/corpus"])

  def test_options_file(self):
    with tempfile.TemporaryDirectory() as d:
      p = os.path.join(d, "graph.options")
      with open(p, "w") as f:
        f.write("[libfuzzer]\nmax_len = 4096\ndict = graph.dict\nuse_counters = 0\n")
      self.assertEqual(afl.max_len(p), 4096)
      self.assertEqual(afl.dict_path(p, "/tree/fuzz/targets"), "/tree/fuzz/targets/graph.dict")

  def test_environment(self):
    env = afl.environment({"PATH": "/bin", "ASAN_OPTIONS": "detect_leaks=1"})
    self.assertNotIn("ASAN_OPTIONS", env)  # afl-fuzz sets its own (abort_on_error, symbolize=0)
    self.assertEqual(env["AFL_NO_UI"], "1")
    self.assertEqual(env["PATH"], "/bin")

  def test_collect_names_crashes_as_libfuzzer_does(self):
    with tempfile.TemporaryDirectory() as w:
      out, corpus, crashes = (os.path.join(w, n) for n in ("afl", "corpus", "crashes"))
      for d in ("main/queue", "main/crashes", "s1/queue", corpus, crashes):
        os.makedirs(os.path.join(out, d) if not d.startswith("/") else d, exist_ok=True)
      for path, data in (("main/queue/id:000000,orig:seed-a", b"A"),
                         ("s1/queue/id:000000,sync:main,src:000000", b"A"),
                         ("s1/queue/id:000001,src:000000,op:havoc", b"B"),
                         ("main/crashes/id:000000,sig:06,src:000001", b"C"),
                         ("main/crashes/README.txt", b"not an input")):
        with open(os.path.join(out, path), "wb") as f:
          f.write(data)
      with open(os.path.join(corpus, "seed-a"), "wb") as f:
        f.write(b"A")
      added, written = afl.collect(out, corpus, crashes)
      self.assertEqual(added, 1)  # B; A is there already
      self.assertEqual(written, ["crash-32096c2e0eff33d844ee6d675407ace18289357d"])
      self.assertEqual(sorted(os.listdir(crashes)), written)


class EngineOptionTest(unittest.TestCase):

  def test_engine_is_parsed(self):
    self.assertEqual(cmd_campaign.parse_args([]).engine, "libfuzzer")
    self.assertEqual(cmd_campaign.parse_args(["--engine", "afl", "graph"]).engine, "afl")

  def test_bad_engines(self):
    for argv in (["--engine", "honggfuzz"], ["--engine", "afl", "schedule-tsan"],
                 ["--engine", "afl", "--throughput"]):
      with self.assertRaises(cli.UsageError, msg=argv):
        cmd_campaign.parse_args(argv)


if __name__ == "__main__":
  unittest.main()
