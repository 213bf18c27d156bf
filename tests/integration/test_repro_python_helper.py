"""python/nvfresh/repro.py on its own: the sample directories it writes for `nvfresh repro`, the working
directory during and after each compile, and the heap noise between compiles (see
test_repro_command.py for the helper driven through `nvfresh repro --artifact`)."""
import ctypes
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import nvfresh.repro  # noqa: E402


# One size per kind of free list: small bins, the unsorted bin and blocks near the mmap threshold. A single
# size could land on the same freed block after every perturbation under some allocators and heap starts.
PROBE_SIZES = (40, 600, 4096, 30000, 120000)


def probe_addresses():
    """Where the heap puts the next blocks of several sizes, held together and then freed."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    addresses = tuple(libc.malloc(size) for size in PROBE_SIZES)
    for address in addresses:
        libc.free(address)
    return addresses


class RepeatHelper(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="nvfresh-helper-")).resolve()
        self.previous = os.getcwd()
        os.chdir(self.root)

    def tearDown(self):
        os.chdir(self.previous)

    def test_each_compile_runs_in_its_sample_directory(self):
        seen = []

        def compile_once(directory):
            seen.append((Path(directory), Path.cwd()))
            Path("kernel.ptx").write_text(f"sample {len(seen)}\n")

        directories = nvfresh.repro.repeat(compile_once, samples=3)
        names = [f"nvfresh-sample-{i:05d}" for i in range(3)]
        self.assertEqual([d.name for d in directories], names)
        self.assertEqual([directory for directory, _ in seen], [self.root / n for n in names])
        self.assertEqual([cwd for _, cwd in seen], [self.root / n for n in names])
        self.assertEqual(Path.cwd(), self.root, "the working directory is restored")
        self.assertEqual((self.root / names[2] / "kernel.ptx").read_text(), "sample 3\n")
        self.assertEqual(nvfresh.repro.sample_dir_name(17), "nvfresh-sample-00017")

    def test_root_and_chdir(self):
        other = self.root / "elsewhere"
        cwds = []
        nvfresh.repro.repeat(lambda d: cwds.append(Path.cwd()), samples=2, root=other, chdir=False, heap_noise=False)
        self.assertEqual(cwds, [self.root, self.root])
        self.assertTrue((other / "nvfresh-sample-00001").is_dir())

    def test_an_exception_ends_the_repeats_and_restores_the_working_directory(self):
        calls = []

        def compile_once(directory):
            calls.append(directory)
            if len(calls) == 2:
                raise RuntimeError("compile failed")

        with self.assertRaisesRegex(RuntimeError, "compile failed"):
            nvfresh.repro.repeat(compile_once, samples=5)
        self.assertEqual(len(calls), 2)
        self.assertEqual(Path.cwd(), self.root)

    def test_heap_noise_keeps_blocks_and_moves_later_allocations(self):
        noise = nvfresh.repro.HeapNoise(seed=12345)
        addresses = set()
        for _ in range(8):
            noise.perturb()
            addresses.add(probe_addresses())
        self.assertGreater(len(noise.kept), 8 * 25 - 1)
        self.assertGreater(len(addresses), 1, "the heap's layout moves from one repeat to the next")
        same = nvfresh.repro.HeapNoise(seed=12345)
        for _ in range(8):
            same.perturb()
        self.assertEqual(same.kept_bytes, noise.kept_bytes, "a seed replays the sizes")

    def test_the_seed_comes_from_nvfresh_heap_noise(self):
        os.environ["NVFRESH_HEAP_NOISE"] = "424242"
        try:
            self.assertEqual(nvfresh.repro.HeapNoise().seed, 424242)
        finally:
            del os.environ["NVFRESH_HEAP_NOISE"]
        self.assertNotEqual(nvfresh.repro.HeapNoise().seed, nvfresh.repro.HeapNoise().seed)


if __name__ == "__main__":
    unittest.main(verbosity=2)
