#!/usr/bin/env python3
"""Differential tester (issue 39): random edits of real code, each compiled through nvfresh with every
cache on and by plain nvcc, compared. nvfresh's promise is never to serve an object that a plain nvcc
compile of the current sources would not give; this script looks for a counterexample.

Sources nobody here wrote, fetched by scripts/install_difftest_sources.sh (PyPI only):
  ggml:<tu>      a TU of ggml's CUDA backend (src/ggml-cuda/<tu>.cu) from the llama-cpp-python sdist,
                 with ggml's own flags (read from its CMake files: Release, shared libs, C++17,
                 -use_fast_math -extended-lambda -compress-mode=size, its definitions and include dirs)
  cutlass:<ex>   a CUTLASS example TU (examples/<dir>/<file>.cu) from scripts/install_cutlass.sh, with
                 the flags the other CUTLASS benches use (C++17, --expt-relaxed-constexpr, the
                 example's and examples/common's include dirs) and Release's -O3 -DNDEBUG
  cub-small      a small TU of ours on the toolkit's CUB (BlockScan, WarpReduce) and its header
  cub-device     a TU of ours on CUB's device-wide algorithms and thrust (DeviceReduce, DeviceScan,
                 transform_reduce); the toolkit ships no example .cu to take instead
A name may end in @<archs> (`ggml:norm@80`, `cub-small@80,90`); each arch is compiled as CMake does
for CMAKE_CUDA_ARCHITECTURES=<arch> (SASS and PTX).

One chain per TU: a working copy of its sources, a build dir reused across edits (so that skips,
object-cache hits and step-cache hits happen) and a dir for plain nvcc. One NVFRESH_CACHE_DIR for
the whole run. Each edit (seeded, reproducible) changes the working copy, the flags or the
environment; then `nvfresh nvcc ...` compiles in the build dir and plain `nvcc ...` in the other,
and the two are compared: exit status, stdout and stderr (nvcc's tmpxft stem aside), `nvfresh
compare` of the objects, and the depfile (a prerequisite nvcc names that nvfresh's leaves out
differs). What nvfresh did comes from the build dir's events.log and steps.log.

Edit classes (`--list`):
  host-lines      host-only lines (`#ifndef __CUDA_ARCH__` blocks) added above the kernels, removed,
                  or a value in one changed; in the .cu or a header
  host-function   a statement (under `#ifndef __CUDA_ARCH__`) added to a host function, or changed
  comment-eol     a `//` comment appended to a line of the .cu
  comment-doc     a word added inside a block or `//` comment (doc comment) of the .cu
  comment-line    a comment line added at file scope above the kernels (lines move)
  comment-header  one of the above in a header of the project that the TU includes
  device-const    a numeric literal in a device function or kernel changed (the .cu or a header)
  arch-900        code under `#if __CUDA_ARCH__ >= 900` put into a kernel, or its constant changed
  flag-define     -D added, changed or removed (-DNDEBUG toggled too)
  flag-ptxas      -Xptxas -v, -Xptxas=-O2 or -maxrregcount=64 added or removed
  env             NVCC_APPEND_FLAGS / NVCC_PREPEND_FLAGS set, changed or unset
  revert          back to an earlier state of the chain (files rewritten, flags, environment)
  touch           a file's mtime moved, its content the same
  and the hostile classes of the round-4 attacks (S1-S5), each set up, then triggered:
  s1-builtin-line a kernel returning __builtin_LINE(), then host lines added above it
  s2-incbin       host asm `.incbin` of a data file, then the file edited only in a `//` tail
  s3-timestamp    __TIMESTAMP__ in the .cu, then the file only touched
  s3-xcat-header  `XCAT(__TIME, STAMP__)` in a header, then a comment appended to it (mtime moves)
  s4-local-var    a device variable named __cuda_local_var_<n>_1_x, n a code line of cicc's input,
                  then host lines added above it
  s5-line-one     code on line 1 of the .cu, then host lines added (NVFRESH_CACHE_VERIFY=1 on the
                  trigger; a `cache_mismatch` is counted as a false alarm, not as a difference)

--edits counts compiles per chain after its first: a class that sets up and triggers runs to its end,
so a chain may go one over. The classes take turns in a seeded order, each chain starting at
another place in it. --each-once instead runs every class once, dealt out among the chains (the
CI run, tests/integration/test_differential.py). A hostile class's construct is taken out again
after its trigger; the next edit's compile is the first to see that.

usage: bench/differential.py [--projects cub-small,ggml:arange,...] [--edits 40 | --each-once]
                             [--jobs 1] [--seed 1] [--nvfresh build/bin/nvfresh] [--nvcc nvcc]
                             [--keep] [--work DIR] [--classes a,b,...] [--json FILE] [--quiet]
                             [--list]
Exit 0 when no edit differed, 1 otherwise (the differing edits' dirs are kept and named).
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import benchlib

# ---------------------------------------------------------------------------------------------
# The projects

DEFAULT_PROJECTS = "cub-small,cub-device,ggml,cutlass"
GGML_DEFAULT = ("softmax", "norm", "getrows", "rope")
CUTLASS_DEFAULT = ("00_basic_gemm/basic_gemm.cu",
                   "41_fused_multi_head_attention/fused_multihead_attention_fixed_seqlen.cu@80")
DEFAULT_ARCHS = ("80", "90")

# ggml-cuda's compile line, from ggml/src/CMakeLists.txt and ggml/src/ggml-cuda/CMakeLists.txt as
# llama-cpp-python builds it (Linux, shared libraries, Release, GGML_CUDA_GRAPHS on as llama.cpp
# sets it, no NCCL found): the definitions, then the CUDA flags.
GGML_DEFINES = ("-DGGML_BACKEND_BUILD", "-DGGML_BACKEND_SHARED", "-DGGML_BUILD",
                "-DGGML_CUDA_USE_GRAPHS", "-DGGML_SCHED_MAX_COPIES=4", "-DGGML_SHARED",
                "-D_GNU_SOURCE", "-D_XOPEN_SOURCE=600")
GGML_FLAGS = ("-O3", "-DNDEBUG", "-std=c++17", "-Xcompiler=-fPIC", "-use_fast_math",
              "-extended-lambda", "-compress-mode=size", "-Xcompiler", "-Wno-pedantic")

CUB_SMALL_HEADER = """\
// Tuning and helpers shared by the block scan kernels of scan.cu.
#pragma once
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>

/// Threads per block of every kernel here.
constexpr int kScanThreads = 128;

/**
 * Scales one element before the scan.
 *
 * Kept in the header so that the kernels and the host reference agree.
 */
__host__ __device__ inline int scale_input(int value)
{
  return value * 3 + 1;
}

#ifndef __CUDA_ARCH__
/// The name the host side prints in its report.
inline const char* scan_config_name() { return "block-scan-128"; }
#endif
"""

CUB_SMALL_SOURCE = """\
// Block-wide scan and warp reduction with CUB.
#include "scan_config.h"

#include <cstdio>

#ifndef __CUDA_ARCH__
/* Host-side bookkeeping: how many launches this TU made. */
static int host_launches = 0;
#endif

/**
 * Exclusive prefix sum of one block's elements, each scaled first.
 *
 * One tile of kScanThreads elements per block.
 */
__global__ void block_scan_kernel(const int* in, int* out)
{
  using Scan = cub::BlockScan<int, kScanThreads>;
  __shared__ typename Scan::TempStorage storage;
  int value = scale_input(in[blockIdx.x * kScanThreads + threadIdx.x]);
  Scan(storage).ExclusiveSum(value, value);
#if __CUDA_ARCH__ >= 900
  value += 2;  // sm_90 and newer: another offset
#endif
  out[blockIdx.x * kScanThreads + threadIdx.x] = value;
}

// The sum of each warp's elements, plus a bias.
__global__ void warp_sum_kernel(const int* in, int* out)
{
  using Reduce = cub::WarpReduce<int>;
  __shared__ typename Reduce::TempStorage storage[kScanThreads / 32];
  int warp = threadIdx.x / 32;
  int total = Reduce(storage[warp]).Sum(in[threadIdx.x] + 7);
  if (threadIdx.x % 32 == 0) {
    out[warp] = total;
  }
}

