"""The object cache shared through a remote cache that speaks REAPI v2, against a real BuildGrid
server on 127.0.0.1 (BuildGrid 0.4.4 from PyPI, in <repo>/.venv-buildgrid: scripts/install_test_tools.sh),
with real nvcc, CMake and Ninja.

Two "machines" are two local cache dirs: machine A builds and uploads; machine B, with an empty
cache dir, builds the same checkout at the same path (a container's /workspace, CI's fixed dir)
and is served from the server. The server runs with disk storage in the class's temp dir and is
stopped by its PID. Without the venv the file is skipped, loudly; under CI=true that is a failure.
"""
import hashlib
import os
import shutil
import subprocess
import socket
import threading
from pathlib import Path

import harness
import project
from buildgrid_server import BATCH_LIMIT, BGD, BuildGridServer, free_port
from project import Target, marked_source, markers
from test_cache import FILE_NAMING, CacheCase, cache_stats, events, kinds, wait_for_uploads


def require_buildgrid(what):
    """A loud skip (a failure under CI=true) where BuildGrid's venv is missing."""
    if not BGD.exists():
        harness.fail_under_ci_else_skip(
            f"BuildGrid is not installed ({BGD}): run scripts/install_test_tools.sh; the {what} "
            "tests did NOT run")


def machine_env(root, name, server, **extra):
    """The environment of one machine: its own cache dir under `root`, the shared server."""
    env = {"NVFRESH_CACHE_DIR": str(root / f"cache-{name}"), "NVFRESH_REMOTE": server.url}
    env.update(extra)
    return env


