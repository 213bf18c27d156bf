#!/usr/bin/env bash
# Fails when a commit subject breaks the project's habit: at most 72 characters, in the form
# "area: what changed" (measurements and details go in the body).
# Usage: scripts/check_commits.sh [BASE]   checks the commits in BASE..HEAD
# The default BASE is the last commit made before this habit was checked (3a0184a): older subjects
# stay as they were written.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
base=${1:-3a0184a128}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "check_commits: no commit '$base' to start from: nothing to check"
  exit 0
fi
status=0
count=0
while IFS=$'\t' read -r commit subject; do
  count=$((count + 1))
  problem=""
  if ((${#subject} > 72)); then
    problem="its subject has ${#subject} characters (at most 72: put details in the body)"
  elif ! [[ "$subject" =~ ^[A-Za-z0-9_./+,{}\ -]+:\ [^\ ] ]]; then
    problem="its subject is not 'area: what changed'"
  fi
  if [ -n "$problem" ]; then
    echo "check_commits: ${commit:0:10} \"$subject\": $problem" >&2
    status=1
  fi
done < <(git log --no-merges --format='%H%x09%s' "$base..HEAD")
if ((status == 0)); then
  echo "check_commits: $count commit subject(s) since $(git rev-parse --short "$base") in shape"
fi
exit $status
