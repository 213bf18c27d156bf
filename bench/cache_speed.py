#!/usr/bin/env python3
"""nvfresh's object cache, side by side in one run with plain nvcc and with ccache (issue 11).

Prints ratios; asserts nothing.

(a) one TU (the CUTLASS FMHA TU with --cutlass, else a synthetic TU of templated kernels):
    - a miss: `nvfresh nvcc -MD ...` with an empty cache and no record (trace, record, store)
      vs plain `nvcc -MD ...`: the cache's cost when it cannot help (target <= 1.02x);
    - a hit: `nvfresh nvcc ...` with no record but a populated cache (lookup, object restored,
      record and depfile written) vs ccache's direct-mode hit on the same command (target <= 1.0x).
    Runs alternate between the two sides, so that the machine's load falls on both alike. CPU time
    (the children's user+sys) is printed beside wall time; with --callgrind also the instruction
    counts of one hit of each (stable on a busy machine).
(b) A -> B -> A on an ONNX-Runtime-like tree of 50 TUs (bench/skip_speed.py's tree; branch B
    changes a header every TU includes): nvfresh through its CMake module vs ccache as the CUDA
    launcher, Ninja -j2. Back on A, the nvcc runs must be 0 for nvfresh (served from its cache);
    ccache's count comes from its own statistics.

(c) --only dirs: a second build dir B of a tree of cub TUs with __FILE__ in their checks (what an
    object names binds its entry: the checkout here), fresh dirs alternating between nvfresh and
    ccache, and another checkout with and without NVFRESH_CACHE_ACROSS_CHECKOUTS / base_dir. Per
    TU: the compile edges' mean from .ninja_log (links and nvfresh's sync apart), the CPU of one
    TU's hit in a fresh build dir (and after a clean); with --callgrind that hit's instructions.

(d) --only cutlass-dirs: real sources. CUTLASS's examples 41 (FMHA) and 59 (gather/scatter conv)
    in a checkout that vendors CUTLASS, built with CUTLASS's flags: build dir A cold, fresh build
    dirs B (--dir-runs, alternating), then a comment appended to kernel_forward.h and B again
    (nvfresh's object cache against ccache's preprocessor mode). Not in the default run.

usage: bench/cache_speed.py [--nvfresh build/bin/nvfresh] [--runs 5] [--cutlass] [--tus 50]
                            [--callgrind] [--only single|tree|dirs|cutlass-dirs] [--dir-tus 16]
                            [--dir-runs 5] [--no-other] [--keep]
"""
import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import benchlib
import skip_speed  # its TUs, tree and git helpers

REPO = benchlib.REPO
CCACHE = shutil.which("ccache") or "/usr/bin/ccache"


def median(values):
    return statistics.median(values) if values else float("nan")


def fmt_ratio(a, b):
    return f"{a / b:.3f}x" if b > 0 else "inf"


def single_tu(root, cutlass, kernels):
    if cutlass:
        found = skip_speed.cutlass_tu(root)
        if found:
            args, _, work = found
            return "CUTLASS FMHA TU", args, work
        print("cache_speed: scripts/install_cutlass.sh is missing: the synthetic TU instead")
    work = root / "tu"
    work.mkdir()
    args, _ = skip_speed.write_single_tu(work, kernels)
    return f"synthetic TU ({kernels} kernels)", args, work


def callgrind_instructions(cmd, cwd, env, out_dir):
    out = out_dir / "callgrind.out"
    merged = dict(os.environ)
    merged.update(env)
    subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=no",
                    f"--callgrind-out-file={out}"] + cmd, cwd=cwd, env=merged,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    text = out.read_text(errors="replace")
    found = re.search(r"^summary:\s+(\d+)", text, re.MULTILINE) or re.search(r"^totals:\s+(\d+)", text, re.MULTILINE)
    out.unlink()
    return int(found.group(1)) if found else 0


