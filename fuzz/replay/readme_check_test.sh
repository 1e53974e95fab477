#!/usr/bin/env bash
# readme_check.sh on fixtures, with a stand-in replay (testdata/fake_replay.sh): a README whose
# blocks match passes; one whose table differs fails with a diff naming the line; a block with an
# unknown command, a block never closed and a README with no block fail.
# Usage: readme_check_test.sh CHECK FAKE_REPLAY TESTDATA_DIR
set -euo pipefail
check="$1"
fake="$2"
data="$3"
failures=0

# expect STATUS NEEDLE README: the check's exit status is STATUS and its output holds NEEDLE.
expect() {
  local want="$1" needle="$2" readme="$3" out status=0
  out="$("$check" "$fake" "$data/$readme" 2>&1)" || status=$?
  if [ "$status" -ne "$want" ] || ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL $readme: wanted exit $want and '$needle'; got exit $status:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $readme"
  fi
}

expect 0 "match.md: 2 generated block(s) checked" match.md
expect 1 "differ.md:3: the block differs from what 'replay --list-ops' prints" differ.md
expect 1 '+| `b` | two \| three |' differ.md
expect 1 '-| `b` | two |' differ.md
expect 1 "unknown generator 'rm -rf /'" unknown.md
expect 1 "unclosed.md:3: the block is never closed" unclosed.md
expect 1 "none.md: no generated block" none.md
# Every README given is checked: a good one does not hide a bad one.
status=0
"$check" "$fake" "$data/match.md" "$data/differ.md" >/dev/null 2>&1 || status=$?
if [ "$status" -ne 1 ]; then
  echo "FAIL match.md differ.md together: exit $status, wanted 1"
  failures=$((failures + 1))
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
