#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for gcfuzz: builds every fuzz target with the compiler
# and flags the fuzzing infrastructure chooses, without Bazel, following the OSS-Fuzz contract:
#
#   $CC, $CFLAGS          compiler and flags (sanitizer, coverage instrumentation)
#   $LIB_FUZZING_ENGINE   the engine to link (e.g. -fsanitize=fuzzer for libFuzzer)
#   $OUT                  where <target>_fuzzer, <target>_fuzzer_seed_corpus.zip,
#                         <target>_fuzzer.dict and <target>_fuzzer.options go
#   $SRC                  (optional) the checkout's parent; the source tree is found from this
#                         script's own location, so it also runs from a plain checkout.
#
# Run locally the way OSS-Fuzz builds for libFuzzer + ASan (this is what //ci/oss-fuzz:build_test
# does):
#   CC=clang CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address \
#     -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out ci/oss-fuzz/build.sh

# The targets, as in ci/campaign: one word each.
TARGETS="graph roots schedule"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${CC:?set CC}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
CFLAGS="${CFLAGS:-}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# The collector and the passes, every .c that is not a test or a generator, the fuzz driver and
# the op language. Compiled in parallel; the objects do not depend on each other.
SOURCES=""
for f in "$ROOT"/gc/*.c "$ROOT"/invariants/*.c; do
  case "$f" in *_test.c|*/sizeclass_gen.c) continue ;; esac
  SOURCES="$SOURCES $f"
done
SOURCES="$SOURCES $ROOT/fuzz/program.c $ROOT/fuzz/text.c $ROOT/fuzz/sched.c $ROOT/fuzz/driver.c"
SOURCES="$SOURCES $ROOT/fuzz/threads.c $ROOT/fuzz/corrupt.c"

compile() { # SOURCE FLAGS...
  local src="$1"; shift
  local obj="$WORK/obj/$(echo "${src#"$ROOT"/}" | tr '/' '_').o"
  $CC "$@" -std=gnu11 -I"$ROOT" -c "$src" -o "$obj"
}

mkdir -p "$WORK/obj"
jobs=$(nproc 2>/dev/null || echo 1)
pids=""
for src in $SOURCES; do
  # shellcheck disable=SC2086
  compile "$src" $CFLAGS &
  pids="$pids $!"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.05; done
done
for pid in $pids; do wait "$pid"; done

# A host-side assembler for the seed corpus: the replay tool, built plainly (no sanitizer, no
# engine), whatever $CFLAGS asks of the fuzz targets.
$CC -O1 -std=gnu11 -I"$ROOT" -o "$WORK/replay" "$ROOT/fuzz/replay.c" "$ROOT/fuzz/replay_main.c" \
  "$ROOT/fuzz/program.c" "$ROOT/fuzz/text.c" "$ROOT/fuzz/sched.c" "$ROOT/fuzz/driver.c" \
  "$ROOT/fuzz/threads.c" "$ROOT/fuzz/corrupt.c" \
  $(for f in $SOURCES; do case "$f" in */fuzz/*) ;; *) echo "$f" ;; esac; done) -lpthread

for t in $TARGETS; do
  name="${t}_fuzzer"
  # shellcheck disable=SC2086
  compile "$ROOT/fuzz/$name.c" $CFLAGS
  # shellcheck disable=SC2086
  $CC $CFLAGS $LIB_FUZZING_ENGINE "$WORK"/obj/*.o -o "$OUT/$name" -lpthread
  rm -f "$WORK/obj/fuzz_$name.c.o"

  # Seed corpus: the text seeds, assembled into the bytes the target reads.
  mkdir -p "$WORK/seeds-$t"
  for s in "$ROOT"/corpus/"$t"/*.txt; do
    "$WORK/replay" --target "$t" --assemble "$WORK/seeds-$t/$(basename "$s" .txt)" "$s"
  done
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$WORK/seeds-$t" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)

  cp "$ROOT/fuzz/$t.dict" "$OUT/$name.dict"
  # The options name the dictionary as it is called in $OUT.
  sed "s/^dict *=.*/dict = $name.dict/" "$ROOT/fuzz/$t.options" >"$OUT/$name.options"
done
