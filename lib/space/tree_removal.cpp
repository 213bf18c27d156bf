#include "space/tree_removal.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvfresh {

namespace {

bool registered(const std::string& real_path, const CleanRule& rule)
{
  return std::any_of(rule.registered.begin(), rule.registered.end(),
                     [&](const RegisteredTree& tree) { return tree.tree == real_path; });
}

}  // namespace

TreeRemoval::TreeRemoval(TreeDisk& disk) : m_disk(disk), m_clean_lock(disk.lock_clean())
{
  if (!m_clean_lock) {
    m_outcome.errors.push_back(
      "another `nvfresh space --clean --yes` is removing trees on this machine now: this one "
      "removed nothing; run it again when that one has finished");
  }
}

// "" when the tree may go, with `dir` set to the directory to remove; else why it stays.
// Called with the tree's build lock held.
std::string TreeRemoval::reason_to_refuse(const TreeReport& planned, std::string& dir)
{
  TreeReport now = m_disk.look_again(planned.entry);
  now.size = planned.size;     // not walked again: the dry run's mounts and unreadable parts
  now.lock = LockState::idle;  // we hold it: no nvfresh process of the tree runs, none can start
  const CleanRule rule = m_disk.rule_now();
  if (std::string reason = reason_to_keep(now, rule); !reason.empty()) {
    return reason;
  }
  if (!registered(now.real_path, rule)) {
    return fmt::format("{} is no longer in the registry of build trees", now.real_path);
  }
  std::string error;
  dir = m_disk.resolve(planned.entry.tree, error);
  if (dir.empty()) {
    return fmt::format("its path cannot be resolved ({})", error);
  }
  if (dir != now.real_path) {  // a symlink on the way changed: remove nothing unchecked
    return fmt::format("it resolves to {} now, not to {} as checked", dir, now.real_path);
  }
  if (dir.size() < 2 || dir.front() != '/') {
    return fmt::format("{} is not a directory below /", dir);
  }
  return {};
}

void TreeRemoval::remove(const TreeReport& planned)
{
  if (!m_clean_lock) {
    return;
  }
  const std::string& tree = planned.entry.tree;
  std::unique_ptr<HeldLock> lock = m_disk.lock_build(planned.entry.record_root);
  std::string dir;
  std::string reason = lock ? reason_to_refuse(planned, dir)
                            : "its build lock is held (a build started) or cannot be made";
  if (!reason.empty()) {
    m_outcome.errors.push_back(fmt::format("{} not removed: {}", tree, reason));
    return;
  }
  if (std::string error = m_disk.remove_all(dir); !error.empty()) {
    m_outcome.errors.push_back(fmt::format("{} only partly removed: {}", tree, error));
    return;
  }
  m_disk.unregister(planned.entry);
  m_outcome.removed.push_back(tree);
  m_outcome.freed_bytes += planned.size.bytes;
}

}  // namespace nvfresh
