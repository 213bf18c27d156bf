"""nvfresh's fatbin reader against cuobjdump: the same device entries, byte for byte.

For every nvcc that scripts/install_nvcc_versions.sh provides with a cuobjdump beside it (11.8 and
12.4 from Debian's toolkit, 13.5 with the nvidia-cuda-cuobjdump wheel), and the system nvcc when
its toolkit has cuobjdump: objects compiled several ways (multi-arch, every entry compressed, -G,
-rdc=true, a standalone -fatbin, and on 13.x each --compress-mode) are split by
tests/tools/fatbin_extract_tool (lib/digest's reader) and by `cuobjdump -xelf all` / `-xptx all`.
Every cubin and PTX must be there in both, in the same order, with the same bytes. The compressed
variants must report a compression (LZ4 on 11.8/12.4, zstd or LZ4 on 13.x), so the decompressors
are what is being compared.
"""
import os
import re
import shutil
import sys
import unittest
from pathlib import Path

import harness

SOURCE = """\
__global__ void scale(float* x, float f) { x[threadIdx.x] *= f; }
__device__ int counter;
__global__ void count(int* out) { *out = atomicAdd(&counter, 1); }
"""
MULTI_ARCH = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=[sm_90,compute_90]"]
EXPECTED = [("cubin", 80), ("cubin", 90), ("ptx", 90)]
# <stem>[.<n>].sm_<arch>.<kind>: cuobjdump leaves the number out when the entries carry a source
# name (-G), and names PTX by sm_ where nvfresh says compute_.
CUOBJDUMP_NAME = re.compile(r"^.+?(?:\.\d+)?\.sm_(\d+)a?\.(cubin|ptx)$")
OUR_NAME = re.compile(r"^\d+\.(?:sm|compute)_(\d+)a?\.(cubin|ptx)$")


def toolchains():
    """[(tag, nvcc, cuobjdump)]: every tested nvcc with a cuobjdump beside it."""
    found = []
    system_nvcc = shutil.which("nvcc")
    if system_nvcc:
        cuobjdump = Path(system_nvcc).resolve().parent / "cuobjdump"
        if cuobjdump.exists():
            found.append(("system", system_nvcc, str(cuobjdump)))
    installed, error = harness.install_nvcc_versions()
    if error:
        if os.environ.get("CI") == "true" or not found:
            raise AssertionError(error)
        print(f"WARNING: {error}", file=sys.stderr)
    for tag, nvcc in installed:
        cuobjdump = Path(nvcc).parent / "cuobjdump"
        if cuobjdump.exists():
            found.append((tag, nvcc, str(cuobjdump)))
    return found


def entries_in(directory, pattern):
    """{(kind, arch): [bytes, ...] sorted} for the files in directory whose names match pattern."""
    entries = {}
    for path in Path(directory).iterdir():
        match = pattern.match(path.name)
        if match is not None:
            arch, kind = match.groups()
            entries.setdefault((kind, int(arch)), []).append(path.read_bytes())
    return {key: sorted(payloads) for key, payloads in entries.items()}


class CuobjdumpAgreement(unittest.TestCase):
    tag = nvcc = cuobjdump = None

    def setUp(self):
        self.dir = harness.make_workdir(f"nvfresh-cuobjdump-{self.tag}-")
        harness.write(self.dir / "k.cu", SOURCE)
        version = harness.run([self.nvcc, "--version"], check=True).stdout.decode()
        self.major = int(re.search(r"release (\d+)\.", version).group(1))

    def compile(self, name, *flags, output_flag="-c"):
        output = self.dir / name
        harness.run([self.nvcc, *MULTI_ARCH, *flags, output_flag, "k.cu", "-o", name], cwd=self.dir, check=True)
        return output

    def assert_agreement(self, artifact, compressed=False):
        ours_dir = self.dir / (artifact.name + ".nvfresh")
        theirs_dir = self.dir / (artifact.name + ".cuobjdump")
        theirs_dir.mkdir()
        extract_tool = harness.tool_path("fatbin_extract_tool")
        listing = harness.run([str(extract_tool), str(artifact), str(ours_dir)], check=True).stdout.decode()
        for flag in ("-xelf", "-xptx"):
            harness.run([self.cuobjdump, flag, "all", str(artifact)], cwd=theirs_dir, check=True)
        ours = entries_in(ours_dir, OUR_NAME)
        theirs = entries_in(theirs_dir, CUOBJDUMP_NAME)
        self.assertEqual(sorted(theirs), EXPECTED, f"cuobjdump extracted {sorted(theirs)}")
        self.assertEqual(sorted(ours), sorted(theirs), listing)
        for key, data in theirs.items():
            self.assertEqual(ours[key], data, f"{key} differs from cuobjdump's extraction ({artifact.name})")
        compressions = {line.split()[1] for line in listing.splitlines()}
        if compressed:
            self.assertNotIn("none", compressions, f"every entry should be compressed: {listing}")
        return compressions

    def test_multi_arch_object(self):
        self.assert_agreement(self.compile("multi.o"))

    def test_every_entry_compressed(self):
        compressions = self.assert_agreement(self.compile("packed.o", "-Xfatbin=-compress-all"), compressed=True)
        print(f"\n  {self.tag}: -compress-all stores entries as {sorted(compressions)}", file=sys.stderr)

    def test_device_debug_object(self):
        self.assert_agreement(self.compile("debug.o", "-G"))

    def test_relocatable_device_code(self):
        self.assert_agreement(self.compile("rdc.o", "-rdc=true"))

    def test_standalone_fatbin(self):
        self.assert_agreement(self.compile("k.fatbin", output_flag="-fatbin"))

    def test_each_compress_mode(self):
        if self.major < 13:
            self.skipTest(f"--compress-mode is new in 12.8; {self.tag} has no such option")
        for mode in ("size", "speed", "balance"):
            with self.subTest(mode=mode):
                compressions = self.assert_agreement(
                    self.compile(f"mode-{mode}.o", f"--compress-mode={mode}", "-Xfatbin=-compress-all"),
                    compressed=True)
                print(f"\n  {self.tag}: --compress-mode={mode} stores entries as {sorted(compressions)}",
                      file=sys.stderr)


def load_tests(loader, tests, pattern):
    harness.require_nvcc()
    suite = unittest.TestSuite()
    chains = toolchains()
    if not chains:
        raise AssertionError("no nvcc with a cuobjdump beside it: scripts/install_nvcc_versions.sh provides three")
    for tag, nvcc, cuobjdump in chains:
        name = f"CuobjdumpAgreement_{tag.replace('.', '_')}"
        case = type(name, (CuobjdumpAgreement,), {"tag": tag, "nvcc": nvcc, "cuobjdump": cuobjdump})
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite


if __name__ == "__main__":
    harness.main()