#ifndef __CUDA_ARCH__
int launch_scans(const int* in, int* out, int blocks)
{
  ++host_launches;
  block_scan_kernel<<<blocks, kScanThreads>>>(in, out);
  warp_sum_kernel<<<1, kScanThreads>>>(in, out);
  std::printf("%s: %d launches\\n", scan_config_name(), host_launches);
  return host_launches;
}
#endif
"""

CUB_DEVICE_HEADER = """\
// Operators of reduce.cu's device-wide algorithms.
#pragma once

/// Added to every square: keeps the sum away from zero.
constexpr float kBias = 0.5f;

/**
 * x * x + kBias, on the host and the device.
 */
struct Square {
  __host__ __device__ float operator()(float x) const { return x * x + kBias; }
};
"""

CUB_DEVICE_SOURCE = """\
// Device-wide reductions and scans with CUB and thrust.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include "reduce_ops.h"

#ifndef __CUDA_ARCH__
// How many temporary-storage queries the host made.
static int host_queries = 0;
#endif

/**
 * Scales n elements in place.
 */
__global__ void scale_kernel(float* data, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] = data[i] * 2.0f + 1.0f;
  }
}

// Temporary storage that a sum and an inclusive scan of n floats need.
size_t temp_bytes(const float* in, float* out, int n)
{
  size_t reduce_bytes = 0;
  size_t scan_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, reduce_bytes, in, out, n);
  cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, in, out, n);
#ifndef __CUDA_ARCH__
  ++host_queries;
#endif
  return reduce_bytes > scan_bytes ? reduce_bytes : scan_bytes;
}

float sum_of_squares(const thrust::device_vector<float>& values)
{
  return thrust::transform_reduce(values.begin(), values.end(), Square(), 0.0f, thrust::plus<float>());
}

