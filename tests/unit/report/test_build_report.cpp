#include "report/build_report.hpp"
#include "report/report_html.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;
const std::string k_nvcc = "/opt/cuda-13.0/bin/nvcc";

RecordedInput input(const std::string& path, InputRole role = InputRole::header)
{
  RecordedInput recorded;
  recorded.file.path = path;
  recorded.role = role;
  return recorded;
}

// One recorded object of the fake tree: compiled from `source` in `seconds`, reading `headers`
// plus the toolkit's cuda_runtime.h, a system header and nvcc itself.
ObjectStatus object(const std::string& name, std::int64_t seconds,
                    const std::vector<std::string>& headers, bool fresh = true)
{
  Record record;
  record.object = "/b/" + name + ".o";
  record.source = "/src/" + name + ".cu";
  record.compiler = k_nvcc;
  record.start_ns = 100 * k_second;
  record.end_ns = record.start_ns + seconds * k_second;
  record.inputs.push_back(input(record.source, InputRole::source));
  for (const auto& header : headers) {
    record.inputs.push_back(input(header));
  }
  record.inputs.push_back(input("/opt/cuda-13.0/include/cuda_runtime.h"));
  record.inputs.push_back(input("/usr/include/stdio.h"));
  record.inputs.push_back(input(k_nvcc, InputRole::tool));
  ObjectStatus status;
  status.object = record.object;
  status.source = record.source;
  status.record = record;
  if (!fresh) {
    status.verdict.reasons.push_back({Cause::input_changed, headers.front(), "3f2a", "9b1c"});
  }
  return status;
}

BuildEvent event(std::int64_t at_seconds, OutcomeKind kind, Cause cause, std::int64_t seconds,
                 const std::string& object)
{
  BuildEvent built;
  built.time_ns = at_seconds * k_second;
  built.outcome = {kind, cause, ""};
  built.duration_ns = seconds * k_second;
  built.object = object;
  return built;
}

