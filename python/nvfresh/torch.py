"""nvfresh for PyTorch C++/CUDA extensions (torch.utils.cpp_extension): change one import line.

    from nvfresh.torch import BuildExtension           # was: from torch.utils.cpp_extension import ...
    from torch.utils.cpp_extension import CUDAExtension
    setup(..., ext_modules=[CUDAExtension(...)], cmdclass={"build_ext": BuildExtension})

    module = nvfresh.torch.load(name, sources, ...)    # JIT: torch's arguments, torch's result
    module = nvfresh.torch.load_inline(name, cpp_sources, ...)

What this adds to torch's own build, each step one call of the nvfresh binary (the logic is there):
  1. nvcc runs through nvfresh: torch writes $PYTORCH_NVCC as the `nvcc` of its build.ninja, and
     for the build it is "<nvfresh> <torch's nvcc>" (a PYTORCH_NVCC already set, such as
     "ccache nvcc", stays, behind nvfresh);
  2. `nvfresh sync -C <build dir>` runs right before torch's ninja: an object whose inputs changed
     in content (also when no mtime shows it) is made older than its inputs, so ninja rebuilds it;
  3. the link of each extension .so runs as `nvfresh link-record -C <build dir> -- <link>`, and
     the copy `build_ext --inplace` puts next to the sources (the file Python imports) is recorded
     with `nvfresh link-record --copied`: `nvfresh check -C <build dir>` then names each .so, fresh
     or relink pending.
The build dir: setuptools' build_temp (build/temp.<platform>-<python>) for setup.py builds, where
torch writes its build.ninja; torch's build_directory for JIT builds.

Never makes a build fail that passes without nvfresh: without a binary that runs, or with torch's
distutils backend (use_ninja=False, or no ninja installed), torch builds as it always does and one
"nvfresh:" line says why nvfresh is not in it.

Torch's JIT load() decides in-process whether to build at all (its versioner hashes the sources
and arguments, not the headers): a second load() of the same extension in the same process builds
nothing, with or without nvfresh. A new process always runs the build, and then nvfresh sees
every header.
"""
import contextlib
import os
import shlex
import subprocess
import sys

from torch.utils import cpp_extension as _torch_ext

import nvfresh as _nvfresh

# The link rule torch's JIT build.ninja has (torch/utils/cpp_extension.py, _write_ninja_file).
TORCH_LINK_RULE = "rule link\n  command = $cxx $in $ldflags -o $out\n"


def _warn(message):
    print(f"nvfresh: {message}", file=sys.stderr, flush=True)


def _binary():
    """The nvfresh binary, or None after saying why there is none. A binary that does not run
    (`nvfresh --version` fails: a missing library, another machine's build) is none: in front of
    nvcc and the linker it would fail builds that pass without it."""
    try:
        path = _nvfresh.find_executable()
    except _nvfresh.ExecutableNotFound as error:
        _warn(f"{error}; building without nvfresh")
        return None
    try:
        probe = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        failure = None if probe.returncode == 0 else f"exit {probe.returncode}: {probe.stderr.strip()}"
    except OSError as error:
        failure = str(error)
    if failure is not None:
        _warn(f"{path} does not run ({failure}); building without nvfresh")
        return None
    return path


def nvcc_command(nvfresh, environ=None):
    """The PYTORCH_NVCC that puts nvfresh in front of the nvcc torch would run; None: leave it.

    None when PYTORCH_NVCC already starts with nvfresh, or when torch knows no CUDA (then it
    compiles no .cu file either)."""
    environ = os.environ if environ is None else environ
    given = environ.get("PYTORCH_NVCC")
    if given:
        words = shlex.split(given)
        if words and os.path.basename(words[0]) == "nvfresh":
            return None
        return shlex.join([nvfresh] + words)
    try:
        nvcc = _torch_ext._join_cuda_home("bin", "nvcc")
    except (OSError, AttributeError):
        return None
    return shlex.join([nvfresh, nvcc])


def link_launcher(nvfresh, build_dir):
    """The words put in front of a link command so that it is recorded under build_dir."""
    return [nvfresh, "link-record", "-C", build_dir, "--"]


def with_link_recorded(ninja_text, launcher):
    """torch's JIT build.ninja with its link rule run through the launcher; None when the text has
    no link rule as torch writes it (then it is left alone: already rewritten, or not torch's)."""
    if TORCH_LINK_RULE not in ninja_text:
        return None
    words = shlex.join(launcher).replace("$", "$$")
    return ninja_text.replace(TORCH_LINK_RULE, f"rule link\n  command = {words} $cxx $in $ldflags -o $out\n")


