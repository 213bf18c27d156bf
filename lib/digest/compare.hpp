// Compares the normalized digests of two artifacts component by component, and for differing cubins
// and PTX says which kernels changed and how; for differing PTX also which lines: a shortest line
// diff of the code with virtual register numbers factored out (so that one changed instruction does
// not show as the thousands of lines whose registers it renumbered), shown as hunks of the real
// text with the files' line numbers. The verdict is always the digests' (raw text), never the diff's.
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
  bool only_register_numbers = false;  // PTX: equal once register numbers are factored out
};

inline constexpr std::size_t k_default_max_diff_lines = 40;

struct ComponentComparison {
  std::string key;
  Verdict verdict = Verdict::same;
  std::optional<Digest> a;
  std::optional<Digest> b;
  std::vector<KernelChange> kernels;  // differing cubins and PTX
  // Differing PTX: the diff's hunks as text. A hunk starts with "@@ -1778,3 +1777,1 @@ <function>"
  // (first line and line count in A, then in B, as the files number them), then its lines, each " ",
  // "-" or "+" and the line as it is in the file. At most the shown limit, then "... N more lines".
  std::vector<std::string> ptx_diff;
  std::size_t ptx_changed_lines = 0;  // "-" and "+" lines in the whole diff, shown or not
  std::size_t ptx_hunks = 0;
  bool ptx_differs_only_in_register_numbers = false;
};

struct Comparison {
  std::vector<ComponentComparison> components;  // in A's order, then those only in B
  bool same() const;
};

// `max_diff_lines`: how many lines of each PTX diff to keep (0: all of them).
Comparison compare_digests(const ObjectDigests& a, const ObjectDigests& b,
                           std::size_t max_diff_lines = k_default_max_diff_lines);

// The PTX diff of two ptx components, as ComponentComparison holds it.
struct PtxDiff {
  std::vector<std::string> lines;
  std::size_t changed_lines = 0;
  std::size_t hunks = 0;
};
PtxDiff diff_ptx(const ComponentDigest& a, const ComponentDigest& b, std::size_t max_lines);

}  // namespace nvfresh
