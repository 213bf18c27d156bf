"""Real world: the object cache on a CUTLASS example whose checks print __FILE__ (labelled slow).

examples/59_ampere_gather_scatter_conv/ampere_gather_scatter_conv.cu of the nvidia-cutlass wheel
defines CHECK_CUDA(code) as check_cuda_result(code, __FILE__, __LINE__), as nearly every CUDA
project's error checks do: its object names its own path in the checkout. Built through CMake +
Ninja with the flags CUTLASS's examples give it (C++17, --expt-relaxed-constexpr, the CUTLASS,
tools/util and examples/common include dirs), sm_80 only, three compiles of about a minute each:
  1. build dir A of the checkout compiles it (1) and stores it;
  2. build dir B of the same checkout is served in full (0 nvcc runs), and its object equals a
     clean compile of B without the cache (2, `nvfresh compare`);
  3. a copy of the checkout at another path: served from A's entry only with
     NVFRESH_CACHE_ACROSS_CHECKOUTS=1, and `explain`, `check --json` and `stats` say "served from
     another checkout: names <checkout>"; another build dir of the copy without the setting
     compiles (3): an object naming the other checkout is not what its compile gives;
  4. a comment appended to the example's own header (ampere_conv_kernel.h): build dir A is served.

CUTLASS comes from scripts/install_cutlass.sh (the nvidia-cutlass wheel, into .venv-cutlass), which
this test runs when CUTLASS is missing. If that fails: a failure under CI=true, else a loud skip.
"""
import json
import re
import shutil
from pathlib import Path

import harness
import project
from project import BuildTree
from test_cache import compare, events, kinds

EXAMPLE = "examples/59_ampere_gather_scatter_conv"
SOURCE = "ampere_gather_scatter_conv.cu"
OBJECT = f"{SOURCE}.o"

CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.25)
project(gather_scatter_conv LANGUAGES CUDA)
add_library(conv OBJECT src/{source})
target_include_directories(conv PRIVATE "${{CUTLASS_DIR}}/include"
  "${{CUTLASS_DIR}}/tools/util/include" "${{CUTLASS_DIR}}/examples/common"
  "${{CMAKE_CURRENT_SOURCE_DIR}}/src")
target_compile_features(conv PRIVATE cuda_std_17)
target_compile_options(conv PRIVATE --expt-relaxed-constexpr)
""".format(source=SOURCE)


class CutlassExampleNamingItsPath(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.cutlass = harness.install_cutlass()
        cls.make_work_dir("nvfresh-cutlass-cache-")
        cls.checkout = cls.work / "checkout"
        shutil.copytree(cls.cutlass / EXAMPLE, cls.checkout / "src")
        harness.write(cls.checkout / "CMakeLists.txt", CMAKE_LISTS)
        cls.env = {"NVFRESH_CACHE_DIR": str(cls.work / "cache")}

    def tree(self, source, name, env=None):
        merged = dict(self.env)
        merged.update(env or {})
        tree = BuildTree(source, self.work / name, project.NINJA,
                         cache_args=[f"-DCUTLASS_DIR={self.cutlass}"], env=merged)
        tree.configure()
        return tree

    def build(self, tree, env=None):
        before = len(events(tree.build_dir))
        tree.build(env=env)
        return kinds(tree.build_dir, before)

    def test_every_build_dir_served_and_another_checkout_only_with_the_setting(self):
        source = self.checkout
        first = self.tree(source, "build-a")
        self.assertEqual(self.build(first), {OBJECT: "compiled"})
        self.assertIn(str(source / "src" / SOURCE).encode(), first.object(OBJECT).read_bytes(),
                      "the object names its source (__FILE__): the case this test is about")

        second = self.tree(source, "build-b")
        self.assertEqual(self.build(second), {OBJECT: "served"}, "0 nvcc runs in build dir B")
        served = self.work / "served-b.o"
        shutil.copy(second.object(OBJECT), served)
        second.object(OBJECT).unlink()
        self.assertEqual(self.build(second, env={"NVFRESH_CACHE": "0"}), {OBJECT: "compiled"})
        result = compare(served, second.object(OBJECT))
        self.assertEqual(result.returncode, 0,
                         f"served differs from a clean compile of B:\n{result.stdout.decode()}")

        copy = shutil.copytree(source, self.work / "copy")
        across = self.tree(copy, "copy-across", env={"NVFRESH_CACHE_ACROSS_CHECKOUTS": "1"})
        self.assertEqual(self.build(across), {OBJECT: "served"})
        said = re.compile(f"served from another checkout: names {re.escape(str(source))}$")
        explained = across.explain(str(across.object(OBJECT))).stdout.decode()
        self.assertTrue(any(said.search(line) for line in explained.splitlines()), explained)
        checked = json.loads(across.nvfresh("check", "-C", str(across.build_dir), "--json").stdout)
        reasons = [o["last_build"]["reason"] for o in checked["objects"]
                   if Path(o["object"]).name == OBJECT]
        self.assertRegex(reasons[0], said)
        stats = json.loads(across.nvfresh("stats", "-C", str(across.build_dir), "--json").stdout)
        details = stats["kinds"]["served"]["causes"]["cache_hit"]["top_details"]
        self.assertTrue(any(said.search(d["detail"]) for d in details), details)

        plain = self.tree(copy, "copy-build")
        self.assertEqual(self.build(plain), {OBJECT: "compiled"},
                         "an object naming the other checkout is not what this tree's compile gives")
        self.assertNotIn(str(source).encode(), plain.object(OBJECT).read_bytes())

        # A comment appended to the example's own kernel header, in the checkout: build dir A
        # is served (the header differs from A's entry only in a comment nothing sees).
        header = source / "src" / "ampere_conv_kernel.h"
        harness.write(header, header.read_text() + "// a note appended to the kernel header\n")
        self.assertEqual(self.build(first), {OBJECT: "served"})
        explained = first.explain(str(first.object(OBJECT))).stdout.decode()
        self.assertIn("ampere_conv_kernel.h differs from it only in comments", explained)


if __name__ == "__main__":
    harness.main()
