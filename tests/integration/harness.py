"""Shared helpers for nvfresh's black-box integration tests (stdlib only).

Each test_*.py is one ctest entry. Tests run the built launcher ($NVFRESH_BIN) against the real
nvcc of this machine. Where nvcc is absent the suite exits 125 (ctest: skipped) and says so loudly;
on our machines and in CI nvcc is present and the tests run.

Tests import this module (and project.py, objects.py) with a plain `import harness`: ctest sets
PYTHONPATH to tests/integration (tests/CMakeLists.txt), and Python itself puts a script's own
folder on sys.path, so a test also runs by hand, from the checkout, with the variables ctest sets:
    NVFRESH_BIN=build/bin/nvfresh NVFRESH_SOURCE_DIR=$PWD NVFRESH_BUILD_DIR=$PWD/build \\
        python3 tests/integration/test_skip.py [-k name]
(NVFRESH_TRACE_LIB and NVFRESH_TRACE_TOOL too for test_trace_real_nvcc.py.)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

SKIP = 125

# nvfresh's object cache is on by default and shared by every build tree of the user: each test
# process gets its own, so that no test is served what another compiled (cache tests opt in to
# sharing explicitly, with their own NVFRESH_CACHE_DIR).
if "NVFRESH_CACHE_DIR" not in os.environ:
    os.environ["NVFRESH_CACHE_DIR"] = tempfile.mkdtemp(prefix="nvfresh-test-cache-")


def nvfresh_bin():
    path = os.environ.get("NVFRESH_BIN")
    if not path or not os.path.exists(path):
        print("harness: NVFRESH_BIN is not set or missing; run through ctest", file=sys.stderr)
        sys.exit(1)
    return path


def source_dir():
    """The nvfresh checkout: $NVFRESH_SOURCE_DIR (ctest sets it), else the one holding this file."""
    return Path(os.environ.get("NVFRESH_SOURCE_DIR") or Path(__file__).resolve().parents[2])


def build_dir():
    """nvfresh's build tree: $NVFRESH_BUILD_DIR (ctest sets it), else <checkout>/build."""
    return Path(os.environ.get("NVFRESH_BUILD_DIR") or source_dir() / "build")


def nvfresh_cmake():
    """cmake/nvfresh.cmake, for -DCMAKE_PROJECT_INCLUDE=..."""
    return source_dir() / "cmake" / "nvfresh.cmake"


def nvfresh(*args, cwd=None, env=None):
    """Runs the built nvfresh with args (run()'s result)."""
    return run([nvfresh_bin(), *args], cwd=cwd, env=env)


def nvfresh_check(build, *extra, env=None):
    """`nvfresh check -C build [extra...]` (run()'s result)."""
    return nvfresh("check", "-C", str(build), *extra, env=env)


def tool_path(name):
    """A helper executable of tests/tools (built with the project)."""
    path = build_dir() / "tests" / "tools" / name
    if not path.exists():
        raise AssertionError(f"{path} is missing: build the project first")
    return path


def env_path(variable):
    """The existing file that $variable names (ctest sets it); an AssertionError otherwise."""
    path = os.environ.get(variable)
    if not path or not os.path.exists(path):
        raise AssertionError(f"{variable} is not set or missing; run through ctest")
    return path


def trace_lib():
    return env_path("NVFRESH_TRACE_LIB")


def trace_tool():
    return env_path("NVFRESH_TRACE_TOOL")


def traced_env(trace_file, tmp_dir):
    """Variables that make a command run under the tracer, writing trace_file (LD_PRELOAD kept)."""
    preload = os.environ.get("LD_PRELOAD")
    return {"LD_PRELOAD": f"{preload}:{trace_lib()}" if preload else trace_lib(),
            "NVFRESH_TRACE_FILE": str(trace_file), "TMPDIR": str(tmp_dir)}


def skip_loudly(message):
    """Ends the test file as skipped (ctest's exit code 125), with the message framed on stderr."""
    print("*" * 70, file=sys.stderr)
    print(f"SKIPPED: {message}", file=sys.stderr)
    print("*" * 70, file=sys.stderr)
    sys.exit(SKIP)


def fail_under_ci_else_skip(message):
    """Something the test needs could not be installed: a failure under CI=true, else a loud skip."""
    if os.environ.get("CI") == "true":
        raise AssertionError(message)
    skip_loudly(message)


