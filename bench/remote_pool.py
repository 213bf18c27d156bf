#!/usr/bin/env python3
"""What a pool buys: a 2-core client with its cicc and ptxas steps on a 16-job buildbox-casd.

Made for the 16-core GPU machine (bench/run_remote_exec_on_gpu.sh runs it there): the build (Ninja
and everything under it) is pinned to the first --client-cores cores, buildbox-casd with
buildbox-run (bubblewrap) to the others with --jobs as given, on 127.0.0.1 (casd_server.py, as the
tests start it). Per project, three builds, each in a fresh build dir, cache dir and casd:
  local  -j2    `nvfresh nvcc`, every step run on the client's cores
  remote -j2    the same with NVFRESH_REMOTE_EXEC: cicc and ptxas on casd, the rest on the client
  remote -j16   the same with Ninja -j16: more compiles at once than client cores, since their
                longest steps wait on the pool
Projects: fmha (CUTLASS's FMHA TU, sm_80 + sm_90, bench/step_cache.py's compile), ggml (--ggml-tus of
ggml's CUDA backend with its own flags, bench/differential.py's, for --archs), tiny (--tiny-tus small
kernels, to check the set-up in seconds). Prints per build the wall time, the client's CPU (the
build's processes), the pool's CPU (casd and everything it starts, the tools in bubblewrap's
sandbox included: PoolCpu, whose method is printed first), the steps run remotely and locally, the
bytes the client sent and fetched (the debug log's "ran remotely ..." lines), and for remote builds
the client CPU they saved, which the pool's CPU should exceed.

usage: bench/remote_pool.py [--projects fmha,ggml] [--jobs 16] [--client-cores 2]
                            [--ggml-tus softmax,norm,...] [--archs 80,90] [--keep]
A check of the set-up and of the pool's CPU on any machine, in about 10 s:
       bench/remote_pool.py --projects tiny --tiny-tus 1 --archs 80 --client-cores 0 --jobs 2
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import benchlib
import differential
import skip_speed
import step_cache

sys.path.insert(0, str(benchlib.REPO / "tests" / "integration"))
import casd_server  # noqa: E402  (the tests' server helper, stdlib only)

REMOTE_RE = re.compile(r"step \S+ (cicc|ptxas) ran remotely in (\d+) ms: (\d+) bytes sent, (\d+) fetched")
RUNS_RE = re.compile(r"step \S+ (cicc|ptxas) runs: ")
FALLBACK_RE = re.compile(r"remote execution: .*\(running it locally\)")
GGML_TUS = "softmax,norm,getrows,rope,binbcast,concat,unary,cpy"
TINY_SOURCE = """\
__global__ void scale{n}(float* x, float a) {{ x[threadIdx.x] = a * x[threadIdx.x] + {n}; }}
void launch{n}(float* x) {{ scale{n}<<<1, 32>>>(x, 2.0f); }}
"""
BUILDS = (("local -j2", 2, False), ("remote -j2", 2, True), ("remote -j16", 16, True))


def ninja_file(edges):
    """A build.ninja with one compile edge per (object, argv)."""
    lines = ["rule cc", "  command = $cmd", "  description = $out", ""]
    for obj, argv in edges:
        lines += [f"build {obj}: cc", f"  cmd = {shlex.join(argv).replace('$', '$$')}", ""]
    return "\n".join(lines)


def fmha_edges(nvfresh, nvcc, root, archs):
    tree = root / "fmha-tree"
    tree.mkdir()
    if skip_speed.cutlass_tu(tree) is None:
        raise SystemExit("remote_pool: scripts/install_cutlass.sh is absent: no FMHA TU")
    (tree / "edit.h").write_text(step_cache.FMHA_EDIT.format(host="a", sm90=1, blank=""))
    command = step_cache.fmha_compile(nvcc, tree, archs)
    return [("fmha.o", [nvfresh, *command])]


def ggml_edges(nvfresh, nvcc, root, archs, tus):
    ggml = differential.installed_sources()["ggml"]
    edges = []
    for stem in tus:
        project = differential.ggml_project(stem, archs, ggml)
        flags = [f.replace("{src}", str(ggml)) for f in project.flags]
        edges.append((f"{stem}.o", [nvfresh, nvcc, *flags, *differential.arch_flags(archs), "-c",
                                    str(ggml / project.tu), "-o", f"{stem}.o"]))
    return edges


def tiny_edges(nvfresh, nvcc, root, archs, count):
    edges = []
    for n in range(count):
        source = root / f"tiny{n}.cu"
        source.write_text(TINY_SOURCE.format(n=n))
        edges.append((f"tiny{n}.o", [nvfresh, nvcc, *differential.arch_flags(archs), "-c",
                                     str(source), "-o", f"tiny{n}.o"]))
    return edges


# (the hierarchy's root, a file only that kind of root has, the kind): a v2-only machine, then
# v1's cpuacct, then the v2 hierarchy a hybrid machine mounts beside v1.
CGROUP_ROOTS = (("/sys/fs/cgroup", "cgroup.controllers", "cgroup v2"),
                ("/sys/fs/cgroup/cpuacct", "cpuacct.usage", "cgroup v1 cpuacct"),
                ("/sys/fs/cgroup/unified", "cgroup.controllers", "cgroup v2"))


def busy_seconds(cores=None):
    """CPU seconds spent busy (not idle or waiting on I/O) on `cores` (all of them: None), from
    /proc/stat."""
    busy = 0
    for line in open("/proc/stat"):
        name, *values = line.split()
        if (name == "cpu") if cores is None else (name[3:].isdigit() and int(name[3:]) in cores):
            user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in values[:8])
            busy += user + nice + system + irq + softirq + steal
    return busy / os.sysconf("SC_CLK_TCK")


class PoolCpu:
    """The CPU of a casd and of everything it starts: buildbox-run, bubblewrap and the cicc and
    ptxas inside its sandbox, which casd never waits for itself (its own rusage misses them).

    casd is moved into a cgroup of its own right after it started, before any action: the
    processes it forks are born in it, and the cgroup's counter (cgroup v2 cpu.stat usage_usec,
    or v1 cpuacct.usage) sums them all, whoever reaps them. Where no cgroup can be made (a
    container with /sys/fs/cgroup read-only): the busy time of /proc/stat over the build, of the
    pool's cores where casd is pinned to its own, else of the whole machine less the build's own
    CPU; that counts any other process on those cores too. `method` says which."""

    def __init__(self, pid, name, pool_cores):
        self.path, self.pool_cores = None, pool_cores
        for root, marker, kind in CGROUP_ROOTS:
            if not os.path.exists(os.path.join(root, marker)):
                continue
            path = os.path.join(root, f"nvfresh-bench-{name}-{os.getpid()}")
            try:
                os.mkdir(path)
                with open(os.path.join(path, "cgroup.procs"), "w") as procs:
                    procs.write(str(pid))
            except OSError:
                if os.path.isdir(path):
                    os.rmdir(path)
                continue
            self.path, self.kind = path, kind
            self.method = f"{kind} counter of casd's process tree (one cgroup per casd)"
            return
        self.method = ("/proc/stat busy time of casd's cores" if pool_cores else
                       "/proc/stat busy time of the machine less the build's own CPU") + \
            " (no cgroup could be made: counts other processes too)"

    def seconds(self):
        """The counter now (cgroup) or the busy time now (/proc/stat)."""
        if self.path is None:
            return busy_seconds(self.pool_cores)
        if self.kind == "cgroup v2":
            for line in open(os.path.join(self.path, "cpu.stat")):
                key, value = line.split()
                if key == "usage_usec":
                    return int(value) / 1e6
            raise SystemExit(f"remote_pool: no usage_usec in {self.path}/cpu.stat")
        return int(open(os.path.join(self.path, "cpuacct.usage")).read()) / 1e9

    def during(self, before, client_cpu):
        """The pool's CPU since `before` (seconds()), the build's `client_cpu` taken out where the
        busy time of the whole machine stands in."""
        spent = self.seconds() - before
        return spent - client_cpu if self.path is None and not self.pool_cores else spent

    def close(self):
        """Removes the cgroup once casd's processes have left it (casd stopped; its sandboxes'
        processes end with it), or says where it stays."""
        for _ in range(50):
            if not self.path:
                return
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)
        print(f"  remote_pool: {self.path} still holds processes; remove it with rmdir later")


def core_split(client_cores):
    """(client cores, pool cores), or (None, None) where this machine has too few to split."""
    cores = sorted(os.sched_getaffinity(0))
    if client_cores <= 0 or len(cores) <= client_cores:
        return None, None
    return set(cores[:client_cores]), set(cores[client_cores:])


def start_casd(work, name, jobs, pool_cores, binds):
    """casd on loopback, it and the workers it starts pinned to pool_cores (inherited at fork)."""
    mine = os.sched_getaffinity(0)
    if pool_cores:
        os.sched_setaffinity(0, pool_cores)
    try:
        return casd_server.CasdServer(work, name=name, jobs=jobs, binds=binds)
    finally:
        os.sched_setaffinity(0, mine)


def toolkit_binds(nvcc):
    """The toolkit's root bound at its own path where /usr (bound by casd_server) lacks it."""
    root = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(nvcc)), ".."))
    return [] if root.startswith("/usr/") else [(root, root)]


