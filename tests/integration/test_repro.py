"""`nvfresh repro` with the real nvcc: identical compiles are one variant; a forced variation (a wrapper
"nvcc" that alternates two -D values per run) is found, kept and diffed; a failing compile exits 2;
the heap-noise library reaches every process a perturbed run starts and moves its allocations.
"""
import json
import stat
import sys

import harness

KERNEL_SOURCE = """\
#ifndef STEP
#define STEP 1
#endif
__global__ void add_step(int* p) { p[threadIdx.x] += STEP; }
__global__ void scale(float* p, float s) { p[threadIdx.x] *= s; }
"""
BROKEN_SOURCE = "__global__ void broken(int* p) { p[threadIdx.x] += undeclared_name; }\n"
RUNS = 4

# Each call takes the next number from a counter file: odd calls compile with STEP=2.
ALTERNATING_WRAPPER = """\
#!/bin/sh
counter="{counter}"
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$counter"
if [ $((n % 2)) -eq 0 ]; then step=1; else step=2; fi
exec "{nvcc}" -DSTEP=$step "$@"
"""

# Started by the wrapper below inside each run: how much heap is in use when main() starts and
# where three fresh blocks land relative to each other.
HEAP_PROBE_SOURCE = """\
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  struct mallinfo2 info = mallinfo2();
  char* a = malloc(48); char* b = malloc(48); char* c = malloc(200);
  printf("%zu %ld %ld\\n", info.uordblks, (long)(b - a), (long)(c - a));
  return 0;
}
"""
PROBING_WRAPPER = """\
#!/bin/sh
echo "${{NVFRESH_HEAP_NOISE:-none}} $("{probe}")" >> "{log}"
exec "{nvcc}" "$@"
"""


