"""ci/campaign --engine afl: the campaign's fuzzing step with AFL++ instead of libFuzzer.

The targets are built with .bazelrc's afl config (clang's trace-pc-guard edges, ASan/UBSan, linked
with AFL++'s runtime and its libFuzzer-compatible main, libAFLDriver.a, from Debian's afl++), and
run as one afl-fuzz instance per job (a main, -M, and secondaries, -S, syncing through one output
directory), with the target's seeds, dictionary (-x) and options file's max_len (-G), for the
target's share of --time (-V). Progress is read from what AFL++ writes for machines: each
instance's fuzzer_stats file, which afl-fuzz 4.04c rewrites only once a minute without its screen
(and when it ends), and, for the progress lines every 10 s, the same figures each instance sends
every second as StatsD gauges (AFL_STATSD) to a UDP socket of the campaign's on 127.0.0.1; the
figures of fuzzer_stats are kept for what StatsD does not send (stability, bitmap coverage).
Afterwards the corpus AFL++ found joins the work corpus (shared with libFuzzer campaigns: the
bytes are the same programs), and each crash is copied into the
target's crashes/ as crash-<sha1>, the name libFuzzer gives it, then triaged, keyed and minimized
by the campaign's own Triage with the libFuzzer build of the same target, which reads the same
bytes: the keys, the minimized inputs and summary.json are those of a libFuzzer campaign.
"""
import hashlib
import math
import os
import shutil
import socket
import subprocess
import sys
import time

from . import libfuzzer, paths, procs

ENGINES = ("libfuzzer", "afl")
CONFIG = "afl"  # the .bazelrc config of the AFL++ build
# afl-fuzz's -t (milliseconds): libFuzzer's -timeout=25 of the campaign.
TIMEOUT_MS = 25000
# How long past its -V an instance may take to write its last stats and exit before it is killed.
GRACE_S = 30

# Every name the campaign reads from fuzzer_stats ("key : value" lines), and what it is in a row.
STATS_FIELDS = ("execs_done", "execs_per_sec", "edges_found", "total_edges", "bitmap_cvg",
                "corpus_count", "saved_crashes", "stability")


def parse_stats(text):
  """{key: value} of a fuzzer_stats file's `key : value` lines; numbers as numbers (a percent
  like `98.50%` as 98.5), anything else as text."""
  out = {}
  for line in text.splitlines():
    key, sep, value = line.partition(":")
    if not sep:
      continue
    key, value = key.strip(), value.strip()
    number = value[:-1] if value.endswith("%") else value
    try:
      out[key] = int(number)
    except ValueError:
      try:
        out[key] = float(number)
      except ValueError:
        out[key] = value
  return out


def parse_statsd(datagram):
  """[(instance, key, number)] of a StatsD datagram of AFL++'s gauges in the dogstatsd flavour:
  `fuzzing.execs_done:123|g|#banner:main,afl_version:++4.04c` lines. The banner (-T) is the
  instance's name. Lines that are not such gauges are skipped."""
  out = []
  for line in datagram.decode("utf-8", "replace").splitlines():
    metric, _, rest = line.partition("|")
    name, sep, value = metric.partition(":")
    if not sep or not name.startswith("fuzzing."):
      continue
    banner = None
    for part in rest.split("|"):
      if part.startswith("#"):
        for tag in part[1:].split(","):
          if tag.startswith("banner:"):
            banner = tag[len("banner:"):]
    try:
      number = float(value)
    except ValueError:
      continue
    if banner is None or number != number or number in (float("inf"), float("-inf")):
      continue
    out.append((banner, name[len("fuzzing."):], int(number) if number.is_integer() else number))
  return out


class StatsD:
  """A UDP socket on 127.0.0.1 that keeps the latest gauges of each instance."""

  def __init__(self):
    self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    self.sock.bind(("127.0.0.1", 0))
    self.sock.setblocking(False)
    self.port = self.sock.getsockname()[1]
    self.latest = {}  # instance -> {key: number}

  def env(self):
    return {"AFL_STATSD": "1", "AFL_STATSD_HOST": "127.0.0.1", "AFL_STATSD_PORT": str(self.port),
            "AFL_STATSD_TAGS_FLAVOR": "dogstatsd"}

  def poll(self):
    while True:
      try:
        data = self.sock.recv(65536)
      except (BlockingIOError, InterruptedError):
        return
      for inst, key, value in parse_statsd(data):
        self.latest.setdefault(inst, {})[key] = value

  def close(self):
    self.sock.close()


def read_stats(path):
  try:
    with open(path, errors="replace") as f:
      return parse_stats(f.read())
  except OSError:
    return None


