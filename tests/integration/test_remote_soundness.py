"""The object cache's soundness cases (test_cache.NeverServedStale) through a shared REAPI server:
a real BuildGrid on 127.0.0.1 (test_remote_cache.BuildGridServer), real nvcc, CMake and Ninja.

Each case has three machines, each with its own HOME and an empty cache dir, all building the
checkout at the same path (a container's /workspace, CI's fixed dir: the common team case) in a
fresh build dir at the same path:
  A builds the original state and uploads it;
  B builds the changed state: its lookup reaches the server, whose entry is A's, and must compile
    (0 remote hits), giving what a compile without any cache gives;
  C builds the original state again: served from the server (0 nvcc runs, 1 remote hit), equal
    to a compile without any cache. So a key that missed the change would have served B too.
One case has B and C build copies of the checkout at paths of their own (a clone, a worktree),
and one serves such a copy: objects that name no path of their tree serve every checkout.
The server is started once per class; each case's sources carry the test's name, so that no case
finds another's entries. WrongObjectsRefused makes issue 41's attacks (R1-R3) through REAPI.
"""
import json
import shutil
from pathlib import Path

import harness
from buildgrid_server import BGD
from project import Target, marked_source, markers
from test_cache import (cache_stats, events, has_include_case, host_compiler_case,
                        host_only_header_case, later_arch_header_case, shadowing_header_case)
from test_remote_cache import RemoteCase


class SharedPathCase(RemoteCase):
    """Machines of their own (HOME and cache dir) building at the one shared path."""

    def machine(self, name, **extra):
        """A machine of its own: its HOME (config file) and cache dir, the shared server."""
        home = self.root / f"home-{name}"
        home.mkdir(exist_ok=True)
        return super().machine(name, HOME=str(home), **extra)

    def build_at_the_shared_path(self, source, env, cache_args=()):
        """A fresh build dir at the path every machine uses; {object name: kind} of its build."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        tree = self.tree(source, "build", env=env, cache_args=cache_args)
        return tree, self.build(tree)

    def checkout_of(self, source, name):
        """The machine's checkout: the shared path, or a copy at a path of its own."""
        if name is None:
            return source
        shutil.rmtree(self.root / name, ignore_errors=True)
        return Path(shutil.copytree(source, self.root / name, symlinks=True))

    def remote_counts(self, env):
        stats = cache_stats(env)
        return {key: stats[f"remote_{key}"] for key in ("hits", "errors", "uploads")}


