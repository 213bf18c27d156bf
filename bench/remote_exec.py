#!/usr/bin/env python3
"""Remote execution on loopback: a TU's cicc and ptxas steps run locally vs through buildbox-casd.

A real buildbox-casd with buildbox-run (bubblewrap) on 127.0.0.1 (<repo>/.venv-buildbox, started
and stopped by PID as the tests do: tests/integration/casd_server.py), --jobs as given. The TU:
bench/step_cache.py's CUB TU for sm_80 + sm_90 (`nvfresh nvcc`), or with --cutlass the CUTLASS
FMHA TU (bench/skip_speed.py) for sm_80 + sm_90. Each run compiles in a fresh cache dir (every step
a miss) and a fresh build dir:
  plain    `nvcc` alone
  local    `nvfresh nvcc`: the steps run here and are stored
  remote   `nvfresh nvcc` with NVFRESH_REMOTE_EXEC: the steps run on casd's worker and are stored;
           the first remote run uploads the inputs, later ones find most blobs there
Each run's local and remote objects must equal the plain one (`nvfresh compare`: the bytes, nvcc's
tmpxft stem aside), or the script stops with the comparison's report. Prints medians of wall time and of the CPU time of this machine's processes (casd and its worker
excluded: they are the "remote"), and per remote step (the debug log's "ran remotely in N ms: B
bytes sent, F fetched"): the time from asking to having the outputs, and the bytes sent and fetched.
On one machine the worker shares the cores: this measures the overhead of shipping a step, not
what a pool buys.

usage: bench/remote_exec.py [--runs 3] [--jobs 4] [--cutlass] [--keep]
"""
import argparse
import re
import statistics
import subprocess
import sys

import benchlib
import skip_speed
import step_cache

sys.path.insert(0, str(benchlib.REPO / "tests" / "integration"))
import casd_server  # noqa: E402  (the tests' server helper, stdlib only)

REMOTE_RE = re.compile(r"step (\S+) (cicc|ptxas) ran remotely in (\d+) ms: (\d+) bytes sent, "
                       r"(\d+) fetched")
ARCHS = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]


def compile_command(nvcc, root, cutlass):
    if cutlass:
        return step_cache.fmha_compile(nvcc, root, ["80", "90"])
    return [nvcc, *ARCHS, "-I", str(root), "-c", str(root / "k.cu"), "-o", "k.o"]


def object_name(cutlass):
    return "fmha.o" if cutlass else "k.o"


def check_equal(nvfresh, plain, built, name):
    """Stops the bench when `built` (nvfresh's object, `name` run) is not the plain nvcc's."""
    compared = subprocess.run([nvfresh, "compare", str(built), str(plain)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False)
    if compared.returncode != 0:
        raise SystemExit(f"remote_exec: the {name} object differs from plain nvcc's:\n"
                         + compared.stdout.decode(errors="replace"))


def prepare(root, cutlass):
    if cutlass:
        if skip_speed.cutlass_tu(root) is None:
            raise SystemExit("remote_exec: scripts/install_cutlass.sh is absent: no FMHA TU")
        (root / "edit.h").write_text(step_cache.FMHA_EDIT.format(host="a", sm90=1, blank=""))
    else:
        (root / "k.cu").write_text(step_cache.SOURCE)
        (root / "values.h").write_text(step_cache.values_h(1, "a"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=4, help="casd's concurrent actions")
    parser.add_argument("--cutlass", action="store_true", help="the CUTLASS FMHA TU")
    parser.add_argument("--nvcc", default=benchlib.default_nvcc())
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nvfresh = benchlib.nvfresh_bin("remote_exec")
    why = casd_server.missing()
    if why:
        raise SystemExit(f"remote_exec: {why}")
    print(f"remote_exec: {benchlib.nvcc_version_line(args.nvcc)}; casd --jobs {args.jobs}")
    with benchlib.scratch("nvfresh-bench-exec-", args.keep) as root:
        prepare(root, args.cutlass)
        server = casd_server.CasdServer(root, jobs=args.jobs)
        try:
            times = {name: [] for name in ("plain", "local", "remote")}
            steps = []
            command = compile_command(args.nvcc, root, args.cutlass)
            for run in range(args.runs):
                for name in times:
                    build = benchlib.fresh_dir(root / "build")
                    (build / "build.ninja").write_text("")  # a build tree: its record root
                    log = root / f"{name}-{run}.log"
                    env = {"NVFRESH_CACHE_DIR": str(benchlib.fresh_dir(root / "cache")),
                           "NVFRESH_LOG_FILE": str(log), "NVFRESH_REMOTE_EXEC": ""}
                    if name == "remote":
                        env["NVFRESH_REMOTE_EXEC"] = server.url
                    cmd = command if name == "plain" else [nvfresh, *command]
                    times[name].append(benchlib.timed(cmd, cwd=build, env=env, bench="remote_exec"))
                    built = build / object_name(args.cutlass)
                    if name == "plain":
                        plain = root / f"plain-{run}.o"
                        plain.write_bytes(built.read_bytes())
                    else:
                        check_equal(nvfresh, plain, built, name)
                    if name == "remote":
                        found = REMOTE_RE.findall(log.read_text(errors="replace"))
                        if len(found) != 4:
                            raise SystemExit(f"remote_exec: {len(found)} steps ran remotely, not 4 "
                                             f"(see {log}; --keep keeps it)")
                        steps.append((run, found))
        finally:
            server.stop()
    print(f"  every local and remote object equals plain nvcc's ({args.runs} runs)")
    for name, values in times.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(f"  {name:<7} wall median {statistics.median(walls):6.2f} s "
              f"({min(walls):.2f}-{max(walls):.2f}), local cpu median {statistics.median(cpus):6.2f} s")
    local = statistics.median(w for w, _ in times["local"])
    remote = statistics.median(w for w, _ in times["remote"])
    print(f"  remote / local wall: {remote / local:.2f}x")
    for run, found in steps:
        for pass_name, tool, ms, sent, fetched in found:
            print(f"  run {run}: {tool:<5} {pass_name:<10} {int(ms):6d} ms remote, "
                  f"{int(sent):9d} bytes sent, {int(fetched):8d} fetched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
