import unittest

from gcfuzz_ci import cmd_bench


class BenchTest(unittest.TestCase):

  def test_bench_line(self):
    err = "binary-trees 16: ok\nBENCH bench=binary-trees wall_s=0.462 peak_mib=20.8\n"
    self.assertEqual(cmd_bench.bench_line(err), (0.462, 20.8))
    self.assertEqual(cmd_bench.bench_line("no figures\n"), (None, None))

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
    self.assertIn("b              16      gcfuzz                          0.390       20.0",
                  lines)
    self.assertIn("b              16      gcfuzz/bdwgc                    0.50x      2.00x",
                  lines)
    self.assertIn("verify         10000   reach/mark                      0.50x           ",
                  lines)
    self.assertIn("verify         10000   reach                          0.0123          -",
                  lines)
    self.assertFalse(any("gcfuzz/malloc" in l for l in lines))


if __name__ == "__main__":
  unittest.main()
