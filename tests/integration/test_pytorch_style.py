"""PYTORCH_NVCC="nvfresh nvcc": the exact ninja rule torch.utils.cpp_extension writes, real nvcc.

torch itself is a multi-GB CUDA wheel, so this test writes the build.ninja that cpp_extension
generates for examples/pytorch_extension (same variables, same cuda_compile rule with the long
dependency options, deps = gcc) and checks nvfresh keeps it correct: the build works, a header
change with an old mtime is rebuilt after `nvfresh sync`, a touch is skipped, `check` is clean.
"""
import os
import shutil

import harness

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
EXAMPLE = harness.source_dir() / "examples" / "pytorch_extension"

BUILD_NINJA = """ninja_required_version = 1.3
nvcc = {pytorch_nvcc}
cuda_cflags = -I{src}/include -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ \
-D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr \
--compiler-options ''"'"'-fPIC'"'"'' -O2 -std=c++17 -gencode=arch=compute_80,code=sm_80
cuda_post_cflags = -DTORCH_API_INCLUDE_EXTENSION_H -DTORCH_EXTENSION_NAME=scale_ext

rule cuda_compile
  depfile = $out.d
  deps = gcc
  command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d $cuda_cflags -c $in -o $out $cuda_post_cflags

build {build}/scale_kernel.o: cuda_compile {src}/scale_kernel.cu
"""


class PytorchStyle(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-torch-")
        self.src = self.work / "src"
        shutil.copytree(EXAMPLE, self.src)
        self.build = self.work / "build"
        self.build.mkdir()
        nvcc_command = f"{NVFRESH} {NVCC}"
        (self.build / "build.ninja").write_text(BUILD_NINJA.format(
            pytorch_nvcc=nvcc_command, src=self.src, build=self.build))
        self.obj = self.build / "scale_kernel.o"

    def ninja(self):
        return harness.run(["ninja", "-C", str(self.build)], check=True).stdout.decode()

    def test_build_rebuild_and_skip(self):
        self.ninja()
        deps = harness.run(["ninja", "-C", str(self.build), "-t", "deps"], check=True).stdout.decode()
        self.assertIn("scale_config.h", deps, "the depfile nvfresh wrote reached ninja's deps log")
        self.assertIn("cicc", deps, "toolchain binaries are dependencies too")
        self.assertEqual(harness.run([NVFRESH, "check", "-C", str(self.build)]).returncode, 0)

        header = self.src / "include" / "scale_config.h"
        before = header.stat()
        original = self.obj.read_bytes()
        header.write_text(header.read_text().replace("2.0f", "3.0f"))
        os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.assertIn("no work to do", self.ninja(), "ninja alone cannot see an old-mtime edit")
        check = harness.run([NVFRESH, "check", "-C", str(self.build)])
        self.assertEqual(check.returncode, 1)
        self.assertIn("scale_config.h changed", check.stdout.decode())

        harness.run([NVFRESH, "sync", "-C", str(self.build)], check=True)
        self.assertIn("scale_kernel.o", self.ninja())
        self.assertNotEqual(self.obj.read_bytes(), original)
        self.assertEqual(harness.run([NVFRESH, "check", "-C", str(self.build)]).returncode, 0)

        rebuilt = self.obj.read_bytes()
        newer = self.obj.stat().st_mtime_ns + 1_000_000_000
        os.utime(header, ns=(newer, newer))
        self.assertIn("scale_kernel.o", self.ninja(), "ninja re-runs the compile after a touch")
        self.assertEqual(self.obj.read_bytes(), rebuilt)
        stats = harness.run([NVFRESH, "stats", "-C", str(self.build), "--json"], check=True)
        self.assertIn('"skipped"', stats.stdout.decode())


if __name__ == "__main__":
    harness.main()
