"""Repeat a compile inside one process, with heap noise between the repeats, for `nvfresh repro`.

Some JIT compilers vary only inside a long-lived process: the CuTe DSL 4.7.1's libNVVM gave its
in-process FMHA variant in 17 of 260 compiles that re-ran in one process, never in a process's first
24, and in none of 489 fresh processes. A tool that starts one process per run cannot see that.
`repeat` runs the compile N times in the calling process and makes the heap different before each
repeat, so that a compiler whose output depends on where its objects land shows it.

How it fits with `nvfresh repro`: repeat i writes its artifacts into the directory
`nvfresh-sample-<i>/` (five digits: nvfresh-sample-00017) under the working directory. `nvfresh repro
--artifact GLOB -- <command>` looks for those directories in each run's working directory; when there
are any, it matches GLOB inside each one and counts each as one sample, so the variants group samples
("variant 2: 5 samples in 2 runs (run 0: 27 29 34; run 1: 46 59)"). Each run still gets its own
working directory, TMPDIR, compile caches and process-level perturbations (ASLR, heap tunables),
so N runs of K samples cover both kinds of variation. The samples of one process are not
independent draws (the heap grows from one to the next), so the report's confidence bound counts
runs, not samples.

The CuTe DSL example (doc/manual.md, "repro"; bench/cutedsl_repro.py runs it for real)::

    import nvfresh.repro

    def compile_once(out_dir):          # out_dir: this sample's directory
        cute.compile(kernel, *args, options=f"--keep-ptx --keep-cubin --dump-dir={out_dir}")

    nvfresh.repro.repeat(compile_once, samples=60)

    # nvfresh repro -n 2 --artifact '*.ptx' --artifact '*.cubin' -- python compile_fmha.py

Heap noise: before each repeat, between 50 and 400 blocks of 16 B to 64 KiB are allocated with the C
library's malloc; every other one is freed and the rest are kept for the life of the process (about
3.7 MB more per repeat, on average), as the note's measurements did. The seed comes from `seed`, else
from NVFRESH_HEAP_NOISE (which `nvfresh repro` sets in its perturbed runs), else from os.urandom.
"""
import contextlib
import ctypes
import os
import random
from pathlib import Path

SAMPLE_PREFIX = "nvfresh-sample-"
SEED_VARIABLE = "NVFRESH_HEAP_NOISE"

_MIN_BLOCKS, _MAX_BLOCKS = 50, 400
_MIN_SIZE, _MAX_SIZE = 16, 64 * 1024


def sample_dir_name(index):
    """The directory name of sample `index`, as `nvfresh repro` reads it: nvfresh-sample-00017."""
    return f"{SAMPLE_PREFIX}{index:05d}"


class HeapNoise:
    """Random allocations through the C library's malloc; every other block stays allocated."""

    def __init__(self, seed=None):
        if seed is None:
            seed = int(os.environ.get(SEED_VARIABLE) or 0) or int.from_bytes(os.urandom(8), "little")
        self.seed = seed
        self._random = random.Random(seed)
        self._libc = ctypes.CDLL(None)
        self._libc.malloc.restype = ctypes.c_void_p
        self._libc.malloc.argtypes = [ctypes.c_size_t]
        self._libc.free.argtypes = [ctypes.c_void_p]
        self.kept = []  # addresses of the blocks kept for the life of the process
        self.kept_bytes = 0

    def perturb(self):
        """Allocates a random batch and keeps every other block: the heap's layout moves on."""
        count = self._random.randint(_MIN_BLOCKS, _MAX_BLOCKS)
        blocks = [(self._libc.malloc(size), size) for size in
                  (self._random.randint(_MIN_SIZE, _MAX_SIZE) for _ in range(count))]
        for i, (address, size) in enumerate(blocks):
            if i % 2 and address:
                self.kept.append(address)
                self.kept_bytes += size
            else:
                self._libc.free(address)


@contextlib.contextmanager
def _working_directory(path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def repeat(compile_fn, samples=60, root=None, heap_noise=True, seed=None, chdir=True):
    """Calls compile_fn(sample_dir) `samples` times, each with its own nvfresh-sample-<i>/ directory.

    compile_fn writes the artifacts of one compile into the directory it is given (and, with chdir,
    which is the working directory during the call, so tools that write into the working directory
    need no option). root: where the sample directories go (default: the working directory).
    heap_noise: perturb the heap before each call (see HeapNoise; seed as there). An exception from
    compile_fn ends the repeats and propagates: the run fails, and `nvfresh repro` shows its stderr.
    Returns the sample directories.
    """
    root = Path(root) if root is not None else Path.cwd()
    noise = HeapNoise(seed) if heap_noise else None
    directories = []
    for index in range(samples):
        directory = (root / sample_dir_name(index)).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        if noise is not None:
            noise.perturb()
        with _working_directory(directory) if chdir else contextlib.nullcontext():
            compile_fn(directory)
        directories.append(directory)
    return directories
