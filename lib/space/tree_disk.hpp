// What `nvfresh space --clean --yes` does to the disk, behind one small interface, so that the
// removal's decisions (space/tree_removal.hpp) are unit-tested with a fake that only records what
// would be removed (tests/unit/space/test_tree_removal.cpp), as ninja's Cleaner is tested through
// its DiskInterface. SystemTreeDisk is the real one: flock, std::filesystem, the registry, /proc.
#pragma once

#include "space/process_use.hpp"
#include "space/registry.hpp"
#include "space/space_report.hpp"

#include <memory>
#include <string>
#include <vector>

namespace nvfresh {

// A lock held until the object is destroyed.
class HeldLock {
public:
  virtual ~HeldLock() = default;
};

class TreeDisk {
public:
  virtual ~TreeDisk() = default;

  // The lock that lets one `space --clean --yes` remove trees at a time on this machine (per
  // registry); nullptr when another holds it.
  virtual std::unique_ptr<HeldLock> lock_clean() = 0;
  // The tree's build lock, exclusively: no nvfresh process of the tree runs while it is held and
  // none can start. nullptr when one holds it (a build started) or it cannot be made.
  virtual std::unique_ptr<HeldLock> lock_build(const std::string& record_root) = 0;
  // The tree looked at again, now: examine_tree() with the processes using it and what it holds
  // that no build makes (its real_path included).
  virtual TreeReport look_again(const RegistryEntry& entry) = 0;
  // The removal rule as of now: the registry and the registered trees read again.
  virtual CleanRule rule_now() = 0;
  // `path` with every symlink resolved; "" with `error` set when it cannot be resolved.
  virtual std::string resolve(const std::string& path, std::string& error) = 0;
  // Removes the directory and everything below it; a symlink inside is removed, never followed.
  // "" or what went wrong (then part of it may be left).
  virtual std::string remove_all(const std::string& dir) = 0;
  virtual void unregister(const RegistryEntry& entry) = 0;
};

class SystemTreeDisk : public TreeDisk {
public:
  SystemTreeDisk(std::string registry, double older_than_days);

  std::unique_ptr<HeldLock> lock_clean() override;
  std::unique_ptr<HeldLock> lock_build(const std::string& record_root) override;
  TreeReport look_again(const RegistryEntry& entry) override;
  CleanRule rule_now() override;
  std::string resolve(const std::string& path, std::string& error) override;
  std::string remove_all(const std::string& dir) override;
  void unregister(const RegistryEntry& entry) override;

private:
  std::string m_registry;
  double m_older_than_days;
};

// The registry's clean lock: "<state dir>/nvfresh/clean.lock", beside the registry's trees/.
std::string clean_lock_file(const std::string& registry);

// `path` made absolute and canonical as far as it exists; unchanged when that fails.
std::string resolved_or_same(const std::string& path);

// What the rule needs beyond examine_tree(): the processes using the tree and, with `contents`,
// what it holds that no build makes. Left unknown (the tree is kept) when it cannot be resolved.
void look_inside(TreeReport& report, const ProcessSnapshot& processes, bool contents);

// The rule for trees older than `older_than_days`, as of now: this user, their home and working
// directory, and every registered tree with its source dirs (the one its entry names and the one
// its CMakeCache.txt names now).
CleanRule clean_rule_now(double older_than_days, const std::string& registry);

}  // namespace nvfresh
