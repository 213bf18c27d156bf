#!/usr/bin/env python3
"""This example end to end with real PyTorch, side by side: plain torch and nvfresh.torch.

Two copies of this directory: one with setup.py as it is (BuildExtension from nvfresh.torch), one
with torch's own BuildExtension. In each:
  1. python setup.py build_ext --inplace;
  2. run: scale(ones(1)) on the GPU (the kernel) and scale_factor() (the host code of the same
     object): 2.0;
  3. include/scale_config.h: kScale 3.0, saved with its old mtime; build_ext --inplace again; run:
     nvfresh gives 3.0, plain torch still 2.0 (its ninja sees no change);
  4. `nvfresh check -C build/temp.*`: exit 0, naming the .so and its in-place copy as fresh;
and the same for JIT builds: torch.utils.cpp_extension.load against nvfresh.torch.load, each
load() in a new process (the header goes 3.0 -> 4.0 with its old mtime in between), then `check`
on the JIT build directory. Prints a table; exit status 0 when every nvfresh result is right.

Usage (with the Python that has torch; nvcc of torch's CUDA version on PATH or CUDA_HOME):
    python3 examples/pytorch_extension/run_gpu_check.py [--work DIR] [--arch 9.0]
The nvfresh binary: as the Python package finds it (NVFRESH_EXECUTABLE, <checkout>/build/bin,
PATH). Without a GPU the kernels are not run; the host-side scale_factor() still tells which
header version each .so holds.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))
import nvfresh  # noqa: E402

NVFRESH_IMPORT = "from nvfresh.torch import BuildExtension"
TORCH_IMPORT = "from torch.utils.cpp_extension import BuildExtension"
START = time.monotonic()

RUN = """\
import sys, torch
sys.path.insert(0, sys.argv[1])
import scale_ext
kernel = scale_ext.scale(torch.ones(1, device="cuda")).item() if torch.cuda.is_available() else None
print("values", kernel, scale_ext.scale_factor())
"""

JIT = """\
import sys, torch
from {module} import load
src, build = sys.argv[1], sys.argv[2]
m = load("scale_ext", [src + "/scale_ext.cpp", src + "/scale_kernel.cu"], extra_include_paths=[src + "/include"],
         build_directory=build, verbose=True)
