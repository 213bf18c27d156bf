"""Remote execution of cicc and ptxas (NVFRESH_REMOTE_EXEC): a real buildbox-casd serving REAPI
Execution on 127.0.0.1 with buildbox-run (bubblewrap) as its worker (casd_server.py), real nvcc,
CMake and Ninja.

A two-arch (80;90), -rdc=true TU with ptxas -v (so that its steps print) is built with every step
missed by the step cache run on casd: the object equals a local compile's (the bytes, nvcc's tmpxft
stem aside, and `nvfresh compare`), its record lists the same inputs, the console the same lines,
and the steps are stored as local runs are (a host-only edit is then served from the step cache).
Each way remote execution can fail runs the steps locally, with one `nvfresh:` line for the build:
the server down, a worker whose toolkit differs (casd binding a patched nvcc.profile over this
machine's), a worker on which the tool fails (a broken libm bound over the real one), and a step
that takes longer than NVFRESH_REMOTE_EXEC_TIMEOUT.
"""
import os
import re
import shutil
from pathlib import Path

import harness
from buildgrid_server import free_port
from casd_server import CasdServer, missing
from project import normalized
from test_step_cache import NVFRESH, StepCacheTree

ALL_STEPS = {("compute_80", "cicc"), ("sm_80", "ptxas"), ("compute_90", "cicc"), ("sm_90", "ptxas")}
REMOTE_RE = re.compile(r"\] step (\S+) (cicc|ptxas) ran remotely")
RUN_TIME_RE = re.compile(r"Compile time = [0-9.]+ ms")


def require_casd():
    why = missing()
    if why:
        harness.fail_under_ci_else_skip(f"{why}; the remote execution tests did NOT run")


def toolkit_file(relative):
    """A file of the toolkit nvcc belongs to, as its real path (what the sums name), also when nvcc
    on PATH is a wrapper script outside the toolkit (as /usr/local/bin/nvcc is on CI machines)."""
    return harness.nvcc_binary(harness.find_nvcc()).parent.parent / relative


def nvfresh_lines(output):
    """nvfresh's lines about remote execution (not the build's check of stale objects)."""
    return [line for line in output.splitlines()
            if line.startswith("nvfresh: ") and "remote exec" in line]


def ptxas_lines(output):
    """What the compile printed (ptxas -v), without Ninja's progress and ptxas's run times."""
    return sorted(RUN_TIME_RE.sub("", line) for line in output.splitlines()
                  if not line.startswith("[") and not line.startswith("nvfresh: "))


class RemoteExecution(StepCacheTree, harness.unittest.TestCase):
    maxDiff = None
    @classmethod
    def setUpClass(cls):
        require_casd()
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-remote-exec-")
        cls.counter = 0
        cls.server = CasdServer(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def remote_steps(self, before):
        return {(p, t) for p, t in REMOTE_RE.findall(self.log.read_text()[len(before):])}

    def build_executing(self, url, **extra):
        """One build with remote execution at `url`: (its output, the steps that ran remotely)."""
        self.env.update({"NVFRESH_REMOTE_EXEC": url, **extra})
        before = self.log.read_text() if self.log.exists() else ""
        output = self.tree.build(env=self.env).output
        return output, self.remote_steps(before)

    def local_reference(self):
        """The object, record inputs and ptxas lines of a compile without any cache or executor."""
        served = self.tree.object(self.OBJECT)
        kept = self.root / "remote.o"
        shutil.copy(served, kept)
        inputs = self.record_inputs()
        served.unlink()
        output = self.tree.build(env={"NVFRESH_CACHE": "0", "NVFRESH_REMOTE_EXEC": ""}).output
        self.assertEqual(nvfresh_lines(output), [])
        return kept, inputs, output

    def assert_like_local_compile(self, output):
        kept, inputs, local_output = self.local_reference()
        local = self.tree.object(self.OBJECT)
        self.assertEqual(normalized(kept.read_bytes()), normalized(local.read_bytes()),
                         "an object of remotely executed steps differs from a local compile")
        compared = harness.run([NVFRESH, "compare", str(kept), str(local)])
        self.assertEqual(compared.returncode, 0, compared.stdout.decode())
        local_inputs = self.record_inputs()
        self.assertEqual({k: v for k, v in inputs.items() if local_inputs.get(k) != v},
                         {k: v for k, v in local_inputs.items() if inputs.get(k) != v},
                         "the record of a compile with remote steps lists other inputs")
        self.assertEqual(ptxas_lines(output), ptxas_lines(local_output))

    def test_steps_run_on_the_executor_equal_local_ones(self):
        self.make_tree(options=["-rdc=true", "-Xptxas=-v"])
        output, remote = self.build_executing(self.server.url)
        self.assertEqual(nvfresh_lines(output), [])
        self.assertEqual(remote, ALL_STEPS)
        self.assertIn("Compiling entry function '_Z6kernelPi' for 'sm_90'", output)
        self.assert_like_local_compile(output)
        # Stored as local runs are: a host-only edit is served from the step cache.
        self.env["NVFRESH_CACHE"] = "1"
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(env=self.env), {s: "served" for s in ALL_STEPS})

    def check_falls_back(self, url, expected_line, server_text=None, **extra):
        """A build whose steps all run locally after the executor at `url` failed them, with one
        `nvfresh:` line holding `expected_line`; its object equals a local compile's."""
        self.make_tree()
        output, remote = self.build_executing(url, **extra)
        self.assertEqual(remote, set())
        lines = nvfresh_lines(output)
        self.assertEqual(len(lines), 1, output)
        self.assertIn(expected_line, lines[0])
        self.assert_like_local_compile(output)
        # The local runs were stored: after a host-only edit, without the executor, every step is
        # served.
        self.set_values(HOST_TEXT='"host-2"')
        self.assertEqual(self.steps_of_build(env={"NVFRESH_REMOTE_EXEC": ""}),
                         {s: "served" for s in ALL_STEPS}, "the local runs were not stored")

    def test_server_down_runs_locally(self):
        self.check_falls_back(f"grpc://127.0.0.1:{free_port()}", "cannot connect")

    def test_timeout_runs_locally(self):
        self.check_falls_back(self.server.url, "no result within",
                              NVFRESH_REMOTE_EXEC_TIMEOUT="0.001")

    def test_worker_with_another_toolkit_is_refused(self):
        patched = self.work / "nvcc.profile"
        if not patched.exists():
            patched.write_text(toolkit_file("bin/nvcc.profile").read_text() + "\n# another toolkit\n")
        worker = CasdServer(self.work, "casd-other-toolkit",
                            binds=[(str(patched), str(toolkit_file("bin/nvcc.profile")))])
        try:
            self.check_falls_back(worker.url, "toolkit differs")
        finally:
            worker.stop()

    def test_step_failing_on_the_worker_runs_locally(self):
        libm = os.path.realpath("/usr/lib/x86_64-linux-gnu/libm.so.6")
        worker = CasdServer(self.work, "casd-broken-libm",
                            binds=[("/dev/null", libm), ("/dev/null", "/lib/x86_64-linux-gnu/libm.so.6")])
        try:
            self.check_falls_back(worker.url, "a step failed on the remote executor")
        finally:
            worker.stop()


if __name__ == "__main__":
    harness.main()
