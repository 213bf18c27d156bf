#include "util/line_diff.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace nvfresh {

namespace {

using Index = std::ptrdiff_t;

constexpr Index k_unreached = -1;

// Lines as small integers: equal lines get equal ids, so the search compares integers.
std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>> intern(
  const std::vector<std::string_view>& a, const std::vector<std::string_view>& b)
{
  std::unordered_map<std::string_view, std::uint32_t> ids;
  const auto to_ids = [&ids](const std::vector<std::string_view>& lines) {
    std::vector<std::uint32_t> result;
    result.reserve(lines.size());
    for (const auto line : lines) {
      result.push_back(ids.try_emplace(line, static_cast<std::uint32_t>(ids.size())).first->second);
    }
    return result;
  };
  auto ids_a = to_ids(a);
  auto ids_b = to_ids(b);
  return {std::move(ids_a), std::move(ids_b)};
}

// The middle snake of a box: the diagonal run in the middle of one shortest edit path. Its head box
// (left, top) .. (x_begin, y_begin) and tail box (x_end, y_end) .. (right, bottom) each have a
// smaller edit distance than the whole box, so the recursion ends.
struct Snake {
  Index x_begin;
  Index y_begin;
  Index x_end;
  Index y_end;
};

// Myers' search from both corners at once. Marks which lines of A are removed and which of B added.
class MyersSearch {
public:
  MyersSearch(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
              std::uint64_t budget)
    : m_a(a), m_b(b), m_budget(budget), m_removed(a.size(), false), m_added(b.size(), false)
  {}

  void run() { compare(0, static_cast<Index>(m_a.size()), 0, static_cast<Index>(m_b.size())); }
  const std::vector<bool>& removed() const { return m_removed; }
  const std::vector<bool>& added() const { return m_added; }

private:
  void compare(Index left, Index right, Index top, Index bottom)
  {
    while (left < right && top < bottom && m_a[left] == m_b[top]) {
      ++left;
      ++top;
    }
    while (left < right && top < bottom && m_a[right - 1] == m_b[bottom - 1]) {
      --right;
      --bottom;
    }
    if (left == right || top == bottom) {
      mark(left, right, top, bottom);
      return;
    }
    const std::optional<Snake> snake = middle_snake(left, right, top, bottom);
    if (!snake) {
      mark(left, right, top, bottom);  // over budget: the rest of this box is one change
      return;
    }
    compare(left, snake->x_begin, top, snake->y_begin);
    compare(snake->x_end, right, snake->y_end, bottom);
  }

  void mark(Index left, Index right, Index top, Index bottom)
  {
    std::fill(m_removed.begin() + left, m_removed.begin() + right, true);
    std::fill(m_added.begin() + top, m_added.begin() + bottom, true);
  }

  // Coordinates below are relative to the box: x in [0, n] along A, y in [0, m] along B, and the
  // diagonal k = x - y. forward(k) is the furthest x a path of d edits from (0, 0) reaches on k;
  // backward(k) the smallest x a path of d edits back from (n, m) reaches on k. Only moves inside
  // the box count: a diagonal no such path reaches holds k_unreached.
  std::optional<Snake> middle_snake(Index left, Index right, Index top, Index bottom)
  {
    const Index n = right - left;
    const Index m = bottom - top;
    const Index delta = n - m;
    const bool odd = (delta & 1) != 0;
    const Index max_d = (n + m + 1) / 2;
    const Index offset = max_d + 1;
    std::vector<Index> forward_x(2 * offset + 1, k_unreached);
    std::vector<Index> backward_x(2 * offset + 1, k_unreached);  // indexed by k - delta
    const auto forward = [&](Index k) -> Index& { return forward_x[k + offset]; };
    const auto backward = [&](Index k) -> Index& { return backward_x[k - delta + offset]; };
    for (Index d = 0; d <= max_d; ++d) {
      if (m_spent > m_budget) {
        return std::nullopt;
      }
      m_spent += static_cast<std::uint64_t>(2 * d + 1);
      for (Index k = -d; k <= d; k += 2) {
        Index x = d == 0 ? 0 : forward_step(forward, k, d, n, m);
        forward(k) = x;
        if (x == k_unreached) {
          continue;
        }
        const Index x_begin = x;
        x = slide_forward(left, top, x, k, n, m);
        m_spent += static_cast<std::uint64_t>(x - x_begin);
        forward(k) = x;
        const bool checked = odd && k >= delta - (d - 1) && k <= delta + (d - 1);
        if (checked && backward(k) != k_unreached && x >= backward(k)) {
          return Snake{left + x_begin, top + x_begin - k, left + x, top + x - k};
        }
      }
      for (Index c = -d; c <= d; c += 2) {
        const Index k = c + delta;
        Index x = d == 0 ? n : backward_step(backward, k, c, d);
        backward(k) = x;
        if (x == k_unreached) {
          continue;
        }
        const Index x_end = x;
        x = slide_backward(left, top, x, k);
        m_spent += static_cast<std::uint64_t>(x_end - x);
        backward(k) = x;
        const bool checked = !odd && k >= -d && k <= d;
        if (checked && forward(k) != k_unreached && x <= forward(k)) {
          return Snake{left + x, top + x - k, left + x_end, top + x_end - k};
        }
      }
    }
    return std::nullopt;  // not reached: the two searches meet by d = max_d
  }

