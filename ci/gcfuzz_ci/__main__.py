"""`python3 -m gcfuzz_ci COMMAND ARGS...`: what the shell entries ci/test, ci/campaign, ci/bench
and ci/mutants/run exec."""
import sys

from . import cli


def main(argv):
  if len(argv) < 1 or argv[0] not in cli.COMMANDS:
    sys.stderr.write("usage: python3 -m gcfuzz_ci {%s} [ARGS...]\n" % ",".join(sorted(cli.COMMANDS)))
    return 2
  return cli.run(argv[0], argv[1:])


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
