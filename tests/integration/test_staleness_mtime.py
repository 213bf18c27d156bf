"""Issue 39: inputs whose mtime is part of the output (attacks round 4, S3).

GCC expands __TIMESTAMP__ to the mtime of the file it is expanded in (a macro defined in a header
and used in the .cu reads the .cu's), and `#pragma GCC dependency "f"` compares the current file's
mtime with f's (a warning, an error under -Werror). A touch alone then changes what nvcc makes, or
whether it succeeds. nvfresh records such a compile as depending on mtimes: a touched input makes
its object stale (the skip, `check`), and the object cache never stores it.

Real nvcc, CMake and Ninja 1.11, one cache dir per case. A timestamp is read from the object as a
host marker (NVMARK{ts=...}) and compared with what GCC prints for the file's mtime (asctime).
"""
import json
import os
import time
from pathlib import Path

import harness
import project
from project import BuildTree, Target, marked_source, markers

harness.require_nvcc()

NVFRESH = harness.nvfresh_bin()


def stamp_of(path):
    """__TIMESTAMP__ as GCC spells it for path: asctime() of its mtime in local time."""
    return time.asctime(time.localtime(os.stat(path).st_mtime))


def touch_later(path, *others):
    """touch(1) path once the clock is a second past its mtime and the others' (objects): the new
    mtime is a later __TIMESTAMP__, and newer than every object for ninja."""
    newest = max(os.stat(p).st_mtime for p in (path, *others))
    while time.time() < int(newest) + 1.05:
        time.sleep(0.05)
    os.utime(path)


def events(build_dir):
    """(kind, cause, object name, detail) of every compile event of a build tree, oldest first."""
    log = Path(build_dir) / ".nvfresh" / "events.log"
    out = []
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            fields = line.split("\t")
            if len(fields) == 6 and fields[1] != "passthrough":
                out.append((fields[1], fields[2], Path(fields[4]).name, fields[5]))
    return out


