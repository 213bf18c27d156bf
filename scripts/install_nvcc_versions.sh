#!/usr/bin/env bash
# Installs extra nvcc versions from PyPI wheels into venvs beside the work tree, for the real-nvcc
# tests and the trace benchmark. Idempotent: a venv whose nvcc already runs is left alone.
# Prints one line per version: "<version> <path to nvcc>".
# Point the tests at one with: NVFRESH_TEST_NVCC=<path to nvcc> ctest ...
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

# version tag -> wheels. nvcc alone cannot compile a TU that includes <cuda_runtime.h>: the
# runtime wheel brings cuda_runtime.h, the cccl wheel the CCCL headers (13.x's crt headers are
# in nvidia-cuda-crt; nvvm (cicc, libdevice) ships inside the nvcc wheel for 11/12, apart in 13).
declare -A wheels=(
  [cu11]="nvidia-cuda-nvcc-cu11==11.8.* nvidia-cuda-runtime-cu11==11.8.* nvidia-cuda-cccl-cu11==11.8.*"
  [cu12]="nvidia-cuda-nvcc-cu12==12.9.* nvidia-cuda-runtime-cu12==12.9.* nvidia-cuda-cccl-cu12==12.9.*"
  [cu13]="nvidia-cuda-nvcc==13.* nvidia-cuda-runtime==13.* nvidia-cuda-cccl==13.* nvidia-cuda-crt==13.* nvidia-nvvm==13.*"
)

find_nvcc() {
  { find "$1" -path "*/bin/nvcc" -type f 2>/dev/null || true; } | head -n 1
}

for tag in cu11 cu12 cu13; do
  venv="$root/.venv-$tag"
  nvcc="$(find_nvcc "$venv")"
  if [[ -z "$nvcc" ]] || ! "$nvcc" --version >/dev/null 2>&1; then
    [[ -d "$venv" ]] || "$python" -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --quiet --disable-pip-version-check ${wheels[$tag]} >&2
    nvcc="$(find_nvcc "$venv")"
  fi
  echo "$tag $nvcc"
done
