"""The bug zoo's mutants: ci/mutants/NN-name.patch, a header of `# key: value` lines (a value may
continue on `#   ` lines) then the diff; and the steps of a header's `run:` line."""
import os
import re

from . import layout

STEP_KINDS = ("fuzz", "test", "test-tsan", "repeat", "repeat-tsan")

# Tests that break heaps on purpose: they print verification reports (and verdict lines) when
# they pass, so only their sanitizer findings and their failures are findings.
BREAKING_TESTS = ("invariants/addrmap_test", "invariants/checkmark_test", "invariants/model_test",
                  "invariants/reach_test", "invariants/swept_test", "invariants/verify_test")


def header(path):
  """{key: value} of the patch's header."""
  fields, key = {}, None
  with open(path, errors="replace") as f:
    for raw in f:
      if not raw.startswith("#"):
        break
      line = raw[1:].rstrip("\n")
      if line.startswith(" "):
        line = line[1:]
      m = re.match(r"([a-z]+):[ \t]*(.*)$", line)
      if m:
        key = m.group(1)
        fields[key] = m.group(2).strip()
      elif key and line.startswith("  "):
        fields[key] += " " + line.strip()
      else:
        key = None
  return fields


class Mutant:
  def __init__(self, path):
    self.path = path
    self.base = os.path.basename(path)[:-len(".patch")]
    self.number = int(self.base.split("-", 1)[0], 10)
    self.name = self.base.split("-", 1)[1] if "-" in self.base else self.base
    h = header(path)
    self.class_ = (h.get("class", "-").split() or ["-"])[0]
    self.expected = h.get("expect", "")
    self.quick = h.get("quick", "") == "yes"
    self.steps = h.get("run", "").split()

  def matches(self, selector):
    """By its number (`8`, `08`), its name, or NN-name."""
    if selector in (self.base, self.name):
      return True
    return bool(re.fullmatch(r"[0-9]+", selector)) and int(selector, 10) == self.number

  def touched(self):
    """The files the patch changes (its `+++ b/PATH` lines)."""
    out = []
    with open(self.path, errors="replace") as f:
      for line in f:
        m = re.match(r"\+\+\+ b/(\S+)", line)
        if m:
          out.append(m.group(1))
    return out


def all_mutants(directory):
  return [Mutant(os.path.join(directory, n)) for n in sorted(os.listdir(directory))
          if re.match(r"[0-9]+-.*\.patch$", n)]


def check_step(step):
  """None if step is well-formed, else what is wrong."""
  kind, _, what = step.partition(":")
  if kind not in STEP_KINDS:
    return "unknown step kind '%s' (one of: %s)" % (kind, ", ".join(STEP_KINDS))
  if not what or (kind != "fuzz" and "/" not in what):
    return "step '%s' names no %s" % (step, "target" if kind == "fuzz" else "test P/N")
  if kind == "fuzz" and what not in layout.FUZZ_TARGETS:
    return "step '%s': unknown fuzz target '%s' (targets: %s)" % (
        step, what, " ".join(layout.FUZZ_TARGETS))
  return None


def target_of(step):
  """The name a result gives the step: "graph", "gc/domain_test", "tsan:invariants/threads_test"."""
  kind, _, what = step.partition(":")
  return "tsan:" + what if kind.endswith("-tsan") else what


def select(mutants, only, quick):
  """The mutants to run; raises ValueError naming what is wrong (an --only that matches
  nothing, a header without a valid run: line)."""
  if only:
    for o in only:
      if not any(m.matches(o) for m in mutants):
        raise ValueError("no mutant matches '%s' (mutants: %s)"
                         % (o, " ".join(m.base for m in mutants)))
    chosen = [m for m in mutants if any(m.matches(o) for o in only)]
  elif quick:
    chosen = [m for m in mutants if m.quick]
  else:
    chosen = list(mutants)
  if not chosen:
    raise ValueError("no mutant selected (mutants: %s)" % " ".join(m.base for m in mutants))
  for m in chosen:
    if not m.steps:
      raise ValueError("%s: no '# run:' line in its header" % m.path)
    for s in m.steps:
      err = check_step(s)
      if err:
        raise ValueError("%s: %s" % (m.path, err))
  return chosen


def steps_via(steps, via, threaded_targets=()):
  """A mutant's steps through one target (ci/mutants/run --via): fuzz:VIA alone, whatever
  targets and tests its header names; a mutant the schedule target measures goes through
  VIA's threaded target (VIA-threads) where there is one, so that its domains race on threads
  as there."""
  threads = via + "-threads"
  if threads in threaded_targets and any(s.startswith("fuzz:schedule") for s in steps):
    return ["fuzz:" + threads]
  return ["fuzz:" + via]


def baseline_steps(chosen):
  """Every step the chosen mutants use, in first-use order: the baseline's plan."""
  out = []
  for m in chosen:
    for s in m.steps:
      if s not in out:
        out.append(s)
  return out


def median(values):
  v = sorted(values)
  if not v:
    return None
  n = len(v)
  return v[n // 2] if n % 2 else round((v[n // 2 - 1] + v[n // 2]) / 2, 1)
