#!/usr/bin/env bash
# Set-up command 2: every test stage, in this order (CI runs exactly this, through .ci/run):
#   suite     build/ (g++): unit tests, integration tests with the real nvcc, CMake, Ninja and make,
#             and the lint ctests (format, layering)
#   tidy      clang-tidy 14 on lib/ and launcher/ (scripts/check_tidy.sh, build/'s compile commands);
#             a file whose clean verdict the tidy cache (outside the clone) holds is not run again
#   sanitize  build-sanitize/ (g++, ASan + UBSan): every unit test and the integration tests of
#             k_sanitize_tests; any sanitizer report, also from a process whose failure a test
#             expected, fails the stage
#   fuzz      build-fuzz/ (clang): every libFuzzer target of tests/fuzz for 20 s, two at a time
# Every stage runs even when an earlier one failed; the summary names the stages that failed, and
# the exit status is 1 then.
#   NVFRESH_TEST_STAGES="suite fuzz"  runs only those stages (in the order above)
#   NVFRESH_FUZZ_SECONDS=N            seconds per fuzz target (default 20)
#   NVFRESH_TIDY_CACHE=off|DIR        the tidy stage without its cache, or with it in DIR
#                                     (default ~/.cache/nvfresh-tidy; scripts/check_tidy.sh)
#   NVFRESH_SANITIZE_TESTS=REGEX      the sanitize stage's ctest -R (default k_sanitize_tests; '.'
#                                     runs every test, as the suite does: about 3x its time)
#   arguments                         go to ctest in the suite and sanitize stages (e.g. -R staleness;
#                                     a -R there replaces the sanitize stage's own)
# Installs what is missing first, so it works on a fresh machine and in CI, after scripts/setup.sh
# or without it: what nvfresh needs to build (scripts/install_deps.sh), then what only the tests
# need (scripts/install_test_tools.sh: Catch2, Python, clang, Chromium, the venvs, other nvcc
# versions); the suite stage's build turns the tests on in the build/ that setup.sh made.
#
# scripts/test.sh quick   the developer's gate before a commit, a few minutes, installing nothing:
#   builds build/, runs the unit, Python and lint ctests (ctest -L 'unit|python|lint'), clang-tidy on
#   the C/C++ files of lib/ and launcher/ that the change touches (against HEAD, or against
#   NVFRESH_QUICK_BASE=<rev> when set; with nothing uncommitted, the last commit's files), and the
#   commit-subject check (scripts/check_commits.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
k_all_stages=(suite tidy sanitize fuzz)
if [ "${1:-}" = "quick" ]; then
  shift
  exec "$repo/scripts/test_quick.sh" "$@"
fi
read -r -a wanted <<<"${NVFRESH_TEST_STAGES:-${k_all_stages[*]}}"
for stage in "${wanted[@]}"; do
  if [[ " ${k_all_stages[*]} " != *" $stage "* ]]; then
    echo "test.sh: unknown stage '$stage' in NVFRESH_TEST_STAGES (stages: ${k_all_stages[*]})" >&2
    exit 2
  fi
done
ctest_args=("$@")

# The sanitize stage's tests. The whole suite under ASan takes about three times its 7-25 minutes,
# more than CI's 45 for all four stages, so: every unit test, and the integration tests that reach
# nvfresh's parsers (command line, depfiles, traces, records, link records) and its compile, check,
# prove and passthrough paths on real nvcc, about 3 minutes of CPU under ASan. The long scenario
# tests (staleness, skip, faults, CUTLASS, other nvcc versions) run in the suite stage only.
k_sanitize_tests='^unit:|^integration: test_(passthrough|depfile_roundtrip|future_mtime|pytorch_style|trace_real_nvcc|prove|compiler_caches|staleness_paths|check_reasons|step_cache)\.'

"$repo/scripts/install_deps.sh"
"$repo/scripts/install_test_tools.sh"

stage_suite() {
  "$repo/scripts/build.sh"
  cd "$repo/build"
  ctest -j2 --output-on-failure "${ctest_args[@]}"
}

# The tidy stage's last line (files from the tidy cache, files run) goes into the summary: CI's log
# shows its tail, and whether the cache held tells what the stage's time means.
stage_tidy() {
  "$repo/scripts/build.sh"
  "$repo/scripts/check_tidy.sh" "$repo/build" | tee "$notes_dir/tidy.log"
  grep -E '^check_tidy: [0-9]+ files of' "$notes_dir/tidy.log" | tail -1 >"$notes_dir/tidy" || true
}

# What the sanitize stage's tests run: the unit tests, the launcher, the tracer and the tools that
# k_sanitize_tests call; not nvfresh-remote, the heap-noise library or the other tools.
k_sanitize_targets=(nvfresh nvfresh_trace nvfresh_unit_tests nvfresh_reapi_unit_tests trace_tool
                    nvfresh_depfile_tool step_edit_tool)

