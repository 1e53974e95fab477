"""Every Bazel label and tree path the ci program names, in one table.

fuzz/ is split into packages (fuzz/targets, fuzz/replay, fuzz/driver, ...); the table says where
each binary the program builds or runs lives.
"""

# The fuzz targets. Adding one: its row here is implied by the name (the paths below are formed
# from it), plus fuzz/targets/<name>_fuzzer.c, its dict/options, corpus/<name>/, and its op set
# known to the replay tool (--target <name>).
PROGRAM_TARGETS = ("graph", "roots", "schedule")

# Targets that run another target's programs (its op set, seeds, dictionary and options, and
# `replay --target`) in another build: name -> (the target whose programs they run, the binary
# in fuzz/targets, the .bazelrc config). schedule-tsan: the schedule programs on free threads
# under ThreadSanitizer; gcfuzz-threads-tsan: the gcfuzz-threads programs (weak references and
# ephemerons among them) the same way, through the backend interface.
VARIANTS = {
    "schedule-tsan": ("schedule", "schedule_tsan_fuzzer", "tsan-fuzz"),
    "gcfuzz-threads-tsan": ("gcfuzz-threads", "gcfuzz_threads_tsan_fuzzer", "tsan-fuzz"),
}

# The targets of other collectors (fuzz/backend/<name>/): each runs its backend's op set through
# the backend interface (fuzz/targets/backend_fuzzer.c), from corpus/<name>/, with
# fuzz/targets/<name>.{dict,options}; `replay --target NAME` (or --backend NAME) replays them.
# name -> (the Debian source package, its version, the variable that names a patched copy of its
# tree for the repository rule of third_party/debian/debian_source.bzl).
BACKEND_SOURCES = {
    "lua": ("lua5.4", "5.4.4-3+deb12u1", "GCFUZZ_LUA_SRC"),
    "bdwgc": ("libgc", "1:8.2.2-3", "GCFUZZ_BDWGC_SRC"),
}
BACKEND_TARGETS = tuple(BACKEND_SOURCES)
# --backend NAME of ci/campaign and ci/mutants/run: gcfuzz's own collector is the default.
BACKENDS = ("gcfuzz",) + BACKEND_TARGETS
# Every target that runs a backend's op set through the backend interface (backend_fuzzer.c):
# the other collectors', and `gcfuzz`, gcfuzz's own collector driven the same way (from
# corpus/gcfuzz/, with fuzz/targets/gcfuzz.{dict,options}). The latter is asked for by name: the
# program targets drive gcfuzz's collector with every op of its own and are its campaign's.
INTERFACE_TARGETS = ("gcfuzz",) + BACKEND_TARGETS
# Threaded interface targets (NAME-threads, fuzz/targets/NAME_threads_fuzzer): a backend with the
# `threads` capability, one thread a domain under the controlled scheduler, from
# corpus/NAME-threads/ with fuzz/targets/NAME-threads.{dict,options}. gcfuzz-threads is the
# schedule target through the interface.
THREADED_TARGETS = ("gcfuzz-threads",)
INTERFACE_TARGETS += THREADED_TARGETS

# Every name ci/campaign and the zoo's fuzz: steps accept; a campaign without names runs the
# program targets (schedule-tsan needs its own build, and TSan cannot run where mmap
# randomization is 32 bits: it is asked for by name).
FUZZ_TARGETS = PROGRAM_TARGETS + tuple(VARIANTS) + INTERFACE_TARGETS
DEFAULT_TARGETS = PROGRAM_TARGETS
# What ci/campaign --coverage measures by default: every target that drives gcfuzz's collector
# on the default build, so the census sees its weak references and ephemerons too (only the
# interface targets' op sets have them).
COVERAGE_TARGETS = PROGRAM_TARGETS + ("gcfuzz", "gcfuzz-threads")


def targets_of_backend(backend):
  """The fuzz targets a campaign of `backend` runs by default."""
  return DEFAULT_TARGETS if backend == "gcfuzz" else (backend,)


def backend_of(target):
  """The collector a target fuzzes: its own name for another collector's, else gcfuzz."""
  if target in THREADED_TARGETS:
    return target[:-len("-threads")]
  return target if target in INTERFACE_TARGETS else "gcfuzz"

# The build of every program target (.bazelrc): libFuzzer + ASan/UBSan.
FUZZ_CONFIG = "fuzz"

# ci/oss-fuzz/build.sh's whole contract matrix (every engine x sanitizer; a manual target, run
# by ci/test --config oss-fuzz; its fast part is //ci/oss-fuzz:build_test, in //...).
OSS_FUZZ_CONTRACT_TEST = "ci/oss-fuzz/contract_test"
# The same input, the same coverage: manual, run under --config=fuzz by ci/test's fuzz
# configuration.
STABILITY_TEST = "fuzz/targets/stability_test"


def programs_of(target):
  """The target whose programs `target` runs: its corpus/, options, dictionary, and the replay
  tool's --target."""
  return VARIANTS[target][0] if target in VARIANTS else target


def config_of(target):
  """The .bazelrc config `target`'s fuzzer is built with."""
  return VARIANTS[target][2] if target in VARIANTS else FUZZ_CONFIG


def is_tsan(target):
  """Its findings depend on how the OS runs its threads: reproducing one may take several runs."""
  return config_of(target) == "tsan-fuzz"

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
    binary = VARIANTS[target][1] if target in VARIANTS else target.replace("-", "_") + "_fuzzer"
    return "%s/%s" % (self.row["fuzz_package"], binary)

  def fuzzer_source(self, target):
    """The target's source: the interface targets (and their variants) share backend_fuzzer.c."""
    if programs_of(target) in INTERFACE_TARGETS:
      return "%s/backend_fuzzer.c" % self.row["fuzz_package"]
    return self.fuzzer(target) + ".c"

  def options_file(self, target):
    return "%s/%s.options" % (self.row["fuzz_package"], programs_of(target))

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


# The fixed work directories ci/test's browser configuration draws its pages from (browser.py):
# a campaign's (campaign/) and ci/bench's output directory (bench/).
REPORT_FIXTURES = "ci/testdata/report"
