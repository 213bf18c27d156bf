"""Real world: CUTLASS's FMHA example TU built through nvfresh, a device-code edit, one rebuild.

The one CUTLASS-sized test of CI (labelled slow): two compiles of about a minute each.
  1. A CMake + Ninja project (nvfresh injected with -DCMAKE_PROJECT_INCLUDE) builds
     examples/41_fused_multi_head_attention/fused_multihead_attention_fixed_seqlen.cu for sm_80 only.
     The record lists about 1000 inputs, kernel_forward.h among them, read by the compute_80 pass;
     `nvfresh check` says the tree is fresh.
  2. kernel_forward.h is edited so the kernel's arithmetic changes (the softmax scale factor log2(e)
     becomes 1.4142135f); ONE `cmake --build` recompiles the object. Its sm_80 cubin differs from
     the first and holds the new constant's bits, which the first did not; the record's hash of
     kernel_forward.h changed; `nvfresh check` is 0 again; a further build does nothing.

The device code is read straight from the object's .nv_fatbin section (objects.py parses ELF and
fatbin, stdlib only); the comparison is per fatbin entry (kind, arch), so the host object's tmpxft stem,
which differs between any two compiles, plays no part.

CUTLASS comes from scripts/install_cutlass.sh (the nvidia-cutlass wheel, into .venv-cutlass), which
this test runs when CUTLASS is missing. If that fails: a failure under CI=true, else a loud skip.
"""
import shutil
import struct
import sys
import unittest

import harness
from objects import fatbin_entries, read_record

SOURCE = "fused_multihead_attention_fixed_seqlen.cu"
EXAMPLE = "examples/41_fused_multi_head_attention"
EDIT_FROM = "frag = cutlass::multiplies<Fragment>()(scaling * kLog2e, frag);"
EDIT_TO = "frag = cutlass::multiplies<Fragment>()(scaling * 1.4142135f, frag);"
NEW_CONSTANT = struct.pack("<f", 1.4142135)

CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.25)
project(fmha LANGUAGES CUDA)
add_library(fmha OBJECT src/{source})
target_include_directories(fmha PRIVATE "${{CUTLASS_DIR}}/include"
  "${{CUTLASS_DIR}}/tools/util/include" "${{CMAKE_CURRENT_SOURCE_DIR}}/src")
target_compile_features(fmha PRIVATE cuda_std_17)
target_compile_options(fmha PRIVATE --expt-relaxed-constexpr)
""".format(source=SOURCE)


class CutlassFmha(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nvcc = harness.require_nvcc()
        cls.nvfresh = harness.nvfresh_bin()
        cutlass = harness.install_cutlass()
        cls.work = harness.make_workdir("nvfresh-cutlass-")
        cls.src = cls.work / "src"
        shutil.copytree(cutlass / EXAMPLE, cls.src)
        harness.write(cls.work / "CMakeLists.txt", CMAKE_LISTS)
        cls.build = cls.work / "build"
        configure = harness.run(
            ["cmake", "-S", str(cls.work), "-B", str(cls.build), "-G", "Ninja",
             f"-DCMAKE_CUDA_COMPILER={cls.nvcc}", "-DCMAKE_CUDA_ARCHITECTURES=80",
             f"-DCUTLASS_DIR={cutlass}",
             f"-DCMAKE_PROJECT_INCLUDE={harness.nvfresh_cmake()}",
             f"-DNVFRESH_EXECUTABLE={cls.nvfresh}"], check=True)
        cls.configure_output = configure.stdout.decode()
        cls.object = cls.build / f"CMakeFiles/fmha.dir/src/{SOURCE}.o"
        # Build 1 (compile 1).
        cls.first_build = cls.cmake_build()
        cls.first_entries = fatbin_entries(cls.object)
        cls.first_object = cls.object.read_bytes()
        cls.first_check = harness.run([cls.nvfresh, "check", "-C", str(cls.build)])
        records = list((cls.build / ".nvfresh/records").glob("*.rec"))
        assert len(records) == 1, f"expected one record, found {records}"
        cls.record = records[0]
        cls.first_record_size = cls.record.stat().st_size
        cls.first_inputs, _, _ = read_record(cls.record)
        # The edit: device arithmetic in kernel_forward.h, saved as an editor saves it (mtime: now).
        header = cls.src / "kernel_forward.h"
        text = header.read_text()
        assert text.count(EDIT_FROM) == 1, "kernel_forward.h no longer has the line this test edits"
        header.write_text(text.replace(EDIT_FROM, EDIT_TO))
        # Build 2 (compile 2), then a build that must do nothing.
        cls.second_build = cls.cmake_build()
        cls.second_entries = fatbin_entries(cls.object)
        cls.second_object = cls.object.read_bytes()
        cls.second_check = harness.run([cls.nvfresh, "check", "-C", str(cls.build)])
        cls.second_inputs, cls.second_history, _ = read_record(cls.record)
        cls.third_build = cls.cmake_build()

    @classmethod
    def cmake_build(cls):
        return harness.run(["cmake", "--build", str(cls.build), "-j1"], check=True).stdout.decode()

    def kernel_forward(self, inputs):
        matches = [path for path in inputs if path.endswith("/src/kernel_forward.h")]
        self.assertEqual(len(matches), 1, matches)
        return inputs[matches[0]]

    def test_first_build_compiled_through_nvfresh_and_is_fresh(self):
        self.assertIn(f"{SOURCE}.o", self.first_build)
        self.assertEqual(self.first_check.returncode, 0, self.first_check.stdout.decode())

    def test_record_lists_about_a_thousand_inputs_with_kernel_forward_in_compute_80(self):
        headers = [path for path, (role, _, _) in self.first_inputs.items() if role == "header"]
        print(f"\n  record: {len(self.first_inputs)} inputs ({len(headers)} headers), "
              f"{self.first_record_size} bytes", file=sys.stderr)
        self.assertGreater(len(headers), 700)
        role, _, passes = self.kernel_forward(self.first_inputs)
        self.assertEqual(role, "header")
        self.assertIn("compute_80", passes)
        self.assertIn("host", passes)

    def test_one_build_after_the_edit_recompiles_the_object(self):
        self.assertIn(f"{SOURCE}.o", self.second_build)
        self.assertEqual(self.second_history[-1], "compiled", self.second_history)

    def test_device_code_changed_and_holds_the_new_constant(self):
        self.assertIn(("elf", 80), self.first_entries, list(self.first_entries))
        self.assertIn(("elf", 80), self.second_entries, list(self.second_entries))
        before, after = self.first_entries[("elf", 80)], self.second_entries[("elf", 80)]
        self.assertNotEqual(before, after, "the sm_80 cubin did not change")
        self.assertNotIn(NEW_CONSTANT, before)
        self.assertIn(NEW_CONSTANT, after, "the new constant is not in the rebuilt sm_80 cubin")
        self.assertNotEqual(self.first_object, self.second_object)

    def test_record_has_the_new_hash_of_kernel_forward(self):
        before = self.kernel_forward(self.first_inputs)[1]
        after = self.kernel_forward(self.second_inputs)[1]
        self.assertNotEqual(before, after)
        self.assertEqual(len(self.second_inputs), len(self.first_inputs))

    def test_check_is_fresh_after_the_rebuild(self):
        self.assertEqual(self.second_check.returncode, 0, self.second_check.stdout.decode())

    def test_a_further_build_compiles_nothing(self):
        self.assertNotIn(f"{SOURCE}.o", self.third_build)


if __name__ == "__main__":
    harness.main()
