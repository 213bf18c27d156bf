"""Compiler caches inside the compile, and compiles whose inputs nothing can name, on real nvcc.

- ccache on PATH as gcc (Debian's /usr/lib/ccache) and as nvcc itself (a symlink, as PyTorch's
  build docs suggest), through CMake and Ninja: the cache's own files are not inputs, so the build
  is fresh, stays fresh when the cache's statistics change, and a header edit under an old mtime
  still rebuilds exactly its object.
- A ccache hit when the build asked nvcc for no depfile: the trace saw no compile, so `check` says
  the object's inputs are unknown instead of calling it fresh.
- A host source (.cpp) compiled by nvcc: traced like a .cu (cc1plus is its compiler proper).
"""
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
SOURCE_DIR = Path(os.environ["NVFRESH_SOURCE_DIR"])
EXAMPLE = SOURCE_DIR / "examples" / "cmake_project"
CCACHE = shutil.which("ccache")


def compiled_objects(build_output):
    return sorted(line.split("Building CUDA object ")[1].strip()
                  for line in build_output.splitlines() if "Building CUDA object" in line)


class CompilerCaches(harness.unittest.TestCase):
    def setUp(self):
        self.assertIsNotNone(CCACHE, "ccache is installed by scripts/install_deps.sh")
        self.work = harness.make_workdir("nvfresh-caches-")
        self.env = {"CCACHE_DIR": str(self.work / "ccache")}

    def check(self, build, env=None):
        return harness.run([NVFRESH, "check", "-C", str(build)], env=env)

    def test_ccache_as_gcc_on_path_and_as_nvcc_is_transparent(self):
        masquerade = self.work / "ccache-bin"
        masquerade.mkdir()
        for name in ("gcc", "g++", "cc", "c++", "nvcc"):
            (masquerade / name).symlink_to(CCACHE)
        env = dict(self.env, PATH=f"{masquerade}:{os.environ['PATH']}")
        src = self.work / "project"
        shutil.copytree(EXAMPLE, src)
        build = self.work / "build"
        harness.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", "-DCMAKE_CUDA_ARCHITECTURES=80",
                     f"-DCMAKE_CUDA_COMPILER={masquerade / 'nvcc'}",
                     f"-DCMAKE_PROJECT_INCLUDE={SOURCE_DIR}/cmake/nvfresh.cmake",
                     f"-DNVFRESH_EXECUTABLE={NVFRESH}"], env=env, check=True)
        first = harness.run(["cmake", "--build", str(build)], env=env, check=True).stdout.decode()
        self.assertEqual(len(compiled_objects(first)), 2, first)
        explain = harness.run([NVFRESH, "explain", "--all", "-C", str(build),
                               str(build / "CMakeFiles/kernels.dir/src/attention.cu.o")], env=env, check=True)
        self.assertIn("inputs from every pass (traced)", explain.stdout.decode())
        self.assertNotIn(str(self.work / "ccache") + "/", explain.stdout.decode(), "ccache's own files are no inputs")
        self.assertNotIn("(CHANGED)", explain.stdout.decode(), "the version is asked of nvcc by the name it was run as")
        fresh = self.check(build, env)
        self.assertEqual(fresh.returncode, 0, fresh.stdout.decode())
        harness.run([CCACHE, "--zero-stats"], env=env, check=True)
        still = self.check(build, env)
        self.assertEqual(still.returncode, 0, still.stdout.decode())

        header = src / "include" / "kernel_config.h"
        old = header.stat()
        header.write_text(header.read_text().replace("kTileSize = 64", "kTileSize = 96"))
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        stale = self.check(build, env)
        self.assertEqual(stale.returncode, 1, stale.stdout.decode())
        self.assertIn("kernel_config.h changed", stale.stdout.decode())
        second = harness.run(["cmake", "--build", str(build)], env=env, check=True).stdout.decode()
        self.assertEqual(compiled_objects(second), ["CMakeFiles/kernels.dir/src/attention.cu.o"], second)
        after = self.check(build, env)
        self.assertEqual(after.returncode, 0, after.stdout.decode())

    def test_a_cache_hit_without_a_depfile_is_not_called_fresh(self):
        harness.write(self.work / "inc" / "tile.h", "#define TILE 64\n")
        harness.write(self.work / "k.cu", '#include "tile.h"\n__global__ void k(int* p) { *p = TILE; }\n')
        compile_cmd = [NVFRESH, CCACHE, NVCC, "-arch=sm_80", "-Iinc", "-c", "k.cu", "-o", "k.o"]
        harness.run(compile_cmd, cwd=self.work, env=self.env, check=True)
        traced = self.check(self.work, self.env)
        self.assertEqual(traced.returncode, 0, traced.stdout.decode())
        (self.work / "k.o").unlink()
        harness.run(compile_cmd, cwd=self.work, env=self.env, check=True)  # served by ccache
        stats = harness.run([CCACHE, "--print-stats"], env=self.env, check=True).stdout.decode()
        self.assertTrue(any(line.split()[0] in ("direct_cache_hit", "preprocessed_cache_hit") and int(line.split()[1]) > 0
                            for line in stats.splitlines() if len(line.split()) == 2), stats)
        unknown = self.check(self.work, self.env)
        self.assertEqual(unknown.returncode, 1, unknown.stdout.decode())
        self.assertIn("its inputs are unknown", unknown.stdout.decode())

    def test_a_host_source_compiled_by_nvcc_is_traced(self):
        harness.write(self.work / "inc" / "answer.h", "#define ANSWER 42\n")
        harness.write(self.work / "host.cpp", '#include "answer.h"\nint answer() { return ANSWER; }\n')
        harness.run([NVFRESH, NVCC, "-Iinc", "-c", "host.cpp", "-o", "host.o"], cwd=self.work, check=True)
        explain = harness.run([NVFRESH, "explain", "--all", "-C", str(self.work), str(self.work / "host.o")],
                              check=True).stdout.decode()
        self.assertIn("inputs from every pass (traced)", explain)
        self.assertIn("answer.h", explain)
        header = self.work / "inc" / "answer.h"
        old = header.stat()
        header.write_text("#define ANSWER 43\n")
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        stale = self.check(self.work)
        self.assertEqual(stale.returncode, 1, stale.stdout.decode())
        self.assertIn("answer.h changed", stale.stdout.decode())


if __name__ == "__main__":
    harness.main()
