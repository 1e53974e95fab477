"""Child processes and signals. Every long-running child (fuzzer, test binary) runs under the
guard (guard.py) in a process group of its own, so that an interrupt, a timeout or the ci
program's death (SIGKILL included) stops it and everything it started, and nothing else."""
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard.py")

_lock = threading.Lock()
_groups = set()  # pids of live guards (= their process group ids)


class Interrupted(Exception):
  def __init__(self, signum):
    super().__init__("interrupted by %s" % signal.Signals(signum).name)
    self.signum = signum


def _raise_interrupted(signum, frame):
  raise Interrupted(signum)


def install_signal_handlers():
  """SIGINT, SIGTERM and SIGHUP raise Interrupted in the main thread, so that each command can
  stop its children and write what it has (a summary marked interrupted)."""
  for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, _raise_interrupted)


def _libc_prctl():
  libc = ctypes.CDLL(None, use_errno=True)
  return libc.prctl


def _guard_preexec():
  # Runs in the child between fork and exec; the death signal survives the exec.
  _libc_prctl()(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def spawn(cmd, stdout=None, stderr=None, cwd=None, env=None, stdin=subprocess.DEVNULL):
  """Starts cmd under the guard, in a new session whose group id is the returned Popen's pid."""
  argv = [sys.executable, GUARD, str(os.getpid()), "--"] + list(cmd)
  p = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=stdin, cwd=cwd, env=env,
                       start_new_session=True, preexec_fn=_guard_preexec)
  with _lock:
    _groups.add(p.pid)
  return p


def children(p, wait_s=2.0):
  """The pids of the command the guard p started (its children), waiting up to wait_s for it
  to start."""
  path = "/proc/%d/task/%d/children" % (p.pid, p.pid)
  end = time.monotonic() + wait_s
  while True:
    try:
      with open(path) as f:
        pids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
      pids = []
    if pids or time.monotonic() >= end or p.poll() is not None:
      return pids
    time.sleep(0.01)


def kill(p):
  """Kills p's whole process group and reaps p."""
  try:
    os.killpg(p.pid, signal.SIGKILL)
  except ProcessLookupError:
    pass
  p.wait()
  with _lock:
    _groups.discard(p.pid)


def kill_all():
  with _lock:
    groups = list(_groups)
    _groups.clear()
  for g in groups:
    try:
      os.killpg(g, signal.SIGKILL)
    except ProcessLookupError:
      pass


def run(cmd, timeout_s=None, **kw):
  """Runs cmd to its end, or kills its group after timeout_s. Returns (exit status, timed out);
  a status above 128 is a signal."""
  p = spawn(cmd, **kw)
  try:
    rc = p.wait(timeout=timeout_s)
  except subprocess.TimeoutExpired:
    kill(p)
    return 137, True
  except BaseException:
    kill(p)
    raise
  # The command is gone; what it started (a fork-mode job) may not be.
  kill(p)
  return rc, False
