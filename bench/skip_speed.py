#!/usr/bin/env python3
"""How much a skip saves: nvcc compile time vs. nvfresh's skip when nothing changed in content.

Prints ratios side by side, from one run; asserts nothing.

(a) one TU: the compile (2-3 s of nvcc on an idle machine) vs. a rerun after touching every header
    of the TU's tree (content unchanged), and after replacing every header by a new file of the same
    content (what a git branch switch and back leaves). With --cutlass, also the CUTLASS FMHA TU
    (headers and example copied out of the install of scripts/install_cutlass.sh, every header the
    depfile lists touched), when that script exists in this tree (the mode is left out otherwise).
(b) an ONNX-Runtime-like tree: 50 tiny TUs sharing headers, CMake with nvfresh injected
    (CMAKE_PROJECT_INCLUDE), built with `ninja -j2` and with GNU make `-j2`: the full build vs. the
    rebuild after touching every header, and after a git branch switch and back. The count of nvcc
    runs in each rebuild comes from `nvfresh stats --json` (it must be 0).

(c) the unchanged path at the physical limit (--only hot): the CUTLASS FMHA TU, N runs each, one
    run of the script: starting /bin/true; nvfresh's skip, untouched and with every header the
    depfile lists touched before each run; ccache's direct-mode hit on the same compile (its own
    object and cache directory), untouched and touched. Medians of wall and CPU time, and the
    instruction count of one run under valgrind --tool=callgrind (what a change can be judged by on
    a busy machine), with the ratios nvfresh/ccache and nvfresh//bin/true. The scratch tree is made
    a second before the first compile, as no real tree is: a directory changed in the compile's
    second proves nothing about its probes (freshness/input_check.hpp). --work DIR keeps the
    compiled tree there and reuses it on the next run (the two compiles take minutes).

Wall time is noisy on a shared machine, so CPU time (children's user+sys) is printed beside it.

usage: bench/skip_speed.py [--nvfresh build/bin/nvfresh] [--tus 50] [--kernels 48] [--cutlass]
                           [--generators ninja,make] [--tu-kernels 1] [--only single|tree|hot]
                           [--runs 15] [--ccache ccache] [--work DIR] [--keep]
"""
import argparse
import json
import re
import statistics
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

NVCC_RUN_EVENTS = ("compiled", "raced", "failed", "not-recorded")


def timed(cmd, cwd=None, env=None):
    """(wall seconds, cpu seconds) of one command, which must succeed."""
    return benchlib.timed(cmd, cwd=cwd, env=env, bench="skip_speed")


def stats(nvfresh, build_dir):
    out = subprocess.run([nvfresh, "stats", "-C", str(build_dir), "--json"], check=True,
                         stdout=subprocess.PIPE).stdout
    events = json.loads(out)["kinds"]
    nvcc = sum(events.get(e, {}).get("count", 0) for e in NVCC_RUN_EVENTS)
    return nvcc, events.get("skipped", {}).get("count", 0)


def touch_all(paths):
    now = time.time_ns() + 2_000_000_000
    for path in paths:
        os.utime(path, ns=(now, now))


def rewrite_all(paths):
    """Each file replaced by a new one of the same content (new inode and times): what a git
    checkout of another branch and back leaves behind."""
    for path in paths:
        data = path.read_bytes()
        tmp = path.with_name(path.name + ".nvfresh-bench")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def ratio(slow, fast):
    return f"{slow / fast:.0f}x" if fast > 0 else "inf"


# ---------------------------------------------------------------------------------------------
# (a) one TU

