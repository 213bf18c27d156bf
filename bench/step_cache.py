#!/usr/bin/env python3
"""The step cache: a host-only edit and an sm_90-only edit against a full compile, in one run.

With --cutlass: the CUTLASS FMHA TU instead (edits through a header forced in with -include), and
sm_90 added to an sm_80 build (only sm_90's cicc and ptxas may run).

One TU with CUB block-wide kernels (a few seconds of cicc and ptxas per arch), compiled for sm_80
and sm_90 (`nvfresh nvcc`, the object cache on, in a fresh cache dir each round):
  full      the first compile: every step runs (and is stored)
  host      a host-only edit (same line count): every cicc and ptxas served
  moved     a host-only edit that adds lines above the kernels: every cicc and ptxas served, cicc's
            outputs with the new line numbers (lib/cache/line_layout.hpp)
  sm_90     an edit under `#if __CUDA_ARCH__ >= 900`: sm_80's steps served
  plain     `nvcc` alone, for the launcher's own share
Prints medians of wall and CPU time (user + sys of nvcc's whole tree) and the ratios to `full`.

Then a multi-TU tree (skip_speed's, sm_80 + sm_90, CMake + Ninja -j2): a comment appended to the
header every TU includes, nvfresh (through its CMake module; the object cache serves each object,
as the header differs from its entries only in a comment nothing sees: lib/cache/code_text.hpp)
vs ccache as the CUDA compiler launcher (its preprocessor-mode hit), each after a first build in a
fresh cache, with the objects and steps served and ccache's hits counted.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import benchlib
import skip_speed  # the CUTLASS FMHA TU

# The FMHA TU's edits come through a header forced in with -include (its sources stay CUTLASS's):
# a host-only value, and a value that only sm_90's device code reads. Same line count each time.
FMHA_EDIT = """\
#ifndef __CUDA_ARCH__
{blank}static const char* nvfresh_bench_host_text = "{host}";
#endif
// Declared in every pass (nvcc registers it from the host side); its value differs on sm_90 only.
__device__ int nvfresh_bench_sm90_value =
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    {sm90};
#else
    1;
