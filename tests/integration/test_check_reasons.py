"""Issue 5, "every reason kind of item 1 has a test": `nvfresh check --json` on a real build.

One small CMake project (real nvcc, sm_80 only, nvfresh injected with CMAKE_PROJECT_INCLUDE) is
configured once per generator. For each reason kind the situation is produced for real, then
`nvfresh check -C <build> --json` must exit 1 and name that exact `kind` for the right object or
artifact, with a readable `text`; then ONE `cmake --build` must make check exit 0 again.

Object kinds: input_changed, input_missing, env_changed, tool_changed, probe_found (an earlier
include directory and __has_include), object_modified, object_missing, untrusted (a header saved
while its unit compiles, forced as in test_staleness_race.py), record_unreadable.
Artifact kinds: object_stale, relink_pending (an object, and a static library, rebuilt without
relinking), library_not_fresh, not_linked. And exit status 2: a directory without records.

Ninja runs every kind; Unix Makefiles runs three of them (the ones where make's mtime view and
nvfresh's content view differ most).
"""
import json
import re
import shutil
import unittest
from pathlib import Path

import harness
import project

harness.require_nvcc()

LIB, CORE = "reasons", "reasons_core"
SO, ARCHIVE = f"lib{LIB}.so", f"lib{CORE}.a"
KERNEL, PROBE, RACE, PLAIN, CORE_O = "kernel.cu.o", "probe.cu.o", "race.cu.o", "plain.cu.o", "core.cu.o"
ALL_OBJECTS = {KERNEL, PROBE, RACE, PLAIN, CORE_O}
SHORT_HASH = r"[0-9a-f]{8}"

CMAKELISTS = f"""\
cmake_minimum_required(VERSION 3.25)
project(reasons LANGUAGES CUDA)
add_library({CORE} STATIC core.cu)
set_target_properties({CORE} PROPERTIES POSITION_INDEPENDENT_CODE ON)
add_library({LIB} SHARED kernel.cu probe.cu race.cu plain.cu)
target_include_directories({LIB} PRIVATE first include)
target_link_libraries({LIB} PRIVATE {CORE})
"""

FILES = {
    "CMakeLists.txt": CMAKELISTS,
    "first/README": "searched before include/: a header put here shadows include/'s\n",
    "include/kernel.h": "#pragma once\nconstexpr int kTile = 64;\n",
    "include/shadow.h": "#pragma once\nconstexpr int kShadow = 1;\n",
    "include/raced.h": "#define RACED_VALUE 1\n",
    "kernel.cu": '#include "kernel.h"\n__global__ void fwd(int* p) { *p = kTile; }\n'
                 "int kernel_tile() { return kTile; }\n",
    "probe.cu": '#include "shadow.h"\n'
                '#if __has_include("optional.h")\n#include "optional.h"\n#endif\n'
                "__global__ void probe(int* p) { *p = kShadow; }\n",
    "race.cu": '#include "raced.h"\n__global__ void raced(int* p) { *p = RACED_VALUE; }\n'
               "int race_value() { return RACED_VALUE; }\n",
    "plain.cu": "__global__ void plain(int* p) { *p = 1; }\nint plain_value() { return 1; }\n",
    "core.cu": "__global__ void core(int* p) { *p = 2; }\nint core_value() { return 2; }\n",
}

# The host compiler (CMAKE_CUDA_HOST_COMPILER): g++ behind a script, so that a test can change a
# tool's content in place (tool_changed), and pause race.cu's compile after nvcc's host
# preprocessing read raced.h (untrusted), as test_staleness_race.py does.


def name_of(path):
    return Path(path).name


class Report:
    """One `nvfresh check --json` run."""

    def __init__(self, result):
        self.rc = result.returncode
        self.raw = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
        self.data = json.loads(result.stdout)

    def stale_objects(self):
        """{object file name: [reason, ...]} of every stale object."""
        return {name_of(o["object"]): o["reasons"] for o in self.data["objects"] if not o["fresh"]}

    def pending_artifacts(self):
        """{artifact file name: [reason, ...]} of every artifact that is not fresh."""
        return {name_of(a["artifact"]): a["reasons"] for a in self.data["artifacts"] if not a["fresh"]}

    def __str__(self):
        return f"exit {self.rc}\n{json.dumps(self.data, indent=1)}"


