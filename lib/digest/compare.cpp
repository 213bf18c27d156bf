#include "digest/compare.hpp"

#include "digest/normalize.hpp"
#include "digest/ptx.hpp"
#include "util/line_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

namespace nvfresh {

namespace {

constexpr std::size_t k_context_lines = 2;

struct VerdictNameRow {
  Verdict verdict;
  std::string_view name;
};
constexpr std::array k_verdict_names{
  VerdictNameRow{Verdict::same, "same"}, VerdictNameRow{Verdict::different, "different"},
  VerdictNameRow{Verdict::only_in_a, "only in A"}, VerdictNameRow{Verdict::only_in_b, "only in B"}};

bool same_kernel(const KernelInfo& a, const KernelInfo& b)
{
  return a.code == b.code && a.register_count == b.register_count && a.code_size == b.code_size;
}

std::vector<KernelChange> kernel_changes(const ComponentDigest& a, const ComponentDigest& b)
{
  std::map<std::string, KernelChange> changes;
  for (const auto& kernel : a.kernels) {
    changes[kernel.name] = KernelChange{kernel.name, Verdict::only_in_a, kernel, std::nullopt};
  }
  for (const auto& kernel : b.kernels) {
    auto [it, inserted] = changes.try_emplace(
      kernel.name, KernelChange{kernel.name, Verdict::only_in_b, std::nullopt, kernel});
    if (!inserted) {
      KernelChange& change = it->second;
      change.b = kernel;
      change.verdict = same_kernel(*change.a, kernel) ? Verdict::same : Verdict::different;
      change.only_register_numbers =
        change.a->code_without_register_numbers.has_value() &&
        change.a->code_without_register_numbers == kernel.code_without_register_numbers;
    }
  }
  std::vector<KernelChange> result;
  for (auto& [name, change] : changes) {
    if (change.verdict != Verdict::same) {
      result.push_back(std::move(change));
    }
  }
  return result;
}

// The function that holds line `index` ("" between functions).
std::string function_at(const std::vector<PtxFunction>& functions, std::size_t index)
{
  for (const auto& function : functions) {
    if (index >= function.first_line && index <= function.last_line) {
      return function.name;
    }
  }
  return {};
}

// One side of a PTX component prepared for the diff: its lines as the file has them, the same with
// register numbers factored out, their line numbers in the file and its functions.
struct PtxSide {
  std::vector<std::string_view> lines;
  std::vector<std::string> plain;
  std::vector<std::string_view> plain_views;
  const std::vector<std::uint32_t>& numbers;
  std::vector<PtxFunction> functions;

  explicit PtxSide(const ComponentDigest& component)
    : lines(split_text_lines(component.ptx_text)), numbers(component.ptx_line_numbers)
  {
    for (const auto line : lines) {
      plain.push_back(ptx_without_register_numbers(line));
    }
    plain_views.assign(plain.begin(), plain.end());
    functions = ptx_functions(lines);
  }

  // The file's number of line `index`; for an empty range, the number of the line before it.
  std::uint32_t number(std::size_t index, std::size_t count) const
  {
    const std::size_t at = count == 0 ? index : index + 1;
    if (at == 0) {
      return 0;
    }
    return at - 1 < numbers.size() ? numbers[at - 1] : static_cast<std::uint32_t>(at);
  }
};

std::string hunk_header(const DiffHunk& hunk, const PtxSide& a, const PtxSide& b)
{
  const auto changed = std::find_if(hunk.lines.begin(), hunk.lines.end(), [](const DiffLine& line) {
    return line.op != DiffOp::context;
  });
  const std::string function = changed->op == DiffOp::added ? function_at(b.functions, changed->b)
                                                            : function_at(a.functions, changed->a);
  return fmt::format("@@ -{},{} +{},{} @@{}{}", a.number(hunk.a_begin, hunk.a_count), hunk.a_count,
                     b.number(hunk.b_begin, hunk.b_count), hunk.b_count,
                     function.empty() ? "" : " ", function);
}

ComponentComparison compare_component(const ComponentDigest* a, const ComponentDigest* b,
                                      std::size_t max_diff_lines)
{
  ComponentComparison result;
  result.key = a != nullptr ? a->key : b->key;
  if (a == nullptr || b == nullptr) {
    result.verdict = a == nullptr ? Verdict::only_in_b : Verdict::only_in_a;
    result.a = a != nullptr ? std::optional{a->digest} : std::nullopt;
    result.b = b != nullptr ? std::optional{b->digest} : std::nullopt;
    return result;
  }
  result.a = a->digest;
  result.b = b->digest;
  result.verdict = a->digest == b->digest ? Verdict::same : Verdict::different;
  if (result.verdict == Verdict::same) {
    return result;
  }
  result.kernels = kernel_changes(*a, *b);
  if (a->kind == ComponentKind::ptx) {
    PtxDiff diff = diff_ptx(*a, *b, max_diff_lines);
    result.ptx_differs_only_in_register_numbers = diff.changed_lines == 0;
    result.ptx_diff = std::move(diff.lines);
    result.ptx_changed_lines = diff.changed_lines;
    result.ptx_hunks = diff.hunks;
  }
  return result;
}

}  // namespace

std::string_view to_string(Verdict verdict)
{
  for (const auto& row : k_verdict_names) {
    if (row.verdict == verdict) {
      return row.name;
    }
  }
  return "unknown";
}

bool Comparison::same() const
{
  return std::all_of(components.begin(), components.end(),
                     [](const ComponentComparison& c) { return c.verdict == Verdict::same; });
}

Comparison compare_digests(const ObjectDigests& a, const ObjectDigests& b,
                           std::size_t max_diff_lines)
{
  Comparison comparison;
  for (const auto& component : a.components) {
    comparison.components.push_back(
      compare_component(&component, b.find(component.key), max_diff_lines));
  }
  for (const auto& component : b.components) {
    if (a.find(component.key) == nullptr) {
      comparison.components.push_back(compare_component(nullptr, &component, max_diff_lines));
    }
  }
  return comparison;
}

PtxDiff diff_ptx(const ComponentDigest& a, const ComponentDigest& b, std::size_t max_lines)
{
  const PtxSide side_a(a);
  const PtxSide side_b(b);
  const std::vector<DiffChange> changes = diff_lines(side_a.plain_views, side_b.plain_views);
  const std::vector<DiffHunk> hunks =
    diff_hunks(changes, side_a.lines.size(), side_b.lines.size(), k_context_lines);
  PtxDiff diff;
  diff.changed_lines = changed_line_count(changes);
  diff.hunks = hunks.size();
  std::size_t hidden = 0;
  const auto add = [&](std::string line) {
    if (max_lines != 0 && diff.lines.size() >= max_lines) {
      ++hidden;
    } else {
      diff.lines.push_back(std::move(line));
    }
  };
  for (const auto& hunk : hunks) {
    add(hunk_header(hunk, side_a, side_b));
    for (const auto& line : hunk.lines) {
      const std::string_view text =
        line.op == DiffOp::added ? side_b.lines[line.b] : side_a.lines[line.a];
      add(fmt::format("{}{}", static_cast<char>(line.op), text));
    }
  }
  if (hidden > 0) {
    diff.lines.push_back(fmt::format("... {} more lines", hidden));
  }
  return diff;
}

}  // namespace nvfresh
