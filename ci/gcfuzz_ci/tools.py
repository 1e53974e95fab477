"""Installing what a command needs from Debian 12's archive (apt-get, as root or through sudo).

Each need is (how to tell it is there: a command on PATH, an installed package or a module the
running python3 imports; what; the package that brings it). A second run finds everything and
installs nothing.
"""
import importlib.util
import os
import shutil
import subprocess

# What every Bazel-driven command needs: clang 14, its sanitizer and libFuzzer runtimes,
# llvm-symbolizer (reports with file:line) and Bazel.
BASE = (
    ("command", "clang", "clang"),
    ("package", "libclang-rt-14-dev", "libclang-rt-14-dev"),
    ("command", "llvm-symbolizer", "llvm"),
    ("command", "bazel", "bazel-bootstrap"),
)

NEEDS = {
    # zip: ci/oss-fuzz/build.sh packs each target's seed corpus (//ci/oss-fuzz:build_test);
    # afl-clang-fast (afl++: it and the AFL++ driver libAFLDriver.a): the OSS-Fuzz contract's
    # afl builds; clang-format and git (which files are tracked): the format check; patch: the
    # ci program's test that every mutant of the zoo still applies to the tree; PyYAML (Debian's
    # python3-yaml): its test that the GitHub workflows parse and run only the tree's commands.
    "test": BASE + (("command", "zip", "zip"), ("command", "afl-clang-fast", "afl++"),
                    ("command", "clang-format", "clang-format"), ("command", "git", "git"),
                    ("command", "patch", "patch"), ("module", "yaml", "python3-yaml")),
    # llvm-profdata-14 and llvm-cov-14: --coverage.
    # graphviz: the report page draws each violation's neighbourhood with dot -Tsvg.
    "campaign": BASE + (("command", "llvm-profdata-14", "llvm-14"),
                        ("command", "llvm-cov-14", "llvm-14"), ("command", "dot", "graphviz")),
    "report": (("command", "dot", "graphviz"),),
    # ci/test's ci configuration: the report pages opened in headless Chromium (test_browser).
    "browser": (("command", "chromium", "chromium"), ("command", "dot", "graphviz")),
    # git: which files of the working tree are the tree under test (tracked and untracked).
    "mutants": BASE + (("command", "patch", "patch"), ("command", "git", "git")),
    # ci/campaign --engine afl: what a campaign needs, and afl-fuzz with the runtime and driver
    # --config=afl links.
    "campaign-afl": BASE + (("command", "llvm-profdata-14", "llvm-14"),
                            ("command", "llvm-cov-14", "llvm-14"), ("command", "dot", "graphviz"),
                            ("command", "afl-fuzz", "afl++"), ("package", "afl++", "afl++")),
    "bench": (("command", "bazel", "bazel-bootstrap"), ("command", "clang", "clang"),
              ("package", "libgc-dev", "libgc-dev")),
}


class ToolError(Exception):
  pass


def package_installed(name):
  try:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True,
                         text=True)
  except FileNotFoundError:
    return False
  return out.returncode == 0 and "install ok installed" in out.stdout


def importable(name):
  return importlib.util.find_spec(name) is not None


def missing(command, which=shutil.which, installed=package_installed, imports=importable):
  """The packages to install for `command`, in order, each once."""
  packages = []
  for how, thing, package in NEEDS[command]:
    if how == "command":
      present = which(thing) is not None
    elif how == "module":
      present = imports(thing)
    else:
      present = installed(thing)
    if not present and package not in packages:
      packages.append(package)
  return packages


def ensure(command, prog, log_path, allowed=True, which=shutil.which,
           installed=package_installed, imports=importable):
  """Installs what is missing; raises ToolError if it cannot."""
  packages = missing(command, which, installed, imports)
  if not packages:
    return []
  if not allowed:
    raise ToolError("missing %s (and --no-install given)" % " ".join(packages))
  if which("apt-get") is None:
    raise ToolError("missing %s, and there is no apt-get to install them" % " ".join(packages))
  sudo = []
  if os.geteuid() != 0:
    if which("sudo") is None:
      raise ToolError("missing %s; run as root or install sudo" % " ".join(packages))
    sudo = ["sudo"]
  apt = sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-q"]
  print("%s: installing %s (apt-get; log %s)" % (prog, " ".join(packages), log_path), flush=True)
  os.makedirs(os.path.dirname(log_path), exist_ok=True)
  with open(log_path, "w") as log:
    for step in (["update"], ["install", "-y", "--no-install-recommends"] + packages):
      if subprocess.run(apt + step, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
        with open(log_path) as f:
          tail = f.read().splitlines()[-20:]
        raise ToolError("apt-get failed installing %s:\n%s" % (" ".join(packages),
                                                                "\n".join(tail)))
  return packages


def mmap_warning(prog, what="clang 14's sanitizers"):
  """clang 14's sanitizer runtimes need their shadow memory at fixed addresses, which more than
  28 bits of mmap randomization can make impossible."""
  try:
    with open("/proc/sys/vm/mmap_rnd_bits") as f:
      bits = int(f.read().strip())
  except (OSError, ValueError):
    return
  if bits > 28:
    print("%s: warning: vm.mmap_rnd_bits=%d; %s may fail to start (fix: sysctl -w "
          "vm.mmap_rnd_bits=28)" % (prog, bits, what), flush=True)