  // From x on diagonal k, forward past the lines A and B share there (the snake after an edit).
  Index slide_forward(Index left, Index top, Index x, Index k, Index n, Index m) const
  {
    while (x < n && x - k < m && m_a[left + x] == m_b[top + x - k]) {
      ++x;
    }
    return x;
  }

  // From x on diagonal k, backward past the lines A and B share there.
  Index slide_backward(Index left, Index top, Index x, Index k) const
  {
    while (x > 0 && x - k > 0 && m_a[left + x - 1] == m_b[top + x - k - 1]) {
      --x;
    }
    return x;
  }

  // Where a forward path of d edits first lands on diagonal k: one step down from k + 1 (a line of B
  // added) or right from k - 1 (a line of A removed), whichever gets further, from step d - 1.
  template <typename Forward>
  static Index forward_step(Forward& forward, Index k, Index d, Index n, Index m)
  {
    Index best = k_unreached;
    if (k < d && forward(k + 1) != k_unreached && forward(k + 1) - (k + 1) < m) {
      best = forward(k + 1);
    }
    if (k > -d && forward(k - 1) != k_unreached && forward(k - 1) < n) {
      best = std::max(best, forward(k - 1) + 1);
    }
    return best;
  }

  // The same for a path back from (n, m): one step left from k + 1 or up from k - 1, whichever gets
  // further back.
  template <typename Backward>
  static Index backward_step(Backward& backward, Index k, Index c, Index d)
  {
    Index best = k_unreached;
    if (c < d && backward(k + 1) != k_unreached && backward(k + 1) > 0) {
      best = backward(k + 1) - 1;
    }
    if (c > -d && backward(k - 1) != k_unreached && backward(k - 1) - (k - 1) > 0) {
      best = best == k_unreached ? backward(k - 1) : std::min(best, backward(k - 1));
    }
    return best;
  }

  const std::vector<std::uint32_t>& m_a;
  const std::vector<std::uint32_t>& m_b;
  std::uint64_t m_budget;
  std::uint64_t m_spent = 0;
  std::vector<bool> m_removed;
  std::vector<bool> m_added;
};

// Unchanged lines of A and B pair up in order, so one walk over both turns the marks into ranges.
std::vector<DiffChange> changes_of(const std::vector<bool>& removed, const std::vector<bool>& added)
{
  std::vector<DiffChange> changes;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < removed.size() || j < added.size()) {
    if (i < removed.size() && j < added.size() && !removed[i] && !added[j]) {
      ++i;
      ++j;
      continue;
    }
    DiffChange change{i, 0, j, 0};
    for (; i < removed.size() && removed[i]; ++i) {
      ++change.a_count;
    }
    for (; j < added.size() && added[j]; ++j) {
      ++change.b_count;
    }
    changes.push_back(change);
  }
  return changes;
}

void add_context(DiffHunk& hunk, std::size_t& a, std::size_t& b, std::size_t count)
{
  for (std::size_t i = 0; i < count; ++i) {
    hunk.lines.push_back({DiffOp::context, a++, b++});
  }
}

}  // namespace

std::vector<DiffChange> diff_lines(const std::vector<std::string_view>& a,
                                   const std::vector<std::string_view>& b, std::uint64_t budget)
{
  const auto [ids_a, ids_b] = intern(a, b);
  MyersSearch search(ids_a, ids_b, budget);
  search.run();
  return changes_of(search.removed(), search.added());
}

std::vector<DiffHunk> diff_hunks(const std::vector<DiffChange>& changes, std::size_t a_size,
                                 std::size_t b_size, std::size_t context)
{
  std::vector<DiffHunk> hunks;
  for (std::size_t first = 0; first < changes.size();) {
    std::size_t last = first;
    while (last + 1 < changes.size() &&
           changes[last + 1].a_begin - (changes[last].a_begin + changes[last].a_count) <=
             2 * context) {
      ++last;
    }
    DiffHunk hunk;
    const std::size_t lead = std::min(context, changes[first].a_begin);
    std::size_t a = changes[first].a_begin - lead;
    std::size_t b = changes[first].b_begin - lead;
    hunk.a_begin = a;
    hunk.b_begin = b;
    for (std::size_t i = first; i <= last; ++i) {
      add_context(hunk, a, b, changes[i].a_begin - a);
      for (std::size_t n = 0; n < changes[i].a_count; ++n) {
        hunk.lines.push_back({DiffOp::removed, a++, b});
      }
      for (std::size_t n = 0; n < changes[i].b_count; ++n) {
        hunk.lines.push_back({DiffOp::added, a, b++});
      }
    }
    add_context(hunk, a, b, std::min({context, a_size - a, b_size - b}));
    hunk.a_count = a - hunk.a_begin;
    hunk.b_count = b - hunk.b_begin;
    hunks.push_back(std::move(hunk));
    first = last + 1;
  }
  return hunks;
}

std::size_t changed_line_count(const std::vector<DiffChange>& changes)
{
  std::size_t count = 0;
  for (const auto& change : changes) {
    count += change.a_count + change.b_count;
  }
  return count;
}

}  // namespace nvfresh
