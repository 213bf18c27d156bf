"""Round trip of nvfresh's depfile writer through the real build tools.

Our writer (lib/depfile, via the test-only tests/tools/nvfresh_depfile_tool) writes a depfile; then
  - ninja (deps = gcc) must record exactly the list (read back with `ninja -t deps`), and
  - GNU make must consider exactly the list as prerequisites (read back from `make -d`),
for paths with spaces, '#', '$', '(', ':', '%', non-ASCII bytes and more. Paths that
depfile_can_represent rejects ('&', quotes, '=', ...) are checked to really break a tool here.
A last case parses real nvcc output with our parser, rewrites it, and checks both tools again.
"""
import os
import re
import shutil
import sys
import time

import harness

# Every one of these must be read back unchanged by ninja and make (all canonical, relative).
AWKWARD = [
    "src/a.cu",
    "inc dir/sp ace.h",
    "inc dir/ha#sh.h",
    "inc dir/dol$lar.h",
    "inc dir/pa(re)n.h",
    "inc dir/co:lon.h",
    "inc dir/per%cent.h",
    "inc dir/n\u00f6\u00f1-ascii.h",
    "two  spaces.h",
    "#leading-hash.h",
    "x/$$double.h",
    "bang!@{c}+,.h",
    "back\\slash.h",
    "tilde~.h",
]
# depfile_can_represent says no; ninja 1.11 or make 4.3 really misreads each of them.
UNREPRESENTABLE = ["am&p.h", "quo'te.h", 'dq"x.h', "eq=u.h", "br[1].h", "lib(mem)"]


def tool():
    return str(harness.tool_path("nvfresh_depfile_tool"))


def require_tools():
    missing = [name for name in ("ninja", "make") if shutil.which(name) is None]
    if missing:
        harness.skip_loudly(f"{', '.join(missing)} not found; the depfile round trip did NOT run")


def encode(paths):
    return b"".join(p.encode() + b"\0" for p in paths)


def write_depfile(target, paths, phony):
    args = [tool(), "write", target, "-0"] + (["--phony"] if phony else [])
    return harness.run(args, input_bytes=encode(paths), check=True).stdout


def can_represent(paths):
    out = harness.run([tool(), "represent", "-0"], input_bytes=encode(paths), check=True).stdout
    return [line == b"1" for line in out.splitlines()]


def ninja_reads(workdir, depfile_bytes):
    """The dependency list ninja records for obj.o from this depfile (deps = gcc)."""
    (workdir / "dep.in").write_bytes(depfile_bytes)
    (workdir / "build.ninja").write_text(
        "rule fake_cc\n  command = cp dep.in $out.d && touch $out\n  deps = gcc\n  depfile = $out.d\n"
        "build obj.o: fake_cc\n")
    harness.run(["ninja", "-C", str(workdir)], check=True)
    out = harness.run(["ninja", "-C", str(workdir), "-t", "deps", "obj.o"], check=True).stdout
    return [line[4:].decode() for line in out.splitlines() if line.startswith(b"    ")]


def make_reads(workdir, depfile_bytes):
    """The prerequisites make considers for obj.o (from `make -d`, which quotes each name)."""
    (workdir / "dep.d").write_bytes(depfile_bytes)
    (workdir / "Makefile").write_text("obj.o:\n\ttouch obj.o\ninclude dep.d\n")
    result = harness.run(["make", "-r", "-d", "-n", "-C", str(workdir), "obj.o"])
    names = re.findall(rb"^  Considering target file '(.*)'\.$", result.stdout, re.MULTILINE)
    return [name.decode() for name in names], result


def make_notices_change(workdir, depfile_bytes, path):
    """Whether make, up to date before, wants to rebuild obj.o once `path` is newer than it."""
    (workdir / "dep.d").write_bytes(depfile_bytes)
    (workdir / "Makefile").write_text("obj.o:\n\ttouch obj.o\ninclude dep.d\n")
    (workdir / "obj.o").write_bytes(b"")
    base = time.time() - 1000
    for folder, _, files in os.walk(workdir):
        for name in files:
            os.utime(os.path.join(folder, name), (base, base))
    os.utime(workdir / "obj.o", (base + 10, base + 10))
    if harness.run(["make", "-r", "-q", "-C", str(workdir), "obj.o"]).returncode != 0:
        return False
    os.utime(workdir / path, (base + 20, base + 20))
    return harness.run(["make", "-r", "-q", "-C", str(workdir), "obj.o"]).returncode == 1


def create_files(workdir, paths):
    for path in paths:
        harness.write(workdir / path, "// header\n")


