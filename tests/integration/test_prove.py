"""check / explain / rdeps on real builds (nvcc, CMake, Ninja and Unix Makefiles).

The project is shaped like ONNX Runtime's CUDA provider: a shared library built from several .cu
files sharing an FMHA-like header tree, and a test executable that dlopens the library and does not
link it. Each generator is configured once. Every stale reason kind of `nvfresh check` is produced
for real in ReasonKinds (plain nvfresh nvcc compiles, and one CMake build for relink pending).
"""
import json
from pathlib import Path

import cmake_detection
import harness

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
SOURCE_DIR = harness.source_dir()
LIB = "onnxruntime_providers_cuda"

CMAKELISTS = f"""
cmake_minimum_required(VERSION 3.25)
project(provider LANGUAGES CXX CUDA)
add_library({LIB} SHARED src/fmha_fwd.cu src/fmha_bwd.cu src/provider.cu)
target_include_directories({LIB} PRIVATE include)
add_executable(provider_test test/provider_test.cpp)
target_link_libraries(provider_test PRIVATE ${{CMAKE_DL_LIBS}})
"""
FILES = {
    "include/fmha/kernel_forward.h": "#pragma once\n#include \"fmha/tile.h\"\nconstexpr int kTile = 64;\n",
    "include/fmha/tile.h": "#pragma once\nconstexpr int kWarps = 4;\n",
    "src/fmha_fwd.cu": "#include \"fmha/kernel_forward.h\"\n__global__ void fwd(int* p) { *p = kTile + kWarps; }\n",
    "src/fmha_bwd.cu": "#include \"fmha/kernel_forward.h\"\n__global__ void bwd(int* p) { *p = kTile; }\n",
    "src/provider.cu": "#include \"fmha/tile.h\"\nextern \"C\" int provider_warps() { return kWarps; }\n",
    "test/provider_test.cpp": (
        "#include <dlfcn.h>\n"
        f"int main() {{ void* h = dlopen(\"lib{LIB}.so\", RTLD_NOW); return h ? 0 : 1; }}\n"),
}


nvfresh = harness.nvfresh


def check_json(build, *extra, env=None):
    result = nvfresh("check", "-C", str(build), "--json", *extra, env=env)
    return result.returncode, json.loads(result.stdout)


class ProviderBuild:
    """One configured tree per generator."""

    def __init__(self, generator):
        self.root = harness.make_workdir("nvfresh-prove-")
        self.src = self.root / "src"
        for name, text in FILES.items():
            harness.write(self.src / name, text)
        harness.write(self.src / "CMakeLists.txt", CMAKELISTS)
        self.build = self.root / "build"
        cmake_detection.seeded_configure(self.src, self.build, [
            "-S", str(self.src), "-B", str(self.build), "-G", generator,
            "-DCMAKE_CUDA_ARCHITECTURES=80", f"-DCMAKE_CUDA_COMPILER={NVCC}",
            f"-DCMAKE_PROJECT_INCLUDE={SOURCE_DIR}/cmake/nvfresh.cmake",
            f"-DNVFRESH_EXECUTABLE={NVFRESH}"])

    def cmake_build(self, *args):
        return harness.run(["cmake", "--build", str(self.build), "-j2", *args], check=True)


class ProveMixin:
    GENERATOR = None

    @classmethod
    def setUpClass(cls):
        cls.tree = ProviderBuild(cls.GENERATOR)
        cls.tree.cmake_build()

    def test_the_provider_story(self):
        build = self.tree.build
        rc, report = check_json(build)
        self.assertEqual(rc, 0, report)
        library = [a for a in report["artifacts"] if a["target"] == LIB]
        self.assertEqual(len(library), 1, report["artifacts"])
        self.assertEqual(len(library[0]["objects"]), 3)
        self.assertEqual(library[0]["proof"], "link record")

        header = self.tree.src / "include/fmha/kernel_forward.h"
        header.write_text(header.read_text().replace("kTile = 64", "kTile = 128"))
        self.tree.cmake_build("--target", "provider_test")

        text = nvfresh("check", "-C", str(build), "--target", "provider_test")
        out = text.stdout.decode()
        self.assertEqual(text.returncode, 1, out)
        self.assertIn("fmha_fwd.cu.o", out)
        self.assertIn("fmha_bwd.cu.o", out)
        self.assertIn("kernel_forward.h changed", out)
        self.assertRegex(out, rf"target provider_test does not pull in \S*lib{LIB}\.so")
        self.assertIn("NOT fresh", out)
        self.assertIn("dlopen", out)
        rc, report = check_json(build, "--target", "provider_test")
        self.assertEqual(rc, 1)
        stale = sorted(Path(o["object"]).name for o in report["objects"] if not o["fresh"])
        self.assertEqual(stale, ["fmha_bwd.cu.o", "fmha_fwd.cu.o"])
        not_linked = report["target"]["does_not_link"]
        self.assertEqual([Path(a["artifact"]).name for a in not_linked], [f"lib{LIB}.so"])
        self.assertFalse(not_linked[0]["fresh"])
        self.assertTrue(not_linked[0]["named_in_binary"])

        self.tree.cmake_build()
        rc, report = check_json(build)
        self.assertEqual(rc, 0, json.dumps(report, indent=1))

        rdeps = nvfresh("rdeps", str(header), "-C", str(build), "--json")
        self.assertEqual(rdeps.returncode, 0, rdeps.stderr)
        deps = json.loads(rdeps.stdout)
        objects = sorted(Path(o["object"]).name for o in deps["objects"])
        self.assertEqual(objects, ["fmha_bwd.cu.o", "fmha_fwd.cu.o"])
        for obj in deps["objects"]:
            self.assertIn("host", obj["passes"], obj)
        self.assertEqual([Path(a).name for a in deps["artifacts"]], [f"lib{LIB}.so"])

        explain = nvfresh("explain", "fmha_fwd.cu.o", "-C", str(build))
        self.assertEqual(explain.returncode, 0, explain.stderr)
        out = explain.stdout.decode()
        self.assertIn(f"lib{LIB}.so", out)
        self.assertIn("compiled", out)

    def test_relink_pending_when_only_the_object_is_rebuilt(self):
        build = self.tree.build
        self.tree.cmake_build()
        source = self.tree.src / "src/provider.cu"
        source.write_text(source.read_text() + "int provider_extra() { return 2; }\n")
        self.compile_only("provider.cu.o")
        rc, report = check_json(build)
        self.assertEqual(rc, 1, report)
        library = [a for a in report["artifacts"] if a["target"] == LIB][0]
        kinds = {r["kind"] for r in library["reasons"]}
        self.assertEqual(kinds, {"relink_pending"}, library)
        self.assertTrue(library["reasons"][0]["path"].endswith("provider.cu.o"))
        self.tree.cmake_build()
        self.assertEqual(check_json(build)[0], 0)


class NinjaProve(ProveMixin, harness.unittest.TestCase):
    GENERATOR = "Ninja"

    def compile_only(self, name):
        harness.run(["ninja", "-C", str(self.tree.build), f"CMakeFiles/{LIB}.dir/src/{name}"], check=True)


class MakeProve(ProveMixin, harness.unittest.TestCase):
    GENERATOR = "Unix Makefiles"

    def compile_only(self, name):
        harness.run(["make", "-C", str(self.tree.build), "-f", f"CMakeFiles/{LIB}.dir/build.make",
                     f"CMakeFiles/{LIB}.dir/src/{name}"], check=True)


if __name__ == "__main__":
    harness.main()
