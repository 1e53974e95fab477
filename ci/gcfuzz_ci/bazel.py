"""Calling Bazel and reading what it prints about tests (its summary lines, not the tests')."""
import os
import re
import subprocess

OPTS = ["--color=no", "--curses=no"]


def cache_opts(default=None):
  """--disk_cache: GCFUZZ_DISK_CACHE if set (workspaces on one machine share one cache), else
  the command's default, else none."""
  path = os.environ.get("GCFUZZ_DISK_CACHE") or default
  return ["--disk_cache=" + path] if path else []


def run(args, log_path, cwd=None, append=False, env=None):
  """`bazel ARGS` with its output in log_path; returns its exit status. env: variables to set
  for this command (a repository rule reads them: GCFUZZ_LUA_SRC names a patched tree)."""
  full = dict(os.environ, **env) if env else None
  with open(log_path, "a" if append else "w") as log:
    return subprocess.run(["bazel"] + args, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                          stdin=subprocess.DEVNULL, env=full).returncode


def output(args, cwd=None):
  """stdout of `bazel ARGS`, or None if it failed."""
  p = subprocess.run(["bazel"] + args, capture_output=True, text=True, cwd=cwd,
                     stdin=subprocess.DEVNULL)
  return p.stdout.strip() if p.returncode == 0 else None


def bazel_bin(flags, cwd=None):
  return output(["info"] + OPTS + flags + ["bazel-bin"], cwd=cwd)


def build_errors(text, limit=80):
  """The ERROR: paragraphs of a Bazel log."""
  out, on = [], False
  stop = re.compile(r"^(INFO: |Loading|Analyzing|Target |\[[0-9,]+ /|FAIL: |FLAKY: |TIMEOUT: |"
                    r"(//|@)\S+ +)")
  for line in text.splitlines():
    if line.startswith("ERROR: "):
      on = True
      out.append(line)
    elif line.startswith("Use --sandbox_debug"):
      continue
    elif on and stop.match(line):
      on = False
    elif on:
      out.append(line)
  return out[:limit]


_STATUSES = ("PASSED", "FLAKY", "FAILED", "TIMEOUT", "NO STATUS", "INCOMPLETE", "REMOTE FAILURE",
             "BUILD INCOMPLETE", "SKIPPED")
_TARGET = re.compile(r"^((?://|@)\S+)\s+(?:\(cached\)\s+)?(.*)$")


def test_summary(text):
  """Bazel's per-target summary: [(status, label, log path or "")], in order, each label once
  (its last status)."""
  order, status, logs = [], {}, {}
  cur = None
  for line in text.splitlines():
    m = _TARGET.match(line)
    if m:
      rest = m.group(2)
      st = next((s for s in _STATUSES if rest.startswith(s)), None)
      if st is None:
        cur = None
        continue
      label = m.group(1)
      if label not in status:
        order.append(label)
      status[label], logs[label], cur = st, "", label
      continue
    stripped = line.strip()
    if cur and stripped.startswith("Stats over "):
      continue
    if cur and line[:1] in " \t" and stripped.startswith("/") and stripped.endswith(".log"):
      if not logs[cur]:
        logs[cur] = stripped
      continue
    cur = None
  return [(status[l], l, logs[l]) for l in order]
