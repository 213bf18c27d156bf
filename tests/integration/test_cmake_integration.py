"""cmake/nvfresh.cmake in the three ways a project can use it, with Ninja and Unix Makefiles, real nvcc.

- injected: -DCMAKE_PROJECT_INCLUDE=<repo>/cmake/nvfresh.cmake into an unchanged project;
- include(): the project includes the module itself;
- find_package(nvfresh) after `cmake --install` of nvfresh.
Each time: the build goes through nvfresh, `check` is clean, and a header edit that keeps its old
mtime (which neither ninja nor make can see) makes ONE `cmake --build` rebuild exactly that object.
An existing launcher (ccache) stays, behind nvfresh; a launcher that execs nvcc in its own process
(ccache falling back, a wrapper's `exec nvcc`) does not lend nvcc the files it read itself.
"""
import os
import shutil
from pathlib import Path

import harness

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
SOURCE_DIR = harness.source_dir()
BUILD_DIR = harness.build_dir()
EXAMPLE = SOURCE_DIR / "examples" / "cmake_project"
GENERATORS = ("Ninja", "Unix Makefiles")


class CMakeIntegration(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-cmake-")

    def project(self, name, prologue=""):
        src = self.work / name
        shutil.copytree(EXAMPLE, src)
        if prologue:
            cmake_lists = src / "CMakeLists.txt"
            text = cmake_lists.read_text()
            marker = "project(nvfresh_example LANGUAGES CXX CUDA)\n"
            cmake_lists.write_text(text.replace(marker, marker + prologue))
        return src

    def configure(self, src, generator, *extra):
        build = src.parent / (src.name + "-" + generator.split()[0].lower())
        harness.run(["cmake", "-S", str(src), "-B", str(build), "-G", generator,
                     "-DCMAKE_CUDA_ARCHITECTURES=80", *extra], check=True)
        return build

    def build(self, build):
        return harness.run(["cmake", "--build", str(build)], check=True).stdout.decode()

    def assert_rebuilds_exactly_the_edited_object(self, src, build):
        first = self.build(build)
        self.assertEqual(len(harness.compiled_objects(first)), 2, first)
        self.assertEqual(harness.nvfresh_check(build).returncode, 0)
        header = src / "include" / "kernel_config.h"
        old = header.stat()
        header.write_text(header.read_text().replace("kTileSize = 64", "kTileSize = 96"))
        os.utime(header, ns=(old.st_atime_ns, old.st_mtime_ns))
        stale = harness.nvfresh_check(build)
        self.assertEqual(stale.returncode, 1, stale.stdout)
        self.assertIn("kernel_config.h changed", stale.stdout.decode())
        second = self.build(build)
        self.assertEqual(harness.compiled_objects(second), ["CMakeFiles/kernels.dir/src/attention.cu.o"], second)
        self.assertEqual(harness.nvfresh_check(build).returncode, 0)
        self.assertEqual(harness.compiled_objects(self.build(build)), [], "an unchanged tree compiles nothing")

    def test_injected_with_cmake_project_include(self):
        for generator in GENERATORS:
            with self.subTest(generator=generator):
                src = self.project("injected-" + generator.split()[0])
                build = self.configure(src, generator, f"-DCMAKE_PROJECT_INCLUDE={SOURCE_DIR}/cmake/nvfresh.cmake",
                                       f"-DNVFRESH_EXECUTABLE={NVFRESH}")
                self.assert_rebuilds_exactly_the_edited_object(src, build)

    def test_included_by_the_project(self):
        src = self.project("included", f'set(NVFRESH_EXECUTABLE "{NVFRESH}")\n'
                                       f'include("{SOURCE_DIR}/cmake/nvfresh.cmake")\n')
        build = self.configure(src, "Ninja")
        self.assert_rebuilds_exactly_the_edited_object(src, build)

    def test_find_package_after_install(self):
        prefix = self.work / "prefix"
        harness.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix)], check=True)
        self.assertTrue((prefix / "bin" / "nvfresh").exists())
        self.assertTrue((prefix / "share" / "nvfresh" / "nvfreshConfig.cmake").exists())
        src = self.project("found", "find_package(nvfresh REQUIRED)\n")
        for generator in GENERATORS:
            with self.subTest(generator=generator):
                build = self.configure(src, generator, f"-DCMAKE_PREFIX_PATH={prefix}")
                cache = (build / "CMakeCache.txt").read_text()
                self.assertIn(f"NVFRESH_EXECUTABLE:FILEPATH={prefix}/bin/nvfresh", cache)
                self.assert_rebuilds_exactly_the_edited_object(src, build)
                (src / "include" / "kernel_config.h").write_text(
                    (EXAMPLE / "include" / "kernel_config.h").read_text())

    def test_existing_launcher_kept_behind_nvfresh_on_request(self):
        """The module takes a compiler cache out of the CUDA launchers (test_cache.py); with
        NVFRESH_KEEP_CUDA_LAUNCHER=ON it stays, behind nvfresh, and stays sound."""
        ccache = shutil.which("ccache")
        self.assertIsNotNone(ccache, "ccache is installed by scripts/install_deps.sh")
        src = self.project("ccache")
        env = {"CCACHE_DIR": str(self.work / "ccache")}
        build = self.work / "ccache-build"
        harness.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", "-DCMAKE_CUDA_ARCHITECTURES=80",
                     f"-DCMAKE_CUDA_COMPILER_LAUNCHER={ccache}", "-DNVFRESH_KEEP_CUDA_LAUNCHER=ON",
                     f"-DCMAKE_PROJECT_INCLUDE={SOURCE_DIR}/cmake/nvfresh.cmake",
                     f"-DNVFRESH_EXECUTABLE={NVFRESH}"], env=env, check=True)
        commands = harness.run(["ninja", "-C", str(build), "-t", "commands"], check=True).stdout.decode()
        cuda_lines = [line for line in commands.splitlines() if "attention.cu" in line and " -c " in line]
        self.assertTrue(cuda_lines and cuda_lines[0].startswith(f"{NVFRESH} {ccache} "), cuda_lines)
        harness.run(["cmake", "--build", str(build)], env=env, check=True)
        first_check = harness.nvfresh_check(build)
        self.assertEqual(first_check.returncode, 0, first_check.stdout.decode() + first_check.stderr.decode())
        # a clean rebuild: nvfresh compiles, and ccache (CCACHE_RECACHE) recompiles instead of
        # answering from its cache, so nvfresh sees the compile it records: still correct, traced
        harness.run(["cmake", "--build", str(build), "--target", "clean"], env=env, check=True)
        harness.run(["cmake", "--build", str(build)], env=env, check=True)
        stats = harness.run(["ccache", "--print-stats"], env=env, check=True).stdout.decode()
        hits = [line for line in stats.splitlines() if line.startswith("direct_cache_hit")
                or line.startswith("preprocessed_cache_hit")]
        self.assertTrue(all(int(line.split()[1]) == 0 for line in hits), stats)
        self.assertEqual(harness.nvfresh_check(build).returncode, 0, harness.nvfresh_check(build).stdout)

    def test_launcher_that_execs_nvcc_keeps_its_own_reads(self):
        # Like ccache when it falls back to the plain compiler: it reads its own state, then execs
        # nvcc in the same process. Another build's launcher then changes that state. The compiler
        # is the nvcc binary itself, and an nvcc wrapper script (`exec nvcc "$@"`, as a toolkit
        # install puts in /usr/local/bin): the tracer then sees a shell, invoked as the script.
        binary = harness.nvcc_binary(NVCC)
        wrapper = harness.write(self.work / "wrapper-bin" / "nvcc", f'#!/bin/sh\nexec "{binary}" "$@"\n')
        wrapper.chmod(0o755)
        for name, compiler in (("binary", binary), ("wrapper-script", wrapper)):
            with self.subTest(compiler=name):
                self.assert_exec_launcher_reads_stay_out(name, compiler)

    def assert_exec_launcher_reads_stay_out(self, name, compiler):
        state = harness.write(self.work / f"launcher-state-{name}", "hits 1\n")
        launcher = harness.write(self.work / f"launcher-{name}.sh",
                                 f'#!/bin/sh\ncat "{state}" >/dev/null\nexec "$@"\n')
        launcher.chmod(0o755)
        src = self.project(f"exec-launcher-{name}")
        build = self.work / f"exec-launcher-{name}-build"
        harness.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", "-DCMAKE_CUDA_ARCHITECTURES=80",
                     f"-DCMAKE_CUDA_COMPILER={compiler}", f"-DCMAKE_CUDA_COMPILER_LAUNCHER={launcher}",
                     f"-DCMAKE_PROJECT_INCLUDE={SOURCE_DIR}/cmake/nvfresh.cmake",
                     f"-DNVFRESH_EXECUTABLE={NVFRESH}"], check=True)
        self.assertEqual(len(harness.compiled_objects(self.build(build))), 2)
        state.write_text("hits 2\n")
        check = harness.nvfresh_check(build)
        self.assertEqual(check.returncode, 0, check.stdout.decode())
        explain = harness.run([NVFRESH, "explain", "--all", "-C", str(build),
                               str(build / "CMakeFiles/kernels.dir/src/attention.cu.o")], check=True)
        self.assertNotIn(str(state), explain.stdout.decode())
        self.assertIn("kernel_config.h", explain.stdout.decode(), "the record still lists nvcc's own inputs")
        self.assertIn(str(Path(compiler).resolve()), explain.stdout.decode(), "the compiler itself is an input")

if __name__ == "__main__":
    harness.main()