kernel = m.scale(torch.ones(1, device="cuda")).item() if torch.cuda.is_available() else None
print("values", kernel, m.scale_factor())
"""


def log(message):
    print(f"[{time.monotonic() - START:5.0f} s] {message}", flush=True)


def run(cmd, cwd, env):
    result = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)
    with open(cwd / "run_gpu_check.log", "a") as file:
        file.write(f"$ {' '.join(map(str, cmd))}\n{result.stdout}\n")
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(map(str, cmd))} in {cwd}\n{result.stdout}")
    return result.stdout


def both(function):
    """function("plain"), function("nvfresh"), in parallel."""
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(s, function(s))) for s in ("plain", "nvfresh")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class Side:
    """One copy of the example: plain torch or nvfresh.torch."""

    def __init__(self, work, name, env):
        self.name = name
        self.src = work / name
        self.jit = work / f"jit-{name}"
        self.env = env
        shutil.copytree(HERE, self.src, ignore=shutil.ignore_patterns("build", "*.so", "__pycache__", "*.log"))
        setup = (HERE / "setup.py").read_text()
        if NVFRESH_IMPORT not in setup:
            sys.exit(f"{HERE / 'setup.py'} no longer imports BuildExtension from nvfresh.torch")
        if name == "plain":
            (self.src / "setup.py").write_text(setup.replace(NVFRESH_IMPORT, TORCH_IMPORT))
        (self.src / "jit_load.py").write_text(JIT.format(module="torch.utils.cpp_extension" if name == "plain"
                                                         else "nvfresh.torch"))
        (self.src / "run_ext.py").write_text(RUN)

    def build(self):
        began = time.monotonic()
        out = run([sys.executable, "setup.py", "build_ext", "--inplace"], self.src, self.env)
        return compiled_kernel(out), time.monotonic() - began

    def values(self):
        return parse_values(run([sys.executable, "run_ext.py", str(self.src)], self.src, self.env))

    def load(self):
        self.jit.mkdir(exist_ok=True)
        began = time.monotonic()
        out = run([sys.executable, "jit_load.py", str(self.src), str(self.jit)], self.src, self.env)
        return compiled_kernel(out), time.monotonic() - began, parse_values(out)

    def edit(self, old, new):
        header = self.src / "include" / "scale_config.h"
        before = header.stat()
        text = header.read_text()
        if f"kScale = {old}f;" not in text:
            sys.exit(f"{header} does not say kScale = {old}f")
        header.write_text(text.replace(f"kScale = {old}f;", f"kScale = {new}f;"))
        os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))


def compiled_kernel(ninja_output):
    return re.search(r"(?m)^\[\d+/\d+\] .*nvcc .*scale_kernel\.cu", ninja_output) is not None


def parse_values(output):
    kernel, host = re.search(r"(?m)^values (\S+) (\S+)$", output).groups()
    return None if kernel == "None" else float(kernel), float(host)


def check(nvfresh_binary, build_dir, project):
    """check's exit status and the .so files it names fresh (relative to the project), and its output."""
    result = subprocess.run([nvfresh_binary, "check", "-C", str(build_dir)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    named = [os.path.relpath(m, project.resolve()) for m in re.findall(r"(?m)^fresh  (\S+\.so):", result.stdout)]
    return result.returncode, named, result.stdout


class Table:
    def __init__(self):
        self.rows = []
        self.wrong = 0

    def add(self, step, plain, fresh):
        self.rows.append((step, plain, fresh))
        log(f"  {step}: plain torch {plain} | nvfresh.torch {fresh}")

    def values(self, step, results, expected):
        cells = {}
        for side, (kernel, host) in results.items():
            value = kernel if kernel is not None else host
            right = value == expected
            self.wrong += side == "nvfresh" and not right
            where = "scale(1)" if kernel is not None else "scale_factor() (no GPU: host)"
            cells[side] = f"{where} = {value}{'' if right else f' STALE (header says {expected})'}"
        self.add(step, cells["plain"], cells["nvfresh"])

    def check(self, step, verdict, wanted):
        rc, named, _ = verdict
        self.wrong += rc != 0 or len(named) != wanted
        self.add(step, "no records (built without nvfresh)", f"exit {rc}; fresh: {', '.join(named) or 'none'}")

    def print(self):
        print("\n| step | plain torch | nvfresh.torch |\n|---|---|---|")
        for row in self.rows:
            print("| " + " | ".join(row) + " |")
        print(f"\nnvfresh.torch: {'all right' if not self.wrong else f'{self.wrong} WRONG'}")


def built(result):
    compiled, seconds = result[:2]
    return f"{'scale_kernel.cu compiled' if compiled else 'no nvcc run'} ({seconds:.0f} s)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/nvfresh-torch-check"),
                        help="work directory (emptied first; default %(default)s)")
    parser.add_argument("--arch", default="9.0", help="TORCH_CUDA_ARCH_LIST (default %(default)s)")
    args = parser.parse_args()
    if shutil.which("nvcc") is None and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        os.environ["PATH"] = "/usr/local/cuda/bin" + os.pathsep + os.environ.get("PATH", "")
    missing = [tool for tool in ("ninja", "nvcc") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"not on PATH: {', '.join(missing)} (torch builds extensions with ninja and nvcc)")
    nvfresh_binary = nvfresh.find_executable()
    import torch
    log(f"torch {torch.__version__} (CUDA {torch.version.cuda}, GPU: {torch.cuda.is_available()}); "
        f"nvfresh at {nvfresh_binary}")
    env = dict(os.environ, TORCH_CUDA_ARCH_LIST=args.arch, NVFRESH_EXECUTABLE=nvfresh_binary,
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])))
    env.pop("PYTORCH_NVCC", None)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    sides = {name: Side(args.work, name, env) for name in ("plain", "nvfresh")}
    table = Table()

    log("setup.py build_ext --inplace (both, in parallel)")
    results = both(lambda s: sides[s].build())
    table.add("setup.py build_ext --inplace", built(results["plain"]), built(results["nvfresh"]))
    table.values("run", both(lambda s: sides[s].values()), 2.0)
    temp = next((sides["nvfresh"].src / "build").glob("temp.*"))
    table.check(f"nvfresh check -C build/{temp.name}", check(nvfresh_binary, temp, sides["nvfresh"].src), 2)

    log("scale_config.h: kScale 3.0, saved with its old mtime; build_ext --inplace again")
    for side in sides.values():
        side.edit("2.0", "3.0")
    results = both(lambda s: sides[s].build())
    table.add("kScale 3.0 (old mtime); build_ext --inplace", built(results["plain"]), built(results["nvfresh"]))
    table.values("run", both(lambda s: sides[s].values()), 3.0)
    table.check(f"nvfresh check -C build/{temp.name}", check(nvfresh_binary, temp, sides["nvfresh"].src), 2)

    log("JIT: load() in a new process (both, in parallel)")
    results = both(lambda s: sides[s].load())
    table.add("JIT load()", built(results["plain"]), built(results["nvfresh"]))
    table.values("run", {s: r[2] for s, r in results.items()}, 3.0)
    for side in sides.values():
        side.edit("3.0", "4.0")
    results = both(lambda s: sides[s].load())
    table.add("kScale 4.0 (old mtime); load() in a new process", built(results["plain"]), built(results["nvfresh"]))
    table.values("run", {s: r[2] for s, r in results.items()}, 4.0)
    table.check("nvfresh check -C <JIT build dir>", check(nvfresh_binary, sides["nvfresh"].jit, sides["nvfresh"].jit), 1)
    table.print()
    return 1 if table.wrong else 0


if __name__ == "__main__":
    sys.exit(main())
