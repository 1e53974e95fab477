#!/usr/bin/env bash
# The dictionary follows the op table: every entry's bytes are exactly the ops in the comment
# line above it, assembled for the dictionary's target. Usage: dict_test.sh REPLAY DICT TARGET
set -euo pipefail
replay="$1"
dict="$2"
target="${3:-graph}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

entries=0
failures=0
prev=""
while IFS= read -r line; do
  case "$line" in
    '#'*) prev="${line#\# }" ;;
    *=\"*\")
      name="${line%%=*}"
      want="${line#*=\"}"
      want="${want%\"}"
      printf '%s\n' "$prev" | tr ';' '\n' >"$tmp/entry.txt"
      if ! "$replay" --target "$target" --assemble "$tmp/entry.bin" "$tmp/entry.txt" 2>"$tmp/err"; then
        echo "FAIL $name: '$prev' does not assemble: $(cat "$tmp/err")"
        failures=$((failures + 1))
        continue
      fi
      got="$(od -An -v -tx1 "$tmp/entry.bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//; s/ /\\x/g; s/^/\\x/')"
      if [ "$got" != "$want" ]; then
        echo "FAIL $name: '$prev' assembles to \"$got\", the dictionary says \"$want\""
        failures=$((failures + 1))
      fi
      entries=$((entries + 1))
      prev=""
      ;;
    '') ;;
    *) echo "FAIL: unexpected line: $line"; failures=$((failures + 1)) ;;
  esac
done <"$dict"

echo "$entries entries, $failures failure(s)"
[ "$entries" -gt 0 ] && [ "$failures" -eq 0 ]
