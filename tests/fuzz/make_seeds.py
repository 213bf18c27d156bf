#!/usr/bin/env python3
"""Regenerates the committed seed corpora under tests/fuzz/corpus/ from real files.

Usage: tests/fuzz/make_seeds.py <nvfresh build dir>   (needs nvcc, cmake, ninja, make, zstd)

It builds a tiny CUDA project (a shared library of two TUs, a static library with relocatable
device code, an executable that device-links it) with nvfresh injected through
CMAKE_PROJECT_INCLUDE, once with Ninja and once with Unix Makefiles, and keeps the files nvfresh
and CMake wrote: records (bodies with a sample of their input, missing and dep lines and no
checksum line, which fuzz_record seals; and one record file as stored), link records
(decompressed), events.log, hash-cache, build.ninja, and the Makefiles' link.txt, dlink.txt and
build.make files. It also keeps a trimmed trace of one nvcc compile under the LD_PRELOAD tracer,
turns tests/unit/data/cmake_lines into fuzz_command_line's input layout, and compiles two objects
and two depfiles of kinds tests/unit/data lacks. Run it when a format changes, and commit what it
writes; CI only reads the seeds (tests/fuzz/run_fuzzers.sh).
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fuzz" / "corpus"
MAX_TRACE_LINES = 120
MAX_RECORD_REPEATS = 16

HEADER = "#pragma once\n#define SCALE 3\n"
TU = """#include "common.h"
#include <cstdio>
__global__ void {name}(int* p) {{ if (p) p[threadIdx.x] *= SCALE; }}
void launch_{name}(int* p) {{ {name}<<<1, 32>>>(p); }}
"""
MAIN = "void launch_a(int*);\nint main() { launch_a(nullptr); return 0; }\n"
CMAKELISTS = """cmake_minimum_required(VERSION 3.24)
project(seeds LANGUAGES CXX CUDA)
set(CMAKE_CUDA_ARCHITECTURES "75;80")
add_library(shared_tus SHARED a.cu b.cu)
add_library(static_tu STATIC c.cu)
set_target_properties(static_tu PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
add_executable(app main.cu)
target_link_libraries(app PRIVATE shared_tus static_tu)
"""

# events.log lines of nvfresh before the outcome model (version 1), which read_events still reads.
EVENTS_V1 = ("1790000000000000000\tcompiled\t3000000000\t/b/CMakeFiles/t.dir/a.cu.o\tnvcc ran: a.h changed\n"
             "1790000001000000000\tskipped\t2900000000\t/b/CMakeFiles/t.dir/a.cu.o\tevery input unchanged\n")

CONFIGS = {
    "plain.conf": "# nvfresh settings\nrecord_dir = /tmp/records\nlog_file=/tmp/nvfresh.log\n",
    "disable.conf": "disable = yes\ntrace_lib = /opt/nvfresh/lib/libnvfresh_trace.so\n",
    "odd.conf": "  # comment\n\nkey without value\n = empty key\nrecord_dir =   spaced value  \r\nlog_file = a = b\n",
}


# A record of a compile whose output depends on mtimes (format 7's mtime_dependent line), which the
# seed project's compiles do not make: a body without its checksum line, as the trimmed records.
T_READ, T_BUILT = "1790000000000000000", "1790000003000000000"
MTIME_DEPENDENT_RECORD = "".join("\t".join(fields) + "\n" for fields in (
    ("nvfresh-record", "7"),
    ("object", "/b/CMakeFiles/k.dir/k.cu.o"),
    ("source", "/s/k.cu"),
    ("cwd", "/b"),
    ("compiler", "/usr/local/cuda/bin/nvcc"),
    ("arg", "--x=cu"),
    ("arg", "--compile"),
    ("arg", "/s/k.cu"),
    ("env", "PATH", "/usr/local/cuda/bin:/usr/bin:/bin"),
    ("signature", "ac201fd270c3b96beab24f2829780ab2"),
    ("nvcc_version", "Cuda compilation tools, release 13.0, V13.0.88"),
    ("inputs_from", "trace"),
    ("input", "source", "e9b76eb835b9bf5cd22fc1dd9511f5d8", "120", T_READ, T_READ, "1234", "-", "/s/k.cu"),
    ("input", "header", "6d67660fcacec51958647ad434ff02fa", "40", T_READ, T_READ, "1235", "compute_80,host",
     "/s/stamp.h"),
    ("input", "tool", "c0ee85ff66cf80206ac9ab7b03975213", "1000", T_READ, T_READ, "99", "-",
     "/usr/local/cuda/bin/nvcc"),
    ("probes", "/s/inc", "", "stamp.h"),
    ("output", "a8cfde6331bd59eb2ac96f8911c4b666", "5000", T_BUILT, T_BUILT, "1236", "/b/CMakeFiles/k.dir/k.cu.o"),
    ("depfile", "0", "/b/CMakeFiles/k.dir/k.cu.o.d", "CMakeFiles/k.dir/k.cu.o"),
    ("dep", "/s/k.cu"),
    ("dep", "/s/stamp.h"),
    ("times", T_READ, T_BUILT),
    ("trusted", "1", ""),
    ("mtime_dependent", "/s/stamp.h uses __TIMESTAMP__"),
    ("console", "separate", "", ""),
    ("history", T_BUILT, "compiled",
     "nvcc ran: /s/k.cu was touched, and the compile's output depends on mtimes: /s/stamp.h uses __TIMESTAMP__"),
))


def plain_env(**extra):
    """A short PATH (nvcc's directory and the system's), so that the seeds carry no machine's PATH."""
    nvcc_dir = os.path.dirname(shutil.which("nvcc"))
    return dict(os.environ, PATH=f"{nvcc_dir}:/usr/local/bin:/usr/bin:/bin", **extra)


def run(cmd, env=None):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env or plain_env())


