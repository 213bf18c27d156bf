#!/usr/bin/env python3
"""The remote cache: a remote hit on loopback vs a local hit vs a compile, in one run.

A real BuildGrid (0.4.4, <repo>/.venv-buildgrid; started and stopped by PID as the remote cache's
tests do: tests/integration/buildgrid_server.py) on 127.0.0.1. Two "machines" are two local cache
dirs; both build the same checkout at the same path.

(a) the CUTLASS FMHA TU (`nvfresh nvcc`, sm_80, as bench/skip_speed.py compiles it):
      plain      `nvcc` alone
      compile    machine A, an empty cache: the compile, stored locally and uploaded
      local hit  machine A again with no record (the tree's .nvfresh gone): served from its cache
      remote hit, the machine's first
                 machine B, an empty cache dir and no record: served from the server (and
                 stored in B's cache); B computes the SHA-256 of nvcc's tools (the input root)
      remote hit machine B again after `nvfresh cache clear` (no entry; the SHA-256 cache of the
                 toolkit's files kept, as on any machine after its first remote lookup)
(b) a tree of --tus TUs (bench/skip_speed.py's ONNX-Runtime-like tree), CMake + Ninja -j2, through
    nvfresh's CMake module; each side in a fresh build dir at the same path:
      compile    machine A, an empty cache: every TU compiled and uploaded
      local hit  machine A again
      remote hit machine B, an empty cache dir (the machine's first), then after `cache clear`
(c) steps: bench/step_cache.py's CUB TU for sm_80 + sm_90 (`nvfresh nvcc`):
      compile    machine A, an empty cache: object and cicc/ptxas steps stored and uploaded
      host-only edit, local steps   machine A after a host-only edit: every step from its cache
      host-only edit, remote steps  machine B (an empty cache dir, a fresh build dir) after
                 another host-only edit: the object misses locally and remotely, every step from
                 the remote
(d) what the remote costs a cold build: the tree of (b), each build with device code of its own (so
    nothing on the server or in any cache serves it), an empty cache dir and a fresh build dir:
      remote off  no NVFRESH_REMOTE: every TU compiled and stored locally
      remote on   every TU asked of the server (a miss, its steps too), compiled, stored and
                  uploaded (in the background: the build returns before its last uploads are
                  sent; a third row says when they were); the two sides alternate which goes
                  first. Issue 41's goal: <= 1.05x

Prints medians of wall and CPU time (user + sys of the launcher and its children) and the ratios,
with the remote's hits and uploads from `nvfresh cache stats --json`. Asserts that the hits were
hits (0 nvcc runs), nothing else.

usage: bench/remote_cache.py [--runs 3] [--tus 50] [--only fmha|tree|steps|cold] [--keep]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import benchlib
import skip_speed  # the FMHA TU and the tree
import step_cache  # its CUB TU

sys.path.insert(0, str(benchlib.REPO / "tests" / "integration"))
import buildgrid_server  # noqa: E402  (the tests' server helper, stdlib only)


FIRST_REMOTE_HIT = "remote hit, the machine's first"


def clear_entries(nvfresh, env):
    """`nvfresh cache clear`: every entry gone, the SHA-256 cache of the toolkit's files kept."""
    subprocess.run([nvfresh, "cache", "clear"], env=dict(os.environ, **env), check=True,
                   stdout=subprocess.DEVNULL)


