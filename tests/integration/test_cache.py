"""nvfresh's object cache with real nvcc, CMake, Ninja and make (issue 11).

Every scenario judges objects by content: markers (NVMARK strings in host and device code), and
`nvfresh compare` against a compile of the same tree without the cache. A build tree reports what
each compile was in its events log: compiled, served (from the cache), skipped.

The staleness scenarios build state A in one build tree (the cache stores it), change one thing,
and build a FRESH build tree of the changed source: that tree has no record, so only the cache key
stands between it and a stale object. Then they change the thing back and build another fresh
tree, which must be served: the scenario proves that the cache would have served, had the key
missed the change.
"""
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import harness
import project
from project import BuildTree, Target, marked_source, markers

NVFRESH = harness.nvfresh_bin()


def events(build_dir):
    """(kind, cause, object name, detail) of every compile event of a build tree, oldest first."""
    log = Path(build_dir) / ".nvfresh" / "events.log"
    out = []
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            fields = line.split("\t")
            if len(fields) == 6 and fields[1] != "passthrough":
                out.append((fields[1], fields[2], Path(fields[4]).name, fields[5]))
    return out


def kinds(build_dir, since=0):
    """{object name: kind} of the events after the first `since`."""
    return {name: kind for kind, _, name, _ in events(build_dir)[since:]}


def cache_stats(env):
    result = harness.run([NVFRESH, "cache", "stats", "--json"], env=env, check=True)
    return json.loads(result.stdout)


def wait_for_uploads(env):
    """Waits until the background uploads of the cache dir of `env` are done (each job's dir is
    removed when it ends, sent or not); no time limit: a job that never ends fails the test by
    ctest's timeout."""
    uploads = Path(env["NVFRESH_CACHE_DIR"]) / "uploads"
    while uploads.exists() and any(p.name.startswith("job-") for p in uploads.iterdir()):
        time.sleep(0.05)


def components(path):
    """The component names nvfresh's digest finds in an object ("sm_90 cubin", "host code", ...)."""
    result = harness.run([NVFRESH, "compare", str(path), str(path)], check=True).stdout.decode()
    return {" ".join(line.split()[1:-1]) for line in result.splitlines() if line.startswith("same ")}


def compare(a, b):
    return harness.run([NVFRESH, "compare", str(a), str(b)])


# The soundness cases that ccache's `nvcc -E` key misses, as the arguments of a check_change: the
# project, the change and its undo, and what the changed and the original objects' markers show.
# NeverServedStale runs them in one cache; test_remote_soundness through a shared server.
def host_only_header_case():
    """A header that only the host pass reads."""
    files = {"k.cu": marked_source(["#ifndef __CUDA_ARCH__", '#include "host_only.h"', "#endif"],
                                   [("k", '"dev"', "dev")]) +
                    "#ifndef __CUDA_ARCH__\nHOST_MARK(h, HOST_VALUE)\n#endif\n",
             "include/host_only.h": '#define HOST_VALUE "h1"\n'}
    return dict(
        targets=[Target("k", "k.cu")], files=files,
        change=lambda s: harness.write(s / "include" / "host_only.h", '#define HOST_VALUE "h2"\n'),
        undo=lambda s: harness.write(s / "include" / "host_only.h", '#define HOST_VALUE "h1"\n'),
        expect_changed=lambda m: m.get("h") == {"h2"}, expect_original=lambda m: m.get("h") == {"h1"})


def later_arch_header_case():
    """Two arches; a header that only the sm_90 pass reads."""
    text = ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n#include \"later.h\"\n#else\n"
            "#define LATER \"base\"\n#endif\n")
    files = {"k.cu": marked_source([text], [("late", "LATER", "dev")]),
             "include/later.h": '#define LATER "v1"\n'}
    return dict(
        targets=[Target("k", "k.cu", architectures="80;90")], files=files,
        change=lambda s: harness.write(s / "include" / "later.h", '#define LATER "v2"\n'),
        undo=lambda s: harness.write(s / "include" / "later.h", '#define LATER "v1"\n'),
        expect_changed=lambda m: m.get("late@dev") == {"base", "v2"},
        expect_original=lambda m: m.get("late@dev") == {"base", "v1"})


def shadowing_header_case():
    """A new header in an earlier -I directory shadows the one the compile read."""
    files = {"k.cu": marked_source(['#include "value.h"'], [("v", "VALUE", "host,dev")]),
             "include/value.h": '#define VALUE "deep"\n', "shadow/keep.txt": ""}
    return dict(
        targets=[Target("k", "k.cu", include_dirs=["shadow", "include"])], files=files,
        change=lambda s: harness.write(s / "shadow" / "value.h", '#define VALUE "shadow"\n'),
        undo=lambda s: os.unlink(s / "shadow" / "value.h"),
        expect_changed=lambda m: m.get("v") == {"shadow"},
        expect_original=lambda m: m.get("v") == {"deep"})


def has_include_case():
    """A __has_include that turns true."""
    text = ('#if __has_include("optional.h")\n#include "optional.h"\n#else\n'
            '#define OPT "absent"\n#endif\n')
    files = {"k.cu": marked_source([text], [("o", "OPT", "host,dev")])}
    return dict(
        targets=[Target("k", "k.cu")], files=files,
        change=lambda s: harness.write(s / "include" / "optional.h", '#define OPT "present"\n'),
        undo=lambda s: os.unlink(s / "include" / "optional.h"),
        expect_changed=lambda m: m.get("o") == {"present"},
        expect_original=lambda m: m.get("o") == {"absent"})


def host_compiler_case(wrapper):
    """The host compiler at the same path (`wrapper`), of other content."""
    def write_wrapper(tag):
        project.write_script(wrapper, f'#!/bin/sh\nexec /usr/bin/g++ -DHOSTCC_TAG=\'"{tag}"\' "$@"\n')
    write_wrapper("t1")
    files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
    return dict(
        targets=[Target("k", "k.cu")], files=files,
        change=lambda s: write_wrapper("t2"), undo=lambda s: write_wrapper("t1"),
        expect_changed=lambda m: m.get("hostcc") == {"t2"},
        expect_original=lambda m: m.get("hostcc") == {"t1"},
        cache_args=[f"-DCMAKE_CUDA_HOST_COMPILER={wrapper}"])