class DepfileRoundTrip(harness.unittest.TestCase):
    def setUp(self):
        require_tools()
        self.workdir = harness.make_workdir("nvfresh-depfile-")

    def check_both_tools(self, paths, phony):
        text = write_depfile("obj.o", paths, phony)
        ninja_dir, make_dir = self.workdir / f"ninja{int(phony)}", self.workdir / f"make{int(phony)}"
        for folder in (ninja_dir, make_dir):
            folder.mkdir(exist_ok=True)
            create_files(folder, paths)
        self.assertEqual(ninja_reads(ninja_dir, text), paths, text.decode())
        make_list, result = make_reads(make_dir, text)
        self.assertEqual(make_list, paths, text.decode() + result.stderr.decode(errors="replace"))

    def test_awkward_paths_are_representable(self):
        self.assertEqual(can_represent(AWKWARD), [True] * len(AWKWARD))

    def test_ninja_and_make_read_back_the_list(self):
        self.check_both_tools(AWKWARD, phony=False)

    def test_with_phony_rules(self):
        self.check_both_tools(AWKWARD, phony=True)

    def test_phony_rules_survive_a_deleted_header(self):
        text = write_depfile("obj.o", AWKWARD, phony=True)
        create_files(self.workdir, AWKWARD)
        (self.workdir / "dep.d").write_bytes(text)
        (self.workdir / "Makefile").write_text("obj.o:\n\ttouch obj.o\ninclude dep.d\n")
        harness.run(["make", "-r", "-C", str(self.workdir), "obj.o"], check=True)
        os.remove(self.workdir / "inc dir/ha#sh.h")
        harness.run(["make", "-r", "-C", str(self.workdir), "obj.o"], check=True)

    def test_a_touched_header_makes_make_rebuild(self):
        text = write_depfile("obj.o", AWKWARD, phony=True)
        create_files(self.workdir, AWKWARD)
        for path in AWKWARD:
            with self.subTest(path=path):
                self.assertTrue(make_notices_change(self.workdir, text, path), f"make missed {path!r}")

    def test_rejected_paths_really_break_a_tool(self):
        self.assertEqual(can_represent(UNREPRESENTABLE), [False] * len(UNREPRESENTABLE))
        ninja_version = harness.run(["ninja", "--version"]).stdout.decode().strip()
        for path in UNREPRESENTABLE:
            with self.subTest(path=path):
                folder = self.workdir / f"bad{UNREPRESENTABLE.index(path)}"
                folder.mkdir()
                create_files(folder, [path, "br1.h"])  # br1.h makes make's glob of br[1].h match
                text = write_depfile("obj.o", [path], phony=False)
                ninja_list = ninja_reads(folder, text)
                make_list, _ = make_reads(folder, text)
                make_fine = make_list == [path] and make_notices_change(folder, text, path)
                both_fine = ninja_list == [path] and make_fine
                print(f"  {path!r}: ninja {ninja_version} -> {ninja_list}, make -> {make_list}")
                if ninja_version.startswith("1.11."):
                    self.assertFalse(both_fine, f"{path!r} is rejected but both tools read it back")

    def test_real_nvcc_output_rewritten(self):
        nvcc = harness.find_nvcc()
        if nvcc is None:
            print("SKIPPED (loudly): no nvcc; the real-nvcc part of the depfile round trip did NOT run",
                  file=sys.stderr)
            self.skipTest("no nvcc")
        headers = [p for p in AWKWARD[1:] if "\\" not in p]  # nvcc lists "a\b" as "a/b"
        create_files(self.workdir, headers)
        source = "".join(f'#include "{h}"\n' for h in headers) + "__global__ void k() {}\n"
        harness.write(self.workdir / "src/a.cu", source)
        harness.run([nvcc, "-I.", "-MD", "-MF", "nvcc.d", "-MT", "obj.o", "-c", "src/a.cu", "-o", "obj.o"],
                    cwd=self.workdir, check=True)
        nvcc_text = (self.workdir / "nvcc.d").read_bytes()
        parsed = harness.run([tool(), "parse", "--nvcc"], input_bytes=nvcc_text, check=True).stdout
        listed = [p.decode() for p in parsed.split(b"\0")[:-1]]
        self.assertEqual(listed[0], "src/a.cu")
        self.assertEqual(listed[-len(headers):], ["./" + h for h in headers])  # found through -I.
        text = write_depfile("obj.o", listed, phony=True)
        (self.workdir / "tools").mkdir()
        self.assertEqual(ninja_reads(self.workdir / "tools", text), [os.path.normpath(p) for p in listed])
        create_files(self.workdir / "tools", [p for p in listed if not p.startswith("/")])
        # Both tools drop a leading "./"; ninja also folds "x/../y" (nvcc writes cuda/bin/../targets).
        self.assertEqual(make_reads(self.workdir / "tools", text)[0],
                         [p[2:] if p.startswith("./") else p for p in listed])


if __name__ == "__main__":
    harness.main()