def combine(stats):
  """The figures of a campaign row from the fuzzer_stats of its instances: executions and their
  rate summed; coverage (edges), bitmap coverage and corpus the largest (the instances share
  their finds, so each converges on the union); stability the lowest (the worst instance's)."""
  stats = [s for s in stats if s]
  if not stats:
    return None

  def num(s, k):
    v = s.get(k, 0)
    # afl-fuzz writes execs_per_sec `inf` before its clock has moved.
    return v if isinstance(v, (int, float)) and math.isfinite(v) else 0
  return {
      "execs": sum(int(num(s, "execs_done")) for s in stats),
      "exec_per_s": int(round(sum(num(s, "execs_per_sec") for s in stats))),
      "coverage": max(int(num(s, "edges_found")) for s in stats),
      "bitmap_cvg": max(num(s, "bitmap_cvg") for s in stats),
      "afl_corpus": max(int(num(s, "corpus_count")) for s in stats),
      "saved_crashes": sum(int(num(s, "saved_crashes")) for s in stats),
      "stability": min(num(s, "stability") for s in stats),
  }


def max_len(options_path):
  """The options file's max_len, or None."""
  for flag in libfuzzer.options_flags(options_path, ""):
    if flag.startswith("-max_len="):
      return int(flag.split("=", 1)[1])
  return None


def dict_path(options_path, dict_dir):
  for flag in libfuzzer.options_flags(options_path, dict_dir):
    if flag.startswith("-dict="):
      return flag.split("=", 1)[1]
  return None


def instance_names(jobs):
  """main, then s1, s2, ...: one afl-fuzz per job."""
  return ["main"] + ["s%d" % i for i in range(1, jobs)]


def instance_cmd(fuzzer, name, inputs, out, secs, dictionary=None, length=None):
  """The afl-fuzz command line of one instance (-T: its name is the banner its StatsD gauges
  carry)."""
  cmd = ["afl-fuzz", "-M" if name == "main" else "-S", name, "-T", name, "-i", inputs, "-o", out,
         "-V", str(secs), "-t", str(TIMEOUT_MS), "-m", "none"]
  if dictionary:
    cmd += ["-x", dictionary]
  if length:
    cmd += ["-G", str(length)]
  return cmd + ["--", fuzzer]


def environment(base):
  """afl-fuzz's environment: no screen (a status line on stdout instead), no CPU binding (the
  machine may be shared: binding fails when every core looks busy), the seeds' crashes skipped
  rather than fatal (a corpus kept from an earlier campaign may hold one a fix made clean again,
  or not), and AFL++'s own sanitizer options (it requires abort_on_error and symbolize=0)."""
  env = {k: v for k, v in base.items() if k not in ("ASAN_OPTIONS", "UBSAN_OPTIONS")}
  env.update({"AFL_NO_UI": "1", "AFL_NO_AFFINITY": "1", "AFL_SKIP_CPUFREQ": "1",
              "AFL_SKIP_CRASHES": "1", "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1",
              "AFL_NO_WARN_INSTABILITY": "1"})
  return env


def sha1_of(path):
  with open(path, "rb") as f:
    return hashlib.sha1(f.read()).hexdigest()


def saved(out, kind):
  """The files afl-fuzz saved under out/<instance>/<kind>/ (queue, crashes): id:... names."""
  found = []
  if not os.path.isdir(out):
    return found
  for inst in sorted(os.listdir(out)):
    d = os.path.join(out, inst, kind)
    if not os.path.isdir(d):
      continue
    for n in sorted(os.listdir(d)):
      p = os.path.join(d, n)
      if n.startswith("id:") and os.path.isfile(p):
        found.append(p)
  return found


def collect(out, corpus, crashes):
  """Copies AFL++'s queue into the work corpus (afl-<sha1>; inputs already there by content are
  skipped) and its crashes into crashes/ as crash-<sha1>, libFuzzer's name for them. Returns
  (inputs added, crash files written)."""
  have = {sha1_of(os.path.join(corpus, n)) for n in os.listdir(corpus)}
  added = 0
  for p in saved(out, "queue"):
    h = sha1_of(p)
    if h not in have:
      shutil.copyfile(p, os.path.join(corpus, "afl-" + h))
      have.add(h)
      added += 1
  written = []
  for p in saved(out, "crashes"):
    name = "crash-" + sha1_of(p)
    shutil.copyfile(p, os.path.join(crashes, name))  # saved again: a new mtime, triaged again
    written.append(name)
  return added, written


def seed_check_cmd(fuzzer, corpus, crashes):
  """The libFuzzer build running the work corpus once (-runs=0: no fuzzing), saving the first
  input that crashes as crashes/crash-<sha1>."""
  return [fuzzer, "-runs=0", "-timeout=25", "-rss_limit_mb=2048",
          "-artifact_prefix=" + crashes + "/", corpus]


