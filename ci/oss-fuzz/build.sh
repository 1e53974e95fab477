#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for gcfuzz: builds every fuzz target with the compiler,
# flags and engine the fuzzing infrastructure chooses, without Bazel. The one build script: the
# OSS-Fuzz Dockerfile (ci/oss-fuzz/Dockerfile) copies this file to $SRC/build.sh, and
# ClusterFuzzLite's (.clusterfuzzlite/build.sh) execs it from the tree. The contract:
#
#   $CC, $CFLAGS          compiler and flags: clang, or afl-clang-fast for afl; the sanitizer's
#                         flags, and -fsanitize=fuzzer-no-link for libFuzzer
#   $LIB_FUZZING_ENGINE   the engine to link: -fsanitize=fuzzer (libFuzzer), or an archive with
#                         main() (afl: AFL++'s driver, copied to /usr/lib/libFuzzingEngine.a)
#   $OUT                  where <target>_fuzzer, <target>_fuzzer_seed_corpus.zip,
#                         <target>_fuzzer.dict and <target>_fuzzer.options go
#   $WORK                 (optional) scratch space; a temporary directory without it
#   $SRC                  (optional) the checkout's parent: the tree is this script's own
#                         checkout, or $SRC/gcfuzz when the script runs as $SRC/build.sh
#
# ci/oss-fuzz/README.md says how to run it locally as the images do (ci/oss-fuzz/build_test.sh
# does, for every sanitizer and engine).

# The targets, as in ci/campaign: one word each. schedule-tsan is not here: OSS-Fuzz and
# ClusterFuzzLite build no ThreadSanitizer fuzzers.
TARGETS="graph roots schedule"

# The tree: this script's checkout when it runs inside one (ci/oss-fuzz/build.sh), else the
# checkout at $SRC/gcfuzz (this script copied to $SRC/build.sh, as the Dockerfiles copy it).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -f "$here/../../gc/gc.h" ] && [ -f "$here/../../fuzz/driver/driver.h" ]; then
  ROOT="$(cd "$here/../.." && pwd)"
elif [ -f "${SRC:-/src}/gcfuzz/gc/gc.h" ]; then
  ROOT="${SRC:-/src}/gcfuzz"
else
  echo "build.sh: the gcfuzz tree is neither around $here nor at \${SRC:-/src}/gcfuzz" >&2
  exit 1
fi
: "${CC:?set CC}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
CFLAGS="${CFLAGS:-}"
mkdir -p "$OUT"
if [ -n "${WORK:-}" ]; then
  BUILD="$WORK/gcfuzz-build"
  rm -rf "$BUILD"
  mkdir -p "$BUILD"
else
  BUILD="$(mktemp -d)"
  trap 'rm -rf "$BUILD"' EXIT
fi

# The collector and the passes, the op language, the scheduler, the fuzz driver, the backend
# interface with gcfuzz's own backend and the backend-neutral oracle: every .c of their packages
# that is not a test or a generator. (The other collectors' backends need their Debian sources:
# Bazel's build, not this one.) Compiled in parallel; the objects do not depend on each other.
SOURCES=""
for f in "$ROOT"/gc/*.c "$ROOT"/invariants/*.c "$ROOT"/fuzz/lang/*.c "$ROOT"/fuzz/sched/*.c \
         "$ROOT"/fuzz/driver/*.c "$ROOT"/fuzz/backend/*.c "$ROOT"/fuzz/backend/gcfuzz/*.c \
         "$ROOT"/fuzz/oracle/*.c; do
  case "$f" in *_test.c|*/sizeclass_gen.c) continue ;; esac
  SOURCES="$SOURCES $f"
done
# The targets' sources, dictionaries and options.
TARGET_DIR="$ROOT/fuzz/targets"

obj_of() { # SOURCE -> its object in $BUILD/obj
  echo "$BUILD/obj/$(echo "${1#"$ROOT"/}" | tr '/' '_').o"
}
compile() { # SOURCE FLAGS...
  local src="$1"; shift
  $CC "$@" -std=gnu11 -I"$ROOT" -c "$src" -o "$(obj_of "$src")"
}

mkdir -p "$BUILD/obj"
jobs=$(nproc 2>/dev/null || echo 1)
# A failed compile names its source in this file: `wait PID` per job cannot tell, since the
# throttle's `jobs` may already have reaped a finished job, and bash then refuses to wait for
# it ("pid N is not a child of this shell", seen on a loaded machine).
failed="$BUILD/compile-failed"
rm -f "$failed"
for src in $SOURCES; do
  # shellcheck disable=SC2086
  { compile "$src" $CFLAGS || echo "$src" >>"$failed"; } &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.05; done
done
wait
if [ -s "$failed" ]; then
  echo "build.sh: compiling failed: $(tr '\n' ' ' <"$failed")" >&2
  exit 1
fi
OBJS=""
for src in $SOURCES; do OBJS="$OBJS $(obj_of "$src")"; done
# Every target's custom mutator (the op-aware mutations; libFuzzer calls it, other engines do not)
# and what every target refuses from its environment (target_env.c).
for f in custom_mutator.c target_env.c; do
  # shellcheck disable=SC2086
  compile "$TARGET_DIR/$f" $CFLAGS
  OBJS="$OBJS $(obj_of "$TARGET_DIR/$f")"
done

# A host-side assembler for the seed corpus: the replay tool, built plainly (no sanitizer, no
# engine, no optimization: it assembles a few dozen text files), whatever $CC and $CFLAGS ask of
# the fuzz targets. Plain clang when there is one ($CC is afl-clang-fast in afl builds).
HOST_CC="$CC"
command -v clang >/dev/null 2>&1 && HOST_CC=clang
# shellcheck disable=SC2046
$HOST_CC -O0 -std=gnu11 -I"$ROOT" -o "$BUILD/replay" \
  $(for f in "$ROOT"/fuzz/replay/*.c; do case "$f" in *_test.c) ;; *) echo "$f" ;; esac; done) \
  $SOURCES -lpthread

for t in $TARGETS; do
  name="${t}_fuzzer"
  compile "$TARGET_DIR/$name.c" $CFLAGS
  # The engine after the objects: an archive (afl's driver) is searched for what they need.
  # shellcheck disable=SC2086
  $CC $CFLAGS "$(obj_of "$TARGET_DIR/$name.c")" $OBJS -o "$OUT/$name" $LIB_FUZZING_ENGINE \
    -lpthread

  # Seed corpus: the text seeds, assembled into the bytes the target reads.
  mkdir -p "$BUILD/seeds-$t"
  for s in "$ROOT"/corpus/"$t"/*.txt; do
    "$BUILD/replay" --target "$t" --assemble "$BUILD/seeds-$t/$(basename "$s" .txt)" "$s"
  done
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$BUILD/seeds-$t" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)

  cp "$TARGET_DIR/$t.dict" "$OUT/$name.dict"
  # The options name the dictionary as it is called in $OUT.
  sed "s/^dict *=.*/dict = $name.dict/" "$TARGET_DIR/$t.options" >"$OUT/$name.options"
done
