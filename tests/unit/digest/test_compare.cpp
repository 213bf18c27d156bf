#include "digest/compare.hpp"
#include "digest/object_digest.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

using nvfresh::compare_digests;
using nvfresh::ComponentComparison;
using nvfresh::digest_bytes;
using nvfresh::Verdict;

namespace {

std::string load_ptx(const std::string& name)
{
  return nvfresh::read_file(std::string(NVFRESH_TEST_DATA_DIR) + "/ptx/" + name);
}

ComponentComparison only_component(const nvfresh::Comparison& comparison)
{
  REQUIRE(comparison.components.size() == 1);
  return comparison.components.front();
}

std::vector<std::string> changed_lines(const ComponentComparison& component)
{
  std::vector<std::string> lines;
  std::copy_if(component.ptx_diff.begin(), component.ptx_diff.end(), std::back_inserter(lines),
               [](const std::string& line) { return line[0] == '-' || line[0] == '+'; });
  return lines;
}

// The 1-based number of the line of `text` that contains `needle`.
std::size_t line_number_of(const std::string& text, const std::string& needle)
{
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return static_cast<std::size_t>(
           std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) +
         1;
}

}  // namespace

TEST_CASE("compare: the DSL variant pair differs in the 7 lines that changed", "[compare]")
{
  const std::string a = load_ptx("variant_a.ptx");
  const std::string b = load_ptx("variant_b.ptx");
  const auto component =
    only_component(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(b, "b.ptx")));
  CHECK(component.key == "sm_100a ptx");
  CHECK(component.verdict == Verdict::different);  // the raw digests decide
  CHECK_FALSE(component.ptx_differs_only_in_register_numbers);
  CHECK(component.ptx_changed_lines == 7);
  CHECK(component.ptx_hunks == 3);
  CHECK(changed_lines(component) ==
        std::vector<std::string>{
          "-\t.reg .b64 \t%rd<39>;", "+\t.reg .b64 \t%rd<38>;", "-\tcvt.u64.u32 \t%rd21, %r40;",
          "-\tor.b64 \t%rd22, %rd21, 4611756662116581376;", "-\tmov.b64 \t{%r41, _}, %rd22;",
          "+\tadd.s32 \t%r42, %r40, 67108864;", "+\tmov.b64 \t%rd29, 4611756662116581376;"});
  // Hunk headers give the files' line numbers and the function.
  const std::string header = fmt::format("@@ -{},", line_number_of(a, "cvt.u64.u32 \t%rd21") - 2);
  CHECK(std::count_if(component.ptx_diff.begin(), component.ptx_diff.end(),
                      [&](const std::string& line) {
                        return line.starts_with(header) &&
                               line.ends_with(" @@ kernel_cutlass_kernel_fmha_demo_0");
                      }) == 1);
  // Only the kernel changed; the .func beside it did not.
  REQUIRE(component.kernels.size() == 1);
  const auto& kernel = component.kernels[0];
  CHECK(kernel.name == "kernel_cutlass_kernel_fmha_demo_0");
  CHECK(kernel.a->instruction_count == kernel.b->instruction_count + 1);
  CHECK(kernel.a->register_declarations == "%p<3> %r<52> %rd<39>");
  CHECK(kernel.b->register_declarations == "%p<3> %r<52> %rd<38>");
  CHECK_FALSE(kernel.only_register_numbers);
}

TEST_CASE("compare: renumbered registers alone are different, and said to be only that",
          "[compare]")
{
  const std::string a = load_ptx("variant_a.ptx");
  const std::string renumbered = std::regex_replace(a, std::regex("%rd3([0-8])\\b"), "%rd4$1");
  REQUIRE(renumbered != a);
  const auto component =
    only_component(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(renumbered, "b.ptx")));
  CHECK(component.verdict == Verdict::different);
  CHECK(component.ptx_differs_only_in_register_numbers);
  CHECK(component.ptx_changed_lines == 0);
  CHECK(component.ptx_diff.empty());
  REQUIRE(component.kernels.size() == 1);
  CHECK(component.kernels[0].only_register_numbers);
  CHECK(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(a, "a2.ptx")).same());
}

TEST_CASE("compare: real nvcc PTX names the one kernel an edit changed", "[compare]")
{
  const std::string a = load_ptx("k_sm100a.ptx");
  std::string b = a;
  const std::string from = "add.s32 \t%r3, %r2, 1;";
  b.replace(b.find(from), from.size(), "add.s32 \t%r3, %r2, 2;");
  const auto component =
    only_component(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(b, "b.ptx")));
  CHECK(component.key == "sm_100a ptx");
  REQUIRE(component.kernels.size() == 1);
  CHECK(component.kernels[0].name == "_Z7add_onePi");
  CHECK(component.kernels[0].a->is_entry);
  CHECK(component.ptx_changed_lines == 2);
  const std::size_t line = line_number_of(a, from);
  CHECK(component.ptx_diff.front() ==
        fmt::format("@@ -{},5 +{},5 @@ _Z7add_onePi", line - 2, line - 2));
}

TEST_CASE("compare: the shown diff is capped, the counts are not", "[compare]")
{
  const std::string a = load_ptx("variant_a.ptx");
  const std::string b = load_ptx("variant_b.ptx");
  const auto capped =
    only_component(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(b, "b.ptx"), 4));
  CHECK(capped.ptx_diff.size() == 5);
  CHECK(capped.ptx_diff.back().ends_with("more lines"));
  CHECK(capped.ptx_changed_lines == 7);
  const auto all =
    only_component(compare_digests(digest_bytes(a, "a.ptx"), digest_bytes(b, "b.ptx"), 0));
  CHECK(all.ptx_diff.size() ==
        3 + 7 + 3 * 4 + 1);  // headers, changes, 2 context lines each side, 1 between
}

TEST_CASE("compare: a PTX file with debug sections numbers lines as the file does", "[compare]")
{
  const std::string head =
    ".version 9.0\n.target sm_90\n.file 1 \"/src/k.cu\"\n.file 2 \"/src/k.h\"\n";
  const std::string body = ".visible .entry k()\n{\n\tmov.u32 \t%r1, 1;\n\tret;\n}\n";
  std::string edited = body;
  edited.replace(edited.find("1;"), 2, "2;");
  const auto comparison =
    compare_digests(digest_bytes(head + body, "a.ptx"), digest_bytes(head + edited, "b.ptx"));
  REQUIRE(comparison.components.size() == 2);
  CHECK(comparison.components[1].key == "sm_90 ptx debug");
  CHECK(comparison.components[1].verdict == Verdict::same);
  const auto& component = comparison.components[0];
  CHECK(component.ptx_diff.front() ==
        "@@ -5,5 +5,5 @@ k");  // line 7 of the file, 2 lines of context around
  CHECK(changed_lines(component) ==
        std::vector<std::string>{"-\tmov.u32 \t%r1, 1;", "+\tmov.u32 \t%r1, 2;"});
}