def write_single_tu(root, kernels):
    """A TU of templated kernels spread over 12 local headers: about 2-3 s of nvcc, one arch."""
    inc = root / "include"
    inc.mkdir(parents=True)
    for i in range(12):
        (inc / f"part{i}.h").write_text(
            f"#pragma once\n#include \"part{i - 1}.h\"\n" if i else "#pragma once\n")
        with open(inc / f"part{i}.h", "a") as f:
            f.write(f"template <int N> __device__ __forceinline__ float step{i}(float x) {{\n"
                    f"  #pragma unroll\n  for (int k = 0; k < N; ++k) {{ x = x * 1.0001f + {i}.5f / (k + 1); }}\n"
                    f"  return x;\n}}\n")
    body = "".join(f"  x = step{i}<N + {i}>(x);\n" for i in range(12))
    (root / "tu.cu").write_text(
        "#include \"part11.h\"\n"
        f"template <int N> __global__ void kern(float* p) {{\n  float x = p[threadIdx.x];\n{body}"
        "  p[threadIdx.x] = x;\n}\n"
        + "".join(f"template __global__ void kern<{n}>(float*);\n" for n in range(kernels)))
    return ["-arch=sm_80", "-Iinclude", "-MD", "-MT", "tu.o", "-MF", "tu.o.d", "-x", "cu", "-c",
            "tu.cu", "-o", "tu.o"], sorted(inc.iterdir())


FMHA_EXAMPLE = "examples/41_fused_multi_head_attention"
FMHA_SOURCE = "fused_multihead_attention_fixed_seqlen.cu"


def cutlass_tu(root):
    """The CUTLASS FMHA TU, when this tree has scripts/install_cutlass.sh; None otherwise.

    The script prints the CUTLASS root (include/, tools/util/include, examples/). Headers and
    example are copied into the scratch directory, so that touching them leaves the install alone.
    """
    cutlass = benchlib.cutlass_root("skip_speed")
    if cutlass is None:
        return None
    copy = root / "cutlass"
    shutil.copytree(cutlass / "include", copy / "include")
    shutil.copytree(cutlass / "tools" / "util" / "include", copy / "tools" / "util" / "include")
    shutil.copytree(cutlass / FMHA_EXAMPLE, root / "fmha")
    return cutlass_tu_args(root), None, root


def cutlass_tu_args(root):
    """The FMHA compile of a tree cutlass_tu made."""
    copy = root / "cutlass"
    # What CMake 3.25 gives nvcc for CMAKE_CUDA_ARCHITECTURES=80, C++17 and CUTLASS's own flag.
    return ["-forward-unknown-to-host-compiler", f"-I{copy}/include",
            f"-I{copy}/tools/util/include", f"-I{root / 'fmha'}",
            "--generate-code=arch=compute_80,code=[compute_80,sm_80]", "-std=c++17",
            "--expt-relaxed-constexpr", "-MD", "-MT", "fmha.o", "-MF", "fmha.o.d", "-x", "cu",
            "-c", str(root / "fmha" / FMHA_SOURCE), "-o", "fmha.o"]


def headers_read(work, depfile):
    """Every prerequisite in the depfile that lies in the scratch tree (not the toolkit's)."""
    deps = benchlib.depfile_paths(work / depfile)
    return sorted({Path(d) for d in deps if d.startswith(str(work)) and d.endswith((".h", ".hpp", ".cuh", ".inl"))})