class Scenarios(project.WorkDirPerClass):
    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-reasons-")
        cls.src = cls.work / "src"
        for relative, text in FILES.items():
            harness.write(cls.src / relative, text)
        cls.state = cls.work / "state"
        cls.state.mkdir()
        cls.host_cxx = project.write_script(cls.work / "hostcc" / "g++", cls.host_wrapper("v1"))
        cls.tree = project.BuildTree(cls.src, cls.work / "build", cls.TOOL,
                                     cache_args=[f"-DCMAKE_CUDA_HOST_COMPILER={cls.host_cxx}"])
        cls.tree.configure()
        first = cls.tree.build()
        assert first.compiled == ALL_OBJECTS, first.output

    @classmethod
    def host_wrapper(cls, version):
        return project.PAUSING_HOST_COMPILER.format(version=version, state=cls.state)

    def setUp(self):
        # Each kind starts from a fresh tree, so one failure does not spill into the next.
        self.tree.build()
        self.assert_fresh("(before the scenario)")

    # -- helpers ----------------------------------------------------------------------------

    def check(self, env=None):
        return Report(self.tree.nvfresh("check", "-C", str(self.tree.build_dir), "--json", env=env))

    def assert_fresh(self, what, env=None):
        report = self.check(env=env)
        self.assertEqual(report.rc, 0, f"check after {what}: {report}")
        self.assertEqual(report.data["exit_status"], 0)
        self.assertEqual(len(report.data["objects"]), len(ALL_OBJECTS), str(report))
        return report

    def assert_stale(self, expected, env=None):
        """expected: {object name: kind}, exactly the stale objects; returns ({name: reason}, report)."""
        report = self.check(env=env)
        self.assertEqual(report.rc, 1, str(report))
        self.assertEqual(report.data["exit_status"], 1)
        stale = report.stale_objects()
        self.assertEqual(set(stale), set(expected), str(report))
        found = {}
        for name, kind in expected.items():
            matching = [r for r in stale[name] if r["kind"] == kind]
            self.assertEqual(len(matching), 1, f"{name}: want one {kind} reason in {stale[name]}")
            found[name] = matching[0]
            self.assertTrue(matching[0]["text"].strip(), matching[0])
        return found, report

    def assert_artifact(self, report, artifact, kind, concerning):
        """The artifact is not fresh, with a `kind` reason about `concerning` (a file name)."""
        pending = report.pending_artifacts()
        self.assertIn(artifact, pending, str(report))
        matching = [r for r in pending[artifact] if r["kind"] == kind and name_of(r["path"]) == concerning]
        self.assertEqual(len(matching), 1, f"{artifact}: want {kind} about {concerning} in {pending[artifact]}")
        return matching[0]

    def assert_object_stale_in_so(self, report, obj):
        reason = self.assert_artifact(report, SO, "object_stale", obj)
        self.assertRegex(reason["text"], rf"^relink pending: contains \S*/{re.escape(obj)}, which is stale")

    def build_fixes(self, compiled, env=None, what=""):
        """One build compiles exactly `compiled`, after which check exits 0."""
        result = self.tree.build(env=env)
        self.assertEqual(result.compiled, set(compiled), f"build after {what}:\n{result.output}")
        return self.assert_fresh(f"one build after {what}", env=env)

    def obj(self, name):
        return self.tree.object(name)

    def compile_only(self, name, target=LIB):
        """Builds one object file (and nothing that links it)."""
        build = self.tree.build_dir
        if self.TOOL.generator == "Ninja":
            harness.run([self.TOOL.make_program, "-C", str(build), f"CMakeFiles/{target}.dir/{name}"],
                        check=True)
        else:
            harness.run([self.TOOL.make_program, "-C", str(build), "-f", f"CMakeFiles/{target}.dir/build.make",
                         f"CMakeFiles/{target}.dir/{name}"], check=True)

    # -- object reasons ---------------------------------------------------------------------

    def scenario_input_changed(self):
        header = self.src / "include/kernel.h"
        original = header.read_text()
        project.replace_keeping_mtime(header, original.replace("kTile = 64", "kTile = 128"))
        found, report = self.assert_stale({KERNEL: "input_changed"})
        reason = found[KERNEL]
        self.assertTrue(reason["path"].endswith("include/kernel.h"), reason)
        self.assertRegex(reason["before"], f"^{SHORT_HASH}$")
        self.assertRegex(reason["after"], f"^{SHORT_HASH}$")
        self.assertNotEqual(reason["before"], reason["after"])
        self.assertEqual(reason["text"], f"{reason['path']} changed: {reason['before']} -> {reason['after']}")
        self.assert_object_stale_in_so(report, KERNEL)
        # Content decides: the old text back (mtime still kept) is fresh again, without a build.
        project.replace_keeping_mtime(header, original)
        self.assert_fresh("the header's old content came back")
        project.replace_keeping_mtime(header, original.replace("kTile = 64", "kTile = 128"))
        again, _ = self.assert_stale({KERNEL: "input_changed"})
        self.assertEqual(again[KERNEL]["before"], reason["before"])
        self.assertEqual(again[KERNEL]["after"], reason["after"])
        self.build_fixes({KERNEL}, what="kernel.h changed with its mtime kept")

    def scenario_input_missing(self):
        header = self.src / "include/kernel.h"
        text = header.read_text()
        header.unlink()
        found, report = self.assert_stale({KERNEL: "input_missing"})
        reason = found[KERNEL]
        self.assertTrue(reason["path"].endswith("include/kernel.h"), reason)
        self.assertRegex(reason["before"], f"^{SHORT_HASH}$")
        self.assertEqual(reason["text"], f"{reason['path']} was deleted")
        self.assert_object_stale_in_so(report, KERNEL)
        harness.write(header, text)  # restored: same content, new mtime and inode
        self.assert_fresh("kernel.h was restored with the same content")
        self.tree.build()
        self.assert_fresh("kernel.h was restored and the tree built")

    def scenario_env_changed(self):
        flags = "-DREASONS_EXTRA=1"
        env = {"NVCC_APPEND_FLAGS": flags}
        found, report = self.assert_stale({name: "env_changed" for name in ALL_OBJECTS}, env=env)
        for reason in found.values():
            self.assertEqual((reason["path"], reason["before"], reason["after"]),
                             ("NVCC_APPEND_FLAGS", "unset", f"'{flags}'"), reason)
            self.assertEqual(reason["text"], f"NVCC_APPEND_FLAGS changed: unset -> '{flags}'")
        self.assert_fresh("(check's own environment back as the build's)")
        self.build_fixes(ALL_OBJECTS, env=env, what="NVCC_APPEND_FLAGS was set")
        found, _ = self.assert_stale({name: "env_changed" for name in ALL_OBJECTS})
        self.assertEqual(found[PLAIN]["text"], f"NVCC_APPEND_FLAGS changed: '{flags}' -> unset")
        self.build_fixes(ALL_OBJECTS, what="NVCC_APPEND_FLAGS was unset again")

    def scenario_tool_changed(self):
        project.replace_keeping_mtime(self.host_cxx, self.host_wrapper("v2"))
        found, report = self.assert_stale({name: "tool_changed" for name in ALL_OBJECTS})
        for reason in found.values():
            self.assertTrue(reason["path"].endswith("hostcc/g++"), reason)
            self.assertRegex(reason["before"], f"^{SHORT_HASH}$")
            self.assertRegex(reason["after"], f"^{SHORT_HASH}$")
            self.assertNotEqual(reason["before"], reason["after"])
            self.assertEqual(reason["text"],
                             f"tool {reason['path']} changed: {reason['before']} -> {reason['after']}")
        self.assert_object_stale_in_so(report, PLAIN)
        self.build_fixes(ALL_OBJECTS, what="the host compiler script changed with its mtime kept")

    def probe_appears(self, relative, text):
        """A file appears where a lookup of probe.cu found nothing; then it goes away again."""
        path = harness.write(self.src / relative, text)
        found, report = self.assert_stale({PROBE: "probe_found"})
        reason = found[PROBE]
        self.assertTrue(reason["path"].endswith(relative), reason)
        self.assertEqual(reason["text"],
                         f"{reason['path']} now exists (it was looked up and not found when the "
                         "object was built)")
        self.assert_object_stale_in_so(report, PROBE)
        self.build_fixes({PROBE}, what=f"{relative} appeared")
        path.unlink()
        found, _ = self.assert_stale({PROBE: "input_missing"})
        self.assertTrue(found[PROBE]["path"].endswith(relative), found)
        self.build_fixes({PROBE}, what=f"{relative} went away again")

    def scenario_probe_found_in_earlier_include_dir(self):
        self.probe_appears("first/shadow.h", "#pragma once\nconstexpr int kShadow = 2;\n")

    def scenario_probe_found_by_has_include(self):
        self.probe_appears("include/optional.h", "#pragma once\nconstexpr int kOptional = 3;\n")

    def scenario_object_modified(self):
        path = self.obj(PLAIN)
        path.write_bytes(path.read_bytes() + b"\0appended by someone else")
        found, report = self.assert_stale({PLAIN: "object_modified"})
        reason = found[PLAIN]
        self.assertEqual(name_of(reason["path"]), PLAIN)
        self.assertRegex(reason["text"],
                         rf"^object \S*/{re.escape(PLAIN)} was modified after it was built: "
                         rf"{SHORT_HASH} -> {SHORT_HASH}$")
        self.assertNotEqual(reason["before"], reason["after"])
        self.assert_object_stale_in_so(report, PLAIN)
        self.build_fixes({PLAIN}, what=f"{PLAIN} was overwritten")

    def scenario_object_missing(self):
        self.obj(PLAIN).unlink()
        found, report = self.assert_stale({PLAIN: "object_missing"})
        reason = found[PLAIN]
        self.assertEqual(name_of(reason["path"]), PLAIN)
        self.assertEqual(reason["text"], f"object {reason['path']} is missing")
        self.assert_object_stale_in_so(report, PLAIN)
        self.build_fixes({PLAIN}, what=f"{PLAIN} was deleted")

    def scenario_untrusted(self):
        header = self.src / "include/raced.h"
        harness.write(header, "#define RACED_VALUE 2\n")
        raced = project.build_with_edit_during_compile(self, self.tree, self.state, header,
                                                       "#define RACED_VALUE 3\n")
        self.assertEqual(raced.compiled, {RACE}, raced.output)
        self.assertTrue((self.state / "armed/claimed").exists(), "the race was not forced")
        found, report = self.assert_stale({RACE: "untrusted"})
        reason = found[RACE]
        self.assertEqual(name_of(reason["path"]), RACE)
        self.assertRegex(reason["text"], r"^not trusted: \S*/include/raced\.h changed while the object compiled")
        self.assert_object_stale_in_so(report, RACE)
        self.build_fixes({RACE}, what="the raced build")

    def scenario_record_unreadable(self):
        records = list((self.tree.build_dir / ".nvfresh" / "records").glob(f"{PLAIN}-*.rec"))
        self.assertEqual(len(records), 1, records)
        record = records[0]
        text = harness.read_record_text(record)
        harness.write_record_text(record, text.replace("\ntimes\t", "\ntimes\t9", 1))  # the checksum no longer matches
        found, report = self.assert_stale({PLAIN: "record_unreadable"})
        reason = found[PLAIN]
        self.assertEqual(Path(reason["path"]).name, record.name, reason)
        self.assertRegex(reason["text"], r"^record unreadable \(.+\)$")
        self.assert_object_stale_in_so(report, PLAIN)
        self.build_fixes({PLAIN}, what="its record was corrupted")

    # -- artifact reasons ---------------------------------------------------------------------

    def scenario_relink_pending(self):
        source = self.src / "plain.cu"
        source.write_text(source.read_text() + "int plain_extra() { return 3; }\n")
        self.compile_only(PLAIN)
        report = self.check()
        self.assertEqual(report.rc, 1, str(report))
        self.assertEqual(report.stale_objects(), {}, str(report))
        self.assertEqual(set(report.pending_artifacts()), {SO}, str(report))
        reason = self.assert_artifact(report, SO, "relink_pending", PLAIN)
        self.assertEqual(len(report.pending_artifacts()[SO]), 1, str(report))
        self.assertRegex(reason["text"],
                         rf"^relink pending: \S*/{re.escape(PLAIN)} is newer than / differs from what was "
                         rf"linked: {re.escape(reason['before'])} -> {re.escape(reason['after'])}$")
        self.assertNotEqual(reason["before"], reason["after"])
        self.build_fixes(set(), what=f"{PLAIN} was rebuilt without relinking {SO}")

    def scenario_static_library_reasons(self):
        # core.cu.o deleted: the archive contains a stale object, the .so links a stale archive.
        self.obj(CORE_O).unlink()
        _, report = self.assert_stale({CORE_O: "object_missing"})
        reason = self.assert_artifact(report, ARCHIVE, "object_stale", CORE_O)
        self.assertIn("which is stale", reason["text"])
        reason = self.assert_artifact(report, SO, "library_not_fresh", ARCHIVE)
        self.assertRegex(reason["text"], rf"^relink pending: contains \S*/{re.escape(ARCHIVE)}, "
                                         "which is not fresh$")
        self.build_fixes({CORE_O}, what=f"{CORE_O} was deleted")
        # core.cu.o rebuilt alone: the archive is pending, so the .so links a library that is
        # not fresh; the archive rebuilt alone: the .so is pending, because of the archive.
        source = self.src / "core.cu"
        source.write_text(source.read_text() + "int core_extra() { return 4; }\n")
        self.compile_only(CORE_O, target=CORE)
        report = self.check()
        self.assertEqual(report.rc, 1, str(report))
        self.assertEqual(report.stale_objects(), {}, str(report))
        self.assertEqual(set(report.pending_artifacts()), {ARCHIVE, SO}, str(report))
        self.assert_artifact(report, ARCHIVE, "relink_pending", CORE_O)
        self.assert_artifact(report, SO, "library_not_fresh", ARCHIVE)
        self.tree.build(target=CORE)
        report = self.check()
        self.assertEqual(report.rc, 1, str(report))
        self.assertEqual(set(report.pending_artifacts()), {SO}, str(report))
        self.assert_artifact(report, SO, "relink_pending", ARCHIVE)
        self.build_fixes(set(), what=f"{ARCHIVE} was rebuilt without relinking {SO}")

    def scenario_not_linked(self):
        so = [Path(a["artifact"]) for a in self.check().data["artifacts"] if name_of(a["artifact"]) == SO]
        self.assertEqual(len(so), 1)
        so[0].unlink()
        report = self.check()
        self.assertEqual(report.rc, 1, str(report))
        self.assertEqual(report.stale_objects(), {}, str(report))
        reasons = report.pending_artifacts()[SO]
        self.assertEqual([r["kind"] for r in reasons], ["not_linked"], reasons)
        self.assertEqual(reasons[0]["text"], "not linked yet (its target was not built)")
        self.build_fixes(set(), what=f"{SO} was deleted")