class CacheCase(project.WorkDirPerClass, harness.unittest.TestCase):
    TOOL = project.NINJA

    @classmethod
    def setUpClass(cls):
        cls.make_work_dir("nvfresh-cache-")
        cls.counter = 0

    def setUp(self):
        type(self).counter += 1
        self.root = self.work / f"case{self.counter}"
        self.root.mkdir()
        self.cache_dir = self.root / "cache"
        self.env = {"NVFRESH_CACHE_DIR": str(self.cache_dir)}

    def project(self, targets, files, name="src"):
        return project.write_project(self.root / name, targets, files)

    def tree(self, source, name, tool=None, env=None, cache_args=()):
        merged = dict(self.env)
        merged.update(env or {})
        tree = BuildTree(source, self.root / name, tool or self.TOOL, cache_args=cache_args,
                         env=merged)
        tree.configure()
        return tree

    def build(self, tree, env=None):
        """Builds and returns {object name: kind} of what this build did."""
        before = len(events(tree.build_dir))
        tree.build(env=env)
        merged = tree.merged_env(env)
        if "NVFRESH_REMOTE" in merged:
            wait_for_uploads(merged)
        return kinds(tree.build_dir, before)

    def assert_same_as_uncached(self, tree, name, env=None):
        """The object equals what nvcc gives for this tree without any cache (nvfresh compare)."""
        served = tree.object(name)
        reference = self.root / (tree.build_dir.name + "-" + name + ".reference")
        shutil.copy(served, reference)
        served.unlink()
        merged = {"NVFRESH_CACHE": "0"}
        merged.update(env or {})
        tree.build(env=merged)
        result = compare(reference, served)
        self.assertEqual(result.returncode, 0,
                         f"{name} (served) differs from an uncached compile:\n{result.stdout.decode()}")


