"""The LD_PRELOAD tracer on real nvcc: every pass's reads, failed lookups, and nvcc's output untouched.

Uses $NVFRESH_TEST_NVCC when set (see scripts/install_nvcc_versions.sh), else the nvcc on PATH.
"""
import os
import re
import unittest
from pathlib import Path

import harness

SOURCE = """\
#include "common.h"
#include "cfg.h"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include "hopper_only.h"
#endif
#ifndef __CUDA_ARCH__
#include "host_only.h"
#endif
#if __has_include("maybe.h")
#include "maybe.h"
#endif
__global__ void kernel(int* out) { *out = COMMON + CFG + FORCED; }
"""

GENCODE = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]


def summarize(trace_file, tmp_dir):
    """trace_tool's output as (complete, {path: set(passes)}, set(missing), set(executables))."""
    out = harness.run([harness.trace_tool(), str(trace_file)], check=True).stdout.decode()
    complete, reads, missing, executables = None, {}, set(), set()
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "complete":
            complete = rest == "yes"
        elif kind == "read":
            passes, _, path = rest.partition(" ")
            reads[path] = set(passes.split(","))
        elif kind == "missing":
            missing.add(rest)
        elif kind == "exec":
            executables.add(rest)
    return complete, reads, missing, executables


def without_timings(output):
    """ptxas's resource usage report ends with a compile time that differs from run to run."""
    return re.sub(rb"Compile time = [0-9.]+ ms", b"Compile time = ? ms", output)


class TraceRealNvcc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nvcc = harness.require_nvcc()
        cls.work = harness.make_workdir("nvfresh-trace-")
        cls.real = Path(os.path.realpath(cls.work))  # the tracer sees the cwd as the kernel does
        for name, text in {"common.h": "#define COMMON 1\n", "hopper_only.h": "#define HOPPER 1\n",
                           "host_only.h": "#define HOST_ONLY 1\n", "forced.h": "#define FORCED 3\n",
                           "inc2/cfg.h": "#define CFG 2\n", "a.cu": SOURCE}.items():
            harness.write(cls.work / name, text)
        (cls.work / "inc1").mkdir()
        cls.tmp = cls.work / "tmp"
        cls.tmp.mkdir()
        cls.trace = cls.work / "trace.txt"
        cls.args = [cls.nvcc, *GENCODE, "-Iinc1", "-Iinc2", "-include", "forced.h", "-c", "a.cu",
                    "-o", "a.o"]
        (cls.work / "bin").mkdir()  # an empty PATH entry before the host compiler's
        env = harness.traced_env(cls.trace, cls.tmp)
        env["PATH"] = f"{cls.work / 'bin'}:{os.environ.get('PATH', '')}"
        cls.result = harness.run(cls.args, cwd=cls.work, env=env)
        cls.complete, cls.reads, cls.missing, cls.executables = summarize(cls.trace, cls.real / "tmp")

    def test_compile_succeeded_and_trace_is_complete(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr.decode())
        self.assertTrue(self.complete)

    def test_arch_only_header_read_by_its_pass_only(self):
        self.assertEqual(self.reads.get(str(self.real / "hopper_only.h")), {"compute_90"})

    def test_host_only_header_read_by_host_only(self):
        self.assertEqual(self.reads.get(str(self.real / "host_only.h")), {"host"})

    def test_common_and_forced_headers_read_by_every_preprocessing_pass(self):
        every = {"host", "compute_80", "compute_90"}
        for name in ("a.cu", "common.h", "forced.h"):
            self.assertEqual(self.reads.get(str(self.real / name)), every, name)

    def test_has_include_probe_is_a_missing_lookup(self):
        self.assertIn(str(self.real / "maybe.h"), self.missing)

    def test_include_found_in_later_dir_leaves_probe_in_earlier_dir(self):
        self.assertIn(str(self.real / "inc1/cfg.h"), self.missing)
        self.assertIn(str(self.real / "inc2/cfg.h"), self.reads)

    def test_host_compiler_lookup_on_path_is_a_missing_lookup(self):
        self.assertTrue({str(self.work / "bin/gcc"), str(self.real / "bin/gcc")} & self.missing)

    def test_intermediates_and_output_are_not_inputs(self):
        for path in list(self.reads) + list(self.missing):
            self.assertFalse(path.startswith(str(self.real / "tmp") + "/"), path)
        self.assertNotIn(str(self.real / "a.o"), self.reads)

    def test_every_tool_is_traced(self):
        names = {os.path.basename(path) for path in self.executables}
        for tool in ("nvcc", "cicc", "ptxas", "cudafe++", "fatbinary", "cc1plus"):
            self.assertIn(tool, names)


