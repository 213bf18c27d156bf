// nvfresh space [PATH...] [--json] [--clean --older-than DAYS [--yes]]: the build trees nvfresh
// has worked in on this machine (its registry, space/registry.hpp; never a scan of the disk),
// largest first: size, last build, whether a build runs there now, whether it can be regenerated
// from its sources; one line per file system with its free space; and nvfresh's own footprint.
// PATH... limits the report to the registered trees at, under or around those paths.
//
// --clean --older-than DAYS removes the trees that space/space_report.hpp's rule allows (regenerable,
// idle, used by no process, older than DAYS, the user's own, holding no other registered tree nor
// its sources nor anything a build does not make); a dry run that only says what it would remove
// and free, unless --yes. With --yes it removes only what the dry run lists, after checking the
// whole rule again under the tree's exclusive build lock (space/tree_removal.hpp), one such clean
// at a time. It never touches a tree that is running, ambiguous or not registered. This file only
// parses and prints.
// Exit status: 0; 1 when a removal failed; 2 for bad usage.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "space/process_use.hpp"
#include "space/registry.hpp"
#include "space/space_report.hpp"
#include "space/tree_disk.hpp"
#include "space/tree_removal.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <set>

namespace nvfresh {

namespace {

constexpr std::int64_t k_progress_interval_ns = 100'000'000;

struct SpaceOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool clean = false;
  double older_than_days = -1;
  bool yes = false;
};

struct CleanPlan {
  std::vector<const TreeReport*> remove;
  std::vector<std::pair<const TreeReport*, std::string>> keep;
  RemovalOutcome done;  // with --yes
};

// "sizing 2/5 trees, 3.1 GiB so far: <tree>" on stderr while sizes are computed, where
// util/progress's rules allow a progress line (a terminal, not TERM=dumb, no --json).
class SizingProgress {
public:
  explicit SizingProgress(bool enabled) : m_enabled(enabled) {}
  ~SizingProgress()
  {
    if (m_drawn) {
      std::fputs("\r\033[K", stderr);  // not fmt::print, which may throw: this is a destructor
    }
  }
  void update(size_t index, size_t total, const std::string& tree, std::uint64_t bytes)
  {
    std::int64_t now = m_enabled ? now_ns() : 0;
    if (!m_enabled || now - m_last < k_progress_interval_ns) {
      return;
    }
    m_last = now;
    m_drawn = true;
    fmt::print(stderr, "\r\033[Knvfresh space: sizing {}/{} trees, {} so far: {}", index + 1, total,
               format_size(bytes), tree);
    std::fflush(stderr);
  }

private:
  bool m_enabled;
  bool m_drawn = false;
  std::int64_t m_last = 0;
};

bool selected(const RegistryEntry& entry, const std::vector<std::string>& paths)
{
  if (paths.empty()) {
    return true;
  }
  std::string tree = resolved_or_same(entry.tree);
  return std::any_of(paths.begin(), paths.end(), [&](const std::string& path) {
    return is_within(tree, path) || is_within(path, tree);
  });
}

// One entry per directory: a tree reached through two paths (a symlink: ninja's compiles see the
// real path, make's and sync the one cmake was given) has two entries. The newest names it, and
// its refresh time is the newest of them.
std::vector<RegistryEntry> distinct_trees(std::vector<RegistryEntry> entries)
{
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.refreshed_ns > b.refreshed_ns; });
  std::vector<RegistryEntry> distinct;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (auto& entry : entries) {
    FileStat st = stat_file(entry.tree);
    if (seen.insert({st.device, st.inode}).second || !st.exists) {
      distinct.push_back(std::move(entry));
    }
  }
  return distinct;
}

