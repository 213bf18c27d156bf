#!/usr/bin/env bash
# The main job on the bundled example: build examples/cmake_project with Ninja through nvfresh
# (injected with CMAKE_PROJECT_INCLUDE, the project is unchanged), edit a shared header the way
# that fools mtime-based tools (new content, old mtime: cp -p / tar x / rsync -a), rebuild with one
# ordinary `cmake --build`, and show what nvfresh did.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
nvfresh="$repo/build/bin/nvfresh"
work="$repo/build/demo"
src="$work/src"
bld="$work/build"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

rm -rf "$work"
mkdir -p "$work"
cp -r "$repo/examples/cmake_project" "$src"

step "configure the example with nvfresh injected (-DCMAKE_PROJECT_INCLUDE=cmake/nvfresh.cmake)"
cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_PROJECT_INCLUDE="$repo/cmake/nvfresh.cmake" \
      -DNVFRESH_EXECUTABLE="$nvfresh" >/dev/null
grep -o 'CUDA_COMPILER_LAUNCHER\|nvfresh[^ ]* sync' "$bld/build.ninja" | sort -u | sed 's/^/   build.ninja: /'

step "first build"
cmake --build "$bld"

step "nvfresh check: every object fresh"
"$nvfresh" check -C "$bld"

step "edit include/kernel_config.h (kTileSize 64 -> 128) and put its OLD mtime back"
header="$src/include/kernel_config.h"
cp -p "$header" "$work/kernel_config.h.orig"
sed -i 's/kTileSize = 64/kTileSize = 128/' "$header"
touch -r "$work/kernel_config.h.orig" "$header"
echo "   mtime unchanged: $(stat -c %y "$work/kernel_config.h.orig") -> $(stat -c %y "$header")"
echo "   plain ninja would now say 'no work to do' and leave attention.cu.o stale"

step "nvfresh check before rebuilding: the stale object and why (exit status 1)"
"$nvfresh" check -C "$bld" || echo "   (exit status $?)"

step "one ordinary rebuild: exactly the stale object is recompiled, the library relinked"
cmake --build "$bld"

step "nvfresh explain attention.cu.o: its history"
"$nvfresh" explain attention.cu.o -C "$bld" | sed -n '/^history/,$p'

step "nvfresh check after the rebuild"
"$nvfresh" check -C "$bld"

step "a build with nothing changed compiles nothing"
cmake --build "$bld" | tee "$work/noop.log"
if grep -q "Building CUDA object" "$work/noop.log"; then
  echo "demo: FAILED: an unchanged tree recompiled" >&2
  exit 1
fi
echo
echo "demo: OK (nvfresh records in $bld/.nvfresh)"
