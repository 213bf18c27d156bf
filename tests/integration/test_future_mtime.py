"""A header whose mtime lies in the future (clock skew, `touch -d`, `tar x` from a machine with a fast
clock) is no edit during the compile: the record is trusted, `nvfresh check` says fresh, and sync
marks nothing stale on the next builds.

Regression: the race guard compared mtime with the compile's start, so such an object was "raced"
(not trusted, check 1, sync stale) on every build until the wall clock passed the header's mtime
(an hour here). A real edit during a compile is still caught: the kernel sets ctime on every change.

Ninja itself still runs the compile on each build while the header is newer than the object (its
own mtime rule; plain CMake + Ninja does the same): that is not asserted either way here.
"""
import os
import time
import unittest

import cmake_detection
import harness

CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.25)
project(skew LANGUAGES CUDA)
add_library(skew OBJECT a.cu)
"""


class FutureMtime(unittest.TestCase):
    def test_header_from_the_future_does_not_rebuild_forever(self):
        nvcc = harness.require_nvcc()
        nvfresh = harness.nvfresh_bin()
        work = harness.make_workdir("nvfresh-skew-")
        harness.write(work / "CMakeLists.txt", CMAKE_LISTS)
        harness.write(work / "a.cu", '#include "v.h"\n__global__ void k(int* o) { *o = V; }\n')
        header = harness.write(work / "v.h", "#define V 1\n")
        future = time.time_ns() + 3600 * 1_000_000_000
        os.utime(header, ns=(future, future))
        build = work / "build"
        cmake_detection.seeded_configure(work, build, [
            "-S", str(work), "-B", str(build), "-G", "Ninja",
            f"-DCMAKE_CUDA_COMPILER={nvcc}", "-DCMAKE_CUDA_ARCHITECTURES=80",
            f"-DCMAKE_PROJECT_INCLUDE={harness.nvfresh_cmake()}",
            f"-DNVFRESH_EXECUTABLE={nvfresh}"])
        first = harness.run(["cmake", "--build", str(build)], check=True).stdout.decode()
        self.assertIn("a.cu.o", first)
        for _ in range(2):
            check = harness.nvfresh_check(build)
            self.assertEqual(check.returncode, 0, check.stdout.decode())
            records = harness.record_files(build / ".nvfresh")
            self.assertEqual(len(records), 1)
            self.assertIn("\ntrusted\t1\t", harness.read_record_text(records[0]))
            again = harness.run(["cmake", "--build", str(build)], check=True).stdout.decode()
            self.assertNotIn("stale", again, again)


if __name__ == "__main__":
    harness.main()