std::vector<TreeReport> examine_trees(const std::vector<RegistryEntry>& entries, bool json)
{
  std::vector<TreeReport> reports;
  SizingProgress progress(progress_wanted(progress_facts(json)));
  for (size_t i = 0; i < entries.size(); ++i) {
    TreeReport report = examine_tree(entries[i]);
    if (report.exists) {
      progress.update(i, entries.size(), report.entry.tree, 0);
      report.size = measure_tree(report.entry.tree, [&](const TreeSize& so_far) {
        progress.update(i, entries.size(), report.entry.tree, so_far.bytes);
      });
      report.records = measure_tree(report.entry.record_root);
    }
    reports.push_back(std::move(report));
  }
  std::stable_sort(reports.begin(), reports.end(),
                   [](const auto& a, const auto& b) { return a.size.bytes > b.size.bytes; });
  return reports;
}

std::string local_time(std::int64_t ns)
{
  std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &local);
  return buffer;
}

const char* activity_name(Activity activity)
{
  switch (activity) {
  case Activity::running: return "running";
  case Activity::recent: return "recent";
  case Activity::idle: return "idle";
  }
  return "idle";
}

std::string origin_text(const TreeReport& report)
{
  if (report.origin.regenerable) {
    return fmt::format("from {}", report.origin.source_dir);
  }
  return fmt::format("ambiguous: {}", report.origin.reason);
}

// The file systems of the trees and of the paths asked about, each once, in order of appearance.
std::vector<FileSystemSpace> file_systems(const std::vector<TreeReport>& reports,
                                          const std::vector<std::string>& paths)
{
  std::vector<FileSystemSpace> found;
  auto add = [&](const FileSystemSpace& space) {
    if (space.known && std::none_of(found.begin(), found.end(),
                                    [&](const auto& f) { return f.device == space.device; })) {
      found.push_back(space);
    }
  };
  for (const auto& report : reports) {
    add(report.file_system);
  }
  for (const auto& path : paths) {
    add(file_system_space(path));
  }
  return found;
}

std::string file_system_line(const FileSystemSpace& space)
{
  return fmt::format("{}: {} free of {} ({:.1f}% used)", space.mount_point,
                     format_size(space.free_bytes), format_size(space.total_bytes),
                     space.used_percent());
}

void print_trees(const std::vector<TreeReport>& reports, std::int64_t now)
{
  if (reports.empty()) {
    fmt::print("no build tree registered (nvfresh registers a tree when it compiles, links or "
               "syncs there)\n");
    return;
  }
  fmt::print("{:>9}  {:<16}  {:<7}  {}\n", "SIZE", "LAST BUILD", "STATE", "TREE");
  std::uint64_t total = 0;
  for (const auto& report : reports) {
    fmt::print("{:>9}  {:<16}  {:<7}  {}  ({})\n",
               report.exists ? format_size(report.size.bytes) : "-",
               local_time(report.last_build_ns),
               report.exists ? activity_name(activity_of(report, now)) : "gone", report.entry.tree,
               origin_text(report));
    total += report.size.bytes;
  }
  fmt::print("{:>9}  in {} build tree{}\n", format_size(total), reports.size(),
             reports.size() == 1 ? "" : "s");
}

void print_footprint(const std::vector<FootprintEntry>& entries)
{
  fmt::print("\nnvfresh's own footprint:\n");
  for (const auto& entry : entries) {
    fmt::print("  {:<9} {:>9}  {}\n", entry.store, format_size(entry.bytes), entry.path);
  }
}

void print_clean(const CleanPlan& plan, const SpaceOptions& options)
{
  fmt::print("\n--clean --older-than {:g}{}:\n", options.older_than_days,
             options.yes ? "" : " (dry run)");
  for (const auto* report : plan.remove) {
    bool done = std::find(plan.done.removed.begin(), plan.done.removed.end(), report->entry.tree) !=
                plan.done.removed.end();
    fmt::print("  {} {} ({}, built {} ago, {})\n",
               options.yes ? (done ? "removed" : "not removed") : "would remove",
               report->entry.tree, format_size(report->size.bytes),
               describe_age(now_ns() - report->last_build_ns), origin_text(*report));
  }
  for (const auto& [report, reason] : plan.keep) {
    fmt::print("  keeps {}: {}\n", report->entry.tree, reason);
  }
  for (const auto& error : plan.done.errors) {
    fmt::print("  error: {}\n", error);
  }
  if (options.yes) {
    fmt::print("freed {} ({} tree{})\n", format_size(plan.done.freed_bytes),
               plan.done.removed.size(), plan.done.removed.size() == 1 ? "" : "s");
  } else {
    std::uint64_t bytes = 0;
    for (const auto* report : plan.remove) {
      bytes += report->size.bytes;
    }
    fmt::print("would free {} ({} tree{}); run again with --yes to remove {}\n", format_size(bytes),
               plan.remove.size(), plan.remove.size() == 1 ? "" : "s",
               plan.remove.size() == 1 ? "it" : "them");
  }
}

