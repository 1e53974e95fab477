#!/usr/bin/env bash
# A stand-in for replay in readme_check_test: fixed tables, so the fixtures stay true whatever
# the real op and kind tables become.
case "${1:-}" in
  --list-ops) printf '| op | what |\n| --- | --- |\n| `a` | one |\n| `b` | two \\| three |\n' ;;
  --list-kinds) printf '| kind | rule |\n|---|---|\n| x.y | a rule |\n' ;;
  *) echo "fake replay: unexpected arguments: $*" >&2; exit 2 ;;
esac
