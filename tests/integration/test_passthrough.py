"""nvcc's stdout, stderr and exit status pass through nvfresh byte for byte (real nvcc)."""
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()

WARNING_SOURCE = """
__global__ void k(int* p) { int unused_variable = 3; *p = 1; }
int main() { return 0; }
"""
ERROR_SOURCE = """
__global__ void k(int* p) { *p = undeclared_name; }
"""


def directories_named(path):
    """The absolute paths an object's strings name, nvcc's tmpxft_<pid>_<n> stems blanked."""
    data = re.sub(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}", b"tmpxft_X", Path(path).read_bytes())
    return set(re.findall(rb"/(?:tmp|usr)/[\x21-\x7e]+", data))


class Passthrough(harness.unittest.TestCase):
    def setUp(self):
        self.dir = harness.make_workdir()

    def compare(self, args, env=None, expect_record=True):
        plain = harness.run([NVCC] + args, cwd=self.dir, env=env)
        wrapped = harness.run([NVFRESH, NVCC] + args, cwd=self.dir, env=env)
        self.assertEqual(wrapped.returncode, plain.returncode)
        self.assertEqual(wrapped.stdout, plain.stdout)
        self.assertEqual(wrapped.stderr, plain.stderr)
        records = list((self.dir / ".nvfresh" / "records").glob("*.rec"))
        if expect_record:
            self.assertEqual(len(records), 1, "one record for one compile")
        return plain

    def test_compile_with_warnings(self):
        harness.write(self.dir / "w.cu", WARNING_SOURCE)
        plain = self.compare(["-c", "w.cu", "-o", "w.o"])
        self.assertEqual(plain.returncode, 0)
        self.assertIn(b"unused_variable", plain.stderr, "the test needs a compile that warns")

    def test_failing_compile(self):
        harness.write(self.dir / "e.cu", ERROR_SOURCE)
        plain = self.compare(["-c", "e.cu", "-o", "e.o"], expect_record=False)
        self.assertNotEqual(plain.returncode, 0)
        self.assertIn(b"undeclared_name", plain.stderr)

    def test_clean_compile_prints_nothing(self):
        harness.write(self.dir / "ok.cu", "__global__ void k(int* p) { *p = 1; }\n")
        result = harness.run([NVFRESH, NVCC, "-c", "ok.cu", "-o", "ok.o"], cwd=self.dir)
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout, b"")
        self.assertEqual(result.stderr, b"")

    def test_non_compiles_pass_straight_through(self):
        harness.write(self.dir / "ok.cu", "__global__ void k(int* p) { *p = 1; }\n")
        for args in (["--version"], ["-E", "ok.cu"], ["-M", "ok.cu"]):
            with self.subTest(args=args):
                self.compare(args, expect_record=False)

    def test_disabled_is_a_pure_passthrough(self):
        harness.write(self.dir / "w.cu", WARNING_SOURCE)
        self.compare(["-c", "w.cu", "-o", "w.o"], env={"NVFRESH_DISABLE": "1"}, expect_record=False)

    def test_internal_failure_runs_nvcc_plainly_with_one_line(self):
        harness.write(self.dir / "w.cu", WARNING_SOURCE)
        args = ["-c", "w.cu", "-o", "w.o"]
        plain = harness.run([NVCC] + args, cwd=self.dir)
        broken = harness.run([NVFRESH, NVCC] + args, cwd=self.dir,
                             env={"NVFRESH_TRACE_LIB": "/nonexistent/libnvfresh_trace.so"})
        self.assertEqual(broken.returncode, plain.returncode)
        self.assertEqual(broken.stdout, plain.stdout)
        first, rest = broken.stderr.split(b"\n", 1)
        self.assertTrue(first.startswith(b"nvfresh: "), first)
        self.assertTrue(first.endswith(b"(ran the compiler without nvfresh)"), first)
        self.assertEqual(rest, plain.stderr)

    def test_compiler_killed_by_a_signal(self):
        fake = harness.write(self.dir / "bin" / "nvcc", "#!/bin/sh\nkill -SEGV $$\n")
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
        result = harness.run([NVFRESH, str(fake), "-c", "x.cu", "-o", "x.o"], cwd=self.dir)
        plain = harness.run([str(fake), "-c", "x.cu", "-o", "x.o"], cwd=self.dir)
        self.assertEqual(plain.returncode, -signal.SIGSEGV)
        self.assertEqual(result.returncode, plain.returncode)

    def test_sigterm_is_forwarded_to_the_compiler(self):
        marker = self.dir / "got-term"
        fake = harness.write(self.dir / "bin" / "nvcc",
                             f"#!/bin/sh\ntrap 'echo term > {marker}; exit 143' TERM\n"
                             "echo started\nwhile true; do sleep 0.05; done\n")
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
        proc = subprocess.Popen([NVFRESH, str(fake), "-c", "x.cu", "-o", "x.o"], cwd=self.dir,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(proc.stdout.readline(), b"started\n")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143)
        self.assertTrue(marker.exists(), "the compiler did not receive SIGTERM")

    def test_debug_objects_are_what_plain_nvcc_writes(self):
        """Issue 9 bug 1: nvfresh once ran nvcc with a private TMPDIR, which gcc wrote into the host
        DWARF of every -g object: objects differed from plain nvcc's and from each other."""
        harness.write(self.dir / "d.cu", "__global__ void k(int* p) { *p = 1; }\nint main() { return 0; }\n")
        for flags in (["-g"], ["-g", "-G"], ["-lineinfo"]):
            with self.subTest(flags=flags):
                args = ["-arch=sm_80", *flags, "-c", "d.cu"]
                harness.run([NVCC, *args, "-o", "plain.o"], cwd=self.dir, check=True)
                harness.run([NVFRESH, NVCC, *args, "-o", "fresh1.o"], cwd=self.dir, check=True)
                harness.run([NVFRESH, NVCC, *args, "-o", "fresh2.o"], cwd=self.dir, check=True)
                for a, b in (("plain.o", "fresh1.o"), ("fresh1.o", "fresh2.o")):
                    result = harness.run([NVFRESH, "compare", a, b], cwd=self.dir)
                    self.assertEqual(result.returncode, 0, result.stdout.decode())
                self.assertNotIn(b"nvfresh.", (self.dir / "fresh1.o").read_bytes(), "a private dir in the object")
                # the same directories in the debug info (the assembler orders its string sections
                # by a hash of the strings, so the bytes move with the tmpxft stem: compare judges)
                self.assertEqual(directories_named(self.dir / "fresh1.o"), directories_named(self.dir / "plain.o"))

    def test_masquerading_nvcc_on_path_does_not_call_itself(self):
        masquerade = self.dir / "masq"
        masquerade.mkdir()
        (masquerade / "nvcc").symlink_to(NVFRESH)
        harness.write(self.dir / "ok.cu", "__global__ void k(int* p) { *p = 1; }\n")
        path = f"{masquerade}:{os.path.dirname(NVCC)}:{os.environ['PATH']}"
        result = harness.run([str(masquerade / "nvcc"), "-c", "ok.cu", "-o", "ok.o"], cwd=self.dir,
                             env={"PATH": path})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue((self.dir / "ok.o").exists())


if __name__ == "__main__":
    harness.main()
