"""One top-level handler: an unexpected error never aborts nvfresh.

The hostile input is a working directory that was removed (a build tool's `cd` into a tree another
job deleted): std::filesystem::current_path() throws there.
- every subcommand that needs the working directory: one line `nvfresh <command>: <what>` and exit 2
  (it used to be std::terminate's "terminate called after throwing ..." and SIGABRT, 134);
- `cache stats`, which reads the cache dir alone, needs no working directory and says its stats;
- a compile: the last resort runs nvcc itself with the untouched arguments (it used to print the error
  and exit 127 without running nvcc at all).
"""
import tempfile

import harness

SUBCOMMANDS = [["check"], ["stats"], ["rdeps", "k.h"], ["explain", "a.o"]]
KERNEL_SOURCE = "__global__ void add_one(int* p) { p[threadIdx.x] += 1; }\n"


def run_in_removed_directory(command, env=None):
    """Runs `command` with a working directory that no longer exists (a shell enters it, removes it,
    then becomes the command)."""
    gone = tempfile.mkdtemp(prefix="nvfresh-gone-")
    wrapper = ["sh", "-c", 'cd "$0" && rmdir "$0" && exec "$@"', gone, *command]
    result = harness.run(wrapper, env=env)
    return result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")


class TopLevelErrors(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-top-level-")
        self.state = {"XDG_STATE_HOME": str(self.work / "state"), "XDG_CACHE_HOME": str(self.work / "cache")}

    def test_a_subcommand_that_throws_prints_one_line_and_exits_2(self):
        for command in SUBCOMMANDS:
            with self.subTest(command=command):
                code, _, stderr = run_in_removed_directory([harness.nvfresh_bin(), *command], self.state)
                self.assertEqual(code, 2, stderr)
                self.assertEqual(stderr.splitlines(), [f"nvfresh {command[0]}: filesystem error: cannot get current "
                                                       "path: No such file or directory"])

    def test_cache_stats_needs_no_working_directory(self):
        code, stdout, stderr = run_in_removed_directory([harness.nvfresh_bin(), "cache", "stats"],
                                                        self.state)
        self.assertEqual((code, stderr), (0, ""))
        self.assertTrue(stdout.startswith("nvfresh cache: /"), stdout)
        self.assertIn("  entries      0", stdout)

    def test_a_compile_that_throws_runs_nvcc_with_the_untouched_arguments(self):
        nvcc = harness.require_nvcc()
        harness.write(self.work / "k.cu", KERNEL_SOURCE)
        obj = self.work / "k.o"
        args = [nvcc, "-c", "-arch=sm_80", str(self.work / "k.cu"), "-o", str(obj)]
        plain_code, _, plain_stderr = run_in_removed_directory(args)
        self.assertEqual(plain_code, 0, plain_stderr)
        obj.unlink()
        code, stdout, stderr = run_in_removed_directory([harness.nvfresh_bin(), *args], self.state)
        self.assertEqual(code, 0, stderr)
        self.assertTrue(obj.exists(), "nvcc did not run")
        # nvcc's own complaints about the missing directory, as plain nvcc prints them, and nvfresh's
        # lines (the compile path's fallback fails there too; then the last resort runs nvcc).
        ours = [line for line in stderr.splitlines() if line.startswith("nvfresh:")]
        self.assertEqual([line for line in stderr.splitlines() if not line.startswith("nvfresh:")],
                         plain_stderr.splitlines())
        self.assertTrue(ours and all(line.endswith("(ran the compiler without nvfresh)") for line in ours), stderr)
        code, stdout, _ = run_in_removed_directory([harness.nvfresh_bin(), nvcc, "--version"], self.state)
        self.assertEqual(code, 0)
        self.assertIn("Cuda compilation tools", stdout)


if __name__ == "__main__":
    harness.main()
