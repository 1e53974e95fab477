"""Every Bazel label and tree path the ci program names, in one table.

fuzz/ is split into packages (fuzz/targets, fuzz/replay, fuzz/driver, ...); the table says where
each binary the program builds or runs lives.
"""

# The fuzz targets. Adding one: its row here is implied by the name (the paths below are formed
# from it), plus fuzz/targets/<name>_fuzzer.c, its dict/options, corpus/<name>/, and its op set
# known to the replay tool (--target <name>).
FUZZ_TARGETS = ("graph", "roots", "schedule")

LAYOUTS = {
    "split": {
        "fuzz_package": "fuzz/targets",  # <t>_fuzzer, <t>.dict, <t>.options
        "replay": "fuzz/replay/replay",
        "stress_test": "fuzz/driver/stress_test",
        "corpus_test": "fuzz/driver/corpus_test",
    },
}


class Layout:
  """Paths are package-relative paths P/N of a binary; its label is //P:N and the binary is
  bazel-bin/P/N."""

  def __init__(self, name):
    if name not in LAYOUTS:
      raise ValueError("unknown layout %r (one of: %s)" % (name, ", ".join(LAYOUTS)))
    self.name = name
    self.row = LAYOUTS[name]

  def fuzzer(self, target):
    return "%s/%s_fuzzer" % (self.row["fuzz_package"], target)

  def options_file(self, target):
    return "%s/%s.options" % (self.row["fuzz_package"], target)

  def options_dir(self):
    """Where an options file's `dict = NAME` is found."""
    return self.row["fuzz_package"]

  @property
  def replay(self):
    return self.row["replay"]

  @property
  def stress_test(self):
    return self.row["stress_test"]

  @property
  def corpus_test(self):
    return self.row["corpus_test"]


def label(path):
  """//P:N of the binary at package path P/N."""
  package, _, name = path.rpartition("/")
  return "//%s:%s" % (package, name)


def current():
  return Layout("split")
