#include "report/build_report.hpp"

#include "outcome/outcome.hpp"
#include "record/artifact_kind.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace nvfresh {

namespace {

bool starts_with_dir(std::string_view path, std::string_view dir)
{
  return !dir.empty() && path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
         (dir.back() == '/' || path[dir.size()] == '/');
}

// The toolkit root of an nvcc path: "/usr/local/cuda-13.0" for ".../cuda-13.0/bin/nvcc".
std::string_view toolkit_root(std::string_view compiler)
{
  auto slash = compiler.rfind('/');
  if (slash == std::string_view::npos) {
    return {};
  }
  std::string_view bin = compiler.substr(0, slash);
  if (bin.size() < 4 || bin.substr(bin.size() - 4) != "/bin") {
    return {};
  }
  return bin.substr(0, bin.size() - 4);
}

bool spends_nvcc_time(OutcomeKind kind)
{
  return kind == OutcomeKind::compiled || kind == OutcomeKind::raced || kind == OutcomeKind::failed;
}

bool saves_nvcc_time(OutcomeKind kind)
{
  return kind == OutcomeKind::skipped || kind == OutcomeKind::served;
}

std::int64_t event_start(const BuildEvent& event)
{
  return spends_nvcc_time(event.outcome.kind) ? event.time_ns - event.duration_ns : event.time_ns;
}

BuildSummary summarize(const std::vector<const BuildEvent*>& events)
{
  BuildSummary summary;
  for (const BuildEvent* event : events) {
    if (summary.compiles == 0 || event_start(*event) < summary.start_ns) {
      summary.start_ns = event_start(*event);
    }
    summary.end_ns = std::max(summary.end_ns, event->time_ns);
    ++summary.compiles;
    OutcomeTally& tally = summary.outcomes[std::string(outcome_name(event->outcome.kind))];
    ++tally.count;
    tally.duration_ns += event->duration_ns;
    if (spends_nvcc_time(event->outcome.kind)) {
      summary.nvcc_spent_ns += event->duration_ns;
    } else if (saves_nvcc_time(event->outcome.kind)) {
      summary.nvcc_saved_ns += event->duration_ns;
    }
  }
  return summary;
}

// The newest run of events without a gap over k_build_gap_ns and without an object twice (a build
// compiles each object once), events sorted by time.
std::vector<const BuildEvent*> last_build_events(const std::vector<const BuildEvent*>& sorted)
{
  if (sorted.empty()) {
    return {};
  }
  size_t first = sorted.size() - 1;
  std::int64_t group_start = event_start(*sorted[first]);
  std::unordered_set<std::string_view> objects = {sorted[first]->object};
  while (first > 0) {
    const BuildEvent& before = *sorted[first - 1];
    if (before.time_ns < group_start - k_build_gap_ns ||
        (!before.object.empty() && !objects.insert(before.object).second)) {
      break;
    }
    --first;
    group_start = std::min(group_start, event_start(before));
  }
  return {sorted.begin() + static_cast<std::ptrdiff_t>(first), sorted.end()};
}

CacheSplit split_cache(const std::vector<const BuildEvent*>& events)
{
  CacheSplit split;
  std::map<std::string, ObjectCacheSplit> by_object;
  for (const BuildEvent* event : events) {
    if (event->object.empty()) {
      continue;
    }
    ObjectCacheSplit& entry = by_object[event->object];
    entry.object = event->object;
    std::string cause(cause_name(event->outcome.cause));
    switch (event->outcome.kind) {
    case OutcomeKind::served:
      ++entry.hits;
      ++split.hits;
      break;
    case OutcomeKind::compiled:
    case OutcomeKind::raced:
      ++entry.misses;
      ++split.misses;
      ++entry.miss_causes[cause];
      ++split.miss_causes[cause];
      break;
    case OutcomeKind::skipped:
      ++entry.skipped;
      ++split.skipped;
      break;
    default: break;
    }
  }
  for (auto& [object, entry] : by_object) {
    split.objects.push_back(std::move(entry));
  }
  return split;
}

std::vector<HeaderCost> header_costs(const std::vector<TranslationUnit>& units,
                                     const std::vector<ObjectStatus>& objects)
{
  std::unordered_map<std::string, std::int64_t> compile_ns;
  for (const auto& unit : units) {
    compile_ns[unit.object] = unit.compile_ns;
  }
  std::map<std::string, HeaderCost> by_path;
  for (const auto& status : objects) {
    if (!status.record) {
      continue;
    }
    const Record& record = *status.record;
    for (const auto& input : record.inputs) {
      if (input.role == InputRole::tool || is_toolchain_path(input.file.path, record.compiler)) {
        continue;
      }
      HeaderCost& cost = by_path[input.file.path];
      cost.path = input.file.path;
      if (std::find(cost.objects.begin(), cost.objects.end(), status.object) ==
          cost.objects.end()) {
        cost.objects.push_back(status.object);
        cost.cost_ns += compile_ns[status.object];
      }
    }
  }
  std::vector<HeaderCost> costs;
  costs.reserve(by_path.size());
  for (auto& [path, cost] : by_path) {
    std::sort(cost.objects.begin(), cost.objects.end());
    costs.push_back(std::move(cost));
  }
  std::stable_sort(costs.begin(), costs.end(), [](const HeaderCost& a, const HeaderCost& b) {
    return a.cost_ns != b.cost_ns ? a.cost_ns > b.cost_ns : a.objects.size() > b.objects.size();
  });
  return costs;
}

double seconds(std::int64_t ns)
{
  return static_cast<double>(ns) / 1e9;
}

nlohmann::json summary_json(const BuildSummary& summary)
{
  nlohmann::json outcomes = nlohmann::json::object();
  for (const auto& [kind, tally] : summary.outcomes) {
    outcomes[kind] = {{"count", tally.count}, {"seconds", seconds(tally.duration_ns)}};
  }
  return {{"start_ns", summary.start_ns},
          {"end_ns", summary.end_ns},
          {"compiles", summary.compiles},
          {"outcomes", outcomes},
          {"nvcc_seconds_spent", seconds(summary.nvcc_spent_ns)},
          {"nvcc_seconds_saved", seconds(summary.nvcc_saved_ns)}};
}

}  // namespace

