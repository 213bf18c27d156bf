// Compares the normalized digests of two artifacts component by component, and for differing cubins
// says which kernels changed and how; for differing PTX, which lines (register numbers factored out).
#pragma once

#include "digest/object_digest.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

enum class Verdict { same, different, only_in_a, only_in_b };

std::string_view to_string(Verdict verdict);  // "same", "different", "only in A", "only in B"

struct KernelChange {
  std::string name;
  Verdict verdict = Verdict::different;  // never `same`: unchanged kernels are not listed
  std::optional<KernelInfo> a;
  std::optional<KernelInfo> b;
};

struct ComponentComparison {
  std::string key;
  Verdict verdict = Verdict::same;
  std::optional<Digest> a;
  std::optional<Digest> b;
  std::vector<KernelChange> kernels;  // differing cubins only
  std::vector<std::string>
    ptx_diff;  // differing PTX only: "-line" / "+line", register numbers as %r#
  bool ptx_differs_only_in_register_numbers = false;
};

struct Comparison {
  std::vector<ComponentComparison> components;  // in A's order, then those only in B
  bool same() const;
};

Comparison compare_digests(const ObjectDigests& a, const ObjectDigests& b);

// A short line diff: the common leading and trailing lines are dropped and the rest shown as
// "-" (A) and "+" (B) lines, at most `max_lines` of them (then "... N more lines").
std::vector<std::string> diff_lines(std::string_view a, std::string_view b, std::size_t max_lines);

}  // namespace nvfresh
