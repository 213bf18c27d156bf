"""The step cache with the extra nvcc versions (11.8, 12.4, 13.5) through CMake and Ninja.

Per extra nvcc (scripts/install_nvcc_versions.sh finds or installs them; a failure under CI=true,
else a loud skip, as in test_other_nvcc_versions.py): a tiny one-arch (sm_80) project, a host-only
edit that keeps the line count, and every device step (cicc, ptxas) of the second build is served;
then a host-only edit that moves the kernel's lines, served again (cicc's outputs get the new line
numbers), and once more with each hit run again and compared byte for byte (verify-on-hit: every
output of cicc is what that nvcc's cicc writes). The object equals a compile of the same tree
without the step cache (bytes, nvcc's tmpxft stem aside, `nvfresh compare`, and the record's
inputs). The helpers are test_step_cache.py's.
"""
import unittest
from pathlib import Path

import harness
import project
from test_other_nvcc_versions import extra_nvccs
from test_step_cache import StepCacheTree


class StepCacheOtherNvcc(StepCacheTree, unittest.TestCase):
    TOOL = project.NINJA  # CMake + Ninja, as StepCache (and the file's ctest label says cmake)
    tag = None
    nvcc = None

    @classmethod
    def setUpClass(cls):
        cls.CMAKE_ARGS = (f"-DCMAKE_CUDA_COMPILER={cls.nvcc}",)
        cls.make_work_dir(f"nvfresh-step-cache-{cls.tag}-")
        cls.counter = 0

    def test_host_only_edit_serves_every_device_step(self):
        self.make_tree(architectures="80")
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "runs",
                                                 ("sm_80", "ptxas"): "runs"})
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served"},
                         f"nvcc {self.tag}")
        self.assertIn(b"host-2", self.tree.object("k.cu.o").read_bytes())
        toolkit = Path(self.nvcc).resolve().parent.parent
        tools = {Path(name).name: Path(name).resolve() for name in self.record_inputs()}
        for tool in ("cicc", "ptxas"):
            self.assertTrue(tools[tool].is_relative_to(toolkit),
                            f"the served {tool} is {tools[tool]}, not {self.tag}'s (under {toolkit})")
        self.assert_like_plain_compile()
        self.move_kernel_down(5)
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served"},
                         f"nvcc {self.tag}, lines moved")
        self.assert_like_plain_compile()
        self.move_kernel_down(14)
        before = len(self.step_events())
        self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"})
        self.assertEqual({(pass_name, tool): cause for _, cause, pass_name, tool, _
                          in self.step_events()[before:]},
                         {("compute_80", "cicc"): "cache_verified",
                          ("sm_80", "ptxas"): "cache_verified"}, f"nvcc {self.tag}")


def load_tests(loader, tests, pattern):
    harness.require_nvcc()
    suite = unittest.TestSuite()
    for tag, nvcc in extra_nvccs():
        name = f"StepCacheOtherNvcc_{tag.replace('-', '_').replace('.', '_')}"
        case = type(name, (StepCacheOtherNvcc,), {"tag": tag, "nvcc": nvcc})
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    harness.main()