class ServedAcrossTrees(CacheCase):
    """The repeats a cache exists for: a branch switch and back, a second build dir, clean."""

    def two_kernels(self):
        files = {"a.cu": marked_source(['#include "value.h"'], [("a", "VALUE", "host,dev")]),
                 "b.cu": marked_source([], [("b", '"b1"', "host,dev")]),
                 "include/value.h": '#define VALUE "A"\n'}
        return self.project([Target("ka", "a.cu"), Target("kb", "b.cu")], files)

    def test_branch_switch_and_back_is_served(self):
        source = self.two_kernels()
        tree = self.tree(source, "build")
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        harness.write(source / "include" / "value.h", '#define VALUE "B"\n')  # branch B
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"B"})
        harness.write(source / "include" / "value.h", '#define VALUE "A"\n')  # back on A
        self.assertEqual(self.build(tree), {"a.cu.o": "served"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"A"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a@dev"], {"A"})
        self.assert_same_as_uncached(tree, "a.cu.o")
        explained = tree.explain(str(tree.object("a.cu.o"))).stdout.decode()
        self.assertIn("served from the cache (entry ", explained)
        self.assertIn(f"in {tree.build_dir.resolve()})", explained)
        check = tree.check()
        self.assertEqual(check.returncode, 0, check.stdout.decode())

    def test_second_build_dir_and_clean_are_served(self):
        source = self.two_kernels()
        first = self.tree(source, "debug-dir")
        self.build(first)
        # nvcc's large tools (cicc, ptxas: tens of MB) are hashed once per user, not once per tree:
        # their stat-keyed hashes go to the cache directory's hash cache, and the tree's gets none.
        # (Two compiles running side by side may both hash a tool before either wrote its line.)
        cicc_lines = (self.cache_dir / "hash-cache").read_text().count("/nvvm/bin/cicc\n")
        self.assertGreaterEqual(cicc_lines, 1)
        tree_cache = first.build_dir / ".nvfresh" / "hash-cache"
        self.assertNotIn("/nvvm/bin/cicc", tree_cache.read_text() if tree_cache.exists() else "")
        second = self.tree(source, "release-dir")
        self.assertEqual(self.build(second), {"a.cu.o": "served", "b.cu.o": "served"})
        self.assertEqual((self.cache_dir / "hash-cache").read_text().count("/nvvm/bin/cicc\n"),
                         cicc_lines, "the second tree found cicc's hash; it did not hash it again")
        for name in ("a.cu.o", "b.cu.o"):
            self.assertEqual(compare(first.object(name), second.object(name)).returncode, 0)
        self.assert_same_as_uncached(second, "b.cu.o")
        second.build(target="clean")
        self.assertEqual(self.build(second), {"a.cu.o": "served", "b.cu.o": "served"})
        # The served object is a normal record: an edit after it compiles, as after a compile.
        harness.write(source / "b.cu", marked_source([], [("b", '"b2"', "host,dev")]))
        self.assertEqual(self.build(second), {"b.cu.o": "compiled"})
        self.assertEqual(markers(second.object("b.cu.o"))["b"], {"b2"})
        stats = cache_stats(self.env)
        self.assertGreaterEqual(stats["hits"], 4)
        self.assertEqual(stats["entries"], 3)

    def test_another_checkout_at_another_path_is_served(self):
        source = self.two_kernels()
        self.build(self.tree(source, "build"))
        clone = self.root / "clone-at-another-path"
        shutil.copytree(source, clone)
        tree = self.tree(clone, "clone-build")
        self.assertEqual(self.build(tree), {"a.cu.o": "served", "b.cu.o": "served"})
        self.assert_same_as_uncached(tree, "a.cu.o")

    def test_makefiles_branch_switch_and_back(self):
        if project.require_tool(project.MAKE):
            self.skipTest(project.require_tool(project.MAKE))
        source = self.two_kernels()
        tree = self.tree(source, "make-build", tool=project.MAKE)
        self.build(tree)
        harness.write(source / "include" / "value.h", '#define VALUE "B"\n')
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled"})
        harness.write(source / "include" / "value.h", '#define VALUE "A"\n')
        self.assertEqual(self.build(tree), {"a.cu.o": "served"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"A"})


class RestoredByTheRecord(CacheCase):
    """After a clean, nothing but the objects changed: each comes back from the entry its record
    names (stored from it, or served as it), checked against the record's hash, without the
    manifest's lookup. Anything else changed, and the manifest decides, as before."""

    def restored(self, tree, since):
        return {name: "the object its record names" in detail
                for _, _, name, detail in events(tree.build_dir)[since:]}

    def test_clean_restores_the_objects_the_records_name(self):
        files = {"a.cu": marked_source(['#include "value.h"'], [("a", "VALUE", "host,dev")]),
                 "b.cu": marked_source([], [("b", '"b1"', "host,dev")]),
                 "include/value.h": '#define VALUE "A"\n'}
        source = self.project([Target("ka", "a.cu"), Target("kb", "b.cu")], files)
        tree = self.tree(source, "build")
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        compiled = {name: tree.object(name).read_bytes() for name in ("a.cu.o", "b.cu.o")}
        for round_ in ("records of the compiles", "records of the restores"):
            tree.build(target="clean")
            before = len(events(tree.build_dir))
            self.assertEqual(self.build(tree), {"a.cu.o": "served", "b.cu.o": "served"}, round_)
            self.assertEqual(self.restored(tree, before), {"a.cu.o": True, "b.cu.o": True}, round_)
            for name, data in compiled.items():
                self.assertEqual(tree.object(name).read_bytes(), data, f"{name}, {round_}")
            check = tree.check()
            self.assertEqual(check.returncode, 0, check.stdout.decode())
        self.assertEqual(self.build(tree), {}, "restored objects are skipped as compiled ones")
        # An edit and a clean: a.cu.o's record vouches for nothing now, the manifest has no entry
        # for value.h "B": compiled. b.cu.o is restored.
        harness.write(source / "include" / "value.h", '#define VALUE "B"\n')
        tree.build(target="clean")
        before = len(events(tree.build_dir))
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "served"})
        self.assertEqual(self.restored(tree, before), {"a.cu.o": False, "b.cu.o": True})
        self.assertEqual(markers(tree.object("a.cu.o"))["a"], {"B"})
        self.assertEqual(markers(tree.object("a.cu.o"))["a@dev"], {"B"})
        # The entries gone: nvcc runs, and gives the same bytes again.
        harness.run([NVFRESH, "cache", "clear"], env=self.env, check=True)
        tree.build(target="clean")
        self.assertEqual(self.build(tree), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        first = self.root / "b-first-compile.o"
        first.write_bytes(compiled["b.cu.o"])
        self.assertEqual(compare(first, tree.object("b.cu.o")).returncode, 0)


class NeverServedStale(CacheCase):
    """What ccache's `nvcc -E` key misses. Each: A stored, a change, a fresh tree compiles it, and
    the change undone is served again (so the test would see a stale hit)."""

    def check_change(self, targets, files, change, undo, expect_changed, expect_original,
                     env_changed=None, name="k.cu.o", cache_args=()):
        source = self.project(targets, files)
        first = self.tree(source, "a1", cache_args=cache_args)
        self.assertEqual(self.build(first), {name: "compiled"})
        self.assertTrue(expect_original(markers(first.object(name))), markers(first.object(name)))
        change(source)
        changed = self.tree(source, "b1", env=env_changed, cache_args=cache_args)
        self.assertEqual(self.build(changed, env=env_changed), {name: "compiled"},
                         "a changed input must not be served from the cache")
        found = markers(changed.object(name))
        self.assertTrue(expect_changed(found), f"the fresh tree's object is not the changed one: {found}")
        undo(source)
        again = self.tree(source, "a2", cache_args=cache_args)
        self.assertEqual(self.build(again), {name: "served"}, "the unchanged state must be served")
        self.assertTrue(expect_original(markers(again.object(name))), markers(again.object(name)))

    def test_host_only_header_edit(self):
        self.check_change(**host_only_header_case())

    def test_later_arch_only_header_edit(self):
        self.check_change(**later_arch_header_case())

    def test_new_shadowing_header(self):
        self.check_change(**shadowing_header_case())

    def test_has_include_turning_true(self):
        self.check_change(**has_include_case())

    def test_env_flags(self):
        files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
        env = {"NVCC_APPEND_FLAGS": "-DEXTRA=appended"}
        source = self.project([Target("k", "k.cu")], files)
        first = self.tree(source, "a1")
        self.build(first)
        changed = self.tree(source, "b1", env=env)
        self.assertEqual(self.build(changed, env=env), {"k.cu.o": "compiled"})
        self.assertEqual(markers(changed.object("k.cu.o"))["extra"], {"appended"})
        again = self.tree(source, "a2")
        self.assertEqual(self.build(again), {"k.cu.o": "served"})
        self.assertEqual(markers(again.object("k.cu.o"))["extra"], {"none"})

    def test_env_arch(self):
        files = {"k.cu": marked_source([], [("k", '"k"', "dev")])}
        env = {"NVCC_PREPEND_FLAGS": "-gencode arch=compute_90,code=sm_90"}
        source = self.project([Target("k", "k.cu")], files)
        self.build(self.tree(source, "a1"))
        changed = self.tree(source, "b1", env=env)
        self.assertEqual(self.build(changed, env=env), {"k.cu.o": "compiled"})
        self.assertIn("sm_90 cubin", components(changed.object("k.cu.o")))
        again = self.tree(source, "a2")
        self.assertEqual(self.build(again), {"k.cu.o": "served"})
        self.assertNotIn("sm_90 cubin", components(again.object("k.cu.o")))

    def test_host_compiler_replaced(self):
        self.check_change(**host_compiler_case(self.root / "tools" / "g++"))

    def test_include_dir_symlink_retargeted(self):
        files = {"k.cu": marked_source(['#include "linked.h"'], [("l", "LINKED", "host,dev")]),
                 "inc_a/linked.h": '#define LINKED "a"\n', "inc_b/linked.h": '#define LINKED "b"\n'}
        source = self.root / "src"
        project.write_project(source, [Target("k", "k.cu", include_dirs=["inc", "include"])], files)
        (source / "inc").symlink_to("inc_a")
        self.check_change(
            [Target("k", "k.cu", include_dirs=["inc", "include"])], files,
            lambda s: project.retarget_symlink(s / "inc", "inc_b"),
            lambda s: project.retarget_symlink(s / "inc", "inc_a"),
            lambda m: m.get("l") == {"b"}, lambda m: m.get("l") == {"a"})


class PathBoundObjects(CacheCase):
    """-g names the build directory in the host DWARF: such an object serves only its own tree."""

    def test_debug_object_serves_only_its_own_tree(self):
        files = {"k.cu": marked_source([], [("k", '"k"', "host,dev")])}
        source = self.project([Target("k", "k.cu", options=["-g"])], files)
        first = self.tree(source, "dbg1")
        self.assertEqual(self.build(first), {"k.cu.o": "compiled"})
        second = self.tree(source, "dbg2")
        self.assertEqual(self.build(second), {"k.cu.o": "compiled"},
                         "a -g object names its build directory: another tree must compile its own")
        self.assertNotIn(str(first.build_dir).encode(), second.object("k.cu.o").read_bytes())
        first.build(target="clean")
        self.assertEqual(self.build(first), {"k.cu.o": "served"})
        self.assert_same_as_uncached(first, "k.cu.o")


# Issue 26: what real projects' objects name. nvcc 13.0 writes __FILE__ of host code (error-check
# macros), of device code (assert, printf) and -lineinfo's file table as the source's absolute path:
# such objects name the checkout, never the build dir.
FILE_NAMING = {
    "host.cu": """#include <cstdio>
#include <cuda_runtime.h>
#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \\
  std::fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__, cudaGetErrorString(e_)); } } while (0)
__global__ void host_k(int* p) { p[0] = 1; }
void run_host(int* p) { host_k<<<1, 1>>>(p); CUDA_CHECK(cudaGetLastError()); }
""",
    "device.cu": """#include <cassert>
#include <cstdio>
__global__ void device_k(int* p) { assert(p != nullptr); printf("%s\\n", __FILE__); p[0] = 1; }
""",
    "lineinfo.cu": """__global__ void lineinfo_k(int* p) { p[threadIdx.x] = threadIdx.x; }
""",
}
FILE_NAMING_OBJECTS = {"host.cu.o", "device.cu.o", "lineinfo.cu.o"}


class ObjectsNamingTheCheckout(CacheCase):
    """An object that names only the checkout serves every build dir of it (0 nvcc runs), equal to
    a clean compile there; another checkout (a clone, a git worktree) only with
    NVFRESH_CACHE_ACROSS_CHECKOUTS=1, and then says so."""

    def checkout(self, name="src"):
        targets = [Target("host", "host.cu"), Target("device", "device.cu"),
                   Target("lineinfo", "lineinfo.cu", options=["-lineinfo"])]
        return self.project(targets, FILE_NAMING, name)

    def test_second_build_dir_is_served(self):
        source = self.checkout()
        first = self.tree(source, "build-a")
        self.assertEqual(self.build(first), dict.fromkeys(FILE_NAMING_OBJECTS, "compiled"))
        self.assertIn(str(source / "host.cu").encode(), first.object("host.cu.o").read_bytes(),
                      "the host object names its source (__FILE__): the case this test is about")
        second = self.tree(source, "build-b")
        self.assertEqual(self.build(second), dict.fromkeys(FILE_NAMING_OBJECTS, "served"))
        for name in sorted(FILE_NAMING_OBJECTS):
            self.assert_same_as_uncached(second, name)

    def test_build_dir_through_a_symlink_is_served(self):
        source = self.checkout()
        self.build(self.tree(source, "build-a"))
        (self.root / "real-b").mkdir()
        (self.root / "link-b").symlink_to(self.root / "real-b")
        linked = self.tree(source, "link-b")
        self.assertEqual(self.build(linked), dict.fromkeys(FILE_NAMING_OBJECTS, "served"))
        self.assert_same_as_uncached(linked, "host.cu.o")

    def git_worktree(self, source, name):
        def git(*args, cwd=source):
            harness.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                        check=True)
        git("init", "-q")
        git("add", ".")
        git("commit", "-q", "-m", "checkout")
        git("worktree", "add", "-q", str(self.root / name))
        return self.root / name

    def test_another_checkout_only_with_the_setting(self):
        source = self.checkout()
        self.build(self.tree(source, "build"))
        clone = self.git_worktree(source, "worktree")
        plain = self.tree(clone, "worktree-build")
        self.assertEqual(self.build(plain), {"host.cu.o": "compiled", "device.cu.o": "compiled",
                                             "lineinfo.cu.o": "compiled"},
                         "an object naming the other checkout is not what this tree's compile gives")
        self.assertNotIn(str(source).encode(), plain.object("host.cu.o").read_bytes())
        across = {"NVFRESH_CACHE_ACROSS_CHECKOUTS": "1"}
        second = shutil.copytree(source, self.root / "clone", ignore=shutil.ignore_patterns(".git"))
        tree = self.tree(second, "clone-build", env=across)
        self.assertEqual(self.build(tree), dict.fromkeys(FILE_NAMING_OBJECTS, "served"))
        # The newest entry that matches is served: the worktree's or the first checkout's.
        said = re.compile(f"served from another checkout: names ({re.escape(str(source))}|"
                          f"{re.escape(str(clone))})$")
        explained = tree.explain(str(tree.object("host.cu.o"))).stdout.decode()
        self.assertTrue(any(said.search(line) for line in explained.splitlines()), explained)
        checked = json.loads(tree.nvfresh("check", "-C", str(tree.build_dir), "--json").stdout)
        reasons = {Path(o["object"]).name: o["last_build"]["reason"] for o in checked["objects"]}
        self.assertRegex(reasons["host.cu.o"], said)
        stats = json.loads(tree.nvfresh("stats", "-C", str(tree.build_dir), "--json").stdout)
        details = stats["kinds"]["served"]["causes"]["cache_hit"]["top_details"]
        self.assertTrue(any(said.search(d["detail"]) for d in details), details)


    def test_clean_restores_only_what_the_binding_allows(self):
        """The object a record names is restored after a clean only where a lookup would serve it:
        a record written by a hit from another checkout (the setting on) names an entry bound to
        that checkout."""
        source = self.checkout()
        self.build(self.tree(source, "build"))
        across = {"NVFRESH_CACHE_ACROSS_CHECKOUTS": "1"}
        clone = shutil.copytree(source, self.root / "clone")
        tree = self.tree(clone, "clone-build", env=across)
        self.assertEqual(self.build(tree), dict.fromkeys(FILE_NAMING_OBJECTS, "served"))
        tree.build(target="clean")
        before = len(events(tree.build_dir))
        self.assertEqual(self.build(tree), dict.fromkeys(FILE_NAMING_OBJECTS, "served"))
        host = [detail for _, _, name, detail in events(tree.build_dir)[before:]
                if name == "host.cu.o"]
        self.assertIn("the object its record names", host[0])
        self.assertIn(f"served from another checkout: names {source}", host[0])
        tree.build(target="clean")
        off = {"NVFRESH_CACHE_ACROSS_CHECKOUTS": "0"}
        self.assertEqual(self.build(tree, env=off),
                         {"host.cu.o": "compiled", "device.cu.o": "compiled",
                          "lineinfo.cu.o": "compiled"},
                         "restored from an entry naming the other checkout without the setting")
        self.assertNotIn(str(source).encode(), tree.object("host.cu.o").read_bytes())
        self.assertIn(str(clone).encode(), tree.object("host.cu.o").read_bytes())


