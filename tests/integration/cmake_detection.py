"""CMake's CUDA compiler detection, done once per toolchain for the suite's build trees (stdlib only).

A first configure of a CUDA project spends most of its CPU identifying nvcc and probing its ABI (four
nvcc runs, about 140 processes). CMake itself skips that on a reconfigure: it reads back
CMakeFiles/<version>/CMakeSystem.cmake and CMake<LANG>Compiler.cmake when a CMakeCache.txt names the
same compiler and says the platform is initialized. seeded_configure() does the same for a fresh
tree: the first tree configured with a given detection key is configured normally and its detection
files are kept under nvfresh's build tree; a later tree with the same key starts from a copy of them and of the cache entries detection
wrote (compilers, binutils, platform), so it is configured exactly as CMake reconfigures a tree (same
cache, same build.ninja / Makefile commands).

The key holds everything detection reads: the cmake, nvcc and host compiler executables (path, size,
mtime), the environment variables CMake and nvcc consult, the -G / -D CMAKE_* arguments, and the
project's CMakeLists.txt up to its project() call. Trees that test detection itself, or that set a
compiler launcher at configure time, are configured plainly (BuildTree(detect_fresh=True), or any
CMAKE_<LANG>_COMPILER_LAUNCHER argument); NVFRESH_TEST_FRESH_CMAKE_DETECTION=1 turns reuse off.
"""
import hashlib
import os
import re
import shutil
from pathlib import Path

import harness

DETECTION_ENV = ("PATH", "CUDACXX", "CUDAHOSTCXX", "CUDAFLAGS", "CUDAARCHS", "CC", "CXX", "CFLAGS",
                 "CXXFLAGS", "LDFLAGS", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN",
                 "LD_PRELOAD", "CMAKE_GENERATOR", "CMAKE_TOOLCHAIN_FILE")
PROGRAMS = ("cmake", "nvcc", "c++", "g++", "cc", "gcc")
COMPILER_FILE_RE = re.compile(r"^CMake(?:System|[A-Za-z]+Compiler)\.cmake$")
# The cache entries detection writes (the compilers, binutils CMakeFindBinUtils finds, the platform).
DETECTED_ENTRY_RE = re.compile(
    r"^CMAKE_(?:ADDR2LINE|AR|DLLTOOL|LINKER|MT|NM|OBJCOPY|OBJDUMP|RANLIB|READELF|STRIP|TAPI"
    r"|EXECUTABLE_FORMAT|UNAME|PLATFORM_INFO_INITIALIZED|[A-Z]+_COMPILER(?:_AR|_RANLIB)?)"
    r"(?:-ADVANCED)?:[A-Z]+=.*$", re.MULTILINE)
COMPILER_ARG_RE = re.compile(r"^-DCMAKE_[A-Za-z]+_(?:HOST_)?COMPILER(?::[A-Z]+)?=")
LAUNCHER_RE = re.compile(r"^-DCMAKE_[A-Za-z]+_COMPILER_LAUNCHER")


def reuse_allowed(cmake_args):
    """False when detection must run in full: turned off, or a launcher set at configure time."""
    if os.environ.get("NVFRESH_TEST_FRESH_CMAKE_DETECTION"):
        return False
    return not any(LAUNCHER_RE.match(arg) for arg in cmake_args)


def program_fingerprint(name, path_variable):
    found = shutil.which(name, path=path_variable)
    if not found:
        return f"{name}: none"
    real = os.path.realpath(found)
    st = os.stat(real)
    return f"{name}: {found} -> {real} {st.st_size} {st.st_mtime_ns}"


def file_fingerprint(compiler_arg):
    """The content of a -DCMAKE_<LANG>_[HOST_]COMPILER=<file> (a wrapper script may be rewritten)."""
    path = Path(compiler_arg.split("=", 1)[1])
    if not path.is_file():
        return f"{compiler_arg}: no file"
    return f"{compiler_arg}: {hashlib.sha256(path.read_bytes()).hexdigest()}"


