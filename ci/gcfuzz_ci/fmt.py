"""The format check: every C source outside third_party/ as clang-format 14 would write it
(.clang-format at the root)."""
import os
import subprocess

EXCLUDED = ("third_party/",)


def tracked_sources(root):
  """The tracked *.c and *.h outside third_party/; in a tree that is not a git checkout (an
  export), every such file but Bazel's output trees and the work directories."""
  # safe.directory: in CI the checkout belongs to another user than the container's root.
  p = subprocess.run(["git", "-c", "safe.directory=*", "ls-files", "-z", "--", "*.c", "*.h"],
                     cwd=root, capture_output=True, text=True)
  if p.returncode == 0:
    files = p.stdout.split("\0")
  else:
    files = []
    for d, dirs, names in os.walk(root):
      dirs[:] = [x for x in dirs if not x.startswith(("bazel-", ".git", ".gcfuzz-work"))]
      files += [os.path.relpath(os.path.join(d, n), root) for n in names
                if n.endswith((".c", ".h"))]
  return sorted(f for f in files if f and not f.startswith(EXCLUDED))


def unformatted(root, files, clang_format="clang-format"):
  """The files clang-format would change (--dry-run --Werror fails on them)."""
  bad = []
  for f in files:
    p = subprocess.run([clang_format, "--dry-run", "--Werror", f], cwd=root,
                       capture_output=True)
    if p.returncode != 0:
      bad.append(f)
  return bad