# Sanitizer reports go to files (log_path), so that a report from a process whose failure a test
# expects (a compile that must fail, a corrupt record) still fails the stage.
stage_sanitize() {
  if [ -n "${NVFRESH_SANITIZE_TESTS:-}" ] || ((${#ctest_args[@]})); then  # other tests: everything
    "$repo/scripts/build.sh" sanitize
  else
    "$repo/scripts/build.sh" sanitize "${k_sanitize_targets[@]}"
  fi
  local reports="$repo/build-sanitize/sanitizer-reports"
  rm -rf "$reports"
  mkdir -p "$reports"
  cd "$repo/build-sanitize"
  local status=0
  ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan" UBSAN_OPTIONS="print_stacktrace=1:log_path=$reports/ubsan" \
    ctest -j2 --output-on-failure -R "${NVFRESH_SANITIZE_TESTS:-$k_sanitize_tests}" "${ctest_args[@]}" || status=1
  if [ -n "$(ls -A "$reports")" ]; then
    for report in "$reports"/*; do
      echo "--- sanitizer report $report:"
      head -60 "$report"
    done
    echo "test.sh: the sanitizers reported the problems above (reports in $reports)" >&2
    status=1
  fi
  return $status
}

stage_fuzz() {
  "$repo/scripts/build.sh" fuzz
  "$repo/tests/fuzz/run_fuzzers.sh" "$repo/build-fuzz" "${NVFRESH_FUZZ_SECONDS:-20}"
}

elapsed() {
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# CPU seconds (user + sys) of every finished child so far, from the shell's `times`: a stage's CPU
# time tells what it costs on an idle machine, where the wall time on shared cores does not.
# Called as `child_cpu_seconds var`: `times` must run in this shell, not in a $(...) subshell.
times_file=$(mktemp)
notes_dir=$(mktemp -d)  # a stage's note for the summary: $notes_dir/<stage>, one line
trap 'rm -rf "$times_file" "$notes_dir"' EXIT

# ccache's counts of hits and misses so far ("" without ccache): the summary says how many of the
# test command's compiles were served, which tells a warm run from a cold one.
ccache_counts() {
  command -v ccache >/dev/null 2>&1 || return 0
  ccache --print-stats 2>/dev/null |
    awk '$1 ~ /^(direct|preprocessed)_cache_hit$/ { hits += $2 } $1 == "cache_miss" { misses += $2 }
         END { print hits + 0, misses + 0 }'
}
child_cpu_seconds() {
  local user sys
  times >"$times_file"
  read -r user sys < <(tail -1 "$times_file")
  printf -v "$1" '%s' "$(
  awk -v u="$user" -v s="$sys" 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
    BEGIN { printf "%d", sec(u) + sec(s) }'
  )"
}

summary=()
failed=()
started=$(date +%s)
ccache_before=$(ccache_counts)
for stage in "${k_all_stages[@]}"; do
  [[ " ${wanted[*]} " == *" $stage "* ]] || continue
  echo "=== test.sh: stage $stage ==="
  begin=$(date +%s)
  child_cpu_seconds cpu_begin
  set +e
  (
    set -e
    "stage_$stage"
  )
  status=$?
  set -e
  seconds=$(($(date +%s) - begin))
  child_cpu_seconds cpu_end
  cpu=$((cpu_end - cpu_begin))
  times_text="$(elapsed $seconds) wall, $(elapsed $cpu) CPU"
  if [ -s "$notes_dir/$stage" ]; then
    times_text+=" ($(head -1 "$notes_dir/$stage"))"
  fi
  if ((status == 0)); then
    summary+=("$(printf 'test.sh: %-9s ok      %s' "$stage" "$times_text")")
  else
    summary+=("$(printf 'test.sh: %-9s FAILED  %s' "$stage" "$times_text")")
    failed+=("$stage")
    echo "=== test.sh: stage $stage FAILED (exit $status) ===" >&2
  fi
done
echo "=== test.sh: summary ==="
printf '%s\n' "${summary[@]}"
echo "test.sh: total $(elapsed $(($(date +%s) - started)))"
ccache_after=$(ccache_counts)
if [ -n "$ccache_before" ] && [ -n "$ccache_after" ]; then
  read -r hits_before misses_before <<<"$ccache_before"
  read -r hits_after misses_after <<<"$ccache_after"
  echo "test.sh: ccache served $((hits_after - hits_before)) of the builds' compiles," \
    "$((misses_after - misses_before)) compiled"
fi
if ((${#failed[@]})); then
  echo "test.sh: FAILED stages: ${failed[*]}" >&2
  exit 1
fi