def project_head(source_dir):
    """CMakeLists.txt up to the end of its first project() call (what runs before detection)."""
    text = (Path(source_dir) / "CMakeLists.txt").read_text()
    match = re.search(r"\bproject\s*\([^)]*\)", text, re.IGNORECASE)
    return text[:match.end()] if match else text


def detection_key(source_dir, cmake_args, env):
    merged = dict(os.environ)
    merged.update(env or {})
    parts = [f"{name}={merged.get(name, '')}" for name in DETECTION_ENV]
    parts += [program_fingerprint(name, merged.get("PATH")) for name in PROGRAMS]
    cuda_compiler = merged.get("CUDACXX")
    if cuda_compiler:
        parts.append(program_fingerprint(cuda_compiler, merged.get("PATH")))
    parts += [arg for arg in cmake_args if arg.startswith(("-G", "-DCMAKE_"))]
    parts += [file_fingerprint(arg) for arg in cmake_args if COMPILER_ARG_RE.match(arg)]
    parts.append(project_head(source_dir))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def store_dir():
    """Where kept detections live: $NVFRESH_TEST_CMAKE_DETECTION_DIR, else under nvfresh's build tree."""
    chosen = os.environ.get("NVFRESH_TEST_CMAKE_DETECTION_DIR")
    return Path(chosen) if chosen else harness.build_dir() / "tests" / "cmake-detection"


def version_dir(build_dir):
    """CMakeFiles/<cmake version> of a configured tree (the one holding CMakeSystem.cmake)."""
    found = sorted((Path(build_dir) / "CMakeFiles").glob("*/CMakeSystem.cmake"))
    return found[0].parent if found else None


def keep_detection(build_dir, kept):
    """Copies a freshly configured tree's detection files to `kept` (atomically: a rename)."""
    source = version_dir(build_dir)
    cache = Path(build_dir) / "CMakeCache.txt"
    if source is None or not cache.exists() or kept.exists():
        return
    entries = DETECTED_ENTRY_RE.findall(cache.read_text())
    temp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
    shutil.rmtree(temp, ignore_errors=True)
    (temp / source.name).mkdir(parents=True)
    for path in source.iterdir():
        if COMPILER_FILE_RE.match(path.name):
            shutil.copy2(path, temp / source.name / path.name)
    # CMAKE_PLATFORM_INFO_INITIALIZED among them: CMake reads kept detection files only then.
    harness.write(temp / "CMakeCache.txt", "".join(entry + "\n" for entry in entries))
    try:
        os.rename(temp, kept)
    except OSError:  # another test process kept the same detection first
        shutil.rmtree(temp, ignore_errors=True)


def seed(build_dir, kept):
    """Puts kept detection files and a cache naming the same compilers into an empty build tree."""
    build_dir = Path(build_dir)
    for version in kept.iterdir():
        if version.is_dir():
            shutil.copytree(version, build_dir / "CMakeFiles" / version.name, dirs_exist_ok=True)
    shutil.copy2(kept / "CMakeCache.txt", build_dir / "CMakeCache.txt")


def seeded_configure(source_dir, build_dir, cmake_args, env=None):
    """Runs `cmake <cmake_args>` for a fresh build_dir, reusing kept compiler detection when allowed."""
    args = ["cmake", *cmake_args]
    fresh = not (Path(build_dir) / "CMakeCache.txt").exists()
    if not fresh or not reuse_allowed(cmake_args):
        return harness.run(args, env=env, check=True)
    kept = store_dir() / detection_key(source_dir, cmake_args, env)
    if kept.is_dir():
        seed(build_dir, kept)
        return harness.run(args, env=env, check=True)
    result = harness.run(args, env=env, check=True)
    kept.parent.mkdir(parents=True, exist_ok=True)
    keep_detection(build_dir, kept)
    return result
