"""Remote execution of cicc and ptxas (NVFRESH_REMOTE_EXEC): a real buildbox-casd serving REAPI
Execution on 127.0.0.1 with buildbox-run (bubblewrap) as its worker (casd_server.py), real nvcc,
CMake with Ninja and with Unix Makefiles, and real project code (ggml). One casd per class.

A two-arch (80;90), -rdc=true TU with ptxas -v (so that its steps print) is built with every step
missed by the step cache run on casd (RemoteExecution: Ninja; RemoteExecutionMakefiles: make):
the object equals a local compile's (the bytes, nvcc's tmpxft stem aside, and `nvfresh compare`),
its record lists the same inputs, the console the same lines, and the steps are stored as local
runs are (a host-only edit is then served from the step cache); with nvcc's --threads=2 both
arches' steps go out at once and the object is the same.
Each way remote execution can fail runs the steps locally, with one `nvfresh:` line for the build:
the server down, a worker whose toolkit differs (casd binding a patched nvcc.profile over this
machine's), a worker on which the tool fails (a broken libm bound over the real one), and a step
that takes longer than NVFRESH_REMOTE_EXEC_TIMEOUT. RemoteExecutionOfGgml compiles one TU of
ggml's CUDA backend with its own flags through casd and locally: equal objects (its docstring says
which TU and why; CUTLASS's FMHA TU is checked by bench/remote_exec.py on the GPU machine).
"""
import os
import re
import shutil
import sys
from pathlib import Path

import harness
from buildgrid_server import free_port
from casd_server import CasdServer, missing
import project
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


class RemoteExecutionTree(StepCacheTree):
    """Mixed into a unittest.TestCase: the tiny project of StepCacheTree built with TOOL, one casd
    for the class, and the check that a build with remote steps equals a local compile."""
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

    def build_console(self, env):
        """What one build printed, stdout and stderr: Ninja prints a compile's stderr on its
        stdout, make passes it through on its own stderr."""
        result = harness.run(["cmake", "--build", str(self.tree.build_dir), "--parallel", "2"],
                             env=self.tree.merged_env(env), check=True)
        return result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")

    def remote_steps(self, before):
        return {(p, t) for p, t in REMOTE_RE.findall(self.log.read_text()[len(before):])}

    def build_executing(self, url, **extra):
        """One build with remote execution at `url`: (its output, the steps that ran remotely)."""
        self.env.update({"NVFRESH_REMOTE_EXEC": url, **extra})
        before = self.log.read_text() if self.log.exists() else ""
        output = self.build_console(self.env)
        return output, self.remote_steps(before)

    def local_reference(self):
        """The object, record inputs and ptxas lines of a compile without any cache or executor."""
        served = self.tree.object(self.OBJECT)
        kept = self.root / "remote.o"
        shutil.copy(served, kept)
        inputs = self.record_inputs()
        served.unlink()
        output = self.build_console({"NVFRESH_CACHE": "0", "NVFRESH_REMOTE_EXEC": ""})
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


class RemoteExecution(RemoteExecutionTree, harness.unittest.TestCase):
    """Ninja: the equality test and every failure path."""

    def test_arches_at_once_with_nvcc_threads(self):
        """nvcc's own --threads 2 starts both arches' steps at once, each its own step runner:
        all four run on the executor and the object equals a local compile's (also with
        --threads 2: the option is not part of the object's key)."""
        self.make_tree(options=["--threads=2"])
        output, remote = self.build_executing(self.server.url)
        self.assertEqual(nvfresh_lines(output), [])
        self.assertEqual(remote, ALL_STEPS)
        self.assert_like_local_compile(output)

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


class RemoteExecutionMakefiles(RemoteExecutionTree, harness.unittest.TestCase):
    """The equality test with CMake's "Unix Makefiles" generator (make runs nvfresh through the
    launcher; its progress lines are not the compile's console)."""
    TOOL = project.MAKE