class ObjectsNamingTheCheckoutMakefiles(ObjectsNamingTheCheckout):
    """The same with the Makefiles generator, whose includes_CUDA.rsp spells the checkout's -I
    paths: an options file is compared by its content with the roots mapped, as the arguments it
    holds are in the key."""
    TOOL = project.MAKE


VALUE_H = """#pragma once
/// The value every kernel marks.
/// Kept short.
#define VALUE "A"
"""


class CommentOnlyEdits(CacheCase):
    """Issue 27: a comment nothing sees (appended, at a line's end, a doc block reworded in its
    lines) in a header every TU includes: each object is served in the tree and in a fresh build
    dir, equal to a clean compile, and says why. An edit that moves lines, a comment with code
    after it on its line, a compile that printed something or asked for line information: those
    compile."""

    def sources(self):
        files = {"a.cu": marked_source(['#include "value.h"'], [("a", "VALUE", "host,dev")]),
                 "b.cu": marked_source(['#include "value.h"'], [("b", '"b"', "host,dev")]),
                 "warns.cu": marked_source(['#include "value.h"', '#warning "a warning"'],
                                           [("w", "VALUE", "host")]),
                 "lineinfo.cu": marked_source(['#include "value.h"'], [("l", "VALUE", "dev")]),
                 "include/value.h": VALUE_H}
        targets = [Target("a", "a.cu"), Target("b", "b.cu"), Target("warns", "warns.cu"),
                   Target("lineinfo", "lineinfo.cu", options=["-lineinfo"])]
        return self.project(targets, files)

    def test_comment_edits_are_served_and_line_moves_are_not(self):
        source = self.sources()
        tree = self.tree(source, "build")
        everything = {"a.cu.o", "b.cu.o", "warns.cu.o", "lineinfo.cu.o"}
        self.assertEqual(self.build(tree), dict.fromkeys(everything, "compiled"))
        common = source / "include" / "common.h"
        harness.write(common, common.read_text() + "// a comment appended to the header every TU includes\n")
        seen = {"a.cu.o": "served", "b.cu.o": "served", "warns.cu.o": "compiled",
                "lineinfo.cu.o": "compiled"}
        self.assertEqual(self.build(tree), seen)
        explained = tree.explain(str(tree.object("a.cu.o"))).stdout.decode()
        self.assertIn("common.h differs from it only in comments", explained)
        self.assertEqual(markers(tree.object("a.cu.o"))["a@dev"], {"A"})
        check = tree.check()
        self.assertEqual(check.returncode, 0, check.stdout.decode())
        self.assertEqual(self.build(tree), {}, "the served objects' records hold the new header")
        self.assert_same_as_uncached(tree, "a.cu.o")
        fresh = self.tree(source, "fresh-build")
        self.assertEqual(self.build(fresh), dict.fromkeys(everything, "served"))
        self.assert_same_as_uncached(fresh, "b.cu.o")

        value = source / "include" / "value.h"
        harness.write(value, VALUE_H.replace("Kept short.", "Kept short, and said so at length.")
                      .replace('"A"', '"A"  // the value'))
        self.assertEqual(self.build(tree), {"a.cu.o": "served", "b.cu.o": "served",
                                            "warns.cu.o": "compiled", "lineinfo.cu.o": "compiled"})
        # A comment line inserted above the code moves its lines: __LINE__ and markers see that.
        harness.write(value, "// a new first line\n" + VALUE_H)
        self.assertEqual(self.build(tree), dict.fromkeys(everything, "compiled"))
        # A comment with code after it on its line keeps its place: columns see it.
        harness.write(value, VALUE_H.replace('#define VALUE "A"', '#define VALUE /* A */ "A"'))
        self.assertEqual(self.build(tree), dict.fromkeys(everything, "compiled"))
        self.assert_same_as_uncached(tree, "a.cu.o")
        # An edit of the code itself is never taken for a comment edit.
        harness.write(value, VALUE_H.replace('"A"', '"B" // "A"'))
        self.assertEqual(self.build(tree), dict.fromkeys(everything, "compiled"))
        self.assertEqual(markers(tree.object("a.cu.o"))["a@dev"], {"B"})


    def test_line_information_from_the_environment_compiles(self):
        # -lineinfo through NVCC_APPEND_FLAGS: ptxas records the source's mtime, so comments
        # matter although the command line does not say so.
        env = {"NVCC_APPEND_FLAGS": "-lineinfo"}
        files = {"k.cu": marked_source(['#include "value.h"'], [("k", "VALUE", "host,dev")]),
                 "include/value.h": VALUE_H}
        source = self.project([Target("k", "k.cu")], files)
        tree = self.tree(source, "build", env=env)
        self.assertEqual(self.build(tree, env=env), {"k.cu.o": "compiled"})
        value = source / "include" / "value.h"
        harness.write(value, value.read_text() + "// appended\n")
        self.assertEqual(self.build(tree, env=env), {"k.cu.o": "compiled"})


