"""nvfresh.torch (python/nvfresh/torch.py) in a real setuptools build of examples/pytorch_extension,
with real nvcc and ninja, and side by side with plain torch.

torch itself is a multi-GB CUDA wheel: tests/integration/fake_torch stands in for
torch.utils.cpp_extension (its docstring says what it mirrors: the build.ninja torch writes, with
the cuda_compile rule, run by ninja in build/temp.*, and setuptools linking the .so itself). The
example's own setup.py, scale_kernel.cu and include/scale_config.h are built; only scale_ext.cpp,
which needs torch's headers, is replaced by a binding in the Python C API. Its scale_factor()
returns the kScale scale_kernel.cu was compiled with, so importing the built .so tells, without a
GPU, which version of the header the .so Python loads holds.

  setup.py (AOT): build_ext --inplace gives 2.0 and `check` names the .so and its in-place copy;
    scale_config.h becomes 3.0, saved with its old mtime; plain torch (the same project with torch's
    BuildExtension) rebuilds no object and still gives 2.0; `check` says the object is stale and
    both .so relink pending; nvfresh's build_ext --inplace gives 3.0, the sm_80 cubin in the object,
    the .so and its copy holds 3.0f, `check` exits 0 and names both .so as fresh. A build without
    --inplace after a further edit leaves the in-place copy behind: `check` names it relink pending.
  load() (JIT): nvfresh.torch.load in a new process each time gives 2.0, then 3.0 after the same
    edit, and `check` names the .so; torch's own load() stays at 2.0. load_inline() the same.
"""
import os
import re
import shutil
import struct
import sys
from pathlib import Path

import harness
from objects import fatbin_entries

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
SOURCE_DIR = harness.source_dir()
EXAMPLE = SOURCE_DIR / "examples" / "pytorch_extension"
FAKE_TORCH = Path(__file__).resolve().parent / "fake_torch"
CUDA_HOME = harness.nvcc_binary(NVCC).parent.parent
THREE = struct.pack("<f", 3.0)

BINDING = """\
#include <Python.h>

float scale_factor();

static PyObject* py_scale_factor(PyObject*, PyObject*)
{
  return PyFloat_FromDouble(scale_factor());
}

static PyMethodDef k_methods[] = {{"scale_factor", py_scale_factor, METH_NOARGS, "kScale"},
                                  {nullptr, nullptr, 0, nullptr}};
static PyModuleDef k_module = {PyModuleDef_HEAD_INIT, "scale_ext", nullptr, -1, k_methods};

PyMODINIT_FUNC PyInit_scale_ext()
{
  return PyModule_Create(&k_module);
}
"""

NVFRESH_IMPORT = "from nvfresh.torch import BuildExtension"
TORCH_IMPORT = "from torch.utils.cpp_extension import BuildExtension"

JIT_SCRIPT = """\
import sys
import {module} as ext
src = sys.argv[1]
m = ext.load("scale_ext", [src + "/scale_kernel.cu", src + "/binding.cpp"],
             extra_include_paths=[src + "/include"], build_directory=sys.argv[2], verbose=True)
print("scale_factor", m.scale_factor())
"""

INLINE_SCRIPT = """\
import sys
import nvfresh.torch
src = sys.argv[1]
m = nvfresh.torch.load_inline("inline_ext", [open(src + "/binding.cpp").read().replace("scale_ext", "inline_ext")],
                              cuda_sources=['#include "scale_config.h"', "float scale_factor() {{ return kScale; }}"],
                              extra_include_paths=[src + "/include"], build_directory=sys.argv[2])
print("scale_factor", m.scale_factor())
"""


def environment():
    env = {
        "PYTHONPATH": os.pathsep.join([str(FAKE_TORCH), str(SOURCE_DIR / "python")]),
        "NVFRESH_EXECUTABLE": NVFRESH,
        "TORCH_CUDA_ARCH_LIST": "8.0",
        "CUDA_HOME": str(CUDA_HOME),
        "LD_LIBRARY_PATH": str(CUDA_HOME / "lib64"),
    }
    return env


def python(args, cwd):
    env = dict(os.environ, **environment())
    env.pop("PYTORCH_NVCC", None)
    return harness.run([sys.executable] + args, cwd=cwd, env=env, check=True)


def scale_factor(module_dir):
    result = python(["-c", "import scale_ext; print(scale_ext.scale_factor())"], module_dir)
    return float(result.stdout.decode())


def edit_keeping_mtime(header, old, new):
    before = header.stat()
    header.write_text(header.read_text().replace(old, new))
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))


def check(build_dir):
    result = harness.nvfresh_check(build_dir)
    return result.returncode, result.stdout.decode() + result.stderr.decode()


def project(work, name, build_extension_import):
    """A copy of the example with the C-API binding; its setup.py imports BuildExtension as given."""
    src = work / name
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.so"))
    (src / "binding.cpp").write_text(BINDING)
    setup = (EXAMPLE / "setup.py").read_text()
    assert '"scale_ext.cpp"' in setup and NVFRESH_IMPORT in setup, "the example's setup.py changed"
    setup = setup.replace('"scale_ext.cpp"', '"binding.cpp"').replace(NVFRESH_IMPORT, build_extension_import)
    (src / "setup.py").write_text(setup)
    return src


