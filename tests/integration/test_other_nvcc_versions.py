"""nvfresh with the extra nvcc versions that scripts/install_nvcc_versions.sh provides.

A representative subset of the real-nvcc suite, once per extra nvcc (the system nvcc runs the full
suite): byte-for-byte passthrough of a compile that warns; the trace sees a header read only by the
compute_90 pass (and one read only by the host pass); a CMake + Ninja build through nvfresh where a
header's content changes under an older mtime and ONE `cmake --build` rebuilds the object.

Versions: nvcc 11.8 and 12.4 (Debian's non-free nvidia-cuda-toolkit, unpacked into .toolchains/<tag>)
and 13.5 (PyPI wheel); the system nvcc (13.0) runs the full suite. scripts/install_test_tools.sh
installs them before ctest starts; this test runs the same script (a no-op then). If it fails: a
failure under CI=true, else a loud skip. Each nvcc's own -MD list is printed next to what nvfresh
recorded (information, not asserted).
"""
import os
import struct
import sys
import unittest

import harness
from objects import fatbin_entries, read_record

WARNING_SOURCE = """
__global__ void k(int* p) { int unused_variable = 3; *p = 1; }
int main() { return 0; }
"""
PASS_SOURCE = """\
#include "common.h"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include "hopper_only.h"
#endif
#ifndef __CUDA_ARCH__
#include "host_only.h"
#endif
__global__ void kernel(int* out) { *out = COMMON; }
"""
GENCODE = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
PROJECT_CMAKE = """\
cmake_minimum_required(VERSION 3.25)
project(other LANGUAGES CUDA)
add_library(other OBJECT a.cu)
"""
PROJECT_SOURCE = '#include "value.h"\n__global__ void k(int* out) { *out = VALUE; }\n'


def extra_nvccs():
    """[(tag, path to nvcc)] from scripts/install_nvcc_versions.sh, which installs what is missing."""
    found, error = harness.install_nvcc_versions()
    if error or not found:
        harness.fail_under_ci_else_skip(f"no extra nvcc could be installed; this test did NOT run\n{error}")
    return found


class OtherNvcc(unittest.TestCase):
    tag = None
    nvcc = None

    def setUp(self):
        self.nvfresh = harness.nvfresh_bin()
        self.dir = harness.make_workdir(f"nvfresh-{self.tag}-")

    def test_passthrough_of_a_compile_with_warnings(self):
        harness.write(self.dir / "w.cu", WARNING_SOURCE)
        args = ["-c", "w.cu", "-o", "w.o"]
        plain = harness.run([self.nvcc, *args], cwd=self.dir)
        wrapped = harness.run([self.nvfresh, self.nvcc, *args], cwd=self.dir)
        self.assertEqual(plain.returncode, 0, plain.stderr.decode())
        self.assertIn(b"unused_variable", plain.stderr, "the test needs a compile that warns")
        self.assertEqual(wrapped.returncode, plain.returncode)
        self.assertEqual(wrapped.stdout, plain.stdout)
        self.assertEqual(wrapped.stderr, plain.stderr)
        self.assertEqual(len(harness.record_files(self.dir / ".nvfresh")), 1, "one record for one compile")

    def test_arch_only_and_host_only_headers_in_their_passes(self):
        for name, text in {"common.h": "#define COMMON 1\n", "hopper_only.h": "#define HOPPER 1\n",
                           "host_only.h": "#define HOST_ONLY 1\n", "p.cu": PASS_SOURCE}.items():
            harness.write(self.dir / name, text)
        # nvcc's own -MD, for the report.
        harness.run([self.nvcc, *GENCODE, "-MD", "-MF", "plain.d", "-c", "p.cu", "-o", "plain.o"],
                    cwd=self.dir, check=True)
        own = {os.path.basename(path) for path in harness.depfile_paths(self.dir / "plain.d")}
        harness.run([self.nvfresh, self.nvcc, *GENCODE, "-MD", "-MF", "p.d", "-c", "p.cu", "-o", "p.o"],
                    cwd=self.dir, check=True)
        records = harness.record_files(self.dir / ".nvfresh")
        self.assertEqual(len(records), 1)
        inputs, _, fields = read_record(records[0])
        by_name = {os.path.basename(path): (role, passes) for path, (role, _, passes) in inputs.items()}
        print(f"\n  {self.tag}: {fields.get('nvcc_version', ['?'])[0]}\n"
              f"  nvcc's own -MD lists {len(own)} files; hopper_only.h "
              f"{'listed' if 'hopper_only.h' in own else 'MISSING'}, host_only.h "
              f"{'listed' if 'host_only.h' in own else 'MISSING'}; the record has "
              f"{sum(1 for role, _ in by_name.values() if role == 'header')} headers, inputs from "
              f"{fields.get('inputs_from', ['?'])[0]}", file=sys.stderr)
        self.assertEqual(fields.get("inputs_from"), ["trace"])
        self.assertEqual(by_name.get("hopper_only.h"), ("header", ["compute_90"]))
        self.assertEqual(by_name.get("host_only.h"), ("header", ["host"]))
        self.assertEqual(set(by_name["common.h"][1]), {"host", "compute_80", "compute_90"})
        written = {os.path.basename(path) for path in harness.depfile_paths(self.dir / "p.d")}
        self.assertTrue({"p.cu", "common.h", "hopper_only.h", "host_only.h"} <= written, written)

    def test_cmake_ninja_rebuilds_a_header_changed_under_an_older_mtime(self):
        harness.write(self.dir / "CMakeLists.txt", PROJECT_CMAKE)
        harness.write(self.dir / "a.cu", PROJECT_SOURCE)
        header = harness.write(self.dir / "value.h", "#define VALUE 1234567\n")
        build = self.dir / "build"
        harness.run(["cmake", "-S", str(self.dir), "-B", str(build), "-G", "Ninja",
                     f"-DCMAKE_CUDA_COMPILER={self.nvcc}", "-DCMAKE_CUDA_ARCHITECTURES=80",
                     f"-DCMAKE_PROJECT_INCLUDE={harness.nvfresh_cmake()}",
                     f"-DNVFRESH_EXECUTABLE={self.nvfresh}"], check=True)
        first = harness.run(["cmake", "--build", str(build)], check=True).stdout.decode()
        obj = build / "CMakeFiles/other.dir/a.cu.o"
        self.assertIn("a.cu.o", first)
        self.assertIn(struct.pack("<i", 1234567), fatbin_entries(obj)[("elf", 80)])
        self.assertEqual(len(harness.record_files(build / ".nvfresh")), 1, "the compile went through nvfresh")
        # Same size, new content, the old mtime put back (cp -p, tar x, rsync -a).
        old = os.stat(header)
        header.write_text("#define VALUE 7654321\n")
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        second = harness.run(["cmake", "--build", str(build)], check=True).stdout.decode()
        self.assertIn("a.cu.o", second, "one build did not rebuild the object")
        cubin = fatbin_entries(obj)[("elf", 80)]
        self.assertIn(struct.pack("<i", 7654321), cubin)
        self.assertNotIn(struct.pack("<i", 1234567), cubin)
        check = harness.run([self.nvfresh, "check", "-C", str(build)])
        self.assertEqual(check.returncode, 0, check.stdout.decode())


def load_tests(loader, tests, pattern):
    harness.require_nvcc()
    suite = unittest.TestSuite()
    for tag, nvcc in extra_nvccs():
        name = f"OtherNvcc_{tag.replace('-', '_').replace('.', '_')}"
        case = type(name, (OtherNvcc,), {"tag": tag, "nvcc": nvcc})
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    harness.main()
