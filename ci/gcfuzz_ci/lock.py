"""An exclusive lock on a work directory: two runs on one directory would share and truncate one
log and report each other's figures."""
import fcntl
import os


class Busy(Exception):
  pass


def lock_dir(path, what):
  """Takes <path>/.lock (held until the process ends) or raises Busy naming the holder."""
  lock_path = os.path.join(path, ".lock")
  fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
  try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError:
    holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
    os.close(fd)
    raise Busy("%s is in use by another %s (pid %s); wait for it or give another directory"
               % (path, what, holder))
  os.ftruncate(fd, 0)
  os.write(fd, b"%d\n" % os.getpid())
  return fd
