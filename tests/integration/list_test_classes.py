"""Lists the ctest entries of integration test files: one per test class (tests/CMakeLists.txt).

Usage: list_test_classes.py FILE...
Prints one line per entry, in file order:
    <file>|<Class>|<label>,<label>...
Each file is imported (as a module, not as __main__: its tests do not run) and unittest's loader
finds its TestCase classes, those made at import time (project.add_test_case_per_tool) included. A
file with a load_tests() hook makes its classes when the tests load (they depend on the toolchains
installed then), and a file that cannot be imported here: one entry for the whole file, with an
empty class field.
Labels (ctest -L / -LE select by them):
    real_nvcc  the file runs the real nvcc (names it)
    cmake      the file configures or builds CMake projects (project.py, cmake_detection.py, or
               cmake -S/--build)
    slow       the file's name ends in _slow
A class may add labels with a class attribute `ctest_labels = ("slow", ...)`.
"""
import importlib.util
import io
import os
import re
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path


def file_labels(path, text):
    labels = []
    if "nvcc" in text:
        labels.append("real_nvcc")
    if re.search(r'^import (?:project|cmake_detection)|^from project|"cmake", "-S"|"cmake", "--build"', text, re.M):
        labels.append("cmake")
    if path.stem.endswith("_slow"):
        labels.append("slow")
    return labels


def import_module(path):
    """The module of path, or None when it cannot be imported here (or exits while importing)."""
    spec = importlib.util.spec_from_file_location(f"nvfresh_listed_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            spec.loader.exec_module(module)
    except (Exception, SystemExit):  # the tests themselves report it when they run
        return None
    return module


def test_classes(module):
    """(name, class) of each TestCase class the module defines that has at least one test."""
    loader = unittest.TestLoader()
    found = []
    for name, value in vars(module).items():
        if (isinstance(value, type) and issubclass(value, unittest.TestCase)
                and value.__module__ == module.__name__ and loader.getTestCaseNames(value)):
            found.append((name, value))
    return found


def entries(path):
    text = path.read_text(encoding="utf-8")
    labels = file_labels(path, text)
    module = import_module(path)
    if module is None or hasattr(module, "load_tests"):
        return [(path, "", labels)]
    return [(path, name, list(dict.fromkeys(labels + list(getattr(cls, "ctest_labels", ())))))
            for name, cls in test_classes(module)]


def main(paths):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    # Some files ask harness for these at import time; at configure time nothing is built yet, and
    # nothing runs here: any existing file stands in.
    for variable in ("NVFRESH_BIN", "NVFRESH_TRACE_LIB", "NVFRESH_TRACE_TOOL"):
        os.environ.setdefault(variable, sys.executable)
    os.environ["NVFRESH_CACHE_DIR"] = os.devnull  # harness makes a temporary one otherwise
    for name in paths:
        for path, cls, labels in entries(Path(name)):
            print(f"{path}|{cls}|{','.join(labels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
