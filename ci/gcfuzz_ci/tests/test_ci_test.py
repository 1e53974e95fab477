import os
import shutil
import subprocess
import tempfile
import unittest

from gcfuzz_ci import bazel, cmd_test, fmt, paths
from gcfuzz_ci.tests import fakes


class SummaryTest(unittest.TestCase):

  def test_bazel_summary(self):
    self.assertEqual(bazel.test_summary(fakes.BAZEL_TEST_LOG), [
        ("PASSED", "//gc:alloc_test", ""),
        ("PASSED", "//gc:mark_test", ""),
        ("FAILED", "//fuzz:corpus_test",
         "/root/.cache/bazel/execroot/testlogs/fuzz/corpus_test/test.log"),
        ("FLAKY", "//invariants:threads_test",
         "/root/.cache/bazel/execroot/testlogs/invariants/threads_test/test_attempts/"
         "attempt_1.log"),
        ("NO STATUS", "//gc:domain_test", ""),
    ])

  def test_build_errors(self):
    log = ("Loading: 0 packages loaded\nERROR: /w/gc/BUILD:3:8: Compiling gc/a.c failed\n"
           "gc/a.c:1:1: error: unknown type name 'x'\nUse --sandbox_debug to see more\n"
           "INFO: Elapsed time: 1s\n")
    self.assertEqual(bazel.build_errors(log), ["ERROR: /w/gc/BUILD:3:8: Compiling gc/a.c failed",
                                               "gc/a.c:1:1: error: unknown type name 'x'"])


class FinalLineTest(unittest.TestCase):

  def result(self, name, passed, failed, skipped=False):
    r = cmd_test.Result(name)
    r.passed, r.failed, r.skipped = passed, failed, skipped
    return r

  def test_counts_include_every_configuration(self):
    status, line = cmd_test.final_status([self.result("ci", 40, 0), self.result("format", 0, 1),
                                          self.result("default", 60, 2)])
    self.assertEqual((status, line), (1, "100 passed, 3 failed"))

  def test_no_test_is_a_failure(self):
    self.assertEqual(cmd_test.final_status([self.result("default", 0, 0)]),
                     (1, "0 passed, 0 failed"))
    self.assertEqual(cmd_test.final_status([self.result("tsan", 0, 0, skipped=True)]),
                     (0, "0 passed, 0 failed"))


@unittest.skipUnless(shutil.which("clang-format"), "clang-format is installed by ci/test")
class FormatTest(unittest.TestCase):

  def test_the_check_finds_unformatted_files(self):
    with tempfile.TemporaryDirectory() as d:
      shutil.copyfile(os.path.join(paths.ROOT, ".clang-format"), os.path.join(d, ".clang-format"))
      os.makedirs(os.path.join(d, "gc"))
      os.makedirs(os.path.join(d, "third_party"))
      with open(os.path.join(d, "gc", "good.c"), "w") as f:
        f.write("int f(int x) {\n  if (x < 1) return 0;\n  return x * 2;\n}\n")
      with open(os.path.join(d, "gc", "bad.h"), "w") as f:
        f.write("int  g( int x ){return x;}\n")
      with open(os.path.join(d, "third_party", "theirs.c"), "w") as f:
        f.write("int  h( int x ){return x;}\n")
      with open(os.path.join(d, "gc", "untracked.c"), "w") as f:
        f.write("int  k( int x ){return x;}\n")
      subprocess.run(["git", "init", "-q", d], check=True)
      subprocess.run(["git", "add", ".clang-format", "gc/good.c", "gc/bad.h",
                      "third_party/theirs.c"], cwd=d, check=True)
      files = fmt.tracked_sources(d)
      self.assertEqual(files, ["gc/bad.h", "gc/good.c"])
      self.assertEqual(fmt.unformatted(d, files), ["gc/bad.h"])
      # An export (no git): every C file but third_party's.
      shutil.rmtree(os.path.join(d, ".git"))
      self.assertEqual(fmt.tracked_sources(d), ["gc/bad.h", "gc/good.c", "gc/untracked.c"])


if __name__ == "__main__":
  unittest.main()
