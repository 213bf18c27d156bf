// A line diff: the shortest edit script between two sequences of lines (Myers' O(ND) algorithm,
// in its linear-space form: the middle snake of each box, recursively), and its grouping into hunks
// with context, as `diff -u` shows them. Knows nothing about what the lines are; callers normalize
// them first (compare diffs PTX with register numbers factored out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace nvfresh {

// Lines [a_begin, a_begin + a_count) of A are replaced by lines [b_begin, b_begin + b_count) of B
// (one of the counts may be 0: a pure deletion or insertion). Indices are 0-based.
struct DiffChange {
  std::size_t a_begin = 0;
  std::size_t a_count = 0;
  std::size_t b_begin = 0;
  std::size_t b_count = 0;

  bool operator==(const DiffChange&) const = default;
};

// When a pair of inputs would cost more than this many steps of the search (D * (N + M) for edit
// distance D), the rest of that pair is reported as one change: the result is still a correct edit
// script, only no longer the shortest. About a second of work; PTX files of 10k lines that differ in
// everything stay well inside it.
inline constexpr std::uint64_t k_default_diff_budget = 400'000'000;

// The changes that turn `a` into `b`, in order, none overlapping or touching (adjacent deletions
// and insertions are one change). Identical inputs give none. Lines are compared as whole strings.
std::vector<DiffChange> diff_lines(const std::vector<std::string_view>& a,
                                   const std::vector<std::string_view>& b,
                                   std::uint64_t budget = k_default_diff_budget);

enum class DiffOp : char { context = ' ', removed = '-', added = '+' };

struct DiffLine {
  DiffOp op = DiffOp::context;
  std::size_t a = 0;  // index in A (context and removed lines)
  std::size_t b = 0;  // index in B (context and added lines)
};

// One hunk: changes closer than 2 * context lines to each other share one, with up to `context`
// unchanged lines around them.
struct DiffHunk {
  std::size_t a_begin = 0;  // first line of A the hunk shows (0-based)
  std::size_t a_count = 0;
  std::size_t b_begin = 0;
  std::size_t b_count = 0;
  std::vector<DiffLine> lines;
};

std::vector<DiffHunk> diff_hunks(const std::vector<DiffChange>& changes, std::size_t a_size,
                                 std::size_t b_size, std::size_t context);

// Lines removed plus lines added.
std::size_t changed_line_count(const std::vector<DiffChange>& changes);

}  // namespace nvfresh
