import contextlib
import io
import unittest

from gcfuzz_ci import cli, cmd_campaign, cmd_test


class DecimalTest(unittest.TestCase):

  def test_leading_zeros_are_decimal(self):
    # bash read "08" as a bad octal number (passing validation, then dying with status 1) and
    # "010" as 8.
    self.assertEqual(cli.decimal("08", "--time"), 8)
    self.assertEqual(cli.decimal("010", "--time"), 10)

  def test_malformed_numbers_are_usage_errors(self):
    for bad in ("", "1e3", "-1", "+5", "0x10", " 5", "5 ", "1.5", "٣"):
      with self.subTest(bad=bad), self.assertRaises(cli.UsageError):
        cli.decimal(bad, "--time")

  def test_bounds(self):
    with self.assertRaises(cli.UsageError):
      cli.decimal("0", "--time", minimum=1)
    with self.assertRaises(cli.UsageError):
      cli.decimal("3", "--core", maximum=2)


def run_quietly(command, argv):
  err = io.StringIO()
  with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    status = cli.run(command, argv)
  return status, err.getvalue()


class UsageExitTest(unittest.TestCase):

  def test_usage_errors_exit_2_naming_the_program(self):
    for command, argv in (("campaign", ["--time", "08x"]), ("campaign", ["--time", "0"]),
                          ("campaign", ["nosuchtarget"]), ("campaign", ["--bogus"]),
                          ("campaign", ["--jobs", "0"]), ("campaign", ["--time"]),
                          ("campaign", ["--export", "--coverage"]),
                          ("test", ["--config", "nosuch"]), ("test", ["extra"]),
                          ("mutants", ["--jobs", "3"]), ("mutants", ["--budget", "1.5"]),
                          ("bench", ["--rounds", "0"]), ("bench", ["--only", "nosuch"])):
      with self.subTest(command=command, argv=argv):
        status, err = run_quietly(command, argv)
        self.assertEqual(status, 2)
        self.assertTrue(err.startswith(cli.importlib.import_module(
            "gcfuzz_ci." + cli.COMMANDS[command]).PROG + ": "), err)

  def test_no_abbreviated_options(self):
    status, _ = run_quietly("campaign", ["--tim", "5"])
    self.assertEqual(status, 2)

  def test_campaign_time_is_decimal(self):
    self.assertEqual(cmd_campaign.parse_args(["--time", "010", "graph"]).time, 10)
    self.assertEqual(cmd_campaign.parse_args(["--time=08"]).time, 8)

  def test_campaign_defaults(self):
    a = cmd_campaign.parse_args([])
    self.assertEqual((a.mode, a.time, a.minimize_time, a.targets),
                     ("campaign", 60, 10, ["graph", "roots", "schedule"]))

  def test_test_configs_run_in_canonical_order(self):
    self.assertEqual(cmd_test.parse_args(["--config", "tsan", "--config=ci", "--config", "ci"]),
                     ["ci", "tsan"])
    self.assertEqual(cmd_test.parse_args([]), list(cmd_test.ALL_CONFIGS))

  def test_help_exits_0(self):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as e:
      cmd_campaign.parse_args(["--time", "bad", "--help"])
    self.assertEqual(e.exception.code, 0)
    self.assertIn("Usage: ci/campaign", out.getvalue())


if __name__ == "__main__":
  unittest.main()
