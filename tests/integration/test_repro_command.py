"""`nvfresh repro --artifact GLOB -- <any command>`: the generic mode, on pipelines that really vary.

The pipeline is tests/integration/pipelines/address_codegen.py: it writes a cut-down CuTe DSL kernel
in variant A or B depending on one bit of a heap address (ASLR and heap noise move it), with the
registers renumbered by the generator, as libNVVM 13.3's variants were. repro must find both
variants, keep them, and show the 7-line change; a fixed pipeline must be one variant with what the
runs rule out; every run gets its own working directory, TMPDIR and compile caches (a pipeline with
a cache shared between runs would hide the variation); the in-process helper's samples are
observations; a whole CMake build (Ninja and Makefiles) is a pipeline too.
"""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import harness

PIPELINE = Path(__file__).resolve().parent / "pipelines" / "address_codegen.py"
PYTHON_PACKAGE = Path(__file__).resolve().parents[2] / "python"
# Each perturbed run picks A or B with probability about 1/2: 16 runs (15 perturbed) all pick the same
# with probability 2 * 0.5^15, about 6e-5.
VARYING_RUNS = 16
CMAKE_PROJECT = """\
cmake_minimum_required(VERSION 3.18)
project(pipeline LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES 80)
add_library(kernels STATIC k.cu)
"""
KERNEL_SOURCE = "__global__ void add_one(int* p) { p[threadIdx.x] += 1; }\n"


def process_alive(pid):
    # A killed process reparented to an init that does not reap it stays a zombie: dead all the same.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


