"""Full disks, said plainly (issue 13 section 2; issue 9): real nvcc, small tmpfs mounts.

When a compile fails and a file system it needs is short of space, nvfresh adds one line after
nvcc's own output naming that file system; nvcc's bytes and exit status stay as they are. A failure
that is not about space (a syntax error on a roomy disk) gets nothing added. nvfresh's own writes
on a full disk leave the object "not recorded", in words that name the full file system and the
setting that helps. sync warns once per build below the free-space floor.

| case                                   | where             | expected                                        |
|----------------------------------------|-------------------|-------------------------------------------------|
| TMPDIR full (64 KiB, filled)           | nvcc, CMake       | nvcc's bytes + "<tmpfs> is full ... (TMPDIR)"   |
| TMPDIR too small (1 MiB)               | nvcc              | "<tmpfs> is too small for a compile ... TMPDIR" |
| output on a full file system           | nvcc              | "<tmpfs> is full ...: the object goes there"    |
| build tree on a full file system       | CMake             | one line naming the build tree's file system    |
| depfile on a full file system          | nvcc              | built; "not recorded", advice about -MF only    |
| record dir on a full file system       | nvcc, CMake       | built; "not recorded", NVFRESH_RECORD_DIR        |
| syntax error, roomy disks              | nvcc, CMake       | exactly plain nvcc's bytes, nothing added       |
| sync below the floor / floor settings  | nvfresh sync, CMake | one line; NVFRESH_SPACE_FLOOR and space_floor |

Mounting needs root: without it every case is skipped, loudly.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import harness
import project

# nvcc's own failures on full disks are the subject: a cache hit (test_cache.py has its full-disk
# cases) would stand in for the compile that must fail, as it would for a user, so it is off here.
os.environ["NVFRESH_CACHE"] = "0"

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()

SOURCE = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\nint main() { return 0; }\n"
BROKEN = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f }\n"
# The names of nvcc's and gcc's temporary files differ from run to run: masked where a message
# names one.
TMPXFT = re.compile(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}")
GCC_TEMP = re.compile(rb"cc[A-Za-z0-9]{6}\.s")


def masked(data):
    return GCC_TEMP.sub(b"ccXXXXXX.s", TMPXFT.sub(b"tmpxft_X", data))


def nvfresh_lines(data):
    """nvfresh's own lines, but for sync's list of the objects it marks for rebuilding."""
    return [line for line in data.decode(errors="replace").splitlines()
            if line.startswith("nvfresh:") and not line.startswith("nvfresh: stale, will rebuild ")]


class Mounts:
    """tmpfs mounts made by a test, unmounted afterwards."""

    def __init__(self):
        self.points = []

    def tmpfs(self, path, size, fill=False):
        path = Path(os.path.realpath(path))  # as nvfresh names a mount point
        path.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            print(f"*** SKIPPING: cannot mount a tmpfs ({result.stdout.decode().strip()}); "
                  "the full-disk tests need root ***", file=sys.stderr)
            raise harness.unittest.SkipTest("cannot mount tmpfs")
        self.points.append(path)
        if fill:
            self.fill(path)
        return path

    @staticmethod
    def fill(path):
        """Fills the file system at path to the last block."""
        subprocess.run(["dd", "if=/dev/zero", f"of={path}/fill", "bs=4k"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def unmount_all(self):
        for path in reversed(self.points):
            subprocess.run(["umount", "-l", str(path)], stderr=subprocess.DEVNULL)
        self.points = []


class CommandLine(harness.unittest.TestCase):
    """nvfresh nvcc ... against plain nvcc ..., the same command in the same directory."""

    def setUp(self):
        self.dir = harness.make_workdir("nvfresh-fulldisk-")
        self.mounts = Mounts()
        harness.write(self.dir / "a.cu", SOURCE)
        harness.write(self.dir / "bad.cu", BROKEN)

    def tearDown(self):
        self.mounts.unmount_all()
        shutil.rmtree(self.dir.parent, ignore_errors=True)

    def both(self, args, env=None):
        plain = harness.run([NVCC] + args, cwd=self.dir, env=env)
        shutil.rmtree(self.dir / ".nvfresh", ignore_errors=True)  # a compile, never a skip
        wrapped = harness.run([NVFRESH, NVCC] + args, cwd=self.dir, env=env)
        return plain, wrapped

    def assert_one_line_after_nvcc(self, plain, wrapped, *expected):
        """nvcc's bytes and status unchanged; exactly one nvfresh line, last, containing `expected`."""
        self.assertNotEqual(plain.returncode, 0, plain.stderr.decode())
        self.assertEqual(wrapped.returncode, plain.returncode)
        self.assertEqual(masked(wrapped.stdout), masked(plain.stdout))
        body, _, last = wrapped.stderr.rstrip(b"\n").rpartition(b"\n")
        self.assertEqual(masked(body + b"\n" if body else b""), masked(plain.stderr))
        self.assertEqual(nvfresh_lines(wrapped.stderr), [last.decode()])
        for text in expected:
            self.assertIn(text, last.decode())
        self.assertTrue(last.decode().endswith("; see nvfresh space"), last)
        return last.decode()

    def test_tmpdir_full(self):
        tmp = self.mounts.tmpfs(self.dir / "tmp", "64k", fill=True)
        plain, wrapped = self.both(["-c", "a.cu", "-o", "a.o"], env={"TMPDIR": str(tmp)})
        self.assertIn(b"Failed to preprocess host compiler properties", plain.stderr)
        self.assertEqual(wrapped.stderr.split(b"\nnvfresh:")[0] + b"\n", plain.stderr, "nvcc's bytes, exactly")
        self.assert_one_line_after_nvcc(plain, wrapped, f"nvfresh: {tmp} is full (0 B free of 64 KiB): "
                                        "nvcc keeps its temporary files there (TMPDIR); free space or set TMPDIR")

    def test_tmpdir_too_small(self):
        tmp = self.mounts.tmpfs(self.dir / "tmp", "1m")
        plain, wrapped = self.both(["-c", "a.cu", "-o", "a.o"], env={"TMPDIR": str(tmp)})
        self.assertIn(b"No space left on device", plain.stderr)
        self.assert_one_line_after_nvcc(plain, wrapped, f"nvfresh: {tmp} is too small for a compile (",
                                        "of 1.0 MiB): nvcc keeps its temporary files there (TMPDIR); "
                                        "set TMPDIR to a larger file system")

    def test_output_on_a_full_file_system(self):
        out = self.mounts.tmpfs(self.dir / "out", "64k", fill=True)
        plain, wrapped = self.both(["-c", "a.cu", "-o", "out/a.o"])
        last = self.assert_one_line_after_nvcc(plain, wrapped, f"nvfresh: {out} is full (",
                                               "the object goes there; free space there")
        self.assertNotIn("TMPDIR", last, "only the full file system is named")

    def test_syntax_error_gets_nothing_added(self):
        plain, wrapped = self.both(["-c", "bad.cu", "-o", "bad.o"])
        self.assertNotEqual(plain.returncode, 0)
        self.assertEqual((wrapped.returncode, wrapped.stdout, wrapped.stderr),
                         (plain.returncode, plain.stdout, plain.stderr))

    def test_depfile_on_a_full_file_system(self):
        """The advice must be about -MF: NVFRESH_RECORD_DIR does not help when the depfile's disk is full."""
        deps = self.mounts.tmpfs(self.dir / "deps", "64k", fill=True)
        result = harness.run([NVFRESH, NVCC, "-c", "a.cu", "-o", "a.o", "-MD", "-MF", "deps/a.d"], cwd=self.dir)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertTrue((self.dir / "a.o").exists())
        lines = nvfresh_lines(result.stderr)
        self.assertEqual(len(lines), 1, result.stderr.decode())
        self.assertRegex(lines[0], rf"^nvfresh: the object was built, but nvfresh could not record it: cannot write "
                                   rf"{re.escape(str(deps))}/a\.d: {re.escape(str(deps))} is full \(0 B free of 64 KiB\): "
                                   r"the build asked for this depfile there \(-MF\); free space on that file system; "
                                   r"see nvfresh space$")
        self.assertNotIn("NVFRESH_RECORD_DIR", lines[0])

    def test_record_dir_on_a_full_file_system(self):
        records = self.mounts.tmpfs(self.dir / "records", "64k", fill=True)
        env = {"NVFRESH_RECORD_DIR": str(records / "nvfresh")}
        result = harness.run([NVFRESH, NVCC, "-c", "a.cu", "-o", "a.o"], cwd=self.dir, env=env)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(nvfresh_lines(result.stderr),
                         [f"nvfresh: the object was built, but nvfresh could not record it: cannot write "
                          f"{records}/nvfresh/records/{self.record_name(env)}: {records} is full (0 B free of 64 KiB): "
                          "free space there, or point NVFRESH_RECORD_DIR at a disk with room; see nvfresh space"])
        check = harness.run([NVFRESH, "check", "-C", str(self.dir)], cwd=self.dir, env=env)
        self.assertNotEqual(check.returncode, 0, "an unrecorded object is never called fresh")

    def record_name(self, env):
        """The record file name nvfresh uses for a.o (from a compile with room)."""
        roomy = {**env, "NVFRESH_RECORD_DIR": str(self.dir / "roomy")}
        harness.run([NVFRESH, NVCC, "-c", "a.cu", "-o", "a.o"], cwd=self.dir, env=roomy, check=True)
        return next((self.dir / "roomy" / "records").glob("a.o-*.rec")).name

    def test_sync_warns_below_the_floor(self):
        tree = self.mounts.tmpfs(self.dir / "tree", "64m")
        harness.write(tree / "data", "x" * (2 << 20))  # 62 MiB (96.9%) free
        config = harness.write(self.dir / "nvfresh.conf", "space_floor = 1MiB\n")
        cases = [
            ({}, [f"nvfresh: {tree} is nearly full: 62 MiB free of 64 MiB (3.1% used), below the free-space floor "
                  "of 2GiB or 2% (NVFRESH_SPACE_FLOOR); builds there may fail in ways that do not say so; "
                  "see nvfresh space"]),
            ({"NVFRESH_SPACE_FLOOR": "1MiB"}, []),
            ({"NVFRESH_CONFIG": str(config)}, []),
            ({"NVFRESH_SPACE_FLOOR": "off"}, []),
            ({"NVFRESH_SPACE_FLOOR": "1MiB,97%"}, [f"nvfresh: {tree} is nearly full"]),
            ({"NVFRESH_SPACE_FLOOR": "1MiB,96%"}, []),
            ({"NVFRESH_SPACE_FLOOR": "63MiB"}, [f"nvfresh: {tree} is nearly full"]),
            ({"NVFRESH_SPACE_FLOOR": "lots"}, ["nvfresh: NVFRESH_SPACE_FLOOR: 'lots' is not a size (2GiB, 500MiB) or a "
                                               "share (2%); free space is not checked"]),
        ]
        for env, expected in cases:
            with self.subTest(env=env):
                result = harness.run([NVFRESH, "sync", "-C", str(tree)], cwd=self.dir,
                                     env={"NVFRESH_CONFIG": "/nonexistent", **env})
                self.assertEqual(result.returncode, 0)
                lines = nvfresh_lines(result.stderr)
                self.assertEqual(len(lines), len(expected), result.stderr.decode())
                for line, start in zip(lines, expected):
                    self.assertTrue(line.startswith(start), line)