class CommentOnlyEditsMakefiles(CommentOnlyEdits):
    """The same with the Makefiles generator, whose -I flags sit in an options file."""
    TOOL = project.MAKE

    def setUp(self):
        if project.require_tool(project.MAKE):
            self.skipTest(project.require_tool(project.MAKE))
        super().setUp()


class DataFilesAreBytes(CacheCase):
    """Comments mean something only to the C/C++ preprocessor. A file the assembler reads
    (`.incbin` in host asm: a shader, a table) is bytes: an edit after its `//`, trailing blanks or
    blank lines at its end give another object, and no entry of the old bytes is served."""

    def test_incbin_data_file_edits_compile(self):
        # The directive spelled by token pasting: no text of the tree says "incbin", only the
        # trace says that the assembler read the file.
        blob = self.root / "src" / "blob.glsl"
        asm = ('#define NV_CAT(a, b) a##b\n#define NV_STR(x) NV_STR2(x)\n#define NV_STR2(x) #x\n'
               f'asm(".section .rodata\\n." NV_STR(NV_CAT(inc, bin)) " \\"{blob}\\"\\n.previous");\n')
        files = {"k.cu": "#ifndef __CUDA_ARCH__\n" + asm + "#endif\n__global__ void k() {}\n",
                 "blob.glsl": "shader v1 // first\n"}
        source = self.project([Target("k", "k.cu")], files)
        tree = self.tree(source, "build")
        self.assertEqual(self.build(tree), {"k.cu.o": "compiled"})
        for text in ("shader v1 // SECOND\n", "shader v1 // SECOND  \n", "shader v1 // SECOND\n\n\n"):
            harness.write(blob, text)
            self.assertEqual(self.build(tree), {"k.cu.o": "compiled"}, repr(text))
            self.assertIn(text.encode(), tree.object("k.cu.o").read_bytes())
            check = tree.check()
            self.assertEqual(check.returncode, 0, check.stdout.decode())
        # Back to bytes stored before: served, and the object holds them.
        harness.write(blob, "shader v1 // first\n")
        self.assertEqual(self.build(tree), {"k.cu.o": "served"})
        self.assertIn(b"shader v1 // first\n", tree.object("k.cu.o").read_bytes())
        self.assert_same_as_uncached(tree, "k.cu.o")


