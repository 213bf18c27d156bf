"""`nvfresh space` (issue 13): the build trees nvfresh registered, and `--clean`, on real CMake trees.

Four trees, built through nvfresh (injected with CMAKE_PROJECT_INCLUDE) with real nvcc:
- RUNNING (Ninja): a build is paused inside nvcc's host compiler (a -ccbin script that waits for a
  file), so its nvfresh compile holds the tree's build lock. Its files are then aged: only the lock
  says it is busy;
- OLD (Unix Makefiles): idle, every file and its registry entry aged 40 days (touch -d);
- ORPHAN (Ninja): idle and aged, but its source dir is gone: ambiguous;
- UNREGISTERED: a directory that looks like an old regenerable CMake tree (its CMakeCache.txt names
  OLD's sources) but that nvfresh never worked in: not in the registry, so never touched.
`--clean --older-than 30` must remove exactly OLD (after a dry run that removes nothing), and keep
OLD while it belongs to another user or is not old enough, or while another `--clean --yes` runs,
and refuse `--older-than` nan, inf or a negative age.
The registry lives in a private XDG_STATE_HOME.

Keeps, with their own registry: `--clean` must keep an old tree that holds
another registered tree (idle, then with ninja running a custom command in it and no nvfresh
process), or the source dir of another registered tree, or a git checkout with uncommitted work.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time

import harness
import project

harness.require_nvcc()

NOBODY = 65534


def real(path):
    return os.path.realpath(str(path))


def age(paths, days):
    """Every file and directory under `paths` (and the paths themselves) dated `days` ago."""
    for path in paths:
        subprocess.run(["find", str(path), "-exec", "touch", "-h", "-d", f"{days} days ago", "{}", "+"], check=True)


def entry_files(registry, tree):
    """The registry entries that name this tree (through a symlink or not: one per path used)."""
    found = [entry for entry in registry.glob("*.tree")
             if any(real(line[5:]) == real(tree.build_dir)
                    for line in entry.read_text().splitlines() if line.startswith("tree\t"))]
    if not found:
        raise AssertionError(f"{tree.build_dir} is not registered: {[e.read_text() for e in registry.glob('*')]}")
    return found


class Space(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        for tool in (project.NINJA, project.MAKE):
            if project.require_tool(tool):
                raise harness.unittest.SkipTest(tool.missing_reason())
        work = cls.make_work_dir("nvfresh-space-")
        cls.env = {"XDG_STATE_HOME": str(work / "state-home")}
        cls.registry = work / "state-home" / "nvfresh" / "trees"
        cls.state = work / "pause"
        cls.state.mkdir()
        host_cxx = project.write_script(work / "hostcc" / "g++",
                                        project.PAUSING_HOST_COMPILER.format(state=cls.state, version=1))
        cls.running = cls.tree(work, "running", project.NINJA, "race.cu", [f"-DCMAKE_CUDA_HOST_COMPILER={host_cxx}"])
        cls.old = cls.tree(work, "old", project.MAKE, "old.cu")
        cls.orphan = cls.tree(work, "orphan", project.NINJA, "orphan.cu")
        shutil.rmtree(cls.orphan.source_dir)
        cls.unregistered = work / "unregistered"
        harness.write(cls.unregistered / "CMakeCache.txt",
                      f"CMAKE_HOME_DIRECTORY:INTERNAL={cls.old.source_dir}\n"
                      f"CMAKE_CACHEFILE_DIR:INTERNAL={real(cls.unregistered)}\n")
        age([cls.old.build_dir, cls.orphan.build_dir, cls.unregistered], 40)
        age(cls.entry_files(cls.old) + cls.entry_files(cls.orphan), 40)
        cls.paused = cls.start_paused_build()
        age([cls.running.build_dir] + cls.entry_files(cls.running), 40)

    @classmethod
    def tree(cls, work, name, tool, source, cache_args=()):
        src = project.write_project(work / f"src-{name}", [project.Target(name, source)],
                                    {source: project.marked_source([], [(name, f'"{name}"', "host")])})
        tree = project.BuildTree(src, work / f"build-{name}", tool, cache_args=cache_args, env=cls.env)
        tree.configure()
        tree.build()
        return tree

    @classmethod
    def entry_files(cls, tree):
        return entry_files(cls.registry, tree)

    @classmethod
    def start_paused_build(cls):
        """RUNNING rebuilds race.cu, and its host compiler waits until the test creates pause/go."""
        harness.write(cls.running.source_dir / "race.cu",
                      project.marked_source([], [("running", '"edited"', "host")]))
        (cls.state / "armed").mkdir()
        build = cls.running.start_build()
        while not (cls.state / "started").exists():
            if build.poll() is not None:
                raise AssertionError(f"the build ended before its compile paused:\n{build.stdout.read().decode()}")
            time.sleep(0.05)
        return build

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "paused", None) is not None:
            (cls.state / "go").touch()
            cls.paused.communicate(timeout=600)
        super().tearDownClass()

    def space(self, *args, expect=0):
        result = harness.run([harness.nvfresh_bin(), "space", *args], env=self.env)
        self.assertEqual(result.returncode, expect, result.stdout.decode() + result.stderr.decode())
        return result.stdout.decode()

    def space_json(self, *args):
        return json.loads(self.space(*args, "--json"))

    def trees_by_path(self, report):
        return {real(t["path"]): t for t in report["trees"]}

    def test_1_report(self):
        report = self.space_json()
        trees = self.trees_by_path(report)
        self.assertEqual(set(trees), {real(t.build_dir) for t in (self.running, self.old, self.orphan)},
                         "exactly the trees nvfresh worked in")
        running, old, orphan = (trees[real(t.build_dir)] for t in (self.running, self.old, self.orphan))
        self.assertEqual(running["state"], "running")
        self.assertTrue(running["build_lock_held"])
        self.assertEqual(old["state"], "idle")
        self.assertTrue(old["regenerable"])
        self.assertEqual(real(old["source_dir"]), real(self.old.source_dir))
        self.assertFalse(orphan["regenerable"])
        self.assertIn("is gone", orphan["ambiguous_reason"])
        for tree in (running, old, orphan):
            self.assertGreater(tree["size_bytes"], tree["records_bytes"])
            self.assertGreater(tree["records_bytes"], 0)
            self.assertLess(tree["last_build_ns"], (time.time() - 39 * 86400) * 1e9)
        sizes = [t["size_bytes"] for t in report["trees"]]
        self.assertEqual(sizes, sorted(sizes, reverse=True), "largest first")
        self.assertTrue(report["file_systems"])
        for fs in report["file_systems"]:
            self.assertLessEqual(fs["free_bytes"], fs["total_bytes"])
        stores = {(s["store"], real(s["path"])) for s in report["footprint"]}
        self.assertIn(("records", real(self.old.build_dir / ".nvfresh")), stores)
        self.assertIn(("registry", real(self.registry)), stores)

    def printed(self, tree):
        """The tree's path as `space` prints it (the path nvfresh last registered it under)."""
        return next(t["path"] for t in self.space_json()["trees"] if real(t["path"]) == real(tree.build_dir))

    def test_2_human_output(self):
        text = self.space()
        rows = [line for line in text.splitlines() if f" {self.printed(self.old)}  (from " in line]
        self.assertEqual(len(rows), 1, text)
        self.assertRegex(rows[0], r"^\s*[\d.]+ (B|KiB|MiB|GiB)\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+idle\s")
        self.assertRegex(text, r"(?m)^\s+\S.* running\s+" + re.escape(self.printed(self.running)))
        self.assertRegex(text, r"(?m)^  /\S*: [\d.]+ \S+ free of [\d.]+ \S+ \(\d+\.\d% used\)$")
        self.assertIn("nvfresh's own footprint:", text)
        only = self.space(str(self.running.build_dir))
        self.assertIn(self.printed(self.running), only)
        self.assertNotIn(self.printed(self.old), only)

    def test_3_clean(self):
        old, running, orphan = (self.printed(t) for t in (self.old, self.running, self.orphan))
        dry = self.space("--clean", "--older-than", "30")
        self.assertRegex(dry, r"would remove " + re.escape(old) + r" \(")
        self.assertIn(f"keeps {running}: a build is running there", dry)
        self.assertIn(f"keeps {orphan}: ambiguous: its source dir", dry)
        self.assertRegex(dry, r"would free [\d.]+ \S+ \(1 tree\); run again with --yes")
        self.assertTrue(self.old.build_dir.exists(), "a dry run removes nothing")

        young = self.space_json("--clean", "--older-than", "60")["clean"]
        self.assertEqual(young["remove"], [])

        os.chown(self.old.build_dir, NOBODY, NOBODY)
        try:
            others = self.space_json("--clean", "--older-than", "30", "--yes")["clean"]
        finally:
            os.chown(self.old.build_dir, 0, 0)
        self.assertEqual(others["removed"], [])
        kept = {real(k["path"]): k["reason"] for k in others["keep"]}
        self.assertIn(f"belongs to uid {NOBODY}", kept[real(self.old.build_dir)])
        self.assertTrue(self.old.build_dir.exists())

        # Issue 41: while another `--clean --yes` removes trees (it holds the registry's clean lock,
        # and the build locks of the trees it removes), a second one removes nothing and says so.
        with open(self.registry.parent / "clean.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            second = harness.run([harness.nvfresh_bin(), "space", "--clean", "--older-than", "30", "--yes",
                                  "--json"], env=self.env)
        self.assertEqual(second.returncode, 1, second.stdout.decode() + second.stderr.decode())
        second = json.loads(second.stdout)["clean"]
        self.assertEqual(second["removed"], [])
        self.assertEqual(len(second["errors"]), 1, second["errors"])
        self.assertIn("another `nvfresh space --clean --yes` is removing trees", second["errors"][0])
        self.assertNotIn("a build started", second["errors"][0])
        self.assertTrue(self.old.build_dir.exists())

        done = self.space_json("--clean", "--older-than", "30", "--yes")["clean"]
        self.assertEqual([real(p) for p in done["removed"]], [real(self.old.build_dir)])
        self.assertGreater(done["freed_bytes"], 0)
        self.assertFalse(self.old.build_dir.exists())
        for kept_tree in (self.running.build_dir, self.orphan.build_dir, self.unregistered,
                          self.old.source_dir, self.running.source_dir):
            self.assertTrue(kept_tree.exists(), f"{kept_tree} must stay")
        self.assertNotIn(real(self.old.build_dir), self.trees_by_path(self.space_json()))
        self.assertEqual([e for e in self.registry.glob("*.tree") if f"{self.old.build_dir.name}-" in e.name], [],
                         "a removed tree leaves the registry, under each of its names")

    def test_4_the_paused_build_finishes(self):
        (self.state / "go").touch()
        out, _ = self.paused.communicate(timeout=600)
        self.assertEqual(self.paused.returncode, 0, out.decode())
        Space.paused = None
        running = self.trees_by_path(self.space_json())[real(self.running.build_dir)]
        self.assertEqual(running["state"], "recent", "built just now, and no longer holding its lock")
        self.assertFalse(running["build_lock_held"])

    def test_5_older_than_must_be_a_finite_number(self):
        for days in ("nan", "NaN", "inf", "-1"):
            result = harness.run([harness.nvfresh_bin(), "space", "--clean", "--older-than", days, "--yes"],
                                 env=self.env)
            self.assertEqual(result.returncode, 2, days)
            self.assertIn("--older-than", result.stderr.decode(), days)
        for tree in (self.running, self.orphan):
            self.assertTrue(tree.build_dir.exists())


