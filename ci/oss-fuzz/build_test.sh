#!/usr/bin/env bash
# The OSS-Fuzz / ClusterFuzzLite contract of ci/oss-fuzz/build.sh, without Docker: for each cell
# ENGINE:SANITIZER given (libfuzzer or afl; address, undefined or memory), build.sh runs as the
# base-builder image's `compile` runs it, and what lands in $OUT runs clean.
#
#   build_test.sh [--all | ENGINE:SANITIZER...]     no argument: libfuzzer:undefined afl:address
#                                                   --all: every engine x sanitizer that
#                                                   ci/oss-fuzz/project.yaml lists
#
# The layout and the variables of the image: the tree copied to $SRC/gcfuzz, the Dockerfile's
# build script copied to $SRC/build.sh (ci/oss-fuzz/build.sh for OSS-Fuzz; ClusterFuzzLite's
# .clusterfuzzlite/build.sh for libfuzzer:undefined, ClusterFuzzLite runs libFuzzer only), cwd
# $SRC/gcfuzz (the WORKDIR), $OUT, $WORK, `bash -eux $SRC/build.sh`; CC, CFLAGS and
# LIB_FUZZING_ENGINE as base-clang, base-builder and compile_<engine> set them: CFLAGS is the
# base flags, then SANITIZER_FLAGS_<sanitizer>, then COVERAGE_FLAGS for libFuzzer (none for
# afl, whose CC is afl-clang-fast and whose engine is AFL++'s driver, libAFLDriver.a, copied to
# a libFuzzingEngine.a). Then each target, its seed corpus zip, dictionary and options are in
# $OUT, and each target runs 1,000 inputs from its seeds clean with halt_on_error=1 for every
# sanitizer: libFuzzer `-runs=1000 -seed=1` over the unzipped seeds with the target's options;
# afl: the driver binary on every seed (stdin; file arguments too, but under MSan: see run_afl),
# then afl-fuzz for 1,000 executions (-E 1000, -s 1) from the seeds with the dictionary, no
# crash and no hang allowed.
#
# UBSAN_OPTIONS is halt_on_error=1 and NOT the image's silence_unsigned_overflow=1: OSS-Fuzz's
# UBSan set includes unsigned-integer-overflow, and a target must not report one at all.
#
# The Dockerfiles are checked too: every file they COPY exists (.clusterfuzzlite/Dockerfile
# from the tree's root, ci/oss-fuzz/Dockerfile from its own folder, OSS-Fuzz's projects/gcfuzz).
#
# It compiles the source tree itself (not through Bazel), so the BUILD rules run it unsandboxed
# (local) and never cache it (external): this script finds the tree through its own path.
set -euo pipefail

self="$(readlink -f "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$self")/../.." && pwd)"
[ -f "$ROOT/ci/oss-fuzz/build.sh" ] || { echo "FAIL: source tree not found from $self"; exit 1; }
T="$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/oss-fuzz-contract.XXXXXX")"
# CONTRACT_KEEP=1 keeps every cell's tree, $OUT and logs (the path is printed at the end).
if [ -n "${CONTRACT_KEEP:-}" ]; then trap 'echo "kept: $T"' EXIT; else trap 'rm -rf "$T"' EXIT; fi

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A YAML list of ci/oss-fuzz/project.yaml: KEY -> its items, one a line.
yaml_list() {
  sed -n "/^$1:/,/^[^ ]/p" "$ROOT/ci/oss-fuzz/project.yaml" | sed -n 's/^ *- *\([a-z]*\) *$/\1/p'
}

cells=()
case "${1:-}" in
  "") cells=(libfuzzer:undefined afl:address) ;; # //ci/oss-fuzz:build_test
  --all)
    for e in $(yaml_list fuzzing_engines); do
      for s in $(yaml_list sanitizers); do cells+=("$e:$s"); done
    done ;;
  *) cells=("$@") ;;
esac
[ "${#cells[@]}" -gt 0 ] || { echo "FAIL: no cell to test"; exit 1; }

