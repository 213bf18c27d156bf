#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a fixed time, two at a time (CI has 2 cores), each
# from its committed seeds (tests/fuzz/corpus/<name>) and, where they fit, tests/unit/data's files.
# Usage: tests/fuzz/run_fuzzers.sh <fuzz build dir> [seconds per target, default 60] [name...]
# New inputs go to <build>/fuzz-work/<name>/corpus (fresh on every run, so that each run starts from
# the committed seeds); a crash, a leak, a broken property or an input that runs longer than
# k_timeout leaves its input in <build>/fuzz-work/<name>/ and fails the run, naming the target.
# Reproduce one: <build>/fuzz/fuzz_<name> <that file>.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: run_fuzzers.sh <fuzz build dir> [seconds] [name...]}
build=$(cd "$build" && pwd)
seconds=${2:-60}
shift $(($# >= 2 ? 2 : $#))
k_timeout=25  # seconds for one input: far beyond any parser's time on a few KB
k_parallel=2

# Seeds of each target beyond tests/fuzz/corpus/<name>.
extra_seeds() {
  case "$1" in
  depfile) echo "$repo/tests/unit/data/depfiles" ;;
  object_digest) echo "$repo/tests/unit/data/objects" ;;
  esac
}

targets=("$@")
if ((${#targets[@]} == 0)); then
  for binary in "$build"/fuzz/fuzz_*; do
    targets+=("$(basename "$binary" | sed 's/^fuzz_//')")
  done
fi
if ((${#targets[@]} == 0)); then
  echo "run_fuzzers: no fuzz_* binaries in $build/fuzz (build the 'fuzzers' target first)" >&2
  exit 1
fi

run_one() {
  local name=$1 work="$build/fuzz-work/$1"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  local seeds=() dir
  for dir in "$repo/tests/fuzz/corpus/$name" $(extra_seeds "$name"); do
    [ -d "$dir" ] && seeds+=("$dir")
  done
  UBSAN_OPTIONS=print_stacktrace=1 "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout="$k_timeout" \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "${seeds[@]}" >"$work/log" 2>&1
  echo $? >"$work/status"
}

echo "run_fuzzers: ${#targets[@]} targets, ${seconds} s each, $k_parallel at a time"
running=0
for name in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/fuzz_$name" ]; then
    echo "run_fuzzers: no fuzzer named $name in $build/fuzz" >&2
    exit 1
  fi
  run_one "$name" &
  running=$((running + 1))
  if ((running >= k_parallel)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=()
for name in "${targets[@]}"; do
  work="$build/fuzz-work/$name"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  coverage=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1)
  added=$(find "$work/corpus" -type f | wc -l)
  if [ "$(cat "$work/status")" = 0 ]; then
    printf 'run_fuzzers: %-14s ok      %9s inputs run, %s, %s new corpus inputs\n' "$name" "${runs:-?}" "${coverage:-cov: ?}" "$added"
  else
    failed+=("$name")
    printf 'run_fuzzers: %-14s FAILED  (exit %s); its log ends:\n' "$name" "$(cat "$work/status")"
    grep -v '^#[0-9]' "$work/log" | tail -40 | sed 's/^/    /'
    find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) |
      sed "s|^|    input kept: |; s|\$| (reproduce: $build/fuzz/fuzz_$name <input>)|"
  fi
done
if ((${#failed[@]})); then
  echo "run_fuzzers: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run_fuzzers: all ${#targets[@]} targets ran ${seconds} s without a finding"