class SoundThroughTheServer(SharedPathCase):

    def check_change(self, targets, files, change, undo, expect_changed, expect_original,
                     env_changed=None, cache_args=(), name="k.cu.o", other_checkouts=False):
        """other_checkouts: B and C build copies of the checkout at paths of their own."""
        files = dict(files)
        files["k.cu"] = f"// {self.id()}\n" + files["k.cu"]
        source = self.project(targets, files)

        a = self.machine("a")
        tree, built = self.build_at_the_shared_path(source, a, cache_args)
        self.assertEqual(built, {name: "compiled"})
        self.assertTrue(expect_original(markers(tree.object(name))), markers(tree.object(name)))
        self.assertEqual(self.remote_counts(a), {"hits": 0, "errors": 0, "uploads": 1})

        change(source)
        b = self.machine("b", **(env_changed or {}))
        checkout = self.checkout_of(source, "src-b" if other_checkouts else None)
        tree, built = self.build_at_the_shared_path(checkout, b, cache_args)
        self.assertEqual(built, {name: "compiled"},
                         "a changed input must not be served from the other machine's entry")
        found = markers(tree.object(name))
        self.assertTrue(expect_changed(found),
                        f"machine B's object is not the changed one: {found}")
        self.assertEqual(self.remote_counts(b), {"hits": 0, "errors": 0, "uploads": 1})
        self.assert_same_as_uncached(tree, name, env=b)

        undo(source)
        c = self.machine("c")
        checkout = self.checkout_of(source, "src-c" if other_checkouts else None)
        tree, built = self.build_at_the_shared_path(checkout, c, cache_args)
        self.assertEqual(built, {name: "served"},
                         "the unchanged state must be served by the server")
        self.assertTrue(expect_original(markers(tree.object(name))), markers(tree.object(name)))
        self.assertEqual(self.remote_counts(c), {"hits": 1, "errors": 0, "uploads": 0})
        self.assert_same_as_uncached(tree, name, env=c)
        return tree

    def test_host_only_header_edit(self):
        self.check_change(**host_only_header_case())

    def test_later_arch_only_header_edit(self):
        self.check_change(**later_arch_header_case())

    def test_new_shadowing_header(self):
        self.check_change(**shadowing_header_case())

    def test_new_shadowing_header_in_other_checkouts(self):
        # Machines B and C have the checkout at paths of their own: the input root names the
        # header src/shadow/value.h on every machine, and the shadowing one is still seen.
        self.check_change(**shadowing_header_case(), other_checkouts=True)

    def test_has_include_turning_true(self):
        self.check_change(**has_include_case())

    def test_env_flags(self):
        # Machine B's environment adds a flag that nvcc reads (NVCC_APPEND_FLAGS): not on A's entry.
        files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
        self.check_change(
            [Target("k", "k.cu")], files, lambda s: None, lambda s: None,
            lambda m: m.get("extra") == {"appended"}, lambda m: m.get("extra") == {"none"},
            env_changed={"NVCC_APPEND_FLAGS": "-DEXTRA=appended"})

    def test_host_compiler_replaced(self):
        # The toolchain: the host compiler at the same path on both machines, of other content.
        self.check_change(**host_compiler_case(self.root / "tools" / "g++"))

    def test_verify_on_a_remote_hit(self):
        # NVFRESH_CACHE_VERIFY=1 compiles a sampled hit and compares: a remote hit too.
        files = {"k.cu": marked_source([f"// {self.id()}"], [("k", '"k"', "host,dev")])}
        source = self.project([Target("k", "k.cu")], files)
        self.build_at_the_shared_path(source, self.machine("a"))
        b = self.machine("b", NVFRESH_CACHE_VERIFY="1")
        tree, built = self.build_at_the_shared_path(source, b)
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual([event[:2] for event in events(tree.build_dir)],
                         [("compiled", "cache_verified")])
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["verified"], stats["verify_mismatches"]),
                         (1, 1, 0))

    def test_another_checkout_path_is_served(self):
        # An object that names no path of its tree serves a checkout at another path too.
        files = {"k.cu": marked_source([f"// {self.id()}", '#include "value.h"'],
                                       [("v", "VALUE", "host,dev")]),
                 "include/value.h": '#define VALUE "v1"\n'}
        first = self.project([Target("k", "k.cu")], files, "src-a")
        a = self.machine("a")
        tree = self.tree(first, "build-a", env=a)
        self.assertEqual(self.build(tree), {"k.cu.o": "compiled"})
        second = shutil.copytree(first, self.root / "src-b")
        b = self.machine("b")
        tree = self.tree(second, "build-b", env=b)
        self.assertEqual(self.build(tree), {"k.cu.o": "served"})
        self.assertEqual(self.remote_counts(b), {"hits": 1, "errors": 0, "uploads": 0})
        self.assertEqual(markers(tree.object("k.cu.o"))["v"], {"v1"})
        self.assert_same_as_uncached(tree, "k.cu.o", env=b)


class TamperingCase(SharedPathCase):
    """What issue 41's attacks need: a client that may write the server's ActionCache and CAS,
    through REAPI (reapi_tamper.py), and a case's sources whose VALUE names the case."""

    def tamper(self, *args):
        python = BGD.parent / "python"
        result = harness.run([str(python), str(Path(__file__).with_name("reapi_tamper.py")),
                              args[0], self.server.url, *map(str, args[1:])], check=True)
        return json.loads(result.stdout)

    def sources(self):
        self.tag = self.id().rsplit(".", 1)[-1]
        files = {"k.cu": marked_source([f"// {self.id()}", '#include "value.h"'],
                                       [("v", "VALUE", "host,dev")])}
        source = self.project([Target("k", "k.cu")], files)
        self.set_value(source, "1")
        return source

    def set_value(self, source, value):
        harness.write(source / "include" / "value.h", f'#define VALUE "{self.tag}-{value}"\n')

    def value_of(self, tree):
        return markers(tree.object("k.cu.o")).get("v")

    def result_actions(self):
        """{VALUE of its object: the result Action} of this case's result Actions on the server."""
        found = {}
        for action in self.tamper("actions", self.server.dir / "cas"):
            if "NVFRESH_RESULT_KEY" not in action["environment"]:
                continue
            (path,) = [p for p in action["outputs"]
                       if p not in ("nvfresh.entry", "nvfresh.signature")]
            blob = self.root / "blob"
            self.tamper("read", action["outputs"][path], blob)
            values = markers(blob).get("v", set())
            if len(values) == 1 and next(iter(values)).startswith(self.tag + "-"):
                action["object_path"] = path
                found[next(iter(values)).removeprefix(self.tag + "-")] = action
        return found

    def manifest_action(self, manifest_key):
        (action,) = [a for a in self.tamper("actions", self.server.dir / "cas")
                     if a["environment"].get("NVFRESH_MANIFEST_KEY") == manifest_key
                     and "nvfresh.manifest" in a["outputs"]]
        return action

    def forge_over_ci(self, source, ci_env):
        """R3, the consistent forgery: CI (`ci_env`) builds VALUE 1, a colleague builds 666, and
        CI's entry is rewritten line for line with the colleague's object and its digest, every
        checksum recomputed, and put with that object over CI's result. The sources say 1 again.
        Returns CI's result Action as it was found."""
        self.build_value(source, "1", ci_env)
        attacker = self.build_value(source, "666", {"NVFRESH_CACHE_DIR": str(self.root / "m")})
        forged_object = self.root / "forged.o"
        shutil.copy(attacker.object("k.cu.o"), forged_object)
        ci = self.result_actions()["1"]
        entry, forged_entry = self.root / "entry", self.root / "entry.forged"
        self.tamper("read", ci["outputs"]["nvfresh.entry"], entry)
        harness.run([harness.tool_path("remote_entry_tool"), "forge", entry, forged_object,
                     forged_entry], check=True)
        self.tamper("replace", ci["action"], "nvfresh.entry", forged_entry)
        self.tamper("replace", ci["action"], ci["object_path"], forged_object)
        self.set_value(source, "1")
        return ci

    def build_value(self, source, value, env):
        self.set_value(source, value)
        tree, built = self.build_at_the_shared_path(source, env)
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual(self.value_of(tree), {f"{self.tag}-{value}"})
        return tree


