#!/usr/bin/env python3
"""nvfresh's miss overhead against plain nvcc: the same compile, side by side, interleaved.

Every compile is a miss: the translation unit's content changes before each run (a trailing comment
with the run number, the same for both sides), so nvfresh always runs nvcc, traces it, hashes every
input and writes its record, exactly as in an incremental build after an edit. Both sides get the
depfile request CMake gives (-MD -MT <obj> -MF <obj>.d). The order alternates from round to round
(plain first, then nvfresh first) so that a drifting machine load hurts neither side more.

Printed for wall time and for CPU time (user + sys of nvcc and everything it ran, and of nvfresh):
the medians of N runs and their ratio. On a shared machine CPU time is the steadier number; wall
time moves with whatever else is compiling. Numbers are printed, never asserted.

Modes:
  default     a TU of 2-3 s on one arch (cub's BlockReduce and BlockScan, about 970 headers), 7 runs.
              Target (issue 2): ratio <= 1.03.
  --cutlass   the CUTLASS FMHA example TU (examples/41_fused_multi_head_attention, sm_80 only; about
              1000 headers, about a minute per compile), 3 runs. Target (issue 3): ratio <= 1.01.
              Installs CUTLASS with scripts/install_cutlass.sh when missing.

Usage: bench/launcher_overhead.py [--cutlass] [--runs N] [--nvcc PATH]
Needs a build: $NVFRESH_BUILD_DIR or ./build (bin/nvfresh); $NVFRESH_BIN overrides the binary.
"""
import argparse
import shutil
import sys

import benchlib

SMALL_TU = """\
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
template <int Threads>
__global__ void pipeline(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, Threads>;
  using Scan = cub::BlockScan<int, Threads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } storage;
  int prefix;
  Scan(storage.scan).ExclusiveSum(in[threadIdx.x], prefix);
  __syncthreads();
  int sum = Reduce(storage.reduce).Sum(prefix);
  if (threadIdx.x == 0) { *out = sum; }
}
template __global__ void pipeline<128>(const int*, int*);
template __global__ void pipeline<256>(const int*, int*);
"""
SMALL_ARGS = ["-arch=sm_80"]
FMHA_SOURCE = "fused_multihead_attention_fixed_seqlen.cu"


def setup_small(work):
    source = work / "s.cu"
    return source, lambda n: source.write_text(f"{SMALL_TU}// run {n}\n"), SMALL_ARGS


def setup_cutlass(work):
    cutlass = benchlib.cutlass_root("launcher_overhead")
    example = work / "fmha"
    shutil.copytree(cutlass / "examples/41_fused_multi_head_attention", example)
    source = example / FMHA_SOURCE
    original = source.read_text()
    # What CMake 3.25 gives nvcc for CMAKE_CUDA_ARCHITECTURES=80, C++17 and CUTLASS's own flag.
    args = ["-forward-unknown-to-host-compiler", f"-I{cutlass}/include",
            f"-I{cutlass}/tools/util/include", f"-I{example}",
            "--generate-code=arch=compute_80,code=[compute_80,sm_80]", "-std=c++17",
            "--expt-relaxed-constexpr"]
    return source, lambda n: source.write_text(f"{original}// run {n}\n"), args


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cutlass", action="store_true", help="the CUTLASS FMHA TU (default runs: 3)")
    parser.add_argument("--runs", type=int, help="runs per side (default: 7, or 3 with --cutlass)")
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    options = parser.parse_args()
    runs = options.runs or (3 if options.cutlass else 7)
    nvfresh = benchlib.nvfresh_bin("launcher_overhead")
    with benchlib.scratch("nvfresh-overhead-", keep=options.keep) as work:
        measure(options, runs, nvfresh, work)


def measure(options, runs, nvfresh, work):
    source, rewrite, args = (setup_cutlass if options.cutlass else setup_small)(work)
    obj = work / "out.o"
    args = [*args, "-MD", "-MT", str(obj), "-MF", f"{obj}.d", "-x", "cu", "-c", str(source),
            "-o", str(obj)]
    print(f"== {'CUTLASS FMHA (' + FMHA_SOURCE + ', sm_80)' if options.cutlass else 'cub TU (sm_80)'}"
          f", {runs} runs per side, interleaved")
    print(f"   nvcc: {options.nvcc} ({benchlib.nvcc_version_line(options.nvcc)})")
    print(f"   nvfresh: {nvfresh}")
    sides = {"plain": ([], options.nvcc), "nvfresh": ([nvfresh], options.nvcc)}
    times = {"plain": [], "nvfresh": []}
    run_number = 0
    for round_index in range(runs):
        order = ["plain", "nvfresh"] if round_index % 2 == 0 else ["nvfresh", "plain"]
        for side in order:
            run_number += 1
            rewrite(run_number)
            prefix, nvcc = sides[side]
            wall, cpu = benchlib.timed([*prefix, nvcc, *args], cwd=work, bench="launcher_overhead")
            times[side].append((wall, cpu))
            print(f"   round {round_index + 1} {side:<8} wall {wall:7.2f} s, cpu {cpu:7.2f} s", flush=True)
    records = list((work / ".nvfresh/records").glob("*.rec"))
    print(f"   record: {records[0].stat().st_size} bytes" if records else "   record: none written!")
    for what, index in (("wall", 0), ("cpu (user+sys)", 1)):
        print("   " + benchlib.median_ratio_line(what, [t[index] for t in times["plain"]],
                                               [t[index] for t in times["nvfresh"]]))
    print(f"   target: ratio <= {1.01 if options.cutlass else 1.03} (CPU is the steadier figure here)")


if __name__ == "__main__":
    sys.exit(main())