class EntriesAndDisks(CacheCase):

    def test_damaged_entry_is_a_miss_that_gets_replaced(self):
        files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
        source = self.project([Target("k", "k.cu")], files)
        self.build(self.tree(source, "t1"))
        entries = list(self.cache_dir.rglob("*.entry"))
        self.assertEqual(len(entries), 1)
        data = bytearray(entries[0].read_bytes())
        data[len(data) // 2] ^= 0xFF
        entries[0].write_bytes(bytes(data))
        second = self.tree(source, "t2")
        result_kinds = self.build(second)
        self.assertEqual(result_kinds, {"k.cu.o": "compiled"})
        third = self.tree(source, "t3")
        self.assertEqual(self.build(third), {"k.cu.o": "served"}, "the damaged entry was replaced")

    def test_failing_compile_is_not_cached(self):
        files = {"k.cu": "this is not C++;\n"}
        source = self.project([Target("k", "k.cu")], files)
        for name in ("f1", "f2"):
            tree = self.tree(source, name)
            result = harness.run(["cmake", "--build", str(tree.build_dir)], env=tree.env)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(b"error", result.stdout + result.stderr)
            self.assertEqual([e[0] for e in events(tree.build_dir)], ["failed"])
        self.assertEqual(list(self.cache_dir.rglob("*.entry")), [])

    def test_warning_is_replayed_on_a_hit(self):
        files = {"k.cu": marked_source(['#warning "kernel k is deprecated"'], [("k", '"k"', "host")])}
        source = self.project([Target("k", "k.cu")], files)
        first = self.tree(source, "w1")
        compiled = harness.run(["cmake", "--build", str(first.build_dir)], env=first.env, check=True)
        second = self.tree(source, "w2")
        served = harness.run(["cmake", "--build", str(second.build_dir)], env=second.env, check=True)
        self.assertEqual(kinds(second.build_dir), {"k.cu.o": "served"})
        for result in (compiled, served):
            self.assertIn(b"kernel k is deprecated", result.stdout + result.stderr)

    def test_cap_and_eviction(self):
        files = {f"k{i}.cu": marked_source([], [(f"k{i}", f'"{i}"', "host,dev")]) for i in range(6)}
        targets = [Target(f"k{i}", f"k{i}.cu") for i in range(6)]
        source = self.project(targets, files)
        env = {"NVFRESH_CACHE_MAX_SIZE": "24K"}
        tree = self.tree(source, "capped", env=env)
        tree.build(env=env)
        stats = cache_stats(dict(self.env, **env))
        self.assertEqual(stats["max_bytes"], 24 * 1024)
        self.assertGreater(stats["evictions"], 0, stats)
        # Two compiles store at once (--parallel 2): each store, entry or manifest, evicts after it
        # under the shard's lock, so the last one leaves the cache at its cap, counted exactly.
        # Step entries (cicc, ptxas runs) are files of the same store, under the same cap.
        self.assertLessEqual(stats["bytes"], 24 * 1024, stats)
        on_disk = sum(f.stat().st_size for f in self.cache_dir.rglob("*")
                      if f.suffix in (".entry", ".manifest", ".step"))
        self.assertEqual(stats["bytes"], on_disk, stats)
        evicted = harness.run([NVFRESH, "cache", "evict", "--max-size", "0"], env=self.env, check=True)
        self.assertIn(b"evicted", evicted.stdout)
        self.assertEqual(cache_stats(self.env)["entries"], 0)
        usage = harness.run([NVFRESH, "cache", "evict", "--older-than", "soon"], env=self.env)
        self.assertEqual(usage.returncode, 2)

    @staticmethod
    def incompressible_kernels(count):
        """Sources whose objects hold 16 KiB of incompressible host data (entries that cannot fit)."""
        import random
        files = {}
        for i in range(count):
            rng = random.Random(i)
            blob = ",".join(str(rng.randrange(256)) for _ in range(16384))
            files[f"k{i}.cu"] = (marked_source([], [(f"k{i}", f'"{i}"', "host,dev")]) +
                                 f"__attribute__((used)) static const unsigned char blob{i}[] = {{{blob}}};\n")
        return files

    def test_full_disk_stores_nothing_and_says_so_once(self):
        mount = self.root / "small-cache"
        mount.mkdir()
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(mount)],
                                capture_output=True)
        if result.returncode != 0:
            if os.environ.get("CI") == "true":
                self.fail(f"cannot mount a tmpfs: {result.stderr.decode()}")
            self.skipTest(f"cannot mount a tmpfs here: {result.stderr.decode()}")
        try:
            source = self.project([Target(f"k{i}", f"k{i}.cu") for i in range(3)],
                                  self.incompressible_kernels(3))
            # The disk fills while an entry is written: "not cached", one line, the build goes on.
            env = {"NVFRESH_CACHE_DIR": str(mount / "cache"), "NVFRESH_CACHE_MIN_FREE": "1"}
            tree = self.tree(source, "full", env=env)
            built = harness.run(["cmake", "--build", str(tree.build_dir)], env=tree.env)
            output = (built.stdout + built.stderr).decode(errors="replace")
            self.assertEqual(built.returncode, 0, output)
            self.assertEqual(set(kinds(tree.build_dir).values()), {"compiled"})
            self.assertEqual(output.count("not cached"), 1, output)
            self.assertIn("NVFRESH_CACHE_DIR", output)
            self.assertEqual(list((mount / "cache").rglob("*.entry")), [])
            self.assertEqual(list((mount / "cache").rglob("*.tmp*")), [], "no half-written files")
            # Below the floor nothing is even tried: the same single line, naming the floor.
            floor = {"NVFRESH_CACHE_DIR": str(mount / "cache"), "NVFRESH_CACHE_MIN_FREE": "1G"}
            second = self.tree(source, "floor", env=floor)
            built = harness.run(["cmake", "--build", str(second.build_dir)], env=second.env)
            output = (built.stdout + built.stderr).decode(errors="replace")
            self.assertEqual(built.returncode, 0, output)
            self.assertEqual(output.count("not cached"), 1, output)
            self.assertIn("free-space floor", output)
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)

    def test_concurrent_trees_share_the_cache(self):
        files = {f"k{i}.cu": marked_source([], [(f"k{i}", f'"{i}"', "host,dev")]) for i in range(4)}
        source = self.project([Target(f"k{i}", f"k{i}.cu") for i in range(4)], files)
        trees = [self.tree(source, f"par{i}") for i in range(3)]
        running = [tree.start_build() for tree in trees]
        for tree, process in zip(trees, running):
            tree.finish_build(process)
        for tree in trees[1:]:
            for name in trees[0].objects():
                self.assertEqual(compare(trees[0].object(name), tree.object(name)).returncode, 0)
        verify = harness.run([NVFRESH, "cache", "verify"], env=self.env)
        self.assertEqual(verify.returncode, 0, verify.stdout.decode() + verify.stderr.decode())
        self.assertIn(b"0 with codegen that differs", verify.stdout)
        late = self.tree(source, "late")
        self.assertEqual(set(self.build(late).values()), {"served"})


