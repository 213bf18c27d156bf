"""Per-pass times with real nvcc 13.0, CMake and Ninja: `explain` splits the last compile's time.

The tracer sends when each program of a compile started and ended; the record keeps it, and
`nvfresh explain` (and `--json`) shows host, per arch cicc and ptxas, and fatbinary. A two-arch
(80;90) project is built once (every step runs), then again after a host-only edit (the step cache
serves every cicc and ptxas: explain says "served" for them, not a time).
"""
import json

import harness
from test_step_cache import StepCacheTree

NVFRESH = harness.nvfresh_bin()


class PassTimes(StepCacheTree, harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-pass-times-")
        cls.counter = 0

    def explain(self, *extra):
        result = harness.run([NVFRESH, "explain", "-C", str(self.tree.build_dir), "k.cu.o", *extra],
                             env=self.env, check=True)
        return result.stdout.decode()

    def test_explain_shows_cicc_and_ptxas_per_arch_in_order(self):
        self.make_tree()
        self.steps_of_build()
        (obj,) = json.loads(self.explain("--json"))["objects"]
        passes = obj["passes"]
        rows = {(row["part"], row["kind"]): row for row in passes["split"]}
        for part in ("sm_80", "sm_90"):
            for kind in ("cicc", "ptxas"):
                row = rows[(part, kind)]
                self.assertGreaterEqual(row["runs"], 1, (part, kind))
                self.assertGreater(row["seconds"], 0, (part, kind))
        self.assertIn(("link", "fatbinary"), rows)
        self.assertIn(("host", "cudafe++"), rows)
        self.assertIn(("host", "host compiler"), rows)
        nvcc_ns = round(passes["nvcc_seconds"] * 1e9)
        self.assertGreater(nvcc_ns, 0)
        self.assertLessEqual(passes["nvcc_seconds"], obj["wall_seconds"],
                             "nvcc ran longer than the compile that started it")
        programs = passes["programs"]
        self.assertEqual([p["start_ns"] for p in programs], sorted(p["start_ns"] for p in programs))
        for program in programs:
            self.assertLessEqual(0, program["start_ns"], program)
            self.assertLess(program["start_ns"], program["end_ns"], program)
            self.assertLessEqual(program["end_ns"], nvcc_ns, program)
            self.assertFalse(program["served"], program)

        def first(kind, pass_name):
            return next(p for p in programs if p["kind"] == kind and p["pass"] == pass_name)
        for arch in ("80", "90"):  # each arch's ptxas assembles what its cicc wrote
            self.assertLessEqual(first("cicc", f"compute_{arch}")["end_ns"],
                                 first("ptxas", f"sm_{arch}")["start_ns"])
        text = self.explain()
        for line in ("sm_80     cicc", "sm_80     ptxas", "sm_90     cicc", "sm_90     ptxas",
                     "link      fatbinary"):
            self.assertRegex(text, line + r" +\d+\.\d\d s\n")

    def test_served_steps_say_served(self):
        self.make_tree()
        self.steps_of_build()
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(set(self.steps_of_build().values()), {"served"})
        text = self.explain()
        for part in ("sm_80", "sm_90"):
            for kind in ("cicc", "ptxas"):
                self.assertRegex(text, rf"{part} +{kind} +served\n")
        self.assertRegex(text, r"host +host compiler +\d+\.\d\d s\n")
        (obj,) = json.loads(self.explain("--json"))["objects"]
        served = [p for p in obj["passes"]["programs"] if p["served"]]
        self.assertEqual(sorted((p["kind"], p["pass"]) for p in served),
                         [("cicc", "compute_80"), ("cicc", "compute_90"),
                          ("ptxas", "sm_80"), ("ptxas", "sm_90")])


if __name__ == "__main__":
    harness.unittest.main()