def bench_single(nvfresh, nvcc, root, runs, cutlass, kernels, callgrind):
    label, args, work = single_tu(root, cutlass, kernels)
    nvcc_cmd = [nvcc] + args
    nvfresh_cmd = [nvfresh, nvcc] + args
    object_path = work / ("fmha.o" if "fmha.o" in args else "tu.o")
    records = work / ".nvfresh"
    cache = root / "nvfresh-cache"
    ccache_dir = root / "ccache"
    ccache_env = {"CCACHE_DIR": str(ccache_dir), "CCACHE_DIRECT": "1", "CCACHE_NOHASHDIR": "1",
                  "CCACHE_MAXSIZE": "5G"}
    plain, miss = [], []
    for _ in range(runs):  # misses: an empty cache and no record every time
        object_path.unlink(missing_ok=True)
        plain.append(benchlib.timed(nvcc_cmd, cwd=work))
        object_path.unlink(missing_ok=True)
        shutil.rmtree(records, ignore_errors=True)
        benchlib.fresh_dir(cache)
        miss.append(benchlib.timed(nvfresh_cmd, cwd=work, env={"NVFRESH_CACHE_DIR": str(cache)}))
    # Populate both caches, then alternate hits.
    benchlib.fresh_dir(ccache_dir)
    benchlib.timed([CCACHE] + nvcc_cmd, cwd=work, env=ccache_env)
    # Hits: after `clean` (the object gone, the tree's records stay: their stat stamps vouch for
    # the unchanged headers, as in a skip); with the records gone but the tree's hash cache there
    # (large files hashed once per tree); and in a fresh tree (every input hashed).
    hits, no_record_hits, fresh_hits, ccache_hits = [], [], [], []
    env = {"NVFRESH_CACHE_DIR": str(cache)}
    for _ in range(runs * 3):
        object_path.unlink(missing_ok=True)
        hits.append(benchlib.timed(nvfresh_cmd, cwd=work, env=env))
        object_path.unlink(missing_ok=True)
        shutil.rmtree(records / "records", ignore_errors=True)
        no_record_hits.append(benchlib.timed(nvfresh_cmd, cwd=work, env=env))
        object_path.unlink(missing_ok=True)
        ccache_hits.append(benchlib.timed([CCACHE] + nvcc_cmd, cwd=work, env=ccache_env))
        object_path.unlink(missing_ok=True)
        shutil.rmtree(records, ignore_errors=True)
        fresh_hits.append(benchlib.timed(nvfresh_cmd, cwd=work, env={"NVFRESH_CACHE_DIR": str(cache)}))
    ccache_stats = subprocess.run([CCACHE, "--print-stats"], env=dict(os.environ, **ccache_env),
                                  stdout=subprocess.PIPE, text=True).stdout
    direct_hits = re.search(r"^direct_cache_hit\s+(\d+)", ccache_stats, re.MULTILINE)
    events = (records / "events.log").read_text().split("\n") if records.exists() else []
    served = sum(1 for line in events if "\tserved\t" in line)
    print(f"\n(a) one TU: {label}, {runs} runs per miss side, {runs * 3} per hit side (medians)")
    print(f"  {'':<28} {'wall s':>9} {'cpu s':>9}")
    rows = [("plain nvcc -MD", plain), ("nvfresh miss (trace+store)", miss),
            ("nvfresh hit after clean", hits), ("nvfresh hit, no record", no_record_hits),
            ("nvfresh hit, fresh tree", fresh_hits),
            (f"ccache {ccache_version()} direct hit", ccache_hits)]
    for name, values in rows:
        print(f"  {name:<28} {median([v[0] for v in values]):>9.4f} {median([v[1] for v in values]):>9.4f}")
    print(f"  miss / plain nvcc:   wall {fmt_ratio(median([v[0] for v in miss]), median([v[0] for v in plain]))}"
          f"   cpu {fmt_ratio(median([v[1] for v in miss]), median([v[1] for v in plain]))}   (target <= 1.02x)")
    for name, values in (("hit after clean", hits), ("hit, no record", no_record_hits),
                         ("hit, fresh tree", fresh_hits)):
        print(f"  {name + ' / ccache hit:':<32} wall "
              f"{fmt_ratio(median([v[0] for v in values]), median([v[0] for v in ccache_hits]))}"
              f"   cpu {fmt_ratio(median([v[1] for v in values]), median([v[1] for v in ccache_hits]))}"
              "   (target <= 1.0x)")
    print(f"  the last nvfresh run was served: {served > 0}; ccache direct hits: "
          f"{direct_hits.group(1) if direct_hits else '?'}")
    if callgrind and shutil.which("valgrind"):
        benchlib.timed(nvfresh_cmd, cwd=work, env=env)  # a record again
        object_path.unlink(missing_ok=True)
        ours = callgrind_instructions(nvfresh_cmd, work, {"NVFRESH_CACHE_DIR": str(cache)}, root)
        object_path.unlink(missing_ok=True)
        shutil.rmtree(records, ignore_errors=True)
        fresh = callgrind_instructions(nvfresh_cmd, work, {"NVFRESH_CACHE_DIR": str(cache)}, root)
        object_path.unlink(missing_ok=True)
        theirs = callgrind_instructions([CCACHE] + nvcc_cmd, work, ccache_env, root)
        print(f"  callgrind instructions, one hit: nvfresh after clean {ours:,}, in a fresh tree "
              f"{fresh:,}; ccache {theirs:,}; ratios {fmt_ratio(ours, theirs)}, "
              f"{fmt_ratio(fresh, theirs)}")