def run_target(c, t, secs, row, prog, progress_line, triage_cls):
  """Fuzzes t with AFL++ for secs; fills row like the libFuzzer campaign's run_target. Returns
  whether a crash was found."""
  d = os.path.join(c.w, t)
  corpus, crashes, out = (os.path.join(d, n) for n in ("corpus", "crashes", "afl"))
  os.makedirs(corpus, exist_ok=True)
  os.makedirs(crashes, exist_ok=True)
  shutil.rmtree(out, ignore_errors=True)  # afl-fuzz refuses an output directory in use
  seeds = c.seed_corpus(t, corpus)
  before = libfuzzer.artifacts(crashes)
  options = os.path.join(paths.ROOT, c.lay.options_file(t))
  dictionary = dict_path(options, os.path.join(paths.ROOT, c.lay.options_dir()))
  fuzzer = os.path.join(c.bindirs[CONFIG], c.lay.fuzzer(t))
  names = instance_names(c.a.jobs)
  # afl-fuzz runs its inputs first and can only skip one that crashes (AFL_SKIP_CRASHES; 4.04c
  # saves none of them): a seed that crashes (a bug the seeds reach, e.g. a zoo mutant) would
  # be no crash of the campaign. The libFuzzer build runs them first and saves the first such
  # input where the triage finds it.
  with open(os.path.join(c.logdir, "afl-%s-seeds.log" % t), "w") as lf:
    procs.run(seed_check_cmd(c.fuzzer(t), corpus, crashes), timeout_s=600, stdout=lf,
              stderr=subprocess.STDOUT)
  print("%s: %s: AFL++, %ds on %d instance(s), corpus %s (%d inputs, %d seeds), output %s"
        % (prog, t, secs, len(names), corpus, libfuzzer.count_files(corpus), seeds, out),
        flush=True)
  statsd = StatsD()
  env = dict(environment(os.environ), **statsd.env())
  running = []
  start = time.monotonic()
  try:
    for name in names:
      log = os.path.join(c.logdir, "afl-%s-%s.log" % (t, name))
      with open(log, "w") as lf:
        running.append(procs.spawn(instance_cmd(fuzzer, name, corpus, out, secs, dictionary,
                                                max_len(options)),
                                   stdout=lf, stderr=subprocess.STDOUT, env=env))
      if name == "main":
        time.sleep(1)  # the main instance makes the output directory the others sync through
    last_print = start
    while any(p.poll() is None for p in running):
      if time.monotonic() - start > secs + GRACE_S:
        break
      time.sleep(1)
      statsd.poll()
      update_row(row, out, names, start, before, crashes, statsd.latest)
      if time.monotonic() - last_print >= 10:
        last_print = time.monotonic()
        print(progress_line(t, row) + stability_note(row), flush=True)
  finally:
    for p in running:
      procs.kill(p)
    statsd.close()
  # fuzzer_stats as each instance wrote it when it ended: the final figures.
  update_row(row, out, names, start, before, crashes)
  if combine(merged_stats(out, names)) is None:
    tail = []
    with open(os.path.join(c.logdir, "afl-%s-main.log" % t), errors="replace") as f:
      tail = f.read().splitlines()[-30:]
    print("\n".join(tail), file=sys.stderr)
    print("%s: %s: afl-fuzz wrote no fuzzer_stats (log %s)"
          % (prog, t, os.path.join(c.logdir, "afl-%s-main.log" % t)), file=sys.stderr)
    row["error"] = "no statistics"
    return True
  added, _ = collect(out, corpus, crashes)
  row["corpus"] = libfuzzer.count_files(corpus)
  print("%s: %s: AFL++ stability %s%%, bitmap coverage %s%%, %d new inputs into the work corpus"
        % (prog, t, row.get("stability"), row.get("bitmap_cvg"), added), flush=True)
  new = libfuzzer.new_artifacts(before, libfuzzer.artifacts(crashes))
  triage = triage_cls(c, t, crashes)
  keys = triage.run(new)
  row["crash_files"] = len(new)
  row["crashes"], row["keys"] = len(keys), keys
  return bool(keys)


def stability_note(row):
  return "  stab %s%%" % row["stability"] if "stability" in row else ""


def merged_stats(out, names, gauges=None):
  """Each instance's fuzzer_stats, with its newer StatsD gauges (if any) over it."""
  merged = []
  for n in names:
    s = read_stats(os.path.join(out, n, "fuzzer_stats"))
    g = (gauges or {}).get(n)
    if g:
      s = dict(s or {}, **g)
    merged.append(s)
  return merged


def update_row(row, out, names, start, before, crashes, gauges=None):
  row["seconds"] = int(time.monotonic() - start)
  figures = combine(merged_stats(out, names, gauges))
  crash_files = len(libfuzzer.new_artifacts(before, libfuzzer.artifacts(crashes)))
  if figures is None:
    row["crash_files"] = crash_files
    return
  row["execs"], row["exec_per_s"], row["coverage"] = (figures["execs"], figures["exec_per_s"],
                                                      figures["coverage"])
  row["corpus"] = figures["afl_corpus"]
  row["bitmap_cvg"], row["stability"] = figures["bitmap_cvg"], figures["stability"]
  # Until the campaign copies them out: the instances' own count.
  row["crash_files"] = max(crash_files, figures["saved_crashes"])