def install_nvcc_versions(*tags):
    """([(tag, nvcc path)], error text) from scripts/install_nvcc_versions.sh, which installs what is
    missing (tags: which ones, default its own list); error text is '' when it succeeded."""
    result = run([str(source_dir() / "scripts" / "install_nvcc_versions.sh"), *tags])
    found = [tuple(line.split(" ", 1)) for line in result.stdout.decode().splitlines() if line.strip()]
    if result.returncode == 0:
        return found, ""
    return found, (f"scripts/install_nvcc_versions.sh failed ({result.returncode}):\n"
                   f"{result.stderr.decode(errors='replace')}")


def install_cutlass():
    """The CUTLASS root (include/, tools/util/include, examples/) from scripts/install_cutlass.sh,
    which installs it when missing; a failure under CI=true, else a loud skip."""
    result = run([str(source_dir() / "scripts" / "install_cutlass.sh")])
    if result.returncode == 0:
        return Path(result.stdout.decode().strip().splitlines()[-1])
    fail_under_ci_else_skip("CUTLASS could not be installed; the CUTLASS test did NOT run\n"
                            f"scripts/install_cutlass.sh failed:\n{result.stderr.decode(errors='replace')}")


def find_nvcc():
    nvcc = os.environ.get("NVFRESH_TEST_NVCC") or shutil.which("nvcc")
    if nvcc is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        nvcc = "/usr/local/cuda/bin/nvcc"
    return nvcc


def require_nvcc():
    nvcc = find_nvcc()
    if nvcc is None:
        skip_loudly("no nvcc on this machine; the real-nvcc suite did NOT run")
    return nvcc


_DRY_RUN_SETTINGS = {}


def nvcc_dry_run_settings(nvcc):
    """The `#$ NAME=value` settings nvcc prints in one dry run of a tiny compile (_HERE_, INCLUDES,
    ...), asked once per nvcc. They name the real toolkit also when `nvcc` is a wrapper script."""
    if nvcc not in _DRY_RUN_SETTINGS:
        with tempfile.TemporaryDirectory(prefix="nvfresh-here-") as tmp:
            source = Path(tmp) / "here.cu"
            source.write_text("__global__ void k() {}\n")
            dry = run([nvcc, "-dryrun", "-c", str(source), "-o", str(Path(tmp) / "here.o")],
                      check=True)
        settings = {}
        for line in (dry.stdout + dry.stderr).decode().splitlines():
            match = re.match(r"#\$ ([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
            if match and match.group(1) not in settings:
                settings[match.group(1)] = match.group(2).strip()
        _DRY_RUN_SETTINGS[nvcc] = settings
    return _DRY_RUN_SETTINGS[nvcc]


def nvcc_binary(nvcc):
    """The nvcc executable itself, also when `nvcc` is a wrapper script (as /usr/local/bin/nvcc may
    be): the directory nvcc reports as _HERE_ in a dry run, symlinks resolved."""
    here = nvcc_dry_run_settings(nvcc).get("_HERE_")
    if not here:
        raise AssertionError(f"{nvcc} -dryrun names no _HERE_ directory")
    return (Path(here) / "nvcc").resolve()


def nvcc_include_dir(nvcc):
    """The toolkit's include directory, the one of nvcc's own INCLUDES that holds cuda_runtime.h
    (taken from the dry run, so a wrapper script on PATH does not hide it)."""
    includes = shlex.split(nvcc_dry_run_settings(nvcc).get("INCLUDES", ""))
    for word in includes:
        if word.startswith("-I") and (Path(word[2:]) / "cuda_runtime.h").is_file():
            return Path(word[2:]).resolve()
    raise AssertionError(f"no directory of {nvcc}'s INCLUDES ({includes}) holds cuda_runtime.h")


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


def compiled_objects(build_output):
    """The objects a CMake build says it compiled ("Building CUDA object ..."), sorted."""
    return sorted(line.split("Building CUDA object ")[1].strip()
                  for line in build_output.splitlines() if "Building CUDA object" in line)


def depfile_paths(path):
    """The prerequisites of a Make-syntax depfile with one target (backslash-newlines and `\\ `)."""
    text = Path(path).read_text().replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    return [word.replace("\\ ", " ") for word in deps.split()]


def record_files(record_dir):
    """The per-object records under a record directory (<build tree>/.nvfresh), sorted."""
    return sorted((Path(record_dir) / "records").glob("*.rec"))


def bump_mtime(path, seconds=2):
    """Move a file's mtime forward so that coarse-grained build tools see a change."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def main():
    unittest.main(verbosity=2)