def stats(nvfresh, env):
    merged = dict(os.environ, **env)
    out = subprocess.run([nvfresh, "cache", "stats", "--json"], env=merged, check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def medians(values):
    return statistics.median(w for w, _ in values), statistics.median(c for _, c in values)


def print_rows(rows, base):
    base_wall, base_cpu = medians(rows[base])
    print(f"  {'':<34} {'wall s':>9} {'cpu s':>9}   ratio to {base}: wall, cpu")
    for name, values in rows.items():
        wall, cpu = medians(values)
        print(f"  {name:<34} {wall:>9.3f} {cpu:>9.3f}   {wall / base_wall:.4f}x, {cpu / base_cpu:.4f}x")


def served_events(build, since):
    """(served, nvcc runs, lines) in a build tree's events.log after line `since`."""
    log = build / ".nvfresh" / "events.log"
    lines = log.read_text().splitlines() if log.exists() else []
    kinds = [line.split("\t")[1] for line in lines[since:] if len(line.split("\t")) == 6]
    return kinds.count("served"), sum(k in skip_speed.NVCC_RUN_EVENTS for k in kinds), len(lines)


def require_served(bench_case, build, since, count):
    served, runs, _ = served_events(build, since)
    if served != count or runs != 0:
        sys.exit(f"remote_cache: {bench_case}: {served} served and {runs} nvcc runs, "
                 f"expected {count} served and none")


def bench_fmha(nvfresh, nvcc, root, url, runs):
    work = root / "fmha-tree"
    work.mkdir()
    found = skip_speed.cutlass_tu(work)
    if found is None:
        print("remote_cache: scripts/install_cutlass.sh is missing: the FMHA TU is skipped")
        return
    args = found[0]
    nvcc_cmd, nvfresh_cmd = [nvcc] + args, [nvfresh, nvcc] + args
    records, obj = work / ".nvfresh", work / "fmha.o"
    machine_a = {"NVFRESH_CACHE_DIR": str(root / "fmha-cache-a"), "NVFRESH_REMOTE": url}
    rows = {"plain nvcc": [], "compile (stored, uploaded)": [], "local hit": [], FIRST_REMOTE_HIT: [],
            "remote hit": []}
    rows["plain nvcc"].append(benchlib.timed(nvcc_cmd, cwd=work, bench="remote_cache"))
    obj.unlink()
    records.mkdir()
    rows["compile (stored, uploaded)"].append(
        benchlib.timed(nvfresh_cmd, cwd=work, env=machine_a, bench="remote_cache"))
    uploads = stats(nvfresh, machine_a)["remote_uploads"]
    for run in range(runs):  # alternating, so that the machine's load falls on both alike
        machine_b = {"NVFRESH_CACHE_DIR": str(root / f"fmha-cache-b{run}"), "NVFRESH_REMOTE": url}
        for name, env in (("local hit", machine_a), (FIRST_REMOTE_HIT, machine_b),
                          ("remote hit", machine_b)):
            if name == "remote hit":
                clear_entries(nvfresh, machine_b)
            obj.unlink()
            shutil.rmtree(records)
            records.mkdir()
            rows[name].append(benchlib.timed(nvfresh_cmd, cwd=work, env=env, bench="remote_cache"))
            require_served(f"FMHA {name}", work, 0, 1)
    remote_hits = sum(stats(nvfresh, {"NVFRESH_CACHE_DIR": str(root / f"fmha-cache-b{run}")})
                      ["remote_hits"] for run in range(runs))
    print(f"\n(a) the CUTLASS FMHA TU, sm_80: 1 compile, {runs} hits of each kind (medians)")
    print_rows(rows, "compile (stored, uploaded)")
    local, remote = medians(rows["local hit"]), medians(rows["remote hit"])
    print(f"  remote hit / local hit: wall {remote[0] / local[0]:.2f}x, cpu {remote[1] / local[1]:.2f}x;"
          f" uploads by A {uploads}, remote hits by B {remote_hits}, "
          f"object {obj.stat().st_size / 1e6:.1f} MB")


def configure(nvfresh, nvcc, src, build, env):
    benchlib.fresh_dir(build)
    subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
                    f"-DCMAKE_CUDA_COMPILER={nvcc}",
                    f"-DCMAKE_PROJECT_INCLUDE={benchlib.REPO}/cmake/nvfresh.cmake",
                    f"-DNVFRESH_EXECUTABLE={nvfresh}"],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))


def bench_tree(nvfresh, nvcc, root, url, tus, runs):
    src = root / "tree"
    skip_speed.write_tree(src, tus)
    build = root / "tree-build"  # one path for every machine
    machine_a = {"NVFRESH_CACHE_DIR": str(root / "tree-cache-a"), "NVFRESH_REMOTE": url}
    build_cmd = ["cmake", "--build", str(build), "-j2"]
    rows = {"compile (stored, uploaded)": [], "local hit": [], FIRST_REMOTE_HIT: [], "remote hit": []}
    configure(nvfresh, nvcc, src, build, machine_a)
    rows["compile (stored, uploaded)"].append(benchlib.timed(build_cmd, env=machine_a, bench="remote_cache"))
    _, compiled, _ = served_events(build, 0)
    uploads = stats(nvfresh, machine_a)["remote_uploads"]
    remote_hits = 0
    for run in range(runs):
        machine_b = {"NVFRESH_CACHE_DIR": str(root / f"tree-cache-b{run}"), "NVFRESH_REMOTE": url}
        for name, env in (("local hit", machine_a), (FIRST_REMOTE_HIT, machine_b),
                          ("remote hit", machine_b)):
            if name == "remote hit":
                clear_entries(nvfresh, machine_b)
            configure(nvfresh, nvcc, src, build, env)
            rows[name].append(benchlib.timed(build_cmd, env=env, bench="remote_cache"))
            require_served(f"tree {name}", build, 0, tus)
        remote_hits += stats(nvfresh, {"NVFRESH_CACHE_DIR": str(root / f"tree-cache-b{run}")})["remote_hits"]
    print(f"\n(b) a {tus}-TU tree, sm_80, Ninja -j2, whole `cmake --build` in a fresh build dir: "
          f"1 compile ({compiled} nvcc runs), {runs} of each hit (medians)")
    print_rows(rows, "compile (stored, uploaded)")
    local, remote = medians(rows["local hit"]), medians(rows["remote hit"])
    print(f"  remote hit / local hit: wall {remote[0] / local[0]:.2f}x, cpu {remote[1] / local[1]:.2f}x;"
          f" uploads by A {uploads}, remote hits by B {remote_hits} ({runs} runs)")


