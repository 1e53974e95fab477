"""JSON files written whole: a reader never sees half of one, and an older file is replaced."""
import json
import os


def write(path, value):
  tmp = "%s.tmp.%d" % (path, os.getpid())
  with open(tmp, "w") as f:
    json.dump(value, f, indent=1)
    f.write("\n")
  os.replace(tmp, path)
