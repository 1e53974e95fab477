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

# The collector and the passes, the op language, the scheduler and the fuzz driver: every .c of
# their packages that is not a test or a generator. Compiled in parallel; the objects do not
# depend on each other.
SOURCES=""
for f in "$ROOT"/gc/*.c "$ROOT"/invariants/*.c "$ROOT"/fuzz/lang/*.c "$ROOT"/fuzz/sched/*.c \
         "$ROOT"/fuzz/driver/*.c; do
  case "$f" in *_test.c|*/sizeclass_gen.c) continue ;; esac
  SOURCES="$SOURCES $f"
done
# The targets' sources, dictionaries and options.
TARGET_DIR="$ROOT/fuzz/targets"

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
# shellcheck disable=SC2046
$CC -O1 -std=gnu11 -I"$ROOT" -o "$WORK/replay" \
  $(for f in "$ROOT"/fuzz/replay/*.c; do case "$f" in *_test.c) ;; *) echo "$f" ;; esac; done) \
  $SOURCES -lpthread

for t in $TARGETS; do
  name="${t}_fuzzer"
  # shellcheck disable=SC2086
  compile "$TARGET_DIR/$name.c" $CFLAGS
  # shellcheck disable=SC2086
  $CC $CFLAGS $LIB_FUZZING_ENGINE "$WORK"/obj/*.o -o "$OUT/$name" -lpthread
  rm -f "$WORK/obj/$(echo "${TARGET_DIR#"$ROOT"/}/$name.c" | tr '/' '_').o"

  # Seed corpus: the text seeds, assembled into the bytes the target reads.
  mkdir -p "$WORK/seeds-$t"
  for s in "$ROOT"/corpus/"$t"/*.txt; do
    "$WORK/replay" --target "$t" --assemble "$WORK/seeds-$t/$(basename "$s" .txt)" "$s"
  done
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$WORK/seeds-$t" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)

  cp "$TARGET_DIR/$t.dict" "$OUT/$name.dict"
  # The options name the dictionary as it is called in $OUT.
  sed "s/^dict *=.*/dict = $name.dict/" "$TARGET_DIR/$t.options" >"$OUT/$name.options"
done