# --- The Dockerfiles: every COPY source exists in its build context. -------------------------
check_copies() { # DOCKERFILE CONTEXT
  local n=0
  while read -r -a words; do
    [ "${words[0]:-}" = COPY ] || continue
    # COPY SRC... DEST: every word but the first and the last (no --from or --chown here).
    for src in "${words[@]:1:${#words[@]}-2}"; do
      n=$((n + 1))
      [ -e "$2/$src" ] || fail "$1: COPY $src: no such file in ${2#"$ROOT"/}"
    done
  done <"$1"
  [ "$n" -gt 0 ] || fail "$1 copies nothing"
}
check_copies "$ROOT/.clusterfuzzlite/Dockerfile" "$ROOT"
check_copies "$ROOT/ci/oss-fuzz/Dockerfile" "$ROOT/ci/oss-fuzz"
for f in .clusterfuzzlite/build.sh .clusterfuzzlite/project.yaml ci/oss-fuzz/project.yaml; do
  [ -s "$ROOT/$f" ] || fail "$f missing"
done
grep -q '^WORKDIR \$SRC/gcfuzz$' "$ROOT/.clusterfuzzlite/Dockerfile" ||
  fail ".clusterfuzzlite/Dockerfile: WORKDIR is not \$SRC/gcfuzz"
grep -q '^WORKDIR gcfuzz$' "$ROOT/ci/oss-fuzz/Dockerfile" ||
  fail "ci/oss-fuzz/Dockerfile: WORKDIR is not gcfuzz (\$SRC/gcfuzz)"

# --- The image's variables (infra/base-images: base-clang's CFLAGS, base-builder's flags). ----
# base-clang's CFLAGS, less two -Wno-error= of warnings clang 14 does not have
# (enum-constexpr-conversion, vla-cxx-extension: newer clangs' errors made warnings again).
BASE_CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only"
BASE_CFLAGS+=" -Wno-error=incompatible-function-pointer-types -Wno-error=int-conversion"
BASE_CFLAGS+=" -Wno-error=deprecated-declarations -Wno-error=implicit-function-declaration"
BASE_CFLAGS+=" -Wno-error=implicit-int -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
SANITIZER_FLAGS_address="-fsanitize=address -fsanitize-address-use-after-scope"
# "Set of '-fsanitize' flags matches '-fno-sanitize-recover' + 'unsigned-integer-overflow'."
UB="array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return"
UB+=",returns-nonnull-attribute,shift,signed-integer-overflow"
SANITIZER_FLAGS_undefined="-fsanitize=$UB,unsigned-integer-overflow,unreachable,vla-bound,vptr"
SANITIZER_FLAGS_undefined+=" -fno-sanitize-recover=$UB,unreachable,vla-bound,vptr"
SANITIZER_FLAGS_memory="-fsanitize=memory -fsanitize-memory-track-origins"
COVERAGE_FLAGS="-fsanitize=fuzzer-no-link"
AFL_DRIVER="${AFL_DRIVER:-/usr/lib/afl/libAFLDriver.a}"

# The runtime options: halt at the first report of any kind, unsigned overflows included.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export MSAN_OPTIONS="halt_on_error=1"

# The tree as the Dockerfile puts it at $SRC/gcfuzz: the checkout's files, without Bazel's
# output symlinks, .git and the scripts' scratch space.
SRC_TEMPLATE="$T/tree"
mkdir -p "$SRC_TEMPLATE"
tar -C "$ROOT" --exclude='./bazel-*' --exclude=./.git --exclude=./.gcfuzz-work \
  --exclude=./bench/out --exclude=./ci/mutants/out -cf - . | tar -C "$SRC_TEMPLATE" -xf -

# The options as ClusterFuzz passes them to libFuzzer: [libfuzzer] key = value -> -key=value.
libfuzzer_flags() { # OPTIONS_FILE OUT
  while IFS='=' read -r key value; do
    key="$(echo "$key" | tr -d ' ')"; value="$(echo "$value" | tr -d ' ')"
    case "$key" in ''|'['*|'#'*) continue ;; dict) value="$2/$value" ;; esac
    echo "-$key=$value"
  done <"$1"
}