# A custom command that runs until the test creates <state>/go-<name>, and says it started.
WAITER = """\
#!/bin/sh
: > "{state}/started-$1"
while [ ! -e "{state}/go-$1" ]; do sleep 0.05; done
"""


class SpaceKeeps(project.WorkDirPerClass, harness.unittest.TestCase):
    """Trees, each old enough and regenerable, that `--clean` must keep for what they hold or what
    uses them: OUTER holding the registered tree OUTER/inner, HOLDER holding the source dir of the
    registered tree OTHER, CHECKOUT holding a git checkout with uncommitted work."""
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        work = cls.make_work_dir("nvfresh-space-keeps-")
        cls.env = {"XDG_STATE_HOME": str(work / "state-home")}
        cls.registry = work / "state-home" / "nvfresh" / "trees"
        cls.state = work / "wait"
        cls.state.mkdir()
        cls.waiter = project.write_script(work / "waiter.sh", WAITER.format(state=cls.state))
        cls.waiting = []
        cls.outer = cls.tree(work / "src-outer", work / "outer", "outer.cu")
        cls.inner = cls.tree(work / "src-inner", cls.outer.build_dir / "inner", "inner.cu")
        cls.holder = cls.tree(work / "src-holder", work / "holder", "holder.cu")
        cls.other = cls.tree(cls.holder.build_dir / "src2", work / "other", "other.cu")
        cls.checkout = cls.tree(work / "src-checkout", work / "checkout", "checkout.cu")
        work_dir = cls.checkout.build_dir / "work"
        work_dir.mkdir()
        harness.run(["git", "init", "-q", str(work_dir)], check=True)
        harness.write(work_dir / "notes.txt", "not committed\n")
        old = [cls.outer, cls.holder, cls.checkout]
        age([t.build_dir for t in old] + [e for t in old for e in entry_files(cls.registry, t)], 40)

    @classmethod
    def tree(cls, src, build, source):
        """A one-.cu project with a `slow` target (the waiter; not part of ALL), built."""
        project.write_project(src, [project.Target(build.name, source)],
                              {source: project.marked_source([], [(build.name, f'"{build.name}"', "host")])})
        with open(src / "CMakeLists.txt", "a") as lists:
            lists.write(f'add_custom_target(slow COMMAND sh "{cls.waiter}" "{build.name}" VERBATIM)\n')
        tree = project.BuildTree(src, build, project.NINJA, env=cls.env)
        tree.configure()
        tree.build()
        return tree

    @classmethod
    def tearDownClass(cls):
        for name, build in getattr(cls, "waiting", []):
            (cls.state / f"go-{name}").touch()
            build.communicate(timeout=600)
        super().tearDownClass()

    def start_waiting_build(self, tree):
        """ninja runs the `slow` custom command of `tree` (no nvfresh process) until stop_waiting."""
        name = tree.build_dir.name
        build = subprocess.Popen(["cmake", "--build", str(tree.build_dir), "--target", "slow"],
                                 env={**os.environ, **self.env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.waiting.append((name, build))
        while not (self.state / f"started-{name}").exists():
            if build.poll() is not None:
                self.fail(f"the slow target ended before it waited:\n{build.stdout.read().decode()}")
            time.sleep(0.05)
        return build

    def stop_waiting(self, tree, build):
        (self.state / f"go-{tree.build_dir.name}").touch()
        out, _ = build.communicate(timeout=600)
        self.waiting.remove((tree.build_dir.name, build))
        self.assertEqual(build.returncode, 0, out.decode())

    def clean(self, days, *extra):
        result = harness.run([harness.nvfresh_bin(), "space", "--clean", "--older-than", days, "--json", *extra],
                             env=self.env)
        self.assertEqual(result.returncode, 0, result.stdout.decode() + result.stderr.decode())
        clean = json.loads(result.stdout)["clean"]
        return clean, {real(k["path"]): k["reason"] for k in clean["keep"]}

    def test_1_nested_registered_tree(self):
        clean, kept = self.clean("1", "--yes")
        self.assertEqual(kept[real(self.outer.build_dir)],
                         f"it holds registered build tree {real(self.inner.build_dir)}")
        # Built during setUpClass: minutes ago on a loaded machine, always within the recent window.
        self.assertRegex(kept[real(self.inner.build_dir)], r"^built .* ago: a build may still be going on$")
        self.assertNotIn(real(self.outer.build_dir), [real(p) for p in clean["removed"]])
        self.assertTrue((self.inner.build_dir / "CMakeCache.txt").exists())

    def test_2_ninja_runs_a_custom_command_in_the_nested_tree(self):
        build = self.start_waiting_build(self.inner)
        age([self.inner.build_dir] + entry_files(self.registry, self.inner), 40)
        clean, kept = self.clean("0", "--yes")
        self.assertRegex(kept[real(self.inner.build_dir)],
                         r"^it is in use: process \d+ \(\S+\) .* there \(" + re.escape(real(self.inner.build_dir)))
        self.assertIn(real(self.inner.build_dir), kept[real(self.outer.build_dir)], "in use, or holding inner")
        self.assertTrue((self.inner.build_dir / "CMakeCache.txt").exists())
        self.stop_waiting(self.inner, build)

    def test_3_source_dir_of_another_tree(self):
        clean, kept = self.clean("1", "--yes")
        self.assertEqual(kept[real(self.holder.build_dir)],
                         f"it holds {real(self.other.source_dir)}, the source dir of registered build tree "
                         f"{real(self.other.build_dir)}")
        self.assertTrue((self.other.source_dir / "CMakeLists.txt").exists())

    def test_4_git_checkout_with_uncommitted_work(self):
        work_dir = self.checkout.build_dir / "work"
        clean, kept = self.clean("1", "--yes")
        self.assertEqual(kept[real(self.checkout.build_dir)], f"it holds a git checkout ({real(work_dir / '.git')})")
        self.assertEqual((work_dir / "notes.txt").read_text(), "not committed\n")
        # Without the checkout (what is left is as old as the build), the same tree goes: listed
        # by the dry run, then removed by --yes.
        shutil.rmtree(work_dir / ".git")
        age([work_dir], 40)
        dry, _ = self.clean("1")
        self.assertEqual([real(r["path"]) for r in dry["remove"]], [real(self.checkout.build_dir)])
        done, _ = self.clean("1", "--yes")
        self.assertEqual([real(p) for p in done["removed"]], [real(self.checkout.build_dir)])
        self.assertFalse(self.checkout.build_dir.exists())


if __name__ == "__main__":
    harness.main()
