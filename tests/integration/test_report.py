"""`nvfresh report` on a real build of the bundled example (examples/cmake_project: CMake, Ninja,
real nvcc): built, a header edited (the one TU that reads it recompiles), an object deleted (served
from the cache), built again. Then:

- --json against what nvfresh recorded: each TU's compile time is its record's, the edited header
  costs what its TU's compile took, a header both TUs read costs the sum, the cache split counts
  the events log's lines (misses: the first compiles and the edit; hits: the deleted object);
- the HTML page rendered by headless Chromium (Debian's `chromium`, scripts/install_test_tools.sh): the
  numbers in its DOM (data-key attributes) are those of --json; nothing in it points outside
  the file; a screenshot is a PNG that is not blank.
Without chromium the rendering test fails under CI=true and is skipped (loudly) elsewhere.
"""
import json
import os
import shutil
import struct
import subprocess
import unittest
import zlib
from html.parser import HTMLParser

import harness
import project

NVCC = harness.require_nvcc()
EXAMPLE = harness.source_dir() / "examples" / "cmake_project"


class DataKeys(HTMLParser):
    """{data-key: the text of its element} of an HTML document."""

    def __init__(self):
        super().__init__()
        self.values = {}
        self.open = []  # [key or None] per open element
        self.text = {}

    def handle_starttag(self, tag, attrs):
        key = dict(attrs).get("data-key")
        self.open.append(key)
        if key is not None:
            self.text[key] = ""

    def handle_endtag(self, tag):
        if self.open:
            key = self.open.pop()
            if key is not None:
                self.values[key] = self.text[key].strip()

    def handle_data(self, data):
        for key in self.open:
            if key is not None:
                self.text[key] += data


def png_pixels_vary(data):
    """Whether a PNG's decoded scanlines hold more than one byte value besides the filter bytes."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    position, idat, width = 8, b"", 0
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width = struct.unpack(">I", body[:4])[0]
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    return width > 0 and len(set(raw)) > 16


def events_of(build):
    """[(kind, cause, seconds, object)] of the tree's events log."""
    events = []
    for line in (build / ".nvfresh" / "events.log").read_text().splitlines():
        fields = line.split("\t")
        events.append((fields[1], fields[2], int(fields[3]) / 1e9, fields[4]))
    return events


