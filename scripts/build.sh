#!/usr/bin/env bash
# Configures and builds nvfresh (NVFRESH_WERROR=ON under CI).
# Usage: scripts/build.sh [variant [target...]]   (targets: only those, e.g. nvfresh nvfresh_trace)
#   (none)     build/            RelWithDebInfo at -O2 -g1 (line tables: backtraces, perf and
#                                ASan name function, file and line; a Debug build for variables),
#                                the system compiler (g++): nvfresh and its tests
#   product    build/            the same without the tests (NVFRESH_BUILD_TESTS=OFF): the launcher,
#                                the tracer, the heap-noise library and nvfresh-remote, what
#                                scripts/setup.sh builds and `cmake --install` installs; a later
#                                build without a variant adds the tests and reuses these objects
#   sanitize   build-sanitize/   the same with ASan + UBSan (cmake/Sanitizers.cmake), at -O1 -g1
#   fuzz       build-fuzz/       clang++ with the libFuzzer targets only (tests/fuzz/CMakeLists.txt)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
variant=${1:-}
shift || true
targets=()
k_release_flags=("-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
case "$variant" in
# -g1 rather than CMake's -g: a quarter to a third less CPU per compile (subcommand_options.cpp
# 13.0 s against 8.5 s), which brings setup.sh's build to the demo within a few minutes
"") dir=build options=(-DNVFRESH_BUILD_TESTS=ON "${k_release_flags[@]}") ;;
product) dir=build options=(-DNVFRESH_BUILD_TESTS=OFF "${k_release_flags[@]}") ;;
sanitize)
  # -O1 -g1 (line tables: ASan's reports still name function, file and line): ASan's own advice, and
  # half the CPU of -O2 -g for an instrumented compile (check.cpp: 12 s against 27 s), which keeps
  # the sanitize stage inside CI's time
  dir=build-sanitize
  options=(-DNVFRESH_ENABLE_ASAN=ON -DNVFRESH_ENABLE_UBSAN=ON
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
  ;;
fuzz)
  dir=build-fuzz options=(-DNVFRESH_BUILD_FUZZERS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  targets=(--target fuzzers)
  ;;
*)
  echo "build.sh: unknown variant '$variant' (none, product, sanitize or fuzz)" >&2
  exit 2
  ;;
esac
# ccache (installed by install_deps.sh) makes a rebuild in another clone or build dir cheap: the
# three variants compile the same 180 files, and CI builds in a fresh clone of a tree that a
# developer built before. Paths below the checkout are hashed relative to it (base_dir), so clones
# at other paths share entries. CCACHE_DISABLE=1 builds without it.
if command -v ccache >/dev/null 2>&1; then
  options+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true
fi
cmake -S "$repo" -B "$repo/$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVFRESH_WERROR=$werror \
  "${options[@]}" >/dev/null
if (($#)); then
  targets=(--target "$@")
fi
cmake --build "$repo/$dir" -j"$(nproc)" "${targets[@]}"