def bench_single(nvfresh, nvcc, root, kernels, cutlass):
    rows = []
    cases = [("one TU (12 headers)", None)]
    if cutlass:
        cases.append(("CUTLASS FMHA TU", "cutlass"))
    for label, mode in cases:
        work = root / ("single-" + (mode or "plain"))
        work.mkdir()
        (work / ".nvfresh").mkdir()
        if mode == "cutlass":
            found = cutlass_tu(work)
            if found is None:
                print("skip_speed: scripts/install_cutlass.sh is absent: CUTLASS mode skipped")
                continue
            args, headers, cwd = found
        else:
            args, headers = write_single_tu(work, kernels)
            cwd = work
        compile_wall, compile_cpu = timed([nvfresh, nvcc] + args, cwd=cwd)
        if headers is None:
            headers = headers_read(work, args[args.index("-MF") + 1])
        touch_all(headers)
        skip_wall, skip_cpu = timed([nvfresh, nvcc] + args, cwd=cwd)
        rewrite_all(headers)
        rewrite_wall, rewrite_cpu = timed([nvfresh, nvcc] + args, cwd=cwd)
        nvcc_runs, skips = stats(nvfresh, cwd)
        rows.append((label, len(headers), compile_wall, compile_cpu, skip_wall, skip_cpu,
                     rewrite_wall, rewrite_cpu, nvcc_runs - 1, skips))
    print("\n(a) one TU: compile vs. skip after touching every header, and after rewriting every"
          " header with its own content (a branch switch and back); target >= 100x")
    print(f"  {'case':<20} {'headers':>7} {'compile s':>9} {'cpu s':>6} | {'touch s':>7} {'cpu s':>6}"
          f" {'ratio':>6} {'cpu':>6} | {'rewrite s':>9} {'cpu s':>6} {'ratio':>6} {'cpu':>6} |"
          f" {'nvcc runs':>9} {'skips':>5}")
    for label, n, cw, cc, sw, sc, rw, rc, runs, skips in rows:
        print(f"  {label:<20} {n:>7} {cw:>9.2f} {cc:>6.2f} | {sw:>7.4f} {sc:>6.4f} {ratio(cw, sw):>6}"
              f" {ratio(cc, sc):>6} | {rw:>9.4f} {rc:>6.4f} {ratio(cw, rw):>6} {ratio(cc, rc):>6} |"
              f" {runs:>9} {skips:>5}")


# ---------------------------------------------------------------------------------------------
# (b) a tree of TUs sharing headers

HEADERS = ["core/common.h", "core/types.h", "core/math.h", "cuda/launch.h", "cuda/reduce.h",
           "cuda/elementwise.h", "contrib/attention.h", "contrib/norm.h"]


def tree_kernel(t, body, tu_kernels):
    """One op kernel; with tu_kernels > 1 a template instantiated that often (ONNX Runtime's CUDA
    TUs are templates instantiated per type and tile size, each TU many seconds of nvcc)."""
    if tu_kernels <= 1:
        return (f"__global__ void op{t}(float* p) {{\n  float x = p[threadIdx.x];\n"
                f"{body}  p[threadIdx.x] = x;\n}}\n")
    return (f"template <int N> __global__ void op{t}(float* p) {{\n  float x = p[threadIdx.x];\n"
            f"#pragma unroll\n  for (int i = 0; i < N * 8; ++i) {{\n{body}    x = x * 1.0001f + i;\n  }}\n"
            f"  p[threadIdx.x] = x;\n}}\n"
            + "".join(f"template __global__ void op{t}<{n + 1}>(float*);\n" for n in range(tu_kernels)))


def write_tree(src, tus, tu_kernels=1):
    for i, name in enumerate(HEADERS):
        deps = "".join(f'#include "{h}"\n' for h in HEADERS[:i][-2:])
        (src / "include" / name).parent.mkdir(parents=True, exist_ok=True)
        (src / "include" / name).write_text(
            f"#pragma once\n{deps}#define ORT_H{i}_SCALE {i + 1}\n"
            f"__device__ __forceinline__ float h{i}_op(float x) {{ return x * ORT_H{i}_SCALE + {i}; }}\n")
    sources = []
    for t in range(tus):
        picks = [HEADERS[t % len(HEADERS)], HEADERS[(t * 3 + 1) % len(HEADERS)], "core/common.h"]
        includes = "".join(f'#include "{h}"\n' for h in dict.fromkeys(picks))
        idx = [HEADERS.index(h) for h in dict.fromkeys(picks)]
        body = "".join(f"  x = h{i}_op(x);\n" for i in idx)
        name = f"ops/op{t:02d}.cu"
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(includes + tree_kernel(t, body, tu_kernels))
        sources.append(name)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(ortlike LANGUAGES CUDA)\n"
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
        f"add_library(ort_cuda STATIC {' '.join(sources)})\n"
        "target_include_directories(ort_cuda PRIVATE include)\n")


