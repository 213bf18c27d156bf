#!/usr/bin/env bash
# Packs what the GPU scripts need on a machine with no package registry into <repo>/build/gpu-carry
# (gitignored, about 35 MB), next to the repository's tracked files (python/, cmake/, examples/):
#   bin/nvfresh          stripped; a static executable (NVFRESH_STATIC_LAUNCHER, the default), so it
#                        needs nothing there; a dynamic one gets RUNPATH $ORIGIN/../lib (patchelf)
#   lib/                 libnvfresh_trace.so, and the shared libraries the carried programs link that
#                        are not glibc (libstdc++, and fmt, Boost, xxHash, zstd, lz4 for a dynamic
#                        nvfresh): the GPU machine's distribution may lack them, or have other versions
#   bin/ccache, tests/tools/record_gen_tool   for bench/run_on_gpu.sh (the benchmarks on the GPU machine)
#   cutlass/             CUTLASS's include/, tools/util/include/ and examples/41_fused_multi_head_attention/
#                        (scripts/install_cutlass.sh)
# The binary needs glibc 2.34 or newer there (Debian 12, Ubuntu 22.04, RHEL 9 and later).
# Usage: scripts/pack_gpu_carry.sh   (after scripts/build.sh; installs patchelf from Debian when missing)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/build/gpu-carry"
nvfresh="$repo/build/bin/nvfresh"
[ -x "$nvfresh" ] || { echo "pack_gpu_carry: $nvfresh is missing; run scripts/build.sh first" >&2; exit 1; }
if ! command -v patchelf >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq patchelf
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/cutlass/tools/util" "$out/cutlass/examples"
# Every shared library a program loads, except glibc's own (libc, libm, the loader) and libgcc_s;
# nothing for a static one.
copy_libraries_of() {
  ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r library; do
    case "$(basename "$library")" in
      libc.so.*|libm.so.*|ld-linux*|libgcc_s.so.*) ;;
      *) cp -L "$library" "$out/lib/$(basename "$library")" ;;
    esac
  done
}
is_dynamic() { readelf -d "$1" 2>/dev/null | grep -q NEEDED; }

strip -o "$out/bin/nvfresh" "$nvfresh"
if is_dynamic "$nvfresh"; then
  patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/nvfresh"
  copy_libraries_of "$nvfresh"
fi
strip -o "$out/lib/libnvfresh_trace.so" "$repo/build/lib/libnvfresh_trace.so"

cutlass=$("$repo/scripts/install_cutlass.sh")
cp -r "$cutlass/include" "$out/cutlass/include"
cp -r "$cutlass/tools/util/include" "$out/cutlass/tools/util/include"
cp -r "$cutlass/examples/41_fused_multi_head_attention" "$out/cutlass/examples/"

# For the benchmarks (bench/run_on_gpu.sh): ccache, to compare with, and the record generator of
# bench/check_scale.py, both with their libraries beside nvfresh's.
if command -v ccache >/dev/null 2>&1; then
  cp -L "$(command -v ccache)" "$out/bin/ccache"
  patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/ccache"
  copy_libraries_of "$(command -v ccache)"
fi
if [ -x "$repo/build/tests/tools/record_gen_tool" ]; then
  mkdir -p "$out/tests/tools"
  strip -o "$out/tests/tools/record_gen_tool" "$repo/build/tests/tools/record_gen_tool"
  patchelf --set-rpath '$ORIGIN/../../lib' "$out/tests/tools/record_gen_tool"
  copy_libraries_of "$repo/build/tests/tools/record_gen_tool"
fi

"$out/bin/nvfresh" --version >/dev/null
if is_dynamic "$out/bin/nvfresh" &&
   ldd "$out/bin/nvfresh" | grep -v "$out/bin/../lib/" | grep -Eq "fmt|boost|xxhash|zstd|lz4|stdc\+\+"; then
  echo "pack_gpu_carry: $out/bin/nvfresh does not load its libraries from $out/lib:" >&2
  ldd "$out/bin/nvfresh" >&2
  exit 1
fi
echo "pack_gpu_carry: $(du -sh "$out" | cut -f1) in $out (carry build/gpu-carry)"