def ccache_version():
    out = subprocess.run([CCACHE, "--version"], stdout=subprocess.PIPE, text=True).stdout
    return out.split()[2] if len(out.split()) > 2 else "?"


def nvfresh_nvcc_runs(nvfresh, build, since):
    """(nvcc runs, served) in the events of a build tree after the first `since` events."""
    log = build / ".nvfresh" / "events.log"
    lines = log.read_text().splitlines()[since:] if log.exists() else []
    kinds = [line.split("\t")[1] for line in lines if len(line.split("\t")) == 6]
    return (sum(k in skip_speed.NVCC_RUN_EVENTS for k in kinds), kinds.count("served"),
            len(log.read_text().splitlines()) if log.exists() else 0)


def ccache_misses(env):
    out = subprocess.run([CCACHE, "--print-stats"], env=dict(os.environ, **env),
                         stdout=subprocess.PIPE, text=True).stdout
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    return int(stats.get("cache_miss", 0)), int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))


def bench_tree(nvfresh, nvcc, root, tus):
    src = root / "tree"
    skip_speed.write_tree(src, tus)
    skip_speed.git(src, "init", "-q")
    skip_speed.git(src, "add", ".")
    skip_speed.git(src, "commit", "-q", "-m", "A")
    skip_speed.git(src, "checkout", "-q", "-b", "B")
    common = src / "include" / "core" / "common.h"
    common.write_text(common.read_text() + "#define ORT_BRANCH_B 1\n"
                      "__device__ __forceinline__ float branch_b(float x) { return x + 1; }\n")
    skip_speed.git(src, "commit", "-q", "-am", "B")
    base = "main"  # skip_speed.git sets init.defaultBranch
    skip_speed.git(src, "checkout", "-q", base)
    results = {}
    nvfresh_env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "tree-nvfresh-cache"))}
    ccache_env = {"CCACHE_DIR": str(benchlib.fresh_dir(root / "tree-ccache")), "CCACHE_MAXSIZE": "5G"}
    for side in ("nvfresh", "ccache"):
        build = root / f"build-{side}"
        args = ["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
                f"-DCMAKE_CUDA_COMPILER={nvcc}"]
        if side == "nvfresh":
            args += [f"-DCMAKE_PROJECT_INCLUDE={REPO}/cmake/nvfresh.cmake", f"-DNVFRESH_EXECUTABLE={nvfresh}"]
            env = nvfresh_env
        else:
            args += [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={CCACHE}"]
            env = ccache_env
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
        build_cmd = ["cmake", "--build", str(build), "-j2"]
        row = {}
        for step, branch in (("A", base), ("B", "B"), ("back on A", base)):
            skip_speed.git(src, "checkout", "-q", branch)
            if side == "nvfresh":
                _, _, before = nvfresh_nvcc_runs(nvfresh, build, 0)
                wall, cpu = benchlib.timed(build_cmd, env=env)
                runs, served, _ = nvfresh_nvcc_runs(nvfresh, build, before)
            else:
                misses0, hits0 = ccache_misses(env)
                wall, cpu = benchlib.timed(build_cmd, env=env)
                misses1, hits1 = ccache_misses(env)
                runs, served = misses1 - misses0, hits1 - hits0
            row[step] = (wall, cpu, runs, served)
        results[side] = row
    print(f"\n(b) A -> B -> A on a {tus}-TU tree (B changes a header every TU includes), Ninja -j2")
    print(f"  {'':<8} {'step':<10} {'wall s':>8} {'cpu s':>8} {'nvcc runs':>10} {'served/hits':>12}")
    for side, row in results.items():
        for step, (wall, cpu, runs, served) in row.items():
            print(f"  {side:<8} {step:<10} {wall:>8.2f} {cpu:>8.2f} {runs:>10} {served:>12}")
    ours, theirs = results["nvfresh"]["back on A"], results["ccache"]["back on A"]
    print(f"  back on A: nvfresh {ours[0]:.2f} s with {ours[2]} nvcc runs, ccache {theirs[0]:.2f} s "
          f"with {theirs[2]} misses: wall ratio {fmt_ratio(ours[0], theirs[0])}, "
          f"cpu ratio {fmt_ratio(ours[1], theirs[1])}")


FILE_CHECK = """#include <cstdio>
#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \\
  std::fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__, cudaGetErrorString(e_)); } } while (0)
"""


def write_file_tree(src, tus):
    """bench_tree's tree, each TU with a cub block reduction (about 880 headers, as real TUs read)
    and a host launcher checked by a __FILE__ macro."""
    skip_speed.write_tree(src, tus)
    for cu in sorted((src / "ops").glob("op*.cu")):
        t = int(cu.stem[2:])
        cu.write_text(FILE_CHECK + cu.read_text()
                      + f"__global__ void sum{t}(float* p) {{ using R = cub::BlockReduce<float, 128>;\n"
                      f"  __shared__ typename R::TempStorage s; float v = R(s).Sum(p[threadIdx.x]);\n"
                      f"  if (threadIdx.x == 0) p[0] = v; }}\n"
                      f"void launch{t}(float* p) {{ op{t}<<<1, 32>>>(p); sum{t}<<<1, 128>>>(p);\n"
                      f"  CUDA_CHECK(cudaGetLastError()); }}\n")


def compile_edges(build):
    """(count, summed ms) of the CUDA compile edges in a Ninja tree's .ninja_log, and the summed ms
    of every other edge (links, nvfresh's sync): what a tree's build spends beside its hits. The
    log has a line per output (nvfresh's sync edge has one per stamp) and appends each build's:
    the last line of each output counts, and an edge's outputs count once."""
    last = {}
    log = build / ".ninja_log"
    for line in (log.read_text().splitlines() if log.exists() else []):
        fields = line.split("\t")
        if len(fields) != 5 or line.startswith("#"):
            continue
        last[fields[3]] = (int(fields[0]), int(fields[1]), fields[4])
    edges = {}
    for output, edge in last.items():
        edges.setdefault(edge, []).append(output)
    count, compiles, others = 0, 0, 0
    for (start, end, _), outputs in edges.items():
        if any(o.endswith(".cu.o") for o in outputs):
            count, compiles = count + 1, compiles + end - start
        else:
            others += end - start
    return count, compiles, others


def one_hit_command(side, nvfresh, nvcc, src, build, env, pick=""):
    """A tree configured at `build`, and its first TU's compile command (the first whose object
    path holds `pick`) as Ninja runs it (the object's directory made): what one hit in a fresh
    build dir runs."""
    args = ["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_CUDA_COMPILER={nvcc}"]
    if side == "nvfresh":
        args += [f"-DCMAKE_PROJECT_INCLUDE={REPO}/cmake/nvfresh.cmake", f"-DNVFRESH_EXECUTABLE={nvfresh}"]
    else:
        args += [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={CCACHE}"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
    commands = subprocess.run(["ninja", "-C", str(build), "-t", "commands"], check=True,
                              stdout=subprocess.PIPE, text=True).stdout
    line = next(c for c in commands.splitlines() if " -c " in c and c.endswith(".cu.o") and pick in c)
    cmd = shlex.split(line)
    (build / cmd[cmd.index("-o") + 1]).parent.mkdir(parents=True, exist_ok=True)
    return cmd, build / cmd[cmd.index("-o") + 1]


def callgrind_one_hit(side, nvfresh, nvcc, src, build, env, out_dir, pick=""):
    """Instructions of one TU's hit in a fresh build dir (no record, no tree hash cache)."""
    cmd, _ = one_hit_command(side, nvfresh, nvcc, src, build, env, pick)
    return callgrind_instructions(cmd, build, env, out_dir)


def hit_cpu(side, nvfresh, nvcc, src, build, env, runs, pick=""):
    """Mean CPU seconds (user + sys) of one TU's hit, `runs` times: in a fresh build dir (its
    records and hash cache removed before each) and, for nvfresh, after a clean (the object
    removed, the record kept)."""
    cmd, obj = one_hit_command(side, nvfresh, nvcc, src, build, env, pick)
    fresh, after_clean = [], []
    for _ in range(runs):
        obj.unlink(missing_ok=True)
        shutil.rmtree(build / ".nvfresh", ignore_errors=True)
        fresh.append(benchlib.timed(cmd, cwd=build, env=env)[1])
        if side == "nvfresh":
            obj.unlink(missing_ok=True)
            after_clean.append(benchlib.timed(cmd, cwd=build, env=env)[1])
    return statistics.mean(fresh), statistics.mean(after_clean) if after_clean else float("nan")


def build_side(side, nvfresh, nvcc, src, build, env):
    """Configures and builds one tree: (wall, cpu, nvcc runs, served or hit)."""
    args = ["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_CUDA_COMPILER={nvcc}"]
    if side == "nvfresh":
        args += [f"-DCMAKE_PROJECT_INCLUDE={REPO}/cmake/nvfresh.cmake", f"-DNVFRESH_EXECUTABLE={nvfresh}"]
    else:
        args += [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={CCACHE}"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))
    build_cmd = ["cmake", "--build", str(build), "-j2"]
    if side == "nvfresh":
        wall, cpu = benchlib.timed(build_cmd, env=env)
        runs, served, _ = nvfresh_nvcc_runs(nvfresh, build, 0)
        return wall, cpu, runs, served
    misses0, hits0 = ccache_misses(env)
    wall, cpu = benchlib.timed(build_cmd, env=env)
    misses1, hits1 = ccache_misses(env)
    return wall, cpu, misses1 - misses0, hits1 - hits0


def bench_dirs(nvfresh, nvcc, root, tus, runs=1, other=True, callgrind=False):
    src = root / "file-tree"
    write_file_tree(src, tus)
    clone = root / "another-checkout"
    shutil.copytree(src, clone)  # before any build dir is made inside src
    nvfresh_env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "dirs-nvfresh-cache"))}
    ccache_env = {"CCACHE_DIR": str(benchlib.fresh_dir(root / "dirs-ccache")), "CCACHE_MAXSIZE": "5G"}
    rows = []
    # Build dirs inside the checkout, as most projects have them (and as base_dir needs).
    for side, env in (("nvfresh", nvfresh_env), ("ccache", ccache_env)):
        rows.append((side, "build dir A (cold)", build_side(side, nvfresh, nvcc, src, src / f"{side}-a", env)))
    # Fresh build dirs B, the two sides alternating so that the machine's load falls on both alike.
    seconds = {"nvfresh": [], "ccache": []}
    for n in range(runs):
        for side, env in (("nvfresh", nvfresh_env), ("ccache", ccache_env)):
            seconds[side].append(build_side(side, nvfresh, nvcc, src, src / f"{side}-b{n}", env))
    per_tu = {}
    for side in seconds:
        edges = [compile_edges(src / f"{side}-b{n}") for n in range(runs)]
        per_tu[side] = (median([c / max(n, 1) for n, c, _ in edges]), median([o for _, _, o in edges]))
    for side, measured in seconds.items():
        rows.append((side, "build dir B" + (f" (median of {runs})" if runs > 1 else ""),
                     tuple(median([m[i] for m in measured]) for i in range(2))
                     + (max(m[2] for m in measured), min(m[3] for m in measured))))
    # Another checkout; each variant builds a fresh tree of the copy with what A stored.
    # ccache's base_dir changes its keys: its own cache, filled by a build dir of the first checkout.
    based_env = {"CCACHE_DIR": str(benchlib.fresh_dir(root / "dirs-ccache-based")), "CCACHE_MAXSIZE": "5G",
                 "CCACHE_BASEDIR": str(root)}
    if other:
        rows.append(("ccache", "base_dir, build dir A",
                     build_side("ccache", nvfresh, nvcc, src, src / "based-a", based_env)))
    variants = (("nvfresh", "other checkout", nvfresh_env),
                ("nvfresh", "other, ACROSS_CHECKOUTS=1", dict(nvfresh_env, NVFRESH_CACHE_ACROSS_CHECKOUTS="1")),
                ("ccache", "other checkout", ccache_env),
                ("ccache", "other, base_dir", based_env))
    for n, (side, step, env) in enumerate(variants if other else ()):
        rows.append((side, step, build_side(side, nvfresh, nvcc, clone, clone / f"{side}-other{n}", env)))
    print(f"\n(c) a second build dir of a {tus}-TU tree with __FILE__ in a host CUDA_CHECK, Ninja -j2")
    print(f"  {'':<8} {'step':<27} {'wall s':>8} {'cpu s':>8} {'nvcc runs':>10} {'served/hits':>12}")
    for side, step, (wall, cpu, runs, served) in rows:
        print(f"  {side:<8} {step:<27} {wall:>8.2f} {cpu:>8.2f} {runs:>10} {served:>12}")
    for side, (tu_ms, other_ms) in per_tu.items():
        print(f"  {side:<8} build dir B per TU (.ninja_log, compile edges): {tu_ms:.1f} ms; "
              f"the other edges (link, sync): {other_ms} ms")
    print(f"  per TU in build dir B: ratio {fmt_ratio(per_tu['nvfresh'][0], per_tu['ccache'][0])}")
    hits = {side: hit_cpu(side, nvfresh, nvcc, src, src / f"{side}-hits", env, 20)
            for side, env in (("nvfresh", nvfresh_env), ("ccache", ccache_env))}
    print(f"  one TU's hit, CPU (mean of 20, user + sys): in a fresh build dir nvfresh "
          f"{hits['nvfresh'][0] * 1000:.1f} ms, ccache {hits['ccache'][0] * 1000:.1f} ms: ratio "
          f"{fmt_ratio(hits['nvfresh'][0], hits['ccache'][0])}; nvfresh after clean "
          f"{hits['nvfresh'][1] * 1000:.1f} ms: {fmt_ratio(hits['nvfresh'][1], hits['ccache'][0])}")
    if callgrind and shutil.which("valgrind"):
        counts = {side: callgrind_one_hit(side, nvfresh, nvcc, src, src / f"{side}-callgrind", env, root)
                  for side, env in (("nvfresh", nvfresh_env), ("ccache", ccache_env))}
        print(f"  callgrind instructions, one TU's hit in a fresh build dir: nvfresh "
              f"{counts['nvfresh']:,}, ccache {counts['ccache']:,}: ratio "
              f"{fmt_ratio(counts['nvfresh'], counts['ccache'])}")
    ours = next(r for side, step, r in rows if side == "nvfresh" and step.startswith("build dir B"))
    theirs = next(r for side, step, r in rows if side == "ccache" and step.startswith("build dir B"))
    print(f"  build dir B: nvfresh {ours[0]:.2f} s with {ours[2]} nvcc runs, ccache {theirs[0]:.2f} s "
          f"with {theirs[2]} misses: wall ratio {fmt_ratio(ours[0], theirs[0])} (goal <= 0.5x), "
          f"cpu ratio {fmt_ratio(ours[1], theirs[1])}")


