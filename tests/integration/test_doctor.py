"""`nvfresh doctor`: the setup of real CMake build trees (examples/cmake_project, real nvcc, Ninja
and Unix Makefiles) checked, one line per check, OK or the problem and its fix.

- Right: configured with the module (CMAKE_PROJECT_INCLUDE), Ninja and Makefiles: exit 0, every
  line OK, and --json with the same checks and findings.
- Wiring broken: a custom command that calls nvcc directly (Ninja and Makefiles): `compiles` names
  its output; an ExternalProject (the example again, without nvfresh; only its configure step run):
  `compiles` names its objects in the nested tree; configured with only CMAKE_CUDA_COMPILER_LAUNCHER=nvfresh: `sync` says the step is
  missing.
- What ran, not what is named: the launcher (NVFRESH_EXECUTABLE, a symlink to nvfresh) removed
  after configure, and a script named nvfresh that execs its arguments: `launcher` fails; a tree
  built with NVFRESH_DISABLE=1 (no record of its 2 objects): `last-build` fails, while a tree built
  through nvfresh passes it; NVFRESH_DISABLE=1 where doctor runs: `last-build` fails; a custom
  command compiling CUDA through a wrapper script not named nvcc (`cudac`), built: `compiles` sees
  no nvcc there, and `last-build` names its object, which holds device code.
- Toolchain and disks broken: NVFRESH_RECORD_DIR below a regular file (the tests run as root, so a
  mode cannot make a directory unwritable); ccache kept between nvfresh and nvcc, or first on PATH
  as gcc (Debian's /usr/lib/ccache); a -ccbin wrapper
  that clears LD_PRELOAD, so that the tracer cannot see the host compiler.
Each broken tree: exit 1, the failing check's line and its fix. Nothing is built: doctor reads the
generator's files and runs one tiny compile of its own.
"""
import json
import os
import shutil

import cmake_detection
import harness
import project

NVCC = harness.require_nvcc()
EXAMPLE = harness.source_dir() / "examples" / "cmake_project"
CHECKS = ["compiles", "launcher", "last-build", "sync", "tracer", "records", "cache",
          "compiler-cache", "build-tool"]


def configure(work, name, tool, extra=(), source=EXAMPLE, module=True, executable=None):
    build = work / name
    args = ["-S", str(source), "-B", str(build), "-G", tool.generator,
            f"-DCMAKE_MAKE_PROGRAM={tool.make_program}", "-DCMAKE_CUDA_ARCHITECTURES=80",
            *extra]
    if module:
        args += [f"-DCMAKE_PROJECT_INCLUDE={harness.nvfresh_cmake()}",
                 f"-DNVFRESH_EXECUTABLE={executable or harness.nvfresh_bin()}"]
    cmake_detection.seeded_configure(source, build, args)
    return build


def doctor(build, *extra, env=None):
    result = harness.nvfresh("doctor", "-C", str(build), *extra, env=env)
    return result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")


def lines_of(text):
    """{check name: (status, finding, fix)} of doctor's text output."""
    checks = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        status, _, rest = line.partition(" ")
        if status in ("OK", "FAIL"):
            name, _, finding = rest.strip().partition(": ")
            fix = ""
            if status == "FAIL" and i + 1 < len(lines) and lines[i + 1].strip().startswith("fix: "):
                fix = lines[i + 1].strip()[len("fix: "):]
            checks[name] = (status, finding, fix)
    return checks


