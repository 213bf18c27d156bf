"""The suite's shortcut past CMake's CUDA compiler detection (cmake_detection.py) changes nothing a
test builds: a tree seeded with a kept detection skips the nvcc identification and ABI probes, and
gets the same compile commands, with Ninja and with Make, as a tree that detected nvcc itself.
Launchers set at configure time and changed compiler wrappers never reuse a detection.
"""
import os
import re
import shutil

import cmake_detection
import harness
import project
from project import Target, marked_source

harness.require_nvcc()

PROBE_LINES = ("The CUDA compiler identification is", "Detecting CUDA compiler ABI info")
# Objects, a static library with a device link, an executable: every kind of command CMake writes.
CMAKE_LISTS = project.cmake_lists([
    Target("plain", "plain.cu"),
    Target("options", "options.cu", architectures="80;86", options=["-lineinfo", "--use_fast_math"])]) + """\
add_library(devlib STATIC dev.cu)
set_target_properties(devlib PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON)
add_executable(app main.cu)
target_link_libraries(app PRIVATE devlib)
"""
FILES = {"plain.cu": marked_source([], [("plain", '"p"', "host,dev")]),
         "options.cu": marked_source([], [("options", '"o"', "host,dev")]),
         "dev.cu": "__global__ void k(int *p) { *p = 1; }\nvoid launch(int *p) { k<<<1, 1>>>(p); }\n",
         "main.cu": "void launch(int *p);\nint main() { launch(nullptr); }\n"}


def without_tree_paths(text, tree):
    """text with the tree's own path (as given, and resolved) written as <build>."""
    for spelling in (str(tree.build_dir), os.path.realpath(tree.build_dir)):
        text = text.replace(spelling, "<build>")
    return text


def commands(tree):
    """Every command the tree's build would run, its own path written as <build>: `ninja -t
    commands`, or the Makefiles' per-target rules, flags and link scripts."""
    if tree.tool.generator == "Ninja":
        build = str(tree.build_dir)
        text = harness.run([tree.tool.make_program, "-C", build, "-t", "commands"], check=True).stdout.decode()
        return without_tree_paths(text, tree)
    found = []
    for name in ("build.make", "flags.make", "link.txt", "dlink.txt"):
        for path in sorted(tree.build_dir.glob(f"CMakeFiles/*.dir/{name}")):
            found.append(f"{path.relative_to(tree.build_dir)}:\n{without_tree_paths(path.read_text(), tree)}")
    return "\n".join(found)


def cache_entries(tree):
    """The tree's CMakeCache.txt entries, comments left out, its own path written as <build>."""
    text = without_tree_paths((tree.build_dir / "CMakeCache.txt").read_text(), tree)
    return sorted(line for line in text.splitlines() if line and not line.startswith(("#", "//")))


class SeededLikeDetected(project.WorkDirPerClass):
    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-cmake-detection-")
        cls.source = project.write_project(cls.work / "src", [], FILES)
        harness.write(cls.source / "CMakeLists.txt", CMAKE_LISTS)
        os.environ["NVFRESH_TEST_CMAKE_DETECTION_DIR"] = str(cls.work / "kept")
        cls.detected = project.BuildTree(cls.source, cls.work / "detected", cls.TOOL)
        cls.detected_output = cls.detected.configure().stdout.decode()
        cls.seeded = project.BuildTree(cls.source, cls.work / "seeded", cls.TOOL)
        cls.seeded_output = cls.seeded.configure().stdout.decode()

    @classmethod
    def tearDownClass(cls):
        os.environ.pop("NVFRESH_TEST_CMAKE_DETECTION_DIR", None)
        super().tearDownClass()

    def test_the_first_tree_detects_and_the_second_skips_the_probes(self):
        for line in PROBE_LINES:
            self.assertIn(line, self.detected_output)
            self.assertNotIn(line, self.seeded_output)
        self.assertEqual(len(list((self.work / "kept").iterdir())), 1)

    def test_the_build_commands_are_the_same(self):
        detected = commands(self.detected)
        for expected in (r"nvcc.*-lineinfo", r"ranlib.*libdevlib\.a", r"-dlink", r"-o app"):
            self.assertRegex(detected, re.compile(expected, re.S))
        self.assertEqual(commands(self.seeded), detected)

    def test_the_cache_is_the_same(self):
        self.assertEqual(cache_entries(self.seeded), cache_entries(self.detected))


class Ninja(SeededLikeDetected, harness.unittest.TestCase):
    TOOL = project.NINJA


class Make(SeededLikeDetected, harness.unittest.TestCase):
    TOOL = project.MAKE


class NeverReused(harness.unittest.TestCase):
    def test_a_launcher_at_configure_time_detects_in_full(self):
        self.assertFalse(cmake_detection.reuse_allowed(["-DCMAKE_CUDA_COMPILER_LAUNCHER=/usr/bin/ccache"]))
        self.assertTrue(cmake_detection.reuse_allowed(["-DCMAKE_CUDA_ARCHITECTURES=80"]))

    def test_a_rewritten_host_compiler_wrapper_is_another_detection(self):
        work = harness.make_workdir("nvfresh-cmake-detection-key-")
        self.addCleanup(shutil.rmtree, work.parent, ignore_errors=True)
        source = project.write_project(work / "src", [Target("plain", "plain.cu")], FILES)
        wrapper = project.write_script(work / "g++-wrapper", "#!/bin/sh\nexec g++ \"$@\"\n")
        args = [f"-DCMAKE_CUDA_HOST_COMPILER={wrapper}"]
        before = cmake_detection.detection_key(source, args, {})
        project.write_script(wrapper, "#!/bin/sh\nexec g++ -O1 \"$@\"\n")
        self.assertNotEqual(cmake_detection.detection_key(source, args, {}), before)
        self.assertNotEqual(cmake_detection.detection_key(source, args, {"CUDAFLAGS": "-G"}),
                            cmake_detection.detection_key(source, args, {}))


if __name__ == "__main__":
    harness.main()
