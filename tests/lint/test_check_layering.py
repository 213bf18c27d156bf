#!/usr/bin/env python3
"""scripts/check_layering.py on small trees: an include up a level and an include cycle inside a
folder are found, an ordered folder passes."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_layering.py"


def check(files):
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            path = Path(root) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        run = subprocess.run([sys.executable, str(SCRIPT), root], capture_output=True, text=True)
        return run.returncode, run.stdout + run.stderr


class CheckLayering(unittest.TestCase):
    def test_ordered_modules_pass(self):
        code, output = check({
            "lib/cache/a.hpp": '#include "util/x.hpp"\n',
            "lib/cache/b.hpp": '#include "cache/a.hpp"\n',
            "lib/cache/b.cpp": '#include "cache/b.hpp"\n#include "cache/a.hpp"\n',
            "lib/util/x.hpp": "",
        })
        self.assertEqual(code, 0, output)

    def test_include_up_a_level_is_found(self):
        code, output = check({"lib/util/x.hpp": '#include "cache/a.hpp"\n', "lib/cache/a.hpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("util (level 0) may not include cache", output)

    def test_cycle_inside_a_folder_is_found(self):
        # object_cache.hpp includes remote_cache.hpp; remote_cache.cpp includes object_cache.hpp.
        code, output = check({
            "lib/cache/object_cache.hpp": '#include "cache/remote_cache.hpp"\n',
            "lib/cache/remote_cache.hpp": "",
            "lib/cache/remote_cache.cpp": '#include "cache/remote_cache.hpp"\n'
                                          '#include "cache/object_cache.hpp"\n',
        })
        self.assertEqual(code, 1)
        self.assertIn("cache/: an arrow back up inside the folder: the modules object_cache, "
                      "remote_cache include each other", output)

    def test_a_longer_cycle_is_named_once(self):
        code, output = check({
            "lib/step/a.hpp": '#include "step/b.hpp"\n',
            "lib/step/b.hpp": '#include "step/c.hpp"\n',
            "lib/step/c.cpp": '#include "step/a.hpp"\n',
        })
        self.assertEqual(code, 1)
        self.assertEqual(output.count("arrow back up"), 1, output)
        self.assertIn("the modules a, b, c", output)


if __name__ == "__main__":
    unittest.main()
