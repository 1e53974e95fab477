"""The GitHub workflows (.github/workflows/*.yml) are valid YAML and run only the tree's own
commands or the few actions CI needs (ci/README.md, "CI on GitHub").

A job installs tools through the tree's commands (ci/gcfuzz_ci/tools.py, one list), never in a
workflow: so a `run:` step is one command, a path under ci/ or .ci/ that is an executable file
of the tree, with arguments and no shell operators. A ClusterFuzzLite workflow builds with the
build integration in .clusterfuzzlite/, so a change to it must start the workflow: one of its
push or pull_request triggers lists `.clusterfuzzlite/**` in its paths, and the `language` it
passes is project.yaml's. An upload of a file under a dot-directory (.gcfuzz-work/) says
include-hidden-files: true, which actions/upload-artifact needs from v4.4. The fixtures in
workflows/ are broken on purpose, each line `# expect: TEXT` a problem the check must report.
"""
import glob
import os
import shlex
import subprocess
import tempfile
import unittest

try:
  import yaml
except ImportError:  # ci/test installs Debian's python3-yaml (tools.NEEDS).
  yaml = None

from gcfuzz_ci import cmd_test, paths
from gcfuzz_ci.tests import fakes

WORKFLOWS = os.path.join(paths.ROOT, ".github", "workflows")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workflows")

# The actions a job may use (owner/name[/path], pinned to a ref with @).
ACTIONS = ("actions/checkout", "actions/cache", "actions/upload-artifact",
           "google/clusterfuzzlite/actions/build_fuzzers",
           "google/clusterfuzzlite/actions/run_fuzzers")
CFLITE = "google/clusterfuzzlite/"
INTEGRATION = ".clusterfuzzlite"
COMMAND_DIRS = ("ci/", ".ci/")
# Shell words that would make a step more than one of the tree's commands.
OPERATORS = {";", "&", "&&", "|", "||", "(", ")", "<", ">", ">>", "<<", ";;", "|&", "&>"}
INSTALLERS = {"apt-get", "apt", "dpkg", "sudo", "pip", "pip3", "curl", "wget"}


def triggers(wf):
  """The workflow's `on:` as {event: settings}. YAML 1.1 reads the bare key `on` as true."""
  on = wf.get("on", wf.get(True))
  if isinstance(on, str):
    return {on: {}}
  if isinstance(on, list):
    return {e: {} for e in on}
  return {e: (v or {}) for e, v in (on or {}).items()}


def run_problems(where, text, root):
  if not isinstance(text, str) or not text.strip():
    return ["%s: `run:` is empty" % where]
  text = text.strip()
  if "\n" in text:
    return ["%s: `run:` has several lines; a step runs one of the tree's commands" % where]
  if "`" in text or "$(" in text:
    return ["%s: `run: %s` substitutes a command" % (where, text)]
  lex = shlex.shlex(text, posix=True, punctuation_chars=True)
  lex.whitespace_split = True
  try:
    words = list(lex)
  except ValueError as e:
    return ["%s: `run: %s` does not parse as one command (%s)" % (where, text, e)]
  out = []
  ops = [w for w in words if w in OPERATORS]
  if ops:
    out.append("%s: `run: %s` is more than one command (%s)" % (where, text, " ".join(ops)))
  installs = [w for w in words if w in INSTALLERS]
  if installs:
    out.append("%s: `run: %s` installs with %s; tools come from the tree's commands "
               "(ci/gcfuzz_ci/tools.py)" % (where, text, installs[0]))
  if not words[0].startswith(COMMAND_DIRS):
    out.append("%s: `run: %s` runs %s, not one of the tree's commands (ci/..., .ci/...)"
               % (where, text, words[0]))
  for w in words:
    if not w.startswith(COMMAND_DIRS) or "${{" in w:
      continue
    p = os.path.join(root, w)
    if not os.path.isfile(p):
      out.append("%s: %s does not exist" % (where, w))
    elif not os.access(p, os.X_OK):
      out.append("%s: %s is not executable" % (where, w))
  return out


