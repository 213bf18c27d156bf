"""Issue 3, "must rebuild": inputs no depfile lists, with real nvcc, CMake, Ninja and make.

- NVCC_APPEND_FLAGS / NVCC_PREPEND_FLAGS changed in the build's environment: every CUDA object
  is rebuilt (they are part of every nvcc command line, which CMake does not see);
- the host compiler replaced in place: CMAKE_CUDA_HOST_COMPILER is a shell script that execs
  /usr/bin/g++ with a define; its content changes and its mtime is put back (touch -r), and every
  object must be rebuilt (nvfresh's trace sees /bin/sh open the script);
- nvcc replaced in place, the same way: CMAKE_CUDA_COMPILER is a script that execs the real nvcc.
"""
import os

import harness
import project

harness.require_nvcc()

DEEP, PLAIN = "deep.cu.o", "plain.cu.o"
TARGETS = [project.Target("deep", "deep.cu"), project.Target("plain", "plain.cu")]
FILES = {
    "deep.cu": project.marked_source(['#include "leaf.h"'], [("deep", "LEAF_VALUE", "host,dev")]),
    "include/leaf.h": '#define LEAF_VALUE "leaf1"\n',
    "plain.cu": project.marked_source([], [("plain", '"plain"', "host")]),
}


def host_wrapper(tag):
    return f"#!/bin/sh\n# the host compiler, {tag}\nexec /usr/bin/g++ -DHOSTCC_TAG='\"{tag}\"' \"$@\"\n"


def nvcc_wrapper(tag):
    nvcc = os.path.realpath(harness.find_nvcc())
    return f"#!/bin/sh\n# nvcc, {tag}\nexec {nvcc} -DNVCC_TAG='\"{tag}\"' \"$@\"\n"


class Scenarios(project.TreeAssertions):

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-toolchain-")
        cls.src = project.write_project(cls.work / "src", TARGETS, FILES)
        cls.host_cxx = project.write_script(cls.work / "hostcc" / "g++", host_wrapper("cc1"))
        cls.nvcc = project.write_script(cls.work / "cuda" / "nvcc", nvcc_wrapper("nv1"))
        cls.tree = project.BuildTree(cls.src, cls.work / "build", cls.TOOL,
                                     cache_args=[f"-DCMAKE_CUDA_HOST_COMPILER={cls.host_cxx}",
                                                 f"-DCMAKE_CUDA_COMPILER={cls.nvcc}"])
        cls.tree.configure()
        first = cls.tree.build()
        assert first.compiled == {DEEP, PLAIN}, first.output

    def setUp(self):
        self.settle()

    def test_01_nvcc_append_and_prepend_flags_changed(self):
        for env, extra in (({"NVCC_APPEND_FLAGS": "-DEXTRA=2"}, "2"),
                           ({"NVCC_PREPEND_FLAGS": "-DEXTRA=3"}, "3"),
                           ({}, "none")):
            with self.subTest(env=env):
                self.build_exactly({DEEP, PLAIN}, env=env, what=f"(environment {env})")
                self.assert_markers(DEEP, {"extra": extra, "deep": "leaf1"})
                self.assert_markers(PLAIN, {"extra": extra})
                self.assert_check_clean(env=env)
        self.assert_like_clean_build(DEEP)
        self.build_exactly(set(), what="(the environment is back as it was)")

    def test_02_host_compiler_replaced_in_place(self):
        self.assert_markers(DEEP, {"hostcc": "cc1"})
        project.replace_keeping_mtime(self.host_cxx, host_wrapper("cc2"))
        self.build_exactly({DEEP, PLAIN}, what="(the host compiler script changed, same mtime)")
        self.assert_markers(DEEP, {"hostcc": "cc2", "deep": "leaf1"})
        self.assert_markers(PLAIN, {"hostcc": "cc2"})
        self.assert_like_clean_build(DEEP)
        self.assert_check_clean()


    def test_03_nvcc_replaced_in_place(self):
        self.assert_markers(DEEP, {"nvcc": "nv1"})
        project.replace_keeping_mtime(self.nvcc, nvcc_wrapper("nv2"))
        self.build_exactly({DEEP, PLAIN}, what="(the nvcc script changed, same mtime)")
        self.assert_markers(DEEP, {"nvcc": "nv2", "deep": "leaf1"})
        self.assert_markers(PLAIN, {"nvcc": "nv2"})
        self.assert_like_clean_build(DEEP)
        self.assert_check_clean()


project.add_test_case_per_tool(Scenarios, globals())


if __name__ == "__main__":
    harness.main()
