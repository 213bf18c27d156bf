#!/usr/bin/env python3
"""The step cache: a host-only edit and an sm_90-only edit against a full compile, in one run.

One TU with CUB block-wide kernels (a few seconds of cicc and ptxas per arch), compiled for sm_80
and sm_90 (`nvfresh nvcc`, the object cache on, in a fresh cache dir each round):
  full      the first compile: every step runs (and is stored)
  host      a host-only edit (same line count): every cicc and ptxas served
  sm_90     an edit under `#if __CUDA_ARCH__ >= 900`: sm_80's steps served
  plain     `nvcc` alone, for the launcher's own share
Prints medians of wall and CPU time (user + sys of nvcc's whole tree) and the ratios to `full`.
"""
import argparse
import statistics
import sys
from pathlib import Path

import benchlib

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


def values_h(sm90, host):
    return f'#define SM90_VALUE {sm90}\n#define HOST_TEXT "{host}"\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = benchlib.nvfresh_bin("step_cache")
    archs = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
    times = {name: [] for name in ("plain", "full", "host", "sm_90")}
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
            (root / "values.h").write_text(values_h(2 + run, f"b{run}"))
            times["sm_90"].append(benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=env))
    print(f"step_cache: {benchlib.nvcc_version_line(args.nvcc)}, sm_80 + sm_90, {args.runs} runs")
    full_wall = statistics.median(w for w, _ in times["full"])
    full_cpu = statistics.median(c for _, c in times["full"])
    for name, label in (("plain", "plain nvcc"), ("full", "full compile (steps run, stored)"),
                        ("host", "host-only edit (every step served)"),
                        ("sm_90", "sm_90-only edit (sm_80's steps served)")):
        wall = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        print(f"  {label:42s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"ratio to full: wall {wall / full_wall:.2f}x, cpu {cpu / full_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
