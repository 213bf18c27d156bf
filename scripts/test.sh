#!/usr/bin/env bash
# Set-up command 2: run all tests (unit + integration with the real nvcc, CMake, Ninja, make).
# Installs what is missing first, so it works on a fresh machine and in CI.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
"$repo/scripts/install_deps.sh"
if [ -x "$repo/scripts/install_test_tools.sh" ]; then
  "$repo/scripts/install_test_tools.sh"
fi
"$repo/scripts/build.sh"
cd "$repo/build"
ctest -j2 --output-on-failure "$@"