class NinjaReasons(Scenarios, unittest.TestCase):
    TOOL = project.NINJA

    def test_input_changed(self):
        self.scenario_input_changed()

    def test_input_missing(self):
        self.scenario_input_missing()

    def test_env_changed(self):
        self.scenario_env_changed()

    def test_tool_changed(self):
        self.scenario_tool_changed()

    def test_probe_found_in_earlier_include_dir(self):
        self.scenario_probe_found_in_earlier_include_dir()

    def test_probe_found_by_has_include(self):
        self.scenario_probe_found_by_has_include()

    def test_object_modified(self):
        self.scenario_object_modified()

    def test_object_missing(self):
        self.scenario_object_missing()

    def test_untrusted(self):
        self.scenario_untrusted()

    def test_record_unreadable(self):
        self.scenario_record_unreadable()

    def test_relink_pending(self):
        self.scenario_relink_pending()

    def test_static_library_reasons(self):
        self.scenario_static_library_reasons()

    def test_not_linked(self):
        self.scenario_not_linked()


class MakeReasons(Scenarios, unittest.TestCase):
    TOOL = project.MAKE

    def test_input_changed(self):
        self.scenario_input_changed()

    def test_probe_found_in_earlier_include_dir(self):
        self.scenario_probe_found_in_earlier_include_dir()

    def test_relink_pending(self):
        self.scenario_relink_pending()


class CannotTell(unittest.TestCase):
    def test_no_records_exits_2(self):
        empty = harness.make_workdir("nvfresh-reasons-empty-")
        try:
            result = harness.run([harness.nvfresh_bin(), "check", "-C", str(empty), "--json"], cwd=empty)
            self.assertEqual(result.returncode, 2, result.stderr)
            report = json.loads(result.stdout)
            self.assertEqual((report["exit_status"], report["objects"], report["stale"]), (2, [], 0))
            text = harness.run([harness.nvfresh_bin(), "check", "-C", str(empty)], cwd=empty)
            self.assertEqual(text.returncode, 2)
            self.assertIn("no records under", text.stderr.decode())
        finally:
            shutil.rmtree(empty.parent, ignore_errors=True)


if __name__ == "__main__":
    harness.main()
