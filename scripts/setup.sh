#!/usr/bin/env bash
# Set-up command 1: install what is missing, build nvfresh, run the main job on the bundled example.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/scripts/install_deps.sh"
"$repo/scripts/build.sh"
"$repo/scripts/demo.sh"
