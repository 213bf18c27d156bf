"""Real world: the step cache on CUTLASS's FMHA example TU, with its own flags, through CMake and Ninja.

A host-only edit in the middle of kernel_forward.h (a block under `#ifndef __CUDA_ARCH__`) moves
every line below it: cicc's input (about 285,000 lines of code) changes only in the numbers of its
lines, so both device steps of the rebuild are served, cicc's outputs with the new numbers (the
markers of the stub the host object includes and of its .gpu file, the input lines in the names of
local variables), and the object equals a compile of the same tree without the step cache (bytes,
nvcc's tmpxft stem aside, `nvfresh compare`, the record's inputs). Then another such edit, with
every hit sampled (NVFRESH_CACHE_VERIFY=1): cicc and ptxas run again, and each of their outputs is
byte for byte what a hit would have written. sm_80 only: four compiles of the TU in all.

CUTLASS comes from scripts/install_cutlass.sh (harness.install_cutlass: a failure under CI=true,
else a loud skip).
"""
import shutil
import unittest

import harness
import project
from project import BuildTree
from test_step_cache import StepCacheTree

SOURCE = "fused_multihead_attention_fixed_seqlen.cu"
EXAMPLE = "examples/41_fused_multi_head_attention"
CMAKE_LISTS = f"""\
cmake_minimum_required(VERSION 3.25)
project(fmha LANGUAGES CUDA)
add_library(fmha OBJECT {SOURCE})
target_include_directories(fmha PRIVATE "${{CUTLASS_DIR}}/include"
  "${{CUTLASS_DIR}}/tools/util/include" "${{CMAKE_CURRENT_SOURCE_DIR}}")
target_compile_features(fmha PRIVATE cuda_std_17)
target_compile_options(fmha PRIVATE --expt-relaxed-constexpr)
"""
BOTH_SERVED = {("compute_80", "cicc"): "served", ("sm_80", "ptxas"): "served"}


class StepCacheCutlassFmha(StepCacheTree, unittest.TestCase):
    OBJECT = f"{SOURCE}.o"

    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.cutlass = harness.install_cutlass()
        cls.make_work_dir("nvfresh-step-cache-cutlass-")
        cls.counter = 0

    def make_fmha_tree(self):
        self.source = self.root / "src"
        shutil.copytree(self.cutlass / EXAMPLE, self.source)
        harness.write(self.source / "CMakeLists.txt", CMAKE_LISTS)
        self.header = self.source / "kernel_forward.h"
        self.original = self.header.read_text()
        self.tree = BuildTree(self.source, self.root / "build", project.NINJA,
                              cache_args=[f"-DCUTLASS_DIR={self.cutlass}"], env=self.env)
        self.tree.configure()

    def move_lines_in_header(self, lines):
        """A host-only block of `lines` lines at a blank line in the middle of kernel_forward.h."""
        text = self.original.split("\n")
        middle = len(text) // 2
        while text[middle].strip():
            middle += 1
        block = ["#ifndef __CUDA_ARCH__"] + [""] * (lines - 3) + [
            f"#define NVFRESH_TEST_HOST_LINES {lines}", "#endif"]
        harness.write(self.header, "\n".join(text[:middle] + block + text[middle:]))

    def test_host_edit_in_a_header_that_moves_lines_serves_cicc_and_ptxas(self):
        self.make_fmha_tree()
        self.assertEqual(set(self.steps_of_build().values()), {"runs"})
        before = len(self.step_events())
        self.move_lines_in_header(5)
        self.assertEqual(self.steps_of_build(), BOTH_SERVED)
        cicc = [detail for _, _, _, tool, detail in self.step_events()[before:] if tool == "cicc"]
        self.assertIn("its lines moved", cicc[0])
        self.assert_like_plain_compile()
        before = len(self.step_events())
        self.move_lines_in_header(14)
        self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"})
        self.assertEqual({(pass_name, tool): cause for _, cause, pass_name, tool, _
                          in self.step_events()[before:]},
                         {("compute_80", "cicc"): "cache_verified",
                          ("sm_80", "ptxas"): "cache_verified"})


if __name__ == "__main__":
    harness.main()
