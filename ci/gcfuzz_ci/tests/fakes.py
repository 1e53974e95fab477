"""Fake tools for the ci program's tests: small shell scripts standing in for a fuzz target, the
replay tool or apt-get, and canned outputs."""
import os
import stat
import textwrap


def script(path, body):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w") as f:
    f.write("#!/bin/sh\n" + textwrap.dedent(body))
  os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
  return path


def verdict_line(kind, pass_, point="cycled", op=3, cycle=2):
  return ('GCFUZZ-VERDICT {"kind": "%s", "pass": "%s", "point": "%s", "op": %d, "cycle": %d}'
          % (kind, pass_, point, op, cycle))


# A fuzz target: run on a file, it counts the run in $dir/runs and crashes (a verdict line, the
# human report that must not be parsed, exit 1) when the file holds "bug", printing the
# file's first word as the kind's name; with no file, it is a fuzzing run that writes its pid
# and sleeps.
# A file holding "race" crashes as a TSan race that the OS repeats only now and then: on every
# second process that runs it (a data race verdict and TSan's stack); "never" stands for a race
# that never repeats. Every run's arguments go to $dir/args, one line a run.
FUZZER = """\
dir="$(dirname "$0")"
last=""
for a in "$@"; do last="$a"; done
if [ -f "$last" ]; then
  echo run >>"$dir/runs"
  echo "$@" >>"$dir/args"
  if grep -q race "$last"; then
    if [ $(($(wc -l <"$dir/runs") % 2)) -eq 0 ]; then
      echo "WARNING: ThreadSanitizer: data race (pid=7)"
      echo "    #0 gc_heap_account_bytes /proc/self/cwd/gc/heap.h:307:3 (schedule_tsan_fuzzer+0x1)"
      echo 'GCFUZZ-VERDICT {"kind": "tsan.data-race", "pass": "tsan", "point": "op", "op": 4, "cycle": 2}'
      exit 66
    fi
    exit 0
  fi
  if grep -q bug "$last"; then
    echo "VIOLATION model.misleading (pass swept, at mark-done)"
    echo 'GCFUZZ-VERDICT {"kind": "'"$(head -c 5 "$last")"'.x", "pass": "reach", "point": "cycled", "op": 1, "cycle": 1}'
    echo "==1==ERROR: libFuzzer: deadly signal"
    exit 1
  fi
  exit 0
fi
echo $$ >"$dir/fuzzer.pid"
echo "#2 INITED cov: 10 ft: 11 corp: 1/1b exec/s: 0 rss: 30Mb"
while :; do
  echo "#100: cov: 12 ft: 13 corp: 2 exec/s 50 oom/timeout/crash: 0/0/0 time: 2s job: 1"
  sleep 0.2
done
"""

REPLAY = """\
echo "op 1 alloc"
echo "op 2 collect full"
"""

BAZEL_TEST_LOG = """\
INFO: Build completed, 1 test FAILED, 4 total actions
//gc:alloc_test                                                 PASSED in 0.3s
//gc:mark_test                                          (cached) PASSED in 0.2s
//fuzz:corpus_test                                              FAILED in 3.1s
  /root/.cache/bazel/execroot/testlogs/fuzz/corpus_test/test.log
//invariants:threads_test                                        FLAKY, failed in 1 out of 2 in 5.0s
  Stats over 2 runs: max = 5.0s, min = 4.0s, avg = 4.5s, dev = 0.5s
  /root/.cache/bazel/execroot/testlogs/invariants/threads_test/test_attempts/attempt_1.log
//gc:domain_test                                                NO STATUS

Executed 4 out of 5 tests: 2 tests pass, 1 fails locally and 1 was flaky.
"""
