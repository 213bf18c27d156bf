#!/usr/bin/env bash
# Installs the CUTLASS headers and examples (the nvidia-cutlass PyPI wheel) into <repo>/.venv-cutlass
# (gitignored) for tests/integration/test_cutlass_fmha_slow.py and bench/launcher_overhead.py --cutlass.
# Idempotent and fast when present. Prints one line: the CUTLASS root, the directory holding include/,
# tools/util/include and examples/ (inside the wheel: <site-packages>/cutlass_library/source).
#
# The wheel is installed with --no-deps: its Python dependencies (cuda-python, numpy, scipy, ...) are for
# CUTLASS's Python interface, which nvfresh does not use; the C++ headers need none of them.
# The version is pinned so that the test's edit of kernel_forward.h always finds the text it edits.
#
# Usage: scripts/install_cutlass.sh      (PYTHON=<python3> to choose the interpreter)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
venv="$root/.venv-cutlass"
wheel="nvidia-cutlass==4.2.0.0"

find_root() {
  { find -H "$venv" -path "*/cutlass_library/source/include/cutlass/cutlass.h" -type f 2>/dev/null || true; } \
    | head -n 1 | sed 's#/include/cutlass/cutlass.h$##'
}

cutlass="$(find_root)"
if [[ -z "$cutlass" ]]; then
  [[ -x "$venv/bin/pip" ]] || "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "$wheel" >&2
  cutlass="$(find_root)"
fi
if [[ -z "$cutlass" || ! -d "$cutlass/examples/41_fused_multi_head_attention" \
      || ! -d "$cutlass/tools/util/include" ]]; then
  echo "install_cutlass: no CUTLASS headers and examples in $venv after installing $wheel" >&2
  exit 1
fi
echo "$cutlass"
