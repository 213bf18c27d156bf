#!/usr/bin/env bash
# Installs what nvfresh needs to build and test, from Debian's packages only. Idempotent and fast
# when everything is present (it asks dpkg first and runs apt-get only for what is missing).
set -euo pipefail

packages=(cmake ninja-build make g++ python3 ccache
          libboost1.81-dev libboost-filesystem1.81-dev libfmt-dev libxxhash-dev catch2
          libcli11-dev nlohmann-json3-dev libzstd-dev liblz4-dev
          zstd clang-format clang-tidy  # zstd: the tests read records (zstd-compressed); clang-*: the lint tests
          chromium                      # test_report renders the report's page headless
          clang libclang-rt-14-dev      # the fuzz stage: clang++ -fsanitize=fuzzer (libFuzzer, ASan, UBSan)
          # the remote cache's client (nvfresh-remote): gRPC, protobuf, the REAPI .proto files
          # (bazel-bootstrap-source), SHA-256 (OpenSSL's libcrypto)
          libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
          bazel-bootstrap-source libssl-dev pkg-config
          redis-server)                 # the BuildGrid team set-up's action cache (test_remote_team)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install_deps: WARNING: no nvcc found (PATH or /usr/local/cuda/bin); the real-nvcc tests will be skipped" >&2
fi
