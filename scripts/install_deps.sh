#!/usr/bin/env bash
# Installs what nvfresh itself needs to build (the launcher, its library, the tracer and the
# nvfresh-remote helper), from Debian's packages only; scripts/setup.sh runs it. What only the tests
# need (Catch2, Python, clang, Chromium, the venvs, other nvcc versions) is installed by
# scripts/install_test_tools.sh, which the test command runs. Idempotent and fast when everything is
# present (scripts/install_apt_packages.sh asks dpkg first).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake ninja-build g++
          ccache  # scripts/build.sh compiles through it: the test build reuses setup's objects
          libboost1.81-dev libboost-filesystem1.81-dev libfmt-dev libxxhash-dev
          libcli11-dev nlohmann-json3-dev libzstd-dev liblz4-dev
          # the remote cache's client (nvfresh-remote): gRPC, protobuf, the REAPI .proto files
          # (bazel-bootstrap-source), SHA-256 (OpenSSL's libcrypto); pkg-config for gRPC's CMake
          # package, which finds re2 through it
          libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
          bazel-bootstrap-source libssl-dev pkg-config)
"$repo/scripts/install_apt_packages.sh" --no-install-recommends install_deps "${packages[@]}"
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install_deps: WARNING: no nvcc found (PATH or /usr/local/cuda/bin); nvfresh needs it at run time," \
       "and the demo and the real-nvcc tests cannot run without it" >&2
fi
