// nvfresh stats [-C build-dir] [--json]: what nvfresh did in a build tree, from its events log:
// compiles, skips (and the nvcc time they saved), races, failures, and for each event kind the
// reasons with their counts.
#include "commands/commands.hpp"
#include "config/config.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>

namespace nvfresh {

namespace {

struct EventSummary {
  size_t count = 0;
  std::int64_t duration_ns = 0;
  std::map<std::string, size_t> reasons;
};

std::map<std::string, EventSummary> summarize(const std::vector<BuildEvent>& events)
{
  std::map<std::string, EventSummary> summary;
  for (const auto& event : events) {
    EventSummary& entry = summary[event.event];
    ++entry.count;
    entry.duration_ns += event.duration_ns;
    ++entry.reasons[event.reason];
  }
  return summary;
}

void print_text(const std::map<std::string, EventSummary>& summary, const std::string& root)
{
  fmt::print("nvfresh stats for {}\n", root);
  for (const auto& [event, entry] : summary) {
    const char* time_label = event == "skipped" ? "nvcc time saved" : "nvcc time";
    fmt::print("  {:<13} {:>6}   {} {:.1f} s\n", event, entry.count, time_label,
               static_cast<double>(entry.duration_ns) / 1e9);
    for (const auto& [reason, count] : entry.reasons) {
      fmt::print("      {:>6}  {}\n", count, reason);
    }
  }
}

nlohmann::json to_json(const std::map<std::string, EventSummary>& summary, size_t total)
{
  nlohmann::json events = nlohmann::json::object();
  for (const auto& [event, entry] : summary) {
    nlohmann::json reasons = nlohmann::json::object();
    for (const auto& [reason, count] : entry.reasons) {
      reasons[reason] = count;
    }
    events[event] = {{"count", entry.count},
                     {"seconds", static_cast<double>(entry.duration_ns) / 1e9},
                     {"reasons", reasons}};
  }
  return {{"events", events}, {"total", total}};
}

}  // namespace

int run_stats(const std::vector<std::string>& args)
{
  CLI::App app{"What nvfresh did in a build tree: compiles, skips and their reasons",
               "nvfresh stats"};
  std::string build_dir = ".";
  bool json = false;
  app.add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
  app.add_flag("--json", json, "machine-readable output");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  std::string root =
    record_root_of_build_dir(load_config(current_environment()).record_dir, build_dir);
  auto events = read_events(root);
  auto summary = summarize(events);
  if (json) {
    fmt::print("{}\n", to_json(summary, events.size()).dump(2));
  } else if (events.empty()) {
    fmt::print("nvfresh stats: nothing recorded under {} yet\n", root);
  } else {
    print_text(summary, root);
  }
  return 0;
}

}  // namespace nvfresh
