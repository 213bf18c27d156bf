#include "util/line_diff.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using nvfresh::changed_line_count;
using nvfresh::diff_hunks;
using nvfresh::diff_lines;
using nvfresh::DiffChange;
using nvfresh::DiffOp;

namespace {

std::vector<std::string_view> views(const std::vector<std::string>& lines)
{
  return {lines.begin(), lines.end()};
}

std::vector<DiffChange> diff(const std::vector<std::string>& a, const std::vector<std::string>& b,
                             std::uint64_t budget = nvfresh::k_default_diff_budget)
{
  return diff_lines(views(a), views(b), budget);
}

// The length of a longest common subsequence, by dynamic programming: the reference the search
// must match (changed lines = |A| + |B| - 2 LCS for a shortest edit script).
std::size_t lcs_length(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
  std::vector<std::vector<std::size_t>> table(a.size() + 1,
                                              std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      table[i][j] =
        a[i - 1] == b[j - 1] ? table[i - 1][j - 1] + 1 : std::max(table[i - 1][j], table[i][j - 1]);
    }
  }
  return table[a.size()][b.size()];
}

// A rebuilt from the changes: unchanged lines of A in order, each change's lines taken from B.
std::vector<std::string> apply(const std::vector<std::string>& a, const std::vector<std::string>& b,
                               const std::vector<DiffChange>& changes)
{
  std::vector<std::string> result;
  std::size_t at = 0;
  for (const auto& change : changes) {
    REQUIRE(change.a_begin >= at);
    result.insert(result.end(), a.begin() + at, a.begin() + change.a_begin);
    result.insert(result.end(), b.begin() + change.b_begin,
                  b.begin() + change.b_begin + change.b_count);
    at = change.a_begin + change.a_count;
  }
  result.insert(result.end(), a.begin() + at, a.end());
  return result;
}

// xorshift64*: the same sequences on every platform.
class Random {
public:
  explicit Random(std::uint64_t seed) : m_state(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  std::uint64_t next(std::uint64_t bound)
  {
    m_state ^= m_state >> 12;
    m_state ^= m_state << 25;
    m_state ^= m_state >> 27;
    return (m_state * 0x2545F4914F6CDD1DULL) % bound;
  }

private:
  std::uint64_t m_state;
};

std::vector<std::string> random_lines(Random& random, std::size_t max_size, std::uint64_t alphabet)
{
  std::vector<std::string> lines(random.next(max_size + 1));
  for (auto& line : lines) {
    line = std::string(1, static_cast<char>('a' + random.next(alphabet)));
  }
  return lines;
}

}  // namespace

TEST_CASE("line diff: identical and empty inputs", "[line_diff]")
{
  CHECK(diff({}, {}).empty());
  CHECK(diff({"a", "b"}, {"a", "b"}).empty());
  CHECK(diff({}, {"a", "b"}) == std::vector<DiffChange>{{0, 0, 0, 2}});
  CHECK(diff({"a", "b"}, {}) == std::vector<DiffChange>{{0, 2, 0, 0}});
}

TEST_CASE("line diff: one replaced line in the middle is one change", "[line_diff]")
{
  CHECK(diff({"a", "b", "c"}, {"a", "x", "c"}) == std::vector<DiffChange>{{1, 1, 1, 1}});
}

TEST_CASE("line diff: separate edits stay separate, as diff(1) shows them", "[line_diff]")
{
  // The shape of the CuTe DSL variants: a declaration changed near the top, three lines replaced by
  // one much later, and one line added after that.
  std::vector<std::string> a{"decl 3000", "x", "y", "cvt", "or", "mov", "use", "z", "tail"};
  std::vector<std::string> b{"decl 2999", "x", "y", "use", "add", "z", "movc", "tail"};
  const auto changes = diff(a, b);
  CHECK(changes == std::vector<DiffChange>{{0, 1, 0, 1}, {3, 3, 3, 0}, {7, 0, 4, 1}, {8, 0, 6, 1}});
  CHECK(changed_line_count(changes) == 7);
  CHECK(apply(a, b, changes) == b);
}

TEST_CASE("line diff: a shortest edit script on random inputs", "[line_diff]")
{
  Random random(20261201);
  for (int round = 0; round < 3000; ++round) {
    const std::uint64_t alphabet = 1 + random.next(5);
    const auto a = random_lines(random, 14, alphabet);
    const auto b = random_lines(random, 14, alphabet);
    const auto changes = diff(a, b);
    INFO("round " << round << ": " << a.size() << " vs " << b.size() << " lines");
    CHECK(apply(a, b, changes) == b);
    CHECK(changed_line_count(changes) == a.size() + b.size() - 2 * lcs_length(a, b));
    for (std::size_t i = 1; i < changes.size(); ++i) {
      CHECK(changes[i].a_begin >
            changes[i - 1].a_begin + changes[i - 1].a_count);  // never touching
    }
  }
}

TEST_CASE("line diff: over its budget the rest is one change, still a correct script",
          "[line_diff]")
{
  Random random(7);
  std::vector<std::string> a;
  std::vector<std::string> b;
  for (int i = 0; i < 400; ++i) {
    a.push_back(std::to_string(random.next(50)));
    b.push_back(std::to_string(random.next(50)));
  }
  const auto exact = diff(a, b);
  const auto cut = diff(a, b, 1000);
  CHECK(apply(a, b, cut) == b);
  CHECK(changed_line_count(cut) >= changed_line_count(exact));
  CHECK(changed_line_count(exact) == a.size() + b.size() - 2 * lcs_length(a, b));
}

TEST_CASE("line diff: hunks carry context and merge when close", "[line_diff]")
{
  std::vector<std::string> a{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"};
  std::vector<std::string> b = a;
  b[2] = "three";
  b[4] = "five";
  b[11] = "twelve";
  const auto changes = diff(a, b);
  REQUIRE(changes.size() == 3);
  const auto hunks = diff_hunks(changes, a.size(), b.size(), 2);
  REQUIRE(hunks.size() == 2);  // lines 3 and 5 share one hunk (gap 1 <= 2 * context)
  CHECK(hunks[0].a_begin == 0);
  CHECK(hunks[0].a_count == 7);  // 1 2 [3] 4 [5] 6 7
  CHECK(hunks[0].b_count == 7);
  CHECK(hunks[0].lines.front().op == DiffOp::context);
  CHECK(hunks[1].a_begin == 9);
  CHECK(hunks[1].a_count == 3);  // 10 11 [12], nothing after the end
  std::string ops;
  for (const auto& line : hunks[0].lines) {
    ops.push_back(static_cast<char>(line.op));
  }
  CHECK(ops == "  -+ -+  ");
  CHECK(hunks[0].lines[3].b == 2);
  CHECK(hunks[0].lines[2].a == 2);
}

TEST_CASE("line diff: hunks of pure insertions and deletions at the edges", "[line_diff]")
{
  const std::vector<std::string> a{"x", "y"};
  const std::vector<std::string> b{"w", "x", "y", "z"};
  const auto hunks = diff_hunks(diff(a, b), a.size(), b.size(), 1);
  REQUIRE(hunks.size() == 1);
  CHECK(hunks[0].a_begin == 0);
  CHECK(hunks[0].a_count == 2);
  CHECK(hunks[0].b_count == 4);
  CHECK(diff_hunks(diff({"a"}, {"a"}), 1, 1, 3).empty());
}
