#!/usr/bin/env python3
"""Benchmark (not a test): `nvfresh check` on a generated tree of 10k objects and 2k headers, warm.

Generates real header/object files and one record per object with tests/tools/record_gen_tool
(records written by nvfresh's own serializer), then times `nvfresh check -C <tree>` after one
warm-up run and prints the best of N runs and the per-object cost. Target: <= 0.5 s.

usage: bench/check_scale.py [--build BUILD_DIR] [--objects 10000] [--headers 2000]
                            [--per-object 100] [--runs 5] [--keep]
"""
import argparse
import statistics
import subprocess
import time
from pathlib import Path

import benchlib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(benchlib.build_dir()))
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--headers", type=int, default=2000)
    parser.add_argument("--per-object", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = Path(args.build) / "bin" / "nvfresh"
    tool = Path(args.build) / "tests" / "tools" / "record_gen_tool"
    with benchlib.scratch("nvfresh-check-scale-", keep=args.keep) as tree:
        start = time.perf_counter()
        subprocess.run([str(tool), str(tree), str(args.objects), str(args.headers),
                        str(args.per_object)], check=True)
        print(f"generated {args.objects} records x {args.per_object} inputs over "
              f"{args.headers} headers in {time.perf_counter() - start:.1f} s ({tree})")
        cmd = [str(nvfresh), "check", "-C", str(tree)]
        warm = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if warm.returncode != 0:
            raise SystemExit(f"check exited {warm.returncode}: {warm.stdout.decode()[-2000:]}")
        times = benchlib.wall_times(cmd, args.runs)
        best = min(times)
        print(f"nvfresh check warm: best {best:.3f} s, median {statistics.median(times):.3f} s "
              f"over {args.runs} runs; {best / args.objects * 1e6:.1f} us per object "
              f"({'within' if best <= 0.5 else 'OVER'} the 0.5 s target)")


if __name__ == "__main__":
    main()