CUTLASS_EXAMPLES = {  # target: (example dir, source)
    "fmha": ("examples/41_fused_multi_head_attention", skip_speed.FMHA_SOURCE),
    "conv": ("examples/59_ampere_gather_scatter_conv", "ampere_gather_scatter_conv.cu"),
}


def write_cutlass_checkout(checkout, cutlass):
    """A project that vendors CUTLASS in its checkout (as ONNX Runtime does) and builds two of its
    examples with CUTLASS's own flags, for sm_80."""
    for part in ("include", "tools/util/include", "examples/common",
                 *(directory for directory, _ in CUTLASS_EXAMPLES.values())):
        shutil.copytree(cutlass / part, checkout / part)
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(cutlass_examples LANGUAGES CUDA)",
             "set(CMAKE_CUDA_ARCHITECTURES 80)",
             "include_directories(include tools/util/include examples/common)"]
    for target, (directory, source) in CUTLASS_EXAMPLES.items():
        lines += [f"add_library({target} OBJECT {directory}/{source})",
                  f"target_include_directories({target} PRIVATE {directory})",
                  f"target_compile_features({target} PRIVATE cuda_std_17)",
                  f"target_compile_options({target} PRIVATE --expt-relaxed-constexpr)"]
    (checkout / "CMakeLists.txt").write_text("\n".join(lines) + "\n")


