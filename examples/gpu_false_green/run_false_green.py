#!/usr/bin/env python3
"""A test that flips only when the rebuild was real: CUTLASS's FMHA example, plain CMake vs nvfresh.

The FMHA example (fused_multihead_attention_fixed_seqlen.cu) checks its own attention kernel
against a reference and prints "Passed" or "Failed". Four build trees of it share one copy of its
sources: Ninja and Unix Makefiles, each plain and with nvfresh (-DCMAKE_PROJECT_INCLUDE=
<nvfresh>/cmake/nvfresh.cmake). Three scenarios, each run in a plain tree and an nvfresh tree:

  1. ninja: kernel_forward.h made wrong (the softmax's exp2 loses its log2(e) factor:
     `scaling * kLog2e` becomes `scaling * 1.0f`), saved with its old mtime; one build; run.
     Plain ninja says "no work to do" and the test still passes: a false green.
  2. ninja: kernel_forward.h restored (its old content and mtime); one build; run: passes.
  3. make: the wrong header is saved and the build started; while nvcc compiles (ptxas runs), the
     good header is saved; then one more build; run. Plain make says "[100%] Built target" and the
     test fails although the header on disk is good.
A scenario is right when the test agrees with the header on disk. Which kernel each object holds is
also decided without a GPU: `nvfresh compare` with the objects built from the good and the wrong
header. --no-run does everything but run the executables (for a machine without a GPU).

Usage (from the repository; needs cmake, ninja, make, nvcc, and CUTLASS's headers and example):
    python3 examples/gpu_false_green/run_false_green.py [--cutlass DIR] [--work DIR] [--arch 90] [--no-run]
--cutlass: the CUTLASS root (include/, tools/util/include/, examples/41_fused_multi_head_attention/);
default build/gpu-carry/cutlass (scripts/pack_gpu_carry.sh), else scripts/install_cutlass.sh's.
The nvfresh binary: as the Python package finds it (NVFRESH_EXECUTABLE, <checkout>/build/bin, PATH).
Nine FMHA compiles, at most four at a time.
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

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
import nvfresh  # noqa: E402

EXAMPLE = "examples/41_fused_multi_head_attention"
SOURCE = "fused_multihead_attention_fixed_seqlen.cu"
HEADER = "kernel_forward.h"
GOOD_LINE = "frag = cutlass::multiplies<Fragment>()(scaling * kLog2e, frag);"
BAD_LINE = "frag = cutlass::multiplies<Fragment>()(scaling * 1.0f, frag);"
START = time.monotonic()


def log(message):
    print(f"[{time.monotonic() - START:5.0f} s] {message}", flush=True)


def run(cmd, **kwargs):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          text=True, **kwargs)


def in_parallel(function, items):
    results = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, function(i))) for i in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[i] for i in items]


class Tree:
    """One build tree of the FMHA project."""

    def __init__(self, work, generator, with_nvfresh):
        self.generator = generator
        self.tool = "ninja" if generator == "Ninja" else "make"
        self.with_nvfresh = with_nvfresh
        self.name = f"{self.tool}-{'nvfresh' if with_nvfresh else 'plain'}"
        self.dir = work / self.name

    def configure(self, args, nvfresh_binary):
        cmd = ["cmake", "-S", str(REPO / "examples" / "gpu_false_green"), "-B", str(self.dir), "-G", self.generator,
               f"-DCUTLASS_DIR={args.cutlass}", f"-DFMHA_SOURCE_DIR={args.work / 'src'}",
               f"-DCMAKE_CUDA_ARCHITECTURES={args.arch}", "-DCMAKE_BUILD_TYPE=Release"]
        if self.with_nvfresh:
            cmd += [f"-DCMAKE_PROJECT_INCLUDE={REPO / 'cmake' / 'nvfresh.cmake'}",
                    f"-DNVFRESH_EXECUTABLE={nvfresh_binary}"]
        result = run(cmd)
        if result.returncode != 0:
            sys.exit(f"configuring {self.name} failed:\n{result.stdout}")

    def build_command(self):
        return ["cmake", "--build", str(self.dir)]

    def build(self):
        began = time.monotonic()
        result = run(self.build_command())
        if result.returncode != 0:
            sys.exit(f"building {self.name} failed:\n{result.stdout}")
        return Build(result.stdout, time.monotonic() - began)

    def object(self):
        return next((self.dir / "CMakeFiles" / "fmha.dir").rglob(f"{SOURCE}.o"))

    def test(self, args):
        if args.no_run:
            return "not run"
        result = run([str(self.dir / "fmha")], cwd=self.dir)
        lines = result.stdout.strip().splitlines()
        verdict = lines[-1] if lines and lines[-1] in ("Passed", "Failed") else f"exit {result.returncode}"
        with open(self.dir / "runs.log", "a") as file:
            file.write(result.stdout)
        return verdict


class Build:
    def __init__(self, output, seconds):
        self.output = output
        self.seconds = seconds
        self.compiled = "Building CUDA object" in output

    def says(self):
        if self.compiled:
            return f"recompiled ({self.seconds:.0f} s)"
        for phrase in ("no work to do", "[100%] Built target fmha"):
            if phrase in self.output:
                return phrase.replace("[100%] Built target fmha", "[100%] Built target")
        return "nothing compiled"


class Kernels:
    """Which kernel an object holds: `nvfresh compare` with the objects of the good and wrong header."""

    def __init__(self, nvfresh_binary, work):
        self.nvfresh = nvfresh_binary
        self.good = work / "reference-good.o"
        self.bad = work / "reference-wrong.o"

    def same(self, a, b):
        result = run([self.nvfresh, "compare", str(a), str(b)])
        if result.returncode not in (0, 1):
            sys.exit(f"nvfresh compare {a} {b} failed:\n{result.stdout}")
        return result.returncode == 0

    def of(self, obj):
        if self.good.exists() and self.same(obj, self.good):
            return "good"
        if self.bad.exists() and self.same(obj, self.bad):
            return "wrong"
        return "unknown"


class Header:
    def __init__(self, work):
        self.path = work / "src" / HEADER
        self.pristine = work / f"{HEADER}.good"
        shutil.copy2(self.path, self.pristine)
        self.good_text = self.pristine.read_text()
        if self.good_text.count(GOOD_LINE) != 1:
            sys.exit(f"{self.path} does not hold the line this script edits: {GOOD_LINE}")
        self.bad_text = self.good_text.replace(GOOD_LINE, BAD_LINE)

    def write(self, text, keep_mtime):
        before = self.path.stat()
        self.path.write_text(text)
        if keep_mtime:
            os.utime(self.path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def restore(self):
        shutil.copy2(self.pristine, self.path)

    def on_disk(self):
        return "good" if self.path.read_text() == self.good_text else "wrong"


def check(nvfresh_binary, tree):
    result = run([nvfresh_binary, "check", "-C", str(tree.dir)])
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    return f"exit {result.returncode}", summary


def descendant_named(root, name):
    """Whether a process called name runs below root (from /proc)."""
    parents, names = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm_end = stat.rindex(")")
        names[int(entry)] = stat[stat.index("(") + 1:comm_end]
        parents[int(entry)] = int(stat[comm_end + 2:].split()[1])
    for pid, comm in names.items():
        if comm != name:
            continue
        ancestor = parents.get(pid)
        while ancestor:
            if ancestor == root:
                return True
            ancestor = parents.get(ancestor)
    return False


def race(trees, header):
    """Starts the builds with the wrong header; saves the good one once every compile is in ptxas."""
    header.write(header.bad_text, keep_mtime=False)
    began = time.monotonic()
    builds = {tree.name: subprocess.Popen(tree.build_command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, text=True) for tree in trees}
    waiting = set(builds)
    while waiting:
        for name in list(waiting):
            if descendant_named(builds[name].pid, "ptxas"):
                waiting.discard(name)
            elif builds[name].poll() is not None:
                sys.exit(f"{name}: the compile ended before ptxas was seen; the race was missed")
        time.sleep(0.2)
    header.write(header.good_text, keep_mtime=False)
    log(f"good {HEADER} saved while both compiles run ptxas ({time.monotonic() - began:.0f} s in)")
    for tree in trees:
        output = builds[tree.name].communicate()[0]
        if builds[tree.name].returncode != 0:
            sys.exit(f"building {tree.name} failed:\n{output}")


class Outcome:
    def __init__(self, scenario, tool, tree, build, test, kernel, header, verdict):
        self.scenario, self.tool, self.tree = scenario, tool, tree
        self.says = build.says()
        self.test, self.kernel, self.header, self.check = test, kernel, header, verdict

    def right(self):
        if self.test in ("Passed", "Failed"):
            return (self.test == "Passed") == (self.header == "good")
        return self.kernel == self.header

    def cell(self):
        test = "" if self.test == "not run" else f"; test {self.test}"
        return f"{self.says}; {self.kernel} kernel{test}: {'right' if self.right() else 'WRONG'}"


def scenario(name, tool, trees, builds, args, kernels, header, nvfresh_binary):
    outcomes = []
    for tree, build in zip(trees, builds):
        verdict = check(nvfresh_binary, tree) if tree.with_nvfresh else ("", "")
        outcome = Outcome(name, tool, tree, build, tree.test(args), kernels.of(tree.object()), header.on_disk(),
                          verdict)
        log(f"  {tree.name}: {outcome.cell()}{'; nvfresh check ' + ' '.join(verdict) if verdict[0] else ''}")
        outcomes.append(outcome)
    return outcomes


def print_table(outcomes, args):
    print()
    print(f"CUTLASS FMHA (sm_{args.arch}), header on disk vs what the test ran"
          f"{' (not run: the kernel each object holds, by nvfresh compare)' if args.no_run else ''}:")
    print()
    print("| scenario | tool | plain CMake | CMake + nvfresh | nvfresh check |")
    print("|---|---|---|---|---|")
    for plain, fresh in zip(outcomes[0::2], outcomes[1::2]):
        print(f"| {plain.scenario} | {plain.tool} | {plain.cell()} | {fresh.cell()} | {' '.join(fresh.check[:1])} |")
    wrong_plain = sum(not o.right() for o in outcomes[0::2])
    wrong_fresh = sum(not o.right() for o in outcomes[1::2])
    print()
    print(f"plain CMake: {3 - wrong_plain} of 3 right; CMake + nvfresh: {3 - wrong_fresh} of 3 right")
    return wrong_fresh


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cutlass", type=Path, help="CUTLASS root (include/, tools/util/include/, examples/)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/nvfresh-false-green"),
                        help="work directory (emptied first; default %(default)s)")
    parser.add_argument("--arch", default="90", help="CMAKE_CUDA_ARCHITECTURES (default %(default)s)")
    parser.add_argument("--no-run", action="store_true", help="build and compare, do not run (no GPU)")
    args = parser.parse_args()
    if args.cutlass is None:
        carried = REPO / "build" / "gpu-carry" / "cutlass"
        if carried.is_dir():
            args.cutlass = carried
        else:
            found = run([str(REPO / "scripts" / "install_cutlass.sh")])
            if found.returncode != 0:
                sys.exit(f"no CUTLASS: pass --cutlass\n{found.stdout}")
            args.cutlass = Path(found.stdout.strip().splitlines()[-1])
    args.cutlass = args.cutlass.resolve()
    args.work = args.work.resolve()
    return args


def set_up(args):
    if shutil.which("nvcc") is None and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        os.environ["PATH"] = "/usr/local/cuda/bin" + os.pathsep + os.environ.get("PATH", "")
    missing = [tool for tool in ("cmake", "ninja", "make", "nvcc") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"not on PATH: {', '.join(missing)} (the script builds with CMake, Ninja and GNU make)")
    nvcc = run(["nvcc", "--version"]).stdout.strip().splitlines()[-1]
    log(f"cmake {run(['cmake', '--version']).stdout.split()[2]}, ninja {run(['ninja', '--version']).stdout.strip()}, "
        f"{run(['make', '--version']).stdout.splitlines()[0]}, nvcc: {nvcc}")
    nvfresh_binary = nvfresh.find_executable()
    log(f"{run([nvfresh_binary, '--version']).stdout.strip()} at {nvfresh_binary}; CUTLASS {args.cutlass}")
    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.cutlass / EXAMPLE, args.work / "src")
    trees = [Tree(args.work, generator, fresh) for generator in ("Ninja", "Unix Makefiles") for fresh in (False, True)]
    for tree in trees:
        tree.configure(args, nvfresh_binary)
    return nvfresh_binary, trees


def main():
    args = parse_args()
    nvfresh_binary, trees = set_up(args)
    ninja, make = trees[:2], trees[2:]
    header = Header(args.work)
    kernels = Kernels(nvfresh_binary, args.work)

    log("build all four trees (four FMHA compiles in parallel)")
    for tree, build in zip(trees, in_parallel(lambda t: t.build(), trees)):
        test = tree.test(args)
        log(f"  {tree.name}: {build.says()}; test {test}")
        if test not in ("Passed", "not run"):
            sys.exit(f"{tree.name}: the unedited example does not pass here ({test}); see {tree.dir / 'runs.log'}")
    shutil.copy2(ninja[0].object(), kernels.good)

    outcomes = []
    log(f"1. {HEADER} made wrong (scaling * kLog2e -> scaling * 1.0f), saved with its old mtime; build the ninja trees")
    header.write(header.bad_text, keep_mtime=True)
    builds = in_parallel(lambda t: t.build(), ninja)
    shutil.copy2(ninja[1].object(), kernels.bad)
    if kernels.same(kernels.good, kernels.bad):
        sys.exit("the wrong header did not change the kernel: nvfresh compare says the objects are the same")
    outcomes += scenario("wrong header, old mtime", "ninja", ninja, builds, args, kernels, header, nvfresh_binary)

    log(f"2. {HEADER} restored (old content and mtime); build the ninja trees")
    header.restore()
    builds = in_parallel(lambda t: t.build(), ninja)
    outcomes += scenario("header restored", "ninja", ninja, builds, args, kernels, header, nvfresh_binary)

    log(f"3. make: the wrong {HEADER} saved, the build started; the good one saved while nvcc runs")
    race(make, header)
    log("   one more build of each make tree")
    builds = in_parallel(lambda t: t.build(), make)
    outcomes += scenario("good header saved during the compile", "make", make, builds, args, kernels, header,
                         nvfresh_binary)
    return 1 if print_table(outcomes, args) else 0


if __name__ == "__main__":
    sys.exit(main())