bool is_toolchain_path(const std::string& path, const std::string& compiler)
{
  static constexpr std::array<std::string_view, 10> k_system_dirs = {
    "/usr/include", "/usr/lib", "/usr/share", "/usr/bin",    "/usr/libexec",
    "/lib",         "/bin",     "/etc",       "/opt/nvidia", "/usr/local/bin"};
  // "/usr/local/cuda-13.0" also when nvcc ran as "/usr/local/cuda/bin/nvcc" (a symlink)
  if (starts_with_dir(path, toolkit_root(compiler)) || path.starts_with("/usr/local/cuda")) {
    return true;
  }
  return std::any_of(k_system_dirs.begin(), k_system_dirs.end(),
                     [&](std::string_view dir) { return starts_with_dir(path, dir); });
}

Report build_report(const std::string& record_root, const std::vector<ObjectStatus>& objects,
                    const ArtifactReport& artifacts, const std::vector<BuildEvent>& events,
                    const ReportProgress& progress)
{
  Report report;
  report.record_root = record_root;

  std::vector<const BuildEvent*> sorted;
  sorted.reserve(events.size());
  for (const auto& event : events) {
    sorted.push_back(&event);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const BuildEvent* a, const BuildEvent* b) {
    return a->time_ns < b->time_ns;
  });
  report.history = summarize(sorted);
  report.last_build = summarize(last_build_events(sorted));
  report.cache = split_cache(sorted);
  std::unordered_map<std::string, std::string> last_outcome;
  for (const BuildEvent* event : sorted) {
    if (!event->object.empty()) {
      last_outcome[event->object] = std::string(outcome_name(event->outcome.kind));
    }
  }

  std::unordered_map<std::string, bool> object_fresh;
  size_t done = 0;
  for (const auto& status : objects) {
    TranslationUnit unit;
    unit.object = status.object;
    unit.source = status.source;
    unit.fresh = status.verdict.fresh();
    for (const auto& reason : status.verdict.reasons) {
      unit.stale_reasons.push_back(reason.describe());
    }
    if (status.record && status.record->end_ns > status.record->start_ns) {
      unit.compile_ns = status.record->end_ns - status.record->start_ns;
    }
    if (status.record) {
      unit.passes = split_pass_times(status.record->pass_times);
    }
    if (auto found = last_outcome.find(status.object); found != last_outcome.end()) {
      unit.last_outcome = found->second;
    }
    ++report.objects;
    if (unit.fresh) {
      ++report.fresh;
    } else {
      ++report.stale;
      ++report.stale_causes[std::string(cause_name(status.verdict.reasons.front().kind))];
    }
    object_fresh[unit.object] = unit.fresh;
    report.units.push_back(std::move(unit));
    if (progress) {
      progress(++done, objects.size());
    }
  }
  report.header_costs = header_costs(report.units, objects);
  std::stable_sort(report.units.begin(), report.units.end(),
                   [](const TranslationUnit& a, const TranslationUnit& b) {
                     return a.compile_ns != b.compile_ns ? a.compile_ns > b.compile_ns
                                                         : a.object < b.object;
                   });

  for (const auto& status : artifacts.artifacts) {
    ReportArtifact artifact;
    artifact.path = status.edge.artifact;
    artifact.kind = std::string(artifact_kind_name(status.edge.kind));
    artifact.fresh = status.fresh();
    for (const auto& reason : status.reasons) {
      artifact.reasons.push_back(reason.describe());
    }
    for (const auto& object : status.edge.objects) {
      auto found = object_fresh.find(object);
      artifact.objects.push_back(
        {object, found == object_fresh.end() ? "unrecorded" : (found->second ? "fresh" : "stale")});
    }
    report.artifacts.push_back(std::move(artifact));
  }
  return report;
}

