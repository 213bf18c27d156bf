#!/usr/bin/env bash
# Packs what bench/run_differential_on_gpu.sh needs on a machine with no package registry into
# <repo>/build-gpu-difftest (gitignored, about 35 MB): nvfresh (static) and its tracer, ggml's
# include/ and src/ headers with src/ggml-cuda/, and CUTLASS's headers and the examples the tester
# compiles. Usage: scripts/pack_difftest_carry.sh   (after scripts/build.sh)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/build-gpu-difftest"
nvfresh="$repo/build/bin/nvfresh"
[ -x "$nvfresh" ] || { echo "pack_difftest_carry: $nvfresh is missing; run scripts/build.sh first" >&2; exit 1; }
if readelf -d "$nvfresh" 2>/dev/null | grep -q NEEDED; then
  echo "pack_difftest_carry: $nvfresh is dynamic; build the static launcher (NVFRESH_STATIC_LAUNCHER)" >&2
  exit 1
fi
read -r _ ggml < <("$repo/scripts/install_difftest_sources.sh" | grep '^ggml ')
cutlass=$("$repo/scripts/install_cutlass.sh" | tail -n 1)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/ggml/src" "$out/cutlass/tools/util" "$out/cutlass/examples"
strip -o "$out/bin/nvfresh" "$nvfresh"
strip -o "$out/lib/libnvfresh_trace.so" "$repo/build/lib/libnvfresh_trace.so"
cp -r "$ggml/include" "$out/ggml/"
cp "$ggml/src/"*.h "$out/ggml/src/"
cp -r "$ggml/src/ggml-cuda" "$out/ggml/src/"
cp -r "$cutlass/include" "$out/cutlass/"
cp -r "$cutlass/tools/util/include" "$out/cutlass/tools/util/"
for example in 00_basic_gemm common 41_fused_multi_head_attention; do
  cp -r "$cutlass/examples/$example" "$out/cutlass/examples/"
done
echo "pack_difftest_carry: $(du -sh "$out" | cut -f1) in $out (carry build-gpu-difftest)"
