#!/usr/bin/env bash
# The speed benchmarks on the GPU machine (16 quiet cores: wall times worth reporting), in one call
# of the device tool with carry build/gpu-carry (scripts/pack_gpu_carry.sh):
#   bench/cache_speed.py --cutlass   a miss vs nvcc -MD, a hit vs ccache's direct hit, A->B->A
#   bench/skip_speed.py --only hot   the FMHA skip vs ccache's direct hit and /bin/true
#   bench/check_scale.py             sync and check on 10k objects vs ninja's no-op
# Each prints to stdout and to $OUT/<name>.txt.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
carry="$repo/build/gpu-carry"
out="${OUT:-/tmp}"
export PATH="$carry/bin:$PATH"
# scripts/install_cutlass.sh finds CUTLASS in .venv-cutlass (no package registry there).
site="$repo/.venv-cutlass/lib/python3/site-packages/cutlass_library"
if [ ! -d "$site/source" ]; then
  mkdir -p "$site" && cp -r "$carry/cutlass" "$site/source"
fi
nproc; nvcc --version | tail -1; ccache --version | head -1
python3 "$repo/bench/cache_speed.py" --nvfresh "$carry/bin/nvfresh" --cutlass --runs "${RUNS:-3}" 2>&1 | tee "$out/cache_speed.txt"
python3 "$repo/bench/skip_speed.py" --only hot --nvfresh "$carry/bin/nvfresh" --ccache "$carry/bin/ccache" 2>&1 | tee "$out/skip_hot.txt"
python3 "$repo/bench/check_scale.py" --build "$carry" 2>&1 | tee "$out/check_scale.txt"
