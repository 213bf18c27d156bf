#!/usr/bin/env bash
# Set-up command 1: install what nvfresh needs to build (Debian packages), build nvfresh without its
# tests (the launcher, the tracer and nvfresh-remote in build/), and run the demo on the bundled
# example, which ends in "demo: OK". The demo needs only the launcher and the tracer: they are built
# and the demo runs first, then the rest (nvfresh-remote, its generated protos, the heap-noise
# library). The test command (scripts/test.sh) installs and builds what only the tests need.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/scripts/install_deps.sh"
"$repo/scripts/build.sh" product nvfresh nvfresh_trace
"$repo/scripts/demo.sh"
echo "setup: building the rest (nvfresh-remote, the heap-noise library)"
"$repo/scripts/build.sh" product