class Verification(CacheCase):

    def test_sampled_hit_is_compiled_and_compared(self):
        files = {"k.cu": marked_source([], [("k", '"k"', "host,dev")])}
        source = self.project([Target("k", "k.cu")], files)
        self.build(self.tree(source, "v1"))
        env = {"NVFRESH_CACHE_VERIFY": "1"}
        second = self.tree(source, "v2", env=env)
        second.build(env=env)
        self.assertEqual([e[:2] for e in events(second.build_dir)], [("compiled", "cache_verified")])
        self.assertEqual(cache_stats(self.env)["verified"], 1)

    def test_nondeterministic_codegen_is_never_hidden(self):
        wrapper = self.root / "tools" / "g++"
        # A host compiler whose output differs on every run (its own content never changes).
        project.write_script(
            wrapper, '#!/bin/sh\nexec /usr/bin/g++ -DHOSTCC_TAG="\\"$(date +%s%N)\\"" "$@"\n')
        files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
        source = self.project([Target("k", "k.cu")], files)
        args = [f"-DCMAKE_CUDA_HOST_COMPILER={wrapper}"]
        self.build(self.tree(source, "n1", cache_args=args))
        env = {"NVFRESH_CACHE_VERIFY": "1"}
        second = self.tree(source, "n2", env=env, cache_args=args)
        second.build(env=env)
        (kind, cause, _, detail), = events(second.build_dir)
        self.assertEqual((kind, cause), ("compiled", "cache_mismatch"))
        self.assertIn("codegen differs from the cached entry", detail)
        self.assertIn("host code", detail)
        self.assertEqual(cache_stats(self.env)["verify_mismatches"], 1)
        stats = harness.run([NVFRESH, "stats", "-C", str(second.build_dir)], check=True).stdout
        self.assertIn(b"cache_mismatch", stats)
        verify = harness.run([NVFRESH, "cache", "verify"], env=self.env)
        self.assertEqual(verify.returncode, 1, verify.stdout.decode())
        self.assertIn(b"differs", verify.stdout)