def git(src, *args):
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                    "-c", "init.defaultBranch=main"] + list(args), cwd=src, check=True,
                   stdout=subprocess.DEVNULL)


def bench_tree(nvfresh, nvcc, root, tus, generators, tu_kernels=1):
    src = root / "tree"
    write_tree(src, tus, tu_kernels)
    git(src, "init", "-q")
    git(src, "add", ".")
    git(src, "commit", "-q", "-m", "base")
    git(src, "checkout", "-q", "-b", "feature")
    common = src / "include" / "core" / "common.h"
    # A change of code: a comment alone would be served from the cache (lib/cache/code_text).
    common.write_text(common.read_text() + "#define NVFRESH_BENCH_BRANCH 1\n")
    git(src, "commit", "-q", "-am", "feature")
    git(src, "checkout", "-q", "main")
    headers = [src / "include" / h for h in HEADERS]
    rows = []
    for gen_name in generators:
        generator = {"ninja": "Ninja", "make": "Unix Makefiles"}[gen_name]
        build = root / f"build-{gen_name}"
        subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-G", generator,
                        f"-DCMAKE_PROJECT_INCLUDE={benchlib.REPO}/cmake/nvfresh.cmake",
                        f"-DNVFRESH_EXECUTABLE={nvfresh}", f"-DCMAKE_CUDA_COMPILER={nvcc}"],
                       check=True, stdout=subprocess.DEVNULL)
        build_cmd = ["cmake", "--build", str(build), "-j2"]
        full = timed(build_cmd)
        runs0, skips0 = stats(nvfresh, build)
        touch_all(headers)
        touched = timed(build_cmd)
        runs1, skips1 = stats(nvfresh, build)
        git(src, "checkout", "-q", "feature")
        git(src, "checkout", "-q", "main")
        switched = timed(build_cmd)
        runs2, skips2 = stats(nvfresh, build)
        noop = timed(build_cmd)  # the floor: the build tool, nvfresh sync, no compile re-run
        rows.append((gen_name, full, runs0, touched, runs1 - runs0, skips1 - skips0,
                     switched, runs2 - runs1, skips2 - skips1, noop))
    print(f"\n(b) ONNX-Runtime-like tree: {tus} TUs ({tu_kernels} kernel instantiations each), "
          f"{len(HEADERS)} shared headers, -j2 "
          "(nvcc runs in a rebuild must be 0)")
    print(f"  {'tool':<6} {'full s':>7} {'cpu s':>7} {'nvcc':>5} | {'touch-all s':>11} {'cpu s':>6}"
          f" {'ratio':>7} {'nvcc':>5} {'skips':>5} | {'branch s':>8} {'cpu s':>6} {'ratio':>7}"
          f" {'nvcc':>5} {'skips':>5} | {'no-op s':>7}")
    for gen_name, full, runs0, touched, r1, s1, switched, r2, s2, noop in rows:
        print(f"  {gen_name:<6} {full[0]:>7.1f} {full[1]:>7.1f} {runs0:>5} | {touched[0]:>11.2f}"
              f" {touched[1]:>6.2f} {ratio(full[0], touched[0]):>7} {r1:>5} {s1:>5} |"
              f" {switched[0]:>8.2f} {switched[1]:>6.2f} {ratio(full[0], switched[0]):>7}"
              f" {r2:>5} {s2:>5} | {noop[0]:>7.2f}")



# ---------------------------------------------------------------------------------------------
# (c) the unchanged path: nvfresh's skip next to ccache's direct hit and /bin/true

def run_once(cmd, cwd=None, env=None):
    """(wall s, cpu s) of one run; it must succeed."""
    return timed(cmd, cwd=cwd, env=env)