class CMakeBuild:
    """Through CMake with TOOL: TMPDIR, the record dir and the build tree each on a small tmpfs."""

    TOOL = None

    @classmethod
    def setUpClass(cls):
        reason = project.require_tool(cls.TOOL)
        if reason:
            raise harness.unittest.SkipTest(reason)
        cls.work = harness.make_workdir("nvfresh-fulldisk-cmake-")
        cls.mounts = Mounts()
        cls.src = project.write_project(cls.work / "src", [project.Target("k", "k.cu")],
                                        {"k.cu": project.marked_source([], [("k", '"v1"', "host")])})
        cls.tree = project.BuildTree(cls.src, cls.work / "build", cls.TOOL)
        cls.tree.configure()
        cls.tree.build()

    @classmethod
    def tearDownClass(cls):
        cls.mounts.unmount_all()
        shutil.rmtree(cls.work.parent, ignore_errors=True)

    def edit(self, value):
        harness.write(self.src / "k.cu", project.marked_source([], [("k", f'"{value}"', "host")]))
        harness.bump_mtime(self.src / "k.cu")

    def build(self, tree=None, env=None):
        tree = tree or self.tree
        return harness.run(["cmake", "--build", str(tree.build_dir)], env={**tree.env, **(env or {})})

    def test_tmpdir_full(self):
        tmp = self.mounts.tmpfs(self.work / f"tmp-{self.TOOL.generator[0]}", "64k", fill=True)
        self.edit("tmpdir")
        result = self.build(env={"TMPDIR": str(tmp)})
        output = result.stdout.decode() + result.stderr.decode()
        self.assertNotEqual(result.returncode, 0, output)
        nvcc_says = output.index("Failed to preprocess host compiler properties")
        lines = nvfresh_lines(result.stdout + b"\n" + result.stderr)
        self.assertEqual(lines, [f"nvfresh: {tmp} is full (0 B free of 64 KiB): nvcc keeps its temporary files "
                                 "there (TMPDIR); free space or set TMPDIR; see nvfresh space"], output)
        self.assertGreater(output.index(lines[0]), nvcc_says, "after nvcc's own output")

    def test_record_dir_full(self):
        records = self.mounts.tmpfs(self.work / f"records-{self.TOOL.generator[0]}", "64k", fill=True)
        self.edit("records")
        result = self.build(env={"NVFRESH_RECORD_DIR": str(records / "nvfresh")})
        output = result.stdout.decode() + result.stderr.decode()
        self.assertEqual(result.returncode, 0, output)
        lines = [line for line in nvfresh_lines(result.stdout + b"\n" + result.stderr) if "could not record" in line]
        self.assertEqual(len(lines), 1, output)
        self.assertIn(f"{records} is full (0 B free of 64 KiB): free space there, or point NVFRESH_RECORD_DIR", lines[0])
        self.assertEqual(project.markers(self.tree.object("k.cu.o"))["k"], {"records"}, "built all the same")

    def test_syntax_error_gets_nothing_added(self):
        harness.write(self.src / "k.cu", BROKEN)
        harness.bump_mtime(self.src / "k.cu")
        try:
            result = self.build()
        finally:
            self.edit("fixed")
        output = result.stdout.decode() + result.stderr.decode()
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('expected a ";"', output)
        self.assertEqual(nvfresh_lines(result.stdout + b"\n" + result.stderr), [], output)

    def test_build_tree_on_a_full_file_system(self):
        disk = self.mounts.tmpfs(self.work / f"disk-{self.TOOL.generator[0]}", "64m")
        tree = project.BuildTree(self.src, disk / "build", self.TOOL)
        tree.configure()
        first = self.build(tree)
        self.assertEqual(first.returncode, 0, first.stdout.decode())
        floor = [line for line in nvfresh_lines(first.stdout + b"\n" + first.stderr) if "free-space floor" in line]
        self.assertEqual(len(floor), 1, "sync warns once per build on a 64 MiB file system")
        self.assertTrue(floor[0].startswith(f"nvfresh: {disk} is nearly full: "), floor[0])
        self.edit("full")
        tree.object("k.cu.o").unlink()  # else the new object fits in the old one's blocks
        self.mounts.fill(disk)
        result = self.build(tree)
        output = result.stdout.decode() + result.stderr.decode()
        self.assertNotEqual(result.returncode, 0, output)
        self.assertIn(f"nvfresh: {disk} is full: 0 B free of 64 MiB (100.0% used), below the free-space floor", output)
        lines = [line for line in nvfresh_lines(result.stdout + b"\n" + result.stderr) if "goes there" in line]
        self.assertGreater(output.index(lines[0]), output.index("No space left on device"), "after nvcc's output")
        # The assembler deletes its partial object before nvfresh looks, so a few blocks may be free again.
        self.assertEqual(len(lines), 1, output)
        self.assertRegex(lines[0], rf"^nvfresh: {re.escape(str(disk))} is full \((0 B|\d+(\.\d)? KiB) free of 64 MiB\): "
                         "the object goes there, and the depfile goes there, and nvfresh keeps its records there; "
                         "free space or set NVFRESH_RECORD_DIR; see nvfresh space$")


class Ninja(CMakeBuild, harness.unittest.TestCase):
    TOOL = project.NINJA


class Make(CMakeBuild, harness.unittest.TestCase):
    TOOL = project.MAKE


if __name__ == "__main__":
    harness.main()