def uses_problems(where, action):
  if not isinstance(action, str) or "@" not in action:
    return ["%s: `uses: %s` names no ref (owner/name@ref)" % (where, action)]
  name, ref = action.split("@", 1)
  if name not in ACTIONS:
    return ["%s: `uses: %s` is not one of the known actions (%s)" % (where, action,
                                                                   ", ".join(ACTIONS))]
  return [] if ref else ["%s: `uses: %s` names no ref" % (where, action)]


def upload_problems(where, step):
  """actions/upload-artifact from v4.4 leaves out every file under a directory whose name starts
  with a dot unless include-hidden-files is true, without an error: .gcfuzz-work/ is one."""
  given = step.get("with") or {}
  hidden = [p for p in str(given.get("path", "")).split()
            if any(part.startswith(".") and part not in (".", "..") for part in p.split("/"))]
  if hidden and given.get("include-hidden-files") is not True:
    return ["%s: uploads %s without include-hidden-files: true (upload-artifact would leave "
            "it out)" % (where, hidden[0])]
  return []


def integration_language(root):
  """project.yaml's `language`, or None while there is no .clusterfuzzlite/project.yaml."""
  p = os.path.join(root, INTEGRATION, "project.yaml")
  if not os.path.isfile(p):
    return None
  with open(p) as f:
    return (yaml.safe_load(f) or {}).get("language")


def cflite_problems(name, wf, steps, root):
  out = []
  watched = [e for e, v in triggers(wf).items() if e in ("push", "pull_request")
             and isinstance(v, dict) and INTEGRATION + "/**" in (v.get("paths") or [])]
  if not watched:
    out.append("%s: runs ClusterFuzzLite, but no push or pull_request trigger lists "
               "%s/** in its paths" % (name, INTEGRATION))
  language = integration_language(root)
  for where, step in steps:
    given = (step.get("with") or {}).get("language")
    if given is None and step["uses"].startswith(CFLITE + "actions/build_fuzzers"):
      out.append("%s: build_fuzzers without `language` (project.yaml's)" % where)
    elif language is not None and given is not None and given != language:
      out.append("%s: language %s, but %s/project.yaml says %s" % (where, given, INTEGRATION,
                                                                   language))
  return out


def problems(path, root=paths.ROOT):
  """What is wrong with the workflow file at path, as messages; [] when nothing."""
  name = os.path.basename(path)
  try:
    with open(path) as f:
      wf = yaml.safe_load(f)
  except yaml.YAMLError as e:
    return ["%s: not valid YAML: %s" % (name, str(e).replace("\n", " "))]
  if not isinstance(wf, dict):
    return ["%s: not a mapping" % name]
  out = []
  if not triggers(wf):
    out.append("%s: no `on:` triggers" % name)
  jobs = wf.get("jobs")
  if not isinstance(jobs, dict) or not jobs:
    return out + ["%s: no jobs" % name]
  cflite = []
  for job_id, job in jobs.items():
    where = "%s: job %s" % (name, job_id)
    if not isinstance(job, dict):
      out.append("%s: not a mapping" % where)
      continue
    if "uses" in job:
      out.append("%s: calls another workflow (%s)" % (where, job["uses"]))
      continue
    if "runs-on" not in job:
      out.append("%s: no runs-on" % where)
    steps = job.get("steps")
    if not isinstance(steps, list) or not steps:
      out.append("%s: no steps" % where)
      continue
    for i, step in enumerate(steps):
      at = "%s step %d" % (where, i + 1)
      if not isinstance(step, dict) or ("run" in step) == ("uses" in step):
        out.append("%s: a step has exactly one of `run:` and `uses:`" % at)
      elif "run" in step:
        out += run_problems(at, step["run"], root)
      else:
        out += uses_problems(at, step["uses"])
        if str(step["uses"]).startswith("actions/upload-artifact@"):
          out += upload_problems(at, step)
        if str(step["uses"]).startswith(CFLITE):
          cflite.append((at, step))
  if cflite:
    out += cflite_problems(name, wf, cflite, root)
  return out