def decompressed(path):
    data = path.read_bytes()
    if data[:4] == b"\x28\xb5\x2f\xfd" or (data[0] & 0xF0 == 0x50 and data[1:4] == b"\x2a\x4d\x18"):
        return subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout
    return data


def fresh_dir(name):
    target = CORPUS / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    return target


def write_project(src):
    src.mkdir(parents=True)
    (src / "common.h").write_text(HEADER)
    for name in "abc":
        (src / f"{name}.cu").write_text(TU.format(name=name))
    (src / "main.cu").write_text(MAIN)
    (src / "CMakeLists.txt").write_text(CMAKELISTS)


def build_project(src, build, generator, build_dir):
    run(["cmake", "-S", str(src), "-B", str(build), "-G", generator,
         f"-DCMAKE_PROJECT_INCLUDE={REPO / 'cmake' / 'nvfresh.cmake'}",
         f"-DNVFRESH_EXECUTABLE={build_dir / 'bin' / 'nvfresh'}"])
    run(["cmake", "--build", str(build), "-j2"])
    (src / "common.h").write_text(HEADER.replace("3", "4"))  # a rebuild: skips and compiles in events.log
    run(["cmake", "--build", str(build), "-j2"])
    (src / "common.h").write_text(HEADER)


def trimmed_record(text):
    """A record with a sample of its input, missing and dep lines and no checksum line (fuzz_record
    seals what it parses)."""
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith(b"checksum\t")]
    kept = set()
    for key in (b"input\t", b"missing\t", b"dep\t"):
        repeated = [i for i, line in enumerate(lines) if line.startswith(key)]
        kept.update(repeated[::max(1, len(repeated) // MAX_RECORD_REPEATS)])
    sampled = (b"input\t", b"missing\t", b"dep\t")
    return b"".join(line for i, line in enumerate(lines) if not line.startswith(sampled) or i in kept)


def keep_records(build, tag, out):
    root = build / ".nvfresh"
    records = sorted((root / "records").glob("*.rec"))
    for i, path in enumerate(records):
        (out["record"] / f"{tag}_{i}.rec").write_bytes(trimmed_record(decompressed(path)))
    shutil.copy(records[0], out["record"] / f"{tag}_file.rec")  # as stored: head frame, zstd frame
    for i, path in enumerate(sorted((root / "links").glob("*.link"))):
        (out["link_record"] / f"{tag}_{i}.link").write_bytes(decompressed(path))
    for name, kind in (("events.log", "events"), ("hash-cache", "hash_cache")):
        if (root / name).exists():
            (out[kind] / f"{tag}_{name}").write_bytes((root / name).read_bytes())


def neutral(data):
    """The checkout's path as /src/nvfresh: the seeds name no directory of the machine they came from."""
    return data.replace(str(REPO).encode(), b"/src/nvfresh")


def keep_build_graph(build, tag, out):
    if (build / "build.ninja").exists():
        (out / f"{tag}_build.ninja").write_bytes(neutral((build / "build.ninja").read_bytes()))
    for link in sorted(build.glob("CMakeFiles/*.dir/*link.txt")):
        text = link.read_bytes()
        rsp = link.parent / "objects1.rsp"
        if rsp.exists():
            text = text.replace(f"CMakeFiles/{link.parent.name}/objects1.rsp".encode(), b"objects1.rsp")
            text += b"\x01" + rsp.read_bytes()
        (out / f"{tag}_{link.parent.name}_{link.name}").write_bytes(neutral(text))
    for make in sorted(build.glob("CMakeFiles/*.dir/build.make"))[:1]:
        (out / f"{tag}_{make.parent.name}_build.make").write_bytes(neutral(make.read_bytes()))


def keep_trace(src, build_dir, out, scratch):
    trace = scratch / "trace"
    env = plain_env(LD_PRELOAD=str(build_dir / "lib" / "libnvfresh_trace.so"), NVFRESH_TRACE_FILE=str(trace),
                    TMPDIR=str(scratch))
    run(["nvcc", "-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_80,code=compute_80",
         "-I", str(src), "-c", str(src / "a.cu"), "-o", str(scratch / "a.o")], env=env)
    lines = trace.read_bytes().splitlines(keepends=True)
    processes = [line for line in lines if line[:2] in (b"X ", b"I ")]
    accesses = [line for line in lines if line[:2] not in (b"X ", b"I ")]
    step = max(1, len(accesses) // MAX_TRACE_LINES)
    (out / "nvcc13_two_archs.trace").write_bytes(neutral(b"".join(processes + accesses[::step])))
    (out / "nvcc13_head.trace").write_bytes(neutral(b"".join(lines[:MAX_TRACE_LINES])))


def keep_objects(src, out, scratch):
    """Objects of kinds tests/unit/data/objects lacks: LTO-IR entries, two archs with PTX."""
    for name, flags in (("lto_80.o", ["-gencode", "arch=compute_80,code=lto_80", "-dc"]),
                        ("two_archs_ptx.o", ["-gencode", "arch=compute_75,code=sm_75",
                                             "-gencode", "arch=compute_80,code=compute_80", "-c"])):
        run(["nvcc", *flags, "-I", str(src), str(src / "b.cu"), "-o", str(scratch / name)])
        shutil.copy(scratch / name, out / name)


def keep_depfiles(src, out, scratch):
    """nvcc's own -MD depfiles (tests/unit/data/depfiles has the special characters)."""
    for name, flags in (("two_archs.d", []), ("phony_targets.d", ["-MP"])):
        run(["nvcc", "-arch=sm_75", "-gencode", "arch=compute_80,code=sm_80", "-MD", *flags, "-MF",
             str(scratch / name), "-MT", "CMakeFiles/x.dir/c.cu.o", "-I", str(src), "-c", str(src / "c.cu"),
             "-o", str(scratch / "c.o")])
        shutil.copy(scratch / name, out / name)


def keep_command_lines(out):
    for case in sorted((REPO / "tests" / "unit" / "data" / "cmake_lines").glob("*/argv.txt")):
        words = [line[5:] for line in case.read_text().splitlines() if line.startswith("arg: ")][1:]
        rsp = b""
        for i, word in enumerate(words):
            if word.endswith(".rsp") and (case.parent / word).exists():
                rsp = (case.parent / word).read_bytes()
                words[i] = "opts.rsp"
        argv = "\0".join(words).encode()
        (out / f"{case.parent.name}").write_bytes(argv + b"\x01\x01\x01" + rsp)
    (out / "env_flags").write_bytes(b"-c\0a.cu\x01-DQ=\"a b\" -arch=sm_80\x01-O3 \"-DX=1\"\x01")
    (out / "self_including_rsp").write_bytes(b"-c\0a.cu\0-optf\0opts.rsp\x01\x01\x01-DA -optf opts.rsp\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build_dir = Path(sys.argv[1]).resolve()
    kinds = ("record", "link_record", "events", "hash_cache", "build_graph", "trace", "command_line", "config",
             "object_digest", "depfile")
    out = {kind: fresh_dir(kind) for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="nvfresh-seeds-") as scratch_name:
        scratch = Path(scratch_name)
        write_project(scratch / "src")
        for generator, tag in (("Ninja", "ninja"), ("Unix Makefiles", "make")):
            build = scratch / f"build-{tag}"
            build_project(scratch / "src", build, generator, build_dir)
            keep_records(build, tag, out)
            keep_build_graph(build, tag, out["build_graph"])
        keep_trace(scratch / "src", build_dir, out["trace"], scratch)
        keep_objects(scratch / "src", out["object_digest"], scratch)
        keep_depfiles(scratch / "src", out["depfile"], scratch)
    keep_command_lines(out["command_line"])
    (out["events"] / "v1_events.log").write_text(EVENTS_V1)
    (out["record"] / "v7_mtime_dependent.rec").write_text(MTIME_DEPENDENT_RECORD)
    for name, text in CONFIGS.items():
        (out["config"] / name).write_text(text)
    for kind in kinds:
        files = list(out[kind].iterdir())
        print(f"{kind}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