class AheadOfTime(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-torch-aot-")
        self.src = project(self.work, "nvfresh", NVFRESH_IMPORT)
        self.plain = project(self.work, "plain", TORCH_IMPORT)

    def build(self, src, *options):
        return python(["setup.py", "build_ext", *options], src).stdout.decode()

    def outputs(self, src):
        temp = next((src / "build").glob("temp.*"))
        linked = next((src / "build").glob("lib.*/scale_ext*.so"))
        copy = src / linked.name
        return temp, temp / "scale_kernel.o", linked, copy

    def test_old_mtime_edit_reaches_the_so_python_imports(self):
        for src in (self.src, self.plain):
            self.build(src, "--inplace")
            self.assertEqual(scale_factor(src), 2.0)
        temp, obj, linked, copy = self.outputs(self.src)
        rc, report = check(temp)
        self.assertEqual(rc, 0, report)
        for so in (linked, copy):
            self.assertRegex(report, rf"(?m)^fresh  \S*/{re.escape(str(so.relative_to(self.src)))}: linked from")
        self.assertNotIn(THREE, fatbin_entries(obj)[("elf", 80)], "3.0f is not in the first kernel")

        for src in (self.src, self.plain):
            edit_keeping_mtime(src / "include" / "scale_config.h", "2.0f", "3.0f")
        plain_log = self.build(self.plain, "--inplace")
        self.assertNotIn("nvcc", plain_log, "plain torch's ninja sees no change")
        self.assertEqual(scale_factor(self.plain), 2.0, "plain torch keeps the stale kernel")

        rc, report = check(temp)
        self.assertEqual(rc, 1, report)
        self.assertIn("scale_config.h changed", report)
        self.assertEqual(len(re.findall(r"(?m)^relink .*scale_ext.*\.so$", report)), 2, report)

        log = self.build(self.src, "--inplace")
        self.assertIn("nvfresh: stale, will rebuild", log)
        self.assertEqual(scale_factor(self.src), 3.0)
        for path in (obj, linked, copy):
            self.assertIn(THREE, fatbin_entries(path)[("elf", 80)], f"{path} holds the new kernel")
        rc, report = check(temp)
        self.assertEqual(rc, 0, report)
        self.assertEqual(len(re.findall(r"(?m)^fresh  .*scale_ext.*\.so: linked from", report)), 2, report)

        edit_keeping_mtime(self.src / "include" / "scale_config.h", "3.0f", "4.0f")
        self.build(self.src)
        rc, report = check(temp)
        self.assertEqual(rc, 1, report)
        self.assertRegex(report, rf"(?m)^fresh  {re.escape(str(linked.resolve()))}: linked from")
        self.assertRegex(report, rf"(?m)^relink {re.escape(str(copy.resolve()))}$")
        self.assertEqual(scale_factor(self.src), 3.0, "the in-place copy was left behind")


class JustInTime(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-torch-jit-")
        self.src = project(self.work, "src", NVFRESH_IMPORT)
        (self.work / "jit.py").write_text(JIT_SCRIPT.format(module="nvfresh.torch"))
        (self.work / "plain_jit.py").write_text(JIT_SCRIPT.format(module="torch.utils.cpp_extension"))

    def load(self, script, build_dir):
        build_dir.mkdir(exist_ok=True)
        out = python([str(self.work / script), str(self.src), str(build_dir)], self.work).stdout.decode()
        return float(re.search(r"scale_factor (\S+)", out).group(1))

    def test_load_in_a_new_process_sees_an_old_mtime_edit(self):
        jit, plain = self.work / "jit", self.work / "plain"
        self.assertEqual(self.load("jit.py", jit), 2.0)
        self.assertEqual(self.load("plain_jit.py", plain), 2.0)
        edit_keeping_mtime(self.src / "include" / "scale_config.h", "2.0f", "3.0f")
        self.assertEqual(self.load("plain_jit.py", plain), 2.0, "torch's own load() keeps the stale kernel")
        self.assertEqual(self.load("jit.py", jit), 3.0)
        rc, report = check(jit)
        self.assertEqual(rc, 0, report)
        self.assertRegex(report, rf"(?m)^fresh  \S*/jit/scale_ext\.so: linked from")
        self.assertIn(THREE, fatbin_entries(jit / "scale_ext.so")[("elf", 80)])

    def test_load_inline(self):
        (self.work / "inline.py").write_text(INLINE_SCRIPT.format())
        build = self.work / "inline"
        self.assertEqual(self.load("inline.py", build), 2.0)
        edit_keeping_mtime(self.src / "include" / "scale_config.h", "2.0f", "3.0f")
        self.assertEqual(self.load("inline.py", build), 3.0)
        rc, report = check(build)
        self.assertEqual(rc, 0, report)
        self.assertRegex(report, r"(?m)^fresh  \S*/inline/inline_ext\.so: linked from")


if __name__ == "__main__":
    harness.main()
