"""The step cache with real nvcc, CMake and Ninja: cicc and ptxas served per arch.

nvfresh's tracer runs cicc and ptxas through nvfresh (`nvfresh __step ...`), which serves a step
whose key (tool, arguments and input file with nvcc's temporary names normalized, files the step
read) it has stored, and runs and stores it otherwise. Which steps ran and which were served is read
from the debug log (NVFRESH_LOG_FILE: "step <pass> <tool> served" or "... runs: <why>").

Every scenario builds a tiny two-arch (80;90) project, changes one thing, builds again, and checks
which steps ran, and that the object equals a compile of the same tree without the step cache (the
bytes, nvcc's tmpxft stem aside, and `nvfresh compare`), and that the object's record lists the
same inputs as that compile's (the served steps' process and reads are sent on the trace channel).
"""
import json
import re
import shutil
from pathlib import Path

import harness
import objects
import project
from project import BuildTree, Target, normalized

NVFRESH = harness.nvfresh_bin()
STEP_RE = re.compile(r"\] step (\S+) (cicc|ptxas) (served|runs)")

KERNEL = """\
#include "values.h"
const char* host_text();
__global__ void kernel(int* out)
{
#if __CUDA_ARCH__ >= 900
  out[0] = SM90_VALUE;
#else
  out[0] = ALL_VALUE;
#endif
  out[1] = COMMON_VALUE;
}
#ifndef __CUDA_ARCH__
const char* host_text() { return HOST_TEXT; }
#endif
void launch(int* out) { kernel<<<1, 1>>>(out); }
"""

VALUES = {"SM90_VALUE": "90", "ALL_VALUE": "80", "COMMON_VALUE": "1", "HOST_TEXT": '"host-1"'}


def values_h(values):
    return (f"#define SM90_VALUE {values['SM90_VALUE']}\n"
            f"#define ALL_VALUE {values['ALL_VALUE']}\n"
            f"#define COMMON_VALUE {values['COMMON_VALUE']}\n"
            "#ifndef __CUDA_ARCH__\n"
            f"#define HOST_TEXT {values['HOST_TEXT']}\n"
            "#endif\n")