def bench_steps(nvfresh, nvcc, root, url, runs):
    """bench/step_cache.py's CUB TU for sm_80 + sm_90: machine A compiles it (object and steps
    uploaded); after a host-only edit, A serves every step from its own cache, and machine B (an
    empty cache dir, a fresh build dir) from the remote's."""
    work = root / "steps"
    work.mkdir()
    src = work / "k.cu"
    archs = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
    compile_cmd = [nvcc, *archs, "-I", str(work), "-c", str(src), "-o", "k.o"]
    rows = {"plain nvcc": [], "compile (stored, uploaded)": [], "host-only edit, local steps": [],
            "host-only edit, remote steps": []}
    served_remotely = 0
    for run in range(runs):
        machine_a = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / f"steps-cache-a{run}")),
                     "NVFRESH_REMOTE": url}
        machine_b = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / f"steps-cache-b{run}")),
                     "NVFRESH_REMOTE": url}
        # Device code of its own per run: no step of an earlier run's upload serves this one.
        src.write_text(step_cache.SOURCE + f"__device__ int bench_run = {run};\n")
        (work / "values.h").write_text(step_cache.values_h(1, f"a{run}"))
        build = benchlib.fresh_dir(work / "build")
        (build / "build.ninja").write_text("")  # a build tree: records go to build/.nvfresh
        rows["plain nvcc"].append(benchlib.timed(compile_cmd, cwd=build, bench="remote_cache"))
        rows["compile (stored, uploaded)"].append(
            benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=machine_a, bench="remote_cache"))
        (work / "values.h").write_text(step_cache.values_h(1, f"b{run}"))
        rows["host-only edit, local steps"].append(
            benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=machine_a, bench="remote_cache"))
        # Machine B, its checkout at the same path, another host-only edit (an object no one has).
        (work / "values.h").write_text(step_cache.values_h(1, f"c{run}"))
        build = benchlib.fresh_dir(work / "build")
        (build / "build.ninja").write_text("")
        rows["host-only edit, remote steps"].append(
            benchlib.timed([nvfresh, *compile_cmd], cwd=build, env=machine_b, bench="remote_cache"))
        b = stats(nvfresh, machine_b)
        if (b["step_hits"], b["remote_step_hits"]) != (4, 4):
            sys.exit(f"remote_cache: machine B served {b['step_hits']} steps, "
                     f"{b['remote_step_hits']} from the remote; expected 4 and 4")
        served_remotely += b["remote_step_hits"]
    print(f"\n(c) steps: a CUB TU for sm_80 + sm_90 (bench/step_cache.py's), {runs} runs (medians)")
    print_rows(rows, "compile (stored, uploaded)")
    print(f"  every cicc and ptxas step of B served from the remote: {served_remotely} of {4 * runs}")


COLD_OFF, COLD_ON = "remote off", "remote on (misses, uploads)"
COLD_SENT = "remote on, until its last upload is sent"


def wait_for_uploads(env):
    """Seconds until the build's background uploads are sent (their job dirs gone)."""
    started = time.monotonic()
    uploads = os.path.join(env["NVFRESH_CACHE_DIR"], "uploads")
    while os.path.isdir(uploads) and any(n.startswith("job-") for n in os.listdir(uploads)):
        time.sleep(0.02)
    return time.monotonic() - started


def busy_seconds(cores):
    """CPU seconds the kernel counts busy on `cores` since boot (/proc/stat: all but idle, iowait)."""
    ticks = os.sysconf("SC_CLK_TCK")
    busy = 0
    with open("/proc/stat") as stat:
        for line in stat:
            fields = line.split()
            if fields[0].startswith("cpu") and fields[0][3:].isdigit() and int(fields[0][3:]) in cores:
                values = [int(v) for v in fields[1:]]
                busy += sum(values) - values[3] - values[4]
    return busy / ticks


