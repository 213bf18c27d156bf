// One golden test of the HTML page: a small fixed report rendered and compared, byte for byte, with
// tests/unit/report/golden/report.html. A change to the page shows as a diff of that file in review.
//
// To regenerate it after a deliberate change of the page:
//   NVFRESH_UPDATE_GOLDEN=1 build/tests/nvfresh_unit_tests "[report_html]"
// then look at the diff (git diff tests/unit/report/golden) and open the file in a browser.
#include "report/report_html.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;
constexpr std::int64_t k_t0 = 1'780'000'000 * k_second;  // 2026-05-28 20:26:40 UTC

const std::string k_golden = NVFRESH_TEST_DATA_DIR "/../report/golden/report.html";

BuildSummary summary(std::int64_t start, size_t compiled, size_t served)
{
  BuildSummary s;
  s.start_ns = start;
  s.end_ns = start + 95 * k_second;
  s.compiles = compiled + served;
  s.outcomes["compiled"] = {compiled, static_cast<std::int64_t>(compiled) * 30 * k_second};
  s.outcomes["served"] = {served, static_cast<std::int64_t>(served) * 20 * k_second};
  s.nvcc_spent_ns = static_cast<std::int64_t>(compiled) * 30 * k_second;
  s.nvcc_saved_ns = static_cast<std::int64_t>(served) * 20 * k_second;
  return s;
}

// Every section filled, with names that need escaping.
Report fixed_report()
{
  Report report;
  report.record_root = "/proj/build/.nvfresh";
  report.objects = 3;
  report.fresh = 2;
  report.stale = 1;
  report.stale_causes = {{"input_changed", 1}};
  report.last_build = summary(k_t0, 1, 1);
  report.history = summary(k_t0 - 86'400 * k_second, 4, 2);

  TranslationUnit slow{
    "obj/kernels<big>.o", "src/kernels.cu", false, {"src/a&b.h changed (content)"},
    41 * k_second,        "compiled",       {}};
  slow.passes.nvcc_ns = 41 * k_second;
  slow.passes.rows = {{"host", "host", 12 * k_second, 3, 0},
                      {"sm_80", "device", 20 * k_second, 2, 0},
                      {"sm_90", "device", 0, 0, 2},
                      {"link", "link", 2 * k_second, 2, 0}};
  report.units = {slow,
                  {"obj/main.o", "src/main.cu", true, {}, 7 * k_second, "served", {}},
                  {"obj/util.o", "src/util.cu", true, {}, 3 * k_second, "skipped", {}}};
  report.header_costs = {{"/proj/src/a&b.h", {"obj/kernels<big>.o", "obj/main.o"}, 48 * k_second},
                         {"/proj/src/util.h", {"obj/util.o"}, 3 * k_second}};
  report.artifacts = {
    {"bin/app",
     "executable",
     false,
     {"obj/kernels<big>.o is stale"},
     {{"obj/kernels<big>.o", "stale"}, {"obj/main.o", "fresh"}, {"obj/extra.o", "unrecorded"}}}};
  report.cache.hits = 2;
  report.cache.misses = 3;
  report.cache.skipped = 1;
  report.cache.miss_causes = {{"first_compile", 2}, {"input_changed", 1}};
  report.cache.objects = {
    {"obj/kernels<big>.o", 0, 2, 0, {{"first_compile", 1}, {"input_changed", 1}}},
    {"obj/main.o", 2, 1, 0, {{"first_compile", 1}}},
    {"obj/util.o", 0, 0, 1, {}}};
  report.store = {"/home/u/.cache/nvfresh", 12, 5, 30, 8, 95 * k_second};
  return report;
}

std::string read_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("report_html: a fixed report renders as the golden page", "[report_html]")
{
  const std::string html = render_report_html(fixed_report(), k_t0 + 3600 * k_second);
  const char* update = std::getenv("NVFRESH_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(k_golden, std::ios::binary | std::ios::trunc) << html;
    WARN("rewrote " << k_golden << ": review its diff before committing it");
  }
  const std::string golden = read_text(k_golden);
  REQUIRE_FALSE(golden.empty());
  if (html != golden) {
    // Name the first line that differs: the whole page would drown the report.
    std::istringstream got(html);
    std::istringstream want(golden);
    std::string got_line;
    std::string want_line;
    int line = 0;
    while (std::getline(want, want_line)) {
      ++line;
      if (!std::getline(got, got_line) || got_line != want_line) {
        break;
      }
    }
    FAIL_CHECK("the page differs from " << k_golden << " at line " << line << ":\n  golden: "
                                        << want_line << "\n  now:    " << got_line
                                        << "\n(regenerate it as this file's top comment says)");
  }
  CHECK(html == golden);
}
