"""Compiler caches inside the compile, and compiles whose inputs nothing can name, on real nvcc.

- ccache on PATH as gcc (Debian's /usr/lib/ccache) and as nvcc itself (a symlink, as PyTorch's
  build docs suggest), through CMake and Ninja: the cache's own files are not inputs, so the build
  is fresh, stays fresh when the cache's statistics change, and a header edit under an old mtime
  still rebuilds exactly its object.
- ccache chained behind nvfresh: whenever nvfresh compiles, ccache recompiles (it would answer a
  host-only header edit with the old object), so nvfresh records a compile it saw.
- A compile the tracer did not see is never called fresh.
- A host source (.cpp) compiled by nvcc: traced like a .cu (cc1plus is its compiler proper).
"""
import os
import shutil

import harness

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
SOURCE_DIR = harness.source_dir()
EXAMPLE = SOURCE_DIR / "examples" / "cmake_project"
CCACHE = shutil.which("ccache")


class CompilerCaches(harness.unittest.TestCase):
    def setUp(self):
        self.assertIsNotNone(CCACHE, "ccache is installed by scripts/install_deps.sh")
        self.work = harness.make_workdir("nvfresh-caches-")
        self.env = {"CCACHE_DIR": str(self.work / "ccache")}

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
        self.assertEqual(len(harness.compiled_objects(first)), 2, first)
        explain = harness.run([NVFRESH, "explain", "--all", "-C", str(build),
                               str(build / "CMakeFiles/kernels.dir/src/attention.cu.o")], env=env, check=True)
        self.assertIn("inputs from every pass (traced)", explain.stdout.decode())
        self.assertNotIn(str(self.work / "ccache") + "/", explain.stdout.decode(), "ccache's own files are no inputs")
        self.assertNotIn("(CHANGED)", explain.stdout.decode(), "the version is asked of nvcc by the name it was run as")
        fresh = harness.nvfresh_check(build, env=env)
        self.assertEqual(fresh.returncode, 0, fresh.stdout.decode())
        harness.run([CCACHE, "--zero-stats"], env=env, check=True)
        still = harness.nvfresh_check(build, env=env)
        self.assertEqual(still.returncode, 0, still.stdout.decode())

        header = src / "include" / "kernel_config.h"
        old = header.stat()
        header.write_text(header.read_text().replace("kTileSize = 64", "kTileSize = 96"))
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        stale = harness.nvfresh_check(build, env=env)
        self.assertEqual(stale.returncode, 1, stale.stdout.decode())
        self.assertIn("kernel_config.h changed", stale.stdout.decode())
        second = harness.run(["cmake", "--build", str(build)], env=env, check=True).stdout.decode()
        self.assertEqual(harness.compiled_objects(second), ["CMakeFiles/kernels.dir/src/attention.cu.o"], second)
        after = harness.nvfresh_check(build, env=env)
        self.assertEqual(after.returncode, 0, after.stdout.decode())

    def test_a_chained_ccache_recompiles_whenever_nvfresh_compiles(self):
        """ccache keys nvcc on `nvcc -E` (one pass): for a host-only header edit it would answer with
        the old object. nvfresh sees the edit and compiles; ccache must not answer from its cache."""
        harness.write(self.work / "inc" / "host_only.h", '#define HOST_TEXT "NVMARK_H1"\n')
        harness.write(self.work / "k.cu", '#ifndef __CUDA_ARCH__\n#include "host_only.h"\n'
                      'const char* host_text() { return HOST_TEXT; }\n#endif\n'
                      '__global__ void k(int* p) { *p = 1; }\n')
        compile_cmd = [NVFRESH, CCACHE, NVCC, "-arch=sm_80", "-Iinc", "-c", "k.cu", "-o", "k.o"]
        harness.run(compile_cmd, cwd=self.work, env=self.env, check=True)
        self.assertEqual(harness.nvfresh_check(self.work, env=self.env).returncode, 0)
        header = self.work / "inc" / "host_only.h"
        old = header.stat()
        header.write_text('#define HOST_TEXT "NVMARK_H2"\n')
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        harness.run(compile_cmd, cwd=self.work, env=self.env, check=True)
        self.assertIn(b"NVMARK_H2", (self.work / "k.o").read_bytes())
        (self.work / "k.o").unlink()
        harness.run(compile_cmd, cwd=self.work, env=self.env, check=True)
        stats = harness.run([CCACHE, "--print-stats"], env=self.env, check=True).stdout.decode()
        hits = [line for line in stats.splitlines() if len(line.split()) == 2 and
                line.split()[0] in ("direct_cache_hit", "preprocessed_cache_hit")]
        self.assertTrue(hits and all(int(line.split()[1]) == 0 for line in hits), stats)
        fresh = harness.nvfresh_check(self.work, env=self.env)
        self.assertEqual(fresh.returncode, 0, fresh.stdout.decode())

    def test_an_untraced_compile_is_never_called_fresh(self):
        """A compile the tracer did not see (here: the configured tracer is some other library)
        has a record from nvcc's depfile only: nothing proves its content, so it is not fresh."""
        harness.write(self.work / "inc" / "tile.h", "#define TILE 64\n")
        harness.write(self.work / "k.cu", '#include "tile.h"\n__global__ void k(int* p) { *p = TILE; }\n')
        other_library = harness.run(["sh", "-c", "ls /usr/lib/x86_64-linux-gnu/libz.so.1"], check=True)
        env = dict(self.env, NVFRESH_TRACE_LIB=other_library.stdout.decode().strip())
        harness.run([NVFRESH, NVCC, "-arch=sm_80", "-Iinc", "-MD", "-c", "k.cu", "-o", "k.o"],
                    cwd=self.work, env=env, check=True)
        unverified = harness.nvfresh_check(self.work, env=env)
        self.assertEqual(unverified.returncode, 1, unverified.stdout.decode())
        self.assertIn("not verified", unverified.stdout.decode())
        explain = harness.run([NVFRESH, "explain", "-C", str(self.work), "k.o"], cwd=self.work, env=env,
                              check=True).stdout.decode()
        self.assertIn("STALE", explain)
        self.assertIn("nvcc's depfile only", explain)

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
        stale = harness.nvfresh_check(self.work)
        self.assertEqual(stale.returncode, 1, stale.stdout.decode())
        self.assertIn("answer.h changed", stale.stdout.decode())


if __name__ == "__main__":
    harness.main()