class DoctorCase(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    def assert_only_failure(self, build, check, finding_part, fix_part, env=None):
        status, out, err = doctor(build, env=env)
        self.assertEqual(status, 1, out + err)
        checks = lines_of(out)
        self.assertEqual(sorted(checks), sorted(CHECKS), out)
        failing = [name for name, (state, _, _) in checks.items() if state == "FAIL"]
        self.assertEqual(failing, [check], out)
        _, finding, fix = checks[check]
        self.assertIn(finding_part, finding, out)
        self.assertIn(fix_part, fix, out)
        return checks


class Right(DoctorCase):
    @classmethod
    def setUpClass(cls):
        work = cls.make_work_dir("nvfresh-doctor-right-")
        cls.trees = {tool.label: configure(work, name, tool)
                     for name, tool in (("ninja", project.NINJA), ("make", project.MAKE))
                     if not project.require_tool(tool)}

    def test_every_check_ok_with_ninja_and_make(self):
        for label, build in self.trees.items():
            with self.subTest(label):
                status, out, err = doctor(build)
                self.assertEqual(status, 0, out + err)
                checks = lines_of(out)
                self.assertEqual(list(checks), CHECKS, out)
                self.assertTrue(all(state == "OK" for state, _, _ in checks.values()), out)
                self.assertIn("all 2 CUDA compiles run through nvfresh", checks["compiles"][1])
                self.assertIn("'nvfresh sync' runs in every build", checks["sync"][1])
                self.assertIn("saw all", checks["tracer"][1])
                self.assertIn("ninja 1." if "ninja" in label else "GNU make", checks["build-tool"][1])
                self.assertTrue(out.rstrip().endswith(f"all {len(CHECKS)} checks OK"), out)

    def test_json_has_the_same_checks(self):
        build = next(iter(self.trees.values()))
        status, out, err = doctor(build, "--json")
        self.assertEqual(status, 0, out + err)
        report = json.loads(out)
        self.assertTrue(report["ok"])
        self.assertEqual(report["build_dir"], str(build))
        self.assertEqual([check["check"] for check in report["checks"]], CHECKS)
        _, text, _ = doctor(build)
        text_checks = lines_of(text)
        for check in report["checks"]:
            self.assertTrue(check["ok"])
            # the tracer's scratch dir differs from run to run; the other findings are the same
            if check["check"] != "tracer":
                self.assertEqual(check["finding"], text_checks[check["check"]][1])

    def test_usage_errors_exit_2(self):
        self.assertEqual(doctor(self.work / "no-such-dir")[0], 2)
        self.assertEqual(harness.nvfresh("doctor", "--no-such-option").returncode, 2)


class BrokenWiring(DoctorCase):
    @classmethod
    def setUpClass(cls):
        work = cls.make_work_dir("nvfresh-doctor-wiring-")
        source = work / "custom-project"
        shutil.copytree(EXAMPLE, source)
        with open(source / "CMakeLists.txt", "a") as lists:
            lists.write(
                "add_custom_command(OUTPUT gen_scale.o\n"
                "  COMMAND ${CMAKE_CUDA_COMPILER} -c ${CMAKE_CURRENT_SOURCE_DIR}/src/scale.cu\n"
                "          -I${CMAKE_CURRENT_SOURCE_DIR}/include -o gen_scale.o\n"
                "  DEPENDS src/scale.cu)\n"
                "add_custom_target(gen_scale ALL DEPENDS gen_scale.o)\n")
        cls.custom = {tool.label: configure(work, "custom-" + name, tool, source=source)
                      for name, tool in (("ninja", project.NINJA), ("make", project.MAKE))
                      if not project.require_tool(tool)}
        # An ExternalProject: the example again, built without nvfresh; its build tree exists once
        # the outer build ran its configure step (no compile needed).
        outer = work / "outer-project"
        shutil.copytree(EXAMPLE, outer)
        with open(outer / "CMakeLists.txt", "a") as lists:
            lists.write(
                "include(ExternalProject)\n"
                f"ExternalProject_Add(inner SOURCE_DIR {EXAMPLE}\n"
                "  CMAKE_ARGS -DCMAKE_CUDA_ARCHITECTURES=80\n"
                "  BUILD_COMMAND \"\" INSTALL_COMMAND \"\")\n")
        cls.outer = configure(work, "outer", project.NINJA, source=outer)
        harness.run(["cmake", "--build", str(cls.outer), "--target", "inner"], check=True)
        cls.launcher_only = configure(work, "launcher-only", project.NINJA, module=False,
                                      extra=[f"-DCMAKE_CUDA_COMPILER_LAUNCHER={harness.nvfresh_bin()}"])

    def test_a_custom_command_calling_nvcc_is_named(self):
        for label, build in self.custom.items():
            with self.subTest(label):
                checks = self.assert_only_failure(build, "compiles", "1 of 3 CUDA compiles bypass nvfresh",
                                                  "put ${NVFRESH_EXECUTABLE} before the compiler")
                self.assertIn("gen_scale.o", checks["compiles"][1])
                self.assertIn("without nvfresh", checks["compiles"][1])

    def test_an_external_project_compiling_without_nvfresh_is_named(self):
        checks = self.assert_only_failure(self.outer, "compiles", "2 of 4 CUDA compiles bypass nvfresh",
                                          "CMAKE_ARGS")
        inner = "inner-prefix/src/inner-build"
        self.assertIn(f"CMakeFiles/kernels.dir/src/attention.cu.o (in {self.outer}/{inner}): a nested "
                      "build tree (an ExternalProject)", checks["compiles"][1])

    def test_the_launcher_alone_has_no_sync_step(self):
        checks = self.assert_only_failure(self.launcher_only, "sync", "runs 'nvfresh sync'",
                                          "CMAKE_CUDA_COMPILER_LAUNCHER alone adds neither")
        self.assertIn("all 2 CUDA compiles run through nvfresh", checks["compiles"][1])


class BrokenToolchain(DoctorCase):
    @classmethod
    def setUpClass(cls):
        work = cls.make_work_dir("nvfresh-doctor-toolchain-")
        cls.right = configure(work, "right", project.NINJA)
        ccache = shutil.which("ccache")
        cls.ccache = configure(work, "ccache", project.NINJA,
                               extra=[f"-DCMAKE_CUDA_COMPILER_LAUNCHER={ccache}",
                                      "-DNVFRESH_KEEP_CUDA_LAUNCHER=ON"]) if ccache else None
        wrapper = work / "hide-host-compiler"
        wrapper.write_text(f"#!/bin/sh\nunset LD_PRELOAD\nexec {shutil.which('g++')} \"$@\"\n")
        wrapper.chmod(0o755)
        cls.wrapper = wrapper
        cls.hidden = configure(work, "hidden", project.NINJA, extra=[f"-DCMAKE_CUDA_HOST_COMPILER={wrapper}"])

    def test_an_unwritable_record_dir(self):
        blocker = self.work / "a-file"
        blocker.write_text("not a directory\n")
        records = blocker / "records"
        checks = self.assert_only_failure(self.right, "records", f"{blocker} is not a directory",
                                          "NVFRESH_RECORD_DIR", env={"NVFRESH_RECORD_DIR": str(records)})
        self.assertIn(str(records), checks["records"][1])

    def test_ccache_between_nvfresh_and_nvcc(self):
        self.assertIsNotNone(self.ccache, "ccache is installed by scripts/install_deps.sh")
        self.assert_only_failure(self.ccache, "compiler-cache",
                                 "ccache stands between nvfresh and nvcc in 2 compiles: nvfresh runs it "
                                 "with CCACHE_RECACHE=1", "NVFRESH_KEEP_CUDA_LAUNCHER")

    def test_ccache_as_gcc_on_path(self):
        ccache = shutil.which("ccache")
        self.assertIsNotNone(ccache, "ccache is installed by scripts/install_deps.sh")
        masquerade = self.work / "ccache-bin"
        masquerade.mkdir(exist_ok=True)
        if not (masquerade / "gcc").exists():
            (masquerade / "gcc").symlink_to(ccache)
        env = {"PATH": f"{masquerade}:{os.environ['PATH']}", "CCACHE_DIR": str(self.work / "ccache")}
        self.assert_only_failure(self.right, "compiler-cache",
                                 f"the host compiler gcc is {os.path.realpath(ccache)}: nvfresh runs the "
                                 "compile with CCACHE_RECACHE=1", "point -ccbin", env=env)

    def test_a_host_compiler_the_tracer_cannot_see(self):
        checks = self.assert_only_failure(self.hidden, "tracer", "the tracer missed",
                                          "keeps LD_PRELOAD")
        self.assertIn(str(self.wrapper), checks["tracer"][1])
        self.assertIn("/usr/include/", checks["tracer"][1], "the first file missed is a host header")



class WhatRan(DoctorCase):
    @classmethod
    def setUpClass(cls):
        work = cls.make_work_dir("nvfresh-doctor-ran-")
        gone = work / "gone-bin" / "nvfresh"
        gone.parent.mkdir()
        gone.symlink_to(harness.nvfresh_bin())
        cls.gone = configure(work, "gone", project.NINJA, executable=gone)
        gone.unlink()  # removed after configure: every compile of the tree fails
        script = work / "fake-bin" / "nvfresh"
        script.parent.mkdir()
        script.write_text('#!/bin/sh\nexec "$@"\n')
        script.chmod(0o755)
        cls.script = configure(work, "script", project.NINJA, executable=script)
        cls.disabled = configure(work, "disabled", project.NINJA)
        harness.run(["cmake", "--build", str(cls.disabled)], env={"NVFRESH_DISABLE": "1"},
                    check=True)
        cls.built = configure(work, "built", project.NINJA)
        harness.run(["cmake", "--build", str(cls.built)], check=True)
        wrapper = work / "wrapper-bin" / "cudac"
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\nexec {NVCC} "$@"\n')
        wrapper.chmod(0o755)
        wrapped = work / "wrapped-project"
        shutil.copytree(EXAMPLE, wrapped)
        with open(wrapped / "CMakeLists.txt", "a") as lists:
            lists.write(
                "add_custom_command(OUTPUT wrapped_scale.o\n"
                f"  COMMAND {wrapper} -arch=sm_80 -c ${{CMAKE_CURRENT_SOURCE_DIR}}/src/scale.cu\n"
                "          -I${CMAKE_CURRENT_SOURCE_DIR}/include -o wrapped_scale.o\n"
                "  DEPENDS src/scale.cu)\n"
                "add_custom_target(wrapped_scale ALL DEPENDS wrapped_scale.o)\n")
        cls.wrapped = {tool.label: configure(work, "wrapped-" + name, tool, source=wrapped)
                       for name, tool in (("ninja", project.NINJA), ("make", project.MAKE))
                       if not project.require_tool(tool)}
        for build in cls.wrapped.values():
            harness.run(["cmake", "--build", str(build)], check=True)

    def test_a_launcher_removed_after_configure(self):
        checks = self.assert_only_failure(self.gone, "launcher", "is not there (removed after "
                                          "configure?)", "-DNVFRESH_EXECUTABLE=")
        self.assertIn("the launcher of 2 CUDA compiles", checks["launcher"][1])
        self.assertIn("all 2 CUDA compiles run through nvfresh", checks["compiles"][1])

    def test_a_program_only_named_nvfresh(self):
        self.assert_only_failure(self.script, "launcher", "is not nvfresh: ", "a wrapper script "
                                 "must exec nvfresh")

    def test_a_build_with_nvfresh_disabled(self):
        checks = self.assert_only_failure(self.disabled, "last-build", "2 of 2 built objects were "
                                          "made by a compile nvfresh did not record",
                                          "NVFRESH_DISABLE=1")
        self.assertIn("attention.cu.o", checks["last-build"][1])

    def test_a_build_through_nvfresh(self):
        status, out, err = doctor(self.built)
        self.assertEqual(status, 0, out + err)
        checks = lines_of(out)
        self.assertEqual(checks["last-build"][1],
                         "nvfresh recorded the compile of each of the 2 built objects")
        self.assertRegex(checks["launcher"][1], r"^the compiles run /\S+/nvfresh \(nvfresh \S+\)$")

    def test_a_wrapper_not_named_nvcc_is_found_by_what_it_built(self):
        for label, build in self.wrapped.items():
            with self.subTest(label):
                checks = self.assert_only_failure(build, "last-build", "1 built object holds CUDA "
                                                  "device code but came from a step that runs no "
                                                  "nvcc", "a wrapper not named nvcc")
                self.assertIn("wrapped_scale.o", checks["last-build"][1])
                self.assertIn("all 2 CUDA compiles run through nvfresh", checks["compiles"][1])

    def test_nvfresh_disabled_where_doctor_runs(self):
        status, out, err = doctor(self.built, env={"NVFRESH_DISABLE": "1"})
        self.assertEqual(status, 1, out + err)
        state, finding, _ = lines_of(out)["last-build"]
        self.assertEqual(state, "FAIL", out)
        self.assertIn("NVFRESH_DISABLE is set here", finding)


if __name__ == "__main__":
    harness.main()
