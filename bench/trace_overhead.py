#!/usr/bin/env python3
"""What the LD_PRELOAD tracer sees and costs, for one or more nvcc versions, side by side.

For each nvcc it prints:
  (a) what nvcc's own -MD depfile lists against what the trace shows the passes read, for a TU with
      a header read only by the compute_90 pass and one read only by the host pass;
  (b) the tracer's overhead: a TU of about 2 s (cub::BlockReduce) compiled N times with and N times
      without the preload, interleaved; medians and their ratio;
  (c) the number of raw events (read, missing, ...) and of summarized inputs for a TU that only
      includes <cuda_runtime.h>.
Numbers are printed, never asserted.

Usage: bench/trace_overhead.py [--runs N] [nvcc ...]   (default: the nvcc on PATH)
Needs a build: $NVFRESH_BUILD_DIR or ./build (lib/libnvfresh_trace.so, tests/tools/trace_tool).
"""
import argparse
import collections
import os
import subprocess
import sys

import benchlib

PASS_TU = """\
#include "common.h"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include "hopper_only.h"
#endif
#ifndef __CUDA_ARCH__
#include "host_only.h"
#endif
__global__ void kernel(int* out) { *out = 1; }
"""
SLOW_TU = """\
#include <cub/block/block_reduce.cuh>
__global__ void sum(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, 128>;
  __shared__ typename Reduce::TempStorage storage;
  int total = Reduce(storage).Sum(in[threadIdx.x]);
  if (threadIdx.x == 0) { *out = total; }
}
"""
RUNTIME_TU = "#include <cuda_runtime.h>\n__global__ void k(int* p) { *p = 1; }\n"
GENCODE = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]


def traced_env(trace_file, tmp_dir):
    lib = str(benchlib.build_dir() / "lib/libnvfresh_trace.so")
    preload = os.environ.get("LD_PRELOAD")
    return {"TMPDIR": str(tmp_dir), "NVFRESH_TRACE_FILE": str(trace_file),
            "LD_PRELOAD": f"{preload}:{lib}" if preload else lib}


def plain_env(tmp_dir):
    return {"TMPDIR": str(tmp_dir)}


def compile_once(nvcc, work, source, extra, env):
    return benchlib.timed([nvcc, *extra, "-c", source, "-o", "out.o"], cwd=work, env=env, bench="trace_overhead")


def summary(trace_file, tmp_dir):
    tool = benchlib.build_dir() / "tests/tools/trace_tool"
    out = subprocess.run([tool, trace_file], capture_output=True, check=True).stdout
    reads, missing = {}, set()
    for line in out.decode().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "read":
            passes, _, path = rest.partition(" ")
            reads[path] = passes
        elif kind == "missing":
            missing.add(rest)
    return reads, missing


def measure_passes(nvcc, work):
    for name, text in {"common.h": "", "hopper_only.h": "", "host_only.h": "", "p.cu": PASS_TU}.items():
        (work / name).write_text(text)
    tmp = benchlib.fresh_dir(work / "tmp")
    trace = work / "p.trace"
    trace.unlink(missing_ok=True)
    compile_once(nvcc, work, "p.cu", [*GENCODE, "-MD", "-MF", "p.d"], traced_env(trace, tmp))
    reads, _ = summary(trace, tmp)
    deps = {os.path.realpath(work / p) for p in benchlib.depfile_paths(work / "p.d")}
    reads = {os.path.realpath(path): passes for path, passes in reads.items()}
    lines = []
    for name in ("hopper_only.h", "host_only.h", "common.h"):
        full = str(work / name)
        lines.append(f"{name}: -MD {'lists' if full in deps else 'MISSES'} it; "
                     f"trace: {reads.get(full, 'not read')}")
    only_trace = sorted(set(reads) - deps)
    lines.append(f"-MD lists {len(deps)} files, the trace {len(reads)} reads; "
                 f"in the trace only: {len(only_trace)} (e.g. {', '.join(only_trace[:3])})")
    return lines


def measure_overhead(nvcc, work, runs):
    (work / "s.cu").write_text(SLOW_TU)
    plain, traced = [], []
    for _ in range(runs):
        plain.append(compile_once(nvcc, work, "s.cu", ["-arch=sm_80"], plain_env(benchlib.fresh_dir(work / "tmp"))))
        trace = work / "s.trace"
        trace.unlink(missing_ok=True)
        env = traced_env(trace, benchlib.fresh_dir(work / "tmp"))
        traced.append(compile_once(nvcc, work, "s.cu", ["-arch=sm_80"], env))
    lines = []
    for what, index in (("wall", 0), ("cpu (user+sys)", 1)):
        lines.append(benchlib.median_ratio_line(what, [run[index] for run in plain], [run[index] for run in traced],
                                                other_name="traced", runs=runs))
    return lines


def measure_events(nvcc, work):
    (work / "r.cu").write_text(RUNTIME_TU)
    tmp = benchlib.fresh_dir(work / "tmp")
    trace = work / "r.trace"
    trace.unlink(missing_ok=True)
    compile_once(nvcc, work, "r.cu", ["-arch=sm_80"], traced_env(trace, tmp))
    letters = collections.Counter(line[:1] for line in trace.read_text().splitlines())
    reads, missing = summary(trace, tmp)
    raw = ", ".join(f"{k} {letters[k]}" for k in "XRMDWL")
    return [f"raw events: {raw} (X process, R read, M missing, D directory, W write, L lost)",
            f"summarized: {len(reads)} files read, {len(missing)} missing lookups kept"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("nvcc", nargs="*")
    options = parser.parse_args()
    for nvcc in options.nvcc or [benchlib.default_nvcc()]:
        print(f"== {nvcc}\n   {benchlib.nvcc_version_line(nvcc)}")
        with benchlib.scratch("nvfresh-bench-") as work:
            for title, lines in (("(a) -MD vs trace", measure_passes(nvcc, work)),
                                 ("(b) overhead", measure_overhead(nvcc, work, options.runs)),
                                 ("(c) cuda_runtime.h TU", measure_events(nvcc, work))):
                print(f"   {title}")
                for line in lines:
                    print(f"      {line}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
