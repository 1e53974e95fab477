#!/usr/bin/env bash
# Rewrite a dictionary's entries from their comment lines (the inverse of dict_test.sh): each
# entry's bytes become the ops in the comment above it, assembled for the target. Run it after
# the op set of a target changes (an op appended, a capability given to a backend):
#   bazel build //fuzz/replay:replay
#   fuzz/targets/dict_regen.sh bazel-bin/fuzz/replay/replay fuzz/targets/lua.dict lua
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: dict_regen.sh REPLAY DICT TARGET" >&2
  exit 2
fi
replay="$1"
dict="$2"
target="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

prev=""
while IFS= read -r line; do
  case "$line" in
    '#'*)
      prev="${line#\# }"
      printf '%s\n' "$line"
      ;;
    *=\"*\")
      name="${line%%=*}"
      printf '%s\n' "$prev" | tr ';' '\n' >"$tmp/entry.txt"
      if ! "$replay" --target "$target" --assemble "$tmp/entry.bin" "$tmp/entry.txt" 2>"$tmp/err"; then
        echo "dict_regen: $name: '$prev' does not assemble: $(cat "$tmp/err")" >&2
        exit 1
      fi
      got="$(od -An -v -tx1 "$tmp/entry.bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//; s/ /\\x/g; s/^/\\x/')"
      printf '%s="%s"\n' "$name" "$got"
      ;;
    *) printf '%s\n' "$line" ;;
  esac
done <"$dict" >"$tmp/out"
cp "$tmp/out" "$dict"
echo "dict_regen: $dict rewritten for the $target target"
