"""Reading findings: the `GCFUZZ-VERDICT {json}` line every violation, driver check and sanitizer
finding prints, and, for findings that print none, the fixed markers of the tools themselves.

The first verdict line of an output is its finding. Without one, the tools' own fixed headers
decide: libFuzzer's `ERROR: libFuzzer: timeout|out-of-memory|deadly signal`, and the sanitizer
runtimes' report headers (test binaries have no sanitizer death callback, so their sanitizer
findings carry no verdict line); then a test that failed otherwise is `test.failed` and a hang
`timeout.hang`. gcfuzz's human-readable reports are never parsed.
"""
import json
import re
from dataclasses import dataclass

PREFIX = "GCFUZZ-VERDICT "
SANITIZER_PASSES = ("asan", "ubsan", "msan", "tsan", "lsan")
# The folders whose frames name a crash: gcfuzz's own code, not libFuzzer or a runtime.
OWN_CODE = ("gc", "invariants", "fuzz")


@dataclass(frozen=True)
class Verdict:
  kind: str
  pass_: str
  point: str = ""
  op: int = -1
  cycle: int = -1


def parse_line(line):
  """The verdict of one line, or None. The prefix may follow other text on the line (a
  sanitizer or libFuzzer may not end its line first); keys beyond the five are ignored."""
  at = line.find(PREFIX)
  if at < 0:
    return None
  try:
    obj = json.loads(line[at + len(PREFIX):])
  except ValueError:
    return None
  if not isinstance(obj, dict):
    return None
  kind, pass_ = obj.get("kind"), obj.get("pass")
  if not isinstance(kind, str) or not isinstance(pass_, str) or not kind:
    return None
  point = obj.get("point") if isinstance(obj.get("point"), str) else ""
  op = obj.get("op") if isinstance(obj.get("op"), int) else -1
  cycle = obj.get("cycle") if isinstance(obj.get("cycle"), int) else -1
  return Verdict(kind, pass_, point, op, cycle)


def first_verdict(text, sanitizers_only=False):
  for line in text.splitlines():
    v = parse_line(line)
    if v is not None and (not sanitizers_only or v.pass_ in SANITIZER_PASSES):
      return v
  return None


def _dashes(s):
  return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()


# (regular expression over one line, function of the match giving (kind, pass)), in the order
# they are tried on each line; the first line that matches any decides.
_MARKERS = (
    (re.compile(r"ERROR: libFuzzer: timeout"), lambda m: ("fuzzer.timeout", "fuzzer")),
    (re.compile(r"ERROR: libFuzzer: (out-of-memory|malloc limit)"),
     lambda m: ("fuzzer.oom", "fuzzer")),
    (re.compile(r"ERROR: AddressSanitizer: ([A-Za-z-]+)"),
     lambda m: ("asan." + m.group(1), "asan")),
    (re.compile(r"ERROR: LeakSanitizer: "), lambda m: ("lsan.detected-memory-leaks", "lsan")),
    (re.compile(r"WARNING: MemorySanitizer: ([A-Za-z- ]+?)(?: \(|$)"),
     lambda m: ("msan." + _dashes(m.group(1)), "msan")),
    (re.compile(r"WARNING: ThreadSanitizer: ([A-Za-z- ]+?)(?: \(|$)"),
     lambda m: ("tsan." + _dashes(m.group(1)), "tsan")),
    (re.compile(r"ThreadSanitizer: (SEGV|CHECK failed)"), lambda m: ("tsan.crash", "tsan")),
    (re.compile(r": runtime error: "), lambda m: ("ubsan.undefined", "ubsan")),
    (re.compile(r"ERROR: libFuzzer: deadly signal"), lambda m: ("fuzzer.deadly-signal", "fuzzer")),
)


def first_marker(text):
  for line in text.splitlines():
    for pattern, verdict in _MARKERS:
      m = pattern.search(line)
      if m:
        kind, pass_ = verdict(m)
        return Verdict(kind, pass_)
  return None


TEST_FAILED = Verdict("test.failed", "test")
HANG = Verdict("timeout.hang", "timeout")


def classify(text, failed, hung=False, sanitizers_only=False):
  """The finding of one run's output, or None if it found nothing. failed: the process exited
  non-zero (or was stopped at a finding); hung: it was stopped for running too long.
  sanitizers_only: the run breaks heaps on purpose (its passing reports are not findings)."""
  v = first_verdict(text, sanitizers_only)
  if v is not None:
    return v
  m = first_marker(text)
  if m is not None:
    return m
  if hung:
    return HANG
  if failed:
    return TEST_FAILED
  return None


# ASan, UBSan, MSan: `#N 0x... in FUNC FILE:LINE`; TSan: `#N FUNC FILE:LINE:COL (module+0x...)`.
_FRAME = re.compile(r"^\s*#\d+ (?:0x[0-9a-f]+ in )?(\S+) (\S+)")
_OWN_FILE = re.compile(r"(?:^|/)((?:%s)/[^\s:]*\.[ch])(?::\d+)?" % "|".join(OWN_CODE))


def first_own_frame(text):
  """`FUNC (dir/file.c)` of the first sanitizer stack frame (`#N 0x... in FUNC FILE:LINE`, or
  TSan's `#N FUNC FILE:LINE:COL (module+0x...)`) inside gcfuzz's code, or None."""
  for line in text.splitlines():
    m = _FRAME.match(line)
    if m:
      f = _OWN_FILE.search(m.group(2))
      if f:
        return "%s (%s)" % (m.group(1), f.group(1))
  return None


def crash_key(v, text):
  """What broke, stable across runs: the kind and its pass, and for a sanitizer finding the
  first frame in gcfuzz's code (one sanitizer kind covers many bugs)."""
  key = "%s@%s" % (v.kind, v.pass_)
  if v.pass_ in SANITIZER_PASSES:
    key += "@" + (first_own_frame(text) or "?")
  return key


def slug(key):
  s = re.sub(r"[^A-Za-z0-9_.-]+", "-", key).strip("-")
  return s[:80]
