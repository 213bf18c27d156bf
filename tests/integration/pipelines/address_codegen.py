#!/usr/bin/env python3
"""A small compile pipeline whose output depends on where the heap landed, the way libNVVM 13.3's did.

It writes kernel.ptx in its working directory: the cut-down CuTe DSL kernel of
tests/unit/data/ptx/make_variant_pair.py in its variant A or B, chosen by one bit of the address of a
fresh 64 KiB malloc. With ASLR off the address is the same in every process; with ASLR on (or heap
noise before main) it moves, and so does the choice. Registers are numbered by the generator, so
variant B renumbers every later %rd, as NVVM does.

    --fixed        always variant A (a deterministic pipeline)
    --cache-var V  a compile cache in the directory $V: a hit copies the cached kernel.ptx, a miss
                   generates it and stores it there (as the CuTe DSL's and Triton's file caches do);
                   cache.txt says which
It also writes where.txt: its working directory, TMPDIR and the cache directory, each as it saw them.
"""
import argparse
import ctypes
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "data" / "ptx"))
import make_variant_pair  # noqa: E402


def address_bit():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    return (libc.malloc(65536) >> 12) & 1


def compile_once(directory, args):
    out = Path(directory) / "kernel.ptx"
    cache = Path(os.environ[args.cache_var]) if args.cache_var and os.environ.get(args.cache_var) else None
    if cache is not None and (cache / "kernel.ptx").is_file():
        shutil.copyfile(cache / "kernel.ptx", out)
        Path(directory, "cache.txt").write_text("hit\n")
    else:
        out.write_text(make_variant_pair.render("a" if args.fixed or address_bit() == 0 else "b"))
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out, cache / "kernel.ptx")
            Path(directory, "cache.txt").write_text("miss\n")
    Path(directory, "where.txt").write_text(
        f"cwd {os.getcwd()}\ntmp {os.environ.get('TMPDIR', '')}\ncache {cache or ''}\n"
        f"tmp entries {len(os.listdir(os.environ.get('TMPDIR', '.')))}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixed", action="store_true")
    parser.add_argument("--cache-var")
    parser.add_argument("--samples", type=int)
    args = parser.parse_args()
    if args.samples:
        import nvfresh.repro
        nvfresh.repro.repeat(lambda directory: compile_once(directory, args), samples=args.samples)
    else:
        compile_once(Path.cwd(), args)


if __name__ == "__main__":
    main()
