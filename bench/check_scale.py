#!/usr/bin/env python3
"""Benchmark (not a test): `nvfresh check` and `nvfresh sync` on a generated tree of 10k objects and
2k headers, warm, next to ninja's own no-op build of a generated 10k-edge build.ninja, in one run.

Generates real header/object files and one record per object with tests/tools/record_gen_tool
(records written by nvfresh's own serializer). Times, after one warm-up run each, the best and the
median of N runs of:
  - `nvfresh check -C <tree>` and `nvfresh sync -C <tree>` (every object fresh: sync marks none);
  - `ninja` with nothing to do on 10k edges (each edge one source, its object: the floor ninja
    needs for such a tree), and on the same 10k edges with each object's 100 headers as implicit
    inputs (the dependency graph the records hold, as ninja would have to stat it);
with CPU time (user+sys of the child) beside the wall time, the ratios nvfresh/ninja, and, with
--callgrind, the instruction count of one run of each under valgrind --tool=callgrind. The CMake
module runs `nvfresh sync` before every build, so sync is what every no-op build pays on top of
ninja's own no-op. Asserts nothing.

usage: bench/check_scale.py [--build BUILD_DIR] [--objects 10000] [--headers 2000]
                            [--per-object 100] [--runs 5] [--ninja ninja] [--callgrind] [--keep]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import benchlib


def timed(cmd, cwd=None):
    cpu0, wall0 = benchlib.children_cpu(), time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall, cpu = time.perf_counter() - wall0, benchlib.children_cpu() - cpu0
    if result.returncode != 0:
        raise SystemExit(f"{cmd} exited {result.returncode}: {result.stdout.decode()[-2000:]}"
                         f"{result.stderr.decode()[-2000:]}")
    return wall, cpu, result.stdout.decode(errors="replace")


def instructions(cmd, cwd=None):
    with tempfile.TemporaryDirectory(prefix="nvfresh-callgrind-") as out:
        result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg"]
                                + cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        found = re.findall(r"Collected : ([0-9,]+)", result.stderr.decode())
        return int(found[-1].replace(",", "")) if found else None


def measure(label, cmd, runs, cwd=None, callgrind=False, expect=None):
    out = timed(cmd, cwd=cwd)[2]  # warm-up
    if expect is not None and expect not in out:
        raise SystemExit(f"{label}: expected {expect!r} in the output of {cmd}:\n{out[-2000:]}")
    samples = [timed(cmd, cwd=cwd)[:2] for _ in range(runs)]
    walls = [w for w, _ in samples]
    return {"label": label, "best": min(walls), "median": statistics.median(walls),
            "cpu": statistics.median([c for _, c in samples]),
            "instr": instructions(cmd, cwd=cwd) if callgrind else None}


def write_ninja_tree(root, tree, objects, headers, per_object, with_headers):
    """A build.ninja of `objects` edges (src -> object) whose outputs are up to date after one
    build; with_headers: each edge also lists the object's headers (those record_gen_tool gave it)
    as implicit inputs."""
    root.mkdir()
    (root / "src").mkdir()
    (root / "out").mkdir()
    lines = ["rule cc\n  command = touch $out\n"]
    for i in range(objects):
        (root / "src" / f"o{i}.cu").write_text("")
        deps = ""
        if with_headers:
            deps = " |" + "".join(f" {tree}/include/h{(i * 7 + h) % headers}.h"
                                  for h in range(per_object))
        lines.append(f"build out/o{i}.o: cc src/o{i}.cu{deps}\n")
    (root / "build.ninja").write_text("".join(lines))


def main():
    repo = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(repo / "build"))
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--headers", type=int, default=2000)
    parser.add_argument("--per-object", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ninja", default=shutil.which("ninja") or "ninja")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = Path(args.build) / "bin" / "nvfresh"
    tool = Path(args.build) / "tests" / "tools" / "record_gen_tool"
    work = Path(tempfile.mkdtemp(prefix="nvfresh-check-scale-"))
    tree = work / "tree"
    try:
        start = time.perf_counter()
        tree.mkdir()
        subprocess.run([str(tool), str(tree), str(args.objects), str(args.headers),
                        str(args.per_object)], check=True)
        for name, with_headers in (("ninja-floor", False), ("ninja-headers", True)):
            write_ninja_tree(work / name, tree, args.objects, args.headers, args.per_object,
                             with_headers)
            subprocess.run([args.ninja, "-j8"], cwd=work / name, check=True,
                           stdout=subprocess.DEVNULL)
        print(f"generated {args.objects} records x {args.per_object} inputs over "
              f"{args.headers} headers, and two {args.objects}-edge build.ninja files, in "
              f"{time.perf_counter() - start:.1f} s ({work})")
        version = subprocess.run([args.ninja, "--version"], stdout=subprocess.PIPE,
                                 text=True).stdout.strip()
        rows = [
            measure("nvfresh check", [str(nvfresh), "check", "-C", str(tree)], args.runs,
                    callgrind=args.callgrind),
            measure("nvfresh sync", [str(nvfresh), "sync", "-C", str(tree)], args.runs,
                    callgrind=args.callgrind),
            measure(f"ninja {version} no-op, floor", [args.ninja], args.runs,
                    cwd=work / "ninja-floor", callgrind=args.callgrind, expect="no work to do"),
            measure(f"ninja {version} no-op, headers", [args.ninja], args.runs,
                    cwd=work / "ninja-headers", callgrind=args.callgrind, expect="no work to do"),
        ]
        floor, with_headers = rows[2], rows[3]
        print(f"\n{args.objects} objects, warm, {args.runs} runs each (best, median wall; median "
              f"CPU; instructions of one run), one run of this script")
        print(f"  {'case':<30} {'best s':>7} {'median s':>8} {'cpu s':>6} {'instr M':>8} |"
              f" {'/ninja floor':>12} {'/ninja headers':>14}")
        for row in rows:
            instr = f"{row['instr'] / 1e6:>8.1f}" if row["instr"] else f"{'-':>8}"
            line = (f"  {row['label']:<30} {row['best']:>7.3f} {row['median']:>8.3f}"
                    f" {row['cpu']:>6.3f} {instr} |")
            if row["label"].startswith("nvfresh"):
                line += (f" {row['median'] / floor['median']:>11.1f}x"
                         f" {row['median'] / with_headers['median']:>13.1f}x")
            print(line)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
