#include "digest/comparison_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>

namespace nvfresh {

namespace {

std::string optional_hex(const std::optional<Digest>& digest)
{
  return digest ? digest->short_hex() : std::string("-");
}

// A cubin kernel's register count, or a PTX function's virtual-register declarations.
std::string registers_of(const KernelInfo& kernel)
{
  if (kernel.register_count) {
    return std::to_string(*kernel.register_count);
  }
  return kernel.register_declarations.empty() ? std::string("?") : kernel.register_declarations;
}

std::string kernel_summary(const KernelInfo& kernel)
{
  return fmt::format("{} instructions, registers {}", kernel.instruction_count,
                     registers_of(kernel));
}

std::string kernel_line(const KernelChange& change)
{
  if (change.verdict != Verdict::different) {
    const KernelInfo& kernel = change.a ? *change.a : *change.b;
    return fmt::format("    kernel {}: {} ({})", change.name, to_string(change.verdict),
                       kernel_summary(kernel));
  }
  const bool same_size = change.a->instruction_count == change.b->instruction_count;
  return fmt::format("    kernel {}: instructions {} -> {}{}, registers {} -> {}{}", change.name,
                     change.a->instruction_count, change.b->instruction_count,
                     same_size ? " (same count, different code)" : "", registers_of(*change.a),
                     registers_of(*change.b),
                     change.only_register_numbers ? " (only register numbers differ)" : "");
}

void format_component(std::string& out, const ComponentComparison& component)
{
  std::string digests =
    component.verdict == Verdict::different
      ? fmt::format("{} -> {}", optional_hex(component.a), optional_hex(component.b))
      : optional_hex(component.a ? component.a : component.b);
  auto to = std::back_inserter(out);
  fmt::format_to(to, "{:<10} {:<24} {}\n", to_string(component.verdict), component.key, digests);
  for (const auto& change : component.kernels) {
    fmt::format_to(to, "{}\n", kernel_line(change));
  }
  if (component.ptx_differs_only_in_register_numbers) {
    fmt::format_to(to, "    PTX differs only in virtual register numbering\n");
  } else if (!component.ptx_diff.empty()) {
    fmt::format_to(to,
                   "    diff with register numbers factored out: {} changed line{} in {} hunk{} "
                   "(line numbers as in the files)\n",
                   component.ptx_changed_lines, component.ptx_changed_lines == 1 ? "" : "s",
                   component.ptx_hunks, component.ptx_hunks == 1 ? "" : "s");
  }
  for (const auto& line : component.ptx_diff) {
    fmt::format_to(to, "    {}\n", line);
  }
}

nlohmann::json kernel_json(const std::optional<KernelInfo>& kernel)
{
  if (!kernel) {
    return nullptr;
  }
  nlohmann::json result{{"instructions", kernel->instruction_count},
                        {"code_size", kernel->code_size},
                        {"entry", kernel->is_entry},
                        {"digest", kernel->code.to_hex()}};
  result["registers"] =
    kernel->register_count ? nlohmann::json(*kernel->register_count) : nlohmann::json(nullptr);
  if (!kernel->register_declarations.empty()) {
    result["register_declarations"] = kernel->register_declarations;
  }
  return result;
}

nlohmann::json component_json(const ComponentComparison& component)
{
  const auto hex = [](const std::optional<Digest>& d) {
    return d ? nlohmann::json(d->to_hex()) : nlohmann::json(nullptr);
  };
  nlohmann::json result{{"key", component.key},
                        {"status", to_string(component.verdict)},
                        {"a", hex(component.a)},
                        {"b", hex(component.b)}};
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& change : component.kernels) {
    kernels.push_back({{"name", change.name},
                       {"status", to_string(change.verdict)},
                       {"a", kernel_json(change.a)},
                       {"b", kernel_json(change.b)},
                       {"only_register_numbers", change.only_register_numbers}});
  }
  result["kernels"] = std::move(kernels);
  result["ptx_diff"] = component.ptx_diff;
  result["ptx_changed_lines"] = component.ptx_changed_lines;
  result["ptx_hunks"] = component.ptx_hunks;
  result["ptx_differs_only_in_register_numbers"] = component.ptx_differs_only_in_register_numbers;
  return result;
}

}  // namespace

std::string format_comparison(const std::string& a, const std::string& b,
                              const Comparison& comparison)
{
  std::string out = fmt::format("A: {}\nB: {}\n", a, b);
  for (const auto& component : comparison.components) {
    format_component(out, component);
  }
  const auto differing =
    std::count_if(comparison.components.begin(), comparison.components.end(),
                  [](const ComponentComparison& c) { return c.verdict != Verdict::same; });
  if (differing == 0) {
    fmt::format_to(std::back_inserter(out), "same: all {} components are equal\n",
                   comparison.components.size());
  } else {
    fmt::format_to(std::back_inserter(out), "different: {} of {} components differ\n", differing,
                   comparison.components.size());
  }
  return out;
}

nlohmann::json comparison_json(const std::string& a, const std::string& b,
                               const Comparison& comparison)
{
  nlohmann::json components = nlohmann::json::array();
  for (const auto& component : comparison.components) {
    components.push_back(component_json(component));
  }
  return nlohmann::json{
    {"a", a}, {"b", b}, {"same", comparison.same()}, {"components", std::move(components)}};
}

}  // namespace nvfresh