class ReportOfTheExample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = harness.make_workdir()
        cls.source = cls.work / "example"
        shutil.copytree(EXAMPLE, cls.source)
        cls.build = cls.work / "build"
        cls.tree = project.BuildTree(cls.source, cls.build, project.NINJA,
                                     env={"NVFRESH_CACHE_DIR": str(cls.work / "cache")})
        cls.tree.configure()
        cls.tree.build()
        with open(cls.source / "include" / "tile_math.h", "a") as header:
            # a change of code: a comment alone is served from the cache (lib/cache/code_text)
            header.write("#define NVFRESH_REPORT_TEST_EDIT 1\n")
        cls.tree.build()
        # the records name objects with symlinks resolved (the work directory is reached through one)
        cls.scale = os.path.realpath(cls.tree.object("scale.cu.o"))
        cls.attention = os.path.realpath(cls.tree.object("attention.cu.o"))
        os.remove(cls.scale)
        cls.tree.build()
        result = harness.nvfresh("report", "-C", str(cls.build), "--json", env=cls.tree.env)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        cls.report = json.loads(result.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def unit(self, obj):
        return next(u for u in self.report["units"] if u["object"] == str(obj))

    def cost(self, name):
        return next(c for c in self.report["header_costs"] if c["path"].endswith("/include/" + name))

    def test_json_numbers_are_the_records(self):
        events = events_of(self.build)
        attention_compiles = [e for e in events if e[3] == str(self.attention) and e[0] == "compiled"]
        self.assertEqual([e[1] for e in attention_compiles], ["no_record", "input_changed"])
        # the last compile of attention.cu is the edit's, and the record's time is nvcc's run time
        self.assertAlmostEqual(self.unit(self.attention)["compile_seconds"], attention_compiles[-1][2],
                               delta=0.05)
        self.assertGreater(self.unit(self.attention)["compile_seconds"], 0.05)
        self.assertEqual(self.report["objects"]["total"], 2)
        self.assertEqual(self.report["objects"]["fresh"], 2)

        tile_math = self.cost("tile_math.h")
        self.assertEqual(tile_math["objects"], [str(self.attention)])
        self.assertAlmostEqual(tile_math["cost_seconds"], self.unit(self.attention)["compile_seconds"])
        kernels = self.cost("kernels.h")
        self.assertEqual(sorted(kernels["objects"]), sorted([str(self.attention), str(self.scale)]))
        self.assertAlmostEqual(kernels["cost_seconds"], self.unit(self.attention)["compile_seconds"]
                               + self.unit(self.scale)["compile_seconds"])
        costs = [c["cost_seconds"] for c in self.report["header_costs"]]
        self.assertEqual(costs, sorted(costs, reverse=True))
        self.assertFalse([c for c in self.report["header_costs"]
                          if "/cuda" in c["path"] or c["path"].startswith("/usr/")])

        # where the edit's compile went: the tracer's program times, per part (host, each arch, link)
        passes = self.unit(self.attention)["passes"]
        kinds = {(row["part"], row["kind"]) for row in passes}
        arch_parts = {part for part, _ in kinds if part not in ("host", "link")}
        self.assertTrue(arch_parts, passes)
        for part in arch_parts:
            self.assertIn((part, "cicc"), kinds)
            self.assertIn((part, "ptxas"), kinds)
        self.assertIn(("host", "cudafe++"), kinds)
        self.assertLessEqual(sum(row["seconds"] for row in passes),
                             self.unit(self.attention)["compile_seconds"] + 0.01)

        cache = self.report["cache"]
        self.assertEqual(cache["hits"], len([e for e in events if e[0] == "served"]))
        self.assertEqual(cache["hits"], 1)
        self.assertEqual(cache["misses"], len([e for e in events if e[0] == "compiled"]))
        self.assertEqual(cache["miss_causes"], {"no_record": 2, "input_changed": 1})
        self.assertEqual(self.report["history"]["compiles"], len(events))
        self.assertEqual(self.report["last_build"]["outcomes"]["served"]["count"], 1)

        # the shared cache's own counters, as `nvfresh cache stats` gives them
        stats = harness.nvfresh("cache", "stats", "--json", env=self.tree.env)
        stats = json.loads(stats.stdout)
        store = self.report["store"]
        self.assertEqual(store["dir"], str(self.work / "cache"))
        for name in ("hits", "misses", "step_hits", "step_misses"):
            self.assertEqual(store[name], stats[name], name)
        self.assertEqual(store["hits"], 1)

        libkernels = next(a for a in self.report["artifacts"] if a["path"].endswith("libkernels.so"))
        self.assertEqual(sorted(o["object"] for o in libkernels["objects"]),
                         sorted([str(self.attention), str(self.scale)]))
        self.assertEqual({o["state"] for o in libkernels["objects"]}, {"fresh"})

    def test_page_renders_the_same_numbers_in_chromium(self):
        chromium = shutil.which("chromium")
        if chromium is None:
            harness.fail_under_ci_else_skip("chromium is missing (scripts/install_test_tools.sh installs it)")
        page = self.work / "report.html"
        result = harness.nvfresh("report", "-C", str(self.build), "-o", str(page), env=self.tree.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = page.read_text()
        self.assertNotIn("http://", text)
        self.assertNotIn("https://", text)
        self.assertNotIn("<script", text)

        profile = self.work / "chromium-profile"
        base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
        dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, check=True)
        keys = DataKeys()
        keys.feed(dom.stdout.decode())
        values = keys.values
        report = self.report
        self.assertEqual(values["objects.total"], str(report["objects"]["total"]))
        self.assertEqual(values["objects.fresh"], str(report["objects"]["fresh"]))
        self.assertEqual(values["cache.hits"], str(report["cache"]["hits"]))
        self.assertEqual(values["cache.misses"], str(report["cache"]["misses"]))
        self.assertEqual(values["history.compiles"], str(report["history"]["compiles"]))
        self.assertEqual(values["last_build.served"], "1")
        self.assertEqual(values["history.nvcc_seconds_spent"],
                         f'{report["history"]["nvcc_seconds_spent"]:.2f}')
        for cost in report["header_costs"]:
            self.assertEqual(values["header_cost:" + cost["path"]], f'{cost["cost_seconds"]:.2f}')
            self.assertEqual(values["header_tus:" + cost["path"]], str(len(cost["objects"])))
        for unit in report["units"]:
            self.assertEqual(values["unit_seconds:" + unit["object"]], f'{unit["compile_seconds"]:.2f}')
            self.assertEqual(values["unit_state:" + unit["object"]], unit["state"])
        for unit in report["units"]:
            parts = {}
            for row in unit["passes"]:
                parts[row["part"]] = parts.get(row["part"], 0.0) + row["seconds"]
            for part, seconds in parts.items():
                self.assertAlmostEqual(float(values[f'pass_seconds:{unit["object"]}:{part}']),
                                       seconds, delta=0.006)
        self.assertTrue(any(key.startswith("pass_seconds:") for key in values))
        self.assertEqual(values["cache_hits:" + str(self.scale)], "1")
        self.assertEqual(values["cache_misses:" + str(self.attention)], "2")
        self.assertEqual(values["store.hits"], str(report["store"]["hits"]))
        self.assertEqual(values["store.step_misses"], str(report["store"]["step_misses"]))
        hit_rate = 100 * report["cache"]["hits"] / (report["cache"]["hits"] + report["cache"]["misses"])
        self.assertEqual(values["cache.hit_rate"], f"{hit_rate:.1f}%")

        shot = self.work / "report.png"
        subprocess.run(base + [f"--screenshot={shot}", "--window-size=1100,1400", page.as_uri()],
                       capture_output=True, check=True)
        data = shot.read_bytes()
        self.assertEqual(struct.unpack(">II", data[16:24]), (1100, 1400))
        self.assertTrue(png_pixels_vary(data), "the screenshot is blank")


if __name__ == "__main__":
    harness.main()