matrix=()
run_cell() { # ENGINE SANITIZER
  local engine="$1" san="$2" cell="$1:$2"
  local C="$T/$engine-$san"
  local SRC="$C/src" OUT="$C/out" WORK="$C/work"
  mkdir -p "$SRC" "$OUT" "$WORK"
  cp -a "$SRC_TEMPLATE" "$SRC/gcfuzz"
  # The Dockerfile's COPY of the build script to $SRC/build.sh.
  local script=ci/oss-fuzz/build.sh
  [ "$cell" = libfuzzer:undefined ] && script=.clusterfuzzlite/build.sh
  cp "$SRC/gcfuzz/$script" "$SRC/build.sh"

  local flags_var="SANITIZER_FLAGS_$san" cc lib cflags
  [ -n "${!flags_var+x}" ] || { fail "$cell: unknown sanitizer $san"; return; }
  cflags="$BASE_CFLAGS ${!flags_var}"
  case "$engine" in
    libfuzzer) cc=clang; lib=-fsanitize=fuzzer; cflags="$cflags $COVERAGE_FLAGS" ;;
    afl)
      command -v afl-clang-fast >/dev/null || { fail "$cell: no afl-clang-fast (afl++)"; return; }
      [ -f "$AFL_DRIVER" ] || { fail "$cell: no $AFL_DRIVER (afl++)"; return; }
      mkdir -p "$C/lib"
      cp "$AFL_DRIVER" "$C/lib/libFuzzingEngine.a"
      cc=afl-clang-fast; lib="$C/lib/libFuzzingEngine.a" ;;
    *) fail "$cell: unknown engine $engine"; return ;;
  esac

  local start=$SECONDS
  if ! (cd "$SRC/gcfuzz" &&
        env SRC="$SRC" OUT="$OUT" WORK="$WORK" CC="$cc" CXX="${cc/clang/clang++}" \
          CFLAGS="$cflags" CXXFLAGS="$cflags" LIB_FUZZING_ENGINE="$lib" SANITIZER="$san" \
          FUZZING_ENGINE="$engine" ARCHITECTURE=x86_64 FUZZING_LANGUAGE=c AFL_QUIET=1 \
          ASAN_OPTIONS="detect_leaks=0" bash -eux "$SRC/build.sh") >"$C/build.log" 2>&1; then
    tail -n 30 "$C/build.log"
    fail "$cell: build.sh failed"
    matrix+=("$cell: build FAILED")
    return
  fi
  echo "$cell: build.sh ($script as \$SRC/build.sh) $((SECONDS - start)) s"

  local ran=0 t name seeds n
  targets="$(sed -n 's/^TARGETS="\(.*\)"$/\1/p' "$ROOT/ci/oss-fuzz/build.sh")"
  [ -n "$targets" ] || fail "no TARGETS line in build.sh"
  for t in $targets; do
    name="${t}_fuzzer"
    for f in "$name" "${name}_seed_corpus.zip" "$name.dict" "$name.options"; do
      [ -s "$OUT/$f" ] || fail "$cell: $OUT/$f missing or empty"
    done
    [ -x "$OUT/$name" ] || { fail "$cell: $name is not executable"; continue; }
    grep -q "^dict = $name.dict$" "$OUT/$name.options" ||
      fail "$cell: $name.options does not name $name.dict"
    seeds="$C/seeds-$t"
    mkdir -p "$seeds"
    (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
    n=$(find "$seeds" -type f | wc -l)
    want=8; [ "$t" = graph ] && want=25
    [ "$n" -ge "$want" ] || fail "$cell: $name: $n seeds in the zip, at least $want expected"
    if [ "$engine" = libfuzzer ]; then
      run_libfuzzer "$cell" "$OUT" "$name" "$seeds" "$n" && ran=$((ran + 1))
    else
      run_afl "$cell" "$OUT" "$name" "$seeds" "$C" && ran=$((ran + 1))
    fi
  done
  matrix+=("$cell: built; $ran of $(echo "$targets" | wc -w) targets ran 1,000 inputs clean")
}

