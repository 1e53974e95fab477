"""What the ci program reads of libFuzzer: its options files, its status lines and final
statistics (libFuzzer's own fixed formats), and the names of the inputs it saves."""
import os
import re

ARTIFACT_PREFIXES = ("crash-", "timeout-", "oom-", "leak-")


def options_flags(options_path, dict_dir):
  """`-key=value` flags from a [libfuzzer] options file; `dict` is made a path in dict_dir."""
  if not os.path.isfile(options_path):
    return []
  flags = []
  with open(options_path) as f:
    for line in f:
      line = line.strip()
      if not line or line.startswith(("#", "[")) or "=" not in line:
        continue
      key, value = (s.strip() for s in line.split("=", 1))
      if key == "dict":
        value = os.path.join(dict_dir, value)
      flags.append("-%s=%s" % (key, value))
  return flags


# Fork mode: "#N: cov: C ft: F corp: K exec/s E oom/timeout/crash: a/b/c time: Ts job: J";
# plain: "#N\tpulse  cov: C ft: F corp: K/S exec/s: E rss: R" (a tab after the count).
_STATUS = re.compile(r"^#(\d+)[:\s].*?\bcov: (\d+)")


def last_stats(text):
  """(execs, coverage) of the last status line, or None before the first."""
  last = None
  for line in text.splitlines():
    m = _STATUS.match(line)
    if m:
      last = (int(m.group(1)), int(m.group(2)))
  return last


def final_stat(text, name):
  """A `stat::NAME: value` of -print_final_stats=1, or None."""
  m = None
  for m in re.finditer(r"^stat::%s:\s*(\d+)" % re.escape(name), text, re.M):
    pass
  return int(m.group(1)) if m else None


def artifacts(directory):
  """{name: mtime} of the saved crashing inputs in directory."""
  out = {}
  try:
    names = os.listdir(directory)
  except FileNotFoundError:
    return out
  for n in names:
    p = os.path.join(directory, n)
    if n.startswith(ARTIFACT_PREFIXES) and os.path.isfile(p):
      out[n] = os.stat(p).st_mtime_ns
  return out


def new_artifacts(before, now):
  """Names saved (or saved again) since the `before` snapshot: a campaign's own crashes, not
  those of earlier campaigns in the same directory."""
  return sorted(n for n, t in now.items() if n not in before or t > before[n])


def count_files(directory):
  try:
    return sum(1 for e in os.scandir(directory) if e.is_file())
  except FileNotFoundError:
    return 0
