"""Unit tests of the Python package's glue (python/nvfresh): pure logic, no nvcc, no build.

How the binary is found (nvfresh.find_executable), the PYTORCH_NVCC it composes, the rewrite of
torch's JIT link rule, the link launcher put in front of distutils' spawn and taken away after, and
that without a binary (or with torch's distutils backend, or without _run_ninja_build) torch builds
as it always does, with one "nvfresh:" line. torch is tests/integration/fake_torch (see there).
The builds themselves are tested in tests/integration/test_pytorch_build_extension.py.
"""
import contextlib
import importlib.util
import io
import os
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("NVFRESH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path[:0] = [str(SOURCE_DIR / "tests" / "integration" / "fake_torch"), str(SOURCE_DIR / "python")]

import nvfresh  # noqa: E402
import nvfresh.torch as glue  # noqa: E402
from torch.utils import cpp_extension as fake_torch  # noqa: E402

JIT_NINJA = """ninja_required_version = 1.3
cxx = c++

rule link
  command = $cxx $in $ldflags -o $out

build main.o: compile /w/main.cpp

build ext.so: link main.o cuda.cuda.o

default ext.so
"""


def executable(path, text="#!/bin/sh\n"):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def package_copy(root):
    """The nvfresh package copied to <root>/nvfresh and imported from there (its own __file__)."""
    shutil.copytree(SOURCE_DIR / "python" / "nvfresh", root / "nvfresh")
    spec = importlib.util.spec_from_file_location("nvfresh_copy", root / "nvfresh" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FindExecutable(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="nvfresh-glue-"))
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_the_environment_variable_comes_first(self):
        binary = executable(self.tmp / "elsewhere" / "nvfresh")
        checkout = self.tmp / "checkout"
        (checkout / "CMakeLists.txt").parent.mkdir()
        (checkout / "CMakeLists.txt").write_text("")
        executable(checkout / "build" / "bin" / "nvfresh")
        module = package_copy(checkout / "python")
        self.assertEqual(module.find_executable({"NVFRESH_EXECUTABLE": str(binary), "PATH": ""}), str(binary))

    def test_an_environment_variable_naming_no_executable_is_an_error_not_a_fallback(self):
        on_path = executable(self.tmp / "bin" / "nvfresh")
        with self.assertRaisesRegex(nvfresh.ExecutableNotFound, "NVFRESH_EXECUTABLE=/no/such/nvfresh"):
            nvfresh.find_executable({"NVFRESH_EXECUTABLE": "/no/such/nvfresh", "PATH": str(on_path.parent)})

    def test_the_checkout_build_then_path(self):
        checkout = self.tmp / "checkout"
        checkout.mkdir()
        (checkout / "CMakeLists.txt").write_text("")
        module = package_copy(checkout / "python")
        on_path = executable(self.tmp / "bin" / "nvfresh")
        env = {"PATH": str(on_path.parent)}
        self.assertEqual(module.find_executable(env), str(on_path), "no checkout build yet: PATH")
        built = executable(checkout / "build" / "bin" / "nvfresh")
        self.assertEqual(module.find_executable(env), str(built))

    def test_an_installed_package_uses_path_and_says_what_it_looked_for(self):
        module = package_copy(self.tmp / "site-packages")
        with self.assertRaises(module.ExecutableNotFound) as raised:
            module.find_executable({"PATH": str(self.tmp / "empty")})
        self.assertIn("NVFRESH_EXECUTABLE", str(raised.exception))
        self.assertIn("nvfresh on PATH", str(raised.exception))


class Composition(unittest.TestCase):
    def test_nvcc_command_puts_nvfresh_in_front_of_torchs_nvcc(self):
        self.assertEqual(glue.nvcc_command("/n/nvfresh", {}), f"/n/nvfresh {fake_torch._join_cuda_home('bin', 'nvcc')}")
        self.assertEqual(glue.nvcc_command("/n/nvfresh", {"PYTORCH_NVCC": "ccache nvcc"}), "/n/nvfresh ccache nvcc")
        self.assertEqual(glue.nvcc_command("/my tools/nvfresh", {"PYTORCH_NVCC": "'/cuda 13/bin/nvcc'"}),
                         "'/my tools/nvfresh' '/cuda 13/bin/nvcc'")
        self.assertIsNone(glue.nvcc_command("/n/nvfresh", {"PYTORCH_NVCC": "/x/nvfresh nvcc"}), "already in front")

    def test_nvcc_command_leaves_a_torch_without_cuda_alone(self):
        with mock_attribute(fake_torch, "CUDA_HOME", None):
            self.assertIsNone(glue.nvcc_command("/n/nvfresh", {}))

    def test_the_jit_link_rule_goes_through_link_record_once(self):
        launcher = glue.link_launcher("/n/nvfresh", "/b/ext dir")
        rewritten = glue.with_link_recorded(JIT_NINJA, launcher)
        self.assertIn("rule link\n  command = /n/nvfresh link-record -C '/b/ext dir' -- $cxx $in $ldflags -o $out\n",
                      rewritten)
        self.assertEqual(rewritten.replace("/n/nvfresh link-record -C '/b/ext dir' -- ", ""), JIT_NINJA)
        self.assertIsNone(glue.with_link_recorded(rewritten, launcher), "already rewritten: left alone")
        self.assertIsNone(glue.with_link_recorded("rule compile\n  command = $cxx -c $in\n", launcher))
        dollar = glue.with_link_recorded(JIT_NINJA, glue.link_launcher("/n$x/nvfresh", "/b"))
        self.assertIn("command = '/n$$x/nvfresh' link-record", dollar, "ninja's $ escaped")


@contextlib.contextmanager
def mock_attribute(owner, name, value):
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


class RecordingCompiler:
    def __init__(self):
        self.spawned = []

    def spawn(self, cmd, **kwargs):
        self.spawned.append(cmd)


class Wrapping(unittest.TestCase):
    def test_spawn_goes_through_the_launcher_only_for_the_build(self):
        compiler = RecordingCompiler()
        with glue._spawning_through(compiler, ["/n/nvfresh", "link-record", "-C", "/b", "--"]):
            compiler.spawn(["g++", "-shared", "a.o", "-o", "x.so"])
        compiler.spawn(["g++", "after"])
        self.assertEqual(compiler.spawned, [["/n/nvfresh", "link-record", "-C", "/b", "--", "g++", "-shared", "a.o",
                                             "-o", "x.so"], ["g++", "after"]])
        self.assertNotIn("spawn", vars(compiler), "the instance attribute is gone after the build")

    def test_pytorch_nvcc_is_set_for_the_build_only(self):
        os.environ.pop("PYTORCH_NVCC", None)
        with glue._environment("PYTORCH_NVCC", "/n/nvfresh nvcc"):
            self.assertEqual(os.environ["PYTORCH_NVCC"], "/n/nvfresh nvcc")
        self.assertNotIn("PYTORCH_NVCC", os.environ)
        os.environ["PYTORCH_NVCC"] = "ccache nvcc"
        self.addCleanup(os.environ.pop, "PYTORCH_NVCC", None)
        with glue._environment("PYTORCH_NVCC", "/n/nvfresh ccache nvcc"):
            pass
        self.assertEqual(os.environ["PYTORCH_NVCC"], "ccache nvcc")


class WithoutNvfresh(unittest.TestCase):
    """Nothing found, or nothing nvfresh can take part in: torch's build, one "nvfresh:" line."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="nvfresh-glue-"))
        self.addCleanup(shutil.rmtree, self.tmp)

    def stderr_of(self, function, *args):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            result = function(*args)
        return result, err.getvalue()

    def test_jit_without_a_binary_runs_torchs_load(self):
        calls = []
        with mock_attribute(nvfresh, "find_executable", raise_not_found):
            result, err = self.stderr_of(glue._jit, lambda *a: calls.append(a) or "module", "ext", ["a.cu"])
        self.assertEqual((result, calls), ("module", [("ext", ["a.cu"])]))
        self.assertRegex(err, r"^nvfresh: no binary here; building without nvfresh\n$")

    def test_jit_without_run_ninja_build_runs_torchs_load(self):
        binary = executable(self.tmp / "nvfresh")
        with mock_attribute(nvfresh, "find_executable", lambda: str(binary)):
            del fake_torch._run_ninja_build
            try:
                result, err = self.stderr_of(glue._jit, lambda *a: "module", "ext", [])
            finally:
                fake_torch._run_ninja_build = ORIGINAL_RUN_NINJA
        self.assertEqual(result, "module")
        self.assertIn("nvfresh: this torch has no torch.utils.cpp_extension._run_ninja_build", err)

    def test_the_distutils_backend_is_built_without_nvfresh(self):
        from setuptools import Distribution
        binary = executable(self.tmp / "nvfresh")
        command = glue.BuildExtension(Distribution(), use_ninja=False)
        with mock_attribute(nvfresh, "find_executable", lambda: str(binary)):
            result, err = self.stderr_of(command._nvfresh)
            again, err_again = self.stderr_of(command._nvfresh)
        self.assertEqual((result, again, err_again), (None, None, ""))
        self.assertIn("distutils backend", err)

    def test_a_binary_that_does_not_run_is_not_used(self):
        broken = executable(self.tmp / "nvfresh", "#!/bin/sh\necho 'libfmt.so.9: cannot open shared object file' >&2\n"
                                                  "exit 127\n")
        calls = []
        with mock_attribute(nvfresh, "find_executable", lambda: str(broken)):
            result, err = self.stderr_of(glue._jit, lambda *a: calls.append(a) or "module", "ext", [])
        self.assertEqual((result, len(calls)), ("module", 1))
        self.assertIn(f"nvfresh: {broken} does not run (exit 127: libfmt.so.9: cannot open shared object file); "
                      "building without nvfresh", err)

    def test_sync_that_cannot_run_is_a_warning(self):
        _, err = self.stderr_of(glue.sync, str(self.tmp / "missing"), str(self.tmp))
        self.assertIn("nvfresh: cannot run", err)


ORIGINAL_RUN_NINJA = fake_torch._run_ninja_build


def raise_not_found():
    raise nvfresh.ExecutableNotFound("no binary here")


if __name__ == "__main__":
    unittest.main()
