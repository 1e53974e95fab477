import unittest

from gcfuzz_ci import verdict
from gcfuzz_ci.tests import fakes
from gcfuzz_ci.tests.fakes import verdict_line


class ParseLineTest(unittest.TestCase):

  def test_the_five_keys(self):
    v = verdict.parse_line(verdict_line("reach.zero-header", "reach", "cycled", 12, 3))
    self.assertEqual(v, verdict.Verdict("reach.zero-header", "reach", "cycled", 12, 3))

  def test_unknown_keys_are_ignored(self):
    v = verdict.parse_line('GCFUZZ-VERDICT {"kind": "swept.tiling", "pass": "swept", '
                           '"point": "swept", "op": -1, "cycle": 7, "tag": "INV-X", "new": [1]}')
    self.assertEqual((v.kind, v.pass_, v.op, v.cycle), ("swept.tiling", "swept", -1, 7))

  def test_prefix_after_other_text(self):
    v = verdict.parse_line("==12==" + verdict_line("asan.heap-use-after-free", "asan"))
    self.assertEqual(v.pass_, "asan")

  def test_not_verdicts(self):
    for line in ("VIOLATION reach.zero-header (pass reach, at cycled)",
                 "GCFUZZ-VERDICT not json", "GCFUZZ-VERDICT [1, 2]",
                 'GCFUZZ-VERDICT {"pass": "reach"}', 'GCFUZZ-VERDICT {"kind": 3, "pass": "x"}',
                 "gcfuzz verify: swept.tiling (pass swept, at swept)"):
      with self.subTest(line=line):
        self.assertIsNone(verdict.parse_line(line))


class ClassifyTest(unittest.TestCase):

  def test_first_verdict_wins(self):
    text = "\n".join(["==1==ERROR: AddressSanitizer: heap-use-after-free on address",
                      verdict_line("checkmark.unmarked", "checkmark"),
                      verdict_line("swept.tiling", "swept"),
                      "==1==ERROR: libFuzzer: deadly signal"])
    self.assertEqual(verdict.classify(text, failed=True).kind, "checkmark.unmarked")

  def test_human_reports_are_not_read(self):
    # The old scripts keyed crashes on these lines; a report without a verdict line is only a
    # failure of the process (or what the tools say).
    text = "VIOLATION model.dead (pass model, at cycled)\n  at op 3 `alloc s0`\n"
    self.assertEqual(verdict.classify(text, failed=True), verdict.TEST_FAILED)
    self.assertIsNone(verdict.classify(text, failed=False))

  def test_tool_markers(self):
    cases = {
        "==9== ERROR: libFuzzer: timeout after 25 seconds": ("fuzzer.timeout", "fuzzer"),
        "==9== ERROR: libFuzzer: out-of-memory (used: 2100Mb; exceeds: 2048Mb)":
            ("fuzzer.oom", "fuzzer"),
        "==9== ERROR: libFuzzer: deadly signal": ("fuzzer.deadly-signal", "fuzzer"),
        "==9==ERROR: AddressSanitizer: SEGV on unknown address": ("asan.SEGV", "asan"),
        "==9==ERROR: LeakSanitizer: detected memory leaks": ("lsan.detected-memory-leaks", "lsan"),
        "WARNING: ThreadSanitizer: data race (pid=5)": ("tsan.data-race", "tsan"),
        "==9==WARNING: MemorySanitizer: use-of-uninitialized-value":
            ("msan.use-of-uninitialized-value", "msan"),
        "gc/mark.c:30:5: runtime error: shift exponent 70": ("ubsan.undefined", "ubsan"),
    }
    for line, (kind, pass_) in cases.items():
      with self.subTest(line=line):
        v = verdict.classify("noise\n" + line + "\n", failed=True)
        self.assertEqual((v.kind, v.pass_), (kind, pass_))

  def test_hang_and_failure(self):
    self.assertEqual(verdict.classify("", failed=True, hung=True), verdict.HANG)
    self.assertEqual(verdict.classify("", failed=True), verdict.TEST_FAILED)
    self.assertIsNone(verdict.classify("all passed\n", failed=False))

  def test_breaking_tests_count_only_sanitizer_verdicts(self):
    text = verdict_line("reach.zero-header", "reach") + "\n" + verdict_line(
        "ubsan.undefined", "ubsan")
    self.assertEqual(verdict.classify(text, failed=True, sanitizers_only=True).kind,
                     "ubsan.undefined")
    self.assertIsNone(verdict.classify(verdict_line("reach.zero-header", "reach"), failed=False,
                                       sanitizers_only=True))


