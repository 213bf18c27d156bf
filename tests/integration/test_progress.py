"""The progress line of `nvfresh repro`, `nvfresh cache verify` and `nvfresh report` with the real nvcc
(the bundled CMake example for the last two): drawn on stderr when stderr is a terminal, never
through a pipe, with TERM=dumb or with --json; stdout is the same either way.
"""
import json
import os
import shutil
import subprocess
import threading

import harness
import project

KERNEL_SOURCE = "__global__ void add_one(int* p) { p[threadIdx.x] += 1; }\n"
RUNS = 3
PROGRESS_TEXT = f"nvfresh repro: {RUNS}/{RUNS}"


def run_with_terminal_stderr(command, cwd, env):
    """Runs `command` with stderr on a pseudo-terminal (stdout a pipe); returns (code, stdout, stderr)."""
    master, slave = os.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=slave)
    finally:
        os.close(slave)
    stdout, _ = process.communicate()
    reader.join()
    os.close(master)
    return process.returncode, stdout.decode(errors="replace"), b"".join(chunks).decode(errors="replace")


class ReproProgress(harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nvcc = harness.require_nvcc()

    def setUp(self):
        self.work = harness.make_workdir("nvfresh-progress-")
        harness.write(self.work / "k.cu", KERNEL_SOURCE)

    def command(self, out, *options):
        return [harness.nvfresh_bin(), "repro", "-n", str(RUNS), "-j", "2", "--seed", "7", "--out",
                str(self.work / out), *options, "--", self.nvcc, "-c", "-arch=sm_80", "k.cu", "-o", "k.o"]

    def env(self, term):
        env = dict(os.environ)
        env["TERM"] = term
        return env

    def test_progress_only_on_a_terminal(self):
        code, stdout, stderr = run_with_terminal_stderr(self.command("tty"), self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertIn(PROGRESS_TEXT, stderr)
        self.assertIn("variant so far", stderr)
        self.assertTrue(stderr.endswith("\r\033[K"), repr(stderr[-80:]))  # the line is cleared at the end
        self.assertNotIn("\r", stdout)
        self.assertIn(f"variants: 1 in {RUNS} successful runs", stdout)

        piped = harness.run(self.command("pipe"), cwd=self.work, env={"TERM": "xterm"})
        self.assertEqual(piped.returncode, 0)
        self.assertNotIn("nvfresh repro:", piped.stderr.decode(errors="replace"))
        self.assertNotIn("\r", piped.stdout.decode(errors="replace"))

        code, _, stderr = run_with_terminal_stderr(self.command("dumb"), self.work, self.env("dumb"))
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("nvfresh repro:", stderr)
        self.assertNotIn("\033", stderr)

    def test_no_progress_with_json_and_the_report_unchanged(self):
        code, stdout, stderr = run_with_terminal_stderr(self.command("tty", "--json"), self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("nvfresh repro:", stderr)
        on_terminal = json.loads(stdout)
        piped = harness.run(self.command("pipe", "--json"), cwd=self.work)
        through_pipe = json.loads(piped.stdout)
        self.assertEqual(set(on_terminal), set(through_pipe))
        for key in ("seed", "exit_code", "perturbed_runs", "ruled_out"):
            self.assertEqual(on_terminal[key], through_pipe[key], key)
        self.assertEqual(len(on_terminal["variants"]), 1)
        self.assertEqual([v["runs"] for v in on_terminal["variants"]], [v["runs"] for v in through_pipe["variants"]])


class TreeCommandsProgress(harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.work = harness.make_workdir("nvfresh-progress-tree-")
        source = cls.work / "example"
        shutil.copytree(harness.source_dir() / "examples" / "cmake_project", source)
        cls.build = cls.work / "build"
        cls.tree = project.BuildTree(source, cls.build, project.NINJA,
                                     env={"NVFRESH_CACHE_DIR": str(cls.work / "cache")})
        cls.tree.configure()
        cls.tree.build()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def env(self, term):
        env = dict(os.environ)
        env.update(self.tree.env)
        env["TERM"] = term
        return env

    def check_progress(self, args, label):
        command = [harness.nvfresh_bin(), *args]
        code, on_terminal, stderr = run_with_terminal_stderr(command, self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertIn(label, stderr)
        self.assertTrue(stderr.endswith("\r\033[K"), repr(stderr[-80:]))
        self.assertNotIn("\r", on_terminal)
        code, _, dumb = run_with_terminal_stderr(command, self.work, self.env("dumb"))
        self.assertEqual(code, 0, dumb)
        self.assertNotIn(label, dumb)
        piped = harness.run(command, cwd=self.work, env=self.env("xterm"))
        self.assertEqual(piped.returncode, 0)
        self.assertNotIn(label, piped.stderr.decode(errors="replace"))
        return on_terminal, piped.stdout.decode(errors="replace")

    def test_cache_verify(self):
        on_terminal, piped = self.check_progress(["cache", "verify"], "nvfresh cache verify: ")
        self.assertIn("0 with codegen that differs", on_terminal)
        self.assertEqual(sorted(on_terminal.splitlines()), sorted(piped.splitlines()))
        code, stdout, stderr = run_with_terminal_stderr(
            [harness.nvfresh_bin(), "cache", "verify", "--json"], self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("nvfresh cache verify", stderr)
        self.assertEqual(json.loads(stdout)["differs"], 0)

    def test_report(self):
        page = self.work / "page.html"
        on_terminal, piped = self.check_progress(["report", "-C", str(self.build), "-o", str(page)],
                                                 "nvfresh report: objects")
        self.assertEqual(on_terminal, piped)
        code, stdout, stderr = run_with_terminal_stderr(
            [harness.nvfresh_bin(), "report", "-C", str(self.build), "--json"], self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("nvfresh report", stderr)
        self.assertTrue(json.loads(stdout)["objects"])

    def test_space(self):
        # (not compared whole: the first run may prune other, vanished trees from the registry)
        on_terminal, piped = self.check_progress(["space", str(self.build)], "nvfresh space: sizing")
        tree = os.path.realpath(self.build)  # the registry names trees with symlinks resolved
        self.assertIn(tree, on_terminal)
        self.assertIn(tree, piped)
        code, stdout, stderr = run_with_terminal_stderr(
            [harness.nvfresh_bin(), "space", str(self.build), "--json"], self.work, self.env("xterm"))
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("nvfresh space", stderr)
        self.assertTrue(json.loads(stdout)["trees"])


if __name__ == "__main__":
    harness.main()