void scale(float* data, int n)
{
  scale_kernel<<<(n + 255) / 256, 256>>>(data, n);
}
"""


@dataclass
class Project:
    """One TU and how it compiles: `copies` (source dir -> dir in the working copy), `written` (file
    -> text), the TU and the flags (`{src}` is the working copy, `{obj}` the object)."""
    name: str
    tu: str
    flags: list
    archs: tuple
    copies: dict = field(default_factory=dict)
    written: dict = field(default_factory=dict)


def arch_flags(archs):
    return [f"--generate-code=arch=compute_{a},code=[compute_{a},sm_{a}]" for a in archs]


def cub_project(name, archs):
    if name == "cub-small":
        written, tu = {"scan_config.h": CUB_SMALL_HEADER, "scan.cu": CUB_SMALL_SOURCE}, "scan.cu"
    else:
        written, tu = {"reduce_ops.h": CUB_DEVICE_HEADER, "reduce.cu": CUB_DEVICE_SOURCE}, "reduce.cu"
    flags = ["-O3", "-DNDEBUG", "-std=c++17", "-I{src}"]
    return Project(name, tu, flags, archs, written=written)


def ggml_project(stem, archs, ggml):
    tu = f"src/ggml-cuda/{stem}.cu"
    if not (ggml / tu).is_file():
        raise SystemExit(f"differential: no {tu} in {ggml}")
    copies = {ggml / "include": "include", ggml / "src" / "ggml-cuda": "src/ggml-cuda"}
    copies.update({path: f"src/{path.name}" for path in sorted((ggml / "src").glob("*.h"))})
    flags = [*GGML_DEFINES, "-I{src}/src", "-I{src}/include", *GGML_FLAGS]
    return Project(f"ggml:{stem}", tu, flags, archs, copies=copies)


def cutlass_project(example, archs, cutlass):
    directory, source = example.split("/", 1)
    examples = cutlass / "examples"
    if not (examples / example).is_file():
        raise SystemExit(f"differential: no examples/{example} in {cutlass}")
    copies = {examples / directory: directory, examples / "common": "common"}
    flags = ["-I" + str(cutlass / "include"), "-I" + str(cutlass / "tools" / "util" / "include"),
             "-I{src}/common", "-I{src}/" + directory, "-O3", "-DNDEBUG", "-std=c++17",
             "--expt-relaxed-constexpr"]
    return Project(f"cutlass:{example}", example, flags, archs, copies=copies)


def installed_sources():
    """{'ggml': dir, 'cutlass': dir} from scripts/install_difftest_sources.sh (installs what is missing)."""
    script = benchlib.REPO / "scripts" / "install_difftest_sources.sh"
    out = subprocess.run([str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise SystemExit(f"differential: {script.name} failed:\n{out.stderr}")
    found = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return {name: Path(path) for name, path in found.items()}


def expand_projects(spec):
    """The project names of --projects, groups (ggml, cutlass) expanded, in order, no repeats."""
    names = []
    for word in (w.strip() for w in spec.split(",") if w.strip()):
        if re.fullmatch(r"\d+[a-z]?", word) and names and "@" in names[-1]:
            names[-1] += "," + word
            continue
        base, _, archs = word.partition("@")
        suffix = f"@{archs}" if archs else ""
        if base == "ggml":
            names += [f"ggml:{stem}{suffix}" for stem in GGML_DEFAULT]
        elif base == "cutlass":
            names += [f"cutlass:{ex}" if "@" in ex or not suffix else f"cutlass:{ex}{suffix}"
                      for ex in CUTLASS_DEFAULT]
        else:
            names.append(word)
    return list(dict.fromkeys(names))


def make_projects(names):
    sources = None
    projects = []
    for name in names:
        base, _, archs = name.partition("@")
        archs = tuple(a for a in archs.split(",") if a) or DEFAULT_ARCHS
        if base in ("cub-small", "cub-device"):
            projects.append(cub_project(base, archs))
            continue
        kind, _, what = base.partition(":")
        if kind not in ("ggml", "cutlass") or not what:
            raise SystemExit(f"differential: unknown project {name!r} (--list names them)")
        sources = sources or installed_sources()
        if kind == "ggml":
            projects.append(ggml_project(what, archs, sources["ggml"]))
        else:
            projects.append(cutlass_project(what, archs, sources["cutlass"]))
    return named_by_archs(projects, names)


def named_by_archs(projects, names):
    """The projects, each named as --projects spelled it where it names its archs ("cub-small@90"):
    one TU with two arch lists is two chains, each with its own working copy, edits and counts."""
    for project, name in zip(projects, names):
        if "@" in name:
            project.name = name
    return projects


# ---------------------------------------------------------------------------------------------
# A little C++ lexer: where code, comments, directives and function bodies are, by line


IDENT_RE = re.compile(r"[A-Za-z_]\w*")
NUMBER_RE = re.compile(r"\.?\d(?:[eEpP][+-]|[\w.']|'(?=\w))*")
RAW_RE = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')
DEVICE_WORDS = {"__device__", "__global__", "CUTLASS_DEVICE", "CUTLASS_HOST_DEVICE", "CUTLASS_GLOBAL",
                "CUTE_DEVICE", "CUTE_HOST_DEVICE"}
FN_TAIL_WORDS = {")", "const", "noexcept", "override", "final", "mutable"}


@dataclass
class Tok:
    kind: str  # ident, number, string, punct, pp
    text: str
    start: int
    line: int


@dataclass
class Function:
    kind: str  # kernel, device, host
    open_tok: int
    close_tok: int
    open_line: int
    close_line: int
    signature: list
    template: bool


class Layout:
    """One file's text, lexed: for each line, whether it starts in code (not in a comment, string or
    directive), the scopes open there and the last token before it; its functions."""

    def __init__(self, text):
        self.text = text
        self.lines = text.split("\n")
        self.line_starts = [0]
        for line in self.lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self.state = ["code"] * (len(self.lines) + 1)
        self.toks = []
        self.lex()
        self.scopes()

    def mark(self, start, end, state):
        """Lines that begin inside text[start:end] get `state`."""
        line = self.text.count("\n", 0, start)
        for offset in range(line + 1, line + 1 + self.text.count("\n", start, end)):
            self.state[offset] = state

    def lex(self):
        text, i, n = self.text, 0, len(self.text)
        at_line_start = True
        while i < n:
            c = text[i]
            if c == "\n":
                i, at_line_start = i + 1, True
            elif c in " \t\r\f\v":
                i += 1
            elif c == "\\" and text.startswith("\n", i + 1):
                self.mark(i, i + 2, "splice")
                i += 2
            elif text.startswith("//", i):
                j = i
                while j < n and text[j] != "\n":
                    j += 2 if text.startswith("\\\n", j) else 1
                self.mark(i, j, "comment")
                i = j
            elif text.startswith("/*", i):
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
                self.mark(i, j, "comment")
                i = j
            elif c == "#" and at_line_start:
                j = self.directive_end(i)
                self.toks.append(Tok("pp", text[i:j], i, self.line_of(i)))
                self.mark(i, j, "pp")
                i = j
            else:
                at_line_start = False
                i = self.code_token(i)

    def directive_end(self, i):
        text, n = self.text, len(self.text)
        j = i
        while j < n and text[j] != "\n":
            if text.startswith("\\\n", j):
                j += 2
            elif text.startswith("/*", j):
                k = text.find("*/", j + 2)
                j = n if k < 0 else k + 2
            elif text.startswith("//", j):
                while j < n and text[j] != "\n":
                    j += 2 if text.startswith("\\\n", j) else 1
            else:
                j += 1
        return j

    def code_token(self, i):
        text = self.text
        raw = RAW_RE.match(text, i)
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', raw.end())
            end = len(text) if end < 0 else end + len(raw.group(1)) + 2
            self.mark(i, end, "string")
            self.toks.append(Tok("string", text[i:end], i, self.line_of(i)))
            return end
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            self.mark(i, j, "string")
            self.toks.append(Tok("string", text[i:j + 1], i, self.line_of(i)))
            return j + 1
        match = NUMBER_RE.match(text, i) if (c.isdigit() or (c == "." and text[i + 1:i + 2].isdigit())) \
            else IDENT_RE.match(text, i)
        if match:
            self.toks.append(Tok("number" if c.isdigit() or c == "." else "ident", match.group(0), i,
                                 self.line_of(i)))
            return match.end()
        self.toks.append(Tok("punct", c, i, self.line_of(i)))
        return i + 1

    def line_of(self, offset):
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def scopes(self):
        """stack_at[line]: the scopes open where the line starts (ns, class, fn, block, paren);
        prev_at[line]: the index of the last token before it (-1: none); the functions."""
        self.functions = []
        self.closed_kind = {}
        self.body_stack = {}
        stack, opened = [], []
        self.stack_at = [()] * (len(self.lines) + 1)
        self.prev_at = [-1] * (len(self.lines) + 1)
        line = 0
        for index, tok in enumerate(self.toks):
            while line <= tok.line:
                self.stack_at[line], self.prev_at[line] = tuple(stack), index - 1
                line += 1
            if tok.kind != "punct":
                continue
            if tok.text in "([":
                stack.append("paren")
                opened.append(index)
            elif tok.text == "{":
                stack.append(self.brace_kind(index, stack))
                opened.append(index)
                self.body_stack[index] = tuple(stack)
            elif tok.text in ")]}" and stack:
                kind, start = stack.pop(), opened.pop()
                if tok.text == "}":
                    self.closed_kind[index] = kind
                    if kind == "fn":
                        self.add_function(start, index)
        while line <= len(self.lines):
            self.stack_at[line], self.prev_at[line] = tuple(stack), len(self.toks) - 1
            line += 1

    def signature(self, index):
        """The tokens of the declaration a `{` at index opens (back to the last `;`, `{`, `}`,
        directive or access label at this level)."""
        depth, j = 0, index - 1
        while j >= 0:
            tok = self.toks[j]
            if tok.kind == "pp":
                break
            if tok.kind == "punct":
                if tok.text in ")]":
                    depth += 1
                elif tok.text in "([":
                    depth -= 1
                elif depth == 0 and tok.text in ";{}":
                    break
                elif depth == 0 and tok.text == ":" and j > 0 and \
                        self.toks[j - 1].text in ("public", "private", "protected"):
                    break
            j -= 1
        return self.toks[j + 1:index]

    def brace_kind(self, index, stack):
        sig = self.signature(index)
        words = [t.text for t in sig]
        if "namespace" in words or (len(words) >= 2 and words[-2] == "extern" and sig[-1].kind == "string"):
            return "ns"
        if any(kind not in ("ns", "class") for kind in stack):
            return "block"
        if words and words[-1] in FN_TAIL_WORDS and "(" in words:
            before = words[:words.index("(")]
            if "operator" in before or ("=" not in before and "[" not in before):
                return "fn"
        if any(w in ("struct", "class", "union") for w in words):
            return "class"
        return "block"

    def add_function(self, open_tok, close_tok):
        sig = self.signature(open_tok)
        words = {t.text for t in sig}
        kind = "kernel" if "__global__" in words or "CUTLASS_GLOBAL" in words else \
            "device" if words & DEVICE_WORDS else "host"
        self.functions.append(Function(kind, open_tok, close_tok, self.toks[open_tok].line,
                                       self.toks[close_tok].line, [t.text for t in sig],
                                       "template" in words))

    # Where an edit may go -------------------------------------------------------------------

    def prev_tok(self, line):
        index = self.prev_at[line]
        return self.toks[index] if index >= 0 else None

    def file_scope_points(self):
        """Lines before which a declaration may be inserted: at namespace scope, the line in code,
        after a `;`, a function's or namespace's `}`, a directive, or at the top."""
        points = []
        for line in range(len(self.lines)):
            if self.state[line] != "code" or any(s != "ns" for s in self.stack_at[line]):
                continue
            prev = self.prev_tok(line)
            if prev is None or prev.kind == "pp" or (prev.kind == "punct" and prev.text == ";") or \
                    (prev.text == "}" and self.closed_kind.get(self.prev_at[line]) in ("fn", "ns")):
                points.append(line)
        return points

    def first_kernel_line(self):
        lines = [f.open_line for f in self.functions if f.kind == "kernel"]
        return min(lines) if lines else len(self.lines)

    def above_device_code(self):
        """The last line before which an insertion moves device code: the first kernel, else (the
        kernels come from headers) the last #include."""
        if any(f.kind == "kernel" for f in self.functions):
            return self.first_kernel_line()
        includes = [t.line for t in self.toks if t.kind == "pp" and re.match(r"#\s*include\b", t.text)]
        return max(includes) if includes else len(self.lines)

    def statement_points(self, function):
        """Lines inside a function's body (not nested) where a statement may be inserted."""
        body = self.body_stack[function.open_tok]
        points = []
        for line in range(function.open_line + 1, function.close_line + 1):
            if self.state[line] != "code" or self.stack_at[line] != body:
                continue
            prev = self.prev_tok(line)
            if prev is None or not (prev.text == ";" or self.prev_at[line] == function.open_tok):
                continue
            nxt = self.prev_at[line] + 1
            if nxt < len(self.toks) and self.toks[nxt].text == "else":
                continue
            points.append(line)
        return points

    def device_literals(self):
        """Number tokens in the bodies of device functions and kernels that an edit may change."""
        found = []
        for function in self.functions:
            if function.kind == "host":
                continue
            for index in range(function.open_tok + 1, function.close_tok):
                tok = self.toks[index]
                if tok.kind != "number" or not changed_literal(tok.text):
                    continue
                prev, nxt = self.toks[index - 1].text, self.toks[index + 1].text
                if prev in ("[", "<", "#") or nxt in ("]", ">") or prev == "." or nxt == "::":
                    continue
                found.append(tok)
        return found

    def comment_eol_lines(self):
        """Lines a `//` comment may be appended to: in code or a directive's last line, not
        continued, the next line starting in code."""
        lines = []
        for line, text in enumerate(self.lines[:-1]):
            if not text.strip() or text.endswith("\\") or self.state[line + 1] not in ("code",):
                continue
            if self.state[line] in ("string", "splice"):
                continue
            lines.append(line)
        return lines

    def comment_word_lines(self):
        """Lines inside a block comment (not its first) or holding only a `//` comment."""
        lines = []
        for line, text in enumerate(self.lines[:-1]):
            stripped = text.strip()
            if text.endswith("\\"):
                continue
            if self.state[line] == "comment" and self.state[line + 1] in ("comment", "code") \
                    and "/*" not in text:
                lines.append(line)
            elif self.state[line] == "code" and stripped.startswith("//") and \
                    self.state[line + 1] == "code":
                lines.append(line)
        return lines


