"""Issue 9, bugs 3 and 4: device-linked static libraries (CUDA_RESOLVE_DEVICE_SYMBOLS), real nvcc,
CMake with the module, Ninja and Makefiles; the projects of CMake's own CudaOnly/ResolveDeviceSymbols.

Bug 3: with Makefiles CMake archives such a library in two steps, `ar qc lib.a <objects>` then
`ar q lib.a cmake_device_link.o`: the append replaced the library's link record, and `check` said
"relink pending" after every clean build, forever. The device link's own record listed nvcc's
--options-file files instead of the objects they name.

Bug 4: CMake gives the device-link edge its libraries only as order-only inputs, so when a
library's device code changes the device link never re-runs (a CMake bug, also without nvfresh).
nvfresh's link record says which library the device link read: `check` must call the stale
device-link object and what contains it stale, and one build must then relink it. Each object is
compared with a clean build of the same sources (nvfresh compare).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import project  # noqa: E402

harness.require_nvcc()

SINGLE = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.18)
project(p CUDA)
add_library(devlib STATIC a.cu)
set_target_properties(devlib PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON)
""",
    "a.cu": "__global__ void k(int *p) { *p = 1; }\nvoid launch(int *p) { k<<<1, 1>>>(p); }\n",
}

RESOLVED = {
    "CMakeLists.txt": """cmake_minimum_required(VERSION 3.18)
project(p CUDA)
add_library(dep STATIC dep.cu)
add_library(resolved STATIC launch.cu)
set_target_properties(dep resolved PROPERTIES CUDA_SEPARABLE_COMPILATION ON POSITION_INDEPENDENT_CODE ON)
set_target_properties(resolved PROPERTIES CUDA_RESOLVE_DEVICE_SYMBOLS ON)
target_link_libraries(resolved PRIVATE dep)
""",
    "dep.cu": "__device__ int value() { return 1001; }\n",
    "launch.cu": "extern __device__ int value();\n__global__ void k(int *p) { *p = value(); }\n"
                 "void launch(int *p) { k<<<1, 1>>>(p); }\n",
}

DEVICE_LINK = "CMakeFiles/resolved.dir/cmake_device_link.o"


def write_sources(root, files):
    for name, text in files.items():
        harness.write(root / name, text)


class DeviceLinkProof:
    """Run per build tool (Ninja111, Make)."""

    def setUp(self):
        self.work = harness.make_workdir("nvfresh-dlink-")
        reason = project.require_tool(self.TOOL)
        if reason:
            self.skipTest(reason)

    def tearDown(self):
        if not os.environ.get("NVFRESH_KEEP_TEST_DIRS"):
            shutil.rmtree(self.work.parent, ignore_errors=True)

    def tree(self, name, files):
        src = self.work / f"{name}-src"
        write_sources(src, files)
        tree = project.BuildTree(src, self.work / f"{name}-build", self.TOOL)
        tree.configure()
        return src, tree

    def check(self, tree):
        result = tree.check()
        return result.returncode, result.stdout.decode() + result.stderr.decode()

    def link_reads(self, tree, artifact):
        """The paths the link record of `artifact` (relative to the build dir) says the link read."""
        links = tree.build_dir / ".nvfresh" / "links"
        for path in links.iterdir():
            lines = harness.read_record_text(path).splitlines()
            if any(line.startswith("artifact\t") and line.endswith("/" + artifact) for line in lines):
                return [line.split("\t")[-1] for line in lines if line.startswith("read\t")]
        self.fail(f"no link record for {artifact} among {sorted(p.name for p in links.iterdir())}")

    def test_a_library_archived_in_two_steps_is_fresh_after_its_build(self):
        _, tree = self.tree("single", SINGLE)
        tree.build()
        status, text = self.check(tree)
        self.assertEqual(status, 0, text)
        self.assertIn("fresh", text)
        tree.build()
        status, text = self.check(tree)
        self.assertEqual(status, 0, f"after a no-op rebuild:\n{text}")
        reads = [os.path.basename(p) for p in self.link_reads(tree, "libdevlib.a")]
        self.assertIn("a.cu.o", reads)
        self.assertIn("cmake_device_link.o", reads)  # the append kept what qc archived
        device_reads = [os.path.basename(p) for p in self.link_reads(tree, "CMakeFiles/devlib.dir/cmake_device_link.o")]
        self.assertIn("a.cu.o", device_reads)  # the objects an --options-file names, not the file
        self.assertFalse(any(name.startswith("deviceObjects") for name in device_reads), device_reads)

    def test_a_device_link_that_cmake_never_relinks_is_relinked_in_the_same_build(self):
        src, tree = self.tree("resolved", RESOLVED)
        tree.build()
        status, text = self.check(tree)
        self.assertEqual(status, 0, text)
        harness.write(src / "dep.cu", RESOLVED["dep.cu"].replace("1001", "2002"))
        # Plain CMake recompiles dep.cu.o and re-archives libdep.a, but never re-runs the device
        # link. nvfresh's sync sees that the device link read libdep.a, which this build rebuilds:
        # the device link's own object is "recompiled" (a skip), and the link runs after libdep.a.
        tree.build()
        status, text = self.check(tree)
        self.assertEqual(status, 0, f"one build relinks it:\n{text}")
        self.assert_like_a_clean_build(src, tree, [DEVICE_LINK, "CMakeFiles/dep.dir/dep.cu.o"])

    def test_check_calls_a_device_link_stale_when_a_library_it_read_changed(self):
        """Proof does not rest on the build graph: only dep is built, so nothing relinks."""
        src, tree = self.tree("partial", RESOLVED)
        tree.build()
        harness.write(src / "dep.cu", RESOLVED["dep.cu"].replace("1001", "3003"))
        tree.build(target="dep")
        status, text = self.check(tree)
        self.assertEqual(status, 1, f"the device-link object read the old libdep.a:\n{text}")
        self.assertIn("cmake_device_link.o", text)
        self.assertIn("libdep.a changed since the link read it", text)
        self.assertRegex(text, r"relink \S*/libresolved.a \(target resolved\)\n.*cmake_device_link.o, which is not fresh")
        tree.build()
        status, text = self.check(tree)
        self.assertEqual(status, 0, f"the next build relinks it:\n{text}")
        self.assert_like_a_clean_build(src, tree, [DEVICE_LINK])

    def assert_like_a_clean_build(self, src, tree, objects):
        clean = project.BuildTree(src, self.work / "clean-build", self.TOOL)
        clean.configure()
        clean.build()
        for relative in objects:
            result = harness.run([harness.nvfresh_bin(), "compare", str(clean.build_dir / relative),
                                  str(tree.build_dir / relative)])
            self.assertEqual(result.returncode, 0,
                             f"{relative} differs from a clean build:\n{result.stdout.decode()}")


project.add_test_case_per_tool(DeviceLinkProof, globals())
del NinjaPyPI, Ninja111Ccache, Ninja111Sccache  # noqa: F821 -- the same edges as with ninja 1.11

if __name__ == "__main__":
    harness.main()
