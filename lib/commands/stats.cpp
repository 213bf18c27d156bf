// nvfresh stats [-C build-dir] [--json]: what nvfresh did in a build tree, from its events log,
// counted by named outcome (compiled, skipped, served, raced, failed, not-recorded, passthrough,
// fell-back) and, within each, by cause, with the nvcc time each kind took (or, for skips and
// cache hits, saved) and the most frequent details of each cause.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "util/json.hpp"

#include <CLI/CLI.hpp>
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

std::map<OutcomeKind, KindSummary> summarize(const std::vector<BuildEvent>& events)
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

void print_text(const std::map<OutcomeKind, KindSummary>& summary, size_t total,
                const std::string& root)
{
  fmt::print("nvfresh stats for {}: {} compiles\n", root, total);
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

nlohmann::json to_json(const std::map<OutcomeKind, KindSummary>& summary, size_t total,
                       const std::string& root)
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
  return {{"record_root", root}, {"total", total}, {"kinds", kinds}};
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
  auto summary = summarize(events);
  if (json) {
    print_json(to_json(summary, events.size(), root));
  } else if (events.empty()) {
    fmt::print("nvfresh stats: nothing recorded under {} yet\n", root);
  } else {
    print_text(summary, events.size(), root);
  }
  return 0;
}

}  // namespace nvfresh