#endif
"""
import skip_speed  # its tree

CCACHE = shutil.which("ccache") or str(benchlib.REPO / ".venv-tools" / "bin" / "ccache")

SOURCE = """\
#include <cub/cub.cuh>
#include "values.h"
template <int Threads, int Items>
__global__ void sort_kernel(int* data)
{
  using Sort = cub::BlockRadixSort<int, Threads, Items>;
  __shared__ typename Sort::TempStorage storage;
  int keys[Items];
  for (int i = 0; i < Items; ++i) keys[i] = data[threadIdx.x * Items + i];
  Sort(storage).Sort(keys);
#if __CUDA_ARCH__ >= 900
  keys[0] += SM90_VALUE;
#endif
  for (int i = 0; i < Items; ++i) data[threadIdx.x * Items + i] = keys[i];
}
template <int Threads>
__global__ void reduce_kernel(const float* in, float* out)
{
  using Reduce = cub::BlockReduce<float, Threads>;
  __shared__ typename Reduce::TempStorage storage;
  float total = Reduce(storage).Sum(in[blockIdx.x * Threads + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}
#ifndef __CUDA_ARCH__
const char* host_text() { return HOST_TEXT; }
#endif
void launch(int* d, const float* in, float* out)
{
  sort_kernel<128, 4><<<1, 128>>>(d);
  sort_kernel<256, 8><<<1, 256>>>(d);
  reduce_kernel<128><<<1, 128>>>(in, out);
  reduce_kernel<512><<<1, 512>>>(in, out);
}
"""


def values_h(sm90, host, blank=0):
    """The header's values; `blank` host-only lines above them move every line below."""
    lines = "\n" * blank
    return (f'#ifndef __CUDA_ARCH__\n{lines}#endif\n'
            f'#define SM90_VALUE {sm90}\n#define HOST_TEXT "{host}"\n')


def ccache_hits(env):
    out = subprocess.run([CCACHE, "--print-stats"], env=dict(os.environ, **env),
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    return (int(stats.get("preprocessed_cache_hit", 0)), int(stats.get("direct_cache_hit", 0)),
            int(stats.get("cache_miss", 0)))


def nvfresh_steps(nvfresh, build):
    result = subprocess.run([nvfresh, "stats", "--json", "-C", str(build)], check=True,
                            stdout=subprocess.PIPE, text=True)
    kinds = json.loads(result.stdout)["steps"]["kinds"]
    return {kind: value["count"] for kind, value in kinds.items()}


def served_objects(build):
    """How many compiles of the build tree were served from the object cache (events.log)."""
    log = build / ".nvfresh" / "events.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return sum(1 for line in lines if line.split("\t")[1:2] == ["served"])


def bench_header_comment(nvfresh, nvcc, root, tus):
    """A comment appended to the header every TU includes: nvfresh vs ccache, one build each."""
    src = root / "tree"
    skip_speed.write_tree(src, tus)
    cmake_lists = src / "CMakeLists.txt"
    cmake_lists.write_text(
        cmake_lists.read_text().replace("ARCHITECTURES 80)", "ARCHITECTURES 80 90)"))
    common = src / "include" / "core" / "common.h"
    original = common.read_text()
    results = {}
    for side in ("nvfresh", "ccache"):
        common.write_text(original)
        build = benchlib.fresh_dir(root / f"build-{side}")
        args = ["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
                f"-DCMAKE_CUDA_COMPILER={nvcc}"]
        if side == "nvfresh":
            args += [f"-DCMAKE_PROJECT_INCLUDE={benchlib.REPO}/cmake/nvfresh.cmake",
                     f"-DNVFRESH_EXECUTABLE={nvfresh}"]
            env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "nvfresh-cache"))}
        else:
            args += [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={CCACHE}"]
            env = {"CCACHE_DIR": str(benchlib.fresh_dir(root / "ccache")), "CCACHE_MAXSIZE": "5G"}
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
        build_cmd = ["cmake", "--build", str(build), "-j2"]
        first = benchlib.timed(build_cmd, env=env)
        common.write_text(original + "// a comment appended\n")
        before = nvfresh_steps(nvfresh, build) if side == "nvfresh" else ccache_hits(env)
        objects_before = served_objects(build)
        edited = benchlib.timed(build_cmd, env=env)
        if side == "nvfresh":
            after = nvfresh_steps(nvfresh, build)
            what = (f"objects served {served_objects(build) - objects_before} of {tus}; steps "
                    f"served {after.get('served', 0) - before.get('served', 0)}, "
                    f"run {after.get('compiled', 0) - before.get('compiled', 0)}")
        else:
            after = ccache_hits(env)
            what = (f"preprocessor-mode hits {after[0] - before[0]}, direct hits "
                    f"{after[1] - before[1]}, misses {after[2] - before[2]}")
        results[side] = (first, edited, what)
    common.write_text(original)
    print(f"\nheader comment on a {tus}-TU tree (sm_80 + sm_90, Ninja -j2): a comment appended to "
          "the header every TU includes")
    for side, (first, edited, what) in results.items():
        print(f"  {side:<8} first build wall {first[0]:6.2f} s; after the comment wall "
              f"{edited[0]:6.2f} s, cpu {edited[1]:6.2f} s ({what})")
    ours, theirs = results["nvfresh"][1], results["ccache"][1]
    print(f"  nvfresh / ccache after the comment: wall {ours[0] / theirs[0]:.2f}x, "
          f"cpu {ours[1] / theirs[1]:.2f}x")


def fmha_compile(nvcc, root, archs):
    """The FMHA compile with the given archs and the edit header forced in."""
    args = [a for a in skip_speed.cutlass_tu_args(root) if not a.startswith("--generate-code")]
    gencode = [f"--generate-code=arch=compute_{a},code=[sm_{a}]" for a in archs]
    return [nvcc, *gencode, "-include", str(root / "edit.h"), *args]


def timed_steps(nvfresh, build, cmd, env):
    """(wall, cpu) of `nvfresh <cmd>`, and the steps it served and ran (stats' counts before/after)."""
    before = nvfresh_steps(nvfresh, build)
    timing = benchlib.timed([nvfresh, *cmd], cwd=build, env=env)
    after = nvfresh_steps(nvfresh, build)
    return timing, {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def bench_fmha(nvfresh, nvcc, root, runs):
    """Full compile, host-only edit, sm_90-only edit and sm_90 added, on the FMHA TU."""
    if skip_speed.cutlass_tu(root) is None:
        print("step_cache: scripts/install_cutlass.sh is absent: no FMHA TU")
        return 1
    names = ("plain", "full", "host", "moved", "sm_90", "added")
    times = {name: [] for name in names}
    steps = {}
    for run in range(runs):
        build = benchlib.fresh_dir(root / "build")
        (build / "build.ninja").write_text("")
        env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cache"))}
        both = fmha_compile(nvcc, root, ["80", "90"])
        edit = root / "edit.h"
        edit.write_text(FMHA_EDIT.format(host=f"a{run}", sm90=1, blank=""))
        times["plain"].append(benchlib.timed(both, cwd=build, bench="step_cache"))
        # sm_80 alone first: adding sm_90 then must run only sm_90's steps.
        edit.write_text(FMHA_EDIT.format(host=f"b{run}", sm90=1, blank=""))
        benchlib.timed([nvfresh, *fmha_compile(nvcc, root, ["80"])], cwd=build, env=env)
        # "moved": host-only lines above everything (the edit header is forced in first): every
        # line of cicc's input moves, its code does not.
        rounds = (("added", "b", 1, 0, {}), ("full", "c", 1, 0, {"NVFRESH_STEP_CACHE": "0"}),
                  ("host", "d", 1, 0, {}), ("moved", "e", 1, 5, {}),
                  ("sm_90", "e", 2 + run, 5, {}))
        for name, host, sm90, blank, extra in rounds:
            edit.write_text(FMHA_EDIT.format(host=f"{host}{run}", sm90=sm90, blank="\n" * blank))
            timing, steps[name] = timed_steps(nvfresh, build, both, {**env, **extra})
            times[name].append(timing)
    print(f"step_cache: CUTLASS FMHA TU, {benchlib.nvcc_version_line(nvcc)}, sm_80 + sm_90, "
          f"{runs} runs")
    full_wall = statistics.median(w for w, _ in times["full"])
    full_cpu = statistics.median(c for _, c in times["full"])
    for name, label in (("plain", "plain nvcc"), ("full", "compile, step cache off"),
                        ("host", "host-only edit"), ("moved", "host-only edit, lines moved"),
                        ("sm_90", "sm_90-only edit"),
                        ("added", "sm_90 added to an sm_80 build")):
        wall = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        print(f"  {label:32s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"ratio to full: wall {wall / full_wall:.2f}x, cpu {cpu / full_cpu:.2f}x"
              + (f"  steps: {steps[name]}" if name in steps else ""))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--tus", type=int, default=4, help="TUs of the multi-TU tree")
    parser.add_argument("--only-tree", action="store_true", help="only the multi-TU case")
    parser.add_argument("--cutlass", action="store_true",
                        help="the CUTLASS FMHA TU (80;90) instead of the CUB TU, and an arch added")
    args = parser.parse_args()
    nvfresh = benchlib.nvfresh_bin("step_cache")
    archs = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
    times = {name: [] for name in ("plain", "full", "host", "moved", "sm_90")}
    if args.only_tree:
        with benchlib.scratch("nvfresh-bench-step-", args.keep) as root:
            print(f"step_cache: {benchlib.nvcc_version_line(args.nvcc)}")
            bench_header_comment(nvfresh, args.nvcc, root, args.tus)
        return 0
    if args.cutlass:
        with benchlib.scratch("nvfresh-bench-step-fmha-", args.keep) as root:
            return bench_fmha(nvfresh, args.nvcc, root, args.runs)
    with benchlib.scratch("nvfresh-bench-step-", args.keep) as root:
        src = root / "k.cu"
        src.write_text(SOURCE)
        (root / "values.h").write_text(values_h(1, "a"))
        for run in range(args.runs):
            build = benchlib.fresh_dir(root / "build")
            (build / "build.ninja").write_text("")  # a build tree: records go to build/.nvfresh
            env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cache"))}
            compile_cmd = [args.nvcc, *archs, "-I", str(root), "-c", str(src), "-o", "k.o"]
            times["plain"].append(benchlib.timed(compile_cmd, cwd=build, bench="step_cache"))
            (root / "values.h").write_text(values_h(1, f"a{run}"))
            times["full"].append(benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=env))
            (root / "values.h").write_text(values_h(1, f"b{run}"))
            times["host"].append(benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=env))
            (root / "values.h").write_text(values_h(1, f"c{run}", blank=5))
            times["moved"].append(benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=env))
            (root / "values.h").write_text(values_h(2 + run, f"c{run}", blank=5))
            times["sm_90"].append(benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=env))
    print(f"step_cache: {benchlib.nvcc_version_line(args.nvcc)}, sm_80 + sm_90, {args.runs} runs")
    full_wall = statistics.median(w for w, _ in times["full"])
    full_cpu = statistics.median(c for _, c in times["full"])
    for name, label in (("plain", "plain nvcc"), ("full", "full compile (steps run, stored)"),
                        ("host", "host-only edit (every step served)"),
                        ("moved", "host-only edit, lines moved (every step served)"),
                        ("sm_90", "sm_90-only edit (sm_80's steps served)")):
        wall = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        print(f"  {label:42s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"ratio to full: wall {wall / full_wall:.2f}x, cpu {cpu / full_cpu:.2f}x")
    with benchlib.scratch("nvfresh-bench-step-tree-", args.keep) as root:
        bench_header_comment(nvfresh, args.nvcc, root, args.tus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
