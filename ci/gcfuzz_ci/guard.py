"""The guard: runs one command in a process group of its own and takes the whole group down when
the ci program that started it dies, even by SIGKILL.

`python3 guard.py PARENT_PID -- COMMAND...`. The ci program starts it in a new session (its pid
is the group's id) with PR_SET_PDEATHSIG = SIGTERM, so the kernel signals it when the program
dies. PR_SET_PDEATHSIG alone on the command would not do: libFuzzer's fork mode starts jobs of
its own, which do not inherit the setting; they do inherit the process group, which the guard
kills. Standard library only, and no import of the package (it runs as a plain script).
"""
import os
import signal
import subprocess
import sys


def take_group_down(signum, frame):
  os.killpg(0, signal.SIGKILL)  # the guard too: nothing in the group survives


def main(argv):
  parent = int(argv[1])
  command = argv[3:]
  for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, take_group_down)
  # The parent may have died between our fork and the death signal's setting.
  if os.getppid() != parent:
    take_group_down(None, None)
  child = subprocess.Popen(command)
  rc = child.wait()
  return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
  sys.exit(main(sys.argv))
