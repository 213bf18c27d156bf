"""Issue 3, "must rebuild": a header saved while its translation unit compiles.

GNU make and ninja < 1.12 compare the object's mtime with the header's, so an edit made after the
compile read the header but before it finished leaves a stale object that no later build fixes.
nvfresh's race guard must make the NEXT ordinary build recompile it with every build tool (Debian
ninja 1.11, PyPI ninja >= 1.12, GNU make), and the record must say it cannot be trusted.

The compile is made observable with a host compiler wrapper (CMAKE_CUDA_HOST_COMPILER): after its
first call for race.cu (nvcc's host preprocessing, which reads the header) it announces itself and
waits; the test edits the header and lets it go, so the later passes read the new text: the
raced object really is a mixture of both versions.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import project  # noqa: E402

harness.require_nvcc()

RACE, PLAIN = "race.cu.o", "plain.cu.o"
TARGETS = [project.Target("race", "race.cu"), project.Target("plain", "plain.cu")]
FILES = {
    "race.cu": project.marked_source(['#include "raced.h"'], [("race", "RACED_VALUE", "host,dev")]),
    "include/raced.h": '#define RACED_VALUE "v1"\n',
    "plain.cu": project.marked_source([], [("plain", '"plain"', "host")]),
}

# mkdir is atomic and, unlike a stat or open, not something nvfresh's tracer records: the wrapper
# pauses once, for the first call that names race.cu after the test created state/armed.


class RaceScenario(project.TreeAssertions):

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-race-")
        cls.src = project.write_project(cls.work / "src", TARGETS, FILES)
        cls.state = cls.work / "state"
        cls.state.mkdir()
        host_cxx = project.write_script(cls.work / "hostcc" / "g++",
                                        project.PAUSING_HOST_COMPILER.format(state=cls.state, version=1))
        cls.tree = project.BuildTree(cls.src, cls.work / "build", cls.TOOL,
                                     cache_args=[f"-DCMAKE_CUDA_HOST_COMPILER={host_cxx}"])
        cls.tree.configure()
        first = cls.tree.build()
        assert first.compiled == {RACE, PLAIN}, first.output

    def test_header_edited_while_its_unit_compiles(self):
        header = self.src / "include/raced.h"
        harness.write(header, '#define RACED_VALUE "v2"\n')
        raced = project.build_with_edit_during_compile(self, self.tree, self.state, header,
                                                       '#define RACED_VALUE "v3"\n')
        self.assertEqual(raced.compiled, {RACE}, raced.output)
        found = project.markers(self.tree.object(RACE))
        mixed = found.get("race", set()) | found.get("race@dev", set())
        if not self.TOOL.launcher:  # ccache first preprocesses (paused there): every pass reads v3
            self.assertEqual(mixed, {"v2", "v3"}, f"the race was not real: passes read {found}")

        check = self.tree.check()
        self.assertEqual(check.returncode, 1, check.stdout.decode())
        explain = self.tree.explain(RACE).stdout.decode()
        self.assertIn("NOT trusted", explain)
        self.assertIn("raced.h changed while the object compiled", explain)
        self.assertRegex(explain, r"(?m)^  .*\braced\b.*raced\.h changed while the object compiled")

        self.build_exactly({RACE}, what="(the build after the raced one)")
        self.assert_markers(RACE, {"race": "v3", "race@dev": "v3"})
        explain = self.tree.explain(RACE).stdout.decode()
        self.assertIn("trusted", explain)
        self.assertNotIn("NOT trusted", explain)
        self.assert_like_clean_build(RACE)
        self.assert_check_clean()
        self.build_exactly(set(), what="(nothing changed since)")


project.add_test_case_per_tool(RaceScenario, globals())


if __name__ == "__main__":
    harness.main()