run_libfuzzer() { # CELL OUT NAME SEEDS N
  local cell="$1" OUT="$2" name="$3" seeds="$4" n="$5" log="$2/run-$3.log"
  local flags
  mapfile -t flags < <(libfuzzer_flags "$OUT/$name.options" "$OUT")
  # 1,000 runs: every seed, then mutations of them (-seed=1: the same ones every time).
  if ! (cd "$OUT" && "./$name" "${flags[@]}" -runs=1000 -seed=1 -artifact_prefix="$OUT/" \
        "$seeds") >"$log" 2>&1; then
    tail -n 30 "$log"
    fail "$cell: $name did not run 1,000 inputs from its seeds cleanly"
    return 1
  fi
  # Every seed read and run (libFuzzer counts the files it read, then INITED once all ran), then
  # the 1,000 runs done.
  if ! grep -q "seed corpus: files: $n " "$log" || ! grep -q "INITED " "$log" ||
     ! grep -q "^Done 1000 runs" "$log"; then
    tail -n 30 "$log"
    fail "$cell: $name: did not load its $n seeds and run 1,000 inputs"
    return 1
  fi
  echo "$cell: $name: $(grep -E "^Done" "$log")"
}

run_afl() { # CELL OUT NAME SEEDS CELLDIR
  local cell="$1" OUT="$2" name="$3" seeds="$4" log="$2/run-$3.log" out="$5/afl-$3" s
  # The driver binary alone on every seed: on its stdin (as afl-fuzz feeds it without shared
  # memory), and, but under MSan, as file arguments (as a reproducer runs a test case). AFL++'s
  # driver reads file arguments with a raw read syscall, which MSan does not see: every byte
  # would look uninitialized, a report of the driver's, not of gcfuzz's.
  : >"$log"
  for s in "$seeds"/*; do
    if ! (cd "$OUT" && "./$name" <"$s") >>"$log" 2>&1; then
      tail -n 30 "$log"
      fail "$cell: $name did not run seed $(basename "$s") from stdin cleanly"
      return 1
    fi
  done
  if [ "${cell#*:}" != memory ] && ! (cd "$OUT" && "./$name" "$seeds"/*) >>"$log" 2>&1; then
    tail -n 30 "$log"
    fail "$cell: $name did not run its seed files cleanly"
    return 1
  fi
  # afl-fuzz for 1,000 executions from the seeds, with the target's dictionary. afl-fuzz sets
  # the sanitizers' options it needs (abort_on_error=1, symbolize=0) when they are unset.
  if ! (cd "$OUT" && env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u MSAN_OPTIONS AFL_NO_UI=1 \
          AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
          AFL_BENCH_UNTIL_CRASH=1 \
          afl-fuzz -i "$seeds" -o "$out" -x "$OUT/$name.dict" -E 1000 -s 1 -t 10000 \
          -- "./$name") >>"$log" 2>&1; then
    tail -n 30 "$log"
    fail "$cell: afl-fuzz $name failed"
    return 1
  fi
  local stats="$out/default/fuzzer_stats" execs crashes hangs
  [ -f "$stats" ] || { tail -n 30 "$log"; fail "$cell: afl-fuzz $name wrote no fuzzer_stats"; return 1; }
  execs=$(sed -n 's/^execs_done *: *//p' "$stats")
  crashes=$(sed -n 's/^saved_crashes *: *//p' "$stats")
  hangs=$(sed -n 's/^saved_hangs *: *//p' "$stats")
  if [ "${execs:-0}" -lt 1000 ] || [ "${crashes:-1}" != 0 ] || [ "${hangs:-1}" != 0 ]; then
    tail -n 30 "$log"
    fail "$cell: afl-fuzz $name: $execs execs, $crashes crashes, $hangs hangs"
    return 1
  fi
  echo "$cell: $name: afl-fuzz $execs execs, 0 crashes, 0 hangs"
}

for cell in "${cells[@]}"; do
  run_cell "${cell%%:*}" "${cell#*:}"
  [ -n "${CONTRACT_KEEP:-}" ] || rm -rf "$T/${cell%%:*}-${cell#*:}"
done
echo "---- the contract matrix (engine:sanitizer)"
printf '%s\n' "${matrix[@]}"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
