#!/usr/bin/env python3
"""Hunts for non-deterministic device codegen with `nvfresh repro` (issue 6, item 4).

Compiles a few large TUs (cub-heavy: radix sort, scan/reduce/histogram; a register-heavy unrolled
tiled GEMM) N times each under perturbation, for each nvcc version and architecture given, and prints
one table row per (nvcc, arch, kernel): runs, failures, variants, seconds per compile and the
components that differ. Needs the built nvfresh (--nvfresh, default build/bin/nvfresh) and nvcc
versions (--nvcc TAG=PATH, repeatable; default: scripts/install_nvcc_versions.sh cu13.3 cu13.5).

  python3 bench/repro_experiment.py -n 6 -j 1 --arch sm_90a --arch sm_100a

Compiles are slow (10-60 s each); the default -j 1 leaves the CPU to others.
"""
import argparse
import json
import subprocess
import sys
import time

import benchlib

KERNELS = {
    "cub_radix_sort": """\
#include <cub/device/device_radix_sort.cuh>
#include <cstdint>
void sort_pairs(void* tmp, size_t& tmp_bytes, const float* k_in, float* k_out, const int* v_in, int* v_out, int n)
{ cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k_in, k_out, v_in, v_out, n); }
void sort_keys(void* tmp, size_t& tmp_bytes, const std::uint64_t* k_in, std::uint64_t* k_out, int n)
{ cub::DeviceRadixSort::SortKeysDescending(tmp, tmp_bytes, k_in, k_out, n); }
""",
    "cub_scan_reduce_histogram": """\
#include <cub/device/device_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_histogram.cuh>
void scan(void* tmp, size_t& b, const double* in, double* out, int n) { cub::DeviceScan::InclusiveSum(tmp, b, in, out, n); }
void reduce(void* tmp, size_t& b, const float* in, float* out, int n) { cub::DeviceReduce::Max(tmp, b, in, out, n); }
void histogram(void* tmp, size_t& b, const unsigned char* in, int* h, int n)
{ cub::DeviceHistogram::HistogramEven(tmp, b, in, h, 257, 0, 256, n); }
""",
    "unrolled_gemm": """\
// A register-heavy tiled SGEMM: 128x128 block tile, 8x8 per thread, fully unrolled.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(256) sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                                             float alpha, float beta)
{
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = threadIdx.x; i < BM * BK; i += 256) {
      As[i % BK][i / BK] = A[(row0 + i / BK) * K + k0 + i % BK];
      Bs[i / BN][i % BN] = B[(k0 + i / BN) * N + col0 + i % BN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      float* c = &C[(row0 + ty * TM + i) * N + col0 + tx * TN + j];
      *c = alpha * acc[i][j] + beta * *c;
    }
}
template __global__ void sgemm<128, 128, 8, 8, 8>(const float*, const float*, float*, int, int, int, float, float);
template __global__ void sgemm<128, 128, 16, 8, 8>(const float*, const float*, float*, int, int, int, float, float);
template __global__ void sgemm<64, 128, 8, 4, 8>(const float*, const float*, float*, int, int, int, float, float);
""",
}


def installed_nvccs():
    script = benchlib.REPO / "scripts" / "install_nvcc_versions.sh"
    out = subprocess.run([str(script), "cu13.3", "cu13.5"], check=True, stdout=subprocess.PIPE, text=True).stdout
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]


def nvcc_release(nvcc):
    text = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, text=True).stdout
    return next((line.split("V")[-1] for line in text.splitlines() if "release" in line), "?")


def supports_arch(nvcc, arch):
    text = subprocess.run([nvcc, "--list-gpu-code"], stdout=subprocess.PIPE, text=True).stdout
    return arch.rstrip("af") in text.split()  # the list names sm_90, not sm_90a


def run_one(args, tag, nvcc, arch, kernel, work):
    out = work / f"out-{tag}-{arch}-{kernel}"
    command = [args.nvfresh, "repro", "-n", str(args.runs), "-j", str(args.jobs), "--out", str(out), "--json",
               "--", nvcc, "-c", "-O3", f"-arch={arch}", "-std=c++17", f"{kernel}.cu", "-o", f"{kernel}.o"]
    start = time.monotonic()
    result = subprocess.run(command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - start
    if not result.stdout.strip().startswith("{"):
        return {"error": result.stderr.strip()[-300:], "seconds": elapsed}
    report = json.loads(result.stdout)
    report["seconds"] = elapsed
    report["out"] = str(out)
    return report


def row(tag, release, arch, kernel, report, runs):
    if "error" in report:
        return f"{tag:<8} {release:<10} {arch:<8} {kernel:<26} error: {report['error']}"
    failed = sum(1 for r in report["runs"] if r["failed"])
    variants = report["variants"]
    differing = sorted({c for v in variants[1:] for c in v.get("differing_components", [])})
    return (f"{tag:<8} {release:<10} {arch:<8} {kernel:<26} {runs:>4} {failed:>6} {len(variants):>8} "
            f"{report['seconds'] / runs:>9.1f}  {', '.join(differing) or '-'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=6)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--arch", action="append", help="default: sm_90a and sm_100a")
    parser.add_argument("--kernel", action="append", choices=sorted(KERNELS), help="default: all")
    parser.add_argument("--nvcc", action="append", help="TAG=PATH (default: install cu13.3 and cu13.5)")
    parser.add_argument("--nvfresh", default=str(benchlib.build_dir() / "bin" / "nvfresh"))
    parser.add_argument("--keep", action="store_true", help="keep the work directory (artifacts, diffs)")
    args = parser.parse_args()
    nvccs = [tuple(item.split("=", 1)) for item in args.nvcc] if args.nvcc else installed_nvccs()
    with benchlib.scratch("nvfresh-repro-experiment-", keep=args.keep) as work:
        experiment(args, nvccs, work)


def experiment(args, nvccs, work):
    for kernel, source in KERNELS.items():
        (work / f"{kernel}.cu").write_text(source)
    print(f"{'nvcc':<8} {'release':<10} {'arch':<8} {'kernel':<26} {'runs':>4} {'failed':>6} {'variants':>8} "
          f"{'s/compile':>9}  differing components", flush=True)
    for tag, nvcc in nvccs:
        release = nvcc_release(nvcc)
        for arch in args.arch or ["sm_90a", "sm_100a"]:
            if not supports_arch(nvcc, arch):
                print(f"{tag:<8} {release:<10} {arch:<8} (not supported by this nvcc)", flush=True)
                continue
            for kernel in args.kernel or sorted(KERNELS):
                report = run_one(args, tag, nvcc, arch, kernel, work)
                print(row(tag, release, arch, kernel, report, args.runs), flush=True)


if __name__ == "__main__":
    sys.exit(main())