def bench_cutlass_dirs(nvfresh, nvcc, root, runs, callgrind=False):
    """(d) Real sources: two CUTLASS examples vendored in the checkout. Build dir A cold, fresh build
    dirs B (the sides alternating), then a comment appended to kernel_forward.h (the FMHA kernel
    header) and B built again: nvfresh's object cache against ccache's preprocessor mode."""
    cutlass = benchlib.cutlass_root("cache_speed")
    if cutlass is None:
        print("cache_speed: scripts/install_cutlass.sh is missing: (d) skipped")
        return
    src = root / "cutlass-checkout"
    write_cutlass_checkout(src, cutlass)
    envs = {"nvfresh": {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cutlass-nvfresh-cache"))},
            "ccache": {"CCACHE_DIR": str(benchlib.fresh_dir(root / "cutlass-ccache")),
                       "CCACHE_MAXSIZE": "5G"}}
    rows = [(side, "build dir A (cold)", build_side(side, nvfresh, nvcc, src, src / f"{side}-a", env))
            for side, env in envs.items()]
    measured = {side: [] for side in envs}
    for n in range(runs):
        for side, env in envs.items():
            measured[side].append(build_side(side, nvfresh, nvcc, src, src / f"{side}-b{n}", env))
    for side, results in measured.items():
        rows.append((side, f"build dir B (median of {runs})",
                     tuple(median([m[i] for m in results]) for i in range(2))
                     + (max(m[2] for m in results), min(m[3] for m in results))))
    # The FMHA TU's own hit in a fresh build dir, without the build's fixed costs.
    fmha_hits = {side: hit_cpu(side, nvfresh, nvcc, src, src / f"{side}-fmha-hits", env, 10, "fmha")
            for side, env in envs.items()}
    fmha_counts = {side: callgrind_one_hit(side, nvfresh, nvcc, src, src / f"{side}-fmha-callgrind", env, root,
                                      "fmha")
              for side, env in envs.items()} if callgrind and shutil.which("valgrind") else None
    header = src / "examples" / "41_fused_multi_head_attention" / "kernel_forward.h"
    header.write_text(header.read_text() + "// a comment appended to the FMHA kernel header\n")
    for side, env in envs.items():
        build = src / f"{side}-b0"
        before = len((build / ".nvfresh" / "events.log").read_text().splitlines()) \
            if side == "nvfresh" else ccache_misses(env)
        wall, cpu = benchlib.timed(["cmake", "--build", str(build), "-j2"], env=env)
        if side == "nvfresh":
            runs_after, served, _ = nvfresh_nvcc_runs(nvfresh, build, before)
        else:
            misses, hits = ccache_misses(env)
            runs_after, served = misses - before[0], hits - before[1]
        rows.append((side, "B after a comment edit", (wall, cpu, runs_after, served)))
    print(f"\n(d) CUTLASS examples 41 (FMHA) and 59 (gather/scatter conv) vendored in the checkout, "
          f"sm_80, Ninja -j2")
    print(f"  {'':<8} {'step':<27} {'wall s':>8} {'cpu s':>8} {'nvcc runs':>10} {'served/hits':>12}")
    for side, step, (wall, cpu, nvcc_runs, served) in rows:
        print(f"  {side:<8} {step:<27} {wall:>8.2f} {cpu:>8.2f} {nvcc_runs:>10} {served:>12}")
    for step in (f"build dir B (median of {runs})", "B after a comment edit"):
        ours = next(r for side, name, r in rows if side == "nvfresh" and name == step)
        theirs = next(r for side, name, r in rows if side == "ccache" and name == step)
        print(f"  {step}: wall ratio {fmt_ratio(ours[0], theirs[0])}, "
              f"cpu ratio {fmt_ratio(ours[1], theirs[1])}")
    print(f"  the FMHA TU's hit, CPU (mean of 10, user + sys): in a fresh build dir nvfresh "
          f"{fmha_hits['nvfresh'][0] * 1000:.1f} ms, ccache {fmha_hits['ccache'][0] * 1000:.1f} ms: ratio "
          f"{fmt_ratio(fmha_hits['nvfresh'][0], fmha_hits['ccache'][0])}; nvfresh after clean "
          f"{fmha_hits['nvfresh'][1] * 1000:.1f} ms: {fmt_ratio(fmha_hits['nvfresh'][1], fmha_hits['ccache'][0])}")
    if fmha_counts:
        print(f"  callgrind instructions, the FMHA TU's hit in a fresh build dir: nvfresh "
              f"{fmha_counts['nvfresh']:,}, ccache {fmha_counts['ccache']:,}: ratio "
              f"{fmt_ratio(fmha_counts['nvfresh'], fmha_counts['ccache'])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nvfresh", default=str(REPO / "build" / "bin" / "nvfresh"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kernels", type=int, default=24)
    parser.add_argument("--tus", type=int, default=50)
    parser.add_argument("--cutlass", action="store_true")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--only", choices=("single", "tree", "dirs", "cutlass-dirs"))
    parser.add_argument("--dir-tus", type=int, default=16)
    parser.add_argument("--dir-runs", type=int, default=5, help="fresh build dirs B per side")
    parser.add_argument("--no-other", action="store_true", help="(c) without the other checkout")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = str(Path(args.nvfresh).resolve())
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    root = Path(tempfile.mkdtemp(prefix="nvfresh-cache-bench-"))
    try:
        print(f"cache_speed: nvfresh {nvfresh}, {nvcc}, ccache {ccache_version()}, {os.cpu_count()} cores")
        if args.only in (None, "single"):
            bench_single(nvfresh, nvcc, root, args.runs, args.cutlass, args.kernels, args.callgrind)
        if args.only in (None, "tree"):
            bench_tree(nvfresh, nvcc, root, args.tus)
        if args.only in (None, "dirs"):
            bench_dirs(nvfresh, nvcc, root, args.dir_tus, args.dir_runs, not args.no_other,
                       args.callgrind)
        if args.only == "cutlass-dirs":
            bench_cutlass_dirs(nvfresh, nvcc, root, args.dir_runs, args.callgrind)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
