#!/usr/bin/env python3
"""The tidy cache of scripts/check_tidy.sh: what its keys cover, and that only clean files are kept.

Runs copies of the script in small throwaway trees (their own lib/, .clang-tidy and
compile_commands.json) with a fake clang-tidy: it finds a problem in a file whose text, or that
of a header it includes with quotes, holds TIDY_WARN. The dependency listing is the real one (the
clang of clang-tidy's LLVM, linked beside the fake), and so is run-clang-tidy. About 20 s on 2 busy
cores; skipped (exit 125, said loudly) without clang 14 or run-clang-tidy.
Usage: python3 tests/lint/test_tidy_cache.py [-k name]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

SKIP = 125
REPO = Path(__file__).resolve().parents[2]
CLANG = Path("/usr/lib/llvm-14/bin/clang")
# The script stores a clean verdict only when no file it read changed in the second before it
# started (a file edited while clang-tidy runs): a test waits that long before a run that stores.
SETTLE_S = 1.2

FAKE_CLANG_TIDY = r"""#!/usr/bin/env python3
import re, sys
from pathlib import Path
if "--version" in sys.argv:
    print("Fake LLVM version 14.0.6")
    sys.exit(0)
if "-list-checks" in sys.argv:
    sys.exit(0)
source = Path(sys.argv[-1])
texts = [source.read_text()]
texts += [(source.parent / name).read_text() for name in re.findall(r'#include "([^"]+)"', texts[0])
          if (source.parent / name).exists()]
if any("TIDY_WARN" in text for text in texts):
    print(f"{source}:1:1: warning: fake finding [fake-check]")
    sys.exit(1)
