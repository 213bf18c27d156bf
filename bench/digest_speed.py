#!/usr/bin/env python3
"""Digest speed on a large nvcc object: `compare` (normalized per-component digests) vs a plain hash.

Usage: bench/digest_speed.py [--tool build/bin/nvfresh] [--kernels 300] [--repeat 5]

Builds one object with many kernels for sm_80 + sm_90 + compute_90 PTX (zstd payloads, as nvcc 13
writes by default), then times:
  - digest:     `<tool> compare OBJ OBJ` digests the object twice; a run on a tiny object is subtracted
                for process start, the rest halved;
  - plain hash: the same object hashed as one file (xxhsum -H2 when present, else sha256sum).
cuobjdump is absent on some machines (and here), so it is timed only when found on PATH.
Times are best-of-N wall clock; this is a report, not a test: nothing asserts on it.
"""
import argparse
import shutil
import subprocess
import sys

import benchlib

ARCHS = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
         "-gencode", "arch=compute_90,code=compute_90"]


def source(kernels):
    body = ["template <int N> __global__ void k(float* p, float s) {",
            "  float v = p[threadIdx.x];",
            "  for (int i = 0; i < N % 7 + 2; ++i) { v = v * s + N; }",
            "  p[threadIdx.x] = v; }"]
    body += [f"template __global__ void k<{n}>(float*, float);" for n in range(kernels)]
    return "\n".join(body) + "\nint host_fn(int x) { return x * 3; }\n"


def best_of(command, repeat):
    return min(benchlib.wall_times(command, repeat))


def plain_hash_command(path):
    if shutil.which("xxhsum"):
        return ["xxhsum", "-H2", str(path)]
    return ["sha256sum", str(path)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default=str(benchlib.build_dir() / "bin" / "nvfresh"),
                        help="what runs `<tool> compare A B` (default: the built nvfresh)")
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with benchlib.scratch("nvfresh-bench-") as work:
        measure(args, work)
    return 0


def measure(args, work):
    (work / "big.cu").write_text(source(args.kernels))
    (work / "tiny.cu").write_text("__global__ void t(int* p) { *p = 1; }\n")
    subprocess.run(["nvcc", "-c", *ARCHS, "big.cu", "-o", "big.o"], cwd=work, check=True)
    subprocess.run(["nvcc", "-c", "-arch=sm_80", "tiny.cu", "-o", "tiny.o"], cwd=work, check=True)
    big, tiny = work / "big.o", work / "tiny.o"
    startup = best_of([args.tool, "compare", str(tiny), str(tiny)], args.repeat)
    both = best_of([args.tool, "compare", str(big), str(big)], args.repeat)
    digest = max(both - startup, 0.0) / 2
    plain = best_of(plain_hash_command(big), args.repeat) - best_of(plain_hash_command(tiny), args.repeat)
    plain = max(plain, 1e-6)
    print(f"object: {big.stat().st_size / 1e6:.2f} MB, {args.kernels} kernels x (sm_80, sm_90) + compute_90 PTX")
    print(f"normalized digest: {digest * 1e3:8.2f} ms per object (process start {startup * 1e3:.1f} ms excluded)")
    print(f"plain file hash:   {plain * 1e3:8.2f} ms ({plain_hash_command(big)[0]}, start excluded)")
    print(f"ratio digest/plain: {digest / plain:.1f}x")
    if shutil.which("cuobjdump"):
        dump = best_of(["cuobjdump", "-sass", str(big)], args.repeat)
        print(f"cuobjdump -sass:   {dump * 1e3:8.2f} ms")
    else:
        print("cuobjdump:         absent on this machine (not timed)")


if __name__ == "__main__":
    sys.exit(main())