class RemoteCase(CacheCase):
    @classmethod
    def setUpClass(cls):
        require_buildgrid("remote cache")
        super().setUpClass()
        cls.server = BuildGridServer(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def machine(self, name, **extra):
        """The environment of one machine: its own cache dir, the shared server."""
        return machine_env(self.root, name, self.server, **extra)

    def fresh_tree(self, source, env):
        """The build dir at the same path as the last one, empty: another machine's checkout."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        tree = self.tree(source, "build", env=env)
        return tree

    def build_output(self, tree, env):
        result = harness.run(["cmake", "--build", str(tree.build_dir), "--parallel", "2"],
                             env=tree.merged_env(env), check=True)
        wait_for_uploads(tree.merged_env(env))
        return result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")

    def two_kernels(self):
        # Sources of their own per test (the comment): the server is shared by the class's tests.
        case = f"// {self.id()}"
        files = {"a.cu": marked_source([case, '#include "value.h"'], [("a", "VALUE", "host,dev")]),
                 "b.cu": marked_source([case], [("b", '"b1"', "host,dev")]),
                 "include/value.h": '#define VALUE "A"\n'}
        return self.project([Target("ka", "a.cu"), Target("kb", "b.cu")], files)


class SharedThroughBuildGrid(RemoteCase):
    def test_another_machine_is_served_from_the_remote(self):
        source = self.two_kernels()
        a = self.machine("a")
        tree = self.fresh_tree(source, a)
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        self.assertEqual(cache_stats(a)["remote_uploads"], 2)

        b = self.machine("b")
        tree = self.fresh_tree(source, b)
        self.assertEqual(self.build(tree), {"a.cu.o": "served", "b.cu.o": "served"})
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["remote_errors"], stats["remote_uploads"]),
                         (2, 0, 0))
        self.assertGreater(stats["remote_bytes_down"], 0)
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"A"})
        for name in ("a.cu.o", "b.cu.o"):
            self.assert_same_as_uncached(tree, name, env=b)
        # The remote hit filled machine B's local cache: a third tree of B needs no server.
        tree = self.fresh_tree(source, dict(b, NVFRESH_REMOTE="grpc://127.0.0.1:1"))
        self.assertEqual(self.build(tree), {"a.cu.o": "served", "b.cu.o": "served"})
        self.assertEqual(cache_stats(b)["remote_errors"], 0)

    def test_a_full_local_disk_is_not_the_remote_s_fault(self):
        # Machine B's cache dir is a full tmpfs: what the server sends cannot be kept. One line
        # names the local disk; the remote is not marked failed; the build compiles.
        source = self.two_kernels()
        tree = self.fresh_tree(source, self.machine("a"))
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        full = self.root / "cache-full"
        full.mkdir()
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(full)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if mounted.returncode != 0:
            harness.fail_under_ci_else_skip(
                f"cannot mount a tmpfs ({mounted.stdout.decode().strip()}): the full-disk case "
                "needs root and did NOT run")
        self.addCleanup(subprocess.run, ["umount", "-l", str(full)])
        subprocess.run(["dd", "if=/dev/zero", f"of={full}/fill", "bs=4k"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        b = dict(self.machine("b"), NVFRESH_CACHE_DIR=str(full))
        tree = self.fresh_tree(source, b)
        lines = [line for line in self.build_output(tree, b).splitlines()
                 if line.startswith("nvfresh:")]
        self.assertEqual(kinds(tree.build_dir), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        disk = [line for line in lines if "the local disk is full, not the remote cache" in line]
        self.assertEqual(len(disk), 1, lines)
        self.assertIn(str(full), disk[0])
        self.assertFalse([line for line in lines if "failed:" in line], lines)
        self.assertEqual(list(tree.build_dir.rglob("remote-failed")), [])

    def test_an_edited_header_is_not_served(self):
        source = self.two_kernels()
        tree = self.fresh_tree(source, self.machine("a"))
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        harness.write(source / "include" / "value.h", '#define VALUE "B"\n')
        b = self.machine("b")
        tree = self.fresh_tree(source, b)
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "served"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"B"})
        self.assert_same_as_uncached(tree, "a.cu.o", env=b)

    def test_read_only_uploads_nothing(self):
        source = self.project([Target("kr", "r.cu")],
                              {"r.cu": marked_source([f"// {self.id()}"], [("r", '"r1"', "host,dev")])})
        laptop = self.machine("laptop", NVFRESH_REMOTE_READ_ONLY="1")
        tree = self.fresh_tree(source, laptop)
        self.assertEqual(self.build(tree), {"r.cu.o": "compiled"})
        stats = cache_stats(laptop)
        self.assertEqual((stats["remote_uploads"], stats["remote_bytes_up"], stats["remote_misses"]),
                         (0, 0, 1))
        other = self.machine("other")
        tree = self.fresh_tree(source, other)
        self.assertEqual(self.build(tree), {"r.cu.o": "compiled"})
        self.assertEqual(cache_stats(other)["remote_hits"], 0)

    def test_a_large_object_goes_through_bytestream(self):
        blob = self.root / "src" / "payload.bin"
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(os.urandom(BATCH_LIMIT + (1 << 20)))
        big = ('__asm__(".section .rodata.nvfresh_payload,\\"a\\"\\n.incbin \\"' + str(blob) +
               '\\"\\n.text");\n')
        source = self.project([Target("kl", "l.cu")],
                              {"l.cu": marked_source([big], [("l", '"l1"', "host,dev")])})
        tree = self.fresh_tree(source, self.machine("a"))
        self.assertEqual(self.build(tree), {"l.cu.o": "compiled"})
        original = tree.object("l.cu.o").read_bytes()
        self.assertGreater(len(original), BATCH_LIMIT)
        b = self.machine("b")
        tree = self.fresh_tree(source, b)
        self.assertEqual(self.build(tree), {"l.cu.o": "served"})
        self.assertEqual(tree.object("l.cu.o").read_bytes(), original)
        self.assertGreater(cache_stats(b)["remote_bytes_down"], BATCH_LIMIT)


# The remote helper as one co-process per compile (lib/protocol/helper_socket.hpp): a launcher copied
# beside a wrapper that logs each helper run's verb (the launcher runs the nvfresh-remote beside
# itself). With SERVE_EXITS set, `serve` ends at once: every call then runs the helper itself.
HELPER_WRAPPER = """#!/bin/sh
echo "$1" >>"{log}"
if [ "$1" = serve ] && [ -n "$SERVE_EXITS" ]; then exit 0; fi
exec "{helper}" "$@"
"""


class OneHelperPerCompile(RemoteCase):
    def launcher_logging_helper_runs(self):
        bin_dir = self.root / "wrapped-bin"
        bin_dir.mkdir(exist_ok=True)
        shutil.copy2(harness.nvfresh_bin(), bin_dir / "nvfresh")
        log = bin_dir / "helper-runs"
        helper = Path(harness.nvfresh_bin()).with_name("nvfresh-remote")
        harness.write(bin_dir / "nvfresh-remote", HELPER_WRAPPER.format(log=log, helper=helper))
        (bin_dir / "nvfresh-remote").chmod(0o755)
        return bin_dir / "nvfresh", log

    def compile(self, launcher, source, env):
        """The object's bytes (one object path for every machine: it is in the compile's key)."""
        out = self.root / "k.o"
        out.unlink(missing_ok=True)
        harness.run([str(launcher), "nvcc", "-arch=sm_80", "-c", str(source), "-o", str(out)],
                    cwd=self.root, env=dict(env, NVFRESH_TRACE_LIB=harness.trace_lib()), check=True)
        wait_for_uploads(env)
        return out.read_bytes()

    def runs(self, log):
        verbs = log.read_text().split() if log.exists() else []
        log.unlink(missing_ok=True)
        return {verb: verbs.count(verb) for verb in sorted(set(verbs))}

    def test_one_helper_answers_every_lookup_and_a_lost_one_costs_nothing(self):
        launcher, log = self.launcher_logging_helper_runs()
        source = self.root / "coprocess.cu"
        harness.write(source, f"// {self.id()}\n__global__ void twice(float* x) {{ x[threadIdx.x] *= 2; }}\n"
                      "void launch(float* x) { twice<<<1, 32>>>(x); }\n")
        a = self.machine("coprocess-a")
        compiled = self.compile(launcher, source, a)
        # The object's lookup and the cicc and ptxas steps' (all misses) went to one `serve`; so
        # did the three uploads, sent after the compile as one request by one detached process
        # that held the helper on: no helper run of their own.
        self.assertEqual(self.runs(log), {"serve": 1})
        stats = cache_stats(a)
        self.assertEqual((stats["remote_uploads"], stats["remote_step_uploads"],
                          stats["remote_errors"]), (1, 2, 0))

        b = self.machine("coprocess-b")
        self.assertEqual(self.compile(launcher, source, b), compiled)
        self.assertEqual(self.runs(log), {"serve": 1})
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["remote_errors"]), (1, 0))

        # A co-process that is gone: each call runs the helper, and the compile is served the same.
        c = self.machine("coprocess-c", SERVE_EXITS="1")
        self.assertEqual(self.compile(launcher, source, c), compiled)
        runs = self.runs(log)
        self.assertEqual(runs.get("serve"), 1)
        self.assertGreaterEqual(runs.get("get", 0), 1)
        stats = cache_stats(c)
        self.assertEqual((stats["remote_hits"], stats["remote_errors"]), (1, 0))

        # And a miss without it: the batch's three uploads go as one request, one helper run.
        harness.write(source, source.read_text() + "__device__ int one_more_kernel_variable;\n")
        d = self.machine("coprocess-d", SERVE_EXITS="1")
        self.assertNotEqual(self.compile(launcher, source, d), compiled)
        self.assertEqual(self.runs(log).get("put"), 1)
        stats = cache_stats(d)
        self.assertEqual((stats["remote_uploads"], stats["remote_step_uploads"],
                          stats["remote_errors"]), (1, 2, 0))


    def test_cmake_builds_run_one_helper_per_compile(self):
        # Through CMake's launcher, with Ninja and with Makefiles: each compile's lookups (the
        # object's and its steps') and its uploads go to the one helper it starts, none to a
        # helper of its own.
        launcher, log = self.launcher_logging_helper_runs()
        source = self.two_kernels()
        for index, tool in enumerate((project.NINJA, project.MAKE)):
            env = self.machine(f"cmake-{index}", NVFRESH_TRACE_LIB=harness.trace_lib())
            tree = self.tree(source, f"build-cmake-{index}", tool=tool, env=env,
                             cache_args=[f"-DNVFRESH_EXECUTABLE={launcher}"])
            log.unlink(missing_ok=True)
            kinds_built = self.build(tree)
            self.assertEqual(set(kinds_built), {"a.cu.o", "b.cu.o"}, tool.label)
            self.assertLessEqual(set(kinds_built.values()), {"compiled", "served"}, tool.label)
            wait_for_uploads(env)
            runs = self.runs(log)
            self.assertEqual(runs.get("serve"), 2, (tool.label, runs))
            self.assertNotIn("get", runs, tool.label)
            # The compiled TUs' uploads went after each compile through its own helper.
            self.assertNotIn("put", runs, tool.label)
            compiled = list(kinds_built.values()).count("compiled")
            self.assertEqual(cache_stats(env)["remote_uploads"], compiled, tool.label)


class VanishedBlob(RemoteCase):
    def test_an_object_gone_from_the_server_is_a_miss(self):
        source = self.project([Target("kv", "v.cu")],
                              {"v.cu": marked_source([f"// {self.id()}"], [("v", '"v1"', "host,dev")])})
        tree = self.fresh_tree(source, self.machine("a"))
        self.assertEqual(self.build(tree), {"v.cu.o": "compiled"})
        digest = hashlib.sha256(tree.object("v.cu.o").read_bytes()).hexdigest()
        stored = [p for p in (self.server.dir / "cas").rglob("*")
                  if p.is_file() and str(p).replace("/", "").endswith(digest)]
        self.assertEqual(len(stored), 1, f"the object's blob {digest} in BuildGrid's disk storage")
        stored[0].unlink()
        b = self.machine("b")
        tree = self.fresh_tree(source, b)
        self.assertEqual(self.build(tree), {"v.cu.o": "compiled"})
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["remote_misses"], stats["remote_errors"]),
                         (0, 1, 0))


class AnotherCheckout(RemoteCase):
    def test_an_object_naming_another_checkout_only_with_the_setting(self):
        files = {"host.cu": f"// {self.id()}\n" + FILE_NAMING["host.cu"]}
        first = self.project([Target("host", "host.cu")], files, "src-a")
        tree = self.tree(first, "build-a", env=self.machine("a"))
        self.assertEqual(self.build(tree), {"host.cu.o": "compiled"})
        self.assertIn(str(first / "host.cu").encode(), tree.object("host.cu.o").read_bytes())

        second = shutil.copytree(first, self.root / "src-b")
        b = self.machine("b")
        tree = self.tree(second, "build-b", env=b)
        self.assertEqual(self.build(tree), {"host.cu.o": "compiled"},
                         "an object naming the other checkout is not what this tree's compile gives")
        self.assertNotIn(str(first).encode(), tree.object("host.cu.o").read_bytes())
        self.assertEqual(cache_stats(b)["remote_hits"], 0)

        third = shutil.copytree(first, self.root / "src-c")
        c = self.machine("c", NVFRESH_CACHE_ACROSS_CHECKOUTS="1", NVFRESH_REMOTE_READ_ONLY="1")
        tree = self.tree(third, "build-c", env=c)
        self.assertEqual(self.build(tree), {"host.cu.o": "served"})
        self.assertEqual(cache_stats(c)["remote_hits"], 1)
        explained = tree.explain(str(tree.object("host.cu.o"))).stdout.decode()
        # B uploaded its own entry with A's: the newest that matches is served, A's or B's.
        self.assertRegex(explained, f"served from another checkout: names ({first}|{second})")


class ServerDown(RemoteCase):
    def test_a_server_that_is_not_running_costs_one_line(self):
        source = self.two_kernels()
        down = self.machine("down", NVFRESH_REMOTE=f"grpc://127.0.0.1:{free_port()}")
        tree = self.fresh_tree(source, down)
        before = len(events(tree.build_dir))
        output = self.build_output(tree, down)
        lines = [line for line in output.splitlines() if line.startswith("nvfresh:")]
        self.assertEqual(len(lines), 1, output)
        self.assertIn("the remote cache grpc://127.0.0.1:", lines[0])
        self.assertEqual({name: kind for kind, _, name, _ in events(tree.build_dir)[before:]},
                         {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        stats = cache_stats(down)
        # -j2: both compiles may find the server down before either has said so; neither uploads.
        self.assertIn(stats["remote_errors"], (1, 2))
        self.assertEqual((stats["remote_uploads"], stats["stores"]), (0, 2))

    def test_a_server_that_never_answers_costs_one_line(self):
        # A listener that accepts connections and says nothing: gRPC's handshake never completes,
        # so only the connect deadline ends the wait.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        held = []
        stop = threading.Event()

        def accept():
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    pass
        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            source = self.project([Target("ks", "s.cu")],
                                  {"s.cu": marked_source([f"// {self.id()}"], [("s", '"s1"', "host")])})
            silent = self.machine("silent",
                                  NVFRESH_REMOTE=f"grpc://127.0.0.1:{listener.getsockname()[1]}")
            tree = self.fresh_tree(source, silent)
            output = self.build_output(tree, silent)
            self.assertEqual(kinds_of(tree), {"s.cu.o": "compiled"})
            lines = [line for line in output.splitlines() if line.startswith("nvfresh:")]
            self.assertEqual(len(lines), 1, output)
            self.assertIn("cannot connect", lines[0])
        finally:
            stop.set()
            thread.join()
            for connection in held:
                connection.close()
            listener.close()

    def test_a_server_killed_after_the_upload_is_a_local_compile(self):
        source = self.project([Target("kk", "k.cu")],
                              {"k.cu": marked_source([f"// {self.id()}"], [("k", '"k1"', "host,dev")])})
        server = BuildGridServer(self.root)
        env = {"NVFRESH_CACHE_DIR": str(self.root / "cache-a"), "NVFRESH_REMOTE": server.url}
        tree = self.fresh_tree(source, env)
        self.assertEqual(self.build(tree), {"k.cu.o": "compiled"})
        server.stop()
        env_b = dict(env, NVFRESH_CACHE_DIR=str(self.root / "cache-b"))
        tree = self.fresh_tree(source, env_b)
        output = self.build_output(tree, env_b)
        self.assertEqual(kinds_of(tree), {"k.cu.o": "compiled"})
        self.assertEqual(sum(line.startswith("nvfresh:") for line in output.splitlines()), 1, output)


def kinds_of(tree):
    return {name: kind for kind, _, name, _ in events(tree.build_dir)}


if __name__ == "__main__":
    harness.main()
