"""The step cache's moved-lines rule, refused where lines reach cicc's outputs another way.

A host-only edit that moves the kernel's lines serves cicc "with its lines moved" (its key is its
input's code without line numbers; markers and local variables' names in its outputs are rewritten).
That is sound only while the position reaches cicc's outputs through those two channels. Each case
here opens another channel, makes such an edit, and checks that cicc runs (its input is keyed with
its line numbers) and that the object equals a compile without the step cache: a builtin that reads
the line it is called at (in a header's default argument, through std::source_location), a user's
name spelled like cicc's local variables, and code on line 1, where cicc's mark of the file's start
and of that line are one and the same.
"""
import shlex

import harness
import project
from test_step_cache import KERNEL, StepCacheTree

WHERE_H = """\
#pragma once
// Where it is called from: the default argument is evaluated at the call.
__device__ inline int called_at(int line = __builtin_LINE()) { return line; }
"""


class MovedLinesRefused(StepCacheTree, harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-step-channels-")
        cls.counter = 0

    def check_lines_moved_runs_cicc(self, kernel, options=(), headers=None):
        """Builds `kernel` (with `headers`: {name: text} in include/) for sm_80, moves its lines
        with a host-only edit, builds again: cicc runs, and the object is what a compile without
        the step cache gives. Returns why cicc ran."""
        self.make_tree(architectures="80", options=options)
        harness.write(self.source / "k.cu", kernel)
        for name, text in (headers or {}).items():
            harness.write(self.source / "include" / name, text)
        self.steps_of_build()
        before = len(self.step_events())
        self.move_kernel_down(5, kernel)
        steps = self.steps_of_build()
        self.assertEqual(steps[("compute_80", "cicc")], "runs", steps)
        details = [detail for _, _, _, tool, detail in self.step_events()[before:] if tool == "cicc"]
        self.assertIn("keyed on its input with its line numbers", details[0])
        self.assert_like_plain_compile()
        return details[0]

    def test_builtin_line_in_a_header_default_argument(self):
        kernel = KERNEL.replace('#include "values.h"\n', '#include "values.h"\n#include "where.h"\n')
        kernel = kernel.replace("out[1] = COMMON_VALUE;", "out[1] = COMMON_VALUE + called_at();")
        detail = self.check_lines_moved_runs_cicc(kernel, headers={"where.h": WHERE_H})
        self.assertIn("__builtin_LINE", detail)

    def test_source_location_in_device_code(self):
        kernel = ("#include <source_location>\n" +
                  KERNEL.replace("out[1] = COMMON_VALUE;",
                                 "out[1] = std::source_location::current().line();"))
        detail = self.check_lines_moved_runs_cicc(
            kernel, options=["-std=c++20", "--expt-relaxed-constexpr"])
        self.assertIn("__builtin_source_location", detail)

    def cicc_input_lines(self):
        """cicc's input for the tree's one object, as plain nvcc keeps it (--keep), in lines."""
        commands = harness.run(["ninja", "-C", str(self.tree.build_dir), "-t", "commands"],
                               check=True).stdout.decode().splitlines()
        command = shlex.split(next(line for line in commands if " -c " in line and "k.cu" in line))
        command = command[next(i for i, word in enumerate(command) if word.endswith("nvcc")):]
        keep = self.root / "kept"
        keep.mkdir()
        harness.run(command + ["--keep", "--keep-dir", str(keep), "-o", str(keep / "k.o")],
                    cwd=self.tree.build_dir, check=True)
        (kept,) = keep.glob("*.cpp1.ii")
        return kept.read_text().splitlines()

    def test_user_name_spelled_like_a_local_variable_of_cicc(self):
        # The name holds the number of its own line in cicc's input, as a local variable's would:
        # a rewrite that takes it for cicc's renames it, and the host compile fails.
        declared = "__device__ int __cuda_local_var_{}_1_x;\n"
        kernel = KERNEL + declared.format(0)
        self.make_tree(architectures="80")
        harness.write(self.source / "k.cu", kernel)
        line = 1 + next(i for i, text in enumerate(self.cicc_input_lines())
                        if "__cuda_local_var_0_1_x" in text)
        kernel = KERNEL + declared.format(line)
        harness.write(self.source / "k.cu", kernel)
        self.steps_of_build()
        self.move_kernel_down(5, kernel)
        steps = self.steps_of_build()
        self.assertEqual(steps[("compute_80", "cicc")], "runs", steps)
        self.assert_like_plain_compile()

    def test_code_on_line_1_moved_down_runs_cicc_without_a_false_mismatch(self):
        # cicc marks the file's start as line 1, and the code on line 1 too: a hit cannot tell
        # which its `# 1` names, and every sampled hit would report a mismatch.
        kernel = "const char* host_text();\n" + KERNEL.replace("const char* host_text();\n", "")
        self.make_tree(architectures="80")
        harness.write(self.source / "k.cu", kernel)
        self.steps_of_build()
        before = len(self.step_events())
        harness.write(self.source / "k.cu",
                      "#ifndef __CUDA_ARCH__\n#define HOST_BANNER 1\n#endif\n" + kernel)
        steps = self.steps_of_build(env={"NVFRESH_CACHE_VERIFY": "1"})
        self.assertEqual(steps[("compute_80", "cicc")], "runs", steps)
        causes = {cause for _, cause, _, tool, _ in self.step_events()[before:] if tool == "cicc"}
        self.assertNotIn("cache_mismatch", causes)
        self.assert_like_plain_compile()


if __name__ == "__main__":
    harness.main()