def one_build(edges, root, name, jobs, server, meter, client_cores, ninja):
    build = benchlib.fresh_dir(root / "build")
    (build / "build.ninja").write_text(ninja_file(edges))
    log = root / f"{name.replace(' ', '')}.log"
    env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cache")), "NVFRESH_LOG_FILE": str(log),
           "NVFRESH_REMOTE_EXEC": server.url if server else ""}
    mine = os.sched_getaffinity(0)
    if client_cores:
        os.sched_setaffinity(0, client_cores)
    pool_before = meter.seconds() if meter else 0.0
    try:
        wall, cpu = benchlib.timed([ninja, "-j", str(jobs)], cwd=build, env=env, bench="remote_pool")
    finally:
        os.sched_setaffinity(0, mine)
    pool = meter.during(pool_before, cpu) if meter else 0.0
    text = log.read_text(errors="replace") if log.exists() else ""
    remote = REMOTE_RE.findall(text)
    fallback = FALLBACK_RE.search(text)
    if server and (fallback or not remote):
        reason = fallback.group(0) if fallback else "none logged"
        print(f"  {name}: steps ran locally, first reason: {reason} (the debug log: {log}, --keep)")
        for line in server.log_text().splitlines()[-8:]:
            print(f"    casd: {line}")
    return {"wall": wall, "cpu": cpu, "pool": pool, "remote": len(remote),
            "ran": len(RUNS_RE.findall(text)), "fallbacks": len(FALLBACK_RE.findall(text)),
            "sent": sum(int(s) for _, _, s, _ in remote), "fetched": sum(int(f) for _, _, _, f in remote),
            "cicc_sent": [int(s) for tool, _, s, _ in remote if tool == "cicc"],
            "ptxas_sent": [int(s) for tool, _, s, _ in remote if tool == "ptxas"]}


