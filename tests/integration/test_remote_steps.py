"""The step cache shared through a remote cache that speaks REAPI v2: a real BuildGrid on 127.0.0.1
(tests/integration/buildgrid_server.py), real nvcc, CMake and Ninja.

Machine A builds a two-arch (80;90) TU and uploads its object and its cicc and ptxas steps.
Machine B, with an empty cache dir, builds the same checkout at the same path after a host-only
edit: the object misses locally and on the remote, and every device step is served from the
remote (one step Action per step key). The object equals a compile without any cache.
"""
import shutil

import harness
from buildgrid_server import BuildGridServer
from project import BuildTree, normalized
from test_cache import cache_stats, compare, wait_for_uploads
from test_remote_cache import machine_env, require_buildgrid
from test_step_cache import StepCacheTree

ALL_STEPS = {("compute_80", "cicc"), ("sm_80", "ptxas"), ("compute_90", "cicc"), ("sm_90", "ptxas")}


class StepsThroughBuildGrid(StepCacheTree, harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_buildgrid("remote step cache")
        harness.require_nvcc()
        cls.make_work_dir("nvfresh-remote-steps-")
        cls.counter = 0
        cls.server = BuildGridServer(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def machine(self, name, **extra):
        """One machine: its own cache dir, the shared server, the case's debug log."""
        return machine_env(self.root, name, self.server, **{"NVFRESH_LOG_FILE": str(self.log), **extra})

    def fresh_tree(self, env):
        """A new build dir at the path the last one had: another machine's checkout."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        self.env = env
        self.tree = BuildTree(self.source, self.root / "build", self.TOOL, env=env)
        self.tree.configure()

    def assert_like_uncached_compile(self):
        served = self.tree.object("k.cu.o")
        reference = self.root / "served.o"
        shutil.copy(served, reference)
        served.unlink()
        self.assertEqual(self.steps_of_build(env={"NVFRESH_CACHE": "0"}), {})
        self.assertEqual(normalized(served.read_bytes()), normalized(reference.read_bytes()),
                         "an object assembled from remote steps differs from an uncached compile")
        compared = compare(reference, served)
        self.assertEqual(compared.returncode, 0, compared.stdout.decode())

    def test_another_machine_is_served_device_steps_from_the_remote(self):
        self.env = self.machine("a")
        self.make_tree()
        self.assertEqual(self.steps_of_build(), {step: "runs" for step in ALL_STEPS})
        wait_for_uploads(self.env)  # the uploads run on after the build, detached
        a = cache_stats(self.env)
        self.assertEqual((a["remote_uploads"], a["remote_step_uploads"], a["remote_step_hits"]),
                         (1, 4, 0))

        self.set_values(HOST_TEXT='"host-2"')
        laptop = self.machine("b", NVFRESH_REMOTE_READ_ONLY="1")
        self.fresh_tree(laptop)
        self.assertEqual(self.steps_of_build(), {step: "served" for step in ALL_STEPS})
        self.assertIn(b"host-2", self.tree.object("k.cu.o").read_bytes())
        b = cache_stats(laptop)
        # The object: not in B's cache, and the remote's entry is A's (another host text).
        self.assertEqual((b["hits"], b["remote_hits"], b["remote_misses"]), (0, 0, 1))
        self.assertEqual((b["step_hits"], b["remote_step_hits"], b["step_stores"]), (4, 4, 4))
        self.assertEqual((b["remote_errors"], b["remote_uploads"], b["remote_step_uploads"],
                          b["remote_bytes_up"]), (0, 0, 0, 0))
        self.assertGreater(b["remote_bytes_down"], 0)
        self.assert_like_uncached_compile()

        # The remote steps filled B's local step cache: another host-only edit needs no server.
        self.set_values(HOST_TEXT='"host-3"')
        self.fresh_tree(dict(laptop, NVFRESH_REMOTE="grpc://127.0.0.1:1"))
        self.assertEqual(self.steps_of_build(), {step: "served" for step in ALL_STEPS})
        self.assertEqual(cache_stats(laptop)["remote_step_hits"], 4)


if __name__ == "__main__":
    harness.main()