class EntriesBoundAndDirGuarded(CacheCase):
    """Direct `nvfresh nvcc` compiles, attacks on a shared cache reproduced: an entry serves only
    the key it was stored under, verify judges an entry against its own inputs, and nothing is
    written through a link planted in the cache dir or in place of a record."""

    KMARK = '#define KMARK "{}"\n'
    SOURCE = ('#include "k.h"\n__attribute__((used)) static const char mark[] = "{}_" KMARK "_MARK";\n'
              "__global__ void kernel_{}(int* p) {{ *p = sizeof(mark); }}\n")

    def dir_with(self, name, units, version="V1"):
        where = self.root / name
        harness.write(where / "k.h", self.KMARK.format(version))
        for unit in units:
            harness.write(where / f"{unit}.cu", self.SOURCE.format(unit, unit))
        return where

    def compile(self, where, unit, env=None):
        merged = dict(self.env)
        merged.update(env or {})
        return harness.run([NVFRESH, harness.require_nvcc(), "-c", f"{unit}.cu", "-o", f"{unit}.o",
                            "-MD", "-arch=sm_80"], cwd=where, env=merged, check=True)

    def marks(self, obj):
        import re
        return set(re.findall(rb"[AB]_V[0-9]_MARK", Path(obj).read_bytes()))

    def entries(self):
        return set(self.cache_dir.rglob("*.entry"))

    def verify(self):
        return harness.run([NVFRESH, "cache", "verify"], env=self.env)

    def test_entry_under_another_key_is_never_served(self):
        t1 = self.dir_with("t1", ["A", "B"])
        self.compile(t1, "A")
        (entry_a,) = self.entries()
        self.compile(t1, "B")
        (entry_b,) = self.entries() - {entry_a}
        shutil.copy(entry_b, entry_a)
        verify = self.verify()
        self.assertEqual(verify.returncode, 1, verify.stdout.decode())
        self.assertIn(b"damaged", verify.stdout)
        self.assertIn(b"stored under another key", verify.stdout)
        # The restore after clean: the record names A's entry, which now holds B's object.
        (t1 / "A.o").unlink()
        self.compile(t1, "A")
        self.assertEqual(self.marks(t1 / "A.o"), {b"A_V1_MARK"})
        # A fresh tree (a sibling) looks A up and finds B's entry under A's key.
        shutil.copy(entry_b, entry_a)
        t2 = self.dir_with("t2", ["A"])
        self.compile(t2, "A")
        self.assertEqual(self.marks(t2 / "A.o"), {b"A_V1_MARK"})
        self.assertEqual(harness.nvfresh_check(t2, env=self.env).returncode, 0)
        verify = self.verify()
        self.assertEqual(verify.returncode, 0, verify.stdout.decode())

    def test_verify_after_an_edit_does_not_call_it_differing(self):
        where = self.dir_with("t", ["A"])
        self.compile(where, "A")
        harness.write(where / "k.h", self.KMARK.format("V2"))
        self.compile(where, "A")
        self.assertEqual(len(self.entries()), 2)
        verify = self.verify()
        out = verify.stdout.decode()
        self.assertEqual(verify.returncode, 0, out)
        self.assertIn("inputs changed since stored", out)
        self.assertIn("not verified", out)
        self.assertIn("0 with codegen that differs", out)
        self.assertEqual(cache_stats(self.env)["verify_mismatches"], 0)

    def test_links_in_the_cache_dir_are_not_followed(self):
        where = self.dir_with("t", ["A", "B"])
        self.compile(where, "A")
        victim = harness.write(self.root / "victim", "precious\n")
        for shard in "0123456789abcdef":
            (self.cache_dir / shard).mkdir(exist_ok=True)
            stats = self.cache_dir / shard / "stats"
            if stats.exists() or stats.is_symlink():
                stats.unlink()
            stats.symlink_to(victim)
        result = self.compile(where, "B")
        self.assertEqual(victim.read_text(), "precious\n")
        self.assertEqual(self.marks(where / "B.o"), {b"B_V1_MARK"})
        self.assertEqual(result.stdout, b"")
        # A cache dir of another user is not used: one line, the build goes on.
        os.chown(self.cache_dir, 12345, -1)
        harness.write(where / "k.h", self.KMARK.format("V2"))
        result = self.compile(where, "A")
        self.assertEqual(result.stderr.decode().count("not using the cache"), 1, result.stderr)
        self.assertIn(b"belongs to uid 12345", result.stderr)
        self.assertEqual(self.marks(where / "A.o"), {b"A_V2_MARK"})
        clear = harness.run([NVFRESH, "cache", "clear"], env=self.env)
        self.assertEqual(clear.returncode, 2, clear.stderr)
        self.assertTrue(victim.exists())

    def test_clear_that_cannot_write_says_so(self):
        where = self.dir_with("t", ["A"])
        self.compile(where, "A")
        for shard in self.cache_dir.iterdir():
            lock = shard / "lock"
            if lock.exists():
                lock.unlink()
                lock.mkdir()  # opening it for writing fails, as on a read-only cache
        for command in (["clear"], ["evict", "--max-size", "1"]):
            result = harness.run([NVFRESH, "cache", *command], env=self.env)
            self.assertEqual(result.returncode, 2, result.stderr)
            lines = result.stderr.decode().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("cannot change", lines[0])

    def test_note_is_not_written_through_a_symlinked_record(self):
        where = self.dir_with("t", ["A"])
        off = {"NVFRESH_CACHE": "0"}
        self.compile(where, "A", env=off)
        (record,) = (where / ".nvfresh").rglob("*.rec")
        elsewhere = self.root / "elsewhere.rec"
        shutil.move(record, elsewhere)
        record.symlink_to(elsewhere)
        before = elsewhere.read_bytes()
        harness.bump_mtime(where / "k.h")
        self.compile(where, "A", env=off)
        self.assertEqual(elsewhere.read_bytes(), before)
        self.assertFalse(record.is_symlink())
        self.assertEqual(self.marks(where / "A.o"), {b"A_V1_MARK"})


class ModuleWithCcache(CacheCase):
    """ONNX Runtime's --use_cache sets ccache as the CUDA launcher: the module takes it out, once."""

    def test_module_replaces_ccache_with_one_line(self):
        ccache = project.NINJA_CCACHE.launcher
        if not os.access(ccache, os.X_OK):
            if os.environ.get("CI") == "true":
                self.fail(f"{ccache} is missing (scripts/install_test_tools.sh)")
            self.skipTest(f"{ccache} is missing")
        files = {"k.cu": marked_source([], [("k", '"k"', "host")])}
        source = self.project([Target("k", "k.cu")], files)
        nvfresh_cmake = Path(os.environ["NVFRESH_SOURCE_DIR"]) / "cmake" / "nvfresh.cmake"
        build = self.root / "ort-like"
        configured = harness.run(
            ["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja",
             f"-DCMAKE_PROJECT_INCLUDE={nvfresh_cmake}", f"-DNVFRESH_EXECUTABLE={NVFRESH}",
             f"-DCMAKE_CUDA_COMPILER_LAUNCHER={ccache}", "-DCMAKE_CUDA_ARCHITECTURES=80"],
            env=self.env, check=True).stdout.decode()
        self.assertEqual(configured.count("taken out of the CUDA compiler launcher"), 1, configured)
        commands = harness.run(["ninja", "-C", str(build), "-t", "commands"], check=True).stdout
        self.assertNotIn(ccache.encode(), commands)
        harness.run(["cmake", "--build", str(build)], env=self.env, check=True)
        second = self.tree(source, "ort-like-2", cache_args=[f"-DCMAKE_CUDA_COMPILER_LAUNCHER={ccache}"])
        self.assertEqual(self.build(second), {"k.cu.o": "served"})


if __name__ == "__main__":
    harness.main()
