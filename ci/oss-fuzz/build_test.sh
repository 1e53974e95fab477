#!/usr/bin/env bash
# Runs ci/oss-fuzz/build.sh the way OSS-Fuzz builds for libFuzzer + ASan, then checks that what
# lands in $OUT works: each target, its seed corpus zip, dictionary and options; the target runs
# every input of its seed corpus with its options and dictionary.
#
# It compiles the source tree itself (not through Bazel), so the BUILD rule runs it unsandboxed
# (local) and never caches it (external): this script finds the tree through its own path.
set -euo pipefail

self="$(readlink -f "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$self")/../.." && pwd)"
[ -f "$ROOT/ci/oss-fuzz/build.sh" ] || { echo "FAIL: source tree not found from $self"; exit 1; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

export CC=clang
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export OUT
start=$SECONDS
"$ROOT/ci/oss-fuzz/build.sh"
echo "build.sh: $((SECONDS - start)) s"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The targets build.sh builds (its TARGETS line), each with its minimum number of seeds.
targets="$(sed -n 's/^TARGETS="\(.*\)"$/\1/p' "$ROOT/ci/oss-fuzz/build.sh")"
[ -n "$targets" ] || fail "no TARGETS line in build.sh"
for t in $targets; do
  name="${t}_fuzzer"
  for f in "$name" "${name}_seed_corpus.zip" "$name.dict" "$name.options"; do
    [ -s "$OUT/$f" ] || fail "$OUT/$f missing or empty"
  done
  [ -x "$OUT/$name" ] || { fail "$name is not executable"; continue; }
  grep -q "^dict = $name.dict$" "$OUT/$name.options" || fail "$name.options does not name $name.dict"
  seeds="$OUT/seeds-$t"
  mkdir -p "$seeds"
  (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
  n=$(find "$seeds" -type f | wc -l)
  want=8; [ "$t" = graph ] && want=25
  [ "$n" -ge "$want" ] || fail "$name: $n seeds in the zip, at least $want expected"
  # The options, as ClusterFuzz passes them: [libfuzzer] key = value -> -key=value.
  flags=()
  while IFS='=' read -r key value; do
    key="$(echo "$key" | tr -d ' ')"; value="$(echo "$value" | tr -d ' ')"
    case "$key" in ''|'['*|'#'*) continue ;; dict) value="$OUT/$value" ;; esac
    flags+=("-$key=$value")
  done <"$OUT/$name.options"
  # Every seed once (-runs=0: execute the corpus, mutate nothing), with the options and the
  # dictionary. Mutating here would make this test find collector bugs, which is the campaign's
  # job, not this one's.
  if ! (cd "$OUT" && "./$name" "${flags[@]}" -runs=0 -artifact_prefix="$OUT/" "$seeds") \
       >"$OUT/run-$t.log" 2>&1; then
    tail -n 30 "$OUT/run-$t.log"
    fail "$name did not run its seed corpus cleanly"
  # Every seed read and run: libFuzzer counts the files it read, then INITED once all ran (the
  # corpus it keeps may be smaller: with use_counters = 0 a seed adding no new edge is not kept).
  elif ! grep -q "seed corpus: files: $n " "$OUT/run-$t.log" || ! grep -q "INITED " "$OUT/run-$t.log" ||
       ! grep -q "^Done " "$OUT/run-$t.log"; then
    tail -n 30 "$OUT/run-$t.log"
    fail "$name: did not load and run its $n seeds"
  else
    grep -E "Dictionary:|INITED|Done" "$OUT/run-$t.log"
  fi
done
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
