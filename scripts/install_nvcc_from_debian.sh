#!/usr/bin/env bash
# Assembles an older nvcc (11.8 or 12.4) into <repo>/.toolchains/<tag>, laid out like NVIDIA's own
# toolkit (bin/, nvvm/bin/cicc, nvvm/libdevice, include/), without touching the system's packages
# or apt configuration. Idempotent: a toolchain whose nvcc already compiles is left alone.
# Prints "<tag> <path to nvcc>".
#
# Where the parts come from (both are package registries this project may use):
#   - the compiler driver and its passes (nvcc, cicc, cudafe++, ptxas, fatbinary, nvlink, libdevice):
#     Debian's nvidia-cuda-toolkit package from the non-free component (bookworm: 11.8.89, trixie:
#     12.4.131; both repackage NVIDIA's binaries, which run on bookworm's glibc). It is downloaded
#     with a private apt state under .toolchains/apt-<suite> and unpacked with dpkg -x, never
#     installed: installing it would pull nvidia-cuda-dev (774/934 MB) and the driver's user space.
#   - the headers (cuda_runtime.h and friends, crt/): NVIDIA's PyPI wheels of the same release
#     (nvidia-cuda-runtime-cu11/12, nvidia-cuda-nvcc-cu11/12), 20 MB instead of nvidia-cuda-dev.
#   - 11.8 supports g++ <= 11: g++-11 comes from bookworm main, and bin/gcc, bin/g++ run it (the
#     same arrangement as Debian's package), so the toolchain compiles without -ccbin.
#
# Usage: scripts/install_nvcc_from_debian.sh cu11.8|cu12.4
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
tag="${1:?usage: install_nvcc_from_debian.sh cu11.8|cu12.4}"

case "$tag" in
  cu11.8)
    suite=bookworm
    deb_version="11.8.89~11.8.0-5~deb12u1"
    header_wheels=(nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89)
    host_compiler=g++-11
    ;;
  cu12.4)
    suite=trixie
    deb_version="12.4.131~12.4.1-2"
    header_wheels=(nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-nvcc-cu12==12.4.131)
    host_compiler=
    ;;
  *)
    echo "install_nvcc_from_debian: unknown tag $tag (known: cu11.8 cu12.4)" >&2
    exit 2
    ;;
esac

prefix="$root/.toolchains/$tag"
nvcc="$prefix/bin/nvcc"

compiles() {
  local dir
  dir="$(mktemp -d)"
  printf '#include <cuda_runtime.h>\n__global__ void k(int* p) { *p = 1; }\n' >"$dir/probe.cu"
  "$nvcc" -arch=sm_80 -c "$dir/probe.cu" -o "$dir/probe.o" >"$dir/log" 2>&1
  local status=$?
  [[ $status -eq 0 ]] || cat "$dir/log" >&2
  rm -rf "$dir"
  return $status
}

if [[ -x "$nvcc" ]] && compiles 2>/dev/null; then
  echo "$tag $nvcc"
  exit 0
fi

if [[ -n "$host_compiler" ]] && ! command -v "$host_compiler" >/dev/null; then
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  echo "install_nvcc_from_debian: installing $host_compiler (nvcc ${tag#cu} needs g++ <= 11)" >&2
  "${sudo_cmd[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "$host_compiler" >&2
fi

# A private apt state: the system's sources and package database stay as they are.
apt_dir="$root/.toolchains/apt-$suite"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb http://deb.debian.org/debian $suite non-free" >"$apt_dir/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
apt-get "${apt_options[@]}" -qq update >&2

work="$(mktemp -d "$root/.toolchains/.unpack-$tag.XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get "${apt_options[@]}" -qq download "nvidia-cuda-toolkit=$deb_version" >&2)
dpkg -x "$work"/nvidia-cuda-toolkit_*.deb "$work/deb"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$work/wheels" \
  "${header_wheels[@]}" >&2

staged="$work/prefix"
mkdir -p "$staged/bin/crt" "$staged/nvvm/bin" "$staged/nvvm/libdevice" "$staged/include" "$staged/lib64"
toolkit="$work/deb/usr/lib/nvidia-cuda-toolkit"
cp "$toolkit/bin/nvcc" "$staged/bin/"
cp "$toolkit/bin/crt/"*.stub "$staged/bin/crt/"
cp "$toolkit/bin/cicc" "$staged/nvvm/bin/"
cp "$toolkit/libdevice/libdevice.10.bc" "$staged/nvvm/libdevice/"
for tool in cudafe++ ptxas fatbinary nvlink bin2c nvprune cuobjdump nvdisasm cu++filt; do
  cp "$work/deb/usr/bin/$tool" "$staged/bin/"
done
for wheel in "$work/wheels"/*.whl; do
  "$python" - "$wheel" "$staged/include" <<'PY'
import sys, zipfile, pathlib
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        parts = name.split("/")
        # nvidia/<component>/include/<header path>
        if len(parts) > 3 and parts[0] == "nvidia" and parts[2] == "include" and not name.endswith("/"):
            target = dest.joinpath(*parts[3:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
PY
done
if [[ -n "$host_compiler" ]]; then
  for name in gcc g++; do
    printf '#!/bin/sh\n# nvcc %s supports g++ <= 11 (as Debian'"'"'s package arranges it)\nexec %s "$@"\n' \
      "${tag#cu}" "$host_compiler" >"$staged/bin/$name"
    chmod +x "$staged/bin/$name"
  done
fi
# The profile NVIDIA's own toolkit ships, relative to this directory ($(_HERE_) is bin/).
cat >"$staged/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE

rm -rf "$prefix"
mv "$staged" "$prefix"
if ! compiles; then
  echo "install_nvcc_from_debian: $nvcc was assembled but does not compile a CUDA file (see above)" >&2
  exit 1
fi
echo "$tag $nvcc"
