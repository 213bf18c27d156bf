#!/usr/bin/env bash
# Fails when a C/C++ file of nvfresh differs from what clang-format 14 (Debian 12) makes of it with
# the repository's .clang-format. Run it with --fix to format the files in place.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
clang_format=${CLANG_FORMAT:-clang-format}
version=$("$clang_format" --version 2>/dev/null || true)
if [[ "$version" != *"version 14."* ]]; then
  echo "check_format: needs clang-format 14 (Debian 12's clang-format package); found: ${version:-none}" >&2
  exit 1
fi
mapfile -t files < <(find lib launcher tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) | sort)
if [[ "${1:-}" == "--fix" ]]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
if ! "$clang_format" --dry-run -Werror "${files[@]}"; then
  echo "check_format: the files above are not formatted; run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says"