def expectations(path):
  with open(path) as f:
    return [l[len("# expect:"):].strip() for l in f if l.startswith("# expect:")]


class WorkflowTest(unittest.TestCase):

  def setUp(self):
    if yaml is None:
      self.fail("PyYAML is missing: ci/test installs Debian's python3-yaml; or "
                "apt-get install python3-yaml")

  def test_every_workflow_passes(self):
    files = sorted(glob.glob(os.path.join(WORKFLOWS, "*.yml")) +
                   glob.glob(os.path.join(WORKFLOWS, "*.yaml")))
    self.assertTrue(files, "no workflow in .github/workflows")
    for f in files:
      with self.subTest(workflow=os.path.basename(f)):
        self.assertEqual(problems(f), [])

  def load(self, name):
    with open(os.path.join(WORKFLOWS, name)) as f:
      return yaml.safe_load(f)

  def commands(self, job):
    return [s["run"] for s in job["steps"] if "run" in s]

  def test_ci_runs_every_configuration_the_zoo_and_a_campaign_on_every_change(self):
    wf = self.load("ci.yml")
    self.assertEqual(set(triggers(wf)), {"push", "pull_request"})
    self.assertFalse(any(triggers(wf).values()), "ci.yml runs on every push and pull request")
    jobs = wf["jobs"]
    self.assertEqual(tuple(jobs["test"]["strategy"]["matrix"]["config"]), cmd_test.ALL_CONFIGS)
    self.assertTrue(any(c.endswith("ci/test --config ${{ matrix.config }}")
                        for c in self.commands(jobs["test"])))
    self.assertTrue(any(c.endswith("ci/mutants/run --quick") for c in self.commands(jobs["zoo"])))
    self.assertTrue(any(c.endswith("ci/campaign --time 300")
                        for c in self.commands(jobs["fuzz"])))
    kept = [s for s in jobs["fuzz"]["steps"]
            if s.get("uses", "").startswith("actions/upload-artifact@")]
    self.assertEqual([s.get("if") for s in kept], ["always()"])
    self.assertIn(".gcfuzz-work/summary.json", kept[0]["with"]["path"])
    self.assertIn(".gcfuzz-work/*/crashes/", kept[0]["with"]["path"])

  def test_every_bazel_job_keeps_a_disk_cache(self):
    for name, job in self.load("ci.yml")["jobs"].items():
      with self.subTest(job=name):
        cache = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
        self.assertEqual(len(cache), 1)
        for c in self.commands(job):
          self.assertIn("--disk-cache " + cache[0]["with"]["path"], c)

  def test_cflite_fuzzes_pull_requests_and_batches_with_a_kept_corpus(self):
    modes = {}
    for f in ("cflite_pr.yml", "cflite_batch.yml"):
      for job in self.load(f)["jobs"].values():
        for s in job["steps"]:
          if s.get("uses", "").startswith(CFLITE + "actions/run_fuzzers@"):
            modes.setdefault(f, []).append(s["with"]["mode"])
    self.assertEqual(modes, {"cflite_pr.yml": ["code-change"],
                             "cflite_batch.yml": ["batch", "prune"]})
    self.assertIn("schedule", triggers(self.load("cflite_batch.yml")))

  def test_broken_workflows_fail(self):
    fixtures = sorted(glob.glob(os.path.join(FIXTURES, "*.yml")))
    self.assertGreaterEqual(len(fixtures), 5)
    for f in fixtures:
      with self.subTest(fixture=os.path.basename(f)):
        got = problems(f)
        want = expectations(f)
        if os.path.basename(f).startswith("good"):
          self.assertEqual((want, got), ([], []))
          continue
        self.assertTrue(want, "a broken fixture says what it expects")
        for w in want:
          self.assertTrue(any(w in p for p in got), "%r not in %r" % (w, got))
        self.assertEqual(len(got), len(want), got)

  def test_cflite_language_must_be_the_integrations(self):
    # A tree whose .clusterfuzzlite/project.yaml says c++, checked against a workflow that
    # builds with language c.
    with tempfile.TemporaryDirectory() as d:
      os.makedirs(os.path.join(d, INTEGRATION))
      with open(os.path.join(d, INTEGRATION, "project.yaml"), "w") as f:
        f.write("language: c++\n")
      got = problems(os.path.join(FIXTURES, "good.yml"), root=d)
    self.assertIn("good.yml: job pr step 1: language c, but .clusterfuzzlite/project.yaml "
                  "says c++", got)