class WrongObjectsRefused(TamperingCase):
    """Issue 41's attacks on the remote cache (R1-R3), made through REAPI as a client that may
    write the server's ActionCache and CAS would (reapi_tamper.py; remote_entry_tool rewrites the
    texts, checksums recomputed). CI builds VALUE "<case>-1" and uploads; an attacker's machine
    builds VALUE "<case>-666"; a victim with the original sources must never get the attacker's
    object, except from a consistent forgery that only verify-on-hit (or a signature:
    test_remote_signing) catches (doc/manual.md)."""

    def test_a_copied_result_is_refused(self):
        # R1: the attacker's ActionResult (its entry, its object) copied onto CI's result Action.
        source = self.sources()
        self.build_value(source, "1", self.machine("ci"))
        self.build_value(source, "666", self.machine("m"))
        actions = self.result_actions()
        self.tamper("copy", actions["666"]["action"], actions["1"]["action"])

        b = self.machine("b")
        self.set_value(source, "1")
        tree, built = self.build_at_the_shared_path(source, b)
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"},
                         "an entry whose key line names another result must not be served")
        self.assertEqual(built, {"k.cu.o": "compiled"})
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["remote_refused"]), (0, 1))
        self.assert_same_as_uncached(tree, "k.cu.o", env=b)

    def test_a_relinked_manifest_entry_is_refused(self):
        # R2: CI's manifest entry on the server rewritten to name B's result key: B holds that
        # entry (VALUE 666) in its local cache.
        source = self.sources()
        self.build_value(source, "1", self.machine("ci"))
        b = self.machine("b")
        self.build_value(source, "666", b)
        actions = self.result_actions()
        manifest = self.manifest_action(actions["1"]["environment"]["NVFRESH_MANIFEST_KEY"])
        text, relinked = self.root / "manifest", self.root / "manifest.relinked"
        self.tamper("read", manifest["outputs"]["nvfresh.manifest"], text)
        harness.run([harness.tool_path("remote_entry_tool"), "relink", text, relinked,
                     actions["1"]["environment"]["NVFRESH_RESULT_KEY"],
                     actions["666"]["environment"]["NVFRESH_RESULT_KEY"]], check=True)
        self.tamper("replace", manifest["action"], "nvfresh.manifest", relinked)

        self.set_value(source, "1")
        tree, built = self.build_at_the_shared_path(source, b)
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"},
                         "an entry naming another input set's result must not be served")
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual(cache_stats(b)["remote_refused"], 1)
        self.assert_same_as_uncached(tree, "k.cu.o", env=b)

    def test_a_consistent_forgery_is_caught_by_verify(self):
        # R3: CI's entry line for line with the attacker's object and its digest, every checksum
        # recomputed: consistent, so only a reader that compiles and compares can tell.
        source = self.sources()
        ci = self.forge_over_ci(source, self.machine("ci"))

        # A reader that does not verify is served the forgery: the boundary is who may write.
        tree, built = self.build_at_the_shared_path(source, self.machine("trusting"))
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-666"}))

        b = self.machine("b", NVFRESH_CACHE_VERIFY="1")
        tree, built = self.build_at_the_shared_path(source, b)
        self.assertEqual([event[:2] for event in events(tree.build_dir)],
                         [("compiled", "cache_mismatch")],
                         "verify must compare the compile with the object the entry holds")
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})
        stats = cache_stats(b)
        self.assertEqual((stats["remote_hits"], stats["verified"], stats["verify_mismatches"]),
                         (1, 0, 1))
        # The entry was replaced by the compile: B's next build dir is served CI's object, and so
        # is a machine that asks the server, where B's upload replaced the forgery.
        b.pop("NVFRESH_CACHE_VERIFY")
        tree, built = self.build_at_the_shared_path(source, b)
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-1"}))
        self.assert_same_as_uncached(tree, "k.cu.o", env=b)
        tree, built = self.build_at_the_shared_path(source, self.machine("c"))
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-1"}))


if __name__ == "__main__":
    harness.main()