def mb(n):
    return f"{n / 1e6:.1f} MB"


def print_header(title):
    print(f"\n{title}")
    print(f"  {'build':<12} {'wall':>8} {'client CPU':>11} {'pool CPU':>9} {'steps ran':>9} "
          f"{'remote':>6} {'fell back':>9} {'sent':>9} {'fetched':>9}")


def print_row(name, r, base):
    """One build's line, as soon as it is done (a run cut short keeps the rows it finished)."""
    print(f"  {name:<12} {r['wall']:7.1f}s {r['cpu']:10.1f}s {r['pool']:8.1f}s {r['ran']:9d} "
          f"{r['remote']:6d} {r['fallbacks']:9d} {mb(r['sent']):>9} {mb(r['fetched']):>9}"
          f"   {r['wall'] / base['wall']:.2f}x wall, {r['cpu'] / base['cpu']:.2f}x client CPU")
    if r["remote"]:
        print(f"  {'':<12} client CPU saved against local -j2: {base['cpu'] - r['cpu']:.1f}s (the "
              f"steps' CPU less the cost of shipping them: the pool's CPU should exceed it)")
    if r["cicc_sent"]:
        print(f"  {'':<12} per cicc step sent {mb(min(r['cicc_sent']))}-{mb(max(r['cicc_sent']))}, "
              f"per ptxas step {min(r['ptxas_sent'] or [0])}-{max(r['ptxas_sent'] or [0])} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="fmha,ggml", help="fmha, ggml, tiny (comma-separated)")
    parser.add_argument("--jobs", type=int, default=16, help="casd's concurrent actions")
    parser.add_argument("--client-cores", type=int, default=2,
                        help="cores the build is pinned to (casd gets the rest); 0: no pinning")
    parser.add_argument("--ggml-tus", default=GGML_TUS)
    parser.add_argument("--tiny-tus", type=int, default=2)
    parser.add_argument("--archs", default="80,90")
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--ninja", default=shutil.which("ninja") or "ninja")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = benchlib.nvfresh_bin("remote_pool")
    why = casd_server.missing()
    if why:
        raise SystemExit(f"remote_pool: {why}")
    archs = args.archs.split(",")
    client_cores, pool_cores = core_split(args.client_cores)
    where = (f"build pinned to cores {sorted(client_cores)}, casd to {len(pool_cores)} others"
             if client_cores else f"no pinning ({os.cpu_count()} cores)")
    print(f"remote_pool: {benchlib.nvcc_version_line(args.nvcc)}; casd --jobs {args.jobs}; {where}; "
          f"archs {','.join(archs)}")
    started = time.perf_counter()
    methods = []
    with benchlib.scratch("nvfresh-bench-pool-", args.keep) as root:
        for project in args.projects.split(","):
            work = root / project
            work.mkdir()
            if project == "fmha":
                edges, title = fmha_edges(nvfresh, args.nvcc, work, archs), "CUTLASS FMHA TU"
            elif project == "ggml":
                tus = args.ggml_tus.split(",")
                edges, title = ggml_edges(nvfresh, args.nvcc, work, archs, tus), f"ggml, {len(tus)} TUs"
            elif project == "tiny":
                edges, title = tiny_edges(nvfresh, args.nvcc, work, archs, args.tiny_tus), \
                    f"tiny, {args.tiny_tus} TUs"
            else:
                raise SystemExit(f"remote_pool: no project {project}: fmha, ggml or tiny")
            print_header(f"{title} (sm_{', sm_'.join(archs)})")
            base = None
            for name, jobs, remote in BUILDS:
                server = start_casd(work, f"casd-{jobs}", args.jobs, pool_cores,
                                    toolkit_binds(args.nvcc)) if remote else None
                meter = PoolCpu(server.process.process.pid, f"{project}-{jobs}", pool_cores) \
                    if server else None
                if meter and meter.method not in methods:
                    methods.append(meter.method)
                    print(f"  pool CPU: {meter.method}")
                try:
                    result = one_build(edges, work, name, jobs, server, meter, client_cores,
                                       args.ninja)
                finally:
                    if server:
                        server.stop()
                    if meter:
                        meter.close()
                base = base or result
                print_row(name, result, base)
    print(f"\nremote_pool: {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
