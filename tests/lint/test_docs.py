#!/usr/bin/env python3
"""The documents' shape: the map stays a map, measured figures live in bench/README.md only, and
every link between the documents (and every pointer from the code to a section) still lands.

- ARCHITECTURE.md has at most MAP_LINES lines (issue 40: a map, longer notes in doc/design/).
- A figure (a ratio such as 0.35x, a time such as 12.8 s or 8 ms, an instruction count such as
  37.3 M instructions) appears in no document but bench/README.md, outside fenced blocks (console
  examples); README.md may quote one, next to a link to bench/README.md. NEWS.md is history.
- Every relative link of a Markdown file of the repository names a file that exists and, with a
  #fragment, a heading of it; a comment in lib/, launcher/, cmake/ or tests/ that points to
  `ARCHITECTURE.md, "Section"` or `ARCHITECTURE.md#anchor` names a heading that exists.
Usage: python3 tests/lint/test_docs.py [-k name]
"""
import re
import subprocess
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAP_LINES = 220
FIGURES_HOME = "bench/README.md"
HISTORY = {"NEWS.md"}
README_FIGURES = 1
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?[x×](?!\w)"                 # 0.35x, 623×
                    r"|(?<![\w.])\d+\.\d+\s?(?:s|min)\b"                      # 12.8 s (not a "2 s" setting)
                    r"|(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|µs)(?!\w)"             # 8 ms, 10 µs
                    r"|\d+(?:\.\d+)?\s?[KMG] instructions")                   # 37.3 M instructions
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_POINTER = re.compile(r'ARCHITECTURE\.md(?:#([\w-]+)|, "([^"]+)")')


def prose_lines(text):
    """(line number, line) of the text outside fenced blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def figures(text):
    return [(number, found) for number, line in prose_lines(text) for found in FIGURE.findall(line)]


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks made hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    seen = {}
    result = set()
    for _, line in prose_lines(text):
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


def headings(text):
    return {re.sub(r"^#+\s+", "", line).strip() for _, line in prose_lines(text) if re.match(r"#{1,6}\s", line)}


def broken_links(path, text, root):
    problems = []
    for number, line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, fragment = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text()):
                problems.append(f"{where}: no heading with that anchor in {dest.relative_to(root)}")
    return problems


def tracked(*patterns):
    listed = subprocess.run(["git", "ls-files", "--", *patterns], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


class Detectors(unittest.TestCase):
    """The checks themselves find what they must, and nothing else."""

    def test_figures_found(self):
        text = "a hit in 0.35x the time, 12.8 s against 35.3 s; 8 ms, 10 µs; 37.3 M instructions; 623×\n"
        self.assertEqual([found for _, found in figures(text)],
                         ["0.35x", "12.8 s", "35.3 s", "8 ms", "10 µs", "37.3 M instructions", "623×"])

    def test_settings_and_code_are_not_figures(self):
        text = ("settled for 2 s, a 128 KB threshold, sm_80, x86_64, 0x1f, -j2, `-O2`\n"
                "```\nnvcc time saved 0.3 s\n```\n")
        self.assertEqual(figures(text), [])

    def test_anchors_as_github_makes_them(self):
        text = "## One compile's way through the code\n## The remote cache on loopback (`remote_cache.py`, 2026-12-04)\n## Limits\n## Limits\n"
        self.assertEqual(anchors(text), {"one-compiles-way-through-the-code",
                                         "the-remote-cache-on-loopback-remote_cachepy-2026-12-04",
                                         "limits", "limits-1"})

    def test_a_link_to_a_missing_heading_is_found(self):
        path = REPO / "ARCHITECTURE.md"
        self.assertEqual(broken_links(path, "[a](#layout) [b](bench/README.md)\n", REPO), [])
        self.assertEqual(len(broken_links(path, "[a](#no-such-heading) [b](no/such/file.md)\n", REPO)), 2)


class Documents(unittest.TestCase):
    def test_architecture_is_a_map(self):
        lines = (REPO / "ARCHITECTURE.md").read_text().count("\n")
        self.assertLessEqual(lines, MAP_LINES, f"ARCHITECTURE.md has {lines} lines, at most {MAP_LINES}: move "
                             "the long parts to doc/design/ and link them")

    def test_figures_only_in_bench_readme(self):
        problems = []
        for path in tracked("*.md"):
            name = str(path.relative_to(REPO))
            if name == FIGURES_HOME or name in HISTORY or not (name.count("/") == 0 or name.startswith(("doc/", "examples/"))):
                continue
            found = figures(path.read_text())
            allowed = README_FIGURES if name == "README.md" else 0
            if len(found) > allowed:
                problems += [f"{name}:{number}: {figure}" for number, figure in found]
        self.assertEqual(problems, [], f"measured figures belong in {FIGURES_HOME} (the README may quote "
                         f"{README_FIGURES}, with a link there); link to it instead")

    def test_readme_links_its_figure_to_the_benchmarks(self):
        text = (REPO / "README.md").read_text()
        for number, _ in figures(text):
            window = "\n".join(text.splitlines()[number - 1:number + 2])
            self.assertIn(FIGURES_HOME.split("/")[0] + "/README.md", window,
                          f"README.md:{number}: a figure without a link to {FIGURES_HOME}")

    def test_links_between_documents_land(self):
        problems = []
        for path in tracked("*.md"):
            problems += broken_links(path, path.read_text(), REPO)
        self.assertEqual(problems, [])

    def test_code_pointers_to_the_map_land(self):
        text = (REPO / "ARCHITECTURE.md").read_text()
        problems = []
        for path in tracked("lib", "launcher", "cmake", "tests", "scripts"):
            if path.suffix not in {".cpp", ".hpp", ".c", ".h", ".py", ".cmake", ".txt", ".sh"} or \
                    path == Path(__file__).resolve():
                continue
            for anchor, section in CODE_POINTER.findall(path.read_text(errors="replace")):
                if (anchor and anchor not in anchors(text)) or (section and section not in headings(text)):
                    problems.append(f"{path.relative_to(REPO)}: ARCHITECTURE.md {anchor or section!r}")
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
