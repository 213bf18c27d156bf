"""nvfresh from Python: glue between Python build systems and the nvfresh binary.

nvfresh itself is the C++ binary `nvfresh` (built by the repository's scripts/build.sh); this
package finds it and calls it (nvfresh.torch holds no logic of its own). Modules:

    nvfresh.torch    PyTorch C++/CUDA extensions: BuildExtension (setup.py), load and load_inline (JIT)
    nvfresh.repro    repeat a compile in one process, heap noise between the repeats, each into the
                     nvfresh-sample-<i>/ directory `nvfresh repro --artifact` reads as one sample

Importing `nvfresh` imports nothing else (nvfresh.torch imports torch).

Which binary (executable()), the first of:
  1. $NVFRESH_EXECUTABLE (the name the CMake module uses for the same setting); when it is set but
     names no executable file, none (the caller says so and builds without nvfresh);
  2. <checkout>/build/bin/nvfresh, when this package is imported from a checkout
     (<checkout>/python/nvfresh, on PYTHONPATH or installed in editable mode);
  3. `nvfresh` on PATH (`cmake --install` puts it in <prefix>/bin).
"""
import os
import shutil
from pathlib import Path

__version__ = "0.1.0"

ENVIRONMENT_VARIABLE = "NVFRESH_EXECUTABLE"


class ExecutableNotFound(Exception):
    """No nvfresh binary: the message says where it was looked for and what to set."""


def _is_executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _checkout_build():
    """<checkout>/build/bin/nvfresh when this file is <checkout>/python/nvfresh/__init__.py."""
    package = Path(__file__).resolve().parent
    checkout = package.parent.parent
    if package.parent.name != "python" or not (checkout / "CMakeLists.txt").is_file():
        return None
    return checkout / "build" / "bin" / "nvfresh"


def find_executable(environ=None):
    """The absolute path of the nvfresh binary, by the rule above; raises ExecutableNotFound."""
    environ = os.environ if environ is None else environ
    given = environ.get(ENVIRONMENT_VARIABLE)
    if given:
        if _is_executable(given):
            return os.path.abspath(given)
        raise ExecutableNotFound(f"{ENVIRONMENT_VARIABLE}={given} is not an executable file")
    candidates = []
    checkout = _checkout_build()
    if checkout is not None:
        if _is_executable(checkout):
            return str(checkout)
        candidates.append(f"{checkout} (run scripts/build.sh)")
    on_path = shutil.which("nvfresh", path=environ.get("PATH", os.defpath))
    if on_path:
        return os.path.abspath(on_path)
    candidates.append("nvfresh on PATH")
    raise ExecutableNotFound(f"no nvfresh binary: looked for {ENVIRONMENT_VARIABLE}, "
                             f"{', '.join(candidates)}; set {ENVIRONMENT_VARIABLE} to its path")
