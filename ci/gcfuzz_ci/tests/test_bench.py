import os
import tempfile
import unittest

from gcfuzz_ci import cmd_bench


class BenchTest(unittest.TestCase):

  def test_bench_line(self):
    err = "binary-trees 16: ok\nBENCH bench=binary-trees wall_s=0.462 peak_mib=20.8\n"
    self.assertEqual(cmd_bench.bench_line(err), (0.462, 20.8))
    self.assertEqual(cmd_bench.bench_line("no figures\n"), (None, None))

  def test_collections(self):
    err = "BENCH wall_s=4.274 peak_mib=141.5 gcs=14\n"
    self.assertEqual(cmd_bench.bench_line(err), (4.274, 141.5))
    self.assertEqual(cmd_bench.bench_collections(err), 14)
    # A program from before gcs=: no figure, not 0.
    self.assertIsNone(cmd_bench.bench_collections("BENCH wall_s=1 peak_mib=2\n"))
    self.assertIsNone(cmd_bench.bench_collections("BENCH wall_s=1 gcs=x\n"))

  def test_benchmarks_and_only(self):
    self.assertEqual(list(cmd_bench.BENCHES), ["binary-trees", "gcbench", "cache", "tree-churn", "weak-memo",
                      "fragment"])
    self.assertEqual(cmd_bench.target("cache", "gcfuzz-stw-2"), "//bench:cache_churn_gcfuzz_2")
    self.assertEqual(cmd_bench.target("tree-churn", "bdwgc-incr"),
                     "//bench:tree_churn_bdwgc_incr")
    self.assertEqual(cmd_bench.parse_args(["--only", "cache"]).benches, ["cache"])
    a = cmd_bench.parse_args(["--only", "tree_churn"])
    self.assertEqual((a.benches, a.rows), (["tree-churn"], []))
    # The benchmarks whose lines hold no timings are compared across backends.
    self.assertEqual([b for b, spec in cmd_bench.BENCHES.items() if spec[3]],
                     ["binary-trees", "cache", "tree-churn", "weak-memo", "fragment"])

  def test_same_output(self):
    b = cmd_bench.Bench(cmd_bench.parse_args(["--only", "cache"]))
    with tempfile.TemporaryDirectory() as d:
      paths_ = []
      for i, text in enumerate(["table checksum: 1\n", "table checksum: 1\n",
                                "table checksum: 2\n"]):
        paths_.append(os.path.join(d, "r%d.out" % i))
        with open(paths_[-1], "w") as f:
          f.write(text)
      self.assertTrue(b.same_output("cache", paths_[0]))
      self.assertTrue(b.same_output("cache", paths_[1]))
      self.assertFalse(b.same_output("cache", paths_[2]))
      self.assertEqual(b.first_output["cache"][0], os.path.join(d, "r0"))

  def test_gcs_column_and_its_ratio(self):
    rows = [{"bench": "cache", "size": "19", "backend": "gcfuzz", "wall_s": 4.0,
             "peak_mib": 140.0, "pause_max_ms": 0.1, "pause_p99_ms": 0.05, "slice_max_ms": 2.0,
             "gcs": 14, "_median": True},
            {"bench": "cache", "size": "19", "backend": "bdwgc", "wall_s": 6.0, "peak_mib": 140.0,
             "gcs": 28, "_median": True},
            {"bench": "cache", "size": "19", "backend": "malloc", "wall_s": 4.0,
             "peak_mib": 80.0, "gcs": 0, "_median": True}]
    lines = cmd_bench.table(rows, cmd_bench.RATIOS)
    self.assertEqual(lines[0].split()[-1], "gcs")
    self.assertIn("cache          19      gcfuzz                                4.000      140.0"
                  "        0.100        0.050        2.000      14", lines)
    # No pause columns on bdwgc's rows: three empty ones before its collections.
    empty = " " * (3 * 13)
    self.assertIn("cache          19      bdwgc                                 6.000      140.0"
                  + empty + "      28", lines)
    self.assertIn("cache          19      gcfuzz/bdwgc                          0.67x      1.00x"
                  + empty + "   0.50x", lines)
    # No ratio of collections against malloc's none.
    self.assertIn("cache          19      gcfuzz/malloc                         1.00x      1.75x",
                  lines)

  def test_row_lines(self):
    r = cmd_bench.row_of('ROW {"bench": "verify", "size": 10000, "backend": "reach", '
                         '"wall_s": 0.0123, "peak_mib": null}')
    self.assertEqual(r, {"bench": "verify", "size": "10000", "backend": "reach",
                         "wall_s": 0.0123, "peak_mib": None})
    self.assertIsNone(cmd_bench.row_of('ROW {"bench": "verify"}'))
    self.assertIsNone(cmd_bench.row_of("ROW not json"))

  def test_table_ratios(self):
    rows = [{"bench": "b", "size": "16", "backend": "gcfuzz", "wall_s": 0.39, "peak_mib": 20.0,
             "_median": True},
            {"bench": "b", "size": "16", "backend": "bdwgc", "wall_s": 0.78, "peak_mib": 10.0,
             "_median": True},
            {"bench": "verify", "size": "10000", "backend": "reach", "wall_s": 0.0123,
             "peak_mib": None},
            {"bench": "verify", "size": "10000", "backend": "mark", "wall_s": 0.0246,
             "peak_mib": None}]
    lines = cmd_bench.table(rows, ["gcfuzz/bdwgc", "reach/mark", "gcfuzz/malloc"])
    self.assertIn("b              16      gcfuzz                                0.390       20.0",
                  lines)
    self.assertIn("b              16      gcfuzz/bdwgc                          0.50x      2.00x",
                  lines)
    self.assertIn("verify         10000   reach/mark                            0.50x", lines)
    self.assertIn("verify         10000   reach                                0.0123          -",
                  lines)
    self.assertFalse(any("gcfuzz/malloc" in l for l in lines))

  def test_pause_columns_and_their_ratio(self):
    rows = [{"bench": "b", "size": "20", "backend": "gcfuzz", "wall_s": 5.0, "peak_mib": 200.0,
             "pause_max_ms": 8.0, "pause_p99_ms": 4.0, "_median": True},
            {"bench": "b", "size": "20", "backend": "gcfuzz-incremental", "wall_s": 6.0,
             "peak_mib": 210.0, "pause_max_ms": 0.5, "pause_p99_ms": 0.2, "_median": True},
            {"bench": "b", "size": "20", "backend": "bdwgc", "wall_s": 7.5, "peak_mib": 200.0,
             "_median": True}]
    lines = cmd_bench.table(rows, cmd_bench.RATIOS)
    self.assertIn("b              20      gcfuzz                                5.000      200.0"
                  "        8.000        4.000", lines)
    self.assertIn("b              20      gcfuzz-incremental/gcfuzz             1.20x      1.05x"
                  "        0.06x        0.05x", lines)
    self.assertIn("b              20      gcfuzz-incremental/bdwgc              0.80x      1.05x",
                  lines)
    self.assertIn("b              20      bdwgc                                 7.500      200.0",
                  lines)
    self.assertFalse(any("gcfuzz/gcfuzz-stw" in l for l in lines))

  def test_marking_modes(self):
    self.assertEqual(cmd_bench.marking_of("gcfuzz-stw-2"), "stw")
    self.assertEqual(cmd_bench.marking_of("gcfuzz-incremental"), "incremental")
    self.assertIsNone(cmd_bench.marking_of("gcfuzz-2"))
    self.assertIsNone(cmd_bench.marking_of("bdwgc-incr"))
    self.assertEqual(cmd_bench.target("gcbench", "gcfuzz-incremental-2"), "//bench:gcbench_gcfuzz_2")
    self.assertEqual(cmd_bench.target("gcbench", "bdwgc-incr-2"), "//bench:gcbench_bdwgc_incr_2")
    # The default mode's rows are `gcfuzz`: only the other mode is named.
    stw = cmd_bench.backends_for("stw")
    self.assertIn("gcfuzz-incremental-2", stw)
    self.assertNotIn("gcfuzz-stw", stw)
    inc = cmd_bench.backends_for("incremental")
    self.assertIn("gcfuzz-stw", inc)
    self.assertIn("gcfuzz-stw-2", inc)
    self.assertNotIn("gcfuzz-incremental", inc)
    self.assertFalse(any(cmd_bench.marking_of(b) for b in cmd_bench.backends_for(None)))
    self.assertEqual(cmd_bench.params_for("gcfuzz-stw", {"GCFUZZ_PARAMS": "percent=200"}),
                     "percent=200,marking=stw")
    self.assertEqual(cmd_bench.params_for("gcfuzz-incremental-2", {}), "marking=incremental")
    self.assertEqual(cmd_bench.params_for("gcfuzz", {"GCFUZZ_PARAMS": "trace=1"}), "trace=1")

  def test_pause_fields(self):
    err = ("BENCH wall_s=1\nPAUSES cycles=3 marking=incremental pauses=700 max_ns=9000000 "
           "max_slice_ns=250000 ns=" + ",".join(str(i * 1000) for i in range(1, 101)) + "\n")
    found = cmd_bench.pause_fields(err)
    self.assertEqual((found["cycles"], found["marking"], found["pauses"], found["max_ns"],
                      found["max_slice_ns"]), (3, "incremental", 700, 9000000, 250000))
    # The max is the run's (max_ns), not the ring's; the p99 is the ring's.
    self.assertEqual(cmd_bench.pause_figures(found), (9.0, 0.099))
    # An older program: no max_ns, the ring's max.
    self.assertEqual(cmd_bench.pause_figures(cmd_bench.pause_fields("PAUSES cycles=1 ns=5000000\n")),
                     (5.0, 5.0))
    self.assertEqual(cmd_bench.pause_figures(cmd_bench.pause_fields("PAUSES cycles=0 ns=\n")),
                     (None, None))
    self.assertEqual(cmd_bench.pause_figures(None), (None, None))

  def test_trace_cycles(self):
    inc = ("gc 7 @1.500s 2 markers: incremental, 9 slices, 0 rechecks, start 0.004 ms, end 0.002 "
           "ms; sweep 0.001 ms, mark 20.000 ms, pause 0.002 ms; heap 1024->2048 KiB (pools 2048, "
           "large 0), blocks 10->20, live 512 KiB in 5 blocks, freed 0 KiB since last cycle; goal "
           "2000 KiB, trigger 1800 KiB, at end 1990 KiB (overshoot -0.5%); next after 900 KiB; 0 "
           "overflows, 0 handoffs")
    stw = ("gc 8 @2.000s 1 markers: sweep 0.001 ms, mark 5.000 ms, pause 5.100 ms; heap "
           "3072->3072 KiB (pools 3072, large 0), blocks 1->1, live 100 KiB in 1 blocks, freed 0 "
           "KiB since last cycle; goal off, at end 3000 KiB; next after 0 KiB; 0 overflows, 0 "
           "handoffs")
    old = ("gc 9 @3.000s 1 markers: sweep 0.001 ms, mark 5.000 ms, pause 5.100 ms; heap 1->2 KiB "
           "(pools 2, large 0), blocks 1->1, live 1 KiB in 1 blocks, freed 0 KiB since last "
           "cycle; next after 1 KiB; 0 overflows, 0 handoffs")
    c = cmd_bench.trace_cycles("BENCH wall_s=1\n%s\n%s\n%s\nPAUSES cycles=3 ns=1\n" % (inc, stw, old))
    self.assertEqual(len(c), 3)
    self.assertEqual(c[0], {"t": 1.5, "mark_ms": 20.0, "start_ms": 0.004, "end_ms": 0.002,
                            "heap_kib": [1024, 2048], "live_kib": 512, "goal_kib": 2000,
                            "trigger_kib": 1800, "end_kib": 1990})
    self.assertEqual((c[1]["start_ms"], c[1]["end_ms"], c[1]["goal_kib"], c[1]["end_kib"]),
                     (5.1, None, None, 3000))
    self.assertEqual((c[2]["goal_kib"], c[2]["end_kib"], c[2]["heap_kib"]), (None, None, [1, 2]))

  def test_traced(self):
    self.assertEqual(cmd_bench.traced(""), "trace=1")
    self.assertEqual(cmd_bench.traced("percent=200,marking=stw"), "percent=200,marking=stw,trace=1")
    self.assertEqual(cmd_bench.traced("trace=0"), "trace=0")
    self.assertEqual(cmd_bench.traced("percent=50,trace=1"), "percent=50,trace=1")

  def test_row_keeps_extra_numbers(self):
    r = cmd_bench.row_of('ROW {"bench": "barrier", "size": "1000", "backend": "gc_store", '
                         '"wall_s": 0.04, "peak_mib": null, "ns_per_store": 2.1, "note": "x"}')
    self.assertEqual(r["ns_per_store"], 2.1)
    self.assertNotIn("note", r)

  def test_weak_memo_one_thread(self):
    self.assertEqual(cmd_bench.BENCHES["weak-memo"], ("weak_memo", 15, 12, True))
    self.assertEqual(cmd_bench.target("weak-memo", "bdwgc-incr"), "//bench:weak_memo_bdwgc_incr")
    self.assertEqual(cmd_bench.target("weak-memo", "gcfuzz-stw"), "//bench:weak_memo_gcfuzz")
    # One thread only: no -2 backend (nor a -2 --against one); the others run everything.
    for be in ("gcfuzz", "gcfuzz-stw", "bdwgc", "bdwgc-incr", "malloc", "gcfuzz@abc1234"):
      self.assertTrue(cmd_bench.runs_on("weak-memo", be), be)
    for be in ("gcfuzz-2", "gcfuzz-incremental-2", "bdwgc-incr-2", "malloc-2", "gcfuzz-2@abc1234"):
      self.assertFalse(cmd_bench.runs_on("weak-memo", be), be)
    self.assertTrue(cmd_bench.runs_on("binary-trees", "gcfuzz-2"))
    self.assertEqual(cmd_bench.parse_args(["--only", "weak_memo"]).benches, ["weak-memo"])

  def test_fragment_and_gcfuzz_compact(self):
    # gcfuzz-compact is the gcfuzz program with compact=N, for fragment only, one thread.
    self.assertEqual(cmd_bench.target("fragment", "gcfuzz-compact"), "//bench:fragment_gcfuzz")
    self.assertTrue(cmd_bench.runs_on("fragment", "gcfuzz-compact"))
    self.assertFalse(cmd_bench.runs_on("cache", "gcfuzz-compact"))
    self.assertFalse(cmd_bench.runs_on("fragment", "gcfuzz-2"))
    self.assertTrue(cmd_bench.runs_on("fragment", "malloc"))
    self.assertIn("gcfuzz-compact", cmd_bench.backends_for("stw"))
    self.assertIsNone(cmd_bench.marking_of("gcfuzz-compact"))
    n = cmd_bench.COMPACT_PERCENT
    self.assertEqual(cmd_bench.params_for("gcfuzz-compact", {}), "compact=%d" % n)
    self.assertEqual(cmd_bench.params_for("gcfuzz-compact", {"GCFUZZ_PARAMS": "percent=200"}),
                     "percent=200,compact=%d" % n)
    # The environment's own compact= wins (a key given twice is an error).
    self.assertEqual(cmd_bench.params_for("gcfuzz-compact", {"GCFUZZ_PARAMS": "compact=50"}),
                     "compact=50")
    self.assertEqual(cmd_bench.params_for("gcfuzz", {"GCFUZZ_PARAMS": "x=1"}), "x=1")
    self.assertEqual(cmd_bench.parse_args(["--only", "compact"]).rows, ["compact"])

  def test_heap_figures(self):
    err = ("BENCH wall_s=0.2 peak_mib=60.6 gcs=9 final_mapped_mib=11.16 live_mib=10.63 "
           "data_mib=10.21\n")
    self.assertEqual(cmd_bench.bench_heap(err), {"final_mapped_mib": 11.16, "live_mib": 10.63,
                                                 "data_mib": 10.21})
    # Unknown: null.
    self.assertEqual(cmd_bench.bench_heap("BENCH wall_s=1 final_mapped_mib=4\n"),
                     {"final_mapped_mib": 4.0, "live_mib": None, "data_mib": None})
    h = cmd_bench.heap_figures([{"final_mapped_mib": 50.0, "live_mib": 10.0, "data_mib": 8.0},
                                {"final_mapped_mib": 60.0, "live_mib": 10.0, "data_mib": 8.0},
                                {"final_mapped_mib": 55.0, "live_mib": None, "data_mib": 8.0}])
    self.assertEqual(h, {"final_mapped_mib": 55.0, "live_mib": 10.0, "data_mib": 8.0,
                         "mapped_live": 5.5, "mapped_data": 6.88})
    rows = [{"bench": "fragment", "size": "18", "backend": "gcfuzz", "wall_s": 0.2,
             "peak_mib": 60.0, "_median": True, "final_mapped_mib": 55.0, "live_mib": 10.5,
             "mapped_live": 5.24, "data_mib": 10.2, "mapped_data": 5.39},
            {"bench": "fragment", "size": "18", "backend": "gcfuzz-compact", "wall_s": 0.22,
             "peak_mib": 60.0, "_median": True, "final_mapped_mib": 11.0, "live_mib": 10.5,
             "mapped_live": 1.05, "data_mib": 10.2, "mapped_data": 1.08}]
    lines = cmd_bench.table(rows, cmd_bench.RATIOS)
    self.assertEqual(lines[0].split()[-5:], ["mapped_mib", "live_mib", "map/live", "data_mib",
                                             "map/data"])
    self.assertTrue(any(l.startswith("fragment       18      gcfuzz-compact  ") and
                        l.endswith("11.00     10.50      1.05     10.20      1.08")
                        for l in lines), lines)
    # The ratio row divides the final mapped heap too.
    ratio_line = next(l for l in lines if "gcfuzz-compact/gcfuzz" in l)
    self.assertTrue(ratio_line.endswith("0.20x"), ratio_line)
    # Without heap figures the table keeps its columns.
    self.assertEqual(cmd_bench.table(rows[:0], [])[0].split()[-1], "gcs")


if __name__ == "__main__":
  unittest.main()