def changed_literal(text):
    """Another literal of the same kind as text (an integer + 1, a decimal with a digit more), or
    None when text is not one this script changes."""
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", text)
    if match:
        digits, suffix = match.groups()
        if digits.startswith(("0x", "0X")):
            return f"{hex(int(digits, 16) + 1)}{suffix}"
        if len(digits) > 1 and digits.startswith("0"):
            return None  # octal
        return f"{int(digits) + 1}{suffix}"
    match = re.fullmatch(r"(\d*\.\d*)([eE][+-]?\d+)?([fFlL]?)", text)
    if match and match.group(1) != ".":
        mantissa, exponent, suffix = match.groups()
        if "." in mantissa and mantissa.endswith("."):
            mantissa += "0"
        return f"{mantissa}1{exponent or ''}{suffix}"
    return None


def insert_lines(text, line, new_lines):
    lines = text.split("\n")
    lines[line:line] = new_lines
    return "\n".join(lines)


def replace_span(text, start, end, new):
    return text[:start] + new + text[end:]


# ---------------------------------------------------------------------------------------------
# One chain: a TU, its working copy, its build dirs, its edits

TMPXFT_RE = re.compile(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}")
# ptxas -v's last line times ptxas: it differs between any two runs, plain nvcc's too.
PTXAS_TIME_RE = re.compile(rb"(ptxas info\s*: Compile time = )[0-9.]+( ms)")
CLASSES = ("host-lines", "host-function", "comment-eol", "comment-doc", "comment-line",
           "comment-header", "device-const", "arch-900", "flag-define", "flag-ptxas", "env",
           "revert", "touch", "s1-builtin-line", "s2-incbin", "s3-timestamp", "s3-xcat-header",
           "s4-local-var", "s5-line-one")
PTXAS_OPTIONS = (("-Xptxas", "-v"), ("-Xptxas=-O2",), ("-maxrregcount=64",))


@dataclass
class State:
    """What a chain's compile sees: the text of every file an edit has touched (None: deleted), the
    extra flags, the extra environment; `hostile`: it holds a construct of a hostile class."""
    files: dict
    flags: tuple = ()
    env: tuple = ()
    hostile: bool = False

    def copy(self, **changes):
        values = {"files": dict(self.files), "flags": self.flags, "env": self.env,
                  "hostile": self.hostile}
        values.update(changes)
        return State(**values)


@dataclass
class Result:
    project: str
    index: int
    cls: str
    edit: str
    kind: str = ""  # what nvfresh did: compiled, skipped, served, failed, ...
    cause: str = ""
    steps_served: int = 0
    steps_run: int = 0
    verify_mismatches: int = 0
    verdict: str = "same"  # same, failed (both, alike), differs, no-site
    details: str = ""
    kept: str = ""
    bytes_differ: bool = False
    seconds: float = 0.0


class NoSite(Exception):
    """The edit found nowhere to go in this TU."""


