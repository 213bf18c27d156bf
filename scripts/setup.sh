#!/usr/bin/env bash
# Set-up command 1: install what nvfresh needs to build (Debian packages), build nvfresh without its
# tests (the launcher, the tracer and nvfresh-remote in build/), and run the demo on the bundled
# example, which ends in "demo: OK". The test command (scripts/test.sh) installs and builds what only
# the tests need.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/scripts/install_deps.sh"
"$repo/scripts/build.sh" product
"$repo/scripts/demo.sh"
