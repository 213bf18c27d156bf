"""Shared helpers for nvfresh's black-box integration tests (stdlib only).

Each test_*.py is one ctest entry. Tests run the built launcher ($NVFRESH_BIN) against the real
nvcc of this machine. Where nvcc is absent the suite exits 125 (ctest: skipped) and says so loudly;
on our machines and in CI nvcc is present and the tests run.

Tests import this module (and project.py, objects.py) with a plain `import harness`: ctest sets
PYTHONPATH to tests/integration (tests/CMakeLists.txt), and Python itself puts a script's own
folder on sys.path, so a test also runs by hand, with the variables ctest sets:
    NVFRESH_BIN=build/bin/nvfresh NVFRESH_SOURCE_DIR=$PWD NVFRESH_BUILD_DIR=$PWD/build \\
        python3 tests/integration/test_skip.py [-k name]
(NVFRESH_TRACE_LIB and NVFRESH_TRACE_TOOL too for test_trace_real_nvcc.py.)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

SKIP = 125


def nvfresh_bin():
    path = os.environ.get("NVFRESH_BIN")
    if not path or not os.path.exists(path):
        print("harness: NVFRESH_BIN is not set or missing; run through ctest", file=sys.stderr)
        sys.exit(1)
    return path


def find_nvcc():
    nvcc = os.environ.get("NVFRESH_TEST_NVCC") or shutil.which("nvcc")
    if nvcc is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        nvcc = "/usr/local/cuda/bin/nvcc"
    return nvcc


def require_nvcc():
    nvcc = find_nvcc()
    if nvcc is None:
        print("*" * 70, file=sys.stderr)
        print("SKIPPED: no nvcc on this machine; the real-nvcc suite did NOT run", file=sys.stderr)
        print("*" * 70, file=sys.stderr)
        sys.exit(SKIP)
    return nvcc


def nvcc_binary(nvcc):
    """The nvcc executable itself, also when `nvcc` is a wrapper script (as /usr/local/bin/nvcc may
    be): the directory nvcc reports as _HERE_ in a dry run, symlinks resolved."""
    with tempfile.TemporaryDirectory(prefix="nvfresh-here-") as tmp:
        source = Path(tmp) / "here.cu"
        source.write_text("__global__ void k() {}\n")
        dry = run([nvcc, "-dryrun", "-c", str(source), "-o", str(Path(tmp) / "here.o")], check=True)
    for line in (dry.stdout + dry.stderr).decode().splitlines():
        if line.startswith("#$ _HERE_="):
            return (Path(line.split("=", 1)[1]) / "nvcc").resolve()
    raise AssertionError(f"{nvcc} -dryrun names no _HERE_ directory")


def make_workdir(prefix="nvfresh-test-"):
    """A fresh directory reached through a symlink (tests must not depend on realpath == cwd)."""
    real = Path(tempfile.mkdtemp(prefix=prefix))
    (real / "real").mkdir()
    link = real / "link"
    link.symlink_to(real / "real")
    return link


def run(cmd, cwd=None, env=None, check=False, input_bytes=None):
    merged = dict(os.environ)
    if env:
        merged.update(env)
    result = subprocess.run(cmd, cwd=cwd, env=merged, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, input=input_bytes)
    if check and result.returncode != 0:
        raise AssertionError(
            f"command failed ({result.returncode}): {cmd}\nstdout:\n{result.stdout.decode(errors='replace')}"
            f"\nstderr:\n{result.stderr.decode(errors='replace')}")
    return result


def write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def is_zstd_skippable_frame(data):
    """zstd's skippable frames (magic 0x184D2A50 to 0x184D2A5F, little-endian): records start with one."""
    return len(data) >= 8 and data[1:4] == b"\x2a\x4d\x18" and 0x50 <= data[0] <= 0x5F


def read_record_text(path):
    """A record's text: nvfresh stores records as zstd frames, a skippable head frame then the text (the
    zstd tool, from Debian, reads them and skips the head)."""
    data = Path(path).read_bytes()
    if data.startswith(ZSTD_MAGIC) or is_zstd_skippable_frame(data):
        data = subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE, check=True).stdout
    return data.decode()


def write_record_text(path, text):
    """Stores `text` as a record the way nvfresh does (a zstd frame)."""
    packed = subprocess.run(["zstd", "-cq"], input=text.encode(), stdout=subprocess.PIPE, check=True).stdout
    Path(path).write_bytes(packed)


def bump_mtime(path, seconds=2):
    """Move a file's mtime forward so that coarse-grained build tools see a change."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def main():
    unittest.main(verbosity=2)