class ReproCommand(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-repro-command-")
        self.out = self.work / "repro-out"

    def repro(self, options, command, env=None):
        full = [harness.nvfresh_bin(), "repro", "-j", "2", "--out", str(self.out), *options, "--", *command]
        result = harness.run(full, cwd=self.work, env=env)
        stdout = result.stdout.decode(errors="replace")
        return result.returncode, stdout, result.stderr.decode(errors="replace")

    def repro_json(self, options, command, env=None):
        code, stdout, stderr = self.repro(["--json", *options], command, env)
        self.assertTrue(stdout.strip().startswith("{"), f"no JSON report (exit {code}):\n{stdout}\n{stderr}")
        return code, json.loads(stdout), stderr

    def codegen(self, *flags):
        return [sys.executable, str(PIPELINE), *flags]

    def test_an_address_dependent_pipeline_gives_two_variants_kept_and_diffed(self):
        code, report, stderr = self.repro_json(["-n", str(VARYING_RUNS), "--artifact", "*.ptx"], self.codegen())
        self.assertEqual(code, 1, stderr)
        self.assertEqual(report["mode"], "command")
        variants = report["variants"]
        self.assertEqual(len(variants), 2, [r["variant"] for r in report["runs"]])
        self.assertEqual(sorted(variants[0]["runs"] + variants[1]["runs"]), list(range(VARYING_RUNS)))
        self.assertEqual(variants[1]["differing_components"], ["kernel.ptx: sm_100a ptx"])
        component = variants[1]["artifacts"][0]["comparison"]["components"][0]
        self.assertEqual(component["ptx_changed_lines"], 7, component["ptx_diff"])
        self.assertEqual([k["name"] for k in component["kernels"]], ["kernel_cutlass_kernel_fmha_demo_0"])
        for variant in variants:
            self.assertTrue((Path(variant["kept"]) / "kernel.ptx").is_file())
        diff = Path(variants[1]["diff"]).read_text()
        self.assertIn("kernel kernel_cutlass_kernel_fmha_demo_0: instructions", diff)
        self.assertIn("or.b64", diff)
        self.assertIn("7 changed lines in 3 hunks", diff)
        self.assertIsNone(report["ruled_out"])
        self.assertFalse((self.work / "kernel.ptx").exists(), "runs must not write into repro's own directory")

    def test_the_human_report_names_the_variant_rates_and_the_kernel(self):
        code, stdout, stderr = self.repro(["-n", str(VARYING_RUNS), "--artifact", "*.ptx"], self.codegen())
        self.assertEqual(code, 1, stderr)
        self.assertRegex(stdout, r"variant 2: \d+ runs? \([\d ]+\); \d+ of \d+ perturbed runs \([\d.]+%\)")
        self.assertIn("kernels: kernel.ptx: sm_100a ptx: kernel_cutlass_kernel_fmha_demo_0", stdout)
        self.assertIn("artifacts: *.ptx in each run's working directory", stdout)
        self.assertRegex(stdout, r"time per run: [\d.]+ s mean")
        self.assertIn("result: NOT deterministic", stdout)

    def test_a_fixed_pipeline_is_one_variant_and_the_report_says_what_it_rules_out(self):
        code, stdout, stderr = self.repro(["-n", "12", "--artifact", "*.ptx"], self.codegen("--fixed"))
        self.assertEqual(code, 0, stderr)
        rate = 100 * (1 - 0.05 ** (1 / 11))
        self.assertIn(f"no variant seen in 11 perturbed runs: a variant of >= {rate:.3g}% would have been seen "
                      "with 95% probability", stdout)
        self.assertIn("result: deterministic", stdout)

    def test_without_n_the_run_count_comes_from_detect_and_confidence(self):
        # ceil(ln(1 - 0.9) / ln(1 - 0.5)) = 4 perturbed runs, plus the control.
        code, report, stderr = self.repro_json(["--detect", "0.5", "--confidence", "0.9", "--artifact", "*.ptx"],
                                               self.codegen("--fixed"))
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(report["runs"]), 5)
        self.assertEqual(report["detect"], 0.5)
        self.assertEqual(report["ruled_out"], "no variant seen in 4 perturbed runs: a variant of >= 50% would have "
                                              "been seen with 90% probability")
        code, stdout, stderr = self.repro(["--detect", "2", "--artifact", "*.ptx"], self.codegen())
        self.assertEqual(code, 2)
        self.assertIn("--detect 2 is not a frequency", stderr)

    def test_each_run_has_its_own_working_directory_tmpdir_and_caches(self):
        source = self.work / "inputs"
        harness.write(source / "counter.txt", "start\n")
        harness.write(source / "nvfresh-repro-20260101-000000" / "old.txt", "an earlier report: not copied\n")
        script = harness.write(source / "step.sh", "echo step >> counter.txt\ncp counter.txt seen.txt\n"
                               "ls -A \"$TMPDIR\" | wc -l > tmp_entries.txt\n"
                               "echo \"$PWD $TMPDIR $TRITON_CACHE_DIR $CUTE_DSL_CACHE_DIR\" > where.txt\n"
                               "ls > listing.txt\n")
        code, report, stderr = self.repro_json(["-n", "4", "--workdir-copy", str(source), "--artifact", "*.txt"],
                                               ["sh", "step.sh"])
        self.assertEqual(code, 0, stderr)
        # where.txt differs in every run (run-00000, run-00001, ...), yet the runs are one variant: the
        # runs' own directory names are factored out of the digests.
        self.assertEqual(len(report["variants"]), 1, report["variants"])
        kept = Path(report["variants"][0]["kept"])
        self.assertEqual((kept / "seen.txt").read_text(), "start\nstep\n", "each run starts from a fresh copy")
        self.assertEqual((kept / "tmp_entries.txt").read_text().strip(), "0", "TMPDIR is empty at the start")
        cwd, tmp, triton, cute = (kept / "where.txt").read_text().split()
        self.assertIn("/run-00000/", cwd)
        self.assertEqual(Path(tmp).parent, Path(cwd).parent)
        self.assertTrue(triton.endswith("/run-00000/cache/TRITON_CACHE_DIR"), triton)
        self.assertTrue(cute.endswith("/run-00000/cache/CUTE_DSL_CACHE_DIR"), cute)
        self.assertEqual((source / "counter.txt").read_text(), "start\n", "the directory copied is left alone")
        self.assertEqual((kept / "listing.txt").read_text().split(), ["counter.txt", "listing.txt", "seen.txt", "step.sh", "tmp_entries.txt",
                                                                  "where.txt"],
                         "repro's own earlier reports are not copied into the runs")
        self.assertTrue(script.is_file())

    def test_a_shared_compile_cache_is_replaced_by_a_private_one_and_named(self):
        shared = self.work / "shared-triton-cache"
        shared.mkdir()
        env = {"TRITON_CACHE_DIR": str(shared)}
        # Without nvfresh, the cache hides the variation: the second compile replays the first.
        first, second = self.work / "first", self.work / "second"
        for directory in (first, second):
            directory.mkdir()
            harness.run(self.codegen("--cache-var", "TRITON_CACHE_DIR"), cwd=directory, env=env, check=True)
        self.assertEqual((second / "cache.txt").read_text(), "hit\n")
        self.assertEqual((first / "kernel.ptx").read_bytes(), (second / "kernel.ptx").read_bytes())
        shutil.rmtree(shared)
        shared.mkdir()
        code, report, stderr = self.repro_json(["-n", str(VARYING_RUNS), "--artifact", "*.ptx", "--artifact", "cache.txt"],
                                               self.codegen("--cache-var", "TRITON_CACHE_DIR"), env)
        self.assertEqual(code, 1, stderr)
        self.assertEqual(len(report["variants"]), 2, "each run compiled for itself, so the variation shows")
        for variant in report["variants"]:
            self.assertEqual((Path(variant["kept"]) / "cache.txt").read_text(), "miss\n")
        warning = [line for line in stderr.splitlines() if "TRITON_CACHE_DIR" in line]
        self.assertEqual(len(warning), 1, stderr)
        self.assertIn(f"TRITON_CACHE_DIR={shared} (Triton cache) is set here; each run uses its own empty directory",
                      warning[0])
        self.assertEqual(report["warnings"], [warning[0].removeprefix("nvfresh repro: ")])
        self.assertEqual(list(shared.iterdir()), [], "no run used the shared cache")

    def test_in_process_samples_are_observations(self):
        env = {"PYTHONPATH": str(PYTHON_PACKAGE)}
        code, report, stderr = self.repro_json(["-n", "2", "--artifact", "*.ptx"], self.codegen("--samples", "24"), env)
        self.assertEqual(code, 1, stderr)
        self.assertEqual([run["samples"] for run in report["runs"]], [24, 24])
        self.assertEqual([len(run["sample_variants"]) for run in report["runs"]], [24, 24])
        variants = report["variants"]
        self.assertEqual(len(variants), 2)
        samples = sorted((s["run"], s["sample"]) for v in variants for s in v["samples"])
        self.assertEqual(samples, [(run, sample) for run in (0, 1) for sample in range(24)])
        self.assertTrue((Path(variants[1]["kept"]) / "kernel.ptx").is_file())
        code, stdout, stderr = self.repro(["-n", "2", "--artifact", "*.ptx"], self.codegen("--samples", "3", "--fixed"), env)
        self.assertEqual(code, 0, stderr)
        self.assertIn("variants: 1 in 2 successful runs (6 samples)", stdout)
        self.assertIn("that bound counts runs: the samples of one process are not independent draws", stdout)

    def test_a_failing_command_or_a_glob_that_matches_nothing_fails_the_run(self):
        code, report, stderr = self.repro_json(["-n", "2", "--artifact", "*.ptx"], ["sh", "-c", "echo broken >&2; exit 3"])
        self.assertEqual(code, 2)
        self.assertIn("broken", stderr)
        self.assertTrue(all(run["failed"] and run["exit_code"] == 3 for run in report["runs"]))
        code, report, stderr = self.repro_json(["-n", "2", "--artifact", "*.ptx", "--artifact", "*.cubin"], self.codegen())
        self.assertEqual(code, 2)
        self.assertIn("--artifact *.cubin matched no file in the working directory (it holds: kernel.ptx, where.txt)",
                      stderr)
        code, _, stderr = self.repro(["--artifact", "/tmp/*.ptx"], self.codegen())
        self.assertEqual(code, 2)
        self.assertIn("relative to the run's working directory", stderr)
        code, _, stderr = self.repro(["--workdir-copy", str(self.work)], ["nvcc", "-c", "k.cu"])
        self.assertEqual(code, 2)
        self.assertIn("--workdir-copy goes with --artifact", stderr)

    def test_a_run_past_its_timeout_is_killed_with_what_it_started(self):
        child_pid = self.work / "child.pid"
        command = ["sh", "-c", f"touch f; sleep 1000 & echo $! > {child_pid}; wait"]
        code, report, stderr = self.repro_json(["-n", "1", "--timeout", "2", "--artifact", "f"], command)
        self.assertEqual(code, 2, stderr)
        self.assertIn("run 0 TIMED OUT: timed out after 2 s (--timeout)", stderr)
        self.assertTrue(report["runs"][0]["failed"])
        self.assertIn("timed out after 2 s", report["runs"][0]["error"])
        self.assertFalse(process_alive(int(child_pid.read_text())), "the run's own child outlived the timeout")
        code, _, stderr = self.repro(["--timeout", "-1", "--artifact", "f"], ["true"])
        self.assertEqual(code, 2)
        self.assertIn("--timeout", stderr)

    def test_an_interrupted_repro_reports_the_runs_that_finished_and_cleans_up(self):
        tmp = self.work / "tmp"
        tmp.mkdir()
        first, hanging = self.work / "first-done", self.work / "hanging"
        script = f"touch f; if [ -e {first} ]; then touch {hanging}; exec sleep 1000; fi; touch {first}"
        full = [harness.nvfresh_bin(), "repro", "-j", "1", "-n", "4", "--out", str(self.out), "--artifact", "f",
                "--", "sh", "-c", script]
        env = dict(os.environ, TMPDIR=str(tmp))
        with subprocess.Popen(full, cwd=self.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as repro:
            while not hanging.exists() and repro.poll() is None:
                time.sleep(0.05)
            repro.send_signal(signal.SIGINT)
            stdout, stderr = repro.communicate()
        stderr = stderr.decode(errors="replace")
        self.assertEqual(repro.returncode, 128 + signal.SIGINT, stderr)
        self.assertIn("interrupted by SIGINT after starting 2 of 4 runs", stderr)
        self.assertIn("interrupted", stdout.decode(errors="replace"))
        report = json.loads((self.out / "report.json").read_text())
        self.assertEqual([run["failed"] for run in report["runs"]], [False, True])
        self.assertIn("interrupted", report["runs"][1]["error"])
        self.assertEqual(list(tmp.iterdir()), [], "the runs' directories were left behind")

    def test_run_counts_are_bounded_and_one_run_claims_nothing(self):
        code, _, stderr = self.repro(["--detect", "1e-9", "--artifact", "f"], ["touch", "f"])
        self.assertEqual(code, 2)
        self.assertIn("needs 2995732274 runs, more than the limit of 100000", stderr)
        code, report, stderr = self.repro_json(["-n", "1", "--artifact", "f"], ["touch", "f"])
        self.assertEqual(code, 0, stderr)
        self.assertEqual(report["ruled_out"], "no perturbed run (the control alone): no variant frequency is ruled out")

    def test_an_artifact_over_256_mib_is_digested(self):
        # A sparse file: cheap to make, and read as 300 MiB of zeros (it used to fail as "cannot be read").
        code, report, stderr = self.repro_json(["-n", "1", "--artifact", "big.so"], ["truncate", "-s", "300M", "big.so"])
        self.assertEqual(code, 0, stderr)
        self.assertFalse(report["runs"][0]["failed"])

    def test_progress_goes_to_stderr_on_a_terminal_only(self):
        import os
        import pty
        import subprocess
        options = ["-n", "3", "-j", "1", "--out", str(self.out), "--artifact", "*.ptx", "--"]
        primary, secondary = pty.openpty()
        try:
            result = subprocess.run([harness.nvfresh_bin(), "repro", *options, *self.codegen("--fixed")], cwd=self.work,
                                    stdout=subprocess.PIPE, stderr=secondary)
            os.close(secondary)
            secondary = -1
            shown = b""
            while True:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:  # EIO: the terminal's other end is closed and drained
                    break
                if not chunk:
                    break
                shown += chunk
        finally:
            os.close(primary)
            if secondary >= 0:
                os.close(secondary)
        self.assertEqual(result.returncode, 0)
        text = shown.decode(errors="replace")
        self.assertRegex(text, r"nvfresh repro: 3/3, [0-9.]+/s, \d+ s, 0 running, 0 failed, 1 variant so far")
        self.assertTrue(text.endswith("\r\x1b[K"), "the line is erased at the end")
        self.assertNotIn(b"variant so far", result.stdout, "progress is not part of the report")
        self.assertNotIn(b"\x1b[K", result.stdout)
        code, _, stderr = self.repro(["-n", "2", "--artifact", "*.ptx"], self.codegen("--fixed"))
        self.assertEqual(code, 0)
        self.assertNotIn("so far", stderr, "no progress when stderr is not a terminal")
        self.assertNotIn("\x1b[K", stderr)

    def test_nvcc_mode_points_to_the_command_mode_for_other_commands(self):
        code, _, stderr = self.repro([], ["python3", "compile.py"])
        self.assertEqual(code, 2)
        self.assertIn("--artifact GLOB", stderr)


class ReproCmakeBuild(harness.unittest.TestCase):
    """A whole CMake build is a pipeline: configure and build in each run's copy, digest its objects
    (normalized: their raw bytes differ in nvcc's tmpxft names; a static library holding them is
    compared by its bytes, which also hold ar's member times, so the test matches the objects)."""

    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        if shutil.which("cmake") is None:
            raise harness.unittest.SkipTest("no cmake")

    def build_through_repro(self, generator):
        work = harness.make_workdir("nvfresh-repro-cmake-")
        project = work / "project"
        harness.write(project / "CMakeLists.txt", CMAKE_PROJECT)
        harness.write(project / "k.cu", KERNEL_SOURCE)
        nvcc = harness.find_nvcc()
        build = (f"cmake -S . -B build -G '{generator}' -DCMAKE_CUDA_COMPILER={nvcc} >/dev/null && "
                 "cmake --build build >/dev/null")
        out = work / "out"
        result = harness.run([harness.nvfresh_bin(), "repro", "-n", "2", "-j", "2", "--json", "--out", str(out),
                              "--workdir-copy", str(project), "--artifact", "build/CMakeFiles/kernels.dir/**/*.o",
                              "--", "sh", "-c", build], cwd=work)
        stderr = result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, 0, stderr)
        report = json.loads(result.stdout)
        self.assertEqual(len(report["variants"]), 1, report["variants"])
        kept = Path(report["variants"][0]["kept"])
        self.assertEqual(sorted(p.name for p in kept.rglob("*.o")), ["k.cu.o"])
        self.assertEqual(report["variants"][0]["runs"], [0, 1])

    def test_ninja(self):
        if shutil.which("ninja") is None:
            self.skipTest("no ninja")
        self.build_through_repro("Ninja")

    def test_makefiles(self):
        self.build_through_repro("Unix Makefiles")


if __name__ == "__main__":
    harness.main()
