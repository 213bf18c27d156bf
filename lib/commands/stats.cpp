// nvfresh stats [-C build-dir] [--json]: what nvfresh did in a build tree, from its events log,
// counted by named outcome (compiled, skipped, served, raced, failed, not-recorded, passthrough,
// fell-back) and, within each, by cause, with the nvcc time each kind took (or, for skips and
// cache hits, saved) and the most frequent details of each cause; then the steps of nvcc the step
// cache stood in front of (steps.log), counted the same way and per arch and tool, with the nvcc
// time the served ones saved.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "record/step_events.hpp"
#include "util/json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace nvfresh {

namespace {

constexpr size_t k_details_shown = 3;

struct CauseSummary {
  size_t count = 0;
  std::map<std::string, size_t> details;
};

struct KindSummary {
  size_t count = 0;
  std::int64_t duration_ns = 0;
  std::map<Cause, CauseSummary> causes;
};

// Compiles (BuildEvent) or steps (StepEvent): one outcome model, counted alike.
template <typename Event>
std::map<OutcomeKind, KindSummary> summarize(const std::vector<Event>& events)
{
  std::map<OutcomeKind, KindSummary> summary;
  for (const auto& event : events) {
    KindSummary& kind = summary[event.outcome.kind];
    ++kind.count;
    kind.duration_ns += event.duration_ns;
    CauseSummary& cause = kind.causes[event.outcome.cause];
    ++cause.count;
    ++cause.details[event.outcome.detail];
  }
  return summary;
}

// The most frequent details first (ties: alphabetically), at most `limit`.
std::vector<std::pair<std::string, size_t>> top_details(const CauseSummary& cause, size_t limit)
{
  std::vector<std::pair<std::string, size_t>> details(cause.details.begin(), cause.details.end());
  std::stable_sort(details.begin(), details.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  details.resize(std::min(details.size(), limit));
  return details;
}

std::string_view time_label(OutcomeKind kind)
{
  return kind == OutcomeKind::skipped || kind == OutcomeKind::served ? "nvcc time saved"
                                                                     : "nvcc time";
}

struct StepCount {
  size_t count = 0;
  std::int64_t duration_ns = 0;
};

// (arch, tool) -> outcome -> count and time: which steps of which arch ran and which were served.
using StepsPerArch =
  std::map<std::pair<std::string, std::string>, std::map<OutcomeKind, StepCount>>;

StepsPerArch steps_per_arch(const std::vector<StepEvent>& steps)
{
  StepsPerArch per_arch;
  for (const auto& step : steps) {
    StepCount& count = per_arch[{arch_of_pass(step.pass), step.tool}][step.outcome.kind];
    ++count.count;
    count.duration_ns += step.duration_ns;
  }
  return per_arch;
}

double seconds(std::int64_t ns)
{
  return static_cast<double>(ns) / 1e9;
}

void print_kinds(const std::map<OutcomeKind, KindSummary>& summary)
{
  for (const auto& [kind, entry] : summary) {
    fmt::print("  {:<13} {:>6}   {} {:.1f} s\n", outcome_name(kind), entry.count, time_label(kind),
               static_cast<double>(entry.duration_ns) / 1e9);
    for (const auto& [cause, cause_entry] : entry.causes) {
      fmt::print("      {:>6}  {:<28} {}\n", cause_entry.count, cause_name(cause), describe(cause));
      for (const auto& [detail, count] : top_details(cause_entry, k_details_shown)) {
        fmt::print("        {:>6}  {}\n", count, detail);
      }
    }
  }
}

void print_text(const std::map<OutcomeKind, KindSummary>& summary, size_t total,
                const std::string& root)
{
  fmt::print("nvfresh stats for {}: {} compiles\n", root, total);
  print_kinds(summary);
}

void print_steps(const std::vector<StepEvent>& steps)
{
  if (steps.empty()) {
    return;
  }
  fmt::print("steps of nvcc (the step cache): {}\n", steps.size());
  print_kinds(summarize(steps));
  fmt::print("  per arch:\n");
  for (const auto& [arch_tool, kinds] : steps_per_arch(steps)) {
    std::string counts;
    for (const auto& [kind, count] : kinds) {
      counts += fmt::format("  {} {} ({} {:.1f} s)", outcome_name(kind), count.count,
                            time_label(kind), seconds(count.duration_ns));
    }
    fmt::print("    {:<6} {:<6}{}\n", arch_tool.first, arch_tool.second, counts);
  }
}

nlohmann::json kinds_json(const std::map<OutcomeKind, KindSummary>& summary)
{
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, entry] : summary) {
    nlohmann::json causes = nlohmann::json::object();
    for (const auto& [cause, cause_entry] : entry.causes) {
      nlohmann::json details = nlohmann::json::array();
      for (const auto& [detail, count] : top_details(cause_entry, 10)) {
        details.push_back({{"detail", detail}, {"count", count}});
      }
      causes[std::string(cause_name(cause))] = {
        {"count", cause_entry.count}, {"description", describe(cause)}, {"top_details", details}};
    }
    kinds[std::string(outcome_name(kind))] = {
      {"count", entry.count},
      {"seconds", static_cast<double>(entry.duration_ns) / 1e9},
      {"causes", causes}};
  }
  return kinds;
}

// {"total", "kinds" (as for compiles), "per_arch": {arch: {tool: {kind: {count, seconds}}}}}
nlohmann::json steps_json(const std::vector<StepEvent>& steps)
{
  nlohmann::json per_arch = nlohmann::json::object();
  for (const auto& [arch_tool, kinds] : steps_per_arch(steps)) {
    for (const auto& [kind, count] : kinds) {
      per_arch[arch_tool.first][arch_tool.second][std::string(outcome_name(kind))] = {
        {"count", count.count}, {"seconds", seconds(count.duration_ns)}};
    }
  }
  return {{"total", steps.size()}, {"kinds", kinds_json(summarize(steps))}, {"per_arch", per_arch}};
}

}  // namespace

int run_stats(const std::vector<std::string>& args)
{
  SubcommandOptions cli("stats");
  std::string build_dir = ".";
  bool json = false;
  cli.add_build_dir(build_dir);
  cli.add_json(json);
  if (auto status = cli.parse(args)) {
    return *status;
  }
  std::string root =
    record_root_of_build_dir(load_config(current_environment()).record_dir, build_dir);
  auto events = read_events(root);
  auto steps = read_step_events(root);
  auto summary = summarize(events);
  if (json) {
    print_json({{"record_root", root},
                {"total", events.size()},
                {"kinds", kinds_json(summary)},
                {"steps", steps_json(steps)}});
  } else if (events.empty() && steps.empty()) {
    fmt::print("nvfresh stats: nothing recorded under {} yet\n", root);
  } else {
    print_text(summary, events.size(), root);
    print_steps(steps);
  }
  return 0;
}

}  // namespace nvfresh