class Chain:
    def __init__(self, run, project, index):
        self.run, self.project, self.index = run, project, index
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", project.name)
        self.dir = run.work / slug
        self.src, self.nvf, self.plain = self.dir / "src", self.dir / "nvfresh", self.dir / "plain"
        self.rng = random.Random(f"{run.seed}/{project.name}")
        self.counter = 0
        self.results = []
        self.history = []
        self.headers = []
        self.events_seen = 0
        self.steps_seen = 0
        self.pending_note = ""  # the files changed since the last compile, said with the next edit
        self.tags = 0
        self.originals = {}

    # Setting up, writing, compiling --------------------------------------------------------------

    def setup(self):
        benchlib.fresh_dir(self.dir)
        for source, target in self.project.copies.items():
            destination = self.src / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            if Path(source).is_dir():
                shutil.copytree(source, destination)
            else:
                shutil.copy2(source, destination)
        for name, text in self.project.written.items():
            path = self.src / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.nvf / ".nvfresh").mkdir(parents=True)
        # The build dir of a CMake tree whose source dir is the working copy: nvfresh's source
        # tree, where a header edited only in comments may still be served from the cache.
        (self.nvf / "CMakeCache.txt").write_text(
            "# A build dir of bench/differential.py: only the source dir, as CMake writes it.\n"
            f"CMAKE_HOME_DIRECTORY:INTERNAL={self.src}\n")
        self.plain.mkdir()
        self.state = State({})

    def text(self, rel, state=None):
        state = state or self.state
        if rel not in state.files:
            state.files[rel] = (self.src / rel).read_text(errors="surrogateescape")
        return state.files[rel]

    def apply(self, new):
        """Writes the files whose text differs between the current state and `new`."""
        for rel, text in new.files.items():
            old = self.state.files.get(rel) if rel in self.state.files else self.disk_text(rel)
            if text == old:
                continue
            path = self.src / rel
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text, errors="surrogateescape")
        for rel in self.state.files:
            if rel not in new.files:
                raise AssertionError(f"state lost {rel}")
        self.state = new

    def disk_text(self, rel):
        path = self.src / rel
        return path.read_text(errors="surrogateescape") if path.exists() else None

    def command(self, state):
        src = str(self.src)
        flags = [f.replace("{src}", src) for f in self.project.flags]
        return ["-forward-unknown-to-host-compiler", *flags, *state.flags,
                *arch_flags(self.project.archs), "-MD", "-MT", "obj.o", "-MF", "obj.o.d", "-x", "cu",
                "-c", str(self.src / self.project.tu), "-o", "obj.o"]

    def env(self, state, nvfresh_side, extra=None):
        env = dict(self.run.base_env)
        env.update(dict(state.env))
        if nvfresh_side:
            env.update(self.run.nvfresh_env)
            env["NVFRESH_LOG_FILE"] = str(self.dir / "nvfresh.log")
            env.update(extra or {})
        return env

    def compile(self, state, nvfresh_side, extra=None, cwd=None):
        args = self.command(state)
        cmd = [self.run.nvfresh, self.run.nvcc, *args] if nvfresh_side else [self.run.nvcc, *args]
        cwd = cwd or (self.nvf if nvfresh_side else self.plain)
        if not nvfresh_side:
            for name in ("obj.o", "obj.o.d"):
                (cwd / name).unlink(missing_ok=True)
        result = subprocess.run(cmd, cwd=cwd, env=self.env(state, nvfresh_side, extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        return result, cmd

    def log_lines(self, name, seen):
        path = self.nvf / ".nvfresh" / name
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return lines[seen:], len(lines)

    # One edit, compiled both ways and compared ------------------------------------------------

    def step(self, cls, edit, new_state, extra=None):
        """Applies new_state, compiles it both ways, compares; returns the Result."""
        started = time.monotonic()
        before = self.state
        self.apply(new_state)
        self.counter += 1
        result = Result(self.project.name, self.counter, cls, (self.pending_note + edit).strip())
        self.pending_note = ""
        nvf, nvf_cmd = self.compile(self.state, True, extra)
        events, self.events_seen = self.log_lines("events.log", self.events_seen)
        steps, self.steps_seen = self.log_lines("steps.log", self.steps_seen)
        self.read_outcome(result, events, steps)
        plain, plain_cmd = self.compile(self.state, False)
        problems = self.compare(nvf, plain, result)
        result.seconds = time.monotonic() - started
        if problems:
            result.verdict = "differs"
            self.keep_differing(result, problems, before, nvf, plain, nvf_cmd, plain_cmd, extra,
                                events, steps)
            for name in ("obj.o", "obj.o.d"):  # the next edit starts from no object, not a wrong one
                (self.nvf / name).unlink(missing_ok=True)
        elif plain.returncode != 0:
            result.verdict = "failed"
            result.details = first_error(plain.stderr)
        if plain.returncode == 0 and not self.state.hostile:
            self.history.append(self.state.copy())
        if plain.returncode != 0:  # the edit broke the code: back to the state before it
            self.apply(self.restored(before))
        self.results.append(result)
        self.run.report(self, result)
        return result

    def read_outcome(self, result, events, steps):
        for line in events:
            fields = line.split("\t")
            if len(fields) >= 3 and fields[1] != "passthrough":
                result.kind, result.cause = fields[1], fields[2]
        for line in steps:
            fields = line.split("\t")
            if len(fields) < 4:
                continue
            if fields[2] == "served":
                result.steps_served += 1
            else:
                result.steps_run += 1
            if fields[3] == "cache_mismatch":
                result.verify_mismatches += 1
        if not result.kind:
            result.kind = "?"

    def compare(self, nvf, plain, result):
        """What differs between the two compiles (empty: nothing)."""
        problems = []
        if nvf.returncode != plain.returncode:
            problems.append(f"exit status: nvfresh {nvf.returncode}, nvcc {plain.returncode}")
        for stream, ours, theirs in (("stdout", nvf.stdout, plain.stdout), ("stderr", nvf.stderr, plain.stderr)):
            ours, theirs = console(ours), console(theirs)
            if ours != theirs:
                diff = difflib.unified_diff(theirs.decode(errors="replace").splitlines(),
                                            ours.decode(errors="replace").splitlines(),
                                            f"nvcc {stream}", f"nvfresh {stream}", lineterm="")
                problems.append(f"{stream} differs:\n" + "\n".join(list(diff)[:60]))
        if nvf.returncode != 0 or plain.returncode != 0:
            return problems
        a, b = self.nvf / "obj.o", self.plain / "obj.o"
        if not a.exists() or not b.exists():
            problems.append(f"object missing: nvfresh {a.exists()}, nvcc {b.exists()}")
            return problems
        compared = subprocess.run([self.run.nvfresh, "compare", str(a), str(b)], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=self.run.base_env)
        if compared.returncode != 0:
            problems.append(f"nvfresh compare exit {compared.returncode}:\n"
                            + compared.stdout.decode(errors="replace"))
        result.bytes_differ = normalized(a.read_bytes()) != normalized(b.read_bytes())
        missing = depfile_set(self.plain / "obj.o.d") - depfile_set(self.nvf / "obj.o.d")
        if missing:
            problems.append("depfile: nvfresh's leaves out " + ", ".join(sorted(missing)[:10]))
        return problems

    def keep_differing(self, result, problems, before, nvf, plain, nvf_cmd, plain_cmd, extra, events, steps):
        keep = self.dir / f"differs-{result.index:03d}"
        keep.mkdir()
        for name in ("obj.o", "obj.o.d"):
            for side, directory in (("nvfresh", self.nvf), ("nvcc", self.plain)):
                if (directory / name).exists():
                    shutil.copy(directory / name, keep / f"{side}-{name}")
        source_diff = []
        for rel in sorted(self.state.files):
            old = before.files.get(rel) if rel in before.files else self.state.files[rel]
            new = self.state.files[rel]
            if old != new:
                source_diff += difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(),
                                                    f"a/{rel}", f"b/{rel}", lineterm="")
            if new is not None:
                target = keep / "sources" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(new, errors="surrogateescape")
        env_shown = dict(self.state.env)
        explain = subprocess.run([self.run.nvfresh, "explain", str(self.nvf / "obj.o"), "-C", str(self.nvf)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 env=self.env(self.state, True, extra))
        report = [f"{self.project.name} edit {result.index} ({result.cls}): {result.edit}",
                  f"nvfresh did: {result.kind} ({result.cause}), steps served {result.steps_served}, "
                  f"run {result.steps_run}",
                  "environment: " + (" ".join(f"{k}={v}" for k, v in env_shown.items()) or "(none extra)"),
                  "nvfresh env: " + " ".join(f"{k}={v}" for k, v in {**self.run.nvfresh_env,
                                                                     **(extra or {})}.items()),
                  f"nvfresh command (cwd {self.nvf}):", "  " + " ".join(nvf_cmd),
                  f"nvcc command (cwd {self.plain}):", "  " + " ".join(plain_cmd),
                  "what differs:", *problems, "the edit:", *source_diff,
                  "events.log:", *events, "steps.log:", *steps,
                  "nvfresh explain:", explain.stdout.decode(errors="replace")]
        (keep / "report.txt").write_text("\n".join(report) + "\n")
        for side, out in (("nvfresh", nvf), ("nvcc", plain)):
            (keep / f"{side}.stdout").write_bytes(out.stdout)
            (keep / f"{side}.stderr").write_bytes(out.stderr)
        result.kept = str(keep)
        result.details = "\n".join(report[:10 + len(problems) + len(source_diff)])

    # The edits ----------------------------------------------------------------------------------

    def fresh_tag(self, what):
        self.tags += 1
        return f"nvfresh_dt_{what}_{self.tags}"

    def local_headers(self):
        return [h for h in self.headers if (self.src / h).exists()]

    def pick_file(self, header_share):
        headers = self.local_headers()
        if headers and self.rng.random() < header_share:
            return self.rng.choice(headers)
        return self.project.tu

    def host_block(self, tag, value, blank):
        return (["#ifndef __CUDA_ARCH__"] + [""] * blank +
                [f"__attribute__((used)) static int {tag} = {value};", "#endif"])

    def insert_host_lines(self, state, rel, above_kernels=True, blank=None):
        """state with a host-only block inserted at file scope of rel (above its first kernel when
        there is a place there); the description."""
        text = self.text(rel, state)
        layout = Layout(text)
        points = layout.file_scope_points()
        above = [p for p in points if p <= layout.above_device_code()]
        points = above if (above_kernels and above) else points
        if not points:
            raise NoSite(f"no file-scope line in {rel}")
        line = self.rng.choice(points)
        blank = self.rng.choice((0, 0, 1, 3, 9)) if blank is None else blank
        tag = self.fresh_tag("host")
        block = self.host_block(tag, self.rng.randint(1, 999), blank)
        state.files[rel] = insert_lines(text, line, block)
        return f"{len(block)} host-only lines added above line {line + 1} of {rel}"

    def edit_host_lines(self):
        state = self.state.copy()
        rel = self.pick_file(0.3)
        text = self.text(rel, state)
        ours = [m for m in re.finditer(r"__attribute__\(\(used\)\) static int (nvfresh_dt_host_\d+) = (\d+);",
                                       text)]
        choice = self.rng.random()
        if ours and choice < 0.3:
            match = self.rng.choice(ours)
            state.files[rel] = replace_span(text, match.start(2), match.end(2), str(int(match.group(2)) + 1))
            return [("value changed in a host-only block of " + rel, state)]
        if ours and choice < 0.6:
            match = self.rng.choice(ours)
            lines = text.split("\n")
            line = text.count("\n", 0, match.start())
            start = line
            while start > 0 and lines[start - 1] != "#ifndef __CUDA_ARCH__":
                start -= 1
            del lines[start - 1:line + 2]
            state.files[rel] = "\n".join(lines)
            return [(f"host-only block removed from {rel} (lines {start}-{line + 2})", state)]
        return [(self.insert_host_lines(state, rel), state)]

    def edit_host_function(self):
        state = self.state.copy()
        rel = self.project.tu
        text = self.text(rel, state)
        ours = list(re.finditer(r"volatile int nvfresh_dt_stmt = (\d+);", text))
        if ours and self.rng.random() < 0.4:
            match = self.rng.choice(ours)
            state.files[rel] = replace_span(text, match.start(1), match.end(1), str(int(match.group(1)) + 1))
            return [(f"value changed in a statement added to a host function of {rel}", state)]
        layout = Layout(text)
        sites = [(f, line) for f in layout.functions if f.kind == "host" and "constexpr" not in f.signature
                 for line in layout.statement_points(f)]
        if not sites:
            raise NoSite(f"no host function body in {rel}")
        function, line = self.rng.choice(sites)
        value = self.rng.randint(1, 999)
        state.files[rel] = insert_lines(text, line, [
            "#ifndef __CUDA_ARCH__",
            f"  {{ volatile int nvfresh_dt_stmt = {value}; (void)nvfresh_dt_stmt; }}", "#endif"])
        name = next((w for w in reversed(function.signature[:function.signature.index("(")])
                     if IDENT_RE.fullmatch(w)), "?") if "(" in function.signature else "?"
        return [(f"statement added to host function {name} at line {line + 1} of {rel}", state)]

    def comment_eol(self, state, rel):
        text = self.text(rel, state)
        layout = Layout(text)
        lines = layout.comment_eol_lines()
        if not lines:
            raise NoSite(f"no line for a comment in {rel}")
        line = self.rng.choice(lines)
        all_lines = text.split("\n")
        end = len(all_lines[line].rstrip("\r"))
        all_lines[line] = all_lines[line][:end] + f" // nvfresh-dt {self.rng.randint(1, 99999)}" + \
            all_lines[line][end:]
        state.files[rel] = "\n".join(all_lines)
        return f"comment appended to line {line + 1} of {rel}"

    def comment_doc(self, state, rel):
        text = self.text(rel, state)
        layout = Layout(text)
        lines = layout.comment_word_lines()
        if not lines:
            raise NoSite(f"no comment in {rel}")
        line = self.rng.choice(lines)
        all_lines = text.split("\n")
        word = f" nvfresh-dt{self.rng.randint(1, 99999)}"
        target = all_lines[line]
        if "*/" in target:
            at = target.index("*/")
            all_lines[line] = target[:at] + word.strip() + " " + target[at:]
        else:
            all_lines[line] = target + word
        state.files[rel] = "\n".join(all_lines)
        return f"word added inside a comment on line {line + 1} of {rel}"

    def comment_line(self, state, rel):
        text = self.text(rel, state)
        layout = Layout(text)
        points = layout.file_scope_points()
        above = [p for p in points if p <= layout.above_device_code()] or points
        if not above:
            raise NoSite(f"no file-scope line in {rel}")
        line = self.rng.choice(above)
        if self.rng.random() < 0.5:
            new = [f"// nvfresh-dt {self.rng.randint(1, 99999)}: a comment line"]
        else:
            new = ["/*", f" * nvfresh-dt {self.rng.randint(1, 99999)}: a comment block", " */"]
        state.files[rel] = insert_lines(text, line, new)
        return f"{len(new)} comment line(s) added above line {line + 1} of {rel}"

    def edit_comment_eol(self):
        state = self.state.copy()
        return [(self.comment_eol(state, self.project.tu), state)]

    def edit_comment_doc(self):
        state = self.state.copy()
        return [(self.comment_doc(state, self.project.tu), state)]

    def edit_comment_line(self):
        state = self.state.copy()
        return [(self.comment_line(state, self.project.tu), state)]

    def edit_comment_header(self):
        headers = self.local_headers()
        if not headers:
            raise NoSite("no header of the project")
        state = self.state.copy()
        rel = self.rng.choice(headers)
        how = self.rng.choice((self.comment_eol, self.comment_doc, self.comment_line, None))
        if how is None:
            text = self.text(rel, state)
            state.files[rel] = text + ("" if text.endswith("\n") else "\n") + \
                f"// nvfresh-dt {self.rng.randint(1, 99999)}: appended\n"
            return [(f"comment line appended to {rel}", state)]
        return [(how(state, rel), state)]

    def edit_device_const(self):
        state = self.state.copy()
        files = [self.project.tu] + self.local_headers()
        first = self.pick_file(0.4)
        files.remove(first)
        for rel in [first] + self.rng.sample(files, len(files)):
            text = self.text(rel, state)
            literals = Layout(text).device_literals()
            if literals:
                tok = self.rng.choice(literals)
                new = changed_literal(tok.text)
                state.files[rel] = replace_span(text, tok.start, tok.start + len(tok.text), new)
                return [(f"device literal {tok.text} -> {new} on line {tok.line + 1} of {rel}", state)]
        raise NoSite("no literal in device code")

    def edit_arch_900(self):
        """sm_90-only code in a kernel of the TU (of a header where the TU has none), or its
        constant changed."""
        state = self.state.copy()
        files = [self.project.tu] + self.local_headers()
        ours = [(rel, m) for rel in files for m in re.finditer(
            r"blockDim\.x == (\d+)u\) \{ __trap\(\); \} // nvfresh-dt-sm90", self.text(rel, state))]
        if ours and self.rng.random() < 0.6:
            rel, match = self.rng.choice(ours)
            state.files[rel] = replace_span(state.files[rel], match.start(1), match.end(1),
                                            str(int(match.group(1)) + 1))
            return [(f"constant changed under __CUDA_ARCH__ >= 900 in {rel}", state)]
        for rel in files:
            layout = Layout(self.text(rel, state))
            kernels = [f for f in layout.functions if f.kind == "kernel"
                       and layout.prev_at[f.open_line + 1] == f.open_tok]
            kernels = [f for f in kernels if not f.template] or kernels
            if kernels:
                break
        else:
            raise NoSite("no kernel in the TU or its headers")
        kernel = self.rng.choice(kernels)
        value = self.rng.randint(2000, 9000)
        state.files[rel] = insert_lines(state.files[rel], kernel.open_line + 1, [
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
            f"  if (blockDim.x == {value}u) {{ __trap(); }} // nvfresh-dt-sm90", "#endif"])
        return [(f"sm_90-only code put into the kernel at line {kernel.open_line + 1} of {rel}", state)]

    def edit_flag_define(self):
        flags = list(self.state.flags)
        ours = [f for f in flags if f.startswith("-DNVFRESH_DT_FLAG=")]
        choice = self.rng.random()
        base_ndebug = "-DNDEBUG" in self.project.flags
        if choice < 0.25:
            if "-UNDEBUG" in flags:
                flags.remove("-UNDEBUG")
                what = "-UNDEBUG removed"
            elif base_ndebug:
                flags.append("-UNDEBUG")
                what = "-UNDEBUG added (NDEBUG off)"
            elif "-DNDEBUG" in flags:
                flags.remove("-DNDEBUG")
                what = "-DNDEBUG removed"
            else:
                flags.append("-DNDEBUG")
                what = "-DNDEBUG added"
        elif ours and choice < 0.6:
            flags.remove(ours[0])
            what = f"{ours[0]} removed"
        else:
            for flag in ours:
                flags.remove(flag)
            flag = f"-DNVFRESH_DT_FLAG={self.rng.randint(1, 999)}"
            flags.append(flag)
            what = f"{flag} added" if not ours else f"{ours[0]} -> {flag}"
        return [(what, self.state.copy(flags=tuple(flags)))]

    def edit_flag_ptxas(self):
        flags = list(self.state.flags)
        option = self.rng.choice(PTXAS_OPTIONS)
        n = len(option)
        present = [i for i in range(len(flags) - n + 1) if tuple(flags[i:i + n]) == option]
        if present:
            del flags[present[0]:present[0] + n]
            what = " ".join(option) + " removed"
        else:
            flags += option
            what = " ".join(option) + " added"
        return [(what, self.state.copy(flags=tuple(flags)))]

    def edit_env(self):
        env = dict(self.state.env)
        name = self.rng.choice(("NVCC_APPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"))
        if name in env and self.rng.random() < 0.4:
            del env[name]
            what = f"{name} unset"
        else:
            env[name] = f"-DNVFRESH_DT_ENV_{name[5:-6]}={self.rng.randint(1, 999)}"
            what = f"{name}={env[name]}"
        return [(what, self.state.copy(env=tuple(sorted(env.items()))))]

    def edit_revert(self):
        earlier = [s for s in self.history[:-1] if s != self.state]
        if not earlier:
            raise NoSite("no earlier state")
        back = self.rng.randint(1, min(4, len(earlier)))
        target = earlier[-back]
        return [(f"back to the state of {back} good compile(s) before the last", self.restored(target))]

    def restored(self, target):
        """A state with target's files, flags and environment (files it does not name as they
        were before any edit)."""
        files = dict(target.files)
        for rel in self.state.files:
            if rel not in files:
                files[rel] = self.original(rel)
        return State(files, target.flags, target.env, target.hostile)

    def original(self, rel):
        return self.history[0].files.get(rel) if self.history and rel in self.history[0].files \
            else self.originals.get(rel)

    def touch(self, rel):
        path = self.src / rel
        old = path.stat().st_mtime
        while int(time.time()) <= int(old):
            time.sleep(0.05)
        os.utime(path)

    def edit_touch(self):
        if self.pending_note:  # files changed since the last compile: compile them, then only touch
            self.step("revert", "", self.state.copy())
        rel = self.pick_file(0.5)
        self.touch(rel)
        return [(f"{rel} touched (content unchanged)", self.state.copy())]

    # The hostile classes: set up, then trigger; run_class takes the chain back to where it was
    # (the files only: the next edit's compile is the first to see it).

    def append_to_tu(self, state, lines):
        rel = self.project.tu
        text = self.text(rel, state)
        state.files[rel] = text + ("" if text.endswith("\n") else "\n") + "\n".join(lines) + "\n"

    def edit_s1_builtin_line(self):
        state = self.state.copy(hostile=True)
        self.append_to_tu(state, ["__global__ void nvfresh_dt_line_kernel(int* out) { out[0] = __builtin_LINE(); }"])
        yield "kernel returning __builtin_LINE() appended to the TU", state
        moved = self.state.copy()
        yield self.insert_host_lines(moved, self.project.tu, blank=1) + " (the kernel's line moves)", moved

    def edit_s2_incbin(self):
        state = self.state.copy(hostile=True)
        blob = "nvfresh_dt_blob.glsl"
        state.files[blob] = "shader v1 // first\n"
        path = self.src / blob
        self.append_to_tu(state, ["#ifndef __CUDA_ARCH__",
                                  f'asm(".section .rodata\\n.incbin \\"{path}\\"\\n.previous");', "#endif"])
        yield f"host asm .incbin of {blob} appended to the TU", state
        edited = self.state.copy()
        edited.files[blob] = f"shader v1 // SECOND {self.rng.randint(1, 999)}\n"
        yield f"{blob} edited only after its //", edited

    def edit_s3_timestamp(self):
        state = self.state.copy(hostile=True)
        self.append_to_tu(state, ["#ifndef __CUDA_ARCH__",
                                  "__attribute__((used)) static const char nvfresh_dt_stamp[] = __TIMESTAMP__;",
                                  "#endif"])
        yield "__TIMESTAMP__ in host code appended to the TU", state
        self.touch(self.project.tu)
        yield f"{self.project.tu} touched (content unchanged)", self.state.copy()

    def edit_s3_xcat_header(self):
        headers = self.local_headers()
        if not headers:
            raise NoSite("no header of the project")
        rel = self.rng.choice(headers)
        state = self.state.copy(hostile=True)
        text = self.text(rel, state)
        state.files[rel] = text + ("" if text.endswith("\n") else "\n") + "\n".join([
            "#ifndef __CUDA_ARCH__", "#define NVFRESH_DT_XCAT(a, b) a##b",
            "__attribute__((used)) static const char nvfresh_dt_hstamp[] = NVFRESH_DT_XCAT(__TIME, STAMP__);",
            "#endif"]) + "\n"
        yield f"__TIMESTAMP__ spelled through token pasting appended to {rel}", state
        commented = self.state.copy()
        time.sleep(1.05)
        commented.files[rel] = self.state.files[rel] + f"// nvfresh-dt {self.rng.randint(1, 99999)}\n"
        yield f"comment appended to {rel} (its mtime moves)", commented

    def edit_s4_local_var(self):
        state = self.state.copy(hostile=True)
        self.append_to_tu(state, ["__device__ int __cuda_local_var_0_1_x;"])
        line = self.ii_line(state, "__cuda_local_var_0_1_x")
        rel = self.project.tu
        state.files[rel] = state.files[rel].replace("__cuda_local_var_0_1_x", f"__cuda_local_var_{line}_1_x")
        yield f"__device__ int __cuda_local_var_{line}_1_x appended ({line}: its line in cicc's input)", state
        moved = self.state.copy()
        yield self.insert_host_lines(moved, rel, blank=0) + " (the variable's line moves)", moved

    def ii_line(self, state, marker):
        """The line of cicc's input (the first arch's .cpp1.ii) that holds marker, from a plain
        compile with --keep."""
        keep = benchlib.fresh_dir(self.dir / "keep")
        previous = self.state
        self.apply(state)
        scratch = state.copy(flags=state.flags + ("--keep", f"--keep-dir={keep}"))
        result, _ = self.compile(scratch, False, cwd=keep)
        self.apply(self.restored(previous))
        for ii in sorted(keep.glob("*.cpp1.ii")):
            for number, text in enumerate(ii.read_text(errors="replace").split("\n"), 1):
                if marker in text:
                    shutil.rmtree(keep, ignore_errors=True)
                    return number
        raise NoSite(f"no {marker} in cicc's input (nvcc exit {result.returncode})")

    def edit_s5_line_one(self):
        state = self.state.copy(hostile=True)
        rel = self.project.tu
        state.files[rel] = "typedef int nvfresh_dt_line_one_t;\n" + self.text(rel, state)
        yield "code put on line 1 of the TU", state
        moved = self.state.copy()
        yield (self.insert_host_lines(moved, rel, blank=0) + " (NVFRESH_CACHE_VERIFY=1)", moved,
               {"NVFRESH_CACHE_VERIFY": "1"})

    EDITS = {"host-lines": edit_host_lines, "host-function": edit_host_function,
             "comment-eol": edit_comment_eol, "comment-doc": edit_comment_doc,
             "comment-line": edit_comment_line, "comment-header": edit_comment_header,
             "device-const": edit_device_const, "arch-900": edit_arch_900,
             "flag-define": edit_flag_define, "flag-ptxas": edit_flag_ptxas, "env": edit_env,
             "revert": edit_revert, "touch": edit_touch, "s1-builtin-line": edit_s1_builtin_line,
             "s2-incbin": edit_s2_incbin, "s3-timestamp": edit_s3_timestamp,
             "s3-xcat-header": edit_s3_xcat_header, "s4-local-var": edit_s4_local_var,
             "s5-line-one": edit_s5_line_one}

    def run_class(self, cls, retry=False):
        """Runs one edit of cls, all its steps; False when it found no place and may be retried."""
        start = self.state
        try:
            for item in self.EDITS[cls](self):
                edit, state, extra = (tuple(item) + (None,))[:3]
                result = self.step(cls, edit, state, extra)
                if result.verdict == "failed" and cls.startswith("s"):
                    break  # a construct the TU does not take: the chain is back where it was
        except NoSite as why:
            if retry:
                return False
            self.results.append(Result(self.project.name, self.counter, cls, str(why), verdict="no-site"))
            self.run.report(self, self.results[-1])
        if self.state.hostile:  # back to where the class started, compiled with the next edit
            self.apply(self.restored(start))
            self.pending_note = f"(the files first back from {cls}) "
        return True

    def go(self, schedule, edits):
        self.setup()
        first = self.step("initial", "the TU as fetched", self.state.copy())
        if first.verdict == "failed":
            raise SystemExit(f"differential: {self.project.name} does not compile with plain nvcc:\n"
                             f"{first.details}")
        self.headers = sorted({rel for rel in self.project_inputs() if rel != self.project.tu})
        for rel in [self.project.tu] + self.headers:
            self.originals[rel] = self.text(rel)
        self.history = [self.state.copy()]
        turns = [(cls, 0) for cls in schedule] if edits is None else []
        budget = 4 * (edits or 0) + 4 * len(schedule)  # no endless turns when nothing finds a place
        while budget and (turns if edits is None else self.counter - 1 < edits):
            if self.run.deadline is not None and time.monotonic() > self.run.deadline:
                break  # --seconds: no edit starts after it (a hostile class ends its trigger)
            budget -= 1
            if not turns:
                turns = [(cls, 0) for cls in schedule]
            cls, tries = turns.pop(0)
            if not self.run_class(cls, retry=tries < 2 and bool(turns)):
                turns.insert(min(2, len(turns)), (cls, tries + 1))  # no place yet (a revert with no past)
        return self.results

    def project_inputs(self):
        """The working copy's files that the first compile read (its depfile), relative."""
        found = []
        for path in depfile_set(self.plain / "obj.o.d"):
            try:
                found.append(str(Path(path).relative_to(self.src)))
            except ValueError:
                continue
        return found


def normalized(data):
    return TMPXFT_RE.sub(b"tmpxft_x_x", data)


def console(data):
    """What a compile printed, apart from what differs between any two runs of nvcc."""
    return PTXAS_TIME_RE.sub(rb"\1?\2", normalized(data))


def depfile_set(path):
    """The prerequisites of a depfile, as real paths (relative ones taken from its dir)."""
    path = Path(path)
    if not path.exists():
        return set()
    return {os.path.realpath(path.parent / p) for p in benchlib.depfile_paths(path)}


def first_error(stderr):
    lines = stderr.decode(errors="replace").splitlines()
    errors = [line for line in lines if "error" in line]
    return (errors or lines or ["(no output)"])[0][:300]


# ---------------------------------------------------------------------------------------------
# The run: chains in parallel, the report


class Run:
    def __init__(self, args, work):
        self.seed, self.work = args.seed, work
        self.deadline = time.monotonic() + args.seconds if args.seconds else None
        self.nvfresh = str(Path(args.nvfresh or benchlib.nvfresh_bin("differential")).resolve())
        self.nvcc = args.nvcc or benchlib.default_nvcc()
        self.lock = threading.Lock()
        self.verbose = not args.quiet
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("NVFRESH_") and k not in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS")}
        env["XDG_STATE_HOME"] = str(work / "state")  # the registry of build trees (nvfresh space)
        self.base_env = env
        self.nvfresh_env = {"NVFRESH_CACHE_DIR": str(work / "cache")}

    def report(self, chain, result):
        if not self.verbose and result.verdict != "differs":
            return
        what = result.kind if result.verdict != "no-site" else "-"
        if result.cause and result.cause != "none":
            what += f" ({result.cause})"
        if result.steps_served or result.steps_run:
            what += f", steps {result.steps_served} served/{result.steps_run} run"
        if result.verify_mismatches:
            what += f", {result.verify_mismatches} verify mismatch(es)"
        line = (f"[{chain.project.name} {result.index}] {result.cls}: {result.edit} -> {what}; "
                f"{result.verdict}" + (f" ({result.seconds:.1f} s)" if result.seconds else ""))
        with self.lock:
            print(line, flush=True)
            if result.verdict == "differs":
                print("  " + result.details.replace("\n", "\n  "), flush=True)
                print(f"  kept in {result.kept}", flush=True)
            elif result.verdict == "failed":
                print(f"  (both failed alike: {result.details})", flush=True)


def schedule_for(classes, seed, index, chains, each_once=False):
    """The classes in a seeded order, rotated so that each chain starts at another place; with
    each_once, only this chain's share of them (dealt out like cards)."""
    order = list(classes)
    random.Random(f"{seed}/classes").shuffle(order)
    if each_once:
        return order[index::max(chains, 1)]
    shift = (index * len(order)) // max(chains, 1)
    return order[shift:] + order[:shift]


COLUMNS = ("tried", "skipped", "served", "compiled", "steps served", "steps run", "failed", "no site",
           "differs")


def tally(results):
    row = dict.fromkeys(COLUMNS, 0)
    for r in results:
        if r.verdict == "no-site":
            row["no site"] += 1
            continue
        row["tried"] += 1
        row["skipped"] += r.kind == "skipped"
        row["served"] += r.kind == "served"
        row["compiled"] += r.kind == "compiled"
        row["steps served"] += r.steps_served
        row["steps run"] += r.steps_run
        row["failed"] += r.verdict == "failed"
        row["differs"] += r.verdict == "differs"
    return row


def table(title, groups):
    width = max([len(title)] + [len(name) for name, _ in groups]) + 2
    lines = [f"{title:<{width}}" + "".join(f"{c:>13}" for c in COLUMNS)]
    for name, results in groups:
        row = tally(results)
        lines.append(f"{name:<{width}}" + "".join(f"{row[c]:>13}" for c in COLUMNS))
    return "\n".join(lines)


def summary(results, projects):
    by_project = [(p.name, [r for r in results if r.project == p.name]) for p in projects]
    classes = ["initial", *CLASSES]
    by_class = [(c, [r for r in results if r.cls == c]) for c in classes if any(r.cls == c for r in results)]
    out = [table("project", by_project + [("all", results)]), "", table("edit class", by_class)]
    mismatches = [r for r in results if r.verify_mismatches]
    if mismatches:
        out.append("")
        out.append("verify mismatches (NVFRESH_CACHE_VERIFY=1 found a served step unlike its run; the objects "
                   "compared the same):")
        out += [f"  {r.project} edit {r.index} ({r.cls}): {r.verify_mismatches}" for r in mismatches]
    bytes_only = [r for r in results if r.bytes_differ and r.verdict != "differs"]
    if bytes_only:
        out.append("")
        out.append("objects that `nvfresh compare` calls the same but whose bytes differ (tmpxft stem aside):")
        out += [f"  {r.project} edit {r.index} ({r.cls}): {r.edit}" for r in bytes_only]
    return "\n".join(out)


def list_everything():
    print("projects: cub-small, cub-device, ggml:<tu> (default group `ggml`: "
          + ", ".join(GGML_DEFAULT) + "), cutlass:<example dir>/<file> (default group `cutlass`: "
          + ", ".join(CUTLASS_DEFAULT) + "); a name may end in @<arch>,<arch>")
    print("edit classes: " + ", ".join(CLASSES))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default=DEFAULT_PROJECTS)
    parser.add_argument("--edits", type=int, default=40, help="compiles per chain after its first")
    parser.add_argument("--each-once", action="store_true",
                        help="instead of --edits: every class once, the classes shared out among the chains")
    parser.add_argument("--jobs", type=int, default=1, help="chains run at once")
    parser.add_argument("--seconds", type=float,
                        help="start no edit after this many seconds (each chain stops at an edit's end)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nvfresh")
    parser.add_argument("--nvcc")
    parser.add_argument("--classes", help="comma-separated edit classes (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch dir")
    parser.add_argument("--work", help="the scratch dir (kept; made empty first)")
    parser.add_argument("--json", help="write every edit's result to this file")
    parser.add_argument("--quiet", action="store_true", help="print only differing edits and the tables")
    parser.add_argument("--list", action="store_true", help="list the projects and edit classes")
    args = parser.parse_args()
    if args.list:
        list_everything()
        return 0
    classes = [c.strip() for c in args.classes.split(",")] if args.classes else list(CLASSES)
    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        raise SystemExit(f"differential: unknown edit classes {unknown} (--list names them)")
    projects = make_projects(expand_projects(args.projects))
    if args.work:
        work = benchlib.fresh_dir(Path(args.work).resolve())
        return run_all(args, projects, classes, work)
    work = Path(os.path.realpath(tempfile.mkdtemp(prefix="nvfresh-differential-")))
    status = run_all(args, projects, classes, work)
    if status == 0 and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"scratch kept in {work}")
    return status


def run_all(args, projects, classes, work):
    run = Run(args, work)
    edits = "every class once among them" if args.each_once else f"{args.edits} edits each"
    print(f"differential: {len(projects)} chain(s), {edits}, seed {args.seed}, "
          f"jobs {args.jobs}; nvfresh {run.nvfresh}; {benchlib.nvcc_version_line(run.nvcc)}; work {work}",
          flush=True)
    chains = [Chain(run, p, i) for i, p in enumerate(projects)]
    started = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(c.go, schedule_for(classes, args.seed, c.index, len(chains), args.each_once),
                               None if args.each_once else args.edits)
                   for c in chains]
        for future in futures:
            results += future.result()
    print()
    print(summary(results, projects))
    differing = [r for r in results if r.verdict == "differs"]
    print(f"\n{len(differing)} differing edit(s) in {time.monotonic() - started:.0f} s")
    for r in differing:
        print(f"  {r.project} edit {r.index} ({r.cls}): {r.edit}; kept in {r.kept}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=1) + "\n")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
