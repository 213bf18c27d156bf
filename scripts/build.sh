#!/usr/bin/env bash
# Configures and builds nvfresh into build/ (NVFRESH_WERROR=ON under CI).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S "$repo" -B "$repo/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVFRESH_WERROR=$werror >/dev/null
cmake --build "$repo/build" -j"$(nproc)"
