"""What the benchmarks share (stdlib only): where the build is, timing a command side by side with
CPU time, medians, scratch directories, CUTLASS, depfiles.

Each bench/<name>.py imports it as `import benchlib`: Python puts the script's own folder (bench/)
on sys.path, so `python3 bench/<name>.py` needs no PYTHONPATH.
"""
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def build_dir():
    """$NVFRESH_BUILD_DIR, else <checkout>/build (scripts/build.sh)."""
    return Path(os.environ.get("NVFRESH_BUILD_DIR", REPO / "build"))


def nvfresh_bin(bench):
    """$NVFRESH_BIN, else <build>/bin/nvfresh; ends `bench` with a message when it is missing."""
    path = Path(os.environ.get("NVFRESH_BIN") or build_dir() / "bin" / "nvfresh")
    if not path.exists():
        raise SystemExit(f"{bench}: no nvfresh at {path}; build first or set NVFRESH_BUILD_DIR")
    return str(path)


def default_nvcc():
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def nvcc_version_line(nvcc):
    """The last line of `nvcc --version` (`Build cuda_13.0...`), or '?'."""
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1] if out.strip() else "?"


def children_cpu():
    """user + sys of all waited-for descendants: steadier than wall time on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd, cwd=None, env=None, bench="bench"):
    """(wall seconds, CPU seconds of it and its descendants) of one command, which must succeed.
    env: variables set on top of this process's environment."""
    merged = dict(os.environ)
    merged.update(env or {})
    cpu_before, started = children_cpu(), time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env=merged, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if result.returncode != 0:
        sys.exit(f"{bench}: command failed ({result.returncode}): {cmd}\n"
                 f"{result.stdout.decode(errors='replace')}{result.stderr.decode(errors='replace')}")
    return wall, cpu


def wall_times(cmd, runs):
    """Wall seconds of `runs` runs of cmd (its exit status and output ignored)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return times


def median_ratio_line(what, base, other, base_name="plain", other_name="nvfresh", runs=None):
    """`<what>: plain median X s, nvfresh median Y s, ratio Y/X (plain a-b, nvfresh c-d)`."""
    bm, om = statistics.median(base), statistics.median(other)
    counted = f", {runs} runs" if runs is not None else ""
    return (f"{what}{counted}: {base_name} median {bm:.2f} s, {other_name} median {om:.2f} s, "
            f"ratio {om / bm:.3f} ({base_name} {min(base):.2f}-{max(base):.2f}, "
            f"{other_name} {min(other):.2f}-{max(other):.2f})")


@contextlib.contextmanager
def scratch(prefix, keep=False):
    """A new temporary directory (symlinks resolved), removed afterwards unless keep."""
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix=prefix)))
    try:
        yield root
    finally:
        if keep:
            print(f"scratch kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def fresh_dir(path):
    """path, emptied (created when missing)."""
    path = Path(path)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def cutlass_root(bench):
    """The CUTLASS root (include/, tools/util/include, examples/) from scripts/install_cutlass.sh,
    which installs it when missing; None when this checkout has no such script."""
    script = REPO / "scripts" / "install_cutlass.sh"
    if not script.exists():
        return None
    out = subprocess.run([str(script)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{bench}: install_cutlass.sh failed:\n{out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])


def depfile_paths(path):
    """The prerequisites of a Make-syntax depfile with one target (backslash-newlines and `\\ `)."""
    text = Path(path).read_text().replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    return [word.replace("\\ ", " ") for word in deps.split()]
