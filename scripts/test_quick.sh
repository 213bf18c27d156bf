#!/usr/bin/env bash
# The quick gate (scripts/test.sh quick): what a developer runs before each commit, in a few minutes,
# installing nothing. Builds build/, then:
#   ctest -L 'unit|python|lint'   every unit test, the Python tests and the lint tests (format, layering)
#   clang-tidy                    on the lib/ and launcher/ files the change touches: uncommitted
#                                 changes against HEAD (or all changes since NVFRESH_QUICK_BASE=<rev>);
#                                 with nothing uncommitted, the files of the last commit
#   commit subjects               scripts/check_commits.sh
# Every step runs even when one before it failed; the exit status is 1 when any failed.
# Arguments go to ctest (for example -R record).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
started=$(date +%s)
failed=()

"$repo/scripts/build.sh"
(cd "$repo/build" && ctest -j"$(nproc)" --output-on-failure -L 'unit|python|lint' "$@") || failed+=(tests)

changed_files() {
  if [ -n "${NVFRESH_QUICK_BASE:-}" ]; then
    git diff --name-only "$NVFRESH_QUICK_BASE" --
  elif [ -n "$(git status --porcelain --untracked-files=normal -- lib launcher)" ]; then
    git diff --name-only HEAD --
    git ls-files --others --exclude-standard -- lib launcher
  else
    git diff-tree --no-commit-id --name-only -r HEAD
  fi
}
mapfile -t changed < <(changed_files | grep -E '^(lib|launcher)/.*\.(cpp|hpp|c)$' | sort -u || true)
if ((${#changed[@]})); then
  "$repo/scripts/check_tidy.sh" "$repo/build" "${changed[@]}" || failed+=(tidy)
else
  echo "test.sh quick: no C/C++ file of lib/ or launcher/ changed: clang-tidy has nothing to check"
fi
"$repo/scripts/check_commits.sh" || failed+=(commits)

echo "test.sh quick: $(( $(date +%s) - started )) s"
if ((${#failed[@]})); then
  echo "test.sh quick: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh quick: ok"
