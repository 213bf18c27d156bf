"""Lists the test classes of integration test files, one ctest entry each (tests/CMakeLists.txt).

Usage: list_test_classes.py FILE...
Prints one line per class that unittest would run with at least one test, in file order:
    <file>|<Class>|<label>,<label>...
Labels (ctest -L / -LE select by them):
    real_nvcc  the file runs the real nvcc (every integration test that names nvcc)
    cmake      the file configures or builds CMake projects (project.py, or cmake -S/--build)
    slow       the file's name ends in _slow, or the class sets `ctest_labels = ("slow",)`
A class may add labels of its own with a class attribute `ctest_labels = ("slow", ...)`.
Reads the files as text (ast): nothing is imported, so a file's import-time checks do not run here.
"""
import ast
import re
import sys
from pathlib import Path


def test_methods(node):
    return {item.name for item in node.body
            if isinstance(item, ast.FunctionDef) and item.name.startswith("test")}


def own_labels(node):
    for item in node.body:
        if isinstance(item, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "ctest_labels" for target in item.targets):
            value = ast.literal_eval(item.value)
            return [value] if isinstance(value, str) else list(value)
    return []


def classes_with_tests(tree):
    """(name, labels) of each class with tests, its own or inherited from a class of the same file."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = test_methods(node)
        labels = own_labels(node)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in found:
                methods |= found[base.id][0]
                labels = found[base.id][1] + labels
        found[node.name] = (methods, labels)
    return [(name, labels) for name, (methods, labels) in found.items() if methods]


def file_labels(path, text):
    labels = []
    if "nvcc" in text:
        labels.append("real_nvcc")
    if re.search(r'^import project|^from project|"cmake", "-S"|"cmake", "--build"', text, re.M):
        labels.append("cmake")
    if path.stem.endswith("_slow"):
        labels.append("slow")
    return labels


def main(paths):
    for name in paths:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        base = file_labels(path, text)
        for cls, labels in classes_with_tests(ast.parse(text, filename=name)):
            merged = list(dict.fromkeys(base + labels))
            print(f"{path}|{cls}|{','.join(merged)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
