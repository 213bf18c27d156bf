#!/usr/bin/env bash
# Fetches the real sources bench/differential.py (and tests/integration/test_differential.py) compiles:
#   ggml     ggml's CUDA backend (ggml/include, ggml/src with src/ggml-cuda/*.cu), from the sdist of
#            llama-cpp-python on PyPI, which vendors llama.cpp; unpacked into <repo>/.venv-difftest
#            (gitignored), the sdist kept in its download/ folder
#   cutlass  CUTLASS's headers and examples (scripts/install_cutlass.sh)
# cub and thrust come with the CUDA toolkit (include/cccl), nothing to fetch.
# Idempotent and quiet when everything is there; no network but PyPI. Prints one line per source:
#   ggml <dir holding include/ and src/>
#   cutlass <CUTLASS root>
#
# The version is pinned so that the TUs and their flags (read from its CMake files) stay the same.
# `pip download` builds the sdist's metadata, which installs its build backend (scikit-build-core)
# into a throwaway environment: that is the only other download.
#
# Usage: scripts/install_difftest_sources.sh      (PYTHON=<python3> to choose the interpreter)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
dest="$root/.venv-difftest"
version="0.3.36"
ggml="$dest/llama-cpp-python-$version/ggml"

if [[ ! -f "$ggml/src/ggml-cuda/common.cuh" ]]; then
  mkdir -p "$dest/download"
  sdist="$dest/download/llama_cpp_python-$version.tar.gz"
  if [[ ! -f "$sdist" ]]; then
    echo "install_difftest_sources: downloading llama-cpp-python $version (sdist) into $dest/download" >&2
    "$python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
      -d "$dest/download" "llama-cpp-python==$version" >&2
  fi
  staging="$(mktemp -d "$dest/unpack.XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  tar -xzf "$sdist" -C "$staging" "llama_cpp_python-$version/vendor/llama.cpp/ggml"
  rm -rf "$ggml"
  mkdir -p "$(dirname "$ggml")"
  mv "$staging/llama_cpp_python-$version/vendor/llama.cpp/ggml" "$ggml"
fi
if [[ ! -f "$ggml/src/ggml-cuda/common.cuh" || ! -f "$ggml/include/ggml.h" ]]; then
  echo "install_difftest_sources: no ggml CUDA sources in $ggml after unpacking llama-cpp-python $version" >&2
  exit 1
fi
cutlass="$("$root/scripts/install_cutlass.sh" | tail -n 1)"
echo "ggml $ggml"
echo "cutlass $cutlass"