print("3 warnings generated.", file=sys.stderr)
"""


class Tree:
    """A throwaway checkout: scripts/check_tidy.sh, .clang-tidy, lib/demo, build/compile_commands.json."""

    def __init__(self, root, tools, cache):
        self.root, self.tools, self.cache = root, tools, cache
        (root / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts" / "check_tidy.sh", root / "scripts")
        shutil.copy(REPO / ".clang-tidy", root)
        self.write("lib/demo/a.hpp", "#pragma once\ninline int a_value() { return 1; }\n")
        self.write("lib/demo/a.cpp", '#include "a.hpp"\n#include <cstddef>\nint a() { return a_value(); }\n')
        self.write("lib/demo/b.cpp", "#include <vector>\nint b() { return 2; }\n")
        self.write("build/gen/generated.hpp", "#pragma once\ninline int generated() { return 3; }\n")
        self.write("lib/demo/c.cpp", '#include "gen/generated.hpp"\nint c() { return generated(); }\n')
        self.flags = "-std=c++20 -O2"
        self.write_database()

    def write(self, relative, text):
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def write_database(self):
        entries = []
        for name in ("a", "b", "c"):
            source = self.root / "lib" / "demo" / f"{name}.cpp"
            command = (f"/usr/bin/c++ -I{self.root}/lib -I{self.root}/build {self.flags} "
                       f"-o lib/{name}.o -c {source}")
            entries.append(f'{{"directory": "{self.root}/build", "command": "{command}", "file": "{source}"}}')
        self.write("build/compile_commands.json", "[\n" + ",\n".join(entries) + "\n]\n")

    def check(self, *files, cache=None):
        env = dict(os.environ, CLANG_TIDY=str(self.tools / "clang-tidy"),
                   NVFRESH_TIDY_CACHE=str(cache or self.cache))
        done = subprocess.run([str(self.root / "scripts" / "check_tidy.sh"), str(self.root / "build"), *files],
                              env=env, capture_output=True, text=True, cwd=self.root)
        return done.returncode, done.stdout + done.stderr


def counts(output):
    """(from the cache, run) of the final line, or None."""
    found = re.search(r"clean \((\d+) from the tidy cache, (\d+) run\)", output)
    return (int(found.group(1)), int(found.group(2))) if found else None


def planned(output):
    """(from the cache, to run) of the line printed before clang-tidy runs."""
    found = re.search(r"(\d+) files clean from earlier runs, (\d+) to run", output)
    return (int(found.group(1)), int(found.group(2))) if found else None


class TidyCache(unittest.TestCase):
    def setUp(self):
        self.temp = Path(tempfile.mkdtemp(prefix="nvfresh-tidy-cache-test-"))
        self.tools = self.temp / "tools"
        self.tools.mkdir()
        (self.tools / "clang-tidy").write_text(FAKE_CLANG_TIDY)
        (self.tools / "clang-tidy").chmod(0o755)
        (self.tools / "clang").symlink_to(CLANG)
        self.cache = self.temp / "cache"

    def tearDown(self):
        shutil.rmtree(self.temp)

    def tree(self, relative):
        return Tree(self.temp / relative, self.tools, self.cache)

    def test_a_clone_elsewhere_hits_and_a_header_byte_reruns_its_file(self):
        one, two = self.tree("one/nvfresh"), self.tree("two/elsewhere/nvfresh")
        time.sleep(SETTLE_S)
        status, output = one.check()
        self.assertEqual((status, counts(output)), (0, (0, 3)), output)
        status, output = two.check()
        self.assertEqual((status, counts(output)), (0, (3, 0)), output)
        two.write("lib/demo/a.hpp", "#pragma once\ninline int a_value() { return 2; }\n")
        status, output = two.check()
        self.assertEqual((status, counts(output)), (0, (2, 1)), output)

    def test_a_file_with_a_finding_runs_every_time(self):
        tree = self.tree("nvfresh")
        tree.write("lib/demo/a.hpp", "#pragma once\n// TIDY_WARN\ninline int a_value() { return 1; }\n")
        time.sleep(SETTLE_S)
        for _ in range(2):
            status, output = tree.check()
            self.assertEqual(status, 1, output)
            self.assertIn("fake finding", output)
        self.assertEqual(planned(output), (2, 1), output)

    def test_config_flags_and_named_files_change_what_runs(self):
        tree = self.tree("nvfresh")
        time.sleep(SETTLE_S)
        self.assertEqual(counts(tree.check()[1]), (0, 3))
        self.assertEqual(counts(tree.check("lib/demo/b.cpp")[1]), (1, 0))
        with open(tree.root / ".clang-tidy", "a") as config:
            config.write("# one more comment\n")
        self.assertEqual(counts(tree.check("lib/demo/b.cpp")[1]), (0, 1))
        tree.flags += " -DDEMO=1"
        tree.write_database()
        time.sleep(SETTLE_S)
        self.assertEqual(counts(tree.check()[1]), (0, 3))
        self.assertEqual(counts(tree.check()[1]), (3, 0))
        with open(tree.root / "scripts" / "check_tidy.sh", "a") as script:
            script.write("# an edit to the script itself\n")
        self.assertEqual(counts(tree.check()[1]), (0, 3))

    def test_a_configure_just_before_still_stores(self):
        # test.sh's tidy stage configures (scripts/build.sh) right before the keys are taken, and
        # a configure rewrites compile_commands.json with the same commands: the verdicts are
        # still stored, since the commands, not the file's mtime, are in the key.
        tree = self.tree("nvfresh")
        time.sleep(SETTLE_S)
        tree.write_database()
        self.assertEqual(counts(tree.check()[1]), (0, 3))
        tree.write_database()
        self.assertEqual(counts(tree.check()[1]), (3, 0))

    def test_a_new_header_that_shadows_another_reruns_its_file(self):
        # c.cpp includes "gen/generated.hpp" from build/ (the second -I); the same bytes in lib/
        # (the first -I) are now what the compiler reads: no manifest of old names may serve it.
        tree = self.tree("nvfresh")
        time.sleep(SETTLE_S)
        self.assertEqual(counts(tree.check()[1]), (0, 3))
        tree.write("lib/gen/generated.hpp", (tree.root / "build/gen/generated.hpp").read_text())
        self.assertEqual(counts(tree.check()[1]), (2, 1))

    def test_the_header_filter_sees_where_a_clone_sits(self):
        # HeaderFilterRegex '/(lib|launcher)/' matches every path of a clone under a /lib/ folder,
        # build/gen/generated.hpp too: c.cpp, which includes it, must run there again.
        plain, under_lib = self.tree("plain/nvfresh"), self.tree("var/lib/nvfresh")
        time.sleep(SETTLE_S)
        self.assertEqual(counts(plain.check()[1]), (0, 3))
        status, output = under_lib.check()
        self.assertEqual((status, counts(output)), (0, (2, 1)), output)

    def test_off_runs_everything_and_stores_nothing(self):
        tree = self.tree("nvfresh")
        time.sleep(SETTLE_S)
        for _ in range(2):
            status, output = tree.check(cache="off")
            self.assertEqual(status, 0, output)
            self.assertIn("check_tidy: 3 files of lib/ and launcher/ clean\n", output)
        self.assertFalse(self.cache.exists())


if __name__ == "__main__":
    missing = [str(tool) for tool in (CLANG,) if not tool.exists()]
    missing += [] if shutil.which("run-clang-tidy") else ["run-clang-tidy"]
    if missing:
        print(f"test_tidy_cache: SKIPPED: {', '.join(missing)} missing (Debian: clang-14, clang-tidy-14)",
              file=sys.stderr)
        sys.exit(SKIP)
    unittest.main()