SANITIZER_OUTPUT = """\
==5==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x55
    #0 0x55aa in __asan_memcpy /build/llvm-toolchain-14/compiler-rt/asan_interceptors.cpp:22:3
    #1 0x55ab in gc_pool_sweep /proc/self/cwd/gc/pool.c:120:3
    #2 0x55ac in drv_collect fuzz/driver/run.c:80:5
""" + verdict_line("asan.heap-use-after-free", "asan", "", 4, -1) + "\n"


class CrashKeyTest(unittest.TestCase):

  def test_kind_and_pass(self):
    text = verdict_line("swept.stat-mismatch", "swept", "swept")
    v = verdict.classify(text, failed=True)
    self.assertEqual(verdict.crash_key(v, text), "swept.stat-mismatch@swept")

  def test_sanitizer_kinds_add_the_first_own_frame(self):
    v = verdict.classify(SANITIZER_OUTPUT, failed=True)
    self.assertEqual(verdict.crash_key(v, SANITIZER_OUTPUT),
                     "asan.heap-use-after-free@asan@gc_pool_sweep (gc/pool.c)")

  def test_a_tsan_race_is_keyed_by_its_first_own_frame(self):
    # What the schedule-tsan target prints: TSan's report (its stacks name the two accesses),
    # then the verdict line of the driver's TSan report hook.
    frame0 = "gc_heap_account_bytes /proc/self/cwd/./gc/heap.h:307:3 (schedule_tsan_fuzzer+0x1)"
    text = ("WARNING: ThreadSanitizer: data race (pid=21816)\n"
            "  Write of size 8 at 0x7b8400000f28 by thread T2:\n"
            "    #0 " + frame0 + "\n"
            "    #1 gc_pool_sweep /proc/self/cwd/gc/pool.c:159:5 (schedule_tsan_fuzzer+0x2)\n"
            "  Previous write of size 8 at 0x7b8400000f28 by thread T5:\n"
            "    #0 " + frame0 + "\n"
            "SUMMARY: ThreadSanitizer: data race /proc/self/cwd/./gc/heap.h:307:3 in "
            "gc_heap_account_bytes\n"
            + fakes.verdict_line("tsan.data-race", "tsan", point="op", op=12, cycle=3) + "\n")
    v = verdict.classify(text, failed=True)
    self.assertEqual((v.kind, v.pass_, v.point, v.op), ("tsan.data-race", "tsan", "op", 12))
    self.assertEqual(verdict.crash_key(v, text),
                     "tsan.data-race@tsan@gc_heap_account_bytes (gc/heap.h)")
    self.assertEqual(verdict.slug(verdict.crash_key(v, text)),
                     "tsan.data-race-tsan-gc_heap_account_bytes-gc-heap.h")
    # The same race without the verdict line (a binary without the hook): TSan's header.
    bare = text.split("GCFUZZ-VERDICT")[0]
    self.assertEqual(verdict.crash_key(verdict.classify(bare, failed=True), bare),
                     "tsan.data-race@tsan@gc_heap_account_bytes (gc/heap.h)")

  def test_frames_in_subfolders(self):
    text = "    #0 0x1 in drv_op /src/fuzz/driver/ops.c:9\n"
    self.assertEqual(verdict.first_own_frame(text), "drv_op (fuzz/driver/ops.c)")
    self.assertIsNone(verdict.first_own_frame("    #0 0x1 in main /usr/lib/x.c:3\n"))

  def test_the_key_does_not_depend_on_op_or_cycle(self):
    a = verdict.classify(verdict_line("model.dead", "model", "cycled", 3, 1), failed=True)
    b = verdict.classify(verdict_line("model.dead", "model", "cycled", 90, 12), failed=True)
    self.assertEqual(verdict.crash_key(a, ""), verdict.crash_key(b, ""))

  def test_slug(self):
    self.assertEqual(verdict.slug("asan.SEGV@asan@f (gc/pool.c)"), "asan.SEGV-asan-f-gc-pool.c")


if __name__ == "__main__":
  unittest.main()