class RemoteExecutionOfGgml(harness.unittest.TestCase):
    """Real project code: ggml's clamp.cu (its CUDA backend, from the llama-cpp-python sdist that
    scripts/install_difftest_sources.sh installs) with ggml's own flags (bench/differential.py's,
    read from its CMake files) for sm_80, -Xptxas=-v added so that the consoles say something,
    compiled by `nvfresh nvcc` with its steps on casd and again locally without any cache: the
    objects are equal (bytes apart from the tmpxft stem, and `nvfresh compare`), and so are the
    consoles. clamp.cu (two kernels) was the cheapest to compile of the small ggml TUs with device
    code that were measured for one arch (bench/README.md, "ggml TUs for the remote execution
    test"). The heavy TUs are checked by bench/remote_exec.py --cutlass (CUTLASS's FMHA TU, sm_80 +
    sm_90) and bench/remote_pool.py (8 ggml TUs) on the GPU machine; they are too slow for CI."""
    TU = "clamp"
    ARCH = "80"

    @classmethod
    def setUpClass(cls):
        require_casd()
        cls.nvcc = harness.require_nvcc()
        installed = harness.run([str(harness.source_dir() / "scripts" / "install_difftest_sources.sh")])
        if installed.returncode != 0:
            harness.fail_under_ci_else_skip(
                "ggml's sources could not be fetched; the remote execution test of ggml did NOT "
                "run\n" + installed.stderr.decode(errors="replace"))
        found = dict(line.split(" ", 1) for line in installed.stdout.decode().splitlines() if " " in line)
        cls.ggml = Path(found["ggml"])
        sys.path.insert(0, str(harness.source_dir() / "bench"))
        import differential  # ggml's compile line: one place for it
        cls.flags = [f.replace("{src}", str(cls.ggml))
                     for f in differential.ggml_project(cls.TU, [cls.ARCH], cls.ggml).flags]
        cls.flags += differential.arch_flags([cls.ARCH])
        cls.work = harness.make_workdir("nvfresh-remote-exec-ggml-")
        cls.server = CasdServer(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        if not os.environ.get("NVFRESH_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.work.parent, ignore_errors=True)

    def compile(self, name, env):
        """(the object, the console, the debug log) of one compile in a build tree of its own."""
        build = self.work / name
        build.mkdir()
        (build / "build.ninja").write_text("")  # a build tree: the record's root
        log = build / "nvfresh.log"
        result = harness.run(
            [NVFRESH, self.nvcc, *self.flags, "-Xptxas=-v", "-c",
             str(self.ggml / "src" / "ggml-cuda" / f"{self.TU}.cu"), "-o", f"{self.TU}.o"],
            cwd=build, env={"NVFRESH_CACHE_DIR": str(build / "cache"), "NVFRESH_LOG_FILE": str(log),
                            **env})
        console = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, 0, console)
        return build / f"{self.TU}.o", console, log.read_text() if log.exists() else ""

    def test_object_equals_a_local_build(self):
        remote, remote_console, log = self.compile("remote", {"NVFRESH_REMOTE_EXEC": self.server.url})
        self.assertEqual(nvfresh_lines(remote_console), [])
        self.assertEqual(set(REMOTE_RE.findall(log)),
                         {(f"compute_{self.ARCH}", "cicc"), (f"sm_{self.ARCH}", "ptxas")})
        local, local_console, _ = self.compile("local", {"NVFRESH_CACHE": "0", "NVFRESH_REMOTE_EXEC": ""})
        self.assertIn("Compiling entry function", local_console)
        self.assertEqual(normalized(remote.read_bytes()), normalized(local.read_bytes()),
                         "ggml's object with remotely executed steps differs from a local compile")
        compared = harness.run([NVFRESH, "compare", str(remote), str(local)])
        self.assertEqual(compared.returncode, 0, compared.stdout.decode())
        self.assertEqual(ptxas_lines(remote_console), ptxas_lines(local_console))


if __name__ == "__main__":
    harness.main()
