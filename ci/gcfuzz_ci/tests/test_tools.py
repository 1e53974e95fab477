import contextlib
import io
import os
import tempfile
import unittest

from gcfuzz_ci import tools
from gcfuzz_ci.tests import fakes


def nothing_installed(thing):
  return None


def imports_all(module):
  return True


class MissingTest(unittest.TestCase):

  def test_ci_test_installs_zip(self):
    # ci/oss-fuzz/build.sh packs the seed corpora with zip (//ci/oss-fuzz:build_test, in three
    # ci/test configurations); on a fresh Debian 12 nothing installed it.
    everything_but_zip = lambda thing: None if thing == "zip" else "/usr/bin/" + thing
    self.assertEqual(tools.missing("test", everything_but_zip, lambda p: True, imports_all),
                     ["zip"])

  def test_ci_test_installs_afl(self):
    # The OSS-Fuzz contract's afl builds need afl-clang-fast and the AFL++ driver (afl++).
    only_afl = lambda t: None if t == "afl-clang-fast" else "/usr/bin/" + t
    self.assertEqual(tools.missing("test", only_afl, lambda p: True), ["afl++"])

  def test_ci_test_installs_clang_format(self):
    only_clang_format = lambda t: None if t == "clang-format" else "/usr/bin/" + t
    self.assertEqual(tools.missing("test", only_clang_format, lambda p: True, imports_all),
                     ["clang-format"])

  def test_ci_test_installs_pyyaml_for_the_interpreter_it_runs(self):
    # The workflows' test parses them with PyYAML: Debian's python3-yaml, asked of the python3
    # that runs the suite (not of dpkg: another interpreter may be first on PATH).
    asked = []
    no_yaml = lambda m: asked.append(m) or m != "yaml"
    self.assertEqual(tools.missing("test", lambda t: "/usr/bin/" + t, lambda p: True, no_yaml),
                     ["python3-yaml"])
    self.assertEqual(asked, ["yaml"])

  def test_fresh_machine(self):
    self.assertEqual(tools.missing("test", nothing_installed, lambda p: False, lambda m: False),
                     ["clang", "libclang-rt-14-dev", "llvm", "bazel-bootstrap", "zip",
                      "afl++", "clang-format", "git", "patch", "python3-yaml"])
    self.assertEqual(tools.missing("campaign", nothing_installed, lambda p: False),
                     ["clang", "libclang-rt-14-dev", "llvm", "bazel-bootstrap", "llvm-14",
                      "graphviz"])
    self.assertEqual(tools.missing("report", nothing_installed, lambda p: False), ["graphviz"])
    self.assertEqual(tools.missing("browser", nothing_installed, lambda p: False),
                     ["chromium", "graphviz"])
    # The zoo copies the working tree by asking git which files it has (a fresh Debian 12
    # container has no git).
    self.assertEqual(tools.missing("mutants", nothing_installed, lambda p: False)[-2:],
                     ["patch", "git"])
    # ci/campaign --engine afl: afl-fuzz and the runtime --config=afl links, one package.
    self.assertEqual(tools.missing("campaign-afl", nothing_installed, lambda p: False)[-2:],
                     ["graphviz", "afl++"])
    self.assertIn("libgc-dev", tools.missing("bench", nothing_installed, lambda p: False))

  def test_nothing_missing_installs_nothing(self):
    self.assertEqual(tools.ensure("test", "ci/test", "/nonexistent/apt.log",
                                  which=lambda t: "/usr/bin/" + t, installed=lambda p: True,
                                  imports=imports_all), [])


@unittest.skipUnless(os.geteuid() == 0, "apt-get runs through sudo when not root")
class EnsureTest(unittest.TestCase):

  def test_apt_get_installs_what_is_missing(self):
    with tempfile.TemporaryDirectory() as d:
      record = os.path.join(d, "calls")
      fakes.script(os.path.join(d, "bin", "apt-get"), 'echo "$@" >>%s\n' % record)
      old_path = os.environ["PATH"]
      os.environ["PATH"] = os.path.join(d, "bin") + ":" + old_path
      self.addCleanup(os.environ.__setitem__, "PATH", old_path)
      which = lambda t: None if t == "zip" else "/usr/bin/" + t
      with contextlib.redirect_stdout(io.StringIO()):
        got = tools.ensure("test", "ci/test", os.path.join(d, "apt.log"), which=which,
                           installed=lambda p: True, imports=imports_all)
      self.assertEqual(got, ["zip"])
      with open(record) as f:
        self.assertEqual(f.read().splitlines(),
                         ["-q update", "-q install -y --no-install-recommends zip"])

  def test_no_install(self):
    with self.assertRaisesRegex(tools.ToolError, "missing zip .and --no-install given"):
      tools.ensure("test", "ci/test", "/nonexistent", allowed=False,
                   which=lambda t: None if t == "zip" else "/usr/bin/" + t,
                   installed=lambda p: True, imports=imports_all)


if __name__ == "__main__":
  unittest.main()