def callgrind_instructions(cmd, cwd=None, env=None):
    """Instructions one run executes (valgrind --tool=callgrind, children followed); None without
    valgrind."""
    if shutil.which("valgrind") is None:
        return None
    merged = dict(os.environ)
    merged.update(env or {})
    with tempfile.TemporaryDirectory(prefix="nvfresh-callgrind-") as out:
        result = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                                 f"--callgrind-out-file={out}/cg.%p"] + cmd, cwd=cwd, env=merged,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if result.returncode != 0:
            sys.exit(f"skip_speed: under callgrind: {cmd} failed:\n{result.stderr.decode()[-2000:]}")
        return sum(int(n.replace(",", "")) for n in
                   re.findall(r"Collected : ([0-9,]+)", result.stderr.decode()))


def series(cmd, runs, cwd=None, env=None, before_each=None):
    walls, cpus = [], []
    for _ in range(runs):
        if before_each:
            before_each()
        wall, cpu = run_once(cmd, cwd=cwd, env=env)
        walls.append(wall)
        cpus.append(cpu)
    if before_each:
        before_each()
    instructions = callgrind_instructions(cmd, cwd=cwd, env=env)
    return statistics.median(walls), statistics.median(cpus), instructions


def last_event(cwd, field=1):
    """The last event's outcome (field 1), or its cause (field 2)."""
    log = Path(cwd) / ".nvfresh" / "events.log"
    return log.read_text(errors="replace").splitlines()[-1].split("\t")[field]


def ccache_stats(ccache, env):
    out = subprocess.run([ccache, "--print-stats"], env={**os.environ, **env},
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)


def prepare_hot(nvfresh, nvcc, work, ccache):
    """The FMHA tree compiled once through nvfresh and once through ccache (cached)."""
    marker = work / "prepared"
    found = None
    if not marker.exists():
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        (work / ".nvfresh").mkdir()
        found = cutlass_tu(work)
        if found is None:
            sys.exit("skip_speed: scripts/install_cutlass.sh is absent: no FMHA TU")
    args = cutlass_tu_args(work)
    cc_args = [a.replace("fmha.o", "fmha_ccache.o") for a in args]
    cc_env = {"CCACHE_DIR": str(work / "ccache-dir"), "CCACHE_DIRECT": "1",
              "CCACHE_NOHASHDIR": "1", "CCACHE_TEMPDIR": str(work / "ccache-tmp")}
    if not marker.exists():
        time.sleep(1.1)  # a tree made in the compile's second proves nothing about its probes
        print("  compiling the FMHA TU through nvfresh and through ccache (minutes) ...", flush=True)
        timed([nvfresh, nvcc] + args, cwd=work)
        timed([ccache, nvcc] + cc_args, cwd=work, env=cc_env)
        marker.write_text("")
    return args, cc_args, cc_env


