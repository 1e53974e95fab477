"""The format check: every tracked C source outside third_party/ as clang-format 14 would write
it (.clang-format at the root)."""
import subprocess

EXCLUDED = ("third_party/",)


def tracked_sources(root):
  out = subprocess.run(["git", "ls-files", "-z", "--", "*.c", "*.h"], cwd=root,
                       capture_output=True, text=True, check=True).stdout
  return sorted(f for f in out.split("\0") if f and not f.startswith(EXCLUDED))


def unformatted(root, files, clang_format="clang-format"):
  """The files clang-format would change (--dry-run --Werror fails on them)."""
  bad = []
  for f in files:
    p = subprocess.run([clang_format, "--dry-run", "--Werror", f], cwd=root,
                       capture_output=True)
    if p.returncode != 0:
      bad.append(f)
  return bad