nlohmann::json pass_split_rows_json(const PassSplit& split)
{
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : split.rows) {
    rows.push_back({{"part", row.part},
                    {"kind", row.kind},
                    {"seconds", seconds(row.ns)},
                    {"runs", row.runs},
                    {"served", row.served}});
  }
  return rows;
}

nlohmann::json report_to_json(const Report& report)
{
  nlohmann::json units = nlohmann::json::array();
  for (const auto& unit : report.units) {
    units.push_back({{"object", unit.object},
                     {"source", unit.source},
                     {"state", unit.fresh ? "fresh" : "stale"},
                     {"stale_reasons", unit.stale_reasons},
                     {"compile_seconds", seconds(unit.compile_ns)},
                     {"last_outcome", unit.last_outcome},
                     {"passes", pass_split_rows_json(unit.passes)}});
  }
  nlohmann::json costs = nlohmann::json::array();
  for (const auto& cost : report.header_costs) {
    costs.push_back(
      {{"path", cost.path}, {"objects", cost.objects}, {"cost_seconds", seconds(cost.cost_ns)}});
  }
  nlohmann::json artifacts = nlohmann::json::array();
  for (const auto& artifact : report.artifacts) {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& object : artifact.objects) {
      objects.push_back({{"object", object.object}, {"state", object.state}});
    }
    artifacts.push_back({{"path", artifact.path},
                         {"kind", artifact.kind},
                         {"state", artifact.fresh ? "fresh" : "stale"},
                         {"reasons", artifact.reasons},
                         {"objects", objects}});
  }
  nlohmann::json cache_objects = nlohmann::json::array();
  for (const auto& entry : report.cache.objects) {
    cache_objects.push_back({{"object", entry.object},
                             {"hits", entry.hits},
                             {"misses", entry.misses},
                             {"skipped", entry.skipped},
                             {"miss_causes", entry.miss_causes}});
  }
  return {{"record_root", report.record_root},
          {"objects",
           {{"total", report.objects},
            {"fresh", report.fresh},
            {"stale", report.stale},
            {"stale_causes", report.stale_causes}}},
          {"last_build", summary_json(report.last_build)},
          {"history", summary_json(report.history)},
          {"units", units},
          {"header_costs", costs},
          {"artifacts", artifacts},
          {"store",
           {{"dir", report.store.dir},
            {"hits", report.store.hits},
            {"misses", report.store.misses},
            {"step_hits", report.store.step_hits},
            {"step_misses", report.store.step_misses},
            {"step_seconds_saved", seconds(report.store.step_saved_ns)}}},
          {"cache",
           {{"hits", report.cache.hits},
            {"misses", report.cache.misses},
            {"skipped", report.cache.skipped},
            {"miss_causes", report.cache.miss_causes},
            {"objects", cache_objects}}}};
}

}  // namespace nvfresh