const HeaderCost* cost_of(const Report& report, const std::string& path)
{
  for (const auto& cost : report.header_costs) {
    if (cost.path == path) {
      return &cost;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("report: header edit cost sums the last compile times of the TUs reading it", "[report]")
{
  std::vector<ObjectStatus> objects = {
    object("attention", 40, {"/src/kernel_forward.h", "/src/common.h"}),
    object("gemm", 25, {"/src/common.h"}),
    object("softmax", 5, {"/src/kernel_forward.h"}, false),
  };
  Report report = build_report("/b/.nvfresh", objects, {}, {});

  REQUIRE(report.header_costs.size() == 5);  // 3 sources and 2 headers; no toolkit, no system
  const HeaderCost* common = cost_of(report, "/src/common.h");
  REQUIRE(common != nullptr);
  CHECK(common->cost_ns == 65 * k_second);
  CHECK(common->objects == std::vector<std::string>{"/b/attention.o", "/b/gemm.o"});
  const HeaderCost* forward = cost_of(report, "/src/kernel_forward.h");
  REQUIRE(forward != nullptr);
  CHECK(forward->cost_ns == 45 * k_second);
  CHECK(report.header_costs.front().path == "/src/common.h");  // most expensive first
  CHECK(report.header_costs.back().cost_ns == 5 * k_second);
  CHECK(cost_of(report, "/opt/cuda-13.0/include/cuda_runtime.h") == nullptr);
  CHECK(cost_of(report, "/usr/include/stdio.h") == nullptr);
  CHECK(cost_of(report, k_nvcc) == nullptr);

  REQUIRE(report.units.size() == 3);
  CHECK(report.units[0].object == "/b/attention.o");  // slowest first
  CHECK(report.units[0].compile_ns == 40 * k_second);
  CHECK(report.objects == 3);
  CHECK(report.fresh == 2);
  CHECK(report.stale == 1);
  CHECK(report.stale_causes.at("input_changed") == 1);
  CHECK_FALSE(report.units[2].fresh);
  REQUIRE(report.units[2].stale_reasons.size() == 1);
}

TEST_CASE("report: the toolchain is the toolkit nvcc ran from and the system directories",
          "[report]")
{
  CHECK(is_toolchain_path("/opt/cuda-13.0/include/cuda.h", k_nvcc));
  CHECK(is_toolchain_path("/usr/local/cuda-13.0/include/cuda.h", "/usr/local/cuda/bin/nvcc"));
  CHECK(is_toolchain_path("/usr/include/c++/14/vector", k_nvcc));
  CHECK(is_toolchain_path("/usr/lib/gcc/x86_64-linux-gnu/14/include/stddef.h", k_nvcc));
  CHECK_FALSE(is_toolchain_path("/opt/cuda-13.0-project/kernel.h", k_nvcc));
  CHECK_FALSE(is_toolchain_path("/home/me/src/kernel_forward.h", k_nvcc));
  CHECK_FALSE(is_toolchain_path("/usr/libfoo/x.h", k_nvcc));
}

TEST_CASE("report: the last build is the newest run of events without a long gap", "[report]")
{
  std::vector<BuildEvent> events = {
    // a first build at t=1000..1040
    event(1030, OutcomeKind::compiled, Cause::no_record, 30, "/b/a.o"),
    event(1040, OutcomeKind::compiled, Cause::no_record, 35, "/b/b.o"),
    // an hour later: a's header changed (a 50 s compile, started at t=3640),
    // b served from the cache, c skipped
    event(3600 + 90, OutcomeKind::compiled, Cause::input_changed, 50, "/b/a.o"),
    event(3600 + 91, OutcomeKind::served, Cause::none, 35, "/b/b.o"),
    event(3600 + 92, OutcomeKind::skipped, Cause::none, 12, "/b/c.o"),
    event(3600 + 93, OutcomeKind::passthrough, Cause::not_a_compile, 0, ""),
  };
  Report report = build_report("/b/.nvfresh", {}, {}, events);

  CHECK(report.history.compiles == 6);
  CHECK(report.history.nvcc_spent_ns == 115 * k_second);
  CHECK(report.history.nvcc_saved_ns == 47 * k_second);
  CHECK(report.last_build.compiles == 4);
  CHECK(report.last_build.start_ns == (3600 + 40) * k_second);
  CHECK(report.last_build.outcomes.at("compiled").count == 1);
  CHECK(report.last_build.outcomes.at("served").count == 1);
  CHECK(report.last_build.nvcc_spent_ns == 50 * k_second);
  CHECK(report.last_build.nvcc_saved_ns == 47 * k_second);

  CHECK(report.cache.hits == 1);
  CHECK(report.cache.misses == 3);
  CHECK(report.cache.skipped == 1);
  CHECK(report.cache.miss_causes.at("no_record") == 2);
  CHECK(report.cache.miss_causes.at("input_changed") == 1);
  REQUIRE(report.cache.objects.size() == 3);
  CHECK(report.cache.objects[1].object == "/b/b.o");
  CHECK(report.cache.objects[1].hits == 1);
  CHECK(report.cache.objects[1].misses == 1);
}

TEST_CASE("report: artifacts list their objects with the objects' state", "[report]")
{
  std::vector<ObjectStatus> objects = {object("a", 3, {"/src/a.h"}),
                                       object("b", 4, {"/src/b.h"}, false)};
  ArtifactReport artifacts;
  ArtifactStatus library;
  library.edge.artifact = "/b/libk.so";
  library.edge.kind = ArtifactKind::shared_library;
  library.edge.objects = {"/b/a.o", "/b/b.o", "/b/plain.o"};
  library.reasons.push_back({ArtifactIssue::object_stale, "/b/b.o", "", ""});
  artifacts.artifacts.push_back(library);
  Report report = build_report("/b/.nvfresh", objects, artifacts, {});

  REQUIRE(report.artifacts.size() == 1);
  const ReportArtifact& artifact = report.artifacts[0];
  CHECK(artifact.kind == "shared_library");
  CHECK_FALSE(artifact.fresh);
  REQUIRE(artifact.objects.size() == 3);
  CHECK(artifact.objects[0].state == "fresh");
  CHECK(artifact.objects[1].state == "stale");
  CHECK(artifact.objects[2].state == "unrecorded");
}

TEST_CASE("report: --json and the HTML page carry the same numbers", "[report]")
{
  std::vector<ObjectStatus> objects = {object("a<b>", 3, {"/src/a&b.h"})};
  std::vector<BuildEvent> events = {
    event(10, OutcomeKind::served, Cause::none, 3, "/b/a<b>.o"),
    event(20, OutcomeKind::compiled, Cause::input_changed, 3, "/b/a<b>.o")};
  Report report = build_report("/b/.nvfresh", objects, {}, events);
  report.store = {"/c", 7, 2, 30, 4, 5 * k_second};
  nlohmann::json json = report_to_json(report);
  CHECK(json["objects"]["total"] == 1);
  CHECK(json["header_costs"][0]["cost_seconds"] == 3.0);
  CHECK(json["cache"]["hits"] == 1);
  CHECK(json["cache"]["misses"] == 1);
  CHECK(json["units"][0]["last_outcome"] == "compiled");
  CHECK(json["store"]["step_hits"] == 30);
  CHECK(json["store"]["step_seconds_saved"] == 5.0);

  std::string html = render_report_html(report, 0);
  CHECK(html.find(R"(data-key="header_cost:/src/a&amp;b.h">3.00<)") != std::string::npos);
  CHECK(html.find(R"(data-key="cache.hit_rate">50.0%<)") != std::string::npos);
  CHECK(html.find(R"(data-key="store.step_misses">4<)") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("a<b>") == std::string::npos);  // escaped everywhere
  CHECK(html.find("http") == std::string::npos);  // nothing fetched
  CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("report: a build compiles an object once: its earlier event is an earlier build",
          "[report]")
{
  std::vector<BuildEvent> events = {
    event(100, OutcomeKind::compiled, Cause::no_record, 2, "/b/a.o"),
    event(101, OutcomeKind::compiled, Cause::no_record, 2, "/b/b.o"),
    event(110, OutcomeKind::compiled, Cause::input_changed, 2, "/b/a.o"),
    event(111, OutcomeKind::skipped, Cause::none, 2, "/b/b.o"),
  };
  Report report = build_report("/b/.nvfresh", {}, {}, events);
  CHECK(report.last_build.compiles == 2);
  CHECK(report.last_build.outcomes.at("compiled").count == 1);
  CHECK(report.last_build.outcomes.at("skipped").count == 1);
  CHECK(report.history.compiles == 4);
}
