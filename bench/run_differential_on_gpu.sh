#!/usr/bin/env bash
# The differential tester's long run (bench/differential.py) on the 16-core GPU machine, which has
# nvcc but no package registry, in one call of the device tool with carry build-gpu-difftest:
#   build-gpu-difftest/bin/nvfresh, lib/libnvfresh_trace.so   nvfresh as built here (static)
#   build-gpu-difftest/ggml                                    ggml's include/ and src/ (its CUDA TUs)
#   build-gpu-difftest/cutlass                                 CUTLASS's include/, tools/util/include
#                                                              and examples 00, 41 and common
# (made by: scripts/pack_difftest_carry.sh). The sources go where scripts/install_difftest_sources.sh
# looks, so nothing is fetched. Prints the tables to stdout and $OUT/differential-<seed>.txt, every
# edit to $OUT/differential-<seed>.json.
# Usage: bench/run_differential_on_gpu.sh SEED SECONDS [PROJECTS]
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
carry="$repo/build-gpu-difftest"
out="${OUT:-/tmp}"
seed=${1:-1}
seconds=${2:-480}
projects=${3:-cub-small@80,cub-small@90,cub-device@80,ggml:arange@80,ggml:clamp@80,ggml:concat@80,ggml:pad@80,ggml:scale@80,ggml:sumrows@80,ggml:upscale@80,ggml:norm@80,ggml:getrows@80,ggml:acc@80,ggml:diagmask@80,cutlass:00_basic_gemm/basic_gemm.cu@80,cutlass:00_basic_gemm/basic_gemm.cu@90}
ggml="$repo/.venv-difftest/llama-cpp-python-0.3.36/ggml"
site="$repo/.venv-cutlass/lib/python3/site-packages/cutlass_library/source"
[ -d "$ggml/src/ggml-cuda" ] || { mkdir -p "$(dirname "$ggml")" && cp -r "$carry/ggml" "$ggml"; }
[ -d "$site/include" ] || { mkdir -p "$(dirname "$site")" && cp -r "$carry/cutlass" "$site"; }
nproc; nvcc --version | tail -1
PYTHONUNBUFFERED=1 python3 "$repo/bench/differential.py" --projects "$projects" --edits 1000 \
  --seconds "$seconds" --jobs "$(nproc)" --seed "$seed" --quiet --nvfresh "$carry/bin/nvfresh" \
  --json "$out/differential-$seed.json" 2>&1 | tee "$out/differential-$seed.txt"
