"""What the commands share at their edges: strict argument parsing, usage errors that exit 2, and
the setup errors and interrupts that end a command with exit 2."""
import argparse
import importlib
import re
import sys

from . import procs, tools

COMMANDS = {"test": "cmd_test", "campaign": "cmd_campaign", "bench": "cmd_bench",
            "mutants": "cmd_mutants"}

USAGE_EXIT = 2


class UsageError(Exception):
  """A bad argument: reported on stderr as `PROG: message`, exit status 2."""


class SetupError(Exception):
  """Something a command needs could not be set up (a build, a copy of the tree): exit 2."""


def guarded(prog, body):
  """body()'s exit status; a setup error (SetupError, a tool that cannot be installed) is
  reported as `PROG: message`, an interrupt stops every child first; both exit 2."""
  try:
    return body()
  except (tools.ToolError, SetupError) as e:
    print("%s: %s" % (prog, e), file=sys.stderr)
    return USAGE_EXIT
  except procs.Interrupted:
    procs.kill_all()
    print("%s: interrupted" % prog, file=sys.stderr)
    return USAGE_EXIT


class Parser(argparse.ArgumentParser):
  """argparse with the commands' conventions: no abbreviated options, and every error is a
  UsageError (exit 2) with the program's name, before anything is touched."""

  def __init__(self, prog, usage_text):
    super().__init__(prog=prog, add_help=False, allow_abbrev=False)
    self.usage_text = usage_text
    self.add_argument("-h", "--help", action="store_true")

  def error(self, message):
    raise UsageError("%s (see %s --help)" % (message, self.prog))

  def parse(self, argv):
    args = self.parse_args(argv)
    if args.help:
      sys.stdout.write(self.usage_text)
      raise SystemExit(0)
    return args


_DECIMAL = re.compile(r"[0-9]+\Z")


def decimal(text, what, minimum=0, maximum=None):
  """A non-negative decimal integer (`010` is ten, `08` is eight: never octal), within bounds."""
  if not _DECIMAL.match(text or ""):
    raise UsageError("%s: expected a decimal number, got '%s'" % (what, text))
  value = int(text, 10)
  if value < minimum:
    raise UsageError("%s: expected at least %d, got '%s'" % (what, minimum, text))
  if maximum is not None and value > maximum:
    raise UsageError("%s: expected at most %d, got '%s'" % (what, maximum, text))
  return value


def run(command, argv):
  module = importlib.import_module("gcfuzz_ci." + COMMANDS[command])
  prog = module.PROG
  try:
    return module.main(argv)
  except UsageError as e:
    sys.stderr.write("%s: %s\n" % (prog, e))
    return USAGE_EXIT
