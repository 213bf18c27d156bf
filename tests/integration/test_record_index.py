"""Issue 12: `check` and `sync` answer from the record index (lib/freshness/record_index.hpp).

A warm check of a tree reads one index file instead of every record; a record whose file, object,
inputs, probe directories or environment moved is read and judged in full. One small CMake tree
(real nvcc, Ninja), built once and left for 2 s (an index entry is made only for a record file that
old), then for each change: `nvfresh check` must give the answer the full check gives, and the debug
log (NVFRESH_LOG_FILE) must say how many records it read:

| change after the index was made          | check says                         | records read |
|------------------------------------------|------------------------------------|--------------|
| none                                     | fresh                              | 0            |
| a header's content                       | stale: input_changed               | the 2 using it |
| a header touched, content unchanged      | fresh                              | the 2 using it |
| a new header in an earlier -I directory  | stale: probe_found                 | 3 (all: the directory is theirs) |
| NVCC_APPEND_FLAGS set                     | stale: env_changed                 | 3            |
| an object deleted                         | stale: object_missing              | 1            |
| the index file damaged                    | fresh (read every record, rewritten) | 3, then 0  |
| a new object, built and 2 s old           | fresh                              | 1, then 0    |
| sync after a header edit                  | the build recompiles that object   |              |
"""
import json
import os
import re
import time

import harness
import project
from project import BuildTree, Target

harness.require_nvcc()

FILES = {
    "a.cu": '#include "shared.h"\n__global__ void ka(int* p) { *p = kShared; }\n',
    "b.cu": '#include "shared.h"\n__global__ void kb(int* p) { *p = kShared + 1; }\n',
    "c.cu": '#include "own.h"\n__global__ void kc(int* p) { *p = kOwn; }\n',
    "include/shared.h": "#pragma once\nconstexpr int kShared = 1;\n",
    "include/own.h": "#pragma once\nconstexpr int kOwn = 3;\n",
    "first/README": "searched before include/\n",
}
TARGETS = [Target(name, f"{name}.cu", include_dirs=["first", "include"]) for name in ("a", "b", "c")]
READ_RE = re.compile(r"(\d+) records fresh by the record index, (\d+) read")


class RecordIndex(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-record-index-")

    def setUp(self):
        self.src = project.write_project(self.work / f"src-{self._testMethodName}", TARGETS, FILES)
        # A directory changed in the compile's second proves nothing (it gets no stamp, and a new
        # header in it is then no change of "their" directory): compile in the next second.
        time.sleep(1.05 - time.time() % 1.0)
        self.log = self.work / f"{self._testMethodName}.log"
        self.env = {"NVFRESH_LOG_FILE": str(self.log), "NVFRESH_CACHE": "0"}
        self.tree = BuildTree(self.src, self.work / f"build-{self._testMethodName}", self.TOOL,
                              env=self.env)
        self.tree.configure()
        self.tree.build()
        time.sleep(2.1)  # records this old get an index entry
        self.assertEqual(self.check()[0], 0)  # makes the index
        self.assertTrue((self.tree.build_dir / ".nvfresh" / "records.index").exists())

    def check(self, env=None):
        """(exit status, {object name: [reason kinds]} of the stale ones, (indexed, read))."""
        self.log.write_text("")
        result = self.tree.nvfresh("check", "-C", str(self.tree.build_dir), "--json", env=env)
        stale = {os.path.basename(o["object"]): [r["kind"] for r in o["reasons"]]
                 for o in json.loads(result.stdout)["objects"] if not o["fresh"]}
        counts = READ_RE.findall(self.log.read_text())
        self.assertEqual(len(counts), 1, self.log.read_text())
        return result.returncode, stale, tuple(int(n) for n in counts[0])

    def test_a_warm_check_reads_no_record(self):
        self.assertEqual(self.check(), (0, {}, (3, 0)))

    def test_changed_header_is_stale(self):
        harness.write(self.src / "include" / "shared.h", "#pragma once\nconstexpr int kShared = 2;\n")
        rc, stale, counts = self.check()
        self.assertEqual(rc, 1)
        self.assertEqual(stale, {"a.cu.o": ["input_changed"], "b.cu.o": ["input_changed"]})
        self.assertEqual(counts, (1, 2))

    def test_touched_header_is_fresh_by_content(self):
        harness.bump_mtime(self.src / "include" / "shared.h")
        self.assertEqual(self.check(), (0, {}, (1, 2)))

    def test_new_shadowing_header_is_stale(self):
        harness.write(self.src / "first" / "own.h", "#pragma once\nconstexpr int kOwn = 4;\n")
        rc, stale, counts = self.check()
        self.assertEqual(rc, 1)
        self.assertEqual(stale, {"c.cu.o": ["probe_found"]})
        self.assertEqual(counts, (0, 3))

    def test_env_flags_make_every_object_stale(self):
        rc, stale, counts = self.check(env={"NVCC_APPEND_FLAGS": "-DEXTRA=1"})
        self.assertEqual(rc, 1)
        self.assertEqual(stale, {name: ["env_changed"] for name in ("a.cu.o", "b.cu.o", "c.cu.o")})
        self.assertEqual(counts, (0, 3))

    def test_deleted_object_is_stale(self):
        self.tree.object("c.cu.o").unlink()
        rc, stale, counts = self.check()
        self.assertEqual(rc, 1)
        self.assertEqual(stale, {"c.cu.o": ["object_missing"]})
        self.assertEqual(counts, (2, 1))

    def test_damaged_index_means_reading_every_record(self):
        index = self.tree.build_dir / ".nvfresh" / "records.index"
        data = bytearray(index.read_bytes())
        data[len(data) // 2] ^= 0xFF
        index.write_bytes(bytes(data))
        self.assertEqual(self.check(), (0, {}, (0, 3)))
        self.assertEqual(self.check(), (0, {}, (3, 0)), "the check that found it damaged rewrote it")

    def test_a_new_object_is_read_once_then_indexed(self):
        # A second object of c.cu: only CMakeLists.txt changes, in place (a new file in the source
        # directory would change a probe directory of every record).
        targets = TARGETS + [Target("d", "c.cu", include_dirs=["first", "include"],
                                    options=["-DVARIANT=1"])]
        harness.write(self.src / "CMakeLists.txt", project.cmake_lists(targets))
        built = self.tree.build()
        build_log = self.log.read_text()  # check() empties it
        time.sleep(2.1)
        self.assertEqual(self.check(), (0, {}, (3, 1)),
                         f"the index answered otherwise; what the build did:\n{built.output}\n"
                         f"nvfresh's log of it:\n{build_log}")
        self.assertEqual(self.check(), (0, {}, (4, 0)))

    def test_sync_through_the_build_recompiles_an_edited_header_s_objects(self):
        harness.write(self.src / "include" / "own.h", "#pragma once\nconstexpr int kOwn = 5;\n")
        result = self.tree.build()
        self.assertEqual(result.compiled, {"c.cu.o"}, result.output)
        self.assertEqual(self.check()[:2], (0, {}))


if __name__ == "__main__":
    harness.main()