class ReproRealNvcc(harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nvcc = harness.require_nvcc()

    def setUp(self):
        self.work = harness.make_workdir("nvfresh-repro-")
        harness.write(self.work / "k.cu", KERNEL_SOURCE)
        self.out = self.work / "repro-out"

    def repro(self, compiler, source="k.cu", jobs=2, flags=(), options=()):
        command = [harness.nvfresh_bin(), "repro", "-n", str(RUNS), "-j", str(jobs), "--out", str(self.out), "--json",
                   *options, "--", compiler, "-c", "-arch=sm_80", *flags, source, "-o", "k.o"]
        result = harness.run(command, cwd=self.work)
        stdout = result.stdout.decode(errors="replace")
        stderr = result.stderr.decode(errors="replace")
        report = json.loads(stdout) if stdout.strip().startswith("{") else None
        return result.returncode, report, stderr

    def test_touched_sources_with_line_info_are_one_variant(self):
        # -lineinfo and -G write k.cu's mtime into the cubin's line table; --touch-sources gives each
        # run its own, which the digests must read as noise. The wrapper notes the mtime each run saw.
        seen = self.work / "mtimes"
        wrapper = self.work / "nvcc_noting_mtime"
        harness.write(wrapper, f'#!/bin/sh\nstat -c %Y "{self.work}/k.cu" >> "{seen}"\nexec "{self.nvcc}" "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
        original = (self.work / "k.cu").stat().st_mtime_ns
        for flags in (["-lineinfo"], ["-G"]):
            with self.subTest(flags=flags):
                seen.unlink(missing_ok=True)
                code, report, stderr = self.repro(str(wrapper), jobs=1, flags=flags, options=["--touch-sources"])
                self.assertEqual(code, 0, stderr)
                self.assertEqual(len(report["variants"]), 1, report["variants"])
                self.assertEqual(len(set(seen.read_text().split())), RUNS, "each run must see its own mtime")
                self.assertEqual((self.work / "k.cu").stat().st_mtime_ns, original, "k.cu's mtime was not restored")

    def test_identical_compiles_are_one_variant(self):
        code, report, stderr = self.repro(self.nvcc)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(report["runs"]), RUNS)
        self.assertEqual(len(report["variants"]), 1)
        self.assertEqual(report["variants"][0]["runs"], list(range(RUNS)))
        self.assertEqual(sorted(p.name for p in self.out.iterdir()), ["report.json", "variant-1"])
        self.assertTrue((self.out / "variant-1" / "k.o").is_file())
        self.assertFalse((self.work / "k.o").exists(), "repro must not write the user's output")
        # Run 0 is the control; the others list their perturbations.
        if "unavailable" in report["aslr_control"]:
            print(f"NOTE: no ASLR-off control here: {report['aslr_control']}", file=sys.stderr)
        else:
            self.assertEqual(report["runs"][0]["perturbations"], "control: ASLR off")
            self.assertTrue(report["runs"][0]["aslr_off"])
        self.assertTrue(all("env +" in run["perturbations"] for run in report["runs"][1:]))

    def test_debug_builds_are_one_variant_despite_private_tmpdirs(self):
        # nvcc writes the TMPDIR path of its .cudafe1.cpp into host debug info; repro factors it out.
        code, report, stderr = self.repro(self.nvcc, flags=("-g", "-G"))
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(report["variants"]), 1)

    def test_forced_variation_gives_two_variants_kept_and_diffed(self):
        wrapper = self.work / "alternating-nvcc"
        wrapper.write_text(ALTERNATING_WRAPPER.format(counter=self.work / "counter", nvcc=self.nvcc))
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        code, report, stderr = self.repro(str(wrapper), jobs=1)
        self.assertEqual(code, 1, stderr)
        variants = report["variants"]
        self.assertEqual(len(variants), 2)
        self.assertEqual(variants[0]["runs"], [0, 2])
        self.assertEqual(variants[1]["runs"], [1, 3])
        self.assertIn("sm_80 cubin", variants[1]["differing_components"])
        self.assertNotIn("host code", variants[1]["differing_components"])
        cubin = {c["key"]: c for c in variants[1]["comparison"]["components"]}["sm_80 cubin"]
        self.assertEqual([k["name"] for k in cubin["kernels"]], ["_Z8add_stepPi"])
        self.assertTrue((self.out / "variant-1" / "k.o").is_file())
        self.assertTrue((self.out / "variant-2" / "k.o").is_file())
        diff = (self.out / "variant-2.diff").read_text()
        self.assertIn("_Z8add_stepPi", diff)
        self.assertFalse((self.out / "variant-3.diff").exists())

    def test_heap_noise_reaches_the_compiler_processes_and_moves_their_allocations(self):
        probe = self.work / "heap-probe"
        harness.write(self.work / "heap_probe.c", HEAP_PROBE_SOURCE)
        harness.run(["gcc", "-O0", str(self.work / "heap_probe.c"), "-o", str(probe)], check=True)
        baseline = harness.run([str(probe)], check=True).stdout.decode().split()
        log = self.work / "heap.log"
        wrapper = self.work / "probing-nvcc"
        wrapper.write_text(PROBING_WRAPPER.format(probe=probe, log=log, nvcc=self.nvcc))
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        code, report, stderr = self.repro(str(wrapper), jobs=1)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(len(report["variants"]), 1, "nvcc compiles the same code under heap noise")
        self.assertIn("libnvfresh_heap_noise.so preloaded", report["heap_noise"])
        lines = [line.split() for line in log.read_text().splitlines()]
        self.assertEqual(len(lines), RUNS)
        control = [line[1:] for line in lines if line[0] == "none"]
        noisy = {line[0]: line[1:] for line in lines if line[0] != "none"}
        self.assertEqual(control, [baseline], "the control run has no heap noise")
        self.assertEqual(len(noisy), RUNS - 1, lines)
        for seed, (in_use, _, _) in noisy.items():
            self.assertIn(f"heap noise {seed}", " ".join(r["perturbations"] for r in report["runs"]))
            self.assertGreater(int(in_use), int(baseline[0]), f"seed {seed}: no blocks allocated before main")
        self.assertEqual(len({tuple(layout) for layout in noisy.values()}), RUNS - 1,
                         f"every seed gives another heap layout: {noisy}")

    def test_failing_compile_exits_2_and_shows_stderr(self):
        harness.write(self.work / "broken.cu", BROKEN_SOURCE)
        code, report, stderr = self.repro(self.nvcc, source="broken.cu")
        self.assertEqual(code, 2, stderr)
        self.assertIn("undeclared_name", stderr)
        self.assertTrue(all(run["failed"] for run in report["runs"]))
        self.assertTrue((self.out / "run-0.stderr").is_file())

    def test_refuses_a_link(self):
        result = harness.run([harness.nvfresh_bin(), "repro", "--", self.nvcc, "a.o", "b.o", "-o", "app"],
                             cwd=self.work)
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"single-source", result.stderr)


if __name__ == "__main__":
    harness.main()
