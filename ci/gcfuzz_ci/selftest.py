"""Runs the ci program's unittest suite (ci/gcfuzz_ci/tests) and writes its counts as JSON:
`python3 -m gcfuzz_ci.selftest OUT.json` (ci/test's `ci` configuration)."""
import os
import sys
import unittest

from . import jsonout, paths


def main(argv):
  suite = unittest.defaultTestLoader.discover(os.path.join(paths.CI, "gcfuzz_ci", "tests"), top_level_dir=paths.CI)
  result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
  bad = result.failures + result.errors + [(t, "unexpected success")
                                            for t in result.unexpectedSuccesses]
  jsonout.write(argv[1], {"passed": result.testsRun - len(bad), "failed": len(bad),
                          "failures": [t.id() for t, _ in bad]})
  return 0 if not bad else 1


if __name__ == "__main__":
  sys.exit(main(sys.argv))
