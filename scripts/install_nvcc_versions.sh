#!/usr/bin/env bash
# Installs extra nvcc versions from PyPI wheels into venvs beside the work tree (.venv-<tag>,
# gitignored), for the real-nvcc tests and bench/trace_overhead.py. Idempotent and fast when present:
# a venv whose nvcc already runs is left alone. Prints one line per version: "<tag> <path to nvcc>".
#
# Point the tests at one:  NVFRESH_TEST_NVCC=<path to nvcc> ctest --test-dir build -R trace
#
# Wheels (measured 2025, glibc 2.36, g++ 12):
#   13.x  nvidia-cuda-nvcc pulls nvidia-cuda-crt, nvidia-cuda-runtime and nvidia-nvvm: that is the
#         minimum to compile a TU including <cuda_runtime.h>; nvidia-cuda-cccl adds cub/thrust/libcu++
#         (the benchmark's TU needs it); nvidia-cuda-cuobjdump puts cuobjdump beside nvcc. All tools
#         in it are dynamically linked, so the tracer sees them.
#   11.8, 12.x: nvidia-cuda-nvcc-cu11 / -cu12 hold only ptxas, libnvvm, libdevice and headers (no nvcc
#         driver, no cicc, no cudafe++): alone they cannot compile a .cu file. The tags cu11.8 and
#         cu12.4 take the driver and its passes from Debian's non-free nvidia-cuda-toolkit package
#         instead (bookworm 11.8.89, trixie 12.4.131), unpacked into .toolchains/<tag> without
#         installing it, and the headers from these wheels: see scripts/install_nvcc_from_debian.sh.
#
# Usage: scripts/install_nvcc_versions.sh [tag ...]
#   tags: cu11.8, cu12.4, cu13, cu13.3, cu13.5, or "all". Without tags: the versions the tests run,
#   one per major release beside the system's 13.0 (cu11.8 cu12.4 cu13.5).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"

declare -A wheels=(
  [cu13]="nvidia-cuda-nvcc==13.* nvidia-cuda-cccl==13.* nvidia-cuda-cuobjdump==13.*"
  # Pinned minor releases (nvcc with the libNVVM of the same release), for bench/repro_experiment.py.
  # nvidia-cuda-cccl has no 13.4/13.5 releases (its versions jump to 13.3.x.y.z): both take 13.3.*.
  [cu13.3]="nvidia-cuda-nvcc==13.3.* nvidia-nvvm==13.3.* nvidia-cuda-crt==13.3.* nvidia-cuda-runtime==13.3.* nvidia-cuda-cccl==13.3.* nvidia-cuda-cuobjdump==13.3.*"
  [cu13.5]="nvidia-cuda-nvcc==13.5.* nvidia-nvvm==13.5.* nvidia-cuda-crt==13.5.* nvidia-cuda-runtime==13.5.* nvidia-cuda-cccl==13.3.* nvidia-cuda-cuobjdump==13.5.*"
)

find_nvcc() {
  { find -H "$1" -path "*/bin/nvcc" -type f 2>/dev/null || true; } | head -n 1
}

from_debian=(cu11.8 cu12.4)

tested=(cu11.8 cu12.4 cu13.5)

tags=("$@")
if [[ ${#tags[@]} -eq 0 ]]; then
  tags=("${tested[@]}")
elif [[ "${tags[*]}" == "all" ]]; then
  tags=("${from_debian[@]}" "${!wheels[@]}")
fi

for tag in "${tags[@]}"; do
  if [[ " ${from_debian[*]} " == *" $tag "* ]]; then
    "$root/scripts/install_nvcc_from_debian.sh" "$tag"
    continue
  fi
  if [[ -z "${wheels[$tag]:-}" ]]; then
    echo "install_nvcc_versions: unknown tag $tag (known: ${from_debian[*]} ${!wheels[*]})" >&2
    exit 2
  fi
  venv="$root/.venv-$tag"
  nvcc="$(find_nvcc "$venv")"
  # cuobjdump (nvidia-cuda-cuobjdump, beside nvcc) serves test_cuobjdump_agreement.
  if [[ -z "$nvcc" ]] || ! "$nvcc" --version >/dev/null 2>&1 || [[ ! -x "$(dirname "$nvcc")/cuobjdump" ]]; then
    [[ -x "$venv/bin/pip" ]] || "$python" -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --quiet --disable-pip-version-check ${wheels[$tag]} >&2
    nvcc="$(find_nvcc "$venv")"
  fi
  if [[ -z "$nvcc" ]]; then
    echo "install_nvcc_versions: no nvcc in $venv after installing ${wheels[$tag]}" >&2
    exit 1
  fi
  echo "$tag $nvcc"
done