class StepCacheTree(project.WorkDirPerClass):
    """Mixed into a unittest.TestCase: one tiny project per test, built through nvfresh with TOOL,
    and what its builds' steps did. CMAKE_ARGS: extra CMake cache arguments (another nvcc)."""
    TOOL = project.NINJA
    CMAKE_ARGS = ()
    OBJECT = "k.cu.o"  # the one object of the tree

    def setUp(self):
        type(self).counter += 1
        self.root = self.work / f"case{self.counter}"
        self.root.mkdir()
        self.log = self.root / "nvfresh.log"
        self.env = {"NVFRESH_CACHE_DIR": str(self.root / "cache"), "NVFRESH_LOG_FILE": str(self.log)}
        self.values = dict(VALUES)

    def make_tree(self, architectures="80;90", options=()):
        self.source = project.write_project(
            self.root / "src", [Target("k", "k.cu", architectures=architectures, options=list(options))],
            {"k.cu": KERNEL, "include/values.h": values_h(self.values)})
        self.tree = BuildTree(self.source, self.root / "build", self.TOOL, cache_args=self.CMAKE_ARGS,
                              env=self.env)
        self.tree.configure()

    def move_kernel_down(self, lines, kernel=KERNEL):
        """A host-only edit above the kernel that moves it `lines` lines down: cicc's input gets as
        many blank lines (fewer than 8) or a line marker with another number (8 or more). What it
        adds above the kernel is a macro, not a definition: nvcc's module id, which cicc is given,
        hashes the name of the file's first external definition."""
        harness.write(self.source / "k.cu", kernel.replace(
            "const char* host_text();\n",
            "const char* host_text();\n#ifndef __CUDA_ARCH__\n" + "\n" * (lines - 3) +
            f"#define HOST_BANNER \"{lines} lines\"\n#endif\n") +
            "#ifndef __CUDA_ARCH__\nconst char* host_banner() { return HOST_BANNER; }\n#endif\n")

    def set_values(self, **changes):
        self.values.update(changes)
        harness.write(self.source / "include" / "values.h", values_h(self.values))

    def steps_of_build(self, env=None):
        """{(pass, tool): 'served' | 'runs'} of the steps one build ran."""
        before = self.log.read_text() if self.log.exists() else ""
        self.tree.build(env=env)
        steps = {}
        for pass_name, tool, what in STEP_RE.findall(self.log.read_text()[len(before):]):
            self.assertNotIn((pass_name, tool), steps, "one step ran twice in one compile")
            steps[(pass_name, tool)] = what
        return steps

    def step_events(self):
        """(kind, cause, pass, tool, detail) of each line of the build tree's steps log."""
        lines = (self.tree.build_dir / ".nvfresh" / "steps.log").read_text().splitlines()
        return [(f[2], f[3], f[7], f[8], f[9]) for f in (line.split("\t") for line in lines)]

    def record_inputs(self):
        records = harness.record_files(self.tree.build_dir / ".nvfresh")
        self.assertEqual(len(records), 1)
        inputs, _, _ = objects.read_record(records[0])
        return {name: (role, passes) for name, (role, _, passes) in inputs.items()}

    def assert_like_plain_compile(self):
        """The object and its record equal those of a compile without the step cache."""
        served = self.tree.object(self.OBJECT)
        served_bytes = served.read_bytes()
        served_inputs = self.record_inputs()
        reference = self.root / "served.o"
        shutil.copy(served, reference)
        served.unlink()
        self.assertEqual(self.steps_of_build(env={"NVFRESH_STEP_CACHE": "0"}), {})
        self.assertEqual(normalized(served.read_bytes()), normalized(served_bytes),
                         "an object assembled from served steps differs from a plain compile")
        compared = harness.run([NVFRESH, "compare", str(reference), str(served)])
        self.assertEqual(compared.returncode, 0, compared.stdout.decode())
        self.assertEqual(self.record_inputs(), served_inputs,
                         "the record of a compile with served steps lists other inputs")

    def check_moved_lines_are_served(self):
        """A host-only edit that moves the kernel's lines serves every step of the 80;90 tree:
        cicc's key holds its input's code, not the numbers of its lines, and a hit's outputs get
        the line numbers the input has now (markers in its C outputs, local variables' names).
        Then moved again with every hit sampled: each is run again and is, byte for byte, what
        cicc writes."""
        self.make_tree()
        self.steps_of_build()
        before = len(self.step_events())
        self.move_kernel_down(5)
        all_served = {("compute_80", "cicc"): "served", ("sm_80", "ptxas"): "served",
                      ("compute_90", "cicc"): "served", ("sm_90", "ptxas"): "served"}
        self.assertEqual(self.steps_of_build(), all_served)
        moved = [detail for _, _, _, tool, detail in self.step_events()[before:] if tool == "cicc"]
        self.assertEqual(len(moved), 2)
        self.assertTrue(all("its lines moved" in detail for detail in moved), moved)
        self.assertIn(b"5 lines", self.tree.object(self.OBJECT).read_bytes())
        self.assert_like_plain_compile()
        # Moved again, with a marker this time (14 lines).
        before = len(self.step_events())
        self.move_kernel_down(14)
        self.assertEqual(set(self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"}).values()),
                         {"runs"})
        self.assertEqual({(pass_name, tool): cause for _, cause, pass_name, tool, _
                          in self.step_events()[before:]},
                         {key: "cache_verified" for key in all_served})
        self.assert_like_plain_compile()


class StepCache(StepCacheTree, harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-step-cache-")
        cls.counter = 0

    def test_host_only_edit_serves_every_device_step(self):
        self.make_tree()
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "runs",
                                                 ("sm_80", "ptxas"): "runs",
                                                 ("compute_90", "cicc"): "runs",
                                                 ("sm_90", "ptxas"): "runs"})
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served",
                                                 ("compute_90", "cicc"): "served",
                                                 ("sm_90", "ptxas"): "served"})
        self.assertIn(b"host-2", self.tree.object("k.cu.o").read_bytes())
        inputs = self.record_inputs()
        self.assertEqual({Path(name).name for name in inputs} & {"cicc", "ptxas"}, {"cicc", "ptxas"},
                         "the served steps' tools are missing from the record")
        self.assert_like_plain_compile()
        stats = harness.run([NVFRESH, "cache", "stats"], env=self.env, check=True).stdout.decode()
        self.assertIn("steps        4 served, 4 run, 4 stored", stats)

    def test_host_edit_that_moves_lines_serves_every_device_step(self):
        self.check_moved_lines_are_served()

    def test_sampled_hit_of_a_ptxas_that_says_its_time_is_verified(self):
        # ptxas -v says how long it took ("Compile time = 22.905 ms"), another number in every run:
        # a sampled hit whose run says only another time is the same step, not a mismatch.
        self.make_tree(architectures="80", options=["-Xptxas=-v"])
        self.steps_of_build()
        self.set_values(HOST_TEXT='"host-2"')
        before = len(self.step_events())
        self.assertEqual(self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"}),
                         {("compute_80", "cicc"): "runs", ("sm_80", "ptxas"): "runs"})
        self.assertEqual({(pass_name, tool): cause for _, cause, pass_name, tool, _
                          in self.step_events()[before:]},
                         {("compute_80", "cicc"): "cache_verified",
                          ("sm_80", "ptxas"): "cache_verified"})

    def test_lines_moved_under_a_step_that_printed_a_warning_run_it(self):
        # A warning names a line: a stored run that printed one is served only where no line moved.
        kernel = KERNEL.replace("out[1] = COMMON_VALUE;", "out[1] = COMMON_VALUE; int unused = 3;")
        self.make_tree(architectures="80")
        harness.write(self.source / "k.cu", kernel)
        self.steps_of_build()
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served"})
        before = len(self.step_events())
        self.move_kernel_down(5, kernel)
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "runs",
                                                 ("sm_80", "ptxas"): "served"})
        details = [detail for _, _, _, tool, detail in self.step_events()[before:] if tool == "cicc"]
        self.assertIn("printed something", details[0])
        self.assert_like_plain_compile()

    def test_sm90_only_edit_runs_only_sm90_steps(self):
        self.make_tree()
        self.steps_of_build()
        self.set_values(SM90_VALUE="91")
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served",
                                                 ("compute_90", "cicc"): "runs",
                                                 ("sm_90", "ptxas"): "runs"})
        self.assert_like_plain_compile()

    def test_stats_and_explain_say_which_steps_were_served_per_arch(self):
        self.make_tree()
        self.steps_of_build()
        self.set_values(SM90_VALUE="91")
        self.steps_of_build()
        build = str(self.tree.build_dir)
        explained = harness.run([NVFRESH, "explain", str(self.tree.object("k.cu.o")), "-C", build],
                                env=self.env, check=True).stdout.decode()
        steps = {(arch, tool): (kind, float(seconds), label) for arch, tool, kind, seconds, label
                 in re.findall(r"^  arch (\S+) +(cicc|ptxas) +(\S+) +([0-9.]+) s (saved|ran)",
                               explained, re.M)}
        self.assertEqual({key: value[0] for key, value in steps.items()},
                         {("80", "cicc"): "served", ("80", "ptxas"): "served",
                          ("90", "cicc"): "compiled", ("90", "ptxas"): "compiled"}, explained)
        self.assertEqual(steps[("80", "cicc")][2], "saved")
        self.assertRegex(explained, r"steps +of its last nvcc run \(.*\): 2 served, 2 ran; "
                                    r"nvcc time saved [0-9.]+ s")
        self.assertIn("step_not_cached", explained)
        explained_json = json.loads(harness.run(
            [NVFRESH, "explain", str(self.tree.object("k.cu.o")), "-C", build, "--json"],
            env=self.env, check=True).stdout)["objects"][0]["steps"]
        self.assertEqual((explained_json["served"], explained_json["ran"]), (2, 2))
        self.assertEqual({(s["arch"], s["tool"]): s["outcome"] for s in explained_json["steps"]},
                         {("80", "cicc"): "served", ("80", "ptxas"): "served",
                          ("90", "cicc"): "compiled", ("90", "ptxas"): "compiled"})
        self.assertAlmostEqual(explained_json["saved_seconds"],
                               sum(s["seconds"] for s in explained_json["steps"]
                                   if s["outcome"] == "served"), places=6)
        stats = json.loads(harness.run([NVFRESH, "stats", "--json", "-C", build], env=self.env,
                                       check=True).stdout)["steps"]
        per_arch = stats["per_arch"]
        self.assertEqual(stats["total"], 8)
        self.assertEqual(stats["kinds"]["served"]["count"], 2)
        self.assertEqual(stats["kinds"]["compiled"]["count"], 6)
        self.assertEqual(stats["kinds"]["served"]["causes"]["cache_hit"]["count"], 2)
        self.assertEqual(stats["kinds"]["compiled"]["causes"]["step_not_cached"]["count"], 6)
        for tool in ("cicc", "ptxas"):
            self.assertEqual(per_arch["80"][tool]["served"]["count"], 1)
            self.assertEqual(per_arch["80"][tool]["compiled"]["count"], 1)
            self.assertEqual(per_arch["90"][tool]["compiled"]["count"], 2)
            self.assertNotIn("served", per_arch["90"][tool])
            # A hit saved what the stored run took: the first build's run time of that step.
            self.assertEqual(per_arch["80"][tool]["served"]["seconds"],
                             per_arch["80"][tool]["compiled"]["seconds"])
            self.assertGreater(per_arch["80"][tool]["served"]["seconds"], 0)
        text = harness.run([NVFRESH, "stats", "-C", build], env=self.env,
                           check=True).stdout.decode()
        self.assertIn("steps of nvcc (the step cache): 8", text)
        self.assertRegex(text, r"served +2 +nvcc time saved")
        self.assertRegex(text, r"compiled +6 +nvcc time")
        self.assertRegex(text, r"\n +80 +cicc +compiled 1 \(nvcc time [0-9.]+ s\)  served 1 "
                               r"\(nvcc time saved [0-9.]+ s\)")

    def tamper_cicc_entries(self):
        """Appends a PTX comment to every stored cicc output: ptxas still compiles it, so only a
        comparison with cicc's own output tells the entry is not what cicc gives."""
        tool = harness.tool_path("step_edit_tool")
        edited = [harness.run([tool, str(entry), "compute_", "\n// tampered\n"]).returncode
                  for entry in (self.root / "cache").rglob("*.step")]
        self.assertEqual(sorted(edited), [0, 0, 1, 1], "expected two cicc and two ptxas entries")

    def test_sampled_step_hit_runs_the_tool_and_catches_a_tampered_entry(self):
        self.make_tree()
        self.steps_of_build()
        self.tamper_cicc_entries()
        before = len(self.step_events())
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(set(self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"}).values()),
                         {"runs"}, "a sampled hit must run the tool")
        outcomes = {(pass_name, tool): (kind, cause)
                    for kind, cause, pass_name, tool, _ in self.step_events()[before:]}
        self.assertEqual(outcomes, {("compute_80", "cicc"): ("compiled", "cache_mismatch"),
                                    ("compute_90", "cicc"): ("compiled", "cache_mismatch"),
                                    ("sm_80", "ptxas"): ("compiled", "cache_verified"),
                                    ("sm_90", "ptxas"): ("compiled", "cache_verified")})
        self.assertIn("differs from the step entry", self.step_events()[-4:][0][4] +
                      self.step_events()[-4:][2][4])
        counters = json.loads(harness.run([NVFRESH, "cache", "stats", "--json"], env=self.env,
                                          check=True).stdout)
        self.assertEqual(counters["verify_mismatches"], 2)
        self.assertEqual(counters["verified"], 2)
        # The real output was used, and replaced the tampered entry: the next hit serves cicc's own.
        self.assertNotIn(b"tampered", self.tree.object("k.cu.o").read_bytes())
        self.assert_like_plain_compile()
        self.set_values(HOST_TEXT='"host-3"')
        self.assertEqual(set(self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"}).values()),
                         {"runs"})
        self.assertEqual({cause for _, cause, _, _, _ in self.step_events()[-4:]},
                         {"cache_verified"})

    def test_added_arch_runs_only_its_steps(self):
        self.make_tree(architectures="80")
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "runs",
                                                 ("sm_80", "ptxas"): "runs"})
        harness.write(self.source / "CMakeLists.txt",
                      project.cmake_lists([Target("k", "k.cu", architectures="80;90")]))
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served",
                                                 ("compute_90", "cicc"): "runs",
                                                 ("sm_90", "ptxas"): "runs"})
        self.assert_like_plain_compile()

    def test_relocatable_device_code_serves_its_steps(self):
        # -rdc=true: cicc reads nvcc's module id file too (a temporary file it is given, keyed by
        # content); the module id hashes the source path, so a host-only edit keeps it.
        self.make_tree(options=["-rdc=true"])
        self.assertEqual(set(self.steps_of_build().values()), {"runs"})
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(), {("compute_80", "cicc"): "served",
                                                 ("sm_80", "ptxas"): "served",
                                                 ("compute_90", "cicc"): "served",
                                                 ("sm_90", "ptxas"): "served"})
        served = self.tree.object("k.cu.o").read_bytes()
        self.assertIn(b"host-2", served)
        self.assertIn(b"__nv_relfatbin", served, "not a relocatable-device-code object")
        self.assert_like_plain_compile()

    def test_device_edit_in_every_arch_serves_nothing(self):
        self.make_tree()
        self.steps_of_build()
        self.set_values(COMMON_VALUE="2")
        self.assertEqual(set(self.steps_of_build().values()), {"runs"})
        self.assert_like_plain_compile()

    def test_concurrent_builds_share_one_cache(self):
        # Two build trees of one source build at once, twice (the second time after a host-only
        # edit): whatever each step finds (stored by the other tree a moment before, or not yet),
        # every object equals a plain compile.
        self.make_tree()
        other = BuildTree(self.source, self.root / "build2", self.TOOL, env=self.env)
        other.configure()
        for host in ('"host-1"', '"host-2"'):
            self.set_values(HOST_TEXT=host)
            running = [tree.start_build() for tree in (self.tree, other)]
            for tree, process in zip((self.tree, other), running):
                tree.finish_build(process)
            compared = harness.run([NVFRESH, "compare", str(self.tree.object("k.cu.o")),
                                    str(other.object("k.cu.o"))])
            self.assertEqual(compared.returncode, 0, compared.stdout.decode())
        self.assertIn("served", set(STEP_RE.findall(self.log.read_text())[-1]))
        self.assert_like_plain_compile()

    def test_damaged_step_entry_is_a_miss(self):
        self.make_tree()
        self.steps_of_build()
        entries = list((self.root / "cache").rglob("*.step"))
        self.assertEqual(len(entries), 4)
        for entry in entries:
            data = bytearray(entry.read_bytes())
            data[len(data) // 2] ^= 0x5A
            entry.write_bytes(bytes(data))
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(set(self.steps_of_build().values()), {"runs"})
        self.assert_like_plain_compile()

    def test_failing_tool_is_never_stored(self):
        # cicc rejects a call of a host function from a kernel; plain nvcc prints the same error.
        self.make_tree()
        bad = KERNEL.replace("out[1] = COMMON_VALUE;", "out[1] = host_text()[0];")
        harness.write(self.source / "k.cu", bad)
        failed = harness.run(["cmake", "--build", str(self.tree.build_dir)],
                             env=self.tree.merged_env(None))
        self.assertNotEqual(failed.returncode, 0)
        self.assertIn("runs", set(STEP_RE.findall(self.log.read_text())[0]))
        self.assertEqual(list((self.root / "cache").rglob("*.step")), [])
        plain = harness.run(["nvcc", "-arch=sm_80", "-I", str(self.source / "include"), "-c",
                             str(self.source / "k.cu"), "-o", str(self.root / "plain.o")])
        self.assertNotEqual(plain.returncode, 0)
        message = "calling a __host__ function"
        self.assertIn(message, plain.stderr.decode())
        self.assertIn(message, failed.stdout.decode() + failed.stderr.decode())


class StepCacheMake(StepCacheTree, harness.unittest.TestCase):
    """The same through CMake's Makefiles generator, whose compile lines take their flags and
    include directories from options files (includes_CUDA.rsp)."""
    TOOL = project.MAKE

    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-step-cache-make-")
        cls.counter = 0

    def test_host_edit_that_moves_lines_serves_every_device_step(self):
        self.check_moved_lines_are_served()


if __name__ == "__main__":
    harness.main()
