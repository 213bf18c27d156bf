#include "space/tree_disk.hpp"

#include "space/build_lock.hpp"
#include "space/cmake_cache.hpp"
#include "space/tree_contents.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

template <typename Lock>
class FlockHeld : public HeldLock {
public:
  explicit FlockHeld(const std::string& path) : m_lock(path) {}
  bool taken() const { return m_lock.taken(); }

private:
  Lock m_lock;
};

template <typename Lock>
std::unique_ptr<HeldLock> take(const std::string& path)
{
  auto lock = std::make_unique<FlockHeld<Lock>>(path);
  return lock->taken() ? std::move(lock) : nullptr;
}

// Every registered tree with its source dirs, canonical: what no removal may take along.
std::vector<RegisteredTree> registered_trees(const std::string& registry)
{
  std::vector<RegisteredTree> trees;
  for (const auto& entry : list_registry(registry)) {
    const std::string tree = resolved_or_same(entry.tree);
    trees.push_back({tree, entry.source_dir.empty() ? "" : resolved_or_same(entry.source_dir)});
    if (auto cache = read_cmake_cache(tree); cache && !cache->home_directory.empty()) {
      trees.push_back({tree, resolved_or_same(cache->home_directory)});
    }
  }
  return trees;
}

}  // namespace

SystemTreeDisk::SystemTreeDisk(std::string registry, double older_than_days)
  : m_registry(std::move(registry)), m_older_than_days(older_than_days)
{}

std::unique_ptr<HeldLock> SystemTreeDisk::lock_clean()
{
  const std::string file = clean_lock_file(m_registry);
  try {
    make_directories(fs::path(file).parent_path().string());
  } catch (const std::exception&) {
    // the lock below then cannot be made either, and says so
  }
  return take<ExclusiveFileLock>(file);
}

std::unique_ptr<HeldLock> SystemTreeDisk::lock_build(const std::string& record_root)
{
  return take<ExclusiveBuildLock>(record_root);
}

TreeReport SystemTreeDisk::look_again(const RegistryEntry& entry)
{
  TreeReport report = examine_tree(entry);
  look_inside(report, snapshot_process_paths(), true);
  return report;
}

CleanRule SystemTreeDisk::rule_now()
{
  return clean_rule_now(m_older_than_days, m_registry);
}

std::string SystemTreeDisk::resolve(const std::string& path, std::string& error)
{
  std::error_code code;
  std::string resolved = fs::canonical(path, code).string();
  error = code ? code.message() : "";
  return code ? "" : resolved;
}

std::string SystemTreeDisk::remove_all(const std::string& dir)
{
  std::error_code error;
  fs::remove_all(dir, error);  // removes symlinks, never follows them
  return error ? error.message() : "";
}

void SystemTreeDisk::unregister(const RegistryEntry& entry)
{
  unregister_tree(entry);
}

std::string clean_lock_file(const std::string& registry)
{
  return (fs::path(registry).parent_path() / "clean.lock").string();
}

std::string resolved_or_same(const std::string& path)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(absolute_path(path, current_directory()), error);
  return error ? path : lexically_normal(canonical.string());
}

void look_inside(TreeReport& report, const ProcessSnapshot& processes, bool contents)
{
  if (report.real_path.empty() || !report.exists) {
    return;
  }
  report.process_use = process_using(processes, report.real_path);
  if (contents) {
    report.foreign_content =
      find_foreign_content(report.real_path, report.entry.record_root, report.last_build_ns);
  }
}

CleanRule clean_rule_now(double older_than_days, const std::string& registry)
{
  CleanRule rule{
    older_than_days, now_ns(), static_cast<unsigned>(::geteuid()), {}, registered_trees(registry)};
  for (const char* dir : {std::getenv("HOME"), std::getenv("PWD")}) {
    std::error_code error;
    if (dir != nullptr && *dir == '/') {
      rule.must_survive.push_back(fs::weakly_canonical(dir, error).string());
    }
  }
  rule.must_survive.push_back(fs::current_path().string());
  return rule;
}

}  // namespace nvfresh