CleanPlan plan_clean(const std::vector<TreeReport>& reports, TreeDisk& disk)
{
  CleanPlan plan;
  CleanRule rule = disk.rule_now();
  for (const auto& report : reports) {
    std::string reason = reason_to_keep(report, rule);
    if (reason.empty()) {
      plan.remove.push_back(&report);
    } else {
      plan.keep.emplace_back(&report, std::move(reason));
    }
  }
  return plan;
}

nlohmann::json tree_json(const TreeReport& report, std::int64_t now)
{
  return {{"path", report.entry.tree},
          {"source_dir", report.origin.source_dir},
          {"record_root", report.entry.record_root},
          {"exists", report.exists},
          {"size_bytes", report.size.bytes},
          {"records_bytes", report.records.bytes},
          {"last_build", local_time(report.last_build_ns)},
          {"last_build_ns", report.last_build_ns},
          {"state", report.exists ? activity_name(activity_of(report, now)) : "gone"},
          {"build_lock_held", report.lock == LockState::held},
          {"process_use", report.process_use.value_or("")},
          {"regenerable", report.origin.regenerable},
          {"ambiguous_reason", report.origin.reason},
          {"owner_uid", report.owner_uid},
          {"file_system", report.file_system.mount_point}};
}

nlohmann::json clean_json(const CleanPlan& plan, const SpaceOptions& options)
{
  nlohmann::json remove = nlohmann::json::array();
  nlohmann::json keep = nlohmann::json::array();
  for (const auto* report : plan.remove) {
    remove.push_back({{"path", report->entry.tree}, {"size_bytes", report->size.bytes}});
  }
  for (const auto& [report, reason] : plan.keep) {
    keep.push_back({{"path", report->entry.tree}, {"reason", reason}});
  }
  return {{"older_than_days", options.older_than_days},
          {"dry_run", !options.yes},
          {"remove", remove},
          {"keep", keep},
          {"removed", plan.done.removed},
          {"freed_bytes", plan.done.freed_bytes},
          {"errors", plan.done.errors}};
}

nlohmann::json report_json(const std::vector<TreeReport>& reports,
                           const std::vector<FileSystemSpace>& spaces,
                           const std::vector<FootprintEntry>& entries,
                           const std::vector<std::string>& gone)
{
  nlohmann::json trees = nlohmann::json::array();
  nlohmann::json systems = nlohmann::json::array();
  nlohmann::json stores = nlohmann::json::array();
  std::int64_t now = now_ns();
  for (const auto& report : reports) {
    trees.push_back(tree_json(report, now));
  }
  for (const auto& space : spaces) {
    systems.push_back({{"mount_point", space.mount_point},
                       {"free_bytes", space.free_bytes},
                       {"total_bytes", space.total_bytes},
                       {"used_percent", space.used_percent()}});
  }
  for (const auto& entry : entries) {
    stores.push_back({{"store", entry.store}, {"path", entry.path}, {"bytes", entry.bytes}});
  }
  return {{"trees", trees},
          {"file_systems", systems},
          {"footprint", stores},
          {"unregistered_gone", gone}};
}

// Entries of trees that no longer exist leave the registry; their paths are returned.
std::vector<std::string> forget_gone_trees(std::vector<RegistryEntry>& entries)
{
  std::vector<std::string> gone;
  auto missing = [](const RegistryEntry& entry) { return !stat_file(entry.tree).exists; };
  for (const auto& entry : entries) {
    if (missing(entry)) {
      unregister_tree(entry);
      gone.push_back(entry.tree);
    }
  }
  entries.erase(std::remove_if(entries.begin(), entries.end(), missing), entries.end());
  return gone;
}

