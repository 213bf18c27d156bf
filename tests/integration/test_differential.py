"""The differential tester in short (bench/differential.py, issue 39): random edits of real code,
each compiled through nvfresh with every cache on and by plain nvcc, and no edit may differ.

Two chains beside each other (--jobs 2), seed 1: ggml's arange.cu (from the llama-cpp-python
sdist) for sm_80 + sm_90, which gets the sm_90-only edit with seed 1, and the small CUB TU of the
script for sm_80 (the two cost about as much); every edit class once, the classes dealt out between
the two (--each-once: 19 classes, about 26 compiles after the first two, each done by nvfresh and by
plain nvcc). A differing edit fails the test with the script's report: the edit, both commands,
what differed, and where its files were kept (the scratch dir stays then).

The sources come from scripts/install_difftest_sources.sh (scripts/install_test_tools.sh runs it
before ctest starts); if it fails here: a failure under CI=true, else a loud skip.
"""
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

import harness

PROJECTS = "ggml:arange@80,90,cub-small@80"
JOBS = 2  # the chains, side by side


class Differential(unittest.TestCase):
    ctest_labels = ("slow",)

    def test_no_edit_differs_from_plain_nvcc(self):
        nvcc = harness.require_nvcc()
        installed = harness.run([str(harness.source_dir() / "scripts" / "install_difftest_sources.sh")])
        if installed.returncode != 0:
            harness.fail_under_ci_else_skip(
                "the differential tester's sources could not be fetched; it did NOT run\n"
                + installed.stderr.decode(errors="replace"))
        work = Path(tempfile.mkdtemp(prefix="nvfresh-differential-test-"))
        results_file = work / "results.json"
        script = harness.source_dir() / "bench" / "differential.py"
        result = harness.run([sys.executable, str(script), "--projects", PROJECTS, "--each-once",
                              "--jobs", str(JOBS), "--seed", "1", "--nvfresh", harness.nvfresh_bin(),
                              "--nvcc", nvcc, "--work", str(work / "run"), "--json", str(results_file)])
        output = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
        self.assertTrue(results_file.exists(), output)
        results = json.loads(results_file.read_text())
        differing = [r for r in results if r["verdict"] == "differs"]
        self.assertEqual(differing, [], output)
        self.assertEqual(result.returncode, 0, output)
        classes = self.edit_classes(script)
        tried = {r["cls"] for r in results if r["verdict"] != "no-site"}
        self.assertEqual(sorted(set(classes) - tried), [], "edit classes that never ran\n" + output)
        kinds = {r["kind"] for r in results}
        self.assertTrue({"compiled", "served", "skipped"} <= kinds,
                        f"nvfresh never compiled, served or skipped: {kinds}\n{output}")
        self.assertGreater(sum(r["steps_served"] for r in results), 0, output)
        shutil.rmtree(work, ignore_errors=True)  # kept when the test failed

    @staticmethod
    def edit_classes(script):
        listed = harness.run([sys.executable, str(script), "--list"], check=True).stdout.decode()
        line = next(line for line in listed.splitlines() if line.startswith("edit classes: "))
        return [name.strip() for name in line.split(": ", 1)[1].split(",")]


if __name__ == "__main__":
    unittest.main(verbosity=2)