class MtimeInOutput(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-mtime-")
        cls.counter = 0

    def setUp(self):
        type(self).counter += 1
        self.root = self.work / f"case{self.counter}"
        self.root.mkdir()
        self.env = {"NVFRESH_CACHE_DIR": str(self.root / "cache")}

    def tree(self, targets, files):
        source = project.write_project(self.root / "src", targets, files)
        tree = BuildTree(source, self.root / "build", self.TOOL, env=self.env)
        tree.configure()
        return source, tree

    def build(self, tree, keep_going=False):
        """Builds; returns ({object name: kind} of what the build did, its result)."""
        before = len(events(tree.build_dir))
        args = ["cmake", "--build", str(tree.build_dir), "--parallel", "2"]
        result = harness.run(args + (["--", "-k", "0"] if keep_going else []), env=self.env)
        if not keep_going:
            self.assertEqual(result.returncode, 0, result.stdout.decode(errors="replace"))
        return {name: kind for kind, _, name, _ in events(tree.build_dir)[before:]}, result

    def stale_reasons(self, tree):
        """{object name: [(kind, text), ...]} of every stale object `nvfresh check` names."""
        result = tree.nvfresh("check", "-C", str(tree.build_dir), "--json")
        data = json.loads(result.stdout)
        return {Path(o["object"]).name: [(r["kind"], r["text"]) for r in o["reasons"]]
                for o in data["objects"] if not o["fresh"]}

    def assert_touch_recompiles(self, source, tree, touched, expected_reason):
        """A touch of `touched` alone: check names it stale, the build compiles k.cu.o again, and
        the object holds k.cu's new __TIMESTAMP__."""
        obj = tree.object("k.cu.o")
        old = stamp_of(source / "k.cu")
        self.assertEqual(markers(obj).get("ts"), {old})
        touch_later(touched, obj)
        new = stamp_of(source / "k.cu")
        self.assertNotEqual(new, old)
        stale = self.stale_reasons(tree)
        self.assertEqual(list(stale), ["k.cu.o"], stale)
        (kind, text), = stale["k.cu.o"]
        self.assertEqual(kind, "mtime_in_output")
        self.assertIn(f"{Path(touched).name} was touched", text)
        self.assertIn(expected_reason, text)
        did, _ = self.build(tree)
        self.assertEqual(did, {"k.cu.o": "compiled"}, "a touch changes __TIMESTAMP__: nvcc must run")
        self.assertEqual(markers(tree.object("k.cu.o")).get("ts"), {new})
        self.assertEqual(self.build(tree)[0], {}, "nothing changed since")
        self.assertEqual(self.stale_reasons(tree), {})

    def test_timestamp_in_the_source(self):
        files = {"k.cu": marked_source([], [("ts", "__TIMESTAMP__", "host")])}
        source, tree = self.tree([Target("k", "k.cu")], files)
        self.assertEqual(self.build(tree)[0], {"k.cu.o": "compiled"})
        self.assert_touch_recompiles(source, tree, source / "k.cu", "k.cu uses __TIMESTAMP__")

    def test_timestamp_through_a_header_macro(self):
        # The macro is expanded in k.cu, so it reads k.cu's mtime, not stamp.h's.
        files = {"k.cu": marked_source(['#include "stamp.h"'], [("ts", "SOURCE_STAMP", "host")]),
                 "include/stamp.h": "#define SOURCE_STAMP __TIMESTAMP__\n"}
        source, tree = self.tree([Target("k", "k.cu")], files)
        project.set_old_mtime(source / "include" / "stamp.h")
        self.assertEqual(self.build(tree)[0], {"k.cu.o": "compiled"})
        self.assert_touch_recompiles(source, tree, source / "k.cu", "stamp.h uses __TIMESTAMP__")

    def test_gcc_dependency_pragma_under_werror_fails_like_nvcc(self):
        pragma = '#pragma GCC dependency "dep.txt"'
        spelled = '_Pragma("GCC dependency \\"dep.txt\\"")'
        files = {"k.cu": marked_source([pragma], [("k", '"k"', "host")]),
                 "p.cu": marked_source([spelled], [("p", '"p"', "host")]),
                 "dep.txt": "k.cu and p.cu must be newer than this file\n"}
        targets = [Target("k", "k.cu", options=["-Xcompiler=-Werror"]),
                   Target("p", "p.cu", options=["-Xcompiler=-Werror"])]
        source, tree = self.tree(targets, files)
        project.set_old_mtime(source / "dep.txt")
        self.assertEqual(self.build(tree)[0], {"k.cu.o": "compiled", "p.cu.o": "compiled"})
        touch_later(source / "dep.txt", tree.object("k.cu.o"), tree.object("p.cu.o"))
        stale = self.stale_reasons(tree)
        self.assertEqual(set(stale), {"k.cu.o", "p.cu.o"}, stale)
        self.assertIn("k.cu has a GCC dependency pragma", stale["k.cu.o"][0][1])
        did, result = self.build(tree, keep_going=True)
        output = result.stdout.decode(errors="replace")
        self.assertNotEqual(result.returncode, 0, f"nvcc fails here, so must the build:\n{output}")
        self.assertEqual(did, {"k.cu.o": "failed", "p.cu.o": "failed"}, output)
        self.assertIn("dep.txt", output)

    def comment_edit_compiles_with_the_new_timestamp(self, source_lines, header_name, header_text):
        """Builds a tree whose header's mtime reaches the object, appends a comment to the header,
        touches it later and checks that the rebuild compiled and holds the new mtime. Returns
        (tree, header) for further steps."""
        files = {"k.cu": marked_source(source_lines, [("k", '"k"', "host")]),
                 f"include/{header_name}": header_text}
        source, tree = self.tree([Target("k", "k.cu")], files)
        header = source / "include" / header_name
        self.assertEqual(self.build(tree)[0], {"k.cu.o": "compiled"})
        old = stamp_of(header)
        self.assertEqual(markers(tree.object("k.cu.o")).get("ts"), {old})
        harness.write(header, header.read_text() + "// a comment\n")
        touch_later(header, tree.object("k.cu.o"))
        new = stamp_of(header)
        self.assertNotEqual(new, old)
        did, _ = self.build(tree)
        self.assertEqual(did, {"k.cu.o": "compiled"}, "never served with the old timestamp")
        self.assertEqual(markers(tree.object("k.cu.o")).get("ts"), {new})
        return tree, header

    def test_comment_edit_of_a_header_is_not_served_with_its_old_timestamp(self):
        # __TIMESTAMP__ expanded in uses.h reads uses.h's mtime; uses.h itself does not spell it,
        # so the cache would take a comment edit of it for no change.
        self.comment_edit_compiles_with_the_new_timestamp(
            ["#define HEADER_STAMP __TIMESTAMP__", '#include "uses.h"'], "uses.h",
            "HOST_MARK(ts, HEADER_STAMP)\n")

    def test_timestamp_spelled_by_token_pasting_is_found_in_the_object(self):
        # No file spells __TIMESTAMP__: the macro's name is pasted together. The object holds
        # pasted.h's mtime as __TIMESTAMP__ spells it, which the record finds there.
        tree, header = self.comment_edit_compiles_with_the_new_timestamp(
            ['#include "pasted.h"'], "pasted.h",
            "#define NV_XCAT(a, b) a##b\nHOST_MARK(ts, NV_XCAT(__TIME, STAMP__))\n")
        # A touch alone: stale, and compiled again.
        touch_later(header, tree.object("k.cu.o"))
        (kind, text), = self.stale_reasons(tree)["k.cu.o"]
        self.assertEqual(kind, "mtime_in_output")
        self.assertIn("pasted.h as __TIMESTAMP__ spells it", text)
        self.assertEqual(self.build(tree)[0], {"k.cu.o": "compiled"})
        self.assertEqual(markers(tree.object("k.cu.o")).get("ts"), {stamp_of(header)})

if __name__ == "__main__":
    harness.main()
