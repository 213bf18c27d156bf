"""Issue 3, "must rebuild": paths that need escaping in depfiles and makefiles.

The source tree, an include directory, a header and a source file have names with a space and
a '#' (and the build tree has a space), with real nvcc, CMake, Ninja and make. nvfresh rewrites the
depfile the build tool reads, so a wrong escape shows up as a build that never settles, a header
change that rebuilds nothing, or a build error.

Seen with CMake 3.25's Ninja generator: for an object whose name has a '#', CMake writes
DEP_FILE = "CMakeFiles/odd.dir/odd_#1.cu.o.d" with the quotes, so ninja looks for a depfile
whose name starts with a quote, finds none, and records no dependencies at all (`ninja -t deps`:
#deps 0). Plain CMake + Ninja then never rebuilds that object for a header edit; here the header
scenarios pass only because nvfresh sync compares the record with the disk.
"""
import subprocess

import harness
import project

harness.require_nvcc()

ODD, PLAIN = "odd_#1.cu.o", "plain.cu.o"  # CMake turns the space of "odd #1.cu" into _
INCLUDE = "inc dir#2"
TARGETS = [project.Target("odd", "odd #1.cu", include_dirs=["include", INCLUDE]),
           project.Target("plain", "plain.cu")]
FILES = {
    "odd #1.cu": project.marked_source(['#include "odd hdr#3.h"'], [("odd", "ODD_VALUE", "host,dev")]),
    f"{INCLUDE}/odd hdr#3.h": '#define ODD_VALUE "odd1"\n',
    "plain.cu": project.marked_source([], [("plain", '"plain"', "host")]),
}


class Scenarios(project.TreeAssertions):
    SOURCE_DIR = "src dir#0"

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-paths-")
        cls.src = project.write_project(cls.work / cls.SOURCE_DIR, TARGETS, FILES)
        cls.header = cls.src / INCLUDE / "odd hdr#3.h"
        cls.tree = project.BuildTree(cls.src, cls.work / "build dir", cls.TOOL)
        cls.tree.configure()
        first = cls.tree.build()
        assert first.compiled == {ODD, PLAIN}, first.output

    def setUp(self):
        self.settle()

    def test_01_nothing_rebuilt_when_nothing_changed(self):
        self.build_exactly(set(), what="(no input changed)")
        self.assert_check_clean()

    def test_02_header_edited(self):
        harness.write(self.header, '#define ODD_VALUE "odd2"\n')
        self.build_exactly({ODD})
        self.assert_markers(ODD, {"odd": "odd2", "odd@dev": "odd2"})
        self.assert_like_clean_build(ODD)
        self.assert_check_clean()

    def test_03_header_replaced_with_an_older_mtime(self):
        harness.write(self.header, '#define ODD_VALUE "odd3"\n')
        subprocess.run(["touch", "-d", "2 days ago", str(self.header)], check=True)
        self.build_exactly({ODD})
        self.assert_markers(ODD, {"odd": "odd3", "odd@dev": "odd3"})
        self.assert_check_clean()
        self.build_exactly(set(), what="(nothing changed since)")


# CMake 3.25's Makefiles break on a '#' in the source directory itself (plain CMake, without
# nvfresh: "/bin/sh: Syntax error: Unterminated quoted string" in cmake_check_build_system).
project.add_test_case_per_tool(Scenarios, globals(), make={"SOURCE_DIR": "src dir"})


if __name__ == "__main__":
    harness.main()
