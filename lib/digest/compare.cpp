#include "digest/compare.hpp"

#include "digest/normalize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

namespace nvfresh {

namespace {

constexpr std::size_t k_max_diff_lines = 40;

struct VerdictNameRow {
  Verdict verdict;
  std::string_view name;
};
constexpr std::array k_verdict_names{
  VerdictNameRow{Verdict::same, "same"}, VerdictNameRow{Verdict::different, "different"},
  VerdictNameRow{Verdict::only_in_a, "only in A"}, VerdictNameRow{Verdict::only_in_b, "only in B"}};

std::vector<std::string_view> split_lines(std::string_view text)
{
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

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
      it->second.b = kernel;
      it->second.verdict = same_kernel(*it->second.a, kernel) ? Verdict::same : Verdict::different;
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

ComponentComparison compare_component(const ComponentDigest* a, const ComponentDigest* b)
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
    const std::string plain_a = ptx_without_register_numbers(a->ptx_text);
    const std::string plain_b = ptx_without_register_numbers(b->ptx_text);
    result.ptx_differs_only_in_register_numbers = plain_a == plain_b;
    result.ptx_diff = diff_lines(plain_a, plain_b, k_max_diff_lines);
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

Comparison compare_digests(const ObjectDigests& a, const ObjectDigests& b)
{
  Comparison comparison;
  for (const auto& component : a.components) {
    comparison.components.push_back(compare_component(&component, b.find(component.key)));
  }
  for (const auto& component : b.components) {
    if (a.find(component.key) == nullptr) {
      comparison.components.push_back(compare_component(nullptr, &component));
    }
  }
  return comparison;
}

std::vector<std::string> diff_lines(std::string_view a, std::string_view b, std::size_t max_lines)
{
  const auto lines_a = split_lines(a);
  const auto lines_b = split_lines(b);
  std::size_t prefix = 0;
  while (prefix < lines_a.size() && prefix < lines_b.size() && lines_a[prefix] == lines_b[prefix]) {
    ++prefix;
  }
  std::size_t suffix = 0;
  while (suffix + prefix < lines_a.size() && suffix + prefix < lines_b.size() &&
         lines_a[lines_a.size() - 1 - suffix] == lines_b[lines_b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<std::string> result;
  for (std::size_t i = prefix; i + suffix < lines_a.size(); ++i) {
    result.push_back(fmt::format("-{}", lines_a[i]));
  }
  for (std::size_t i = prefix; i + suffix < lines_b.size(); ++i) {
    result.push_back(fmt::format("+{}", lines_b[i]));
  }
  if (result.size() > max_lines) {
    const std::size_t hidden = result.size() - max_lines;
    result.resize(max_lines);
    result.push_back(fmt::format("... {} more lines", hidden));
  }
  return result;
}

}  // namespace nvfresh