// CLI11's NonNegativeNumber lets "nan" through, which every age comparison then passes.
std::string finite_days(const std::string& text)
{
  const char* begin = text.c_str();
  char* end = nullptr;
  const double days = std::strtod(begin, &end);
  const bool parsed = end != begin && *end == '\0';
  return parsed && std::isfinite(days) && days >= 0
           ? std::string()
           : fmt::format("{} is not a number of days: give a finite number, 0 or more", text);
}

// nullopt: parsed, go on; otherwise the exit status to return now (0 for --help, 2 for bad usage).
std::optional<int> parse_options(const std::vector<std::string>& args, SpaceOptions& options)
{
  SubcommandOptions cli("space");
  CommandLine app = cli.app();
  app.add_option("paths", options.paths,
                 "only the registered trees at, under or around these paths");
  cli.add_json(options.json);
  auto clean = app.add_flag("--clean", options.clean,
                            "remove idle, old, regenerable trees (a dry run without --yes)");
  auto older = app
                 .add_option("--older-than", options.older_than_days,
                             "with --clean: trees last built more than DAYS ago")
                 .check(finite_days, "DAYS");
  app.add_flag("--yes", options.yes, "with --clean: really remove them").needs(clean);
  clean.needs(older);
  older.needs(clean);
  return cli.parse(args);
}

}  // namespace

int run_space(const std::vector<std::string>& args)
{
  SpaceOptions options;
  if (std::optional<int> status = parse_options(args, options)) {
    return *status;
  }
  for (auto& path : options.paths) {
    path = resolved_or_same(path);
  }
  const std::string registry = registry_dir(current_environment());
  SystemTreeDisk disk(registry, options.older_than_days);
  // The clean lock before anything is looked at: while another clean removes trees, the build
  // locks it holds are not builds, and this one says that another clean runs.
  std::optional<TreeRemoval> removal;
  if (options.clean && options.yes) {
    removal.emplace(disk);
  }
  std::vector<RegistryEntry> entries = list_registry(registry);
  std::vector<std::string> gone = forget_gone_trees(entries);
  entries = distinct_trees(std::move(entries));
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const auto& e) { return !selected(e, options.paths); }),
                entries.end());
  std::vector<TreeReport> reports = examine_trees(entries, options.json);
  const ProcessSnapshot processes = snapshot_process_paths();
  for (auto& report : reports) {
    look_inside(report, processes, options.clean);
  }
  CleanPlan plan = options.clean ? plan_clean(reports, disk) : CleanPlan{};
  if (removal) {
    for (const auto* report : plan.remove) {
      removal->remove(*report);
    }
    plan.done = removal->outcome();
    std::vector<RegistryEntry> left = list_registry(registry);
    forget_gone_trees(left);  // the other names of the removed trees
  }
  auto spaces =
    file_systems(reports, options.paths);  // after the removals: the space they freed shows
  std::vector<TreeReport> remaining;
  std::copy_if(reports.begin(), reports.end(), std::back_inserter(remaining),
               [&](const TreeReport& report) {
                 return std::find(plan.done.removed.begin(), plan.done.removed.end(),
                                  report.entry.tree) == plan.done.removed.end();
               });
  auto stores = footprint(remaining, registry);
  if (options.json) {
    nlohmann::json out = report_json(reports, spaces, stores, gone);
    if (options.clean) {
      out["clean"] = clean_json(plan, options);
    }
    print_json(out);
    return plan.done.errors.empty() ? 0 : 1;
  }
  print_trees(reports, now_ns());
  for (const auto& path : gone) {
    fmt::print("gone, removed from the registry: {}\n", path);
  }
  fmt::print("\nfile systems:\n");
  for (const auto& space : spaces) {
    fmt::print("  {}\n", file_system_line(space));
  }
  print_footprint(stores);
  if (options.clean) {
    print_clean(plan, options);
  }
  return plan.done.errors.empty() ? 0 : 1;
}

}  // namespace nvfresh