def bench_cold(nvfresh, nvcc, root, url, tus, runs, server_core=None):
    src, build = root / "cold-tree", root / "cold-build"  # one path for every build
    build_cmd = ["cmake", "--build", str(build), "-j2"]
    rows = {COLD_OFF: [], COLD_ON: [], COLD_SENT: []}
    uploads = 0
    # With the server on a core of its own: every CPU second of the other cores from the build's
    # start to its last upload sent (the build, the detached uploads, anything else there)
    client_cores = os.sched_getaffinity(0)
    client_cpu = {COLD_OFF: [], COLD_ON: []}
    for run in range(runs):
        sides = (COLD_OFF, COLD_ON) if run % 2 == 0 else (COLD_ON, COLD_OFF)
        for side in sides:
            shutil.rmtree(src, ignore_errors=True)
            skip_speed.write_tree(src, tus)
            tag = f"{os.getpid()}_{run}_{int(side == COLD_ON)}"
            for source in (src / "ops").glob("*.cu"):
                source.write_text(source.read_text() + f"__device__ int bench_cold_{tag} = {run};\n")
            env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cold-cache"))}
            if side == COLD_ON:
                env["NVFRESH_REMOTE"] = url
            configure(nvfresh, nvcc, src, build, env)
            busy_before = busy_seconds(client_cores)
            rows[side].append(benchlib.timed(build_cmd, env=env, bench="remote_cache"))
            served, compiled, _ = served_events(build, 0)
            if (served, compiled) != (0, tus):
                sys.exit(f"remote_cache: cold build, {side}: {served} served and {compiled} nvcc "
                         f"runs, expected 0 and {tus}")
            if side == COLD_ON:
                # The uploads run on, detached, after the build returns: their wait is a row of
                # its own (their CPU is counted in neither row: no child of the build waits for
                # them)
                wall, cpu = rows[side][-1]
                rows[COLD_SENT].append((wall + wait_for_uploads(env), cpu))
            client_cpu[side].append(busy_seconds(client_cores) - busy_before)
            if side == COLD_ON:
                s = stats(nvfresh, env)
                if (s["remote_uploads"], s["remote_errors"]) != (tus, 0):
                    sys.exit(f"remote_cache: cold build with the remote: {s['remote_uploads']} "
                             f"uploads and {s['remote_errors']} errors, expected {tus} and 0")
                uploads += s["remote_uploads"]
    where = ("" if server_core is None else
             f"; BuildGrid alone on core {server_core}, the build and its uploads on cores "
             f"{sorted(os.sched_getaffinity(0))}, as with a server on another machine")
    print(f"\n(d) a cold build of a {tus}-TU tree, sm_80, Ninja -j2, remote on against off: "
          f"{runs} builds each, alternating (medians; issue 41's goal: on <= 1.05x off){where}")
    print_rows(rows, COLD_OFF)
    print(f"  uploads with the remote on: {uploads} ({runs} builds)")
    if server_core is not None:
        off, on = statistics.median(client_cpu[COLD_OFF]), statistics.median(client_cpu[COLD_ON])
        print(f"  CPU of cores {sorted(client_cores)} from the build's start to its last upload "
              f"sent (build, uploads, the rest of the machine): off {off:.3f} s, on {on:.3f} s, "
              f"{on / off:.4f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tus", type=int, default=50)
    parser.add_argument("--only", choices=("fmha", "tree", "steps", "cold"))
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--server-core", type=int,
                        help="run BuildGrid alone on this core and everything else on the others "
                             "(a server on another machine, on a machine of few cores)")
    args = parser.parse_args()
    all_cores = os.sched_getaffinity(0)
    if args.server_core is not None and (args.server_core not in all_cores or len(all_cores) < 2):
        raise SystemExit(f"remote_cache: --server-core {args.server_core}: this process may run "
                         f"on cores {sorted(all_cores)}; it needs that one and another")
    nvfresh = benchlib.nvfresh_bin("remote_cache")
    if not buildgrid_server.BGD.exists():
        raise SystemExit(f"remote_cache: no BuildGrid at {buildgrid_server.BGD}: run "
                         "scripts/install_test_tools.sh")
    with benchlib.scratch("nvfresh-bench-remote-", args.keep) as root:
        if args.server_core is not None:  # the server inherits this affinity; the builds do not
            os.sched_setaffinity(0, {args.server_core})
        server = buildgrid_server.BuildGridServer(root)
        if args.server_core is not None:
            os.sched_setaffinity(0, all_cores - {args.server_core})
        try:
            print(f"remote_cache: {benchlib.nvcc_version_line(args.nvcc)}, BuildGrid on {server.url}")
            if args.only in (None, "fmha"):
                bench_fmha(nvfresh, args.nvcc, root, server.url, args.runs)
            if args.only in (None, "tree"):
                bench_tree(nvfresh, args.nvcc, root, server.url, args.tus, args.runs)
            if args.only in (None, "steps"):
                bench_steps(nvfresh, args.nvcc, root, server.url, args.runs)
            if args.only in (None, "cold"):
                bench_cold(nvfresh, args.nvcc, root, server.url, args.tus, args.runs,
                           args.server_core)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