def sync(nvfresh, build_dir):
    """`nvfresh sync -C build_dir`: marks the stale objects (it never fails a build; neither does this)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        subprocess.run([nvfresh, "sync", "-C", build_dir], check=False, stdin=subprocess.DEVNULL)
    except OSError as error:
        _warn(f"cannot run {nvfresh} sync: {error}; objects stale by content may not be rebuilt")


def record_copy(nvfresh, build_dir, source, copy):
    """`nvfresh link-record --copied`: the copy holds what the linked source holds."""
    try:
        subprocess.run([nvfresh, "link-record", "-C", build_dir, "--copied", source, copy],
                       check=False, stdin=subprocess.DEVNULL)
    except OSError as error:
        _warn(f"cannot run {nvfresh} link-record: {error}; {copy} is not recorded")


@contextlib.contextmanager
def _environment(name, value):
    """os.environ[name] = value for the duration (value None: unchanged)."""
    if value is None:
        yield
        return
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def _attribute(owner, name, value):
    """owner.name = value for the duration; an attribute owner did not have is removed after."""
    had_own = name in vars(owner)
    old = vars(owner).get(name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        if had_own:
            setattr(owner, name, old)
        else:
            delattr(owner, name)


def _spawning_through(compiler, launcher):
    """compiler.spawn with the launcher in front. While torch builds with ninja, ninja runs every
    compile; what distutils spawns itself is the link (link-record runs anything else unchanged)."""
    spawn = compiler.spawn

    def spawn_recorded(cmd, **kwargs):
        return spawn(launcher + list(cmd), **kwargs)

    return _attribute(compiler, "spawn", spawn_recorded)


class BuildExtension(_torch_ext.BuildExtension):
    """torch.utils.cpp_extension.BuildExtension, with nvfresh in front of nvcc, `nvfresh sync`
    before torch's ninja, and each extension's link recorded (see the module's docstring)."""

    _nvfresh_checked = False
    _nvfresh_path = None

    def _nvfresh(self):
        """The binary when nvfresh takes part in this build, else None (said once, on stderr)."""
        if not self._nvfresh_checked:
            self._nvfresh_checked = True
            self._nvfresh_path = _binary()
            if self._nvfresh_path is not None and not self.use_ninja:
                _warn("torch builds this extension with its distutils backend (use_ninja=False, or no "
                      "ninja found), which nvfresh does not cover; building without nvfresh")
                self._nvfresh_path = None
        return self._nvfresh_path

    def _nvfresh_build_dir(self):
        return os.path.abspath(self.build_temp)

    def run(self):
        super().run()
        nvfresh = self._nvfresh()
        if nvfresh is not None and self.inplace:
            self._record_inplace_copies(nvfresh)

    def build_extensions(self):
        nvfresh = self._nvfresh()
        if nvfresh is None:
            super().build_extensions()
            return
        launcher = link_launcher(nvfresh, self._nvfresh_build_dir())
        with _environment("PYTORCH_NVCC", nvcc_command(nvfresh)), _spawning_through(self.compiler, launcher):
            super().build_extensions()

    def build_extension(self, ext):
        nvfresh = self._nvfresh()
        if nvfresh is not None:
            sync(nvfresh, self._nvfresh_build_dir())
        super().build_extension(ext)

    def _record_inplace_copies(self, nvfresh):
        for ext in self.extensions:
            self.inplace = 0
            linked = os.path.abspath(self.get_ext_fullpath(ext.name))
            self.inplace = 1
            copy = os.path.abspath(self.get_ext_fullpath(ext.name))
            if copy != linked and os.path.exists(copy):
                record_copy(nvfresh, self._nvfresh_build_dir(), linked, copy)


def _run_ninja_synced(nvfresh, run_ninja):
    """torch's _run_ninja_build, after recording the link rule and running `nvfresh sync`."""
    def run(build_directory, *args, **kwargs):
        build_directory = os.path.abspath(build_directory)
        ninja_file = os.path.join(build_directory, "build.ninja")
        try:
            with open(ninja_file) as file:
                text = with_link_recorded(file.read(), link_launcher(nvfresh, build_directory))
            if text is not None:
                with open(ninja_file, "w") as file:
                    file.write(text)
        except OSError as error:
            _warn(f"cannot put link-record into {ninja_file}: {error}; the link is not recorded")
        sync(nvfresh, build_directory)
        return run_ninja(build_directory, *args, **kwargs)

    return run


def _jit(function, *args, **kwargs):
    nvfresh = _binary()
    run_ninja = getattr(_torch_ext, "_run_ninja_build", None)
    if nvfresh is None:
        return function(*args, **kwargs)
    if run_ninja is None:
        _warn("this torch has no torch.utils.cpp_extension._run_ninja_build to run `nvfresh sync` "
              "before; building without nvfresh")
        return function(*args, **kwargs)
    with _environment("PYTORCH_NVCC", nvcc_command(nvfresh)), \
            _attribute(_torch_ext, "_run_ninja_build", _run_ninja_synced(nvfresh, run_ninja)):
        return function(*args, **kwargs)


def load(name, sources, *args, **kwargs):
    """torch.utils.cpp_extension.load, built through nvfresh: same arguments, same result."""
    return _jit(_torch_ext.load, name, sources, *args, **kwargs)


def load_inline(name, cpp_sources, *args, **kwargs):
    """torch.utils.cpp_extension.load_inline, built through nvfresh: same arguments, same result."""
    return _jit(_torch_ext.load_inline, name, cpp_sources, *args, **kwargs)
