"""A remote cache that fails, with real nvcc, CMake and Ninja: the server is fake_reapi.py (a REAPI
v2 cache that refuses, is slow, is full or sends truncated blobs on purpose), run by the Python of
BuildGrid's venv (<repo>/.venv-buildgrid: scripts/install_test_tools.sh). The paths that succeed
run against BuildGrid itself (test_remote_cache.py, test_remote_soundness.py).

Each fault, in a build of two TUs: both are compiled locally, the build succeeds, its output has
one `nvfresh:` line (one per build, not one per TU) naming the remote and what failed, and
`nvfresh cache stats` counts the error. Without the venv the file is skipped, loudly; under
CI=true that is a failure.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import harness
from project import Target, marked_source, markers
from test_cache import CacheCase, cache_stats, events, wait_for_uploads

PYTHON = harness.source_dir() / ".venv-buildgrid" / "bin" / "python"
FAKE = Path(__file__).resolve().parent / "fake_reapi.py"


class FakeServer:
    """fake_reapi.py with one fault, on a free loopback port; stopped by its PID."""

    def __init__(self, work, fault):
        port_file = Path(work) / f"fake-{fault}.port"
        self.held = Path(f"{port_file}.held")        # hold: an upload is held
        self.release = Path(f"{port_file}.release")  # hold: the test lets the uploads through
        self.calls = Path(f"{port_file}.calls")      # every call's method, as it came
        self.log_path = Path(work) / f"fake-{fault}.log"
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen([str(PYTHON), str(FAKE), fault, str(port_file)],
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        while not port_file.exists():  # no time limit: a server that dies ends the wait
            if self.process.poll() is not None:
                raise AssertionError(f"fake_reapi.py exited with {self.process.returncode}:\n"
                                     f"{self.log_path.read_text(errors='replace')}")
            time.sleep(0.05)
        self.url = f"grpc://127.0.0.1:{int(port_file.read_text())}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait()
        self.log.close()


class FakeServerCase(CacheCase):
    @classmethod
    def setUpClass(cls):
        if not PYTHON.exists():
            harness.fail_under_ci_else_skip(
                f"BuildGrid's venv is not installed ({PYTHON}): run scripts/install_test_tools.sh; "
                "the remote cache's fault tests did NOT run")
        super().setUpClass()

    def serve(self, fault):
        server = FakeServer(self.root, fault)
        self.addCleanup(server.stop)
        return server


class FaultsOfTheServer(FakeServerCase):
    def two_kernels(self):
        files = {"a.cu": marked_source([f"// {self.id()}"], [("a", '"a1"', "host,dev")]),
                 "b.cu": marked_source([f"// {self.id()}"], [("b", '"b1"', "host,dev")])}
        return self.project([Target("ka", "a.cu"), Target("kb", "b.cu")], files)

    def build_with(self, source, name, env, wait=True):
        """Builds a fresh tree; its nvfresh: lines, after checking both TUs were compiled (and,
        with `wait`, waiting for the uploads that run on after it)."""
        tree = self.tree(source, name, env=env)
        result = harness.run(["cmake", "--build", str(tree.build_dir), "--parallel", "2"],
                             env=tree.merged_env(env))
        if wait:
            wait_for_uploads(tree.merged_env(env))
        output = (result.stdout + result.stderr).decode(errors="replace")
        self.assertEqual(result.returncode, 0, output)
        self.assertEqual({name: kind for kind, _, name, _ in events(tree.build_dir)},
                         {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"a1"})
        self.assertEqual(markers(tree.object("b.cu.o"))["b"], {"b1"})
        return [line for line in output.splitlines() if line.startswith("nvfresh:")]

    def check_one_line_and_errors(self, fault, expected):
        """expected: a regular expression the line matches."""
        server = self.serve(fault)
        env = {"NVFRESH_REMOTE": server.url}
        lines = self.build_with(self.two_kernels(), "build", env)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(f"the remote cache {server.url} failed: ", lines[0])
        self.assertRegex(lines[0], expected)
        stats = cache_stats(self.env)
        self.assertEqual(stats["remote_bytes_down"], 0, stats)
        # --parallel 2: both lookups may fail before either has said so; then the remote is not
        # asked again in this build, so nothing is uploaded.
        self.assertIn(stats["remote_errors"], (1, 2), stats)
        self.assertEqual((stats["remote_hits"], stats["remote_uploads"], stats["stores"]),
                         (0, 0, 2))

    def test_resource_exhausted(self):
        self.check_one_line_and_errors("exhausted", r"fake_reapi: out of quota \(8\)")

    def test_unavailable(self):
        self.check_one_line_and_errors("unavailable", r"fake_reapi: going away \(14\)")

    def test_an_answer_after_the_deadline(self):
        # The server holds each call until the client's deadline (5 s) has passed.
        self.check_one_line_and_errors("slow", r"GetActionResult: Deadline Exceeded \(4\)")

    def test_a_server_killed_while_it_answers(self):
        # gRPC's words for the dropped connection vary ("Socket closed"); its code is UNAVAILABLE.
        # The line is the first failure's: the call the server died in, or (should the other TU's
        # helper connect only after that and fail first) the connect.
        self.check_one_line_and_errors(
            "dies", r"GetActionResult: [^()]+ \(14\)|cannot connect to 127\.0\.0\.1:")

    def test_a_full_cache_refusing_the_upload(self):
        # The lookups are misses; the store's uploads, in the background, are refused blob by
        # blob. Their failure has no terminal: its line is said by the tree's next compile that
        # asks the remote, in that build (the other TU's, when the first upload failed before it
        # asked) or the next one (here an edit of a.cu: a local miss).
        server = self.serve("full")
        env = {"NVFRESH_REMOTE": server.url}
        source = self.two_kernels()
        first = self.build_with(source, "build", env)
        stats = cache_stats(self.env)
        # Each TU's three uploads (its object and its cicc and ptxas steps) are sent one after
        # another by one process after the compile: the first refusal marks the build and the
        # batch's others are not sent. The two TUs' batches may each fail before either marked it.
        self.assertIn(stats["remote_errors"], (1, 2), stats)
        self.assertEqual((stats["remote_hits"], stats["remote_uploads"], stats["stores"]),
                         (0, 0, 2))
        with open(source / "a.cu", "a") as edited:
            edited.write("// edited\n")
        tree = self.root / "build"
        result = harness.run(["cmake", "--build", str(tree), "--parallel", "2"],
                             env=dict(self.env, **env), check=True)
        output = (result.stdout + result.stderr).decode(errors="replace")
        second = [line for line in output.splitlines()  # "stale, will rebuild" aside
                  if line.startswith("nvfresh: the remote cache")]
        said = first + second
        self.assertLessEqual(len(first), 1, first)
        self.assertGreaterEqual(len(said), 1, said)
        for line in said:
            self.assertIn(f"the remote cache {server.url} failed: ", line)
            self.assertRegex(line, r"BatchUpdateBlobs: fake_reapi: the CAS is full \(8\)")

    def test_the_compile_does_not_wait_for_its_upload(self):
        # The server holds every UpdateActionResult until the test releases it: the build returns
        # (its output pipes closed, as ninja and make wait for) while its uploads are held.
        server = self.serve("hold")
        env = {"NVFRESH_REMOTE": server.url}
        source = self.two_kernels()
        self.assertEqual(self.build_with(source, "build", env, wait=False), [])
        stats = cache_stats(self.env)
        self.assertEqual((stats["stores"], stats["remote_uploads"], stats["remote_errors"]),
                         (2, 0, 0), stats)
        server.release.touch()
        wait_for_uploads(self.env)
        stats = cache_stats(self.env)
        self.assertEqual((stats["remote_uploads"], stats["remote_errors"]), (2, 0), stats)
        self.assertTrue(server.held.exists())
        # What was held is on the server: another machine is served both objects.
        other = {"NVFRESH_CACHE_DIR": str(self.root / "cache-b"), "NVFRESH_REMOTE": server.url}
        tree = self.tree(source, "build-b", env=other)
        self.assertEqual(self.build(tree, other), {"a.cu.o": "served", "b.cu.o": "served"})
        self.assertEqual(cache_stats(other)["remote_hits"], 2)

    def test_a_truncated_bytestream_read(self):
        server = self.serve("truncate")
        env = {"NVFRESH_REMOTE": server.url}
        source = self.two_kernels()
        self.assertEqual(self.build_with(source, "build-a", env), [])
        stats = cache_stats(self.env)
        self.assertEqual((stats["remote_uploads"], stats["remote_errors"]), (2, 0), stats)
        # Another machine: its lookups find both manifests, whose blobs come back cut in half.
        other = {"NVFRESH_CACHE_DIR": str(self.root / "cache-b"), "NVFRESH_REMOTE": server.url}
        lines = self.build_with(source, "build-b", other)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("the server sent other bytes for blob", lines[0])
        stats = cache_stats(other)
        self.assertIn(stats["remote_errors"], (1, 2), stats)
        self.assertEqual((stats["remote_hits"], stats["remote_uploads"], stats["stores"]),
                         (0, 0, 2))


class BudgetsForASlowServer(FakeServerCase):
    """The "delay" server answers every call right, 1.5 s late (within every call's 5 s deadline):
    the compile's and the build's budgets (NVFRESH_REMOTE_COMPILE_BUDGET, _BUILD_BUDGET) hold
    it. Asserted on the lines, the counters and the calls the server noted, never on time."""

    SLOW = "is slow: a compile's lookups took their whole budget of 2 s"
    OFF = "the rest of this build compiles without it"

    def kernels(self, count):
        names = "abcdefgh"[:count]
        files = {f"{n}.cu": marked_source([f"// {self.id()}"], [(n, f'"{n}1"', "host,dev")])
                 for n in names}
        return names, self.project([Target(f"k{n}", f"{n}.cu") for n in names], files)

    def build_all(self, names, source, name, env, parallel):
        """One build of a fresh tree: its nvfresh: lines, after checking every TU was compiled
        with the right object."""
        tree = self.tree(source, name, env=env)
        result = harness.run(["cmake", "--build", str(tree.build_dir), "--parallel", str(parallel)],
                             env=tree.merged_env(env))
        wait_for_uploads(tree.merged_env(env))
        output = (result.stdout + result.stderr).decode(errors="replace")
        self.assertEqual(result.returncode, 0, output)
        self.assertEqual({name: kind for kind, _, name, _ in events(tree.build_dir)},
                         {f"{n}.cu.o": "compiled" for n in names})
        for n in names:
            self.assertEqual(markers(tree.object(f"{n}.cu.o"))[n], {f"{n}1"})
        return [line for line in output.splitlines() if line.startswith("nvfresh:")]

    @staticmethod
    def lookups(server):
        calls = server.calls.read_text().splitlines() if server.calls.exists() else []
        return calls.count("GetActionResult")

    def test_a_compile_over_its_budget_goes_on_locally(self):
        # Each TU's manifest lookup takes 1.5 s of its 2 s; its cicc step's lookup is cut short at
        # the budget's end, and its ptxas step's is not made.
        server = self.serve("delay")
        env = {"NVFRESH_REMOTE": server.url, "NVFRESH_REMOTE_COMPILE_BUDGET": "2"}
        names, source = self.kernels(2)
        lines = self.build_all(names, source, "build", env, parallel=2)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(f"the remote cache {server.url} {self.SLOW}", lines[0])
        self.assertIn("NVFRESH_REMOTE_COMPILE_BUDGET", lines[0])
        stats = cache_stats(self.env)
        self.assertEqual((stats["remote_over_budget"], stats["remote_errors"], stats["stores"]),
                         (2, 0, 2), stats)
        # Two lookups a TU at most: the ptxas step's was never sent.
        self.assertIn(self.lookups(server), range(2, 5))

    def test_a_build_over_its_budget_turns_the_remote_off(self):
        # One TU at a time: the first loses 2 s, under the build's 3.5 s; the second takes the sum
        # past it, and the last two never ask (had they asked, they would be over budget too).
        server = self.serve("delay")
        env = {"NVFRESH_REMOTE": server.url, "NVFRESH_REMOTE_COMPILE_BUDGET": "2",
               "NVFRESH_REMOTE_BUILD_BUDGET": "3.5"}
        names, source = self.kernels(4)
        lines = self.build_all(names, source, "build", env, parallel=1)
        self.assertEqual(len(lines), 2, lines)
        self.assertIn(self.SLOW, lines[0])
        self.assertIn(f"the remote cache {server.url} is slow: compiles of this build lost ",
                      lines[1])
        self.assertIn("the build's budget of 3.5 s (NVFRESH_REMOTE_BUILD_BUDGET); " + self.OFF,
                      lines[1])
        stats = cache_stats(self.env)
        self.assertEqual((stats["remote_over_budget"], stats["remote_errors"], stats["stores"]),
                         (2, 0, 4), stats)
        self.assertIn(self.lookups(server), range(2, 5))

    def test_a_budget_large_enough_is_served_by_the_slow_server(self):
        server = self.serve("delay")
        env = {"NVFRESH_REMOTE": server.url, "NVFRESH_REMOTE_COMPILE_BUDGET": "60"}
        names, source = self.kernels(1)
        self.assertEqual(self.build_all(names, source, "build-a", env, parallel=1), [])
        self.assertEqual(cache_stats(self.env)["remote_uploads"], 1)
        other = dict(env, NVFRESH_CACHE_DIR=str(self.root / "cache-b"))
        tree = self.tree(source, "build-b", env=other)
        self.assertEqual(self.build(tree, other), {"a.cu.o": "served"})
        stats = cache_stats(other)
        self.assertEqual((stats["remote_hits"], stats["remote_over_budget"],
                          stats["remote_errors"]), (1, 0, 0), stats)


if __name__ == "__main__":
    harness.main()