class DebianTest(unittest.TestCase):
  """.ci/debian, the jobs' one way into the Debian 12 container, against a fake docker that
  writes its arguments one a line."""

  def setUp(self):
    self.tmp = tempfile.TemporaryDirectory()
    self.addCleanup(self.tmp.cleanup)
    self.args = os.path.join(self.tmp.name, "args")
    fakes.script(os.path.join(self.tmp.name, "bin", "docker"),
                 'for a in "$@"; do echo "$a"; done >%s\n' % self.args)

  def run_it(self, *argv, **env):
    e = dict(os.environ, PATH=os.path.join(self.tmp.name, "bin") + ":" + os.environ["PATH"])
    e.pop("GCFUZZ_DISK_CACHE", None)
    e.update(env)
    p = subprocess.run([os.path.join(paths.ROOT, ".ci", "debian")] + list(argv), env=e,
                       capture_output=True, text=True)
    docker = None
    if os.path.exists(self.args):
      with open(self.args) as f:
        docker = f.read().splitlines()
    return p.returncode, p.stderr, docker

  def test_runs_the_command_in_debian_12_with_the_tree_and_the_disk_cache(self):
    cache = os.path.join(self.tmp.name, "cache")
    rc, err, docker = self.run_it("--disk-cache", cache, "ci/test", "--config", "asan")
    self.assertEqual((rc, err), (0, ""))
    self.assertTrue(os.path.isdir(cache))
    self.assertEqual(docker, ["run", "--rm", "-v", paths.ROOT + ":/src", "-w", "/src",
                              "-e", "CI", "-e", "GITHUB_ACTIONS",
                              "-e", "GIT_CONFIG_COUNT=1", "-e", "GIT_CONFIG_KEY_0=safe.directory",
                              "-e", "GIT_CONFIG_VALUE_0=/src",
                              "-v", cache + ":" + cache, "-e", "GCFUZZ_DISK_CACHE=" + cache,
                              "debian:12", "bash", "ci/test", "--config", "asan"])

  def test_the_cache_defaults_to_gcfuzz_disk_cache(self):
    cache = os.path.join(self.tmp.name, "env-cache")
    rc, _, docker = self.run_it(".ci/run", GCFUZZ_DISK_CACHE=cache)
    self.assertEqual(rc, 0)
    self.assertIn("GCFUZZ_DISK_CACHE=" + cache, docker)
    rc, _, docker = self.run_it("ci/campaign")
    self.assertFalse(any(a.startswith("GCFUZZ_DISK_CACHE=") for a in docker))

  def test_only_the_trees_commands(self):
    for argv in (["ci/no-such-command"], ["ci/README.md"], ["/bin/sh"], ["--bogus", "ci/test"],
                 []):
      with self.subTest(argv=argv):
        rc, err, docker = self.run_it(*argv)
        self.assertEqual((rc, docker), (2, None))
        self.assertTrue(err.startswith(".ci/debian: "), err)


if __name__ == "__main__":
  unittest.main()
