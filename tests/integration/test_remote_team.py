"""The documented team set-up (doc/examples/buildgrid-team, doc/manual.md) against real BuildGrid
0.4.4 and Redis on 127.0.0.1, with real nvcc, CMake and Ninja: only CI's endpoint writes; the
laptops' endpoint serves the same storage and refuses every write, whatever the laptop is set to;
the action cache survives a restart (Redis's append-only file, where the lru-action-cache forgets).

The servers run from the shipped files with only their ports and paths rewritten
(buildgrid_server.TeamServer). "Machines" are local cache dirs, and each test builds every
machine's tree at one path, as CI's fixed dir or a container's /workspace would. Without BuildGrid's
venv (with its redis client) or redis-server the file is skipped, loudly; under CI=true that is a
failure.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import harness
from buildgrid_server import BGD, REDIS_SERVER, TeamServer
from project import Target, marked_source, markers
from test_cache import CacheCase, cache_stats, events, wait_for_uploads

TAMPER = Path(__file__).with_name("reapi_tamper.py")


def require_team_setup():
    """A loud skip (a failure under CI=true) where BuildGrid, its redis client or Redis is
    missing."""
    missing = []
    if not BGD.exists():
        missing.append(f"BuildGrid ({BGD})")
    elif subprocess.run([str(BGD.parent / "python"), "-c", "import redis"],
                        capture_output=True).returncode != 0:
        missing.append(f"the redis client in {BGD.parent.parent}")
    if not os.access(REDIS_SERVER, os.X_OK):
        missing.append("redis-server (scripts/install_deps.sh)")
    if missing:
        harness.fail_under_ci_else_skip(
            f"{' and '.join(missing)}: not installed (scripts/install_test_tools.sh); the team "
            "set-up tests did NOT run")


class TeamCase(CacheCase):
    @classmethod
    def setUpClass(cls):
        require_team_setup()
        super().setUpClass()
        cls.server = TeamServer(cls.work)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def ci(self):
        return {"NVFRESH_CACHE_DIR": str(self.root / "cache-ci"),
                "NVFRESH_REMOTE": self.server.writer_url}

    def laptop(self, name, read_only=True):
        env = {"NVFRESH_CACHE_DIR": str(self.root / f"cache-{name}"),
               "NVFRESH_REMOTE": self.server.reader_url}
        if read_only:
            env["NVFRESH_REMOTE_READ_ONLY"] = "1"
        return env

    def sources(self):
        """k.cu (its VALUE from include/value.h) and j.cu, with this test's own text: the server is
        shared by the class's tests."""
        self.tag = self.id().rsplit(".", 1)[-1]
        files = {"k.cu": marked_source([f"// {self.id()}", '#include "value.h"'],
                                       [("v", "VALUE", "host,dev")]),
                 "j.cu": marked_source([f"// {self.id()}"], [("j", '"j1"', "host,dev")])}
        self.source = self.project([Target("j", "j.cu"), Target("k", "k.cu")], files)
        self.set_value("1")

    def set_value(self, value):
        harness.write(self.source / "include" / "value.h", f'#define VALUE "{self.tag}-{value}"\n')

    def value_of(self, tree):
        return markers(tree.object("k.cu.o")).get("v")

    def build_here(self, env, parallel="2"):
        """A fresh build dir at the test's one build path: (tree, {object: kind}, nvfresh's lines).
        The build must pass."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        tree = self.tree(self.source, "build", env=env)
        result = harness.run(["cmake", "--build", str(tree.build_dir), "--parallel", parallel],
                             env=tree.merged_env(env))
        output = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, 0, output)
        wait_for_uploads(tree.merged_env(env))  # they run on after the build, detached
        built = {name: kind for kind, _, name, _ in events(tree.build_dir)}
        return tree, built, [line for line in output.splitlines() if line.startswith("nvfresh:")]

    def remote_counts(self, env):
        stats = cache_stats(env)
        return tuple(stats[f"remote_{key}"] for key in ("hits", "misses", "errors", "uploads"))

    def ci_builds_and_a_laptop_is_served(self):
        ci = self.ci()
        _, built, lines = self.build_here(ci)
        self.assertEqual((built, lines), ({"k.cu.o": "compiled", "j.cu.o": "compiled"}, []))
        self.assertEqual(self.remote_counts(ci), (0, 2, 0, 2))

        laptop = self.laptop("laptop")
        tree, built, lines = self.build_here(laptop)
        self.assertEqual((built, lines), ({"k.cu.o": "served", "j.cu.o": "served"}, []))
        self.assertEqual(self.remote_counts(laptop), (2, 0, 0, 0))
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})
        for name in ("k.cu.o", "j.cu.o"):
            self.assert_same_as_uncached(tree, name, env=laptop)


class OnlyCiWrites(TeamCase):
    def tamper(self, *args):
        """reapi_tamper.py through the laptops' endpoint: (exit status, what it printed)."""
        result = harness.run([str(BGD.parent / "python"), str(TAMPER), args[0],
                              self.server.reader_url, *map(str, args[1:])])
        return result.returncode, (result.stdout + result.stderr).decode(errors="replace")

    def test_ci_writes_and_a_laptop_is_served(self):
        self.sources()
        self.ci_builds_and_a_laptop_is_served()

    def test_a_laptop_that_uploads_is_refused_by_the_server(self):
        self.sources()
        self.build_here(self.ci())
        # A laptop with a local edit of value.h and without NVFRESH_REMOTE_READ_ONLY: the upload
        # of its k.cu.o goes to the laptops' endpoint. One TU at a time (ninja -j1, j.cu first, as
        # the project lists it): j.cu.o is served before k.cu.o's upload is refused.
        self.set_value("666")
        rogue = self.laptop("rogue", read_only=False)
        tree, built, lines = self.build_here(rogue, parallel="1")
        self.assertEqual(built, {"k.cu.o": "compiled", "j.cu.o": "served"})
        self.assertEqual(self.value_of(tree), {f"{self.tag}-666"})
        # The uploads (k.cu's steps, then its object) run detached: the first refused one's line,
        # the server's own reason in it, is said by k.cu's compile when a step's upload was
        # refused before k.cu's store asked the remote, else left for the tree's next compile
        # that asks it: once either way. The refused uploads are the remote errors (more than
        # one when a job started before another's refusal marked the remote off).
        left = [path.read_text() for path in tree.build_dir.rglob("remote-failed.line")]
        self.assertEqual(len(lines + left), 1, (lines, left))
        self.assertIn(f"the remote cache {self.server.reader_url} failed: ", (lines + left)[0])
        self.assertIn("read-only", (lines + left)[0])
        self.assertIn("the server does not let this machine write", (lines + left)[0])
        self.assertIn("set NVFRESH_REMOTE_READ_ONLY=1", (lines + left)[0])
        hits, misses, errors, uploads = self.remote_counts(rogue)
        self.assertEqual((hits, misses, uploads), (1, 1, 0))
        self.assertGreaterEqual(errors, 1)

        # Nothing it tried to write is served: a laptop with the same edit compiles k.cu.
        other = self.laptop("other")
        tree, built, lines = self.build_here(other)
        self.assertEqual((built, lines), ({"k.cu.o": "compiled", "j.cu.o": "served"}, []))
        self.assertEqual(self.remote_counts(other), (1, 1, 0, 0))
        self.assertEqual(self.value_of(tree), {f"{self.tag}-666"})
        self.assert_same_as_uncached(tree, "k.cu.o", env=other)
        # ... and CI's object is what VALUE 1 is still served.
        self.set_value("1")
        tree, built, lines = self.build_here(self.laptop("third"))
        self.assertEqual((built, lines), ({"k.cu.o": "served", "j.cu.o": "served"}, []))
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})

    def test_a_forgery_through_the_laptops_endpoint_is_refused(self):
        # Issue 41's consistent forgery (test_remote_soundness) is what no check of nvfresh's can
        # catch; here it is tried through the laptops' endpoint as any REAPI client could.
        self.sources()
        self.build_here(self.ci())
        results = {}
        status, text = self.tamper("actions", self.server.cas)
        self.assertEqual(status, 0, text)
        for action in json.loads(text):
            if "NVFRESH_RESULT_KEY" in action["environment"]:
                (path,) = [p for p in action["outputs"] if p != "nvfresh.entry"]
                results[Path(path).name] = (action["action"], path)
        self.assertLessEqual({"k.cu.o", "j.cu.o"}, set(results), results)
        self.set_value("666")
        attacker, _, _ = self.build_here({"NVFRESH_CACHE_DIR": str(self.root / "cache-m")})
        forged = self.root / "forged.o"
        shutil.copy(attacker.object("k.cu.o"), forged)

        k_action, k_path = results["k.cu.o"]
        status, text = self.tamper("replace", k_action, k_path, forged)
        self.assertNotEqual(status, 0, f"the CAS write was accepted: {text}")
        self.assertIn("PERMISSION_DENIED", text)
        # An ActionResult write alone (j's result over k's Action) is refused too.
        status, text = self.tamper("copy", results["j.cu.o"][0], k_action)
        self.assertNotEqual(status, 0, f"UpdateActionResult was accepted: {text}")
        self.assertIn("UNIMPLEMENTED", text)

        self.set_value("1")
        tree, built, _ = self.build_here(self.laptop("victim"))
        self.assertEqual(built, {"k.cu.o": "served", "j.cu.o": "served"})
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})
        self.assert_same_as_uncached(tree, "k.cu.o", env=self.laptop("victim"))


class SurvivesARestart(TeamCase):
    def test_ci_results_are_served_after_a_restart(self):
        self.sources()
        self.ci_builds_and_a_laptop_is_served()
        # Redis and both BuildGrids stopped and started again with the same configuration.
        self.server.stop()
        self.server.start()
        laptop = self.laptop("after-restart")
        tree, built, lines = self.build_here(laptop)
        self.assertEqual((built, lines), ({"k.cu.o": "served", "j.cu.o": "served"}, []))
        self.assertEqual(self.remote_counts(laptop), (2, 0, 0, 0))
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})
        for name in ("k.cu.o", "j.cu.o"):
            self.assert_same_as_uncached(tree, name, env=laptop)


if __name__ == "__main__":
    harness.main()
