"""`nvfresh compare` on objects from the real nvcc: normalized digests say exactly what changed.

Raw objects of identical compiles differ (tmpxft stem, module id path hash); the digests must not.
"""
import json
import os
from pathlib import Path

import harness

KERNEL_SOURCE = """\
__global__ void add_one(int* p) { p[threadIdx.x] += 1; }
__global__ void scale(float* p, float s) { p[threadIdx.x] *= s; }
int host_fn(int x) { return x * 3; }
"""
DEVICE_EDIT = ("+= 1;", "+= 2;")
HOST_EDIT = ("x * 3", "x * 4")
MULTI_ARCH = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
              "-gencode", "arch=compute_90,code=compute_90"]
DEVICE_KINDS = ("cubin", "ptx")
# -g -G pairs compiled on top of the one above: the zstd fatbin's size (and with it fatbinData[N] and
# the fatbin.c declaration lines in host debug info) moves with run-dependent bytes, so one pair can
# pass by luck; a few more make that flake show. Bounded: each pair is two compiles.
EXTRA_DEBUG_PAIRS = 4


def leb128(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def compare_command():
    return [harness.nvfresh_bin(), "compare"]


class CompareRealNvcc(harness.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nvcc = harness.require_nvcc()

    def setUp(self):
        self.work = harness.make_workdir("nvfresh-compare-")

    def compile(self, name, flags=(), source=KERNEL_SOURCE, directory=None):
        directory = Path(directory or self.work)
        harness.write(directory / "k.cu", source)
        obj = directory / f"{name}.o"
        harness.run([self.nvcc, "-c", *(flags or ["-arch=sm_80"]), "k.cu", "-o", str(obj)],
                    cwd=directory, check=True)
        return obj

    def compare(self, a, b):
        result = harness.run(compare_command() + [str(a), str(b), "--json"])
        self.assertIn(result.returncode, (0, 1), result.stderr.decode(errors="replace"))
        report = json.loads(result.stdout)
        return result.returncode, {c["key"]: c for c in report["components"]}

    def differing(self, components):
        return sorted(k for k, c in components.items() if c["status"] != "same")

    def assert_same(self, a, b):
        self.assertNotEqual(Path(a).read_bytes(), Path(b).read_bytes(), "raw objects were expected to differ")
        code, components = self.compare(a, b)
        self.assertEqual(self.differing(components), [])
        self.assertEqual(code, 0)
        return components

    def test_identical_compiles_compare_equal(self):
        components = self.assert_same(self.compile("one"), self.compile("two"))
        self.assertEqual(set(components), {"host code", "sm_80 cubin", "sm_80 cubin debug", "compute_80 ptx"})

    def test_device_edit_changes_only_device_digests(self):
        before = self.compile("before")
        after = self.compile("after", source=KERNEL_SOURCE.replace(*DEVICE_EDIT))
        code, components = self.compare(before, after)
        self.assertEqual(code, 1)
        changed = self.differing(components)
        self.assertIn("sm_80 cubin", changed)
        self.assertIn("compute_80 ptx", changed)
        self.assertTrue(all(k.split()[1] in DEVICE_KINDS for k in changed), changed)
        kernels = components["sm_80 cubin"]["kernels"]
        self.assertEqual([k["name"] for k in kernels], ["_Z7add_onePi"])
        self.assertTrue(any("2" in line for line in components["compute_80 ptx"]["ptx_diff"]))

    def test_host_edit_changes_only_host_digest(self):
        before = self.compile("before")
        after = self.compile("after", source=KERNEL_SOURCE.replace(*HOST_EDIT))
        code, components = self.compare(before, after)
        self.assertEqual(code, 1)
        self.assertEqual(self.differing(components), ["host code"])

    def test_same_source_in_two_directories_compares_equal(self):
        for flags in (["-arch=sm_80"], ["-arch=sm_80", "-rdc=true"]):
            with self.subTest(flags=flags):
                a = self.compile("a", flags, directory=self.work / "checkout_one")
                b = self.compile("b", flags, directory=self.work / "second_longer_checkout" / "src")
                self.assert_same(a, b)

    def test_debug_builds_compare_equal_and_keep_debug_separate(self):
        for flags in (["-arch=sm_80", "-g"], ["-arch=sm_80", "-g", "-G"]):
            with self.subTest(flags=flags):
                components = self.assert_same(self.compile("one", flags), self.compile("two", flags))
                self.assertIn("host debug", components)
        for pair in range(EXTRA_DEBUG_PAIRS):
            with self.subTest(pair=pair):
                flags = ["-arch=sm_80", "-g", "-G"]
                self.assert_same(self.compile(f"one_{pair}", flags), self.compile(f"two_{pair}", flags))
        before = self.compile("before", ["-arch=sm_80", "-g"])
        after = self.compile("after", ["-arch=sm_80", "-g"], source=KERNEL_SOURCE.replace(*HOST_EDIT))
        self.assertIn("host code", self.differing(self.compare(before, after)[1]))

    def test_a_touched_source_compares_equal_with_line_info(self):
        # -lineinfo and -G make ptxas write k.cu's modification time into the cubin's DWARF line table
        # (a file_names entry's mtime, ULEB128); a touch alone must not make two objects differ.
        harness.write(self.work / "k.cu", KERNEL_SOURCE)
        for flags in (["-arch=sm_80", "-lineinfo"], ["-arch=sm_80", "-G"]):
            with self.subTest(flags=flags):
                objects = []
                for name, mtime in (("old", 1_500_000_000), ("new", 1_700_000_000)):
                    os.utime(self.work / "k.cu", (mtime, mtime))
                    harness.run([self.nvcc, "-c", *flags, "k.cu", "-o", f"{name}.o"], cwd=self.work, check=True)
                    objects.append(self.work / f"{name}.o")
                    # The premise: the same compile to a bare cubin holds the mtime. (One output name: a -G
                    # cubin's .note.nv.tkinfo holds the ptxas command line, -o included.)
                    harness.run([self.nvcc, "-cubin", *flags, "k.cu", "-o", "k.cubin"], cwd=self.work, check=True)
                    (self.work / "k.cubin").rename(self.work / f"{name}.cubin")
                    self.assertIn(leb128(mtime), (self.work / f"{name}.cubin").read_bytes())
                self.assert_same(*objects)
                self.assert_same(self.work / "old.cubin", self.work / "new.cubin")

    def test_relocatable_device_code(self):
        flags = ["-arch=sm_80", "-rdc=true"]
        self.assert_same(self.compile("one", flags), self.compile("two", flags))
        after = self.compile("after", flags, source=KERNEL_SOURCE.replace(*DEVICE_EDIT))
        changed = self.differing(self.compare(self.compile("before", flags), after)[1])
        self.assertIn("sm_80 cubin", changed)
        self.assertNotIn("host code", changed)

    def test_multi_arch(self):
        components = self.assert_same(self.compile("one", MULTI_ARCH), self.compile("two", MULTI_ARCH))
        for key in ("sm_80 cubin", "sm_90 cubin", "compute_90 ptx"):
            self.assertIn(key, components)
        after = self.compile("after", MULTI_ARCH, source=KERNEL_SOURCE.replace(*DEVICE_EDIT))
        changed = self.differing(self.compare(self.compile("before", MULTI_ARCH), after)[1])
        for key in ("sm_80 cubin", "sm_90 cubin", "compute_90 ptx"):
            self.assertIn(key, changed)
        self.assertNotIn("host code", changed)

    def test_ptx_files_name_their_target_and_the_kernel_that_changed(self):
        # Standalone PTX from nvcc: the key is the .target's architecture (sm_100a, not compute_100), the
        # report names the kernel an edit changed, and the diff shows the changed lines with the files'
        # line numbers.
        ptx = {}
        for name, source in (("before", KERNEL_SOURCE), ("after", KERNEL_SOURCE.replace(*DEVICE_EDIT))):
            harness.write(self.work / f"{name}.cu", source)
            harness.run([self.nvcc, "-ptx", "-arch=sm_100a", f"{name}.cu", "-o", f"{name}.ptx"], cwd=self.work,
                        check=True)
            ptx[name] = self.work / f"{name}.ptx"
        code, components = self.compare(ptx["before"], ptx["after"])
        self.assertEqual(code, 1)
        self.assertEqual(sorted(components), ["sm_100a ptx"])
        component = components["sm_100a ptx"]
        self.assertEqual([k["name"] for k in component["kernels"]], ["_Z7add_onePi"])
        self.assertEqual(component["ptx_changed_lines"], 2)
        changed = [line for line in component["ptx_diff"] if line[0] in "-+"]
        self.assertEqual(len(changed), 2, component["ptx_diff"])
        self.assertIn(", 1;", changed[0])
        self.assertIn(", 2;", changed[1])
        lines = ptx["before"].read_text().splitlines()
        removed_at = next(i for i, line in enumerate(lines, 1) if line == changed[0][1:])
        header = component["ptx_diff"][0]
        self.assertRegex(header, r"^@@ -\d+,\d+ \+\d+,\d+ @@ _Z7add_onePi$")
        first_shown = int(header.split()[1][1:].split(",")[0])
        context = next(i for i, line in enumerate(component["ptx_diff"][1:]) if line[0] == "-")
        self.assertEqual(first_shown + context, removed_at, "hunk line numbers are the file's")
        self.assertEqual(harness.run(compare_command() + [str(ptx["before"]), str(ptx["before"])]).returncode, 0)

    def test_human_output_and_exit_codes(self):
        one, two = self.compile("one"), self.compile("two")
        result = harness.run(compare_command() + [str(one), str(two)])
        self.assertEqual(result.returncode, 0)
        text = result.stdout.decode()
        self.assertRegex(text, r"same\s+sm_80 cubin\s+[0-9a-f]{8}")
        after = self.compile("after", source=KERNEL_SOURCE.replace(*DEVICE_EDIT))
        result = harness.run(compare_command() + [str(one), str(after)])
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stdout.decode(), r"different\s+sm_80 cubin\s+[0-9a-f]{8} -> [0-9a-f]{8}")

    def test_truncated_corrupt_and_missing_files_exit_2(self):
        good = self.compile("good")
        data = good.read_bytes()
        truncated = self.work / "truncated.o"
        truncated.write_bytes(data[: len(data) // 2])
        corrupt = self.work / "corrupt.o"
        fatbin_at = data.find(b"\x50\xed\x55\xba")
        entry = fatbin_at + 16  # the first entry's header: its size at +4 made to run past the end
        corrupt.write_bytes(data[:entry + 4] + b"\xff\xff\x00\x00" + data[entry + 8:])
        cases = {truncated: "malformed ELF", corrupt: "runs past the end of the fatbin",
                 self.work / "missing.o": "cannot read"}
        for path, message in cases.items():
            with self.subTest(path=path.name):
                result = harness.run(compare_command() + [str(good), str(path)])
                self.assertEqual(result.returncode, 2)
                self.assertIn(message, result.stderr.decode())
                self.assertIn(path.name, result.stderr.decode())

    def test_an_entry_of_an_unknown_kind_is_compared_not_called_corrupt(self):
        good = self.compile("good")
        data = good.read_bytes()
        fatbin_at = data.find(b"\x50\xed\x55\xba")
        other = self.work / "kind7.o"
        other.write_bytes(data[:fatbin_at + 16] + b"\x07" + data[fatbin_at + 17:])  # entry kind 7
        result = harness.run(compare_command() + [str(good), str(other)])
        self.assertEqual(result.returncode, 1, result.stderr.decode())
        self.assertIn("entry kind 7", result.stdout.decode())
        self.assertNotIn("corrupt", result.stdout.decode() + result.stderr.decode())

    def test_lto_objects_are_compared(self):
        """-dlto and code=lto_XX write LTO-IR entries (kind 8): once rejected as corrupt."""
        for name, flags in (("dlto", ["-rdc=true", "-dlto", "-arch=sm_80"]),
                            ("lto_code", ["-rdc=true", "--generate-code=arch=compute_80,code=[lto_80]"])):
            with self.subTest(flags=flags):
                one = self.compile(f"{name}1", flags=flags)
                two = self.compile(f"{name}2", flags=flags)
                result = harness.run(compare_command() + [str(one), str(two)])
                self.assertEqual(result.returncode, 0, result.stdout.decode() + result.stderr.decode())
                self.assertRegex(result.stdout.decode(), r"same\s+lto_80 ltoir\s+[0-9a-f]{8}")
                edited = self.compile(f"{name}3", flags=flags, source=KERNEL_SOURCE.replace(*DEVICE_EDIT))
                result = harness.run(compare_command() + [str(one), str(edited)])
                self.assertEqual(result.returncode, 1)
                self.assertRegex(result.stdout.decode(), r"different\s+lto_80 ltoir")


if __name__ == "__main__":
    harness.main()
