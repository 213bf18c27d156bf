#!/usr/bin/env bash
# Fails when clang-tidy 14 (Debian 12) finds anything in nvfresh's own code: every C++ file of lib/
# and launcher/ (and the lib/ headers they include) with the repository's .clang-tidy, and the two
# C preload libraries (lib/trace/nvfresh_trace.c, lib/repro/nvfresh_heap_noise.c) with the C list
# below. Warnings are errors. It reads the compile commands a CMake build exports.
# Usage: scripts/check_tidy.sh [build dir with compile_commands.json, default <repo>/build] [FILE...]
#   FILE...  only these files of lib/ and launcher/ (a header stands for the .cpp of the same name);
#            the quick test stage passes the files a change touched
# Runs on every core (CI: 2) through run-clang-tidy.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
shift || true
run_clang_tidy=${RUN_CLANG_TIDY:-run-clang-tidy}
clang_tidy=${CLANG_TIDY:-clang-tidy}

# The C files are C11 against libc only, loaded into every process of a compile. Left out beside
# the C++ list's exclusions: checks that misread C (a character constant is an int in C, so
# `char c = ok ? letter : 'R'` "narrows"; lines are assembled by length and written with write(2),
# never as C strings; getauxval returns its pointer as an unsigned long; _GNU_SOURCE is how glibc
# is asked for its extensions).
c_config='{Checks: "-*,bugprone-*,clang-analyzer-*,misc-*,performance-*,-bugprone-easily-swappable-parameters,-misc-no-recursion,-clang-analyzer-security.insecureAPI.*,-bugprone-narrowing-conversions,-bugprone-not-null-terminated-result,-performance-no-int-to-ptr", WarningsAsErrors: "*", CheckOptions: [{key: bugprone-reserved-identifier.AllowedIdentifiers, value: _GNU_SOURCE}]}'

version=$("$clang_tidy" --version 2>/dev/null || true)
if [[ "$version" != *"version 14."* ]]; then
  echo "check_tidy: needs clang-tidy 14 (Debian 12's clang-tidy package); found: ${version:-none}" >&2
  exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check_tidy: no $build/compile_commands.json; configure the build first (scripts/build.sh)" >&2
  exit 1
fi

# The file regexes: every file, or the ones named (as absolute paths, headers as their .cpp).
quote_regex() { printf '%s' "$1" | sed 's/[.[\*^$()+?{|]/\\&/g'; }
cpp_regex="^$repo/(lib|launcher)/.*\\.cpp\$"
c_regex="^$repo/lib/.*\\.c\$"
files=$(grep -cE "\"file\": \"$repo/(lib|launcher)/.*\\.(cpp|c)\"" "$build/compile_commands.json" || true)
if (($#)); then
  cpp_named=() c_named=()
  for file in "$@"; do
    file=$(realpath -m "$file")
    [[ "$file" == *.hpp ]] && file="${file%.hpp}.cpp"
    [[ "$file" == "$repo"/lib/* || "$file" == "$repo"/launcher/* ]] && [ -f "$file" ] || continue
    case "$file" in
    *.cpp) cpp_named+=("$(quote_regex "$file")") ;;
    *.c) c_named+=("$(quote_regex "$file")") ;;
    esac
  done
  files=$((${#cpp_named[@]} + ${#c_named[@]}))
  cpp_regex='^$' c_regex='^$'  # matches no file: that run checks nothing
  ((${#cpp_named[@]})) && cpp_regex="^($(IFS='|'; echo "${cpp_named[*]}"))\$"
  ((${#c_named[@]})) && c_regex="^($(IFS='|'; echo "${c_named[*]}"))\$"
  if ((files == 0)); then
    echo "check_tidy: none of the named files is a C/C++ file of lib/ or launcher/: nothing to check"
    exit 0
  fi
fi

jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
if [ "$cpp_regex" != '^$' ]; then
  "$run_clang_tidy" -clang-tidy-binary "$(command -v "$clang_tidy")" -p "$build" -j "$jobs" -quiet \
    "$cpp_regex" >"$log" 2>&1 || status=1
fi
if [ "$c_regex" != '^$' ]; then
  "$run_clang_tidy" -clang-tidy-binary "$(command -v "$clang_tidy")" -p "$build" -j "$jobs" -quiet \
    -config="$c_config" "$c_regex" >>"$log" 2>&1 || status=1
fi

if ((status != 0)) || grep -qE '(warning|error): ' "$log"; then
  sed -r 's/\x1b\[[0-9;]*m//g' "$log" | grep -vE '^(clang-tidy|Enabled checks|Running clang-tidy|[0-9]+ warnings? (and [0-9]+ errors? )?generated|Suppressed|Use -header-filter)' >&2
  echo "check_tidy: clang-tidy found the problems above in $files files; fix them (or, for a check that is wrong for this code, leave it out in .clang-tidy and say why there)" >&2
  exit 1
fi
echo "check_tidy: $files files of lib/ and launcher/ clean"