def bench_hot(nvfresh, nvcc, root, runs, ccache, work_dir):
    work = Path(work_dir) if work_dir else root / "hot"
    if shutil.which(ccache) is None and not Path(ccache).exists():
        sys.exit(f"skip_speed: {ccache} not found")
    version = subprocess.run([ccache, "--version"], stdout=subprocess.PIPE, text=True).stdout
    args, cc_args, cc_env = prepare_hot(nvfresh, nvcc, work, ccache)
    headers = headers_read(work, "fmha.o.d")
    touch = lambda: touch_all(headers)  # noqa: E731
    # Untouched means untouched: inputs touched before (an earlier run of this script on the same
    # --work) get their stamps back in the record once their ctime is settled (2 s), by one skip.
    time.sleep(2.1)
    run_once([nvfresh, nvcc] + args, cwd=work)
    rows = [("/bin/true", series(["/bin/true"], runs))]
    rows.append(("nvfresh skip, untouched", series([nvfresh, nvcc] + args, runs, cwd=work)))
    assert last_event(work, 2) == "unchanged", last_event(work, 2)
    assert last_event(work) == "skipped", last_event(work)
    rows.append(("nvfresh skip, all touched",
                 series([nvfresh, nvcc] + args, runs, cwd=work, before_each=touch)))
    assert last_event(work) == "skipped", last_event(work)
    hits0 = int(ccache_stats(ccache, cc_env).get("direct_cache_hit", 0))
    rows.append(("ccache direct hit, untouched",
                 series([ccache, nvcc] + cc_args, runs, cwd=work, env=cc_env)))
    rows.append(("ccache direct hit, all touched",
                 series([ccache, nvcc] + cc_args, runs, cwd=work, env=cc_env, before_each=touch)))
    hits = int(ccache_stats(ccache, cc_env).get("direct_cache_hit", 0)) - hits0
    true_wall, true_cpu, true_ir = rows[0][1]
    cc = {"untouched": rows[3][1], "all touched": rows[4][1]}
    print(f"\n(c) the unchanged path: CUTLASS FMHA TU ({len(headers)} headers in the depfile), "
          f"median of {runs} runs each, one run of this script; {version.splitlines()[0]}, "
          f"{hits} direct hits of {2 * runs + 2} ccache runs")
    print(f"  {'case':<31} {'wall ms':>8} {'cpu ms':>7} {'instr M':>8} | {'vs ccache':>9} "
          f"{'cpu':>5} {'instr':>5} | {'vs true':>7} {'cpu':>5}")
    for label, (wall, cpu, ir) in rows:
        line = f"  {label:<31} {wall * 1e3:>8.2f} {cpu * 1e3:>7.2f} {(ir or 0) / 1e6:>8.2f} |"
        if label.startswith("nvfresh"):
            cw, ccpu, cir = cc["untouched" if "untouched" in label else "all touched"]
            line += (f" {wall / cw:>8.2f}x {cpu / ccpu if ccpu else 0:>4.2f}x"
                     f" {(ir or 0) / (cir or 1):>4.2f}x |")
        else:
            line += f" {'':>9} {'':>5} {'':>5} |"
        if label != "/bin/true":
            line += f" {wall / true_wall:>6.1f}x {cpu / true_cpu if true_cpu else 0:>4.1f}x"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvfresh", default=str(benchlib.build_dir() / "bin" / "nvfresh"))
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--tus", type=int, default=50)
    parser.add_argument("--kernels", type=int, default=96, help="instantiations in the one TU")
    parser.add_argument("--cutlass", action="store_true", help="also the CUTLASS FMHA TU")
    parser.add_argument("--generators", default="ninja,make")
    parser.add_argument("--tu-kernels", type=int, default=1,
                        help="template instantiations per tree TU (1: tiny TUs; 24: ~ORT-sized)")
    parser.add_argument("--only", choices=["single", "tree", "hot"], help="run one part only")
    parser.add_argument("--runs", type=int, default=15, help="runs per case in (c)")
    parser.add_argument("--ccache", default=str(benchlib.REPO / ".venv-tools" / "bin" / "ccache")
                        if (benchlib.REPO / ".venv-tools" / "bin" / "ccache").exists() else "ccache")
    parser.add_argument("--work", help="(c): keep the compiled FMHA tree here and reuse it")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args()
    nvfresh = str(Path(args.nvfresh).resolve())
    if not os.path.exists(nvfresh):
        sys.exit(f"skip_speed: {nvfresh} not found (build nvfresh first)")
    with benchlib.scratch("nvfresh-skip-bench-", keep=args.keep) as root:
        if args.only == "hot":
            bench_hot(nvfresh, args.nvcc, root, args.runs, args.ccache, args.work)
            return
        if args.only != "tree":
            bench_single(nvfresh, args.nvcc, root, args.kernels, args.cutlass)
        if args.only != "single":
            bench_tree(nvfresh, args.nvcc, root, args.tus, args.generators.split(","), args.tu_kernels)


if __name__ == "__main__":
    main()
