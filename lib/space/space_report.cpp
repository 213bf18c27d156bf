#include "space/space_report.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include <sys/stat.h>

namespace nvfresh {

namespace {

unsigned owner_of(const std::string& path)
{
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_uid : 0;
}

std::string keep_for_activity(const TreeReport& report, const CleanRule& rule)
{
  if (!report.process_use) {
    return "the processes using it were not looked at";
  }
  switch (activity_of(report, rule.now_ns)) {
  case Activity::running:
    return report.lock == LockState::held ? "a build is running there (its build lock is held)"
                                          : "it is in use: " + *report.process_use;
  case Activity::recent:
    return fmt::format("built {} ago: a build may still be going on",
                       describe_age(rule.now_ns - report.last_build_ns));
  case Activity::idle: break;
  }
  return {};
}

// Another registered tree inside this one, or the source dir of another registered tree.
std::string keep_for_other_trees(const std::string& tree, const CleanRule& rule)
{
  for (const auto& other : rule.registered) {
    if (other.tree == tree) {
      continue;
    }
    if (is_within(other.tree, tree)) {
      return fmt::format("it holds registered build tree {}", other.tree);
    }
    if (!other.source_dir.empty() && is_within(other.source_dir, tree)) {
      return fmt::format("it holds {}, the source dir of registered build tree {}",
                         other.source_dir, other.tree);
    }
  }
  return {};
}

std::string keep_for_what_it_holds(const TreeReport& report, const CleanRule& rule)
{
  const std::string& tree = report.real_path;
  if (tree.empty()) {
    return fmt::format("its path cannot be resolved ({})", report.real_path_error);
  }
  for (const auto& dir : rule.must_survive) {
    if (is_within(dir, tree)) {
      return fmt::format("it holds {}", dir);
    }
  }
  if (std::string other = keep_for_other_trees(tree, rule); !other.empty()) {
    return other;
  }
  if (!report.size.mount_inside.empty()) {
    return fmt::format("another file system is mounted inside it ({})", report.size.mount_inside);
  }
  if (!report.size.unreadable.empty()) {
    return fmt::format("part of it cannot be read ({})", report.size.unreadable);
  }
  if (!report.foreign_content) {
    return "its contents were not looked at";
  }
  if (!report.foreign_content->empty()) {
    return "it holds " + *report.foreign_content;
  }
  return {};
}

}  // namespace

std::int64_t last_build_ns(const RegistryEntry& entry)
{
  std::int64_t newest = entry.refreshed_ns;
  for (const char* name : {"/events.log", "/records", "/links"}) {
    FileStat st = stat_file(entry.record_root + name);
    if (st.exists) {
      newest = std::max(newest, st.mtime_ns);
    }
  }
  return newest;
}

TreeReport examine_tree(const RegistryEntry& entry)
{
  TreeReport report;
  report.entry = entry;
  report.exists = stat_file(entry.tree).is_directory;
  report.owner_uid = owner_of(entry.tree);
  std::error_code error;
  report.real_path = std::filesystem::canonical(entry.tree, error).string();
  if (error) {
    report.real_path.clear();
    report.real_path_error = error.message();
  }
  report.origin =
    report.exists ? classify_tree(entry.tree) : TreeOrigin{false, entry.source_dir, "it is gone"};
  if (report.origin.source_dir.empty()) {
    report.origin.source_dir = entry.source_dir;
  }
  report.lock = probe_build_lock(entry.record_root);
  report.last_build_ns = last_build_ns(entry);
  report.file_system = file_system_space(entry.tree);
  return report;
}

Activity activity_of(const TreeReport& report, std::int64_t now_ns)
{
  if (report.lock == LockState::held || (report.process_use && !report.process_use->empty())) {
    return Activity::running;
  }
  return now_ns - report.last_build_ns < k_recent_activity_ns ? Activity::recent : Activity::idle;
}

std::string reason_to_keep(const TreeReport& report, const CleanRule& rule)
{
  if (!report.exists) {
    return "it is gone";
  }
  if (std::string busy = keep_for_activity(report, rule); !busy.empty()) {
    return busy;
  }
  if (!report.origin.regenerable) {
    return "ambiguous: " + report.origin.reason;
  }
  if (report.owner_uid != rule.uid) {
    return fmt::format("it belongs to uid {}, not to you (uid {})", report.owner_uid, rule.uid);
  }
  const double age_days =
    static_cast<double>(rule.now_ns - report.last_build_ns) / static_cast<double>(k_day_ns);
  if (!(age_days >= rule.older_than_days)) {  // NaN keeps too
    return fmt::format("built {} ago, not more than {:g} days",
                       describe_age(rule.now_ns - report.last_build_ns), rule.older_than_days);
  }
  return keep_for_what_it_holds(report, rule);
}

std::vector<FootprintEntry> footprint(const std::vector<TreeReport>& trees,
                                      const std::string& registry)
{
  std::vector<FootprintEntry> entries;
  for (const auto& tree : trees) {
    if (tree.records.exists) {
      entries.push_back({"records", tree.entry.record_root, tree.records.bytes});
    }
  }
  if (TreeSize size = registry.empty() ? TreeSize{} : measure_tree(registry); size.exists) {
    entries.push_back({"registry", registry, size.bytes});
  }
  return entries;
}

std::string describe_age(std::int64_t age_ns)
{
  const std::int64_t minutes = std::max<std::int64_t>(age_ns, 0) / (60LL * 1'000'000'000);
  if (minutes < 1) {
    return "less than a minute";
  }
  if (minutes < 120) {
    return fmt::format("{} minute{}", minutes, minutes == 1 ? "" : "s");
  }
  if (minutes < std::int64_t{48} * 60) {
    return fmt::format("{} hours", minutes / 60);
  }
  return fmt::format("{} days", minutes / (std::int64_t{24} * 60));
}

}  // namespace nvfresh
