#!/usr/bin/env bash
# What a pool buys (bench/remote_pool.py) on the 16-core GPU machine, which has nvcc, python3 and
# ninja but no package registry, in one call of the device tool with carry build-gpu-remote-exec
# (made by scripts/pack_remote_exec_carry.sh: nvfresh, nvfresh-remote and its libraries, the tracer,
# buildbox-casd, buildbox-run and bubblewrap, ggml's and CUTLASS's sources, in one .tar.xz).
# Unpacks it (Python's tarfile: no xz program needed), puts the sources where
# scripts/install_difftest_sources.sh and scripts/install_cutlass.sh look, checks that nvfresh-remote
# starts and that bubblewrap can make its namespaces, then prints, per project, local nvfresh at
# Ninja -j2, remote execution at -j2 and at -j16, the build pinned to 2 cores and casd (--jobs 16)
# to the others. The table goes to stdout and $OUT/remote-pool.txt.
# Usage: bench/run_remote_exec_on_gpu.sh [remote_pool.py arguments]   (default: --projects fmha,ggml)
#   REMOTE_EXEC_CARRIED_BWRAP=1 uses the carried bwrap even where the machine has one.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
carry="$repo/build-gpu-remote-exec"
tree="$carry/unpacked"
out="${OUT:-/tmp}"
say() { echo "run_remote_exec_on_gpu: $*" >&2; }
[ -f "$carry/remote-exec.tar.xz" ] || { say "no $carry/remote-exec.tar.xz; run scripts/pack_remote_exec_carry.sh and carry build-gpu-remote-exec"; exit 1; }
if [ ! -f "$tree/PACKED_FROM" ] || [ "$carry/remote-exec.tar.xz" -nt "$tree/PACKED_FROM" ]; then
  rm -rf "$tree" && mkdir -p "$tree"
  python3 -c 'import sys, tarfile
extra = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **extra)' \
    "$carry/remote-exec.tar.xz" "$tree" || { say "could not unpack $carry/remote-exec.tar.xz"; exit 1; }
fi
ggml="$repo/.venv-difftest/llama-cpp-python-0.3.36/ggml"
cutlass="$repo/.venv-cutlass/lib/python3/site-packages/cutlass_library/source"
[ -f "$ggml/src/ggml-cuda/common.cuh" ] || { mkdir -p "$(dirname "$ggml")" && rm -rf "$ggml" && cp -r "$tree/sources/ggml" "$ggml"; }
[ -d "$cutlass/include/cutlass" ] || { mkdir -p "$(dirname "$cutlass")" && rm -rf "$cutlass" && cp -r "$tree/sources/cutlass" "$cutlass"; }

"$tree/bin/nvfresh-remote" >/dev/null 2>"$tree/helper-start.txt"
if [ $? -ne 2 ]; then
  say "the carried nvfresh-remote does not start here (glibc 2.34 or newer needed):"
  cat "$tree/helper-start.txt" >&2
  exit 1
fi
if [ "${REMOTE_EXEC_CARRIED_BWRAP:-0}" = 1 ] || ! command -v bwrap >/dev/null 2>&1; then
  export PATH="$tree/buildbox/bin:$PATH"
fi
if ! bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc true 2>"$tree/bwrap-probe.txt"; then
  say "$(command -v bwrap) cannot make its namespaces here, so buildbox-run cannot run a step:"
  cat "$tree/bwrap-probe.txt" >&2
  exit 1
fi
export NVFRESH_BIN="$tree/bin/nvfresh" NVFRESH_BUILDBOX_DIR="$tree/buildbox"
nproc; nvcc --version | tail -1; echo "bwrap: $(command -v bwrap); packed from $(cat "$tree/PACKED_FROM")"
[ $# -gt 0 ] || set -- --projects fmha,ggml
PYTHONUNBUFFERED=1 python3 "$repo/bench/remote_pool.py" "$@" 2>&1 | tee "$out/remote-pool.txt"
exit "${PIPESTATUS[0]}"