class PreloadLeavesNvccOutputAlone(unittest.TestCase):
    def compare(self, source, extra_args=()):
        nvcc = harness.require_nvcc()
        work = harness.make_workdir("nvfresh-trace-out-")
        harness.write(work / "t.cu", source)
        args = [nvcc, "-arch=sm_80", *extra_args, "-c", "t.cu", "-o", "t.o"]
        plain = harness.run(args, cwd=work)
        (work / "tmp").mkdir()
        traced = harness.run(args, cwd=work, env=harness.traced_env(work / "trace.txt", work / "tmp"))
        self.assertEqual(plain.returncode, traced.returncode)
        self.assertEqual(without_timings(plain.stdout), without_timings(traced.stdout))
        self.assertEqual(without_timings(plain.stderr), without_timings(traced.stderr))
        self.assertTrue((work / "trace.txt").exists())
        return plain

    def test_failing_compile(self):
        plain = self.compare("__global__ void k() { this is not cuda; }\n")
        self.assertNotEqual(plain.returncode, 0)
        self.assertIn(b"error", plain.stderr)

    def test_compile_with_warnings_and_stdout(self):
        plain = self.compare('#warning "hello from the source"\n__global__ void k() {}\n',
                             ["--resource-usage"])
        self.assertEqual(plain.returncode, 0)
        self.assertIn(b"hello from the source", plain.stderr)

    def test_no_trace_file_variable_means_no_trace(self):
        nvcc = harness.require_nvcc()
        work = harness.make_workdir("nvfresh-trace-off-")
        harness.write(work / "t.cu", "__global__ void k() {}\n")
        before = set(os.listdir(work))
        env = {"LD_PRELOAD": harness.trace_lib(), "NVFRESH_TRACE_FILE": ""}
        result = harness.run([nvcc, "-arch=sm_80", "-c", "t.cu", "-o", "t.o"], cwd=work, env=env)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(set(os.listdir(work)) - before, {"t.o"})


class NvccWrapperScript(unittest.TestCase):
    """An nvcc on PATH that is `#!/bin/sh` + `exec .../nvcc "$@"` (as /usr/local/bin/nvcc may be)."""

    def test_the_shell_is_named_by_the_script_and_takes_no_pass_from_nvccs_arch(self):
        real_nvcc = harness.nvcc_binary(harness.require_nvcc())
        work = harness.make_workdir("nvfresh-trace-wrapper-")
        wrapper = harness.write(work / "bin" / "nvcc", f'#!/bin/sh\nexec "{real_nvcc}" "$@"\n')
        wrapper.chmod(0o755)
        harness.write(work / "t.cu", "__global__ void k() {}\n")
        (work / "tmp").mkdir()
        trace = work / "trace.txt"
        result = harness.run([str(wrapper), "-arch=sm_80", "-c", "t.cu", "-o", "t.o"], cwd=work,
                             env=harness.traced_env(trace, work / "tmp"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        lines = trace.read_text().splitlines()
        invoked = [i for i, line in enumerate(lines) if line.startswith("I ") and line.endswith(f" {wrapper}")]
        self.assertEqual(len(invoked), 1, lines[:5])
        shell = lines[invoked[0] - 1].split(" ", 4)
        self.assertEqual(shell[0], "X")
        self.assertEqual(shell[1], lines[invoked[0]].split(" ")[1], "the I line follows its own X line")
        self.assertEqual(shell[3], "-", "the shell running the wrapper is no sm_80 pass")
        self.assertNotIn(str(real_nvcc), [line.split(" ", 2)[2] for line in lines if line.startswith("I ")],
                         "nvcc executed by its own path is what it is: no I line")
        _, reads, _, executables = summarize(trace, Path(os.path.realpath(work)) / "tmp")
        self.assertIn(str(real_nvcc), executables)
        self.assertEqual(reads.get(str(wrapper)), {"host"}, "the script is read as a host input")


if __name__ == "__main__":
    harness.main()
